/* The paper's protocol on one data set, and the study driver (generation,
 * data files, fork()ed workers, reports). See experiments/study/study.h. */
#include "experiments/study/study.h"

#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contact/lcpio.h"
#include "contact/solve.h"
#include "models/clock.h"
#include "planner/io/outfile.h"
#include "planner/plan/mpi.h"

cp_paper_options cp_paper_defaults(void) {
  cp_paper_options o;
  memset(&o, 0, sizeof o);
  o.seed = CP_PAPER_DEFAULT_SEED;
  o.problems = CP_PAPER_PROBLEMS;
  long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  o.jobs = nproc > 0 ? (nproc > 64 ? 64 : (int)nproc) : 1;
  o.time_limit_s = 300.0;
  o.unique_time_limit_s = 60.0;
  o.node_limit = 10000;
  o.unique_node_limit = 2000;
  o.unique_max_cuts = 64;
  o.unique_lemke_covers = 8;
  o.persist_restarts = 200;
  o.mip_all = 0;
  o.lemke_max_pivots = 100;
  o.lemke_restarts = 3;
  o.fip_max_iter = 300;
  o.fip_gap_tol = 1e-6;
  o.write_data = 1;
  return o;
}

static double now_s(void) { return cp_clock_now(); }

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* ------------------------------------------------------------------------ */
/* Uniqueness of u' (contact/problem.c's rule, applied to every verified    */
/* solution at hand)                                                        */
/* ------------------------------------------------------------------------ */

int cp_paper_udot(const cp_paper_instance *in, const double *z, double *udot) {
  const int n3 = 3 * in->sys.n_c;
  double *c = malloc(sizeof(double) * (size_t)(n3 > 0 ? n3 : 1));
  if (!c) return -1;
  cp_pyramid_forces(&in->lay, in->pc, z, c);
  int rc = cp_contact_space_accel(&in->cs, c, udot, NULL);
  free(c);
  return rc ? -1 : 0;
}

int cp_paper_udot_differs(int nu, const double *a, const double *b) {
  double scale = 1.0;
  for (int i = 0; i < nu; i++) scale = fmax(scale, fmax(fabs(a[i]), fabs(b[i])));
  for (int i = 0; i < nu; i++)
    if (fabs(a[i] - b[i]) > 1e-6 * scale) return 1;
  return 0;
}

/* sols: nsol verified solutions [n] each. Decides whether every solution has
 * the same u' (contact/problem.c's rule), after comparing the solutions at
 * hand and those of a few Lemke runs with random covering vectors (cheap
 * evidence of non-uniqueness). *why says why it stayed undecided. */
