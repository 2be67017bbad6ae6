/* The arch's contact modes, enumerated (issue 25, session 15): is there a
 * solution of the contact problem at rest that moves?
 *
 *   arch_modes SCENE [B]        enumerate the pairs' modes (below); boxes
 *                               on u' at B (default 2) times the bound
 *                               every solution obeys
 *   arch_modes SCENE bb [N]     complete branch and bound over each
 *                               contact's modes (below), N nodes at most
 *   arch_modes SCENE split [N [RHO]]  phase 1 of contact/stability.c as a
 *                               case split on the out-of-plane dofs
 *                               (v_y, w_x, w_z of each body; at main()'s
 *                               split), each branch a branch and bound
 *                               as bb, N nodes each; CP_SPLIT_E=1: only
 *                               the in-plane branch
 *   CP_TWIST=1                  (split) the out-of-plane branches replaced
 *                               by the twist branches (main()); CP_SKIP_E=1:
 *                               without branch E
 *   arch_modes SCENE decide [N] the library's verdict on the same system,
 *                               N MILP nodes (2000); CP_CLEAN=T: entries
 *                               of H, G below T times the largest zeroed
 *   arch_modes SCENE couple     measures the in-plane/out-of-plane
 *                               decoupling the twist branches need
 *   CP_FIXO=1                   (bb) the out-of-plane dofs fixed at 0:
 *                               the planar solutions only
 *   CP_STAGE=FILE:K             the scene's parts in the simulated poses of
 *                               stage K of FILE (arch_stage_poses.txt)
 *   CP_BB_TRACE=1               progress on stderr
 *
 * Contacts are grouped in pairs that differ only in y (the corners of a
 * face along one of its edges parallel to y: for a scene symmetric in y
 * every planar motion moves both alike). Each pair gets one mode:
 *   open   c = 0, a_n >= 0
 *   stick  a = 0, c in the pyramid
 *   slide+ a_n = 0, the in-plane tangential a_e >= 0 with c_e = -mu c_n,
 *          the out-of-plane one sticking
 *   slide- the same with a_e <= 0, c_e = mu c_n.
 * Every feasible point of a mode's LP is a solution of the contact LCP
 * (the pyramid law holds by construction). By the energy identity a
 * solution moves iff f^T u' > 0, so each mode's LP maximises f^T u' with
 * |u'_i| <= B sqrt((H^-1)_ii f^T H^-1 f) (B = 2: no solution is cut off). A positive optimum is a witness (checked
 * again independently, from c alone: u' = H^-1 (f + G c)); all optima 0
 * mean no solution of this family moves (not a proof for motions out of
 * the x-z plane or pairs in different modes). */
#include <glpk.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "models/scene.h"
#include "planner/assembly/assembly.h"

enum { OPEN = 0, STICK, SLIDEP, SLIDEM, NMODE };


/* Branch and bound over every contact's own mode (complete, 3D): a node
 * fixes some contacts' normal state (open / closed) and, for closed ones,
 * some tangential components' states (stick / + / -); an unfixed normal
 * is relaxed to c_n >= 0, a_n >= 0 (no complementarity), an unfixed
 * tangential component of a closed contact to |c_e| <= mu c_n with a_e
 * free. The LP max f^T u' (the same boxes) at a node bounds f^T u' of every
 * solution below it; <= tol prunes (no moving solution there). */
typedef struct bbs {
  const cp_system *sys;
  double B, tol;
  double *Bi; /* [nu] box of u'_i: B times the energy bound */
  int fixO;   /* 1: the out-of-plane dofs (v_y, w_x, w_z) fixed at 0 */
  double *lo, *hi; /* [nu] the node's bounds on u' (NULL: +-Bi) */
  long nodes, maxnodes, lps, unsolved;
  int found;
  /* The twist cut (split with CP_TWIST): pair (cA, cB), in-plane
   * tangential components eA, eB: sg (a_tA + a_tB) >= 0 and
   * sg (c_tA + c_tB) <= -thr. cA < 0: none. */
  int cA, cB, eA, eB, sg;
  double thr;
  double *x;
  int ia[20000], ja[20000];
  double ar[20000];
} bbs;

