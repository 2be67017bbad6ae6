/* Exact lexicographic Lemke for the tests (see lemke_exact.h). */
#include "tests/contact/lemke_exact.h"

#include <gmp.h>
#include <math.h>
#include <stdlib.h>

/* Binary exponent of the least significant bit of a nonzero double. */
static long low_exponent(double x) {
  int e;
  double m = frexp(fabs(x), &e); /* x = m 2^e, m in [0.5, 1) */
  /* m * 2^53 is an integer; strip its trailing zero bits. */
  unsigned long long u = (unsigned long long)ldexp(m, 53);
  long k = e - 53;
  while (u && !(u & 1ull)) { u >>= 1; k++; }
  return k;
}

/* out := x * 2^shift exactly (shift >= -lowexp(x), so an integer). */
static void set_scaled(mpz_t out, double x, long shift) {
  if (x == 0.0) { mpz_set_ui(out, 0); return; }
  int e;
  double m = frexp(x, &e);
  mpz_set_d(out, ldexp(m, 53)); /* exact integer, |.| < 2^53 */
  long s = (long)e - 53 + shift;
  /* s < 0 only drops trailing zero bits of the mantissa: exact. */
  if (s >= 0) mpz_mul_2exp(out, out, (mp_bitcnt_t)s);
  else mpz_tdiv_q_2exp(out, out, (mp_bitcnt_t)-s);
}

/* The rows of in[0..m) attaining the minimum of T_ic / T_is (s = the
 * entering column; all T_is of one sign), written to out; returns their
 * count. `first`: the first pivot, where q_i / d_i = -T_iQ / T_is is
 * minimised, i.e. the order is reversed. Compares a/b with c/d by the sign
 * of (a d - c b) / (b d). */
static int argmin_rows(mpz_t *T, int nc, int s, int c, int first,
                       const int *in, int m, int *out, mpz_t a) {
#define E(i, j) T[(size_t)(i) * (size_t)nc + (size_t)(j)]
  int k = 0;
  out[k++] = in[0];
  for (int t = 1; t < m; t++) {
    const int i = in[t], b = out[0];
    mpz_mul(a, E(i, c), E(b, s));
    mpz_submul(a, E(b, c), E(i, s));
    int sg = mpz_sgn(a) * mpz_sgn(E(i, s)) * mpz_sgn(E(b, s));
    if (first) sg = -sg;
    if (sg < 0) { k = 0; out[k++] = i; }
    else if (sg == 0) out[k++] = i;
  }
#undef E
  return k;
}

cpt_exact_result cpt_lemke_exact(int n, const double *M, const double *q,
                                 const double *d, int max_pivots, double *z,
                                 cpt_exact_step *trace, int trace_cap) {
  cpt_exact_result res = {CP_LCP_SOLVED, 0, 0};
  const int nc = 2 * n + 2, Q = 2 * n + 1, Z0 = 2 * n;
  if (max_pivots <= 0) max_pivots = 50 * (n + 1) + 100;
  if (z)
    for (int i = 0; i < n; i++) z[i] = 0.0;
  int qneg = 0;
  for (int i = 0; i < n; i++) qneg |= q[i] < 0.0;
  if (!qneg) return res;
  /* One power of two that makes every entry of M, q, d an integer. */
  long minexp = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double x = M[i + (size_t)j * n];
      if (x != 0.0 && low_exponent(x) < minexp) minexp = low_exponent(x);
    }
    if (q[i] != 0.0 && low_exponent(q[i]) < minexp) minexp = low_exponent(q[i]);
    double di = d ? d[i] : 1.0;
    if (low_exponent(di) < minexp) minexp = low_exponent(di);
  }
  const long shift = -minexp;
  mpz_t *T = malloc(sizeof(mpz_t) * (size_t)n * (size_t)nc);
  int *basic = malloc(sizeof(int) * (size_t)n);
  int *cand = malloc(sizeof(int) * (size_t)n);
  int *keep = malloc(sizeof(int) * (size_t)n);
  mpz_t det, a, b;
  mpz_inits(det, a, b, NULL);
  mpz_set_ui(det, 1);