static cp_paper_unique decide_unique(const cp_paper_instance *in, const double *const *sols,
                                     int nsol, const cp_paper_options *opt, uint64_t seed,
                                     cp_paper_unique_why *why) {
  const int n = in->lcp.n, nu = in->sys.n_u;
  const double *M = in->lcp.M, *q = in->lcp.q;
  *why = CP_PAPER_UW_DECIDED;
  if (cp_lcp_symmetric_psd(n, M)) return CP_PAPER_UNIQUE;
  cp_paper_unique res = CP_PAPER_UNIQUE_UNDECIDED;
  const size_t nuu = (size_t)(nu > 0 ? nu : 1);
  double *buf = malloc(sizeof(double) * ((size_t)5 * n + (size_t)(nsol + 3) * nuu));
  unsigned char *basis = malloc((size_t)n);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  if (!buf || !basis || !ws) {
    *why = CP_PAPER_UW_MIP_FAILED;
    goto done;
  }
  double *z1 = buf, *w1 = z1 + n, *z2 = w1 + n, *w2 = z2 + n, *cover = w2 + n;
  double *ud = cover + n, *u1 = ud + (size_t)nsol * nuu, *u2 = u1 + nuu;
  /* Different accelerations among the solutions already found settle it. */
  for (int s = 0; s < nsol; s++)
    if (cp_paper_udot(in, sols[s], ud + (size_t)s * nuu)) goto done;
  for (int s = 1; s < nsol; s++)
    if (cp_paper_udot_differs(nu, ud, ud + (size_t)s * nuu)) {
      res = CP_PAPER_NOT_UNIQUE;
      goto done;
    }
  /* Lemke from other covering vectors ends at other vertices. */
  uint64_t rs = seed;
  for (int t = 0; t < opt->unique_lemke_covers && nsol > 0; t++) {
    for (int i = 0; i < n; i++) {
      rs = mix(rs, (uint64_t)i);
      cover[i] = 0.1 + (double)(rs >> 11) * 0x1.0p-53;
    }
    cp_lemke_options lo = cp_lemke_defaults();
    lo.cover = cover;
    lo.restarts = 0;
    cp_lcp_info li;
    if (cp_lemke_solve(ws, n, M, q, &lo, NULL, z2, w2, &li) != CP_LCP_SOLVED) continue;
    if (cp_paper_udot(in, z2, u2)) goto done;
    if (cp_paper_udot_differs(nu, ud, u2)) {
      res = CP_PAPER_NOT_UNIQUE;
      goto done;
    }
  }
  cp_certify_options co = cp_certify_defaults();
  co.second = 1;
  co.time_limit_s = opt->unique_time_limit_s;
  co.node_limit = opt->unique_node_limit;
  co.max_cuts = opt->unique_max_cuts;
  cp_certify_result cr;
  cp_lcp_info info;
  cp_certify(n, M, q, &co, z1, w1, z2, w2, &cr, &info);
  if (info.status != CP_LCP_SOLVED) {
    *why = info.status == CP_LCP_TIME_LIMIT || info.status == CP_LCP_ITERATION_CAP
               ? CP_PAPER_UW_LIMIT
               : CP_PAPER_UW_MIP_FAILED;
    goto done;
  }
  if (cp_paper_udot(in, z1, u1)) goto done;
  if (nsol > 0 && cp_paper_udot_differs(nu, ud, u1)) {
    res = CP_PAPER_NOT_UNIQUE;
    goto done;
  }
  if (cr.has_second) {
    if (cp_paper_udot(in, z2, u2)) goto done;
    if (cp_paper_udot_differs(nu, u1, u2)) res = CP_PAPER_NOT_UNIQUE;
    else *why = CP_PAPER_UW_SAME_ACCEL; /* same u' from another support */
    goto done;
  }
  if (!cr.second_decided) {
    *why = CP_PAPER_UW_LIMIT; /* a limit (nodes, time or cuts) stopped the search */
    goto done;
  }
  /* Every solution shares z1's support: unique iff that basis is nonsingular. */
  double zmax = 0.0;
  for (int i = 0; i < n; i++) zmax = fmax(zmax, fabs(z1[i]));
  for (int i = 0; i < n; i++) basis[i] = z1[i] > 1e-12 * fmax(1.0, zmax);
  if (cp_lcp_solve_basis(n, M, q, basis, z2, w2) == 0) res = CP_PAPER_UNIQUE;
  else *why = CP_PAPER_UW_SINGULAR;
done:
  if (res != CP_PAPER_UNIQUE_UNDECIDED) *why = CP_PAPER_UW_DECIDED;
  else if (*why == CP_PAPER_UW_DECIDED) *why = CP_PAPER_UW_MIP_FAILED; /* memory */
  free(buf);
  free(basis);
  cp_lemke_ws_destroy(ws);
  return res;
}

/* ------------------------------------------------------------------------ */
/* One data set                                                             */
/* ------------------------------------------------------------------------ */

/* Copies src into dst[size] (truncating), CSV-safe. */
static void copy_text(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
  for (char *c = dst; *c; c++)
    if (*c == ',' || *c == '\n' || *c == '"') *c = ';';
}

static void copy_reason(char *dst, size_t size, const cp_lcp_info *info) {
  copy_text(dst, size, info->reason[0] ? info->reason : cp_lcp_status_name(info->status));
}