/* ns: -1 unfixed, 0 open, 1 closed; ts[2j+e-1]: -1 unfixed, STICK, SLIDEP, SLIDEM */
static double bb_lp(bbs *W, const signed char *ns, const signed char *ts, double *x, int *ok) {
  const cp_system *sys = W->sys;
  const int nu = sys->n_u, nc = sys->n_c, ncol = nu + 3 * nc;
  glp_prob *P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MAX);
  glp_add_cols(P, ncol);
  for (int i = 0; i < nu; i++) {
    if (W->fixO && i < nu - sys->n_l && (i % 6 == 1 || i % 6 == 3 || i % 6 == 5))
      glp_set_col_bnds(P, i + 1, GLP_FX, 0.0, 0.0);
    else if (W->lo)
      glp_set_col_bnds(P, i + 1, W->lo[i] < W->hi[i] ? GLP_DB : GLP_FX, W->lo[i], W->hi[i]);
    else
      glp_set_col_bnds(P, i + 1, GLP_DB, -W->Bi[i], W->Bi[i]);
    glp_set_obj_coef(P, i + 1, sys->f[i]);
  }
  int nz = 0, r = 0;
  int *ia = W->ia, *ja = W->ja;
  double *ar = W->ar;
  glp_add_rows(P, nu);
  for (int i = 0; i < nu; i++) {
    r++;
    glp_set_row_bnds(P, r, GLP_FX, sys->f[i], sys->f[i]);
    for (int k = 0; k < nu; k++)
      if (sys->H[i + (size_t)k * nu] != 0.0) { nz++; ia[nz] = r; ja[nz] = k + 1; ar[nz] = sys->H[i + (size_t)k * nu]; }
    for (int c = 0; c < 3 * nc; c++)
      if (sys->G[i + (size_t)c * nu] != 0.0) { nz++; ia[nz] = r; ja[nz] = nu + c + 1; ar[nz] = -sys->G[i + (size_t)c * nu]; }
  }
#define BACC(col, type, lb, ub)                                                      \
  do {                                                                               \
    glp_add_rows(P, 1);                                                              \
    r++;                                                                             \
    glp_set_row_bnds(P, r, type, lb, ub);                                            \
    for (int k_ = 0; k_ < nu; k_++)                                                  \
      if (sys->G[k_ + (size_t)(col) * nu] != 0.0) { nz++; ia[nz] = r; ja[nz] = k_ + 1; ar[nz] = sys->G[k_ + (size_t)(col) * nu]; } \
  } while (0)
#define BFRC(cA, vA, cB, vB, type, lb, ub)                                           \
  do {                                                                               \
    glp_add_rows(P, 1);                                                              \
    r++;                                                                             \
    glp_set_row_bnds(P, r, type, lb, ub);                                            \
    nz++; ia[nz] = r; ja[nz] = nu + (cA) + 1; ar[nz] = (vA);                         \
    nz++; ia[nz] = r; ja[nz] = nu + (cB) + 1; ar[nz] = (vB);                         \
  } while (0)
  for (int j = 0; j < nc; j++) {
    const int n = 3 * j;
    const double mu = sys->mu[j];
    if (ns[j] == 0) {
      for (int e = 0; e < 3; e++) glp_set_col_bnds(P, nu + n + e + 1, GLP_FX, 0, 0);
      BACC(n, GLP_LO, 0.0, 0.0);
      continue;
    }
    glp_set_col_bnds(P, nu + n + 1, GLP_LO, 0, 0);
    BACC(n, ns[j] == 1 ? GLP_FX : GLP_LO, 0.0, 0.0);
    for (int e = 1; e < 3; e++) {
      glp_set_col_bnds(P, nu + n + e + 1, GLP_FR, 0, 0);
      const int t = ns[j] == 1 ? ts[2 * j + e - 1] : -1;
      if (t == STICK) BACC(n + e, GLP_FX, 0.0, 0.0);
      else if (t == SLIDEP) BACC(n + e, GLP_LO, 0.0, 0.0);
      else if (t == SLIDEM) BACC(n + e, GLP_UP, 0.0, 0.0);
      if (t == SLIDEP) BFRC(n + e, 1.0, n, mu, GLP_FX, 0.0, 0.0);
      else if (t == SLIDEM) BFRC(n + e, 1.0, n, -mu, GLP_FX, 0.0, 0.0);
      else {
        BFRC(n + e, 1.0, n, -mu, GLP_UP, 0.0, 0.0);
        BFRC(n + e, -1.0, n, -mu, GLP_UP, 0.0, 0.0);
      }
    }
  }
  if (W->cA >= 0) {
    glp_add_rows(P, 1);
    r++;
    glp_set_row_bnds(P, r, GLP_LO, 0.0, 0.0);
    for (int k = 0; k < nu; k++) {
      const double v = W->sg * (sys->G[k + (size_t)(3 * W->cA + W->eA) * nu] + sys->G[k + (size_t)(3 * W->cB + W->eB) * nu]);
      if (v != 0.0) { nz++; ia[nz] = r; ja[nz] = k + 1; ar[nz] = v; }
    }
    BFRC(3 * W->cA + W->eA, (double)W->sg, 3 * W->cB + W->eB, (double)W->sg, GLP_UP, 0.0, -W->thr);
  }
  glp_load_matrix(P, nz, ia, ja, ar);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.presolve = GLP_ON;
  parm.it_lim = 20000;
  glp_scale_prob(P, GLP_SF_AUTO);
  int ret = glp_simplex(P, &parm);
  if ((ret != 0 && ret != GLP_ENOPFS) || (ret == 0 && glp_get_status(P) != GLP_OPT && glp_get_status(P) != GLP_NOFEAS)) {
    glp_std_basis(P);
    parm.meth = GLP_DUALP;
    ret = glp_simplex(P, &parm);
    if ((ret != 0 && ret != GLP_ENOPFS) || (ret == 0 && glp_get_status(P) != GLP_OPT && glp_get_status(P) != GLP_NOFEAS)) {
      glp_std_basis(P); /* last: GLPK's rational simplex (no rounding, slow) */
      ret = glp_exact(P, NULL);
    }
    if ((ret != 0 && ret != GLP_ENOPFS) || (ret == 0 && glp_get_status(P) != GLP_OPT && glp_get_status(P) != GLP_NOFEAS)) {
      fprintf(stderr, "node %ld: LP not solved (GLPK %d, status %d): the search is incomplete\n", W->nodes, ret, glp_get_status(P));
      W->unsolved++;
    }
  }
  W->lps++;
  double ob = -1.0;
  *ok = 0;

  for (int attempt = 0; attempt < 2 && ret == 0 && glp_get_status(P) == GLP_OPT; attempt++) {
    *ok = 1;
    ob = glp_get_obj_val(P);
    for (int i = 0; i < ncol; i++) x[i] = glp_get_col_prim(P, i + 1);
    /* GLPK can report "optimal" for a point that breaks (E1) (seen on the
     * simulated stages): its residual, relative to max(1, |f|_inf); then
     * once more with GLPK's rational simplex. */
    double res = 0.0, fmx = 1.0;
    for (int i = 0; i < nu; i++) {
      double v = -sys->f[i];
      fmx = fmax(fmx, fabs(sys->f[i]));
      for (int k = 0; k < nu; k++) v += sys->H[i + (size_t)k * nu] * x[k];
      for (int c = 0; c < 3 * nc; c++) v -= sys->G[i + (size_t)c * nu] * x[nu + c];
      res = fmax(res, fabs(v));
    }
    if (res <= 1e-6 * fmx) break;
    *ok = 0;
    if (attempt == 0) {
      glp_std_basis(P);
      ret = glp_exact(P, NULL);

      if (ret != 0 || (glp_get_status(P) != GLP_OPT && glp_get_status(P) != GLP_NOFEAS)) {
        fprintf(stderr, "node %ld: rational simplex failed (GLPK %d): LP not solved\n", W->nodes, ret);
        W->unsolved++;
      }
      continue;
    }
    fprintf(stderr, "node %ld: GLPK's optimum breaks H u' = f + G c by %.3g: LP not solved\n", W->nodes, res);
    W->unsolved++;
  }

  glp_delete_prob(P);
  return ob;
}