#define E(i, j) T[(size_t)(i) * (size_t)nc + (size_t)(j)]
  for (int i = 0; i < n; i++) {
    basic[i] = i;
    for (int j = 0; j < nc; j++) mpz_init(E(i, j));
    mpz_set_ui(E(i, i), 1);
    for (int j = 0; j < n; j++) {
      set_scaled(E(i, n + j), M[i + (size_t)j * n], shift);
      mpz_neg(E(i, n + j), E(i, n + j));
    }
    set_scaled(E(i, Z0), d ? d[i] : 1.0, shift);
    mpz_neg(E(i, Z0), E(i, Z0));
    set_scaled(E(i, Q), q[i], shift);
  }
  int entering = Z0, z0row = -1;
  for (;;) {
    /* Candidate rows: first pivot, the most negative q_i / d_i (column
     * entries -d_i < 0: compare q_i / (-col_i)); later, col_i > 0 (sign of
     * det) and the smallest qbar_i / col_i. */
    const int first = res.pivots == 0;
    const int sdet = mpz_sgn(det);
    int ncand = 0;
    for (int i = 0; i < n; i++) {
      const int sc = mpz_sgn(E(i, entering)) * sdet;
      if (first ? (mpz_sgn(E(i, Q)) < 0) : (sc > 0)) cand[ncand++] = i;
    }
    if (ncand == 0) { res.status = CP_LCP_SECONDARY_RAY; break; }
    /* Minimum ratio T_iQ / T_is over the candidates, keeping ties. */
    int m = argmin_rows(T, nc, entering, Q, first, cand, ncand, keep, a);
    int r = keep[0];
    const int nties = m;
    if (m > 1) {
      res.ties++;
      int z0tie = 0;
      for (int t = 0; t < m; t++) z0tie |= keep[t] == z0row;
      if (z0tie) r = z0row;
      else {
        /* Lexicographic minimum of row(B^-1) / col over the tied rows
         * (B^-1 = the w columns of the tableau). */
        for (int c = 0; c < n && m > 1; c++) {
          m = argmin_rows(T, nc, entering, c, first, keep, m, cand, a);
          for (int t = 0; t < m; t++) keep[t] = cand[t];
        }
        r = keep[0];
      }
    }
    if (res.pivots >= max_pivots) { res.status = CP_LCP_PIVOT_CAP; break; }
    const int leaving = basic[r];
    if (trace && res.pivots < trace_cap)
      trace[res.pivots] = (cpt_exact_step){entering, leaving, nties};
    res.pivots++;
    /* Bareiss pivot on (r, entering). */
    for (int i = 0; i < n; i++) {
      if (i == r) continue;
      for (int j = 0; j < nc; j++) {
        if (j == entering) continue;
        mpz_mul(a, E(i, j), E(r, entering));
        mpz_submul(a, E(i, entering), E(r, j));
        mpz_divexact(E(i, j), a, det);
      }
      mpz_set_ui(E(i, entering), 0);
    }
    mpz_set(det, E(r, entering));
    basic[r] = entering;
    if (entering == Z0) z0row = r;
    if (leaving == Z0) break; /* complementary basis: solved */
    entering = leaving < n ? leaving + n : leaving - n;
  }
  if (res.status == CP_LCP_SOLVED && z) {
    mpq_t v;
    mpq_init(v);
    for (int i = 0; i < n; i++)
      if (basic[i] >= n && basic[i] < 2 * n) {
        mpq_set_num(v, E(i, Q));
        mpq_set_den(v, det);
        mpq_canonicalize(v);
        z[basic[i] - n] = mpq_get_d(v);
      }
    mpq_clear(v);
  }
  for (size_t t = 0; t < (size_t)n * (size_t)nc; t++) mpz_clear(T[t]);
#undef E
  mpz_clears(det, a, b, NULL);
  free(T);
  free(basic);
  free(cand);
  free(keep);
  return res;
}