int cp_paper_run_dataset(const cp_paper_problem *p, int j, const cp_paper_options *opt,
                         cp_paper_row *row, cp_error *err) {
  memset(row, 0, sizeof *row);
  const double t0 = now_s();
  row->problem = p->index + 1;
  row->mu_index = j;
  row->mu = cp_paper_mu(j);
  char *text = cp_paper_scene_text(p, row->mu);
  if (!text) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  cp_paper_instance in;
  int rc = cp_paper_instance_build(text, &in, err);
  free(text);
  if (rc) {
    /* A generated data set that cannot be built is the study's failure,
     * not the user's input. */
    if (err && err->code == CP_ERR_INPUT) err->code = CP_ERR_NUMERICAL;
    return -1;
  }
  const int n = in.lcp.n, nu = in.sys.n_u, nc = in.sys.n_c;
  const double *M = in.lcp.M, *q = in.lcp.q;
  row->size = n;
  row->nb = in.nb;
  row->ns = in.ns;
  row->nr = in.nr;
  row->nc = nc;
  row->n_u = nu;
  row->n_joints = in.sys.n_l;

  double *buf = malloc(sizeof(double) * (size_t)n * 10);
  unsigned char *sl = malloc((size_t)nc);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  if (!buf || !sl || !ws) {
    free(buf);
    free(sl);
    cp_lemke_ws_destroy(ws);
    cp_paper_instance_free(&in);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  double *zL = buf, *wL = zL + n, *zF = wL + n, *wF = zF + n, *zA = wF + n, *wA = zA + n;
  double *zC = wA + n, *wC = zC + n, *zP = wC + n, *wP = zP + n;

  /* Theorem 1's assumptions (docs/math.md §5 diagnostics). */
  for (int c = 0; c < nc; c++) sl[c] = (unsigned char)in.sys.sliding[c];
  cp_contact_diag diag;
  if (cp_contact_diagnostics(&in.cs, sl, in.sys.mu, &diag) == 0) {
    row->jacobian_rank = diag.jacobian_rank;
    row->full_rank = diag.full_column_rank;
    row->friction_bound = diag.friction_bound;
    row->within_bound = diag.within_friction_bound;
  }

  /* Lemke, the paper's protocol. */
  cp_lcp_info info;
  double t = now_s();
  cp_lemke_options lo = cp_lemke_defaults();
  lo.max_pivots = opt->lemke_max_pivots;
  lo.restarts = opt->lemke_restarts;
  lo.seed = mix(opt->seed, (uint64_t)(p->index * 64 + j));
  cp_lemke_solve(ws, n, M, q, &lo, NULL, zL, wL, &info);
  row->t_lemke = now_s() - t;
  row->lemke = info.status == CP_LCP_SOLVED ? CP_PAPER_SOLVED : CP_PAPER_FAILED;
  row->lemke_raw = info.status;
  row->lemke_starts = info.starts;
  row->lemke_iters = info.iterations;
  row->lemke_first_iters = info.first_start_iterations;
  cp_lemke_pivots_per_start(ws, row->lemke_pivots, 4);
  if (row->lemke != CP_PAPER_SOLVED) copy_reason(row->lemke_reason, sizeof row->lemke_reason, &info);

  /* FIP, the paper's settings. */
  t = now_s();
  cp_fip_options fo = cp_fip_defaults();
  fo.max_iter = opt->fip_max_iter;
  fo.gap_tol = opt->fip_gap_tol;
  cp_fip_solve(n, M, q, &fo, zF, wF, &info);
  row->t_fip = now_s() - t;
  row->fip = info.status == CP_LCP_SOLVED ? CP_PAPER_SOLVED : CP_PAPER_FAILED;
  row->fip_raw = info.status;
  row->fip_iters = info.iterations;
  if (row->fip != CP_PAPER_SOLVED) copy_reason(row->fip_reason, sizeof row->fip_reason, &info);

  /* The auto strategy as shipped, with the study's MIP time limit. */
  t = now_s();
  cp_solve_options so = cp_solve_defaults();
  so.solver = CP_SOLVER_AUTO;
  so.certify.time_limit_s = opt->time_limit_s;
  so.certify.node_limit = opt->node_limit;
  cp_solve_trail trail;
  cp_lcp_solve(ws, n, M, q, &so, zA, wA, &info, &trail);
  row->t_auto = now_s() - t;
  row->autos = info.status == CP_LCP_SOLVED     ? CP_PAPER_SOLVED
               : info.status == CP_LCP_INFEASIBLE ? CP_PAPER_NO_SOLUTION
                                                  : CP_PAPER_FAILED;
  row->auto_raw = info.status;
  row->auto_solver = info.solver;
  row->auto_iters = info.iterations;
  for (int s = 0; s < 3; s++) row->auto_ran[s] = trail.ran[s];
  if (row->autos != CP_PAPER_SOLVED) copy_reason(row->auto_reason, sizeof row->auto_reason, &info);

  /* The MIP certificate, where a certificate is still needed (no verified
   * solution from Lemke, FIP or auto), or on every data set with mip_all:
   * the auto strategy's own MIP when it ran (same problem, same options),
   * else a separate run. */
  int any_solver = row->lemke == CP_PAPER_SOLVED || row->fip == CP_PAPER_SOLVED ||
                   row->autos == CP_PAPER_SOLVED;
  if (trail.ran[CP_SOLVER_CERTIFY]) {
    row->mip_ran = 1;
    row->mip_from_auto = 1;
    row->mip_raw = trail.status[CP_SOLVER_CERTIFY];
    row->mip_nodes = trail.iterations[CP_SOLVER_CERTIFY];
    row->t_mip = 0.0;
    if (row->mip_raw == CP_LCP_SOLVED) memcpy(zC, zA, sizeof(double) * (size_t)n);
    if (row->mip_raw != CP_LCP_SOLVED && row->mip_raw != CP_LCP_INFEASIBLE)
      copy_reason(row->mip_reason, sizeof row->mip_reason, &info);
  } else if (!any_solver || opt->mip_all) {
    row->mip_ran = 1;
    t = now_s();
    cp_certify_options co = cp_certify_defaults();
    co.time_limit_s = opt->time_limit_s;
    co.node_limit = opt->node_limit;
    cp_certify_result cr;
    cp_certify(n, M, q, &co, zC, wC, NULL, NULL, &cr, &info);
    row->t_mip = now_s() - t;
    row->mip_denoised = cr.q_cleaned > 0;
    row->mip_raw = info.status;
    row->mip_nodes = info.iterations;
    if (info.status != CP_LCP_SOLVED && info.status != CP_LCP_INFEASIBLE)
      copy_reason(row->mip_reason, sizeof row->mip_reason, &info);
  }
  if (!row->mip_ran) row->mip_raw = CP_LCP_NUMERICAL; /* "not run": never SOLVED */
  row->mip_first_raw = row->mip_raw;
  row->mip_hit_limit = row->mip_raw == CP_LCP_TIME_LIMIT || row->mip_raw == CP_LCP_ITERATION_CAP;

  /* The persistent Lemke: on every data set that Lemke, FIP and auto all
   * failed on (including those the MIP calls unsolvable: a cross-check). */
  if (!any_solver && opt->persist_restarts > 0) {
    t = now_s();
    cp_lemke_options po = cp_lemke_defaults();
    po.restarts = opt->persist_restarts;
    po.seed = mix(opt->seed ^ 0x50455253ull, (uint64_t)(p->index * 64 + j));
    cp_lemke_solve(ws, n, M, q, &po, NULL, zP, wP, &info);
    row->t_persist = now_s() - t;
    row->persist_ran = 1;
    row->persist_raw = info.status;
    row->persist_iters = info.iterations;
    row->persist_starts = info.starts;
  }
  const int persist_ok = row->persist_ran && row->persist_raw == CP_LCP_SOLVED;

  row->cert_source = CP_PAPER_SRC_NONE;
  const int mip_ok = row->mip_ran && row->mip_raw == CP_LCP_SOLVED;
  const int mip_none = row->mip_ran && row->mip_raw == CP_LCP_INFEASIBLE;
  if (mip_ok) {
    row->cert = CP_PAPER_CERT_SOLVABLE;
    row->cert_source = CP_PAPER_SRC_MIP;
  } else if (any_solver || persist_ok) {
    /* A verified solution is a certificate of existence. */
    row->cert = CP_PAPER_CERT_SOLVABLE;
    row->cert_source = row->lemke == CP_PAPER_SOLVED ? CP_PAPER_SRC_LEMKE
                       : row->fip == CP_PAPER_SOLVED ? CP_PAPER_SRC_FIP
                       : row->autos == CP_PAPER_SOLVED ? CP_PAPER_SRC_AUTO
                                                       : CP_PAPER_SRC_PERSIST;
    row->conflict = mip_none;
  } else if (mip_none) {
    row->cert = CP_PAPER_CERT_NONE;
  } else {
    row->cert = CP_PAPER_CERT_UNDECIDED;
  }

  /* Uniqueness of the accelerations. */
  row->unique = CP_PAPER_UNIQUE_NA;
  if (row->cert == CP_PAPER_CERT_SOLVABLE) {
    const double *sols[5];
    int ns = 0;
    if (mip_ok) sols[ns++] = zC;
    if (row->lemke == CP_PAPER_SOLVED) sols[ns++] = zL;
    if (row->fip == CP_PAPER_SOLVED) sols[ns++] = zF;
    if (row->autos == CP_PAPER_SOLVED) sols[ns++] = zA;
    if (persist_ok) sols[ns++] = zP;
    t = now_s();
    row->unique = decide_unique(&in, sols, ns, opt,
                                mix(opt->seed ^ 0x554E49ull, (uint64_t)(p->index * 64 + j)),
                                &row->unique_why);
    row->unique_hit_limit = row->unique_why == CP_PAPER_UW_LIMIT;
    row->t_unique = now_s() - t;
  }
  row->t_total = now_s() - t0;
  free(buf);
  free(sl);
  cp_lemke_ws_destroy(ws);
  cp_paper_instance_free(&in);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */
/* ------------------------------------------------------------------------ */

static int mkdir_p(const char *path, cp_error *err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return cp_error_set(err, path, "path too long");
  for (char *s = buf + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(buf, 0777) && errno != EEXIST)
        return cp_error_setc(err, CP_ERR_IO, buf, "cannot create directory: %s", strerror(errno));
      *s = c;
      if (!c) break;
    }
  }
  struct stat stt;
  if (stat(buf, &stt) || !S_ISDIR(stt.st_mode))
    return cp_error_set(err, path, "not a directory");
  return 0;
}

