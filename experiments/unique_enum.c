/* unique_enum: an independent check of the paper study's uniqueness verdicts
 * on its small data sets, by enumerating every complementary support.
 *
 * The study (experiments/study/run.c, decide_unique) calls a data set's
 * accelerations unique after Lemke from random covering vectors and
 * `certify --second` find no solution with other accelerations; certify's
 * "no second solution" rests on GLPK's branch and bound proving its MIP
 * infeasible under no-good cuts, which nothing else checks (session 20
 * found GLPK 5.0 wrong twice on one degenerate "no solution" verdict).
 * For n <= MAXN this program decides the same question without branch and
 * bound. Every solution z of (L1) lies in the pattern polyhedron of its
 * support B = supp(z):
 *   P_B = { z : z_N = 0, z_B >= 0, (M z + q)_B = 0, (M z + q)_N >= 0 }.
 * For each of the 2^n subsets B:
 *   - M_BB nonsingular (LAPACK's SVD least squares, dgelsd: no singular
 *     value below 1e-10 of the largest): P_B is at most the one point
 *     z_B = -M_BB^-1 q_B; it counts as a solution when cp_lcp_check (the
 *     solvers' acceptance check) accepts it;
 *   - M_BB singular: when the least-squares point misses M_BB z_B = -q_B
 *     by more than 1e-6 of the rows' scale, P_B is empty. Otherwise P_B
 *     may be a continuum: an LP (GLPK's simplex, not its branch and bound)
 *     decides whether it is empty; when it is not, each
 *     component of u' (affine in z: u' = a + U z) is minimised and
 *     maximised over P_B, and u' is constant there only if every range is
 *     within the study's tolerance (1e-6 of the largest |u'|) of the
 *     reference.
 * The accelerations are unique iff every solution found gives the first
 * one's u' (the study's comparison, udot_differs). This is floating-point
 * work with tolerances, not a proof in rational arithmetic, but it shares
 * nothing with the MIP path it checks.
 *
 * Usage: unique_enum [MAXN [SEED]] (defaults 16 and the study's 1995).
 * Prints a Markdown table, one row per data set of size <= MAXN, with the
 * study's verdict (cp_paper_run_dataset, default options) beside the
 * enumeration's; progress on stderr when it is a terminal. Exit 0 when no
 * decided verdict of the study is contradicted, 1 otherwise. */

#include "experiments/study/study.h"

#include <glpk.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/dynamics.h"
#include "contact/lcp.h"
#include "contact/pyramid.h"
#include "models/clock.h"

typedef struct enum_result {
  long supports;        /* 2^n */
  long basic;           /* nonsingular supports whose point passes the check */
  long singular;        /* singular M_BB */
  long inconsistent;    /* ... whose M_BB z_B = -q_B has no solution */
  long singular_feas;   /* ... whose P_B is not empty */
  long lp_failures;     /* LPs GLPK did not finish */
  int decided;          /* 1: the verdict below stands */
  int solutions;        /* 1: at least one solution */
  int unique;           /* 1: every solution has the reference u' */
  double max_dev;       /* largest |u' - u'_ref| / scale seen */
} enum_result;

/* u' of z (the study's udot_of). */
static int udot(const cp_paper_instance *in, const double *z, double *c, double *u) {
  cp_pyramid_forces(&in->lay, in->pc, z, c);
  return cp_contact_space_accel(&in->cs, c, u, NULL);
}

/* Compares u with the reference (setting it when there is none); returns 1
 * when they differ beyond 1e-6 of the scale (the study's rule). */
static int differs(int nu, const double *u, double *ref, int *have_ref, double *max_dev) {
  if (!*have_ref) {
    memcpy(ref, u, sizeof(double) * (size_t)nu);
    *have_ref = 1;
    return 0;
  }
  double scale = 1.0, dev = 0.0;
  for (int i = 0; i < nu; i++) scale = fmax(scale, fmax(fabs(u[i]), fabs(ref[i])));
  for (int i = 0; i < nu; i++) dev = fmax(dev, fabs(u[i] - ref[i]));
  *max_dev = fmax(*max_dev, dev / scale);
  return dev > 1e-6 * scale;
}

/* The LP over P_B (k = |B|, idx its members): empty or not; when obj is not
 * NULL, also min and max of obj . z_B (lo, hi; +-INFINITY when unbounded).
 * Returns 1 feasible, 0 empty, -1 GLPK did not finish. */
