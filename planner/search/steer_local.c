/* Local steering for rrt (search.steer "local"; docs/planner.md "Local
 * steering"), after Pang et al. (T-RO 2023): the extension chooses its input
 * from a linear model of what actions do at the node rather than only
 * among random ones.
 *
 * From node x an iteration simulates the zero input u0 = 0 (outcome e0 in
 * the embedding's steered rows), then the k random candidates of a plain
 * rrt iteration (inputs u_j in the problem's normalised coordinates,
 * outcomes e_j). The model e(u) ~ e0 + B u is fitted to them by
 * regularised least squares,
 *     B = (sum_j de_j du_j^T) (sum_j du_j du_j^T + eps I)^-1,
 * de_j = e_j - e0, du_j = u_j (with the candidates along the coordinate
 * axes this is the forward finite difference; with k >= n independent
 * candidates it is exact for a linear response). The input is then
 *     u* = argmin |e0 + B u - s|^2 + mu |u|^2  subject to -1 <= u <= 1,
 * s the sample's steered rows (projected coordinate descent on the convex
 * quadratic), and u* is simulated with the real contact model. The k + 2
 * outcomes are nodes and rrt's rule keeps one (in the goal, else nearest
 * the sample or, for a goal sample, of least goal distance), so the
 * steered action is kept only when it ends nearer than every candidate.
 *
 * Coordinate probes (search.steer_probe h): between the zero input and the
 * candidates, each steered input i alone at u_i = h (n more outcomes, also
 * candidates for rrt's rule), so that every column of B is seen: with a
 * linear response the fit is then exact whatever k. Rotation chart
 * (search.steer_rotation "log"; steer_chart.c): the outcome differences and
 * the target are 6 rows per body, position and the rotation vector of the
 * turn from the zero input's orientation, instead of quaternion rows.
 * No random number is drawn here: an iteration the budget cuts is rolled
 * back and drawn again on resume, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

/* Coordinate-descent sweeps of the bounded least squares (n <= 39). */
#define CP_STEER_SWEEPS 200

typedef struct local_buf {
  int *rows;       /* [m] */
  double *f;       /* [(k + 1) * m] steered rows of the outcomes, m apart */
  double *u;       /* [(k + 1) * n] their inputs */
  int *ok;         /* [k + 1] accepted */
  double *e, *t;   /* [m] */
  double *g, *b;   /* [n * n], [r * n] */
  double *q, *c;   /* [n * n], [n] */
} local_buf;

static void buf_free(local_buf *w) {
  free(w->rows);
  free(w->f);
  free(w->u);
  free(w->ok);
  free(w->e);
  free(w->t);
  free(w->g);
  free(w->b);
  free(w->q);
  free(w->c);
}

static int buf_init(local_buf *w, int m, int n, int k) {
  size_t K = (size_t)k + 1, M = (size_t)m, N = (size_t)n;
  w->rows = malloc(M * sizeof *w->rows);
  w->f = malloc(K * M * sizeof *w->f);
  w->u = calloc(K * N, sizeof *w->u);
  w->ok = calloc(K, sizeof *w->ok);
  w->e = malloc(M * sizeof *w->e);
  w->t = malloc(M * sizeof *w->t);
  w->g = malloc(N * N * sizeof *w->g);
  w->b = malloc(M * N * sizeof *w->b);
  w->q = malloc(N * N * sizeof *w->q);
  w->c = malloc(N * sizeof *w->c);
  return w->rows && w->f && w->u && w->ok && w->e && w->t && w->g && w->b && w->q &&
                 w->c
             ? 0
             : -1;
}

/* In-place Cholesky of the SPD n x n matrix a (lower triangle); -1 when it
 * is not positive definite. */
static int cholesky(double *a, int n) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return -1;
    a[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (int k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / a[j * n + j];
    }
  }
  return 0;
}

/* Solves L L^T x = x in place (l from cholesky). */
static void chol_solve(const double *l, int n, double *x) {
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) x[i] -= l[i * n + k] * x[k];
    x[i] /= l[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) x[i] -= l[k * n + i] * x[k];
    x[i] /= l[i * n + i];
  }
}

int cp_steer_fit(int n, int r, int k, const double *du, const double *df,
                 double *g, double *b) {
  double tr = 0;
  for (int i = 0; i < n * n; ++i) g[i] = 0;
  for (int j = 0; j < k; ++j)
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) g[p * n + q] += du[j * n + p] * du[j * n + q];
  for (int p = 0; p < n; ++p) tr += g[p * n + p];
  if (!(tr > 0)) return -1;
  for (int p = 0; p < n; ++p) g[p * n + p] += 1e-9 * tr / n;
  if (cholesky(g, n)) return -1;
  /* Row i of B solves G b_i = sum_j df_j[i] du_j (G symmetric). */
  for (int i = 0; i < r; ++i) {
    double *bi = b + (size_t)i * (size_t)n;
    for (int p = 0; p < n; ++p) {
      bi[p] = 0;
      for (int j = 0; j < k; ++j) bi[p] += df[j * r + i] * du[j * n + p];
    }
    chol_solve(g, n, bi);
  }
  return 0;
}