/* The output helper's error, its kind kept, its message without the
 * leading "PATH: " (the path goes to err->where). */
static int outfile_error(cp_error *err, const char *path, const cp_error *e) {
  size_t n = strlen(path);
  const char *m = strncmp(e->msg, path, n) || e->msg[n] != ':' ? e->msg : e->msg + n + 2;
  return cp_error_setc(err, e->code, path, "%s", m);
}

int cp_paper_write_file(const char *dir, const char *name, const char *text, cp_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!text) return cp_error_setc(err, CP_ERR_NOMEM, path, "out of memory");
  /* Written to a temporary file and renamed (planner/io/outfile.h); its
   * message "PATH: cannot ...: REASON" loses the path, now in where. */
  cp_error e;
  cp_outfile *o = cp_outfile_open(path, &e);
  if (!o) return outfile_error(err, path, &e);
  size_t len = strlen(text);
  fwrite(text, 1, len, cp_outfile_stream(o));
  if (len && text[len - 1] != '\n') fputc('\n', cp_outfile_stream(o));
  if (cp_outfile_commit(o, &e)) return outfile_error(err, path, &e);
  return 0;
}

static int write_problem_data(const cp_paper_problem *p, const char *out_dir, cp_error *err) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/data/p%02d", out_dir, p->index + 1);
  if (mkdir_p(dir, err)) return -1;
  for (int j = 0; j < CP_PAPER_NMU; j++) {
    const double mu = cp_paper_mu(j);
    char name[64];
    char *scene = cp_paper_scene_text(p, mu);
    snprintf(name, sizeof name, "mu%.1f.scene.json", mu);
    if (cp_paper_write_file(dir, name, scene, err)) {
      free(scene);
      return -1;
    }
    cp_paper_instance in;
    if (cp_paper_instance_build(scene, &in, err)) {
      free(scene);
      return -1;
    }
    free(scene);
    char lname[64];
    snprintf(lname, sizeof lname, "paper-p%02d-mu%.1f", p->index + 1, mu);
    in.lcp.name = strdup(lname);
    char *lcp = cp_lcp_format_json(&in.lcp);
    snprintf(name, sizeof name, "mu%.1f.lcp.json", mu);
    int rc = cp_paper_write_file(dir, name, lcp, err);
    free(lcp);
    cp_paper_instance_free(&in);
    if (rc) return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                  */
/* ------------------------------------------------------------------------ */

static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t k = write(fd, p, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    len -= (size_t)k;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len) {
    ssize_t k = read(fd, p, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    len -= (size_t)k;
  }
  return 0;
}

static void worker_loop(const cp_paper_study *st, int task_fd, int res_fd) {
  for (;;) {
    int idx;
    if (read_all(task_fd, &idx, sizeof idx) || idx < 0) break;
    cp_paper_row row;
    cp_error e;
    const cp_paper_problem *p = &st->problems[idx / CP_PAPER_NMU];
    if (cp_paper_run_dataset(p, idx % CP_PAPER_NMU, &st->opt, &row, &e)) {
      memset(&row, 0, sizeof row);
      row.problem = -1; /* a build failure, reported by the parent */
      copy_text(row.mip_reason, sizeof row.mip_reason, e.msg);
    }
    if (write_all(res_fd, &idx, sizeof idx) || write_all(res_fd, &row, sizeof row)) break;
  }
}

typedef struct worker {
  pid_t pid;
  int task_w, res_r;
  int busy;
} worker;

static int run_forked(cp_paper_study *st, cp_paper_progress_fn progress, void *pctx,
                      cp_error *err) {
  const int total = st->n_rows;
  int nw = st->opt.jobs < total ? st->opt.jobs : total;
  if (nw < 1) nw = 1;
  worker *W = calloc((size_t)nw, sizeof *W);
  struct pollfd *pf = calloc((size_t)nw, sizeof *pf);
  if (!W || !pf) {
    free(W);
    free(pf);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  /* A worker that dies must not kill the parent with SIGPIPE. */
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &old);
  fflush(NULL);
  int started = 0, rc = 0;
  for (int w = 0; w < nw; w++) {
    int tp[2], rp[2];
    if (pipe(tp)) { rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "pipe: %s", strerror(errno)); break; }
    if (pipe(rp)) {
      close(tp[0]);
      close(tp[1]);
      rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "pipe: %s", strerror(errno));
      break;
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(tp[0]); close(tp[1]); close(rp[0]); close(rp[1]);
      rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "fork: %s", strerror(errno));
      break;
    }
    if (pid == 0) {
      /* Child: keep only its own ends. */
      for (int k = 0; k < w; k++) {
        close(W[k].task_w);
        close(W[k].res_r);
      }
      close(tp[1]);
      close(rp[0]);
      worker_loop(st, tp[0], rp[1]);
      close(tp[0]);
      close(rp[1]);
      _exit(0);
    }
    close(tp[0]);
    close(rp[1]);
    W[w].pid = pid;
    W[w].task_w = tp[1];
    W[w].res_r = rp[0];
    started++;
  }
  int next = 0, done = 0;
  if (!rc) {
    for (int w = 0; w < started; w++) {
      if (next < total) {
        if (write_all(W[w].task_w, &next, sizeof next) == 0) W[w].busy = 1, next++;
      }
    }
    while (done < total && !rc) {
      int np = 0;
      for (int w = 0; w < started; w++) {
        pf[w].fd = W[w].busy ? W[w].res_r : -1;
        pf[w].events = POLLIN;
        pf[w].revents = 0;
        np += W[w].busy;
      }
      if (!np) {
        rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "all workers stopped with %d data sets left", total - done);
        break;
      }
      if (poll(pf, (nfds_t)started, -1) < 0) {
        if (errno == EINTR) continue;
        rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "poll: %s", strerror(errno));
        break;
      }
      for (int w = 0; w < started && !rc; w++) {
        if (!W[w].busy || !(pf[w].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        int idx;
        cp_paper_row row;
        if (read_all(W[w].res_r, &idx, sizeof idx) || read_all(W[w].res_r, &row, sizeof row) ||
            idx < 0 || idx >= total) {
          rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "worker %d (pid %d) died", w, (int)W[w].pid);
          break;
        }
        if (row.problem < 0) {
          rc = cp_error_setc(err, CP_ERR_NUMERICAL, "", "data set p%02d mu%.1f: %s", idx / CP_PAPER_NMU + 1,
                            cp_paper_mu(idx % CP_PAPER_NMU), row.mip_reason);
          break;
        }
        st->rows[idx] = row;
        done++;
        if (progress) progress(pctx, done, total);
        W[w].busy = 0;
        if (next < total && write_all(W[w].task_w, &next, sizeof next) == 0) {
          W[w].busy = 1;
          next++;
        }
      }
    }
  }
  for (int w = 0; w < started; w++) {
    int stop = -1;
    write_all(W[w].task_w, &stop, sizeof stop);
    close(W[w].task_w);
    close(W[w].res_r);
  }
  for (int w = 0; w < started; w++) {
    if (rc) kill(W[w].pid, SIGTERM);
    waitpid(W[w].pid, NULL, 0);
  }
  sigaction(SIGPIPE, &old, NULL);
  free(W);
  free(pf);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Data sets as items (cp_paper_options.spread, e.g. MPI ranks)             */
