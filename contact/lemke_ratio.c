/* Lemke's method (contact/lemke.c): choosing the leaving row. The
 * lexicographic rule with error bounds, the tight ratio test of the rescue
 * pass, z0's priority among tied rows, and the non-inlined entries of the
 * ratio test and the first pivot (their bodies are in lemke_impl.h). */
#include "contact/lemke_impl.h"


/* Lexicographic minimum of the rows of B^-1 divided by sg * col[r] over the
 * candidate rows cand[0..nc-1]. Returns the chosen row.
 *
 * Entries of B^-1 that are zero in exact arithmetic come out of the rank-1
 * updates as roundoff noise (1e-17 .. 1e-15 on the Siconos problem
 * lcp_tobenna). Degenerate contact problems tie on whole leading columns
 * whose true values are all zero, so the noise must not decide: each value
 * v_t = B^-1[r_t, c] / (sg col[r_t]) carries an error bound
 * e_t = LEX_EPS * |B^-1[:, c]|_inf / |col[r_t]| (the absolute error of an
 * entry scales with its column, not with its own size), and a candidate
 * stays tied while its interval [v_t - e_t, v_t + e_t] reaches below the
 * smallest upper end. (The former rule compared the values relative to the
 * largest of them, so a column of pure noise picked the most negative
 * noise: on lcp_tobenna the first start left the exact path at pivot 54
 * and wandered into the pivot cap.) If the noise bound ties rows through
 * every column, the largest pivot is the stablest choice. */
int cp_lk_lex_min(cp_lemke_ws *ws, int nc, const double *col, double sg) {
  const int n = ws->n;
  int *cand = ws->cand, *keep = ws->cand2;
  for (int c = 0; c < n && nc > 1; c++) {
    const int sl = ws->small ? -1 : ws->col_slot[c];
    const double *sc = ws->small ? small_wcol(ws, c) : NULL;
    const double cs =
        ws->small ? (sc ? max_abs(n, sc) : 1.0)
        : sl >= 0 ? max_abs(n, ws->Bact + (size_t)sl * (size_t)n) : 1.0;
    const double del = LEX_EPS * cs;
    double up = INFINITY;
    for (int t = 0; t < nc; t++) {
      const int r = cand[t];
      const double p = sg * col[r];
      const double v = binv(ws, r, c) / p, e = del / p;
      ws->lexv[t] = v - e;
      if (v + e < up) up = v + e;
    }
    int m = 0;
    for (int t = 0; t < nc; t++)
      if (ws->lexv[t] <= up) keep[m++] = cand[t];
    memcpy(cand, keep, sizeof(int) * (size_t)m);
    nc = m;
  }
  int best = cand[0];
  for (int t = 1; t < nc; t++)
    if (fabs(col[cand[t]]) > fabs(col[best])) best = cand[t];
  return best;
}

/* The lexicographic rule of the classic pass (ws->classic): the rule
 * before the error bounds (commit f641725^). Among the candidates, the
 * values v_t = B^-1[r_t, c] / (sg col[r_t]) of column c tie when they are
 * within 1e-11 of the largest |v_t| above the smallest, and the first tied
 * row (in row order) is taken when every column ties. On noise-only
 * columns this picks the most negative noise, which is why the error
 * bounds replaced it (lcp_tobenna); on RockPile_tob1 it is what keeps
 * the path away from the rays (docs/solvers.md, "The classic pass"). */
int cp_lk_lex_min_classic(cp_lemke_ws *ws, int nc, const double *col,
                          double sg) {
  const int n = ws->n;
  int *cand = ws->cand, *keep = ws->cand2;
  for (int c = 0; c < n && nc > 1; c++) {
    double vmin = INFINITY, vmax = 0.0;
    for (int t = 0; t < nc; t++) {
      const int r = cand[t];
      const double v = binv(ws, r, c) / (sg * col[r]);
      ws->lexv[t] = v;
      if (v < vmin) vmin = v;
      if (fabs(v) > vmax) vmax = fabs(v);
    }
    const double tau = 1e-11 * vmax;
    int m = 0;
    for (int t = 0; t < nc; t++)
      if (ws->lexv[t] <= vmin + tau) keep[m++] = cand[t];
    memcpy(cand, keep, sizeof(int) * (size_t)m);
    nc = m;
  }
  return cand[0];
}