void cp_steer_solve(int n, int r, const double *b, const double *d, double *q,
                    double *c, double *u) {
  double tr = 0;
  for (int p = 0; p < n; ++p) {
    c[p] = 0;
    for (int i = 0; i < r; ++i) c[p] += b[i * n + p] * d[i];
    for (int q2 = 0; q2 < n; ++q2) {
      double v = 0;
      for (int i = 0; i < r; ++i) v += b[i * n + p] * b[i * n + q2];
      q[p * n + q2] = v;
    }
    tr += q[p * n + p];
    u[p] = 0;
  }
  double mu = 1e-6 * tr / n + 1e-300;
  for (int p = 0; p < n; ++p) q[p * n + p] += mu;
  for (int sweep = 0; sweep < CP_STEER_SWEEPS; ++sweep) {
    double change = 0;
    for (int p = 0; p < n; ++p) {
      double v = c[p];
      for (int q2 = 0; q2 < n; ++q2)
        if (q2 != p) v -= q[p * n + q2] * u[q2];
      v /= q[p * n + p];
      v = v < -1 ? -1 : v > 1 ? 1 : v;
      change = fmax(change, fabs(v - u[p]));
      u[p] = v;
    }
    if (change < 1e-12) break;
  }
}

/* Simulates action a from `from` and records it (steer.c's loop body);
 * 0, 1 when stopped (rolled back), -1 fatal. *id: the node. */
static int run(cp_search *s, long from, long a, long *id) {
  cp_expansion info;
  int rc = cp_search_simulate(s, from, a, s->scratch_y, &info);
  if (rc < 0) return -1;
  if (rc == 1) {
    cp_search_rollback(s);
    return 1;
  }
  *id = cp_search_record(s, from, a, s->scratch_y, &info);
  return *id < 0 ? -1 : 0;
}

/* The fit's rows of outcome f [r] (the steered rows) from the zero
 * input's f0: their difference, or in the pose chart (steer_log) 6 rows per
 * body; returns the count. */
static int diff_rows(const cp_search *s, int r, const double *f0,
                     const double *f, double *d) {
  if (s->opt.steer_log) {
    cp_steer_pose_diff(r / 7, f0, f, d);
    return r / 7 * 6;
  }
  for (int i = 0; i < r; ++i) d[i] = f[i] - f0[i];
  return r;
}

cp_search_status cp_search_steer_local(cp_search *s, long from,
                                       const long *acts, int k,
                                       const double *sample, int to_goal,
                                       double *e, long *kept) {
  const cp_search_problem *p = &s->p;
  int n = p->n_steer, m = p->m;
  /* Outcomes: the zero input, the probes (steer_probe), the candidates;
   * then the model's input. */
  int np = s->opt.steer_probe > 0 ? n : 0, K = 1 + np + k;
  long first = s->n_nodes;
  double kept_d2 = 0;
  *kept = -1;
  if (s->n_nodes + K + 1 > s->opt.max_nodes) {
    cp_search_rollback(s);
    return CP_SEARCH_NODE_LIMIT;
  }
  local_buf w = {0};
  cp_search_status st = CP_SEARCH_FAILED;
  if (buf_init(&w, m, n, K - 1)) {
    snprintf(s->message, sizeof s->message, "out of memory");
    goto done;
  }
  int r = p->steer_rows(p->ctx, w.rows), usable = 0;
  if (s->opt.steer_log && r % 7) {
    snprintf(s->message, sizeof s->message,
             "steer_log: %d steered rows, not 7 per body", r);
    goto done;
  }
  for (int c = 0; c <= K; ++c) {
    long a, id;
    if (c == K) { /* the fitted model's input */
      if (!w.ok[0] || !usable) break;
      double *du = w.u + n, *df = w.f + m; /* rows of w.f: m apart */
      int rd = 0;
      for (int j = 1, o = 0; j < K; ++j) { /* pack the accepted outcomes */
        if (!w.ok[j]) continue;
        memmove(du + (size_t)o * n, w.u + (size_t)j * n, (size_t)n * sizeof *du);
        rd = diff_rows(s, r, w.f, w.f + (size_t)j * m, w.e);
        memcpy(df + (size_t)o * rd, w.e, (size_t)rd * sizeof *df);
        ++o;
      }
      if (cp_steer_fit(n, rd, usable, du, df, w.g, w.b)) break;
      for (int i = 0; i < r; ++i) w.t[i] = sample[w.rows[i]];
      diff_rows(s, r, w.f, w.t, w.e);
      cp_steer_solve(n, rd, w.b, w.e, w.q, w.c, w.u);
      a = p->steer_action(p->ctx, w.u);
    } else if (c == 0) {
      a = p->steer_action(p->ctx, w.u); /* u = 0 (calloc) */
    } else if (c <= np) { /* probe input c - 1 alone */
      w.u[(size_t)c * n + (size_t)(c - 1)] = s->opt.steer_probe;
      a = p->steer_action(p->ctx, w.u + (size_t)c * n);
    } else {
      a = acts[c - 1 - np];
    }
    /* Stopped between actions: undone, drawn again on resume. */
    if (c > 0 && cp_search_stop_requested(s)) {
      cp_search_rollback(s);
      st = CP_SEARCH_STOPPED;
      goto done;
    }
    int rc = run(s, from, a, &id);
    if (rc) {
      st = rc > 0 ? CP_SEARCH_STOPPED : CP_SEARCH_FAILED;
      if (rc > 0) *kept = -1;
      goto done;
    }
    cp_search_steer_consider(s, id, s->scratch_y, sample, to_goal, e, kept,
                             &kept_d2);
    if (c < K && s->nodes[id].outcome == CP_EXPAND_OK) {
      p->embed(p->ctx, s->scratch_y, w.e);
      for (int i = 0; i < r; ++i) w.f[(size_t)c * m + i] = w.e[w.rows[i]];
      if (c > 0) p->steer_coords(p->ctx, a, w.u + (size_t)c * n);
      w.ok[c] = 1;
      usable += c > 0;
    }
  }
  cp_search_steer_keep(s, first, *kept, e);
  st = CP_SEARCH_RUNNING;
done:
  buf_free(&w);
  return st;
}