/* ------------------------------------------------------------------------ */

/* A request: this header, then the problem's scene text (its NUL not
 * sent). Plain data of this process's layout; pointers travel as NULL. */
typedef struct item_request {
  uint32_t magic;           /* ITEM_VERSION: another layout fails to decode */
  int32_t dataset;          /* the row's index (problem-major) */
  cp_paper_options opt;
  cp_paper_problem problem;
} item_request;

#define ITEM_VERSION (0x50500000u + (uint32_t)sizeof(item_request))

typedef struct items_ctx {
  cp_paper_study *st;
  cp_paper_progress_fn progress;
  void *pctx;
  int done;
} items_ctx;

static int item_request_of(void *ctx, int i, void **req, size_t *len, cp_error *err) {
  const cp_paper_study *st = ((items_ctx *)ctx)->st;
  const cp_paper_problem *p = &st->problems[i / CP_PAPER_NMU];
  size_t text = strlen(p->scene_json);
  item_request *r = calloc(1, sizeof *r + text);
  if (!r) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  r->magic = ITEM_VERSION;
  r->dataset = i;
  r->opt = st->opt;
  r->opt.spread = NULL;
  r->problem = *p;
  r->problem.spec.note = NULL;
  r->problem.scene_json = NULL;
  memcpy(r + 1, p->scene_json, text);
  *req = r;
  *len = sizeof *r + text;
  return 0;
}

