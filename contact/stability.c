#include "contact/stability.h"

#include <glpk.h>
#include <lapacke.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/glpkout.h"
#include "contact/lcp.h"
#include "contact/problem.h"
#include "models/clock.h"

cp_stability_options cp_stability_defaults(void) {
  cp_stability_options o;
  o.depth = CP_STABILITY_FULL;
  o.rel_tol = 1e-6;
  o.energy_tol = 1e-9;
  o.mip_tol = 1e-9;
  o.time_limit_s = 60.0;
  o.try_solve = 1;
  o.milp = CP_STABILITY_MILP_ENERGY;
  o.energy_band = 1e-6;
  o.mu_torsion = NULL;
  o.progress = NULL;
  o.progress_ctx = NULL;
  o.node_limit = 0;
  return o;
}

const char *cp_stability_kind_name(cp_stability_kind k) {
  switch (k) {
  case CP_STABILITY_STRONG: return "strong";
  case CP_STABILITY_WEAK: return "weak";
  case CP_STABILITY_UNDECIDED: return "stable_undecided";
  case CP_STABILITY_UNSTABLE: return "unstable";
  case CP_STABILITY_FAILED: return "failed";
  }
  return "failed";
}

const char *cp_stability_kind_meaning(cp_stability_kind k) {
  switch (k) {
  case CP_STABILITY_STRONG:
    return "certified: an equilibrium exists and no solution of the contact problem at rest "
           "moves (strongly stable)";
  case CP_STABILITY_WEAK:
    return "certified: an equilibrium exists, and so does a solution that moves (weakly "
           "stable: it may stay or move)";
  case CP_STABILITY_UNDECIDED:
    return "certified: an equilibrium exists (weakly stable at least); open: whether some "
           "solution moves (strong or weak), not decided within the limit";
  case CP_STABILITY_UNSTABLE: return "certified: no equilibrium exists (every solution moves)";
  case CP_STABILITY_FAILED: break;
  }
  return "nothing certified: the equilibrium LP could not be solved";
}