static void bb_node(bbs *W, signed char *ns, signed char *ts, int depth) {
  if (W->found || (W->maxnodes > 0 && W->nodes >= W->maxnodes)) return;
  W->nodes++;
  const cp_system *sys = W->sys;
  const int nu = sys->n_u, nc = sys->n_c;
  double *x = malloc(sizeof(double) * (size_t)(nu + 3 * nc));
  int ok = 0;
  const double ob = bb_lp(W, ns, ts, x, &ok);
  if (!ok || ob <= W->tol) { free(x); return; }
  /* The most violated unfixed piece. */
  int bj = -1, be = -1;
  double bv = 1e-9;
  for (int j = 0; j < nc; j++) {
    double a[3];
    for (int e = 0; e < 3; e++) {
      a[e] = 0.0;
      for (int i = 0; i < nu; i++) a[e] += sys->G[i + (size_t)(3 * j + e) * nu] * x[i];
    }
    const double cn = x[nu + 3 * j], mu = sys->mu[j];
    if (ns[j] < 0) {
      double v = fmin(cn, a[0]);
      for (int e = 1; e < 3; e++) v = fmax(v, fabs(a[e]) > 1e-9 && cn > 1e-9 ? fmin(fabs(a[e]), cn) : 0.0);
      if (v > bv) { bv = v; bj = j; be = 0; }
    } else if (ns[j] == 1) {
      for (int e = 1; e < 3; e++) {
        if (ts[2 * j + e - 1] >= 0) continue;
        const double ce = x[nu + 3 * j + e];
        const double v = fabs(a[e]) > 1e-9 ? fmin(fabs(a[e]), fabs(ce + (a[e] > 0 ? mu : -mu) * cn)) : 0.0;
        if (v > bv) { bv = v; bj = j; be = e; }
      }
    }
  }
  if (bj < 0) { /* a solution of the contact problem with f^T u' > tol */
    W->found = 1;
    memcpy(W->x, x, sizeof(double) * (size_t)(nu + 3 * nc));
    free(x);
    return;
  }
  free(x);
  if (depth < 3 && getenv("CP_BB_TRACE"))
    fprintf(stderr, "%*sdepth %d: contact %d %s (node %ld, bound %.3g)\n", 2 * depth, "", depth, bj,
            be == 0 ? "normal" : be == 1 ? "t" : "o", W->nodes, ob);
  if (be == 0) {
    for (int s = 0; s < 2; s++) {
      ns[bj] = (signed char)s;
      bb_node(W, ns, ts, depth + 1);
    }
    ns[bj] = -1;
  } else {
    for (int s = STICK; s <= SLIDEM; s++) {
      ts[2 * bj + be - 1] = (signed char)s;
      bb_node(W, ns, ts, depth + 1);
    }
    ts[2 * bj + be - 1] = -1;
  }
}