static int item_work(void *ctx, int i, const void *req, size_t len, void **ans, size_t *ans_len,
                     cp_error *err) {
  (void)ctx;
  item_request r;
  if (len < sizeof r)
    return cp_error_setc(err, CP_ERR_INPUT, "paper", "data set %d: a request of %zu bytes", i, len);
  memcpy(&r, req, sizeof r);
  if (r.magic != ITEM_VERSION || r.dataset != i)
    return cp_error_setc(err, CP_ERR_INPUT, "paper",
                         "data set %d: a request of another version or layout", i);
  char *scene = malloc(len - sizeof r + 1);
  cp_paper_row *row = malloc(sizeof *row);
  if (!scene || !row) {
    free(scene);
    free(row);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  memcpy(scene, (const char *)req + sizeof r, len - sizeof r);
  scene[len - sizeof r] = '\0';
  r.problem.scene_json = scene;
  cp_error e;
  if (cp_paper_run_dataset(&r.problem, i % CP_PAPER_NMU, &r.opt, row, &e)) {
    memset(row, 0, sizeof *row);
    row->problem = -1; /* a build failure, reported by rank 0 */
    copy_text(row->mip_reason, sizeof row->mip_reason, e.msg);
  }
  free(scene);
  *ans = row;
  *ans_len = sizeof *row;
  return 0;
}

static int item_done(void *ctx, int i, const void *ans, size_t len, cp_error *err) {
  items_ctx *c = ctx;
  cp_paper_row row;
  if (len != sizeof row || i < 0 || i >= c->st->n_rows)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "", "data set %d: an answer of %zu bytes, not %zu",
                         i, len, sizeof row);
  memcpy(&row, ans, sizeof row);
  if (row.problem < 0)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "", "data set p%02d mu%.1f: %s",
                         i / CP_PAPER_NMU + 1, cp_paper_mu(i % CP_PAPER_NMU), row.mip_reason);
  c->st->rows[i] = row;
  if (c->progress) c->progress(c->pctx, ++c->done, c->st->n_rows);
  return 0;
}

