#include "contact/lcp.h"
#include "contact/check_impl.h"

#include <lapacke.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_lcp_init(cp_lcp *lcp, int n) {
  memset(lcp, 0, sizeof *lcp);
  if (n < 1) return -1;
  lcp->M = calloc((size_t)n * (size_t)n, sizeof(double));
  lcp->q = calloc((size_t)n, sizeof(double));
  if (!lcp->M || !lcp->q) {
    cp_lcp_free(lcp);
    return -1;
  }
  lcp->n = n;
  return 0;
}

void cp_lcp_free(cp_lcp *lcp) {
  if (!lcp) return;
  free(lcp->M);
  free(lcp->q);
  free(lcp->name);
  memset(lcp, 0, sizeof *lcp);
}

const char *cp_lcp_status_name(cp_lcp_status s) {
  switch (s) {
  case CP_LCP_SOLVED: return "solved";
  case CP_LCP_SECONDARY_RAY: return "secondary ray";
  case CP_LCP_PIVOT_CAP: return "pivot cap";
  case CP_LCP_ITERATION_CAP: return "iteration cap";
  case CP_LCP_NO_STRICT_FEASIBLE: return "no strictly feasible point";
  case CP_LCP_INFEASIBLE: return "no solution";
  case CP_LCP_TIME_LIMIT: return "time limit";
  case CP_LCP_NUMERICAL: return "numerical failure";
  case CP_LCP_CHECK_FAILED: return "failed the solution check";
  case CP_LCP_NOMEM: return "out of memory";
  }
  return "unknown";
}

static const char *const solver_names[] = {"lemke", "fip", "certify", "auto"};

const char *cp_lcp_solver_name(cp_lcp_solver s) {
  return (unsigned)s < 4 ? solver_names[s] : "unknown";
}

int cp_lcp_solver_parse(const char *name, cp_lcp_solver *out) {
  for (int i = 0; i < 4; i++)
    if (name && strcmp(name, solver_names[i]) == 0) {
      *out = (cp_lcp_solver)i;
      return 0;
    }
  return -1;
}

/* Everything but the 160 bytes of `reason`, which need only their first
 * (a memset of the whole struct was a tenth of a small Lemke solve). */
_Static_assert(sizeof(cp_lcp_info) - offsetof(cp_lcp_info, reason) -
                       sizeof(((cp_lcp_info *)0)->reason) <
                   _Alignof(cp_lcp_info),
               "cp_lcp_info_clear: reason must be the last member");
void cp_lcp_info_clear(cp_lcp_info *info) {
  memset(info, 0, offsetof(cp_lcp_info, reason));
  info->status = CP_LCP_NUMERICAL;
  info->reason[0] = '\0';
}

int cp_lcp_crossover(int n, const double *M, const double *q, double *z,
                     double *w, const cp_check_options *opt, cp_lcp_info *info) {
  unsigned char *basis = malloc((size_t)n);
  double *zz = malloc(sizeof(double) * (size_t)n * 2);
  int ok = basis && zz ? 0 : -1;
  if (basis && zz) {
    double *ww = zz + n;
    for (int i = 0; i < n; i++) basis[i] = z[i] > w[i];
    cp_lcp_info ci = *info;
    const int sb = cp_lcp_solve_basis(n, M, q, basis, zz, ww);
    if (sb == -2) ok = -1;
    if (sb == 0 && cp_lcp_check(n, M, q, zz, ww, opt, &ci)) {
      memcpy(z, zz, sizeof(double) * (size_t)n);
      memcpy(w, ww, sizeof(double) * (size_t)n);
      *info = ci;
      info->polished = 1;
      ok = 1;
    }
  }
  free(basis);
  free(zz);
  return ok;
}

cp_check_options cp_check_defaults(void) {
  return (cp_check_options){.rel_tol = CP_CHECK_REL_TOL_DEFAULT};
}