void cp_stability_result_free(cp_stability_result *res) {
  if (!res) return;
  free(res->force);
  free(res->torsion);
  free(res->udot);
  free(res->motion_force);
  memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------------------ */
/* One guarded GLPK run (LP or MILP) from a sparse description               */
/* ------------------------------------------------------------------------ */

typedef struct lp_spec {
  int nr, ncol;
  int *rtype;            /* [nr] GLP_FX, GLP_UP, GLP_LO, GLP_DB */
  double *rlb, *rub;     /* [nr] */
  int *ctype;            /* [ncol] */
  double *clb, *cub, *obj; /* [ncol] */
  unsigned char *is_int; /* [ncol] binary columns (MILP) or NULL */
  int nnz, cap;          /* triplets 1..nnz (GLPK is 1-based) */
  int *ia, *ja;
  double *ar;
  int maximize;
  int method;            /* LP: 0 primal with scaling, 1 dual unscaled,
                            2 GLPK's exact (rational) simplex */
  int variant;           /* MILP: 0 as first tried; 1, 2 the retries after
                            a GLPK failure (milp_settings) */
  double time_limit_s;   /* MILP */
  double stop_above;     /* MILP: stop at an incumbent with obj > this */
  long node_limit;       /* MILP: branch-and-bound nodes; <= 0 none */
} lp_spec;

/* What the MILP callback reads and counts. */
typedef struct mip_watch {
  const lp_spec *s;
  long *nodes;           /* nodes GLPK created (glp_ios_tree_size's total),
                            written as they grow: also right after a GLPK
                            error longjmps out */
  int hit_nodes;         /* 1: stopped at s->node_limit */
} mip_watch;

enum { R_OPT = 0, R_INFEAS, R_LIMIT, R_NODES, R_FAIL, R_GLPK_ERROR };

typedef struct glp_guard {
  jmp_buf jb;
} glp_guard;

static void guard_error_hook(void *info) {
  longjmp(((glp_guard *)info)->jb, 1);
}

static int spec_alloc(lp_spec *s, int nr, int ncol, int cap) {
  memset(s, 0, sizeof *s);
  s->nr = nr;
  s->ncol = ncol;
  s->cap = cap > 0 ? cap : 1;
  s->rtype = calloc((size_t)nr + 1, sizeof(int));
  s->rlb = calloc((size_t)nr + 1, sizeof(double));
  s->rub = calloc((size_t)nr + 1, sizeof(double));
  s->ctype = calloc((size_t)ncol + 1, sizeof(int));
  s->clb = calloc((size_t)ncol + 1, sizeof(double));
  s->cub = calloc((size_t)ncol + 1, sizeof(double));
  s->obj = calloc((size_t)ncol + 1, sizeof(double));
  s->ia = malloc(sizeof(int) * ((size_t)s->cap + 1));
  s->ja = malloc(sizeof(int) * ((size_t)s->cap + 1));
  s->ar = malloc(sizeof(double) * ((size_t)s->cap + 1));
  if (!s->rtype || !s->rlb || !s->rub || !s->ctype || !s->clb || !s->cub || !s->obj ||
      !s->ia || !s->ja || !s->ar)
    return -1;
  for (int j = 0; j < ncol; j++) s->ctype[j] = GLP_FR;
  for (int i = 0; i < nr; i++) s->rtype[i] = GLP_FR;
  return 0;
}

static void spec_free(lp_spec *s) {
  free(s->rtype); free(s->rlb); free(s->rub);
  free(s->ctype); free(s->clb); free(s->cub); free(s->obj); free(s->is_int);
  free(s->ia); free(s->ja); free(s->ar);
  memset(s, 0, sizeof *s);
}

/* Adds entry (row r, column c), 0-based; grows the triplet arrays. */
static int spec_add(lp_spec *s, int r, int c, double v) {
  if (v == 0.0) return 0;
  if (s->nnz + 1 > s->cap) {
    int cap = 2 * s->cap;
    int *ia = realloc(s->ia, sizeof(int) * ((size_t)cap + 1));
    if (ia) s->ia = ia;
    int *ja = realloc(s->ja, sizeof(int) * ((size_t)cap + 1));
    if (ja) s->ja = ja;
    double *ar = realloc(s->ar, sizeof(double) * ((size_t)cap + 1));
    if (ar) s->ar = ar;
    if (!ia || !ja || !ar) return -1;
    s->cap = cap;
  }
  s->nnz++;
  s->ia[s->nnz] = r + 1;
  s->ja[s->nnz] = c + 1;
  s->ar[s->nnz] = v;
  return 0;
}

static void set_row(lp_spec *s, int r, int type, double lb, double ub) {
  s->rtype[r] = type;
  s->rlb[r] = lb;
  s->rub[r] = ub;
}

static void set_col(lp_spec *s, int c, int type, double lb, double ub) {
  s->ctype[c] = type;
  s->clb[c] = lb;
  s->cub[c] = ub;
}

static void stop_callback(glp_tree *T, void *info) {
  mip_watch *w = info;
  int total = 0;
  glp_ios_tree_size(T, NULL, NULL, &total);
  if (w->nodes) *w->nodes = total;
  if (glp_ios_reason(T) == GLP_IBINGO &&
      glp_mip_obj_val(glp_ios_get_prob(T)) > w->s->stop_above) {
    glp_ios_terminate(T); /* a moving solution is all we need */
  } else if (glp_ios_reason(T) == GLP_ISELECT && w->s->node_limit > 0 && total > w->s->node_limit) {
    /* The work limit: a count of nodes, the same on every machine. */
    w->hit_nodes = 1;
    glp_ios_terminate(T);
  }
}

/* The MILP's settings, variant 0 as first tried (dual simplex on the
 * unscaled problem from the standard basis, no presolver, GLPK's default
 * branching and backtracking: Driebeck-Tomlin, best local bound); 1 and 2
 * are the retries after a GLPK failure, each another walk through the tree
 * so that another sequence of node LPs (and bases) is met:
 *   1  most-fractional-variable branching, depth-first backtracking;
 *   2  default branching, breadth-first backtracking.
 * Both stay unscaled and without the presolver: measured on the arch's
 * stage 5 (experiments/results/assembly_robot.md), every retry with GLPK's
 * scaling (automatic or power-of-two, with any branching rule tried) and
 * with its MIP presolver failed again within a few hundred nodes, these two
 * ran to the node limit. */
static void milp_settings(int variant, glp_iocp *ip) {
  if (variant == 1) {
    ip->br_tech = GLP_BR_MFV;
    ip->bt_tech = GLP_BT_DFS;
  } else if (variant == 2) {
    ip->bt_tech = GLP_BT_BFS;
  }
}

/* Runs the LP or MILP; on R_OPT (and R_LIMIT with an incumbent, *have = 1)
 * writes x [ncol] and *objval. */
static int lp_run(const lp_spec *s, double *x, double *objval, int *have, long *nodes) {
  glp_guard guard;
  *have = 0;
  if (nodes) *nodes = 0;
  /* GLPK's text goes to contact/glpkout.h's sink (stderr with the command
   * line's --verbose, dropped otherwise), never to stdout: it holds the
   * JSON. It is only formatted when somebody listens. */
  const int talk = cp_glpk_has_sink();
  glp_term_hook(cp_glpk_forward, NULL);
  const int old_out = glp_term_out(talk ? GLP_ON : GLP_OFF);
  if (setjmp(guard.jb)) {
    /* GLPK is in its error state: only glp_free_env releases its memory
     * (the problem object included). Nothing assigned after setjmp is read
     * on this path. */
    glp_free_env();
    if (old_out != GLP_ON) glp_term_out(old_out);
    return R_GLPK_ERROR;
  }
  glp_error_hook(guard_error_hook, &guard);
  glp_prob *P = glp_create_prob();
  glp_set_obj_dir(P, s->maximize ? GLP_MAX : GLP_MIN);
  if (s->nr) glp_add_rows(P, s->nr);
  if (s->ncol) glp_add_cols(P, s->ncol);
  for (int i = 0; i < s->nr; i++) glp_set_row_bnds(P, i + 1, s->rtype[i], s->rlb[i], s->rub[i]);
  for (int j = 0; j < s->ncol; j++) {
    glp_set_col_bnds(P, j + 1, s->ctype[j], s->clb[j], s->cub[j]);
    glp_set_obj_coef(P, j + 1, s->obj[j]);
    if (s->is_int && s->is_int[j]) glp_set_col_kind(P, j + 1, GLP_BV);
  }
  glp_load_matrix(P, s->nnz, s->ia, s->ja, s->ar);
  /* Test hook (contact/glpkout.h): an error raised here takes the path of
   * a real internal error of GLPK. */
  if (cp_glpk_fault(s->is_int ? "stability milp" : "stability lp"))
    glp_error("complan: injected GLPK fault\n");
  int out = R_FAIL;
  if (!s->is_int) {
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = talk ? GLP_MSG_ON : GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    if (s->method == 0) {
      glp_scale_prob(P, GLP_SF_AUTO);
      parm.meth = GLP_PRIMAL;
    } else {
      parm.meth = GLP_DUALP;
    }
    parm.it_lim = 200000;
    int ret;
    if (s->method == 2) {
      /* Only after a GLPK failure: the rational simplex has no singular
       * basis "to working precision" and no tolerances (small LPs). */
      glp_adv_basis(P, 0);
      ret = glp_exact(P, &parm);
    } else {
      ret = glp_simplex(P, &parm);
    }
    if (ret == 0 && glp_get_status(P) == GLP_OPT) {
      out = R_OPT;
      *have = 1;
      *objval = glp_get_obj_val(P);
      for (int j = 0; j < s->ncol; j++) x[j] = glp_get_col_prim(P, j + 1);
    } else if (ret == 0 && (glp_get_status(P) == GLP_NOFEAS ||
                            glp_get_prim_stat(P) == GLP_NOFEAS)) {
      out = R_INFEAS;
    } else if (ret == GLP_EITLIM || ret == GLP_ETMLIM) {
      out = R_LIMIT;
    }
  } else {
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = talk ? GLP_MSG_ON : GLP_MSG_OFF;
    /* Without GLPK's MIP presolver: with it, an incumbent taken at the
     * callback (glp_ios_terminate) came back violating a row by 2e-5
     * (measured); the root LP is solved by the simplex instead. */
    parm.presolve = GLP_OFF;
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = talk ? GLP_MSG_ON : GLP_MSG_OFF;
    sp.meth = GLP_DUALP;
    milp_settings(s->variant, &parm);
    /* The root LP. glp_intopt starts only from an optimal root basis.
     * When GLPK's dual simplex does not reach one (excessive numerical
     * instability at an ill-conditioned basis, or a wrong verdict of
     * infeasibility: the arch's stage 5 in session 22), a retry with other
     * branching would meet the same root, so the root is solved again:
     * by the primal simplex from the standard basis, then by the rational
     * simplex (glp_exact), which has no working precision to lose and
     * whose verdict of infeasibility is a proof for the given data. A root
     * the first solve settles optimally is left as it was. */
    int root = glp_simplex(P, &sp);
    int exact_nofeas = 0;
    if (root != 0 || glp_get_status(P) != GLP_OPT) {
      sp.meth = GLP_PRIMAL;
      glp_std_basis(P);
      root = glp_simplex(P, &sp);
      if (root != 0 || glp_get_status(P) != GLP_OPT) {
        glp_adv_basis(P, 0);
        root = glp_exact(P, &sp);
        exact_nofeas = root == 0 && glp_get_status(P) == GLP_NOFEAS;
      }
    }
    parm.tol_int = 1e-9;
    mip_watch watch = {s, nodes, 0};
    parm.cb_func = stop_callback;
    parm.cb_info = &watch;
    if (s->time_limit_s > 0) {
      double ms = s->time_limit_s * 1000.0;
      parm.tm_lim = ms > 2e9 ? 2000000000 : (int)ms;
    }
    int ret = exact_nofeas ? GLP_ENOPFS : glp_intopt(P, &parm);
    int st = exact_nofeas ? GLP_NOFEAS : glp_mip_status(P);
    if (st == GLP_OPT || st == GLP_FEAS) {
      *have = 1;
      *objval = glp_mip_obj_val(P);
      for (int j = 0; j < s->ncol; j++) x[j] = glp_mip_col_val(P, j + 1);
    }
    if (ret == GLP_ESTOP && watch.hit_nodes) out = R_NODES;
    else if ((ret == 0 && st == GLP_OPT) || ret == GLP_ESTOP) out = R_OPT;
    else if (ret == GLP_ENOPFS || (ret == 0 && st == GLP_NOFEAS)) out = R_INFEAS;
    else if (ret == GLP_ETMLIM) out = R_LIMIT;
  }
  glp_delete_prob(P);
  glp_error_hook(NULL, NULL);
  glp_term_out(old_out);
  glp_term_hook(NULL, NULL);
  return out;
}

/* ------------------------------------------------------------------------ */
/* The problem data shared by the three tests                               */
/* ------------------------------------------------------------------------ */

typedef struct stab {
  const cp_system *sys;
  int nu, nc, nsoft, nca, ma;  /* ma = 3 nca: augmented contact space */
  int nF;                      /* free dofs */
  int *free_idx;               /* [nF] */
  unsigned char *driven;       /* [nu] */
  double *ud;                  /* [nu] given u' of driven dofs */
  double *Ga, *ka;             /* [nu*ma], [ma] G~, k~ */
  double *mu_t;                /* [nc] mu_tau, -1 ordinary */
  int *tor_col;                /* [nc] column of contact j's torsion, -1 */
  double *rhs;                 /* [nF] H_FD u'_D - f_F */
  double *a0;                  /* [ma] G~_D^T u'_D + k~ */
  int any_driven_motion;       /* some u'_D != 0 */
  double fscale, ascale;       /* max(1, |f|_inf), max(1, |H^-1 f|) */
  int *glpk_failures;          /* the result's count of GLPK internal errors */
} stab;

static void stab_free(stab *S) {
  free(S->free_idx); free(S->driven); free(S->ud); free(S->Ga); free(S->ka);
  free(S->mu_t); free(S->tor_col); free(S->rhs); free(S->a0);
}

static int stab_make(stab *S, const cp_system *sys, const double *mu_torsion) {
  memset(S, 0, sizeof *S);
  S->sys = sys;
  const int nu = sys->n_u, nc = sys->n_c;
  S->nu = nu;
  S->nc = nc;
  for (int j = 0; mu_torsion && j < nc; j++) S->nsoft += mu_torsion[j] >= 0.0;
  S->nca = nc + S->nsoft;
  S->ma = 3 * S->nca;
  const size_t un = (size_t)(nu > 0 ? nu : 1), mn = (size_t)(S->ma > 0 ? S->ma : 1);
  S->free_idx = malloc(sizeof(int) * un);
  S->driven = calloc(un, 1);
  S->ud = calloc(un, sizeof(double));
  S->Ga = calloc(un * mn, sizeof(double));
  S->ka = calloc(mn, sizeof(double));
  S->mu_t = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
  S->tor_col = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  S->rhs = calloc(un, sizeof(double));
  S->a0 = calloc(mn, sizeof(double));
  if (!S->free_idx || !S->driven || !S->ud || !S->Ga || !S->ka || !S->mu_t || !S->tor_col ||
      !S->rhs || !S->a0)
    return -1;
  for (int r = 0; r < sys->n_l; r++)
    if (sys->drive[r] == CP_DRIVE_ACCELERATION) {
      S->driven[6 * sys->n_obj + r] = 1;
      S->ud[6 * sys->n_obj + r] = sys->qdd[r];
      if (sys->qdd[r] != 0.0) S->any_driven_motion = 1;
    }
  for (int i = 0; i < nu; i++)
    if (!S->driven[i]) S->free_idx[S->nF++] = i;
  if (nc) {
    memcpy(S->Ga, sys->G, sizeof(double) * (size_t)nu * 3 * (size_t)nc);
    memcpy(S->ka, sys->k, sizeof(double) * 3 * (size_t)nc);
  }
  for (int j = 0, s = 0; j < nc; j++) {
    S->mu_t[j] = mu_torsion ? mu_torsion[j] : -1.0;
    S->tor_col[j] = -1;
    if (!(S->mu_t[j] >= 0.0)) continue;
    const int tr = 3 * (nc + s++);
    S->tor_col[j] = tr;
    memcpy(S->Ga + (size_t)tr * nu, sys->Gtor + (size_t)j * nu, sizeof(double) * (size_t)nu);
    S->ka[tr] = sys->ktor[j];
  }
  S->fscale = 1.0;
  S->ascale = 1.0;
  for (int i = 0; i < nu; i++) {
    S->fscale = fmax(S->fscale, fabs(sys->f[i]));
    const double h = sys->H[i + (size_t)i * nu];
    if (h > 0) S->ascale = fmax(S->ascale, fabs(sys->f[i]) / h);
  }
  for (int k = 0; k < S->nF; k++) {
    const int i = S->free_idx[k];
    double r = -sys->f[i];
    for (int d = 0; d < nu; d++)
      if (S->driven[d]) r += sys->H[i + (size_t)d * nu] * S->ud[d];
    S->rhs[k] = r;
  }
  for (int c = 0; c < S->ma; c++) {
    double a = S->ka[c];
    for (int d = 0; d < nu; d++)
      if (S->driven[d]) a += S->Ga[d + (size_t)c * nu] * S->ud[d];
    S->a0[c] = a;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Weak stability: the equilibrium LP (S1)                                  */
/* ------------------------------------------------------------------------ */

/* Largest violation of (S1) and the pyramids by c~ [ma], relative to
 * fscale; the residual of the equilibrium rows goes to *resid. */
static double equilibrium_violation(const stab *S, const double *c, double *resid) {
  double r = 0.0;
  for (int k = 0; k < S->nF; k++) {
    const int i = S->free_idx[k];
    double s = -S->rhs[k];
    for (int col = 0; col < S->ma; col++) s += S->Ga[i + (size_t)col * S->nu] * c[col];
    r = fmax(r, fabs(s));
  }
  *resid = r;
  double v = r;
  for (int j = 0; j < S->nc; j++) {
    const double mu = S->sys->mu[j], cn = c[3 * j];
    v = fmax(v, -cn);
    v = fmax(v, fabs(c[3 * j + 1]) - mu * cn);
    v = fmax(v, fabs(c[3 * j + 2]) - mu * cn);
    if (S->tor_col[j] >= 0) v = fmax(v, fabs(c[S->tor_col[j]]) - S->mu_t[j] * cn);
  }
  return v / S->fscale;
}

/* 1 feasible (c written), 0 infeasible, -1 failed (reason), -2 memory. */
static int equilibrium_lp(const stab *S, double tol_a, double rel_tol, double *c,
                          double *resid, int *lp_solves, char *reason, size_t rlen) {
  const int nc = S->nc, ma = S->ma, nu = S->nu;
  /* a0 with a negative normal component: the contact would have to pull. */
  for (int j = 0; j < nc; j++)
    if (S->a0[3 * j] < -tol_a) return 0;
  const int nr = S->nF + 4 * nc + 2 * S->nsoft;
  lp_spec s;
  if (spec_alloc(&s, nr, ma, 8 * ma + 4 * nc)) { spec_free(&s); return -2; }
  int r = 0;
  for (int k = 0; k < S->nF; k++, r++) {
    const int i = S->free_idx[k];
    set_row(&s, r, GLP_FX, S->rhs[k], S->rhs[k]);
    for (int col = 0; col < ma; col++)
      if (spec_add(&s, r, col, S->Ga[i + (size_t)col * nu])) { spec_free(&s); return -2; }
  }
  for (int col = 0; col < ma; col++) set_col(&s, col, GLP_FX, 0.0, 0.0); /* pads */
  int fail = 0;
  for (int j = 0; j < nc; j++) {
    const double mu = S->sys->mu[j];
    const int n = 3 * j;
    if (S->a0[n] > tol_a) continue; /* separating: c = 0 (all fixed at 0) */
    set_col(&s, n, GLP_LO, 0.0, 0.0);
    s.obj[n] = 1.0; /* least total normal force among the equilibria */
    int cols[3] = {n + 1, n + 2, S->tor_col[j]};
    double mus[3] = {mu, mu, S->mu_t[j]};
    for (int e = 0; e < 3; e++) {
      if (cols[e] < 0) continue;
      const int cc = cols[e];
      set_col(&s, cc, GLP_FR, 0.0, 0.0);
      const double a = S->a0[cc];
      /* |c_e| <= mu c_n, or on the face opposing a nonzero a0. */
      if (a > tol_a) {
        set_row(&s, r, GLP_FX, 0.0, 0.0);
        fail |= spec_add(&s, r, cc, 1.0) | spec_add(&s, r, n, mus[e]);
        r++;
        set_row(&s, r, GLP_FR, 0.0, 0.0);
        r++;
      } else if (a < -tol_a) {
        set_row(&s, r, GLP_FX, 0.0, 0.0);
        fail |= spec_add(&s, r, cc, 1.0) | spec_add(&s, r, n, -mus[e]);
        r++;
        set_row(&s, r, GLP_FR, 0.0, 0.0);
        r++;
      } else {
        set_row(&s, r, GLP_UP, 0.0, 0.0);
        fail |= spec_add(&s, r, cc, 1.0) | spec_add(&s, r, n, -mus[e]);
        r++;
        set_row(&s, r, GLP_UP, 0.0, 0.0);
        fail |= spec_add(&s, r, cc, -1.0) | spec_add(&s, r, n, -mus[e]);
        r++;
      }
    }
  }
  if (fail) { spec_free(&s); return -2; }
  s.nr = r;
  /* GLPK's simplex on these degenerate LPs is not always right (see
   * contact/fip.c): every answer is checked here, and "infeasible" is
   * believed only when both methods say it. */
  int result = -1, infeasible = 0, errors = 0;
  /* A GLPK internal error in one of the two adds a third, exact, solve:
   * the verdict then rests on the two that answered. */
  for (int method = 0; method < 2 + (errors > 0); method++) {
    s.method = method;
    double obj = 0.0;
    int have = 0;
    int out = lp_run(&s, c, &obj, &have, NULL);
    ++*lp_solves;
    if (out == R_GLPK_ERROR) {
      errors++;
      ++*S->glpk_failures;
    }
    if (out == R_OPT && have && equilibrium_violation(S, c, resid) <= rel_tol) {
      result = 1;
      break;
    }
    if (out == R_INFEAS) {
      infeasible++;
      continue;
    }
    snprintf(reason, rlen, "equilibrium LP: %s",
             out == R_GLPK_ERROR ? "GLPK failed"
             : out == R_LIMIT    ? "iteration limit"
             : out == R_OPT      ? "answer failed the equilibrium check"
                                 : "GLPK could not solve it");
  }
  if (result != 1) result = infeasible == 2 ? 0 : -1;
  spec_free(&s);
  return result;
}

/* ------------------------------------------------------------------------ */
/* Energy test                                                              */
/* ------------------------------------------------------------------------ */

/* 1: proven that no solution moves, 0: not proven, -2: memory. */
static int energy_test(const stab *S, double energy_tol, int *lp_solves) {
  const int nF = S->nF, nu = S->nu, nc = S->nc;
  if (S->any_driven_motion) return 0;
  for (int c = 0; c < S->ma; c++)
    if (S->ka[c] != 0.0) return 0; /* not at rest */
  lp_spec s;
  if (spec_alloc(&s, nc, nF, 12 * nc + 1)) { spec_free(&s); return -2; }
  double fsum = 0.0;
  for (int k = 0; k < nF; k++) {
    const int i = S->free_idx[k];
    set_col(&s, k, GLP_DB, -1.0, 1.0);
    s.obj[k] = S->sys->f[i];
    fsum += fabs(S->sys->f[i]);
  }
  for (int j = 0; j < nc; j++) {
    set_row(&s, j, GLP_LO, 0.0, 0.0); /* a_n = G_n,F^T u' >= 0 */
    for (int k = 0; k < nF; k++)
      if (spec_add(&s, j, k, S->Ga[S->free_idx[k] + (size_t)(3 * j) * nu])) {
        spec_free(&s);
        return -2;
      }
  }
  s.maximize = 1;
  double *x = malloc(sizeof(double) * (size_t)(nF > 0 ? nF : 1));
  if (!x) { spec_free(&s); return -2; }
  int proven = 0, errors = 0;
  for (int method = 0; method < 2 + (errors > 0) && !proven; method++) {
    s.method = method;
    double obj = 0.0;
    int have = 0;
    int out = lp_run(&s, x, &obj, &have, NULL);
    ++*lp_solves;
    if (out == R_GLPK_ERROR) {
      errors++;
      ++*S->glpk_failures;
    }
    if (out != R_OPT || !have) continue;
    /* The point must be feasible for the optimum to mean anything. */
    int ok = 1;
    for (int j = 0; j < nc && ok; j++) {
      double an = 0.0;
      for (int k = 0; k < nF; k++) an += S->Ga[S->free_idx[k] + (size_t)(3 * j) * nu] * x[k];
      ok = an >= -1e-9;
    }
    if (ok && obj <= energy_tol * fmax(1.0, fsum)) proven = 1;
    else if (ok) break; /* a feasible point gains energy: not proven */
  }
  free(x);
  spec_free(&s);
  return proven;
}

/* ------------------------------------------------------------------------ */
/* The MILP of strong stability                                             */
/* ------------------------------------------------------------------------ */

typedef enum { M_NONE = 0, M_FOUND, M_UNDECIDED, M_NOMEM } milp_outcome;

/* The MILP of one run of moving_milp into *s (allocated here; spec_free).
 * phase1: the energy row; else the run of dof k, sign sgn, with the band
 * rows when band. 0 ok, -1 memory. */
static int build_milp(const stab *S, lp_spec *sp, int phase1, int k, double sgn, int band,
                      const double *R, const double *Amax, double eps_E, double delta,
                      int at_rest) {
  const cp_system *sys = S->sys;
  const int nu = S->nu, nc = S->nc, nF = S->nF, ma = S->ma;
  int ntan = 0;
  for (int j = 0; j < nc; j++) ntan += 2 + (S->tor_col[j] >= 0);
  const int cU = 0, cC = nF, ca = nF + ma, cb = ca + 1, cp = cb + nc, ncol = cp + 2 * ntan;
  const int nr = 3 * nF + 3 * nc + 7 * ntan + 3;
  lp_spec *s = sp;
if (spec_alloc(s, nr, ncol, 16 * ma + 8 * nF + 16 * ntan)) return -1;
s->is_int = calloc((size_t)ncol + 1, 1);
if (!s->is_int) return -1;
  int fail = 0, r = 0;
  for (int i = 0; i < nF; i++) set_col(s, cU + i, GLP_DB, -1.0, 1.0);
  for (int col = 0; col < ma; col++) set_col(s, cC + col, GLP_FX, 0.0, 0.0);
  set_col(s, ca, GLP_DB, 0.0, 1.0);
  s->obj[ca] = 1.0;
  for (int i = cb; i < ncol; i++) {
    set_col(s, i, GLP_DB, 0.0, 1.0);
    s->is_int[i] = 1;
  }
  /* H_FF U + alpha rhs - G~_F C = 0  (rhs = H_FD u'_D - f_F) */
  for (int i = 0; i < nF; i++, r++) {
    const int gi = S->free_idx[i];
    set_row(s, r, GLP_FX, 0.0, 0.0);
    for (int b = 0; b < nF; b++) fail |= spec_add(s, r, cU + b, sys->H[gi + (size_t)S->free_idx[b] * nu]);
    fail |= spec_add(s, r, ca, S->rhs[i]);
    for (int col = 0; col < ma; col++) fail |= spec_add(s, r, cC + col, -S->Ga[gi + (size_t)col * nu]);
  }
  /* A_col = sum_i G[i, col] U_i + alpha a0_col, added to row r. */
#define ADD_ACCEL(row, col, scale)                                                    \
do {                                                                                \
  for (int i_ = 0; i_ < nF; i_++)                                                   \
    fail |= spec_add(s, (row), cU + i_, (scale) * S->Ga[S->free_idx[i_] + (size_t)(col) * nu]); \
  fail |= spec_add(s, (row), ca, (scale) * S->a0[(col)]);                          \
} while (0)
  for (int j = 0, e = 0; j < nc; j++) {
    const int n = 3 * j;
    set_col(s, cC + n, GLP_DB, 0.0, 1.0);
    set_row(s, r, GLP_LO, 0.0, 0.0); /* A_n >= 0 */
    ADD_ACCEL(r, n, 1.0);
    r++;
    set_row(s, r, GLP_UP, 0.0, Amax[n]); /* A_n + Amax beta <= Amax */
    ADD_ACCEL(r, n, 1.0);
    fail |= spec_add(s, r, cb + j, Amax[n]);
    r++;
    set_row(s, r, GLP_UP, 0.0, 0.0); /* C_n - beta <= 0 */
    fail |= spec_add(s, r, cC + n, 1.0) | spec_add(s, r, cb + j, -1.0);
    r++;
    int cols[3] = {n + 1, n + 2, S->tor_col[j]};
    double mus[3] = {sys->mu[j], sys->mu[j], S->mu_t[j]};
    for (int q = 0; q < 3; q++) {
      if (cols[q] < 0) continue;
      const int ce = cC + cols[q], pp = cp + 2 * e, mm = pp + 1;
      const double mu = mus[q], M2 = 2.0 * mu;
      set_col(s, ce, GLP_DB, -mu, mu);
      if (mu == 0.0) set_col(s, ce, GLP_FX, 0.0, 0.0);
      set_row(s, r, GLP_UP, 0.0, 0.0); /* C_e - mu C_n <= 0 */
      fail |= spec_add(s, r, ce, 1.0) | spec_add(s, r, cC + n, -mu);
      r++;
      set_row(s, r, GLP_UP, 0.0, 0.0); /* -C_e - mu C_n <= 0 */
      fail |= spec_add(s, r, ce, -1.0) | spec_add(s, r, cC + n, -mu);
      r++;
      set_row(s, r, GLP_UP, 0.0, 1.0); /* p + m <= 1 */
      fail |= spec_add(s, r, pp, 1.0) | spec_add(s, r, mm, 1.0);
      r++;
      set_row(s, r, GLP_UP, 0.0, 0.0); /* A_e - Amax p <= 0 */
      ADD_ACCEL(r, cols[q], 1.0);
      fail |= spec_add(s, r, pp, -Amax[cols[q]]);
      r++;
      set_row(s, r, GLP_UP, 0.0, 0.0); /* -A_e - Amax m <= 0 */
      ADD_ACCEL(r, cols[q], -1.0);
      fail |= spec_add(s, r, mm, -Amax[cols[q]]);
      r++;
      set_row(s, r, GLP_UP, 0.0, M2); /* C_e + mu C_n + 2 mu p <= 2 mu */
      fail |= spec_add(s, r, ce, 1.0) | spec_add(s, r, cC + n, mu) | spec_add(s, r, pp, M2);
      r++;
      set_row(s, r, GLP_UP, 0.0, M2); /* -C_e + mu C_n + 2 mu m <= 2 mu */
      fail |= spec_add(s, r, ce, -1.0) | spec_add(s, r, cC + n, mu) | spec_add(s, r, mm, M2);
      r++;
      e++;
    }
  }
#undef ADD_ACCEL
  if (phase1) { /* f_F^T U - eps_E alpha >= 0: the loads do work */
    set_row(s, r, GLP_LO, 0.0, 0.0);
    for (int i = 0; i < nF; i++) fail |= spec_add(s, r, cU + i, sys->f[S->free_idx[i]]);
    fail |= spec_add(s, r, ca, -eps_E);
    r++;
  } else {
    set_row(s, r, GLP_LO, 0.0, 0.0); /* s U_k - delta alpha >= 0 */
    fail |= spec_add(s, r, cU + k, sgn) | spec_add(s, r, ca, -delta);
    r++;
    if (at_rest) { /* 0 <= f_F^T U (<= eps_E alpha in the band) */
      set_row(s, r, band ? GLP_DB : GLP_LO, 0.0, 0.0);
      for (int i = 0; i < nF; i++) fail |= spec_add(s, r, cU + i, sys->f[S->free_idx[i]]);
      r++;
      if (band) {
        set_row(s, r, GLP_UP, 0.0, 0.0);
        for (int i = 0; i < nF; i++) fail |= spec_add(s, r, cU + i, sys->f[S->free_idx[i]]);
        fail |= spec_add(s, r, ca, -eps_E);
        r++;
      }
    }
    for (int i = 0; band && i < nF; i++) { /* |U_i| <= R_i alpha */
      if (R[i] >= 1.0) continue;
      set_row(s, r, GLP_UP, 0.0, 0.0);
      fail |= spec_add(s, r, cU + i, 1.0) | spec_add(s, r, ca, -R[i]);
      r++;
      set_row(s, r, GLP_UP, 0.0, 0.0);
      fail |= spec_add(s, r, cU + i, -1.0) | spec_add(s, r, ca, -R[i]);
      r++;
    }
  }
  if (band) { /* a DB row with equal bounds is not allowed: LO above */
    for (int q = 0; q < r; q++)
      if (s->rtype[q] == GLP_DB && s->rlb[q] == s->rub[q]) s->rtype[q] = GLP_LO;
  }
  s->nr = r;
return fail ? -1 : 0;
}

/* Is there a solution of the contact problem that moves? In the physical
 * variables, homogenised: U = alpha u'_F,
 * C = alpha c, |U_i| <= 1, C_n <= 1, alpha in [0, 1], with the contact
 * accelerations A = G~_F^T U + alpha a0 and per contact binaries:
 *   beta (touching: A_n = 0 allowed, else C_n = 0),
 *   p_e, m_e for each tangential component e (t, o, torsion): A_e > 0
 *   only with p_e (then C_e = -mu C_n), A_e < 0 only with m_e (then
 *   C_e = mu C_n), p_e + m_e <= 1;
 * big-M constants from the boxes (|A| <= sum |G| |U|max + |a0|, |C_e + mu
 * C_n| <= 2 mu), so they are exact. max alpha.
 *
 * At rest (no driven motion, k = 0) the energy identity u'^T H u' = f^T u'
 * + a^T c with a^T c <= 0 says every moving solution has f^T u' >= u'^T H
 * u' > 0, and |u'_k| >= delta needs f^T u' >= delta^2 / (H^-1)_kk
 * (Cauchy-Schwarz). So first ONE MILP (phase 1) asks for a solution with
 * f^T U >= eps_E alpha, eps_E well above GLPK's tolerances (the program's
 * rounding lets pseudo-solutions of |u'| ~ 1e-7 with f^T u' ~ |f| |u'|
 * through, measured). Infeasible: every moving solution has f^T u' <
 * eps_E, hence |u'_k| < R_k = sqrt(eps_E (H^-1)_kk). Phase 2 covers that
 * band exactly: one MILP per free dof k and sign s with s U_k >= delta
 * alpha, |U_i| <= R_i alpha, f^T U <= eps_E alpha (so big-M constants
 * shrink with R), skipped where R_k < delta. Without the energy identity
 * (driven joints, k != 0) phase 2 runs alone with the boxes |U_i| <= 1
 * and, at rest, the cut f^T U >= 0. The equations of motion H_FF U =
 * alpha (f_F - H_FD u'_D) + G~_F C are sparse (H block diagonal, G one
 * column block per contact); measured (session 2), this form solved the
 * same problems as the Pardalos-Rosen form of the pyramid LCP 1.4 to 2.3
 * times faster. */
static milp_outcome moving_milp(const stab *S, const cp_stability_options *opt,
                                double acc_tol, double *udot, double *force,
                                int *mip_solves, long *mip_nodes, char *reason, size_t rlen) {
  const cp_system *sys = S->sys;
  const int nu = S->nu, nc = S->nc, nF = S->nF, ma = S->ma;
  const double delta = 10.0 * acc_tol;
  int at_rest = !S->any_driven_motion;
  for (int c = 0; c < ma && at_rest; c++) at_rest = S->ka[c] == 0.0;
  const int energy = at_rest && opt->milp == CP_STABILITY_MILP_ENERGY;
  /* Tangential components of each contact: columns and coefficients. */
  int ntan = 0;
  for (int j = 0; j < nc; j++) ntan += 2 + (S->tor_col[j] >= 0);
  const int cC = nF, ca = nF + ma, ncol = ca + 1 + nc + 2 * ntan;
  milp_outcome res = M_NOMEM;
  lp_spec s;
  memset(&s, 0, sizeof s);
  const size_t fn = (size_t)(nF > 0 ? nF : 1), mn = (size_t)(ma > 0 ? ma : 1);
  double *xs = malloc(sizeof(double) * (size_t)ncol);
  double *Amax = malloc(sizeof(double) * mn);
  double *HF = malloc(sizeof(double) * fn * fn);
  double *Hinv = malloc(sizeof(double) * fn * fn);
  double *R = malloc(sizeof(double) * fn);
  double *uf = malloc(sizeof(double) * fn);
  double *c = malloc(sizeof(double) * mn);
  double *a = malloc(sizeof(double) * mn);
  if (!xs || !Amax || !HF || !Hinv || !R || !uf || !c || !a) goto done;
  for (int x = 0; x < nF; x++)
    for (int y = 0; y < nF; y++)
      HF[x + (size_t)y * nF] = sys->H[S->free_idx[x] + (size_t)S->free_idx[y] * nu];
  if (nF > 0 && LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nF, HF, nF) != 0) {
    snprintf(reason, rlen, "the generalised mass matrix is not positive definite");
    res = M_UNDECIDED;
    goto done;
  }
  /* eps_E: the loads' power, relative to the largest f_i^2 H^-1_ii (the
   * power of a body falling freely is of that order). */
  double eps_E = 0.0;
  if (nF > 0) {
    memcpy(Hinv, HF, sizeof(double) * (size_t)nF * (size_t)nF);
    if (LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nF, Hinv, nF) != 0) {
      snprintf(reason, rlen, "the generalised mass matrix is not positive definite");
      res = M_UNDECIDED;
      goto done;
    }
    for (int i = 0; i < nF; i++) {
      const double fi = sys->f[S->free_idx[i]];
      eps_E = fmax(eps_E, fi * fi * Hinv[i + (size_t)i * nF]);
    }
    eps_E *= opt->energy_band;
  }
  res = M_NONE;
  const double t_start = cp_clock_now();
  const int nruns = (energy ? 1 : 0) + 2 * nF;
  int band = 0; /* phase 1 proved f^T u' < eps_E for every moving solution */
  for (int run = 0; run < nruns && res == M_NONE; run++) {
    const int phase1 = energy && run == 0;
    const int k = (run - (energy ? 1 : 0)) / 2;
    const double sgn = (run - (energy ? 1 : 0)) % 2 ? -1.0 : 1.0;
    if (!phase1 && band && R[k] < delta) continue; /* |u'_k| < delta proven */
    for (int col = 0; col < ma; col++) {
      double m = fabs(S->a0[col]);
      for (int i = 0; i < nF; i++)
        m += fabs(S->Ga[S->free_idx[i] + (size_t)col * nu]) * (band ? fmin(1.0, R[i]) : 1.0);
      Amax[col] = m + 1e-12;
    }
    spec_free(&s);
    if (build_milp(S, &s, phase1, k, sgn, band, R, Amax, eps_E, delta, at_rest)) {
      res = M_NOMEM;
      break;
    }
    s.maximize = 1;
    s.stop_above = opt->mip_tol;
    double obj = 0.0;
    int have = 0;
    int out = R_GLPK_ERROR, failed = 0, errors = 0;
    /* A GLPK failure -- an internal error, or glp_intopt giving up (e.g. a
     * node LP its simplex could not solve) without a candidate -- ends the
     * attempt, not the question: the same MILP is solved again from
     * scratch with other settings (milp_settings), at most twice, out of
     * the same node budget and time. */
    for (int variant = 0;
         variant < 3 && (out == R_GLPK_ERROR || (out == R_FAIL && !(have && xs[ca] > opt->mip_tol)));
         variant++) {
      s.time_limit_s = 0.0;
      if (opt->time_limit_s > 0) {
        double left = opt->time_limit_s - (cp_clock_now() - t_start);
        s.time_limit_s = left > 0.001 ? left : 0.001;
      }
      /* The node budget is shared like the time: what the earlier MILPs
       * (and failed attempts) left, at least one node so that the root is
       * always solved -- except for a retry: with no node left it is not
       * made, and the MILP ends at the node limit. */
      s.node_limit = 0;
      if (opt->node_limit > 0) {
        const long left = opt->node_limit - *mip_nodes;
        if (variant > 0 && left < 1) {
          out = R_NODES;
          break;
        }
        s.node_limit = left > 1 ? left : 1;
      }
      s.variant = variant;
      long nodes = 0;
      out = lp_run(&s, xs, &obj, &have, &nodes);
      ++*mip_solves;
      *mip_nodes += nodes;
      if (out == R_GLPK_ERROR || (out == R_FAIL && !(have && xs[ca] > opt->mip_tol))) {
        failed++;
        errors += out == R_GLPK_ERROR;
        ++*S->glpk_failures;
      }
    }
    if (opt->progress) opt->progress(opt->progress_ctx, run + 1, nruns);
    if (have && xs[ca] > opt->mip_tol) {
      /* Candidate: c = C / alpha; u'_F recomputed from (E1), a from u';
       * then the pyramid law checked contact by contact. */
      const double alpha = xs[ca];
      double cmax = 1.0;
      for (int col = 0; col < ma; col++) {
        c[col] = xs[cC + col] / alpha;
        cmax = fmax(cmax, fabs(c[col]));
      }
      for (int i = 0; i < nF; i++) {
        double v = -S->rhs[i];
        for (int col = 0; col < ma; col++) v += S->Ga[S->free_idx[i] + (size_t)col * nu] * c[col];
        uf[i] = v;
      }
      if (nF > 0) LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', nF, 1, HF, nF, uf, nF);
      double umax = 0.0;
      for (int i = 0; i < nF; i++) umax = fmax(umax, fabs(uf[i]));
      for (int col = 0; col < ma; col++) {
        double v = S->a0[col];
        for (int i = 0; i < nF; i++) v += S->Ga[S->free_idx[i] + (size_t)col * nu] * uf[i];
        a[col] = v;
      }
      const double tf = 1e-6 * cmax, ta = acc_tol * fmax(1.0, umax);
      int ok = umax > acc_tol;
      for (int j = 0; j < nc && ok; j++) {
        const int n = 3 * j;
        ok = c[n] >= -tf && a[n] >= -ta && !(c[n] > tf && a[n] > ta);
        int cols[3] = {n + 1, n + 2, S->tor_col[j]};
        double mus[3] = {sys->mu[j], sys->mu[j], S->mu_t[j]};
        for (int q = 0; q < 3 && ok; q++) {
          if (cols[q] < 0) continue;
          const double ce = c[cols[q]], ae = a[cols[q]], lim = mus[q] * c[n];
          ok = fabs(ce) <= lim + tf && !(ae > ta && ce > -lim + tf) && !(ae < -ta && ce < lim - tf);
        }
      }
      if (ok) {
        for (int i = 0; i < nu; i++) udot[i] = S->driven[i] ? S->ud[i] : 0.0;
        for (int i = 0; i < nF; i++) udot[S->free_idx[i]] = uf[i];
        memcpy(force, c, sizeof(double) * 3 * (size_t)nc);
        res = M_FOUND;
      } else if (!phase1) {
        snprintf(reason, rlen, "MILP's moving candidate failed the contact-law check");
        res = M_UNDECIDED;
      } /* phase 1: no proof; phase 2 decides with the boxes |U_i| <= 1 */
    } else if (out != R_OPT && out != R_INFEAS) {
      if (out == R_NODES)
        snprintf(reason, rlen, "MILPs reached their node limit (%ld nodes)", opt->node_limit);
      else if (out == R_GLPK_ERROR || out == R_FAIL)
        snprintf(reason, rlen, "MILP not solved by GLPK with any of 3 settings (%d internal "
                 "error%s, %d solver failure%s)", errors, errors == 1 ? "" : "s",
                 failed - errors, failed - errors == 1 ? "" : "s");
      else
        snprintf(reason, rlen, "MILP reached its time limit");
      if (failed && out != R_GLPK_ERROR && out != R_FAIL) {
        const size_t len = strlen(reason);
        snprintf(reason + len, rlen - len, " (after %d GLPK failure%s, retried)", failed,
                 failed > 1 ? "s" : "");
      }
      res = M_UNDECIDED;
    } else if (phase1) {
      band = 1;
      for (int i = 0; i < nF; i++) R[i] = sqrt(eps_E * Hinv[i + (size_t)i * nF]);
    }
  }
done:
  spec_free(&s);
  free(xs); free(Amax); free(HF); free(Hinv); free(R); free(uf); free(c); free(a);
  return res;
}

/* ------------------------------------------------------------------------ */

static cp_stability_kind finish(cp_stability_result *res, cp_stability_kind k,
                                const char *method) {
  res->kind = k;
  res->method = method;
  return k;
}

cp_stability_kind cp_stability_decide(const cp_system *sys,
                                      const cp_stability_options *opt,
                                      cp_stability_result *res) {
  cp_stability_options def = cp_stability_defaults();
  if (!opt) opt = &def;
  memset(res, 0, sizeof *res);
  res->method = "lp";
  const int nu = sys->n_u, nc = sys->n_c;
  res->nu = nu;
  res->nc = nc;
  res->force = calloc((size_t)(3 * nc > 0 ? 3 * nc : 1), sizeof(double));
  res->torsion = calloc((size_t)(nc > 0 ? nc : 1), sizeof(double));
  res->udot = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->motion_force = calloc((size_t)(3 * nc > 0 ? 3 * nc : 1), sizeof(double));
  stab S = {0}; /* stab_free is safe before stab_make ran (out of memory) */
  double *c = NULL;
  if (!res->force || !res->torsion || !res->udot || !res->motion_force ||
      stab_make(&S, sys, opt->mu_torsion) ||
      !(c = calloc((size_t)(S.ma > 0 ? S.ma : 1), sizeof(double)))) {
    snprintf(res->reason, sizeof res->reason, "out of memory");
    stab_free(&S);
    return finish(res, CP_STABILITY_FAILED, "lp");
  }
  S.glpk_failures = &res->glpk_failures;
  res->acc_tol = opt->rel_tol * S.ascale;
  cp_stability_kind kind = CP_STABILITY_FAILED;
  const char *method = "lp";
  int eq = equilibrium_lp(&S, res->acc_tol, opt->rel_tol, c, &res->residual, &res->lp_solves,
                          res->reason, sizeof res->reason);
  if (eq == -2) {
    snprintf(res->reason, sizeof res->reason, "out of memory");
    goto out;
  }
  if (eq == -1) goto out;
  if (eq == 1) {
    res->has_equilibrium = 1;
    memcpy(res->force, c, sizeof(double) * 3 * (size_t)nc);
    for (int j = 0; j < nc; j++)
      res->torsion[j] = S.tor_col[j] >= 0 ? c[S.tor_col[j]] : 0.0;
    res->reason[0] = '\0';
  }
  if (eq == 1 && opt->depth == CP_STABILITY_EQUILIBRIUM) {
    kind = CP_STABILITY_UNDECIDED;
    snprintf(res->reason, sizeof res->reason, "only the equilibrium was asked for");
    goto out;
  }
  if (eq == 1) {
    /* The energy test first: it is an LP, and where it proves strong
     * stability (towers, walls) no contact solve is needed. */
    int en = energy_test(&S, opt->energy_tol, &res->lp_solves);
    if (en == -2) {
      snprintf(res->reason, sizeof res->reason, "out of memory");
      goto out;
    }
    if (en == 1) {
      kind = CP_STABILITY_STRONG;
      method = "energy";
      goto out;
    }
  }
  /* A moving solution from one contact solve: weak when there is an
   * equilibrium, and the motion to report when there is none. */
  if (opt->try_solve) {
    cp_problem_options po = cp_problem_defaults();
    po.mu_torsion = opt->mu_torsion;
    cp_problem_result pr;
    if (cp_problem_solve(sys, &po, &pr) == CP_LCP_SOLVED) {
      double umax = 0.0;
      for (int k = 0; k < S.nF; k++) umax = fmax(umax, fabs(pr.udot[S.free_idx[k]]));
      if (umax > res->acc_tol) {
        res->has_motion = 1;
        memcpy(res->udot, pr.udot, sizeof(double) * (size_t)nu);
        memcpy(res->motion_force, pr.force, sizeof(double) * 3 * (size_t)nc);
      }
    }
    cp_problem_result_free(&pr);
  }
  if (eq == 0) {
    kind = CP_STABILITY_UNSTABLE;
    goto out;
  }
  if (res->has_motion) {
    kind = CP_STABILITY_WEAK;
    method = "solve";
    goto out;
  }
  method = "milp";
  switch (moving_milp(&S, opt, res->acc_tol, res->udot, res->motion_force, &res->mip_solves, &res->mip_nodes,
                      res->reason, sizeof res->reason)) {
  case M_NONE: kind = CP_STABILITY_STRONG; break;
  case M_FOUND: kind = CP_STABILITY_WEAK; res->has_motion = 1; break;
  case M_UNDECIDED: kind = CP_STABILITY_UNDECIDED; break;
  case M_NOMEM:
    snprintf(res->reason, sizeof res->reason, "out of memory");
    kind = CP_STABILITY_FAILED;
    break;
  }
out:
  free(c);
  stab_free(&S);
  return finish(res, kind, method);
}