void cp_paper_worker_items(cp_plan_mpi_items *items) {
  memset(items, 0, sizeof *items);
  items->work = item_work;
}

static int run_spread(cp_paper_study *st, cp_paper_progress_fn progress, void *pctx,
                      cp_error *err) {
  items_ctx c = {st, progress, pctx, 0};
  cp_plan_mpi_items it = {st->n_rows, &c, item_request_of, item_work, item_done,
                          st->opt.cancel};
  if (st->opt.spread(&it, err)) return -1;
  if (c.done != st->n_rows)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "", "%d of %d data sets came back", c.done,
                         st->n_rows);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The study                                                                */
/* ------------------------------------------------------------------------ */

void cp_paper_study_free(cp_paper_study *st) {
  if (!st) return;
  for (int k = 0; k < st->n_problems; k++) cp_paper_problem_free(&st->problems[k]);
  free(st->problems);
  free(st->rows);
  memset(st, 0, sizeof *st);
}

static double load_average(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double l = -1.0;
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1.0;
    fclose(f);
  }
  return l;
}

int cp_paper_study_run(const cp_paper_options *opt, const char *out_dir, const char *command,
                       cp_paper_progress_fn progress, void *pctx, cp_paper_study *st,
                       cp_error *err) {
  memset(st, 0, sizeof *st);
  st->opt = opt ? *opt : cp_paper_defaults();
  if (st->opt.problems < 1 || st->opt.problems > CP_PAPER_PROBLEMS)
    st->opt.problems = CP_PAPER_PROBLEMS;
  if (st->opt.jobs < 1) st->opt.jobs = 1;
  snprintf(st->command, sizeof st->command, "%s", command ? command : "");
  st->load1 = load_average();
  if (mkdir_p(out_dir, err)) return -1;
  double t = now_s();
  st->problems = calloc((size_t)st->opt.problems, sizeof *st->problems);
  if (!st->problems) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  for (int k = 0; k < st->opt.problems; k++) {
    if (cp_paper_generate(k, st->opt.seed, &st->problems[k], err)) {
      cp_paper_study_free(st);
      return -1;
    }
    st->n_problems = k + 1;
    if (st->opt.write_data && write_problem_data(&st->problems[k], out_dir, err)) {
      cp_paper_study_free(st);
      return -1;
    }
  }
  st->gen_s = now_s() - t;
  st->n_rows = st->n_problems * CP_PAPER_NMU;
  st->rows = calloc((size_t)st->n_rows, sizeof *st->rows);
  if (!st->rows) {
    cp_paper_study_free(st);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  t = now_s();
  int rc = 0;
  if (st->opt.spread) {
    rc = run_spread(st, progress, pctx, err);
  } else if (st->opt.jobs <= 1) {
    for (int i = 0; i < st->n_rows && !rc; i++) {
      rc = cp_paper_run_dataset(&st->problems[i / CP_PAPER_NMU], i % CP_PAPER_NMU, &st->opt,
                                &st->rows[i], err);
      if (!rc && progress) progress(pctx, i + 1, st->n_rows);
    }
  } else {
    rc = run_forked(st, progress, pctx, err);
  }
  st->run_s = now_s() - t;
  if (rc || cp_paper_write_reports(st, out_dir, err)) {
    cp_paper_study_free(st);
    return -1;
  }
  return 0;
}