/* Out-of-plane dofs: v_y, w_x, w_z of each body (rows 6i+1, 6i+3, 6i+5). */
static int is_out(const cp_system *sys, int i) {
  return i < sys->n_u - sys->n_l && (i % 6 == 1 || i % 6 == 3 || i % 6 == 5);
}

/* The decoupling the twist split rests on, measured on sys (not assumed):
 * H has no in-plane/out-of-plane block (H_IO = 0), f_O = 0, every pair
 * has two contacts with the same frame, the in-plane rows of G see both
 * corners alike (equal n and in-plane t columns) and not the out-of-plane
 * tangent (zero column), and the out-of-plane rows see the normals and
 * in-plane tangents antisymmetrically (q, -q; s, -s) and the out-of-plane
 * tangents alike (m, m). Prints each largest deviation relative to the
 * largest entry of H, f resp. G; returns 1 when all are <= tol. */
static int couple_check(const cp_system *sys, const int *pair, const int *inplane, int np2, double tol) {
  const int nu = sys->n_u, nc = sys->n_c;
  double hmax = 0.0, hio = 0.0, fmx = 0.0, fo = 0.0, gmax = 0.0;
  for (int i = 0; i < nu; i++) {
    fmx = fmax(fmx, fabs(sys->f[i]));
    if (is_out(sys, i)) fo = fmax(fo, fabs(sys->f[i]));
    for (int k = 0; k < nu; k++) {
      const double h = fabs(sys->H[i + (size_t)k * nu]);
      hmax = fmax(hmax, h);
      if (is_out(sys, i) != is_out(sys, k)) hio = fmax(hio, h);
    }
  }
  for (size_t e = 0; e < (size_t)nu * 3 * (size_t)nc; e++) gmax = fmax(gmax, fabs(sys->G[e]));
  double dfr = 0.0, din = 0.0, dot = 0.0, dout = 0.0;
  int bad = 0;
  for (int p = 0; p < np2; p++) {
    int A = -1, B = -1, cnt = 0;
    for (int j = 0; j < nc; j++)
      if (pair[j] == p) { cnt++; if (A < 0) A = j; else B = j; }
    if (cnt != 2) { bad++; continue; }
    for (int e = 0; e < 9; e++) dfr = fmax(dfr, fabs(sys->frame[9 * A + e] - sys->frame[9 * B + e]));
    const int et = inplane[A], eo = 3 - et;
    for (int i = 0; i < nu; i++) {
      const double *gA = sys->G + i, *gB = sys->G + i;
      const double nA = gA[(size_t)(3 * A) * nu], nB = gB[(size_t)(3 * B) * nu];
      const double tA = gA[(size_t)(3 * A + et) * nu], tB = gB[(size_t)(3 * B + et) * nu];
      const double oA = gA[(size_t)(3 * A + eo) * nu], oB = gB[(size_t)(3 * B + eo) * nu];
      if (!is_out(sys, i)) {
        din = fmax(din, fmax(fabs(nA - nB), fabs(tA - tB)));
        dot = fmax(dot, fmax(fabs(oA), fabs(oB)));
      } else {
        dout = fmax(dout, fmax(fmax(fabs(nA + nB), fabs(tA + tB)), fabs(oA - oB)));
      }
    }
  }
  printf("decoupling: |H_IO| %.3g of |H| %.3g; |f_O| %.3g of |f| %.3g; pairs not of 2 contacts %d;\n"
         "  pair frames differ by %.3g; in-plane rows of G: corners differ by %.3g, out-of-plane tangent %.3g;\n"
         "  out-of-plane rows: (n, t antisymmetric, o symmetric) off by %.3g (of |G| %.3g)\n",
         hio, hmax, fo, fmx, bad, dfr, din, dot, dout, gmax);
  return !bad && hio <= tol * hmax && fo <= tol * fmx && dfr <= tol && din <= tol * gmax && dot <= tol * gmax &&
         dout <= tol * gmax;
}

/* A witness checked independently, from its forces c alone: u' = H^-1
 * (f + G c), then the contact law contact by contact. */
