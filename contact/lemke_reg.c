/// \file contact/lemke_reg.c
/// The regularised route of lemke.h (docs/solvers.md, "The regularised
/// route"): Lemke on LCP(M + eps m I, q) for a decreasing eps sequence, the
/// support of each answer handed to FIP's face crossover on the original
/// problem.
///
/// Why it works where Lemke on M does not. On the rank-deficient contact
/// LCPs (KaplasTower: 2346 of 2850 eigenvalues of the force block below 1e-9
/// of the largest) Lemke's bases become ill-conditioned and the path follows
/// their rounding noise to a ray or to an answer that fails the check. With
/// eps m on the diagonal every principal block of the force rows is
/// nonsingular with a margin, the path stays well conditioned, and (M
/// copositive) M + eps m I is strictly copositive, so Lemke solves it. Its
/// answer solves another problem (w is off by eps m z_i), but its support
/// names a face of the original problem; when the face holds a solution, an
/// LP finds a vertex of it, which is then verified on the original problem.
/// eps must be small enough that the support is the limit's and large
/// enough for well conditioned bases, hence a short decreasing sequence.
/// Each eps after the first starts warm from the previous answer's basis
/// (often a few pivots away); when that warm start fails, the same eps is
/// solved cold.
#include "contact/fip.h"
#include "contact/lemke.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cp_lemke_reg_options cp_lemke_reg_defaults(void) {
  cp_lemke_reg_options o;
  memset(&o, 0, sizeof o);
  o.neps = 3;
  o.eps[0] = 1e-3;
  o.eps[1] = 1e-4;
  o.eps[2] = 1e-5;
  o.face_time_limit = 0.0;
  o.early_n = 2000;
  return o;
}

static int options_valid(const cp_lemke_reg_options *o) {
  if (o->neps < 1 || o->neps > CP_LEMKE_REG_MAX_EPS) return 0;
  if (!(o->face_time_limit >= 0.0)) return 0;
  for (int k = 0; k < o->neps; k++) {
    if (!(o->eps[k] > 0.0 && o->eps[k] < 1.0)) return 0;
    if (k > 0 && !(o->eps[k] < o->eps[k - 1])) return 0;
  }
  return 1;
}

/// The problem's scale m: the largest diagonal entry, or the largest entry
/// when no diagonal entry is positive (then 1 for M = 0).
static double diag_scale(int n, const double *M) {
  double m = 0.0, a = 0.0;
  for (int i = 0; i < n; i++) m = fmax(m, M[(size_t)i * (size_t)n + i]);
  if (m > 0.0) return m;
  for (size_t k = 0; k < (size_t)n * (size_t)n; k++) a = fmax(a, fabs(M[k]));
  return a > 0.0 ? a : 1.0;
}

static cp_lcp_status give_up(int n, double *z, double *w, cp_lcp_info *info,
                             cp_lcp_status st, const char *why) {
  for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
  info->status = st;
  snprintf(info->reason, sizeof info->reason, "%s", why);
  return st;
}