static int lp_pattern(int n, const double *M, const double *q, int k, const int *idx,
                      const double *obj, double *lo, double *hi, double *zpt) {
  glp_prob *lp = glp_create_prob();
  glp_add_rows(lp, n);
  glp_add_cols(lp, k);
  int *ia = malloc(sizeof(int) * ((size_t)n * (size_t)k + 1));
  int *ja = malloc(sizeof(int) * ((size_t)n * (size_t)k + 1));
  double *ar = malloc(sizeof(double) * ((size_t)n * (size_t)k + 1));
  unsigned char *inb = calloc((size_t)n, 1);
  int ret = -1;
  if (!ia || !ja || !ar || !inb) goto out;
  for (int c = 0; c < k; c++) inb[idx[c]] = 1;
  for (int i = 0; i < n; i++) {
    if (inb[i])
      glp_set_row_bnds(lp, i + 1, GLP_FX, -q[i], -q[i]);
    else
      glp_set_row_bnds(lp, i + 1, GLP_LO, -q[i], 0.0);
  }
  int ne = 0;
  for (int c = 0; c < k; c++) {
    glp_set_col_bnds(lp, c + 1, GLP_LO, 0.0, 0.0);
    for (int i = 0; i < n; i++) {
      const double a = M[(size_t)idx[c] * (size_t)n + (size_t)i];
      if (a == 0.0) continue;
      ne++;
      ia[ne] = i + 1;
      ja[ne] = c + 1;
      ar[ne] = a;
    }
  }
  glp_load_matrix(lp, ne, ia, ja, ar);
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  for (int pass = 0; pass < (obj ? 3 : 1); pass++) {
    /* pass 0: feasibility; 1: minimise obj; 2: maximise obj */
    glp_set_obj_dir(lp, pass == 2 ? GLP_MAX : GLP_MIN);
    for (int c = 0; c < k; c++) glp_set_obj_coef(lp, c + 1, pass ? obj[c] : 0.0);
    const int r = glp_simplex(lp, &parm);
    const int st = glp_get_status(lp);
    if (r == GLP_ENOPFS || (r == 0 && st == GLP_NOFEAS)) {
      ret = 0;
      goto out;
    }
    if (r != 0 && r != GLP_ENODFS) goto out;
    if (r == GLP_ENODFS || st == GLP_UNBND) {
      if (pass == 1) *lo = -INFINITY;
      if (pass == 2) *hi = INFINITY;
      continue;
    }
    if (st != GLP_OPT) goto out;
    if (pass == 0 && zpt)
      for (int c = 0; c < k; c++) zpt[c] = glp_get_col_prim(lp, c + 1);
    if (pass == 1) *lo = glp_get_obj_val(lp);
    if (pass == 2) *hi = glp_get_obj_val(lp);
  }
  ret = 1;
out:
  glp_delete_prob(lp);
  free(ia);
  free(ja);
  free(ar);
  free(inb);
  return ret;
}