void cp_lcp_eval(int n, const double *M, const double *q, const double *z,
                 double *w) {
  memcpy(w, q, sizeof(double) * (size_t)n);
  for (int j = 0; j < n; j++) {
    const double zj = z[j];
    if (zj == 0.0) continue;
    const double *col = M + (size_t)j * (size_t)n;
    for (int i = 0; i < n; i++) w[i] += col[i] * zj;
  }
}

/* Row i's tolerance: rel_tol times the magnitude of the terms summed into
 * w_i, s_i = sum_j |M_ij| |z_j| + |q_i|, so that one huge q_k or M_kj does
 * not make row i's error look small; plus a rounding allowance
 * 8 n eps |M_i|_1 |z|_inf for the noise every solver leaves in z (a basic
 * variable that is 0 in exact arithmetic comes out as eps |z|_inf, and a
 * row that reads only such variables has s_i ~ 1e-32). */
/* How large z_j is in units of the tolerances of the rows it moves:
 * max_k |M_kj z_j| / tol_k. At most 1: z_j is negligible (dropping it moves
 * no row beyond that row's tolerance). INFINITY when column j of M is zero
 * (then only z_j = 0 is negligible) or a tolerance is zero. */
static double z_units(int n, const double *M, const double *tol, int j, double zj) {
  if (zj == 0.0) return 0.0;
  const double *col = M + (size_t)j * (size_t)n;
  double u = -1.0;
  for (int k = 0; k < n; k++) {
    if (col[k] == 0.0) continue;
    const double r = fabs(col[k] * zj) / tol[k];
    u = r > u ? r : u;
    if (!(u <= DBL_MAX)) return INFINITY;
  }
  return u < 0.0 ? INFINITY : u;
}

static double scan_vec(int n, const double *restrict M,
                       const double *restrict q, const double *restrict z,
                       double *restrict buf, int norms) {
  CP_CHECK_SCAN_BODY
}

CP_GCC_OPTIMIZE("no-tree-vectorize") static double
scan_plain(int n, const double *M, const double *q, const double *z,
           double *buf, int norms) {
  CP_CHECK_SCAN_BODY
}

static inline double scan_any(int n, const double *M, const double *q,
                              const double *z, double *buf, int norms) {
  return n <= 8 ? scan_plain(n, M, q, z, buf, norms)
                : scan_vec(n, M, q, z, buf, norms);
}

/* The scan for Lemke's finish (cp_lcp_check keeps scan_any inlined). */
double cp_lcp_check_scan(int n, const double *M, const double *q,
                         const double *z, double *buf, int norms) {
  switch (n) {
  case 2: return cp_check_scan_inline(2, M, q, z, buf, norms);
  case 3: return cp_check_scan_inline(3, M, q, z, buf, norms);
  case 4: return cp_check_scan_inline(4, M, q, z, buf, norms);
  default: /* norms a constant in each copy, as in cp_lcp_check (callgrind,
            * n = 26: 7260 against 6532 instructions per scan with it a
            * variable) */
    return norms ? scan_any(n, M, q, z, buf, 1) : scan_any(n, M, q, z, buf, 0);
  }
}

int cp_lcp_check(int n, const double *M, const double *q, const double *z,
                 const double *w, const cp_check_options *opt,
                 cp_lcp_info *info) {
  /* M z + q and the row scales are recomputed here (the solver's own w is
   * not trusted), column by column so that the column-major M is read
   * contiguously; a stack buffer serves the sizes contact problems have. */
  double stackbuf[1536];
  double *buf = n <= 512 ? stackbuf : malloc(sizeof(double) * 3 * (size_t)n);
  if (!buf) {
    snprintf(info->reason, sizeof info->reason, "solution check: out of memory");
    return 0;
  }
  const double zmax = scan_any(n, M, q, z, buf, 1);
  const int ok = cp_lcp_check_judge(n, M, z, w, buf, zmax, opt, info);
  if (buf != stackbuf) free(buf);
  return ok;
}