/* The ratio test of a rescue start (ws->tight): point ratios
 * t_i = max(qbar_i, 0) / col_i, rows tied within TIE_EPS of the smallest
 * (relative to it or to |q| / |col|), no interval for the noise and no
 * preference for large pivots; ties then go to z0 or to lex_min as in
 * ratio_test. This is the ratio test the error bounds replaced: it loses
 * resting stacks (noise decides their exact ties) but solves contact
 * problems whose near-ties are real differences that the error bounds'
 * window (1e-10 max |qbar| wide) calls ties (docs/solvers.md, issue 24). */
int cp_lk_ratio_test_tight(cp_lemke_ws *ws, const run *R, double tol,
                           double cmax) {
  const int n = R->n;
  const double *restrict col = ws->col, *restrict qb = ws->qbar;
  double *restrict t = ws->ratio;
  double theta = HUGE_VAL;
  for (int i = 0; i < n; i++) {
    const int ok = col[i] > tol;
    t[i] = ok ? (qb[i] > 0.0 ? qb[i] : 0.0) / col[i] : HUGE_VAL;
    theta = fmin(theta, t[i]);
  }
  if (!(theta < HUGE_VAL)) return -1;
  const double sc = R->qscale / cmax;
  const double thr = theta + TIE_EPS * (theta > sc ? theta : sc);
  int nc = 0;
  for (int i = 0; i < n; i++)
    if (t[i] <= thr) ws->cand[nc++] = i;
  ws->ties = nc;
  if (nc == 1) return ws->cand[0];
  return cp_lk_z0_or_lex(ws, R, nc, col);
}

/* The ratio test; the small path's padded lengths 4 and 8 get copies with
 * constant trip counts. */
int cp_lk_ratio_test(cp_lemke_ws *ws, const run *R, double amax) {
  if (ws->small && ws->tld == 4) return ratio_test_rows(ws, R, amax, 4);
  if (ws->small && ws->tld == 8) return ratio_test_rows(ws, R, amax, 8);
  /* The structured path's small sizes with n a constant: the loops unroll
   * without vector prologues and epilogues; the same operations on the
   * same rows (the maxima and minima are on bit patterns, exact in any
   * order), so the same row. */
  switch (R->n) {
#define CP_LK_RT(N) case N: return ratio_test_rows(ws, R, amax, N);
  CP_LK_RT(5) CP_LK_RT(6) CP_LK_RT(7) CP_LK_RT(8) CP_LK_RT(9) CP_LK_RT(10)
  CP_LK_RT(11) CP_LK_RT(12)
#undef CP_LK_RT
  default: break;
  }
  return ratio_test_rows(ws, R, amax, R->n);
}

/* Among the tied rows cand[0..nc): z0 if it is there, else the
 * lexicographic choice. */
int cp_lk_z0_or_lex(cp_lemke_ws *ws, const run *R, int nc,
                    const double *col) {
  /* z0 among the tied rows: let it leave (ends the start with a solution).
   * After such an exit failed the check (run_start backs up), z0 is taken
   * out of the tie instead: its ratio was not the smallest after all. */
  if (ws->z0row >= 0) {
    int m = 0;
    for (int c = 0; c < nc; c++) {
      if (ws->cand[c] != ws->z0row) ws->cand[m++] = ws->cand[c];
      else if (!ws->z0skip) {
        testcase(ws, z0_ties);
        ws->z0tie = 1;
        return ws->z0row;
      }
    }
    if (m == 0) return ws->z0row;
    nc = m;
  }
  if (!R->lex) return ws->cand[0];
  testcase(ws, lex_ties);
  if (ws->classic) return cp_lk_lex_min_classic(ws, nc, col, 1.0);
  return cp_lk_lex_min(ws, nc, col, 1.0);
}

CP_GCC_OPTIMIZE("no-tree-loop-distribute-patterns") int
cp_lk_first_row(cp_lemke_ws *ws, const run *R) {
  return first_row_n(ws, R, R->n);
}