static int enumerate(const cp_paper_instance *in, enum_result *er) {
  memset(er, 0, sizeof *er);
  const int n = in->lcp.n, nu = in->sys.n_u, nc3 = 3 * in->sys.n_c;
  const double *M = in->lcp.M, *q = in->lcp.q;
  const size_t un = (size_t)n, unu = (size_t)(nu > 0 ? nu : 1);
  double *buf = malloc(sizeof(double) * (6 * un + 2 * un * un + (un + 3) * unu +
                                         (size_t)(nc3 > 0 ? nc3 : 1)));
  int *idx = malloc(sizeof(int) * un);
  if (!buf || !idx) {
    free(buf); free(idx);
    return -1;
  }
  double *z = buf, *w = z + un, *sv = w + un, *rhs = sv + un, *zpt = rhs + un, *obj = zpt + un;
  double *A = obj + un, *S = A + un * un, *U = S + un * un, *a = U + un * unu;
  double *u = a + unu, *ref = u + unu, *c = ref + unu;
  /* u' = a + U z: a = u'(0), column j of U = u'(e_j) - a. */
  memset(z, 0, sizeof(double) * un);
  if (udot(in, z, c, a)) goto fail;
  for (int j = 0; j < n; j++) {
    z[j] = 1.0;
    if (udot(in, z, c, u)) goto fail;
    z[j] = 0.0;
    for (int i = 0; i < nu; i++) U[(size_t)j * unu + (size_t)i] = u[i] - a[i];
  }
  const cp_check_options chk = cp_check_defaults();
  int have_ref = 0;
  er->supports = 1L << n;
  er->unique = 1;
  for (long mask = 0; mask < er->supports; mask++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if (mask >> i & 1) idx[k++] = i;
    int singular = 0;
    memset(z, 0, sizeof(double) * un);
    if (k > 0) {
      /* Least squares by SVD (dgelsd): the numerical rank (singular values
       * below 1e-10 of the largest count as zero) and, at full rank, the
       * solution z_B = -M_BB^-1 q_B. A singular system that the least
       * squares solution misses by more than 1e-6 of its scale has no
       * solution at all: P_B is empty without an LP. */
      for (int cc = 0; cc < k; cc++)
        for (int r = 0; r < k; r++)
          A[(size_t)cc * (size_t)k + (size_t)r] = M[(size_t)idx[cc] * un + (size_t)idx[r]];
      memcpy(S, A, sizeof(double) * (size_t)k * (size_t)k);
      for (int r = 0; r < k; r++) rhs[r] = -q[idx[r]];
      lapack_int rank = 0;
      if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, k, k, 1, S, k, rhs, k, sv, 1e-10, &rank) != 0)
        goto fail;
      singular = rank < k;
      if (singular) {
        double res = 0.0, scale = 1.0;
        for (int r = 0; r < k; r++) {
          double s = q[idx[r]], mag = fabs(q[idx[r]]);
          for (int cc = 0; cc < k; cc++) {
            s += A[(size_t)cc * (size_t)k + (size_t)r] * rhs[cc];
            mag += fabs(A[(size_t)cc * (size_t)k + (size_t)r] * rhs[cc]);
          }
          res = fmax(res, fabs(s));
          scale = fmax(scale, mag);
        }
        if (res > 1e-6 * scale) {
          er->singular++;
          er->inconsistent++;
          continue;
        }
      } else {
        for (int r = 0; r < k; r++) z[idx[r]] = rhs[r];
      }
    }
    if (!singular) {
      cp_lcp_eval(n, M, q, z, w);
      cp_lcp_info info;
      cp_lcp_info_clear(&info);
      if (!cp_lcp_check(n, M, q, z, w, &chk, &info)) continue;
      er->basic++;
      er->solutions = 1;
      if (udot(in, z, c, u)) goto fail;
      if (differs(nu, u, ref, &have_ref, &er->max_dev)) er->unique = 0;
      continue;
    }
    er->singular++;
    const int f = lp_pattern(n, M, q, k, idx, NULL, NULL, NULL, zpt);
    if (f < 0) {
      er->lp_failures++;
      continue;
    }
    if (f == 0) continue;
    er->singular_feas++;
    er->solutions = 1;
    /* u' at the LP's point, then the range of each component over P_B. */
    for (int r = 0; r < k; r++) z[idx[r]] = zpt[r];
    if (udot(in, z, c, u)) goto fail;
    if (differs(nu, u, ref, &have_ref, &er->max_dev)) er->unique = 0;
    for (int i = 0; i < nu; i++) {
      for (int r = 0; r < k; r++) obj[r] = U[(size_t)idx[r] * unu + (size_t)i];
      double lo = 0.0, hi = 0.0;
      const int g = lp_pattern(n, M, q, k, idx, obj, &lo, &hi, NULL);
      if (g < 0) {
        er->lp_failures++;
        continue;
      }
      if (g == 0) continue;
      double scale = 1.0;
      for (int t = 0; t < nu; t++) scale = fmax(scale, fabs(ref[t]));
      const double vlo = a[i] + lo, vhi = a[i] + hi;
      if (!isfinite(lo) || !isfinite(hi) || fabs(vlo - ref[i]) > 1e-6 * scale ||
          fabs(vhi - ref[i]) > 1e-6 * scale) {
        er->unique = 0;
        er->max_dev = isfinite(lo) && isfinite(hi)
                          ? fmax(er->max_dev, fmax(fabs(vlo - ref[i]), fabs(vhi - ref[i])) / scale)
                          : INFINITY;
      }
    }
  }
  er->decided = er->lp_failures == 0 || !er->unique;
  free(buf); free(idx);
  return 0;
fail:
  free(buf); free(idx);
  return -1;
}