static void check_witness(const cp_system *sys, const int *pair, const double *x) {
  const int nu = sys->n_u, nc = sys->n_c;
  const double *c = x + nu;
  double *u = malloc(sizeof(double) * (size_t)nu), *Hc = malloc(sizeof(double) * (size_t)nu * nu);
  memcpy(Hc, sys->H, sizeof(double) * (size_t)nu * nu);
  for (int i = 0; i < nu; i++) {
    double v = sys->f[i];
    for (int k = 0; k < 3 * nc; k++) v += sys->G[i + (size_t)k * nu] * c[k];
    u[i] = v;
  }
  LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', nu, 1, Hc, nu, u, nu);
  double worst = 0.0, umax = 0.0;
  for (int i = 0; i < nu; i++) umax = fmax(umax, fabs(u[i]));
  for (int j = 0; j < nc; j++) {
    double a[3];
    for (int e = 0; e < 3; e++) {
      a[e] = 0.0;
      for (int i = 0; i < nu; i++) a[e] += sys->G[i + (size_t)(3 * j + e) * nu] * u[i];
    }
    const double cn = c[3 * j], mu = sys->mu[j];
    worst = fmax(worst, fmax(-cn, -a[0]));
    worst = fmax(worst, fmin(fabs(cn), fabs(a[0])));
    for (int e = 1; e < 3; e++) {
      worst = fmax(worst, fabs(c[3 * j + e]) - mu * cn);
      /* sliding: force on the opposing face */
      if (fabs(a[e]) > 1e-12) worst = fmax(worst, fmin(fabs(a[e]), fabs(c[3 * j + e] + (a[e] > 0 ? mu : -mu) * cn)));
    }
    printf("  contact %2d pair %d: a = (%.3g %.3g %.3g)  c = (%.4g %.4g %.4g)\n", j, pair[j], a[0], a[1], a[2], cn,
           c[3 * j + 1], c[3 * j + 2]);
  }
  double fu = 0.0;
  for (int i = 0; i < nu; i++) fu += sys->f[i] * u[i];
  printf("recomputed: |u'|_inf %.4g, f^T u' %.6g, worst contact-law violation %.3g\n", umax, fu, worst);
  free(u);
  free(Hc);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: arch_modes SCENE [B]\n");
    return 2;
  }
  const int do_bb = argc > 2 && !strcmp(argv[2], "bb");
  const int do_split = argc > 2 && !strcmp(argv[2], "split");
  const int do_couple = argc > 2 && !strcmp(argv[2], "couple");
  const double B = argc > 2 && !do_bb && !do_split && !do_couple ? atof(argv[2]) : 2.0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  cp_scene sc;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_assembly_load_scene(argv[1], &sc, &err)) {
    fprintf(stderr, "%s: %s\n", argv[1], err.msg);
    return 2;
  }
  const int np = cp_assembly_parts(&sc, NULL);
  uint64_t all = np >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << np) - 1);
  /* CP_STAGE=FILE:K: the K-th stage of a dump of simulated stage poses
   * ("stage MASK" then "name x y z qw qx qy qz" lines), contacts generated
   * as the sequence's certificates do (touch tolerance 1e-4 m). */
  const char *stage = getenv("CP_STAGE");
  if (stage) {
    char fn[1024];
    snprintf(fn, sizeof fn, "%s", stage);
    char *colon = strrchr(fn, ':');
    const int want = colon ? atoi(colon + 1) : 0;
    if (colon) *colon = '\0';
    FILE *df = fopen(fn, "r");
    if (!df) { fprintf(stderr, "%s: cannot open\n", fn); return 2; }
    char line[1024], name[256];
    int k = -1;
    while (fgets(line, sizeof line, df)) {
      unsigned long long m;
      double v[7];
      if (sscanf(line, "stage %llu", &m) == 1) {
        if (++k == want) all = m;
        continue;
      }
      if (k != want || sscanf(line, "%255s %lf %lf %lf %lf %lf %lf %lf", name, v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6) != 8) continue;
      for (int b = 0; b < sc.n_bodies; b++)
        if (!strcmp(sc.bodies[b].name, name)) {
          memcpy(sc.bodies[b].x, v, sizeof(double) * 3);
          memcpy(sc.bodies[b].q, v + 3, sizeof(double) * 4);
        }
    }
    fclose(df);
    sc.touch_tolerance = fmax(sc.touch_tolerance, 1e-4);
    printf("stage %d of %s: parts mask %llu\n", want, fn, (unsigned long long)all);
  }
  cp_stability_options o = cp_stability_defaults();
  o.depth = CP_STABILITY_EQUILIBRIUM;
  cp_stability_result res;
  cp_system sys;
  cp_contact *con = NULL;
  int ncon = 0;
  if (cp_assembly_stability(&sc, all, &o, &res, &sys, &con, &ncon, &err)) {
    fprintf(stderr, "%s: %s\n", argv[1], err.msg);
    return 2;
  }
  const int nu = sys.n_u, nc = sys.n_c;
  /* Pairs: same a, b, normal, x and z; the in-plane tangential component. */
  int *pair = malloc(sizeof(int) * (size_t)nc), np2 = 0;
  int *inplane = malloc(sizeof(int) * (size_t)nc);
  for (int j = 0; j < nc; j++) pair[j] = -1;
  for (int j = 0; j < nc; j++) {
    const double *t = sys.frame + 9 * j + 3;
    inplane[j] = fabs(t[1]) < 0.5 ? 1 : 2;
    if (pair[j] >= 0) continue;
    pair[j] = np2;
    for (int k = j + 1; k < nc; k++)
      if (pair[k] < 0 && con[k].a.body == con[j].a.body && con[k].b.body == con[j].b.body &&
          fabs(con[k].p[0] - con[j].p[0]) < 1e-3 && fabs(con[k].p[2] - con[j].p[2]) < 1e-3)
        pair[k] = np2;
    np2++;
  }
  printf("%d contacts, %d pairs, %d dofs; equilibrium LP: %s\n", nc, np2, nu, cp_stability_kind_name(res.kind));
  for (int j = 0; j < nc; j++)
    printf("  contact %2d pair %2d: %s on %s at (%.6f %.6f %.6f) normal (%.3f %.3f %.3f) mu %.2f\n", j, pair[j],
           con[j].a.body >= 0 ? sc.bodies[con[j].a.body].name : "-", con[j].b.body >= 0 ? sc.bodies[con[j].b.body].name : "-",
           con[j].p[0], con[j].p[1], con[j].p[2], con[j].n[0], con[j].n[1], con[j].n[2], sys.mu[j]);
  const int decoupled = couple_check(&sys, pair, inplane, np2, 1e-9);
  if (argc > 2 && !strcmp(argv[2], "decide")) {
    /* The library's full verdict on this system, node limit argv[3]
     * (default 2000, the task's); CP_CLEAN=T first sets to 0 every entry
     * of H and G below T times the largest of its matrix (the simulated
     * poses leave rounding-size entries, 1e-17 and below, where the
     * design has 0). */
    const char *cl = getenv("CP_CLEAN");
    if (cl) {
      const double T = atof(cl);
      double hm = 0.0, gm = 0.0;
      long nh = 0, ng = 0;
      for (size_t e = 0; e < (size_t)nu * nu; e++) hm = fmax(hm, fabs(sys.H[e]));
      for (size_t e = 0; e < (size_t)nu * 3 * (size_t)nc; e++) gm = fmax(gm, fabs(sys.G[e]));
      for (size_t e = 0; e < (size_t)nu * nu; e++)
        if (sys.H[e] != 0.0 && fabs(sys.H[e]) < T * hm) { sys.H[e] = 0.0; nh++; }
      for (size_t e = 0; e < (size_t)nu * 3 * (size_t)nc; e++)
        if (sys.G[e] != 0.0 && fabs(sys.G[e]) < T * gm) { sys.G[e] = 0.0; ng++; }
      printf("CP_CLEAN %g: %ld entries of H, %ld of G set to 0\n", T, nh, ng);
    }
    cp_stability_options fo = cp_stability_defaults();
    fo.node_limit = argc > 3 ? atol(argv[3]) : 2000;
    fo.time_limit_s = 0;
    cp_stability_result fr;
    const double t0 = cp_clock_thread_cpu();
    cp_stability_decide(&sys, &fo, &fr);
    printf("verdict %s (%s), %ld nodes, %d MILPs, %.2f s CPU; %s\n", cp_stability_kind_name(fr.kind), fr.method,
           fr.mip_nodes, fr.mip_solves, cp_clock_thread_cpu() - t0, fr.reason);
    cp_stability_result_free(&fr);
    return 0;
  }
  if (do_couple) {
    printf("decoupled (relative 1e-9): %s\n", decoupled ? "yes" : "NO");
    return 0;
  }
  static bbs W;
  W.sys = &sys;
  W.cA = -1;
  W.B = B;
  W.tol = 1e-9;
  W.fixO = getenv("CP_FIXO") != NULL;
  W.maxnodes = (do_bb || do_split) && argc > 3 ? atol(argv[3]) : 0;
  W.x = calloc((size_t)(nu + 3 * nc), sizeof(double));
  /* Every solution has u'^T H u' <= f^T u' (energy identity), so
   * |u'|_H <= |f|_H^-1 and |u'_i| <= sqrt((H^-1)_ii f^T H^-1 f): boxes at
   * B (default 2) times that bound cut off no solution. */
  W.Bi = malloc(sizeof(double) * (size_t)nu);
  {
    double *Hi = malloc(sizeof(double) * (size_t)nu * nu), *y = malloc(sizeof(double) * (size_t)nu);
    memcpy(Hi, sys.H, sizeof(double) * (size_t)nu * nu);
    memcpy(y, sys.f, sizeof(double) * (size_t)nu);
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nu, Hi, nu) ||
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', nu, 1, Hi, nu, y, nu) ||
        LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nu, Hi, nu)) {
      fprintf(stderr, "H is not positive definite\n");
      return 2;
    }
    double fHf = 0.0;
    for (int i = 0; i < nu; i++) fHf += sys.f[i] * y[i];
    for (int i = 0; i < nu; i++) W.Bi[i] = B * sqrt(Hi[i + (size_t)i * nu] * fHf);
    printf("boxes |u'_i| <= %.3g .. ", W.Bi[0]);
    double bmax = 0.0;
    for (int i = 0; i < nu; i++) bmax = fmax(bmax, W.Bi[i]);
    printf("%.3g (%.3g times the energy bound)\n", bmax, B);
    free(Hi);
    free(y);
  }
  signed char *ns = malloc((size_t)nc), *ts = malloc((size_t)(2 * nc));
  memset(ns, -1, (size_t)nc);
  memset(ts, -1, (size_t)(2 * nc));
  glp_term_out(GLP_OFF);
  if (do_split) {
    /* Phase 1 of contact/stability.c as a case split: eps_E and R_k as
     * there. Branch E: every out-of-plane dof |u'_k| <= R_k; branch
     * (k, s): s u'_k >= R_k, where every solution has f^T u' >=
     * u'^T H u' >= u_k'^2 / (H^-1)_kk >= eps_E. The branches cover every
     * solution; each closes when its tree's LP bounds are all < eps_E. */
    double *Hi = malloc(sizeof(double) * (size_t)nu * nu);
    memcpy(Hi, sys.H, sizeof(double) * (size_t)nu * nu);
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nu, Hi, nu) || LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nu, Hi, nu)) return 2;
    double epsE = 0.0;
    for (int i = 0; i < nu; i++) epsE = fmax(epsE, sys.f[i] * sys.f[i] * Hi[i + (size_t)i * nu]);
    epsE *= 1e-6;
    W.tol = epsE;
    W.lo = malloc(sizeof(double) * (size_t)nu);
    W.hi = malloc(sizeof(double) * (size_t)nu);
    /* argv[4]: rho, the band's width as a fraction of R_k (default 1):
     * branch E is |u'_k| <= rho R_k, the others s u'_k >= rho R_k, where
     * f^T u' >= rho^2 eps_E (their pruning threshold). */
    const double rho = argc > 4 ? atof(argv[4]) : 1.0;
    printf("eps_E %.4g, rho %.3g\n", epsE, rho);
    long tn = 0, tl = 0;
    int open = 0;
    const double t0 = cp_clock_thread_cpu();
    /* CP_TWIST=1 (needs the decoupling): the out-of-plane branches are
     * replaced by 2 np2 twist branches (p, sg) (docs: experiments/results/
     * assembly_robot.md, "the twist split"). Outside branch E some
     * |u'_k| > rho R_k (k out of plane), so u'_O^T H_OO u'_O >= delta =
     * rho^2 eps_E; with H_IO = 0 and f_O = 0 that is a_O^T c, and per pair
     * a_O^T c <= -tau_p C_p (tau_p the pair's mean in-plane tangential
     * acceleration, C_p = c_tA + c_tB): some pair has -tau_p C_p >=
     * delta / np2, i.e. for sg = sign(tau_p): sg tau_p >= 0 and sg C_p <=
     * -delta / (np2 taumax_p), taumax_p the box's bound on |tau_p|. */
    const int twist = getenv("CP_TWIST") != NULL;
    if (twist && !decoupled) {
      fprintf(stderr, "CP_TWIST: the system is not decoupled (above): the twist split does not apply\n");
      return 2;
    }
    const int nbr = twist ? 2 * np2 : 2 * nu;
    for (int br = -1; br < nbr; br++) {
      const int k = twist ? -1 : br / 2, sg = br % 2 ? -1 : 1;
      if (twist && br >= 0 && !getenv("CP_SPLIT_E")) {
        const int p = br / 2;
        W.cA = W.cB = -1;
        for (int j = 0; j < nc; j++)
          if (pair[j] == p) { if (W.cA < 0) W.cA = j; else W.cB = j; }
        if (W.cB < 0) { W.cA = -1; continue; }
        W.eA = inplane[W.cA];
        W.eB = inplane[W.cB];
        W.sg = sg;
        double taumax = 0.0;
        for (int i = 0; i < nu; i++)
          taumax += 0.5 * fabs(sys.G[i + (size_t)(3 * W.cA + W.eA) * nu] + sys.G[i + (size_t)(3 * W.cB + W.eB) * nu]) * W.Bi[i];
        W.thr = rho * rho * epsE / (np2 * taumax);
      }
      const int outp = k >= 0 && k < nu - sys.n_l && (k % 6 == 1 || k % 6 == 3 || k % 6 == 5);
      if (br >= 0 && !twist && (!outp || getenv("CP_SPLIT_E"))) continue;
      if (br >= 0 && twist && (W.cA < 0 || getenv("CP_SPLIT_E"))) continue;
      if (br < 0 && getenv("CP_SKIP_E")) continue; /* the other branches only */
      W.tol = br < 0 ? epsE : rho * rho * epsE;
      for (int i = 0; i < nu; i++) {
        const double R = rho * sqrt(epsE * Hi[i + (size_t)i * nu]);
        const int oi = i < nu - sys.n_l && (i % 6 == 1 || i % 6 == 3 || i % 6 == 5);
        W.lo[i] = -W.Bi[i];
        W.hi[i] = W.Bi[i];
        if (br < 0 && oi) { W.lo[i] = -R; W.hi[i] = R; }
        if (i == k && sg > 0) W.lo[i] = R;
        if (i == k && sg < 0) W.hi[i] = -R;
      }
      W.nodes = W.lps = W.unsolved = 0;
      W.found = 0;
      memset(ns, -1, (size_t)nc);
      memset(ts, -1, (size_t)(2 * nc));
      const double t1 = cp_clock_thread_cpu();
      bb_node(&W, ns, ts, 0);
      const int closed = !W.found && !(W.maxnodes > 0 && W.nodes >= W.maxnodes) && !W.unsolved;
      open += !closed;
      tn += W.nodes;
      tl += W.lps;
      if (br < 0) printf("branch E (|out-of-plane u'_k| <= R_k):");
      else if (twist) printf("twist branch pair %d (contacts %d, %d) %s, |C_t| >= %.3g:", br / 2, W.cA, W.cB, sg > 0 ? "tau >= 0" : "tau <= 0", W.thr);
      else printf("branch u'_%d (body %d, %s) %s= %sR:", k, k / 6, k % 6 == 1 ? "v_y" : k % 6 == 3 ? "w_x" : "w_z", sg > 0 ? ">" : "<", sg > 0 ? "" : "-");
      W.cA = -1;
      printf(" %s, %ld nodes, %ld LPs, %.2f s CPU\n", W.found ? "WITNESS" : closed ? "closed" : W.unsolved ? "incomplete (unsolved LPs)" : "node limit", W.nodes, W.lps, cp_clock_thread_cpu() - t1);
      if (W.found) { /* checked independently; decides: stop */
        printf("witness u':");
        for (int i = 0; i < nu; i++) printf(" %.4g", W.x[i]);
        printf("\n");
        check_witness(&sys, pair, W.x);
        break;
      }
    }
    printf("case split: %s, %ld nodes, %ld LPs, %.2f s CPU\n", open ? "OPEN branches" : "every branch closed: no moving solution", tn, tl, cp_clock_thread_cpu() - t0);
    return 0;
  }
  if (do_bb) {
    const double t1 = cp_clock_thread_cpu();
    bb_node(&W, ns, ts, 0);
    printf("branch and bound over contact modes: %s, %ld nodes, %ld LPs, %.2f s CPU\n",
           W.found ? "a moving solution found" : W.maxnodes > 0 && W.nodes >= W.maxnodes ? "node limit" : W.unsolved ? "incomplete (unsolved LPs)" : "no moving solution (complete)",
           W.nodes, W.lps, cp_clock_thread_cpu() - t1);
    if (W.found) {
      double fu = 0.0;
      for (int i = 0; i < nu; i++) fu += sys.f[i] * W.x[i];
      printf("f^T u' = %.6g; u':", fu);
      for (int i = 0; i < nu; i++) printf(" %.4g", W.x[i]);
      printf("\n");
    }
    return 0;
  }
  if (np2 > 12) {
    printf("%d pairs: too many to enumerate\n", np2);
    return 1;
  }
  long npat = 1;
  for (int i = 0; i < np2; i++) npat *= NMODE;
  const int ncol = nu + 3 * nc;
  double best = 0.0;
  long feasible = 0, positive = 0;
  double *xbest = calloc((size_t)ncol, sizeof(double)), *x = calloc((size_t)ncol, sizeof(double));
  long pbest = -1;
  const double t0 = cp_clock_thread_cpu();
  for (long pat = 0; pat < npat; pat++) {
    if (pat % 4096 == 0 && getenv("CP_BB_TRACE"))
      fprintf(stderr, "pattern %ld, %.1f s CPU, %ld feasible\n", pat, cp_clock_thread_cpu() - t0, feasible);
    int mode[64];
    long q = pat;
    for (int i = 0; i < np2; i++) { mode[i] = (int)(q % NMODE); q /= NMODE; }
    /* The pattern as contact modes: the in-plane component slides, the
     * other sticks. */
    for (int j = 0; j < nc; j++) {
      const int m = mode[pair[j]];
      ns[j] = m == OPEN ? 0 : 1;
      ts[2 * j] = ts[2 * j + 1] = STICK;
      if (m == SLIDEP || m == SLIDEM) ts[2 * j + inplane[j] - 1] = (signed char)m;
    }
    int ok = 0;
    const double ob = bb_lp(&W, ns, ts, x, &ok);
    if (!ok) continue;
    feasible++;
    if (ob > 1e-9) positive++;
    if (ob > best) {
      best = ob;
      pbest = pat;
      memcpy(xbest, x, sizeof(double) * (size_t)ncol);
    }
  }
  printf("%ld patterns, %ld feasible, %ld with f^T u' > 1e-9, best %.6g (pattern %ld), %.2f s CPU\n",
         npat, feasible, positive, best, pbest, cp_clock_thread_cpu() - t0);
  printf("%ld patterns' LPs not solved (primal, dual and rational simplex)\n", W.unsolved);
  if (pbest >= 0 && best > 1e-9) {
    long q = pbest;
    printf("modes:");
    for (int i = 0; i < np2; i++) { printf(" %d", (int)(q % NMODE)); q /= NMODE; }
    printf("  (0 open, 1 stick, 2 slide+, 3 slide-)\nu':");
    for (int i = 0; i < nu; i++) printf(" %.4g", xbest[i]);
    printf("\n");
    check_witness(&sys, pair, xbest);
  }
  return 0;
}
