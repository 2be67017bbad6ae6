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

/* Compares u with the reference (setting it when there is none) by the
 * study's rule (cp_paper_udot_differs); *max_dev keeps the largest
 * deviation seen, relative to the larger vector's scale. */
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
  return cp_paper_udot_differs(nu, u, ref);
}

/* The LP over P_B (k = |B|, idx its members), built once per support:
 * rows M z + q (= 0 on B, >= 0 off it), columns z_B >= 0. */
static glp_prob *pattern_lp(int n, const double *M, const double *q, int k, const int *idx,
                            int *ia, int *ja, double *ar, unsigned char *inb) {
  glp_prob *lp = glp_create_prob();
  glp_add_rows(lp, n);
  glp_add_cols(lp, k);
  memset(inb, 0, (size_t)n);
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
      const double v = M[(size_t)idx[c] * (size_t)n + (size_t)i];
      if (v == 0.0) continue;
      ne++;
      ia[ne] = i + 1;
      ja[ne] = c + 1;
      ar[ne] = v;
    }
  }
  glp_load_matrix(lp, ne, ia, ja, ar);
  glp_scale_prob(lp, GLP_SF_AUTO);
  return lp;
}

/* One simplex solve of lp with objective obj (NULL: none, a feasibility
 * test) in direction dir; each later solve starts from the last basis.
 * Returns 1 optimal (*val its value), 2 unbounded, 0 empty, -1 GLPK did
 * not finish. */
static int lp_solve(glp_prob *lp, int k, const double *obj, int dir, double *val) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = obj ? GLP_OFF : GLP_ON; /* warm starts need no presolve */
  glp_set_obj_dir(lp, dir);
  for (int c = 0; c < k; c++) glp_set_obj_coef(lp, c + 1, obj ? obj[c] : 0.0);
  const int r = glp_simplex(lp, &parm);
  const int st = glp_get_status(lp);
  if (r == GLP_ENOPFS || (r == 0 && st == GLP_NOFEAS)) return 0;
  if (r == GLP_ENODFS || (r == 0 && st == GLP_UNBND)) return 2;
  if (r != 0 || st != GLP_OPT) return -1;
  *val = glp_get_obj_val(lp);
  return 1;
}

static int enumerate(const cp_paper_instance *in, enum_result *er) {
  memset(er, 0, sizeof *er);
  const int n = in->lcp.n, nu = in->sys.n_u;
  const double *M = in->lcp.M, *q = in->lcp.q;
  const size_t un = (size_t)n, unu = (size_t)(nu > 0 ? nu : 1);
  double *buf = malloc(sizeof(double) * (5 * un + 3 * un * un + (un + 3) * unu + 1));
  int *idx = malloc(sizeof(int) * (3 * un * un + 3));
  unsigned char *inb = malloc(un);
  if (!buf || !idx || !inb) {
    free(buf); free(idx); free(inb);
    return -1;
  }
  /* GLPK's triplets (1-based): ia, ja in idx's tail, ar in buf's. */
  int *ia = idx + un, *ja = ia + un * un + 1;
  double *z = buf, *w = z + un, *sv = w + un, *rhs = sv + un, *obj = rhs + un;
  double *A = obj + un, *S = A + un * un, *U = S + un * un, *a = U + un * unu;
  double *u = a + unu, *ref = u + unu, *ar = ref + unu;
  /* u' = a + U z: a = u'(0), column j of U = u'(e_j) - a. */
  memset(z, 0, sizeof(double) * un);
  if (cp_paper_udot(in, z, a)) goto fail;
  for (int j = 0; j < n; j++) {
    z[j] = 1.0;
    if (cp_paper_udot(in, z, u)) goto fail;
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
      if (cp_paper_udot(in, z, u)) goto fail;
      if (differs(nu, u, ref, &have_ref, &er->max_dev)) er->unique = 0;
      continue;
    }
    er->singular++;
    glp_prob *lp = pattern_lp(n, M, q, k, idx, ia, ja, ar, inb);
    double v = 0.0;
    const int f = lp_solve(lp, k, NULL, GLP_MIN, &v);
    if (f != 1) {
      if (f < 0) er->lp_failures++;
      glp_delete_prob(lp);
      continue;
    }
    er->singular_feas++;
    er->solutions = 1;
    /* u' at the LP's point, then the range of each component over P_B. */
    for (int r = 0; r < k; r++) z[idx[r]] = glp_get_col_prim(lp, r + 1);
    if (cp_paper_udot(in, z, u)) {
      glp_delete_prob(lp);
      goto fail;
    }
    if (differs(nu, u, ref, &have_ref, &er->max_dev)) er->unique = 0;
    double scale = 1.0;
    for (int t = 0; t < nu; t++) scale = fmax(scale, fabs(ref[t]));
    for (int i = 0; i < nu; i++) {
      for (int r = 0; r < k; r++) obj[r] = U[(size_t)idx[r] * unu + (size_t)i];
      double lo = 0.0, hi = 0.0;
      const int g1 = lp_solve(lp, k, obj, GLP_MIN, &lo), g2 = lp_solve(lp, k, obj, GLP_MAX, &hi);
      if (g1 < 0 || g2 < 0) {
        er->lp_failures++;
        continue;
      }
      if (g1 == 0 || g2 == 0) continue;
      if (g1 == 2 || g2 == 2) { /* unbounded: u' not constant on P_B */
        er->unique = 0;
        er->max_dev = INFINITY;
        continue;
      }
      const double dlo = fabs(a[i] + lo - ref[i]), dhi = fabs(a[i] + hi - ref[i]);
      if (dlo > 1e-6 * scale || dhi > 1e-6 * scale) {
        er->unique = 0;
        er->max_dev = fmax(er->max_dev, fmax(dlo, dhi) / scale);
      }
    }
    glp_delete_prob(lp);
  }
  er->decided = er->lp_failures == 0 || !er->unique;
  free(buf); free(idx); free(inb);
  return 0;
fail:
  free(buf); free(idx); free(inb);
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