cp_lcp_status cp_lemke_regularised(cp_lemke_ws *ws, int n, const double *M,
                                   const double *q, const cp_lemke_options *lo,
                                   const cp_lemke_reg_options *ro, double *z,
                                   double *w, cp_lcp_info *info,
                                   cp_lemke_reg_report *rep) {
  cp_lcp_info_clear(info);
  info->solver = CP_SOLVER_LEMKE;
  cp_lemke_reg_report dummy;
  if (!rep) rep = &dummy;
  memset(rep, 0, sizeof *rep);
  const cp_lemke_reg_options rdef = cp_lemke_reg_defaults();
  if (!ro) ro = &rdef;
  if (n < 1 || !M || !q || !z || !w) {
    snprintf(info->reason, sizeof info->reason, "invalid arguments");
    return info->status = CP_LCP_NUMERICAL;
  }
  if (!options_valid(ro))
    return give_up(n, z, w, info, CP_LCP_NUMERICAL,
                   "invalid regularised-route options (eps must decrease "
                   "strictly in (0, 1), 1 to 8 values)");
  cp_lemke_options o = lo ? *lo : cp_lemke_defaults();
  o.rescue = 0; /* each regularised problem is well conditioned by design */
  o.classic = 0;

  const size_t nn = (size_t)n * (size_t)n;
  double *Mr = malloc(sizeof(double) * nn);
  double *zr = malloc(sizeof(double) * 2 * (size_t)n);
  unsigned char *basis = malloc(2 * (size_t)n);
  cp_lemke_ws *own = ws ? NULL : cp_lemke_ws_create(n);
  if (!Mr || !zr || !basis || (!ws && !own)) {
    free(Mr); free(zr); free(basis); cp_lemke_ws_destroy(own);
    return give_up(n, z, w, info, CP_LCP_NOMEM, "out of memory");
  }
  if (own) ws = own;
  double *wr = zr + n;
  unsigned char *P = basis + n;
  memcpy(Mr, M, sizeof(double) * nn);
  const double m = diag_scale(n, M);

  cp_lcp_status st = CP_LCP_CHECK_FAILED;
  int pivots = 0, warm = 0;
  for (int k = 0; k < ro->neps; k++) {
    const double shift = ro->eps[k] * m;
    for (int i = 0; i < n; i++)
      Mr[(size_t)i * (size_t)n + i] = M[(size_t)i * (size_t)n + i] + shift;
    cp_lcp_info ri;
    cp_lemke_solve(ws, n, Mr, q, &o, warm ? basis : NULL, zr, wr, &ri);
    if (warm && ri.status != CP_LCP_SOLVED && ri.status != CP_LCP_NOMEM) {
      /* the warm path can end on a ray where the cold one does not
       * (RockPile_tob1 at eps 1e-4: a ray after 333 warm pivots) */
      pivots += ri.iterations;
      cp_lemke_solve(ws, n, Mr, q, &o, NULL, zr, wr, &ri);
    }
    rep->tried = k + 1;
    rep->reg_status[k] = (int)ri.status;
    rep->reg_pivots[k] = ri.iterations;
    rep->support[k] = -1;
    pivots += ri.iterations;
    if (ri.status == CP_LCP_NOMEM) {
      st = CP_LCP_NOMEM;
      break;
    }
    warm = ri.status == CP_LCP_SOLVED && cp_lemke_basis(ws, basis) == 0;
    if (ri.status != CP_LCP_SOLVED) continue;
    int np = 0;
    for (int i = 0; i < n; i++) np += P[i] = zr[i] > wr[i];
    rep->support[k] = np;
    const int c = cp_fip_face_crossover(n, M, q, P, ro->face_time_limit,
                                        &o.check, zr, wr, info);
    rep->face[k] = c;
    if (c < 0) {
      st = CP_LCP_NOMEM;
      break;
    }
    if (c > 0) {
      memcpy(z, zr, sizeof(double) * (size_t)n);
      memcpy(w, wr, sizeof(double) * (size_t)n);
      info->polished = c == 2;
      rep->eps = ro->eps[k];
      st = CP_LCP_SOLVED;
      break;
    }
  }
  free(Mr); free(zr); free(basis);
  cp_lemke_ws_destroy(own);
  info->iterations = pivots;
  info->starts = rep->tried;
  info->first_start_iterations = rep->reg_pivots[0];
  if (st == CP_LCP_SOLVED) {
    info->status = st;
    info->reason[0] = '\0';
    return st;
  }
  char why[160] = "out of memory";
  if (st != CP_LCP_NOMEM)
    snprintf(why, sizeof why,
             "regularised route: no face of the %d regularised supports "
             "holds a solution", rep->tried);
  return give_up(n, z, w, info, st, why);
}