int main(int argc, char **argv) {
  long maxn = 16;
  unsigned long long seed = CP_PAPER_DEFAULT_SEED;
  char *end = NULL;
  int bad = argc > 3;
  if (!bad && argc > 1) {
    maxn = strtol(argv[1], &end, 10);
    bad = end == argv[1] || *end || maxn < 1 || maxn > 30;
  }
  if (!bad && argc > 2) {
    seed = strtoull(argv[2], &end, 10);
    bad = end == argv[2] || *end || argv[2][0] == '-';
  }
  if (bad) {
    fprintf(stderr, "usage: unique_enum [MAXN (1..30, default 16) [SEED (default %u)]]\n",
            CP_PAPER_DEFAULT_SEED);
    return 2;
  }
  glp_term_out(GLP_OFF);
  const int tty = isatty(2);
  cp_paper_options opt = cp_paper_defaults();
  opt.seed = (uint64_t)seed;
  opt.write_data = 0;
  printf("# The study's uniqueness verdicts against enumeration (n <= %ld, seed %llu)\n\n",
         maxn, seed);
  printf("| problem | mu | n | study | why | basic solutions | singular: inconsistent / LP empty / "
         "non-empty | enumeration | max deviation | agree | study s | enumeration s |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int contradicted = 0, confirmed = 0, newly = 0, rows = 0;
  for (int kp = 0; kp < CP_PAPER_PROBLEMS; kp++) {
    if (cp_paper_problem_spec(kp).size > maxn) continue;
    cp_paper_problem p;
    cp_error err = {0};
    if (cp_paper_generate(kp, (uint64_t)seed, &p, &err)) {
      fprintf(stderr, "unique_enum: problem %d: %s\n", kp + 1, err.msg);
      return 1;
    }
    for (int j = 0; j < CP_PAPER_NMU; j++) {
      if (tty) fprintf(stderr, "\rproblem %d mu %.1f ", kp + 1, cp_paper_mu(j));
      cp_paper_row row;
      if (cp_paper_run_dataset(&p, j, &opt, &row, &err)) {
        fprintf(stderr, "unique_enum: problem %d mu %.1f: %s\n", kp + 1, cp_paper_mu(j),
                err.msg);
        return 1;
      }
      char *text = cp_paper_scene_text(&p, cp_paper_mu(j));
      cp_paper_instance in;
      if (!text || cp_paper_instance_build(text, &in, &err)) {
        fprintf(stderr, "unique_enum: problem %d mu %.1f: cannot build\n", kp + 1,
                cp_paper_mu(j));
        return 1;
      }
      free(text);
      enum_result er;
      const double t0 = cp_clock_now();
      const int erc = enumerate(&in, &er);
      const double te = cp_clock_now() - t0;
      if (erc) {
        fprintf(stderr, "unique_enum: out of memory or LAPACK failure\n");
        return 1;
      }
      const char *ev = !er.decided    ? "undecided (LP failed)"
                       : !er.solutions ? "no solution"
                       : er.unique     ? "unique"
                                       : "not unique";
      const char *sv = cp_paper_unique_word(row.unique);
      const char *why = row.unique_why == CP_PAPER_UW_SAME_ACCEL ? "same accelerations"
                        : row.unique_why == CP_PAPER_UW_LIMIT    ? "limit"
                        : row.unique_why == CP_PAPER_UW_DECIDED  ? ""
                                                                 : "other";
      const char *agree;
      if (row.unique == CP_PAPER_UNIQUE || row.unique == CP_PAPER_NOT_UNIQUE) {
        const int ok = er.decided && er.solutions &&
                       (er.unique == (row.unique == CP_PAPER_UNIQUE));
        agree = ok ? "yes" : (er.decided ? "**NO**" : "-");
        contradicted += er.decided && !ok;
        confirmed += ok;
      } else {
        agree = er.decided ? "decided here" : "-";
        newly += er.decided && er.solutions;
      }
      printf("| %d | %.1f | %d | %s | %s | %ld | %ld: %ld / %ld / %ld | %s | %.1e | %s | %.2f | "
             "%.2f |\n",
             kp + 1, cp_paper_mu(j), in.lcp.n, sv, why, er.basic, er.singular, er.inconsistent,
             er.singular - er.inconsistent - er.singular_feas - er.lp_failures,
             er.singular_feas, ev, er.max_dev, agree, row.t_total, te);
      fflush(stdout);
      rows++;
      cp_paper_instance_free(&in);
    }
    cp_paper_problem_free(&p);
  }
  if (tty) fprintf(stderr, "\r%40s\r", "");
  printf("\n%d data sets: %d decided verdicts of the study confirmed, %d contradicted; "
         "%d the study left undecided (or n/a) decided by enumeration.\n",
         rows, confirmed, contradicted, newly);
  return contradicted ? 1 : 0;
}