int cp_lcp_check_judge(int n, const double *M, const double *z,
                       const double *w, double *buf, double zmax,
                       const cp_check_options *opt, cp_lcp_info *info) {
  const double rel = opt ? opt->rel_tol : CP_CHECK_REL_TOL_DEFAULT;
  int ok;
  switch (n) {
  case 2: ok = cp_check_judge_fast(2, z, w, buf, zmax, rel, info); break;
  case 3: ok = cp_check_judge_fast(3, z, w, buf, zmax, rel, info); break;
  case 4: ok = cp_check_judge_fast(4, z, w, buf, zmax, rel, info); break;
  default: ok = cp_check_judge_fast(n, z, w, buf, zmax, rel, info);
  }
  if (ok) return 1;
  return cp_lcp_check_rules(n, M, z, w, buf, zmax, opt, info);
}

int cp_lcp_check_rules(int n, const double *M, const double *z,
                       const double *w, const double *buf, double zmax,
                       const cp_check_options *opt, cp_lcp_info *info) {
  const double rel = opt ? opt->rel_tol : CP_CHECK_REL_TOL_DEFAULT;
  /* sc holds the row tolerances (set by the fast pass). */
  const double *mw = buf;
  const double *sc = buf + n;
  double comp = 0.0, res = 0.0, minz = INFINITY, minw = INFINITY;
  int bad = -1;
  const char *why = NULL;
  double badtol = 0.0;
  for (int i = 0; i < n; i++) {
    const double wi = mw[i], wr = w ? w[i] : wi;
    const double tol = sc[i];
    if (!isfinite(z[i]) || !isfinite(wr) || !isfinite(wi) || !isfinite(sc[i])) {
      if (bad < 0) { bad = i; why = "non-finite value"; }
      continue;
    }
    double r = fabs(wr - wi);
    if (r > res) res = r;
    double c = fabs(z[i] * wi);
    if (c > comp) comp = c;
    if (z[i] < minz) minz = z[i];
    if (wi < minw) minw = wi;
    if (bad >= 0) continue;
    badtol = tol;
    /* Complementarity: z_i w_i <= tol_i |z|_inf (the product relative to
     * the row's scale and the size of z: an interior-point answer whose
     * zeros are 1e-9 passes, though its forces may be indeterminate and no
     * exact basis exists to polish it to), or, scale-free, z_i in units of
     * the tolerances of the rows it moves times w_i in units of its own at
     * most 1 / rel_tol: (z_i / its scale) (w_i / s_i) <= rel_tol, which
     * also serves badly scaled columns (both ratios are at most 1, so
     * either alone at most rel_tol of its scale passes). */
    if (z[i] < 0.0 && !(z_units(n, M, sc, i, z[i]) <= 1.0)) { bad = i; why = "z < 0"; }
    else if (wi < -tol) { bad = i; why = "w = M z + q < 0"; }
    else if (wi > tol && z[i] > 0.0 && !(z[i] * wi <= tol * zmax) &&
             !(z_units(n, M, sc, i, z[i]) * (wi / tol) * rel <= 1.0))
      { bad = i; why = "z_i w_i != 0"; }
    else if (r > tol) { bad = i; why = "w differs from M z + q"; }
  }
  info->complementarity = comp;
  info->residual = res;
  info->min_z = n ? minz : 0.0;
  info->min_w = n ? minw : 0.0;
  if (bad >= 0) {
    snprintf(info->reason, sizeof info->reason,
             "solution check failed at row %d: %s (row tolerance %.3g)", bad,
             why, badtol);
    return 0;
  }
  return 1;
}

int cp_lcp_solve_basis(int n, const double *M, const double *q,
                       const unsigned char *basis, double *z, double *w) {
  /* Unknown vector x: x_i = z_i if basis[i] else w_i. Row i of
   * w - M z = q reads: [basis ? -M_i,. : e_i] x = q_i. Column i of the basis
   * matrix is -M[:,i] when z_i is basic, e_i when w_i is. */
  size_t nn = (size_t)n * (size_t)n;
  double *B = malloc(sizeof(double) * (nn + (size_t)n));
  lapack_int *piv = malloc(sizeof(lapack_int) * (size_t)n);
  if (!B || !piv) { free(B); free(piv); return -2; }
  double *x = B + nn;
  for (int j = 0; j < n; j++) {
    double *col = B + (size_t)j * (size_t)n;
    if (basis[j]) {
      for (int i = 0; i < n; i++) col[i] = -M[i + (size_t)j * (size_t)n];
    } else {
      memset(col, 0, sizeof(double) * (size_t)n);
      col[j] = 1.0;
    }
  }
  memcpy(x, q, sizeof(double) * (size_t)n);
  lapack_int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, B, n, piv, x, n);
  int rc = -1;
  if (info == 0) {
    rc = 0;
    for (int i = 0; i < n; i++) {
      if (!isfinite(x[i])) rc = -1;
      z[i] = basis[i] ? x[i] : 0.0;
    }
    if (rc == 0) {
      cp_lcp_eval(n, M, q, z, w);
      for (int i = 0; i < n; i++)
        if (basis[i]) w[i] = 0.0; /* exact by construction */
    }
  }
  free(B);
  free(piv);
  return rc;
}

int cp_lcp_polish(int n, const double *M, const double *q, double *z,
                  double *w, const cp_check_options *opt) {
  unsigned char *basis = malloc((size_t)n);
  double *zz = malloc(sizeof(double) * 2 * (size_t)n);
  if (!basis || !zz) { free(basis); free(zz); return 0; }
  double *ww = zz + n;
  for (int i = 0; i < n; i++) basis[i] = z[i] > w[i];
  int replaced = 0;
  if (cp_lcp_solve_basis(n, M, q, basis, zz, ww) == 0) {
    cp_lcp_info a, b;
    cp_lcp_info_clear(&a);
    cp_lcp_info_clear(&b);
    cp_check_options tight = opt ? *opt : cp_check_defaults();
    int ok_new = cp_lcp_check(n, M, q, zz, ww, &tight, &b);
    cp_lcp_check(n, M, q, z, w, &tight, &a);
    /* Keep the polished pair only if it is valid and no worse. The basis
     * solve is exact up to rounding, so its zeros may come out as -1e-15:
     * allow rounding-level negatives (relative to the data's scale). */
    double scale = 1.0, mmax = 0.0, zmax = 0.0;
    for (int i = 0; i < n; i++) {
      scale = fmax(scale, fabs(q[i]));
      zmax = fmax(zmax, fabs(zz[i]));
    }
    for (size_t i = 0; i < (size_t)n * (size_t)n; i++) mmax = fmax(mmax, fabs(M[i]));
    const double floor_ = -64.0 * 2.220446049250313e-16 * (double)n * fmax(scale, mmax * zmax);
    if (ok_new && b.complementarity <= fmax(a.complementarity, -floor_) &&
        b.min_z >= floor_ && b.min_w >= floor_) {
      memcpy(z, zz, sizeof(double) * (size_t)n);
      memcpy(w, ww, sizeof(double) * (size_t)n);
      replaced = 1;
    }
  }
  free(basis);
  free(zz);
  return replaced;
}

int cp_lcp_symmetric_psd(int m, const double *M) {
  double mmax = 0.0;
  for (size_t i = 0; i < (size_t)m * (size_t)m; i++) mmax = fmax(mmax, fabs(M[i]));
  for (int j = 0; j < m; j++)
    for (int i = j + 1; i < m; i++)
      if (fabs(M[i + (size_t)j * m] - M[j + (size_t)i * m]) > 1e-12 * fmax(1.0, mmax)) return 0;
  double *a = malloc(sizeof(double) * (size_t)m * (size_t)(m + 1));
  if (!a) return 0;
  memcpy(a, M, sizeof(double) * (size_t)m * (size_t)m);
  int ok = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', m, a, m, a + (size_t)m * m) == 0 &&
           a[(size_t)m * m] >= -1e-10 * fmax(1.0, fabs(a[(size_t)m * m + m - 1]));
  free(a);
  return ok;
}
