/* bench_mujoco: complan's simulator against MuJoCo (libmujoco-dev) on the
 * same scenes, interleaved in one run (issue 26).
 *
 * Each scene is a complan scene (JSON text or a bundled file); MuJoCo gets
 * the same scene written as MJCF by experiments/mjcf.c (masses, inertias,
 * shapes, poses, chains, joint efforts, friction). dt = 5 ms in both.
 * Engines: complan's acceleration and velocity steppers (default options,
 * warm starts, the per-step check on), MuJoCo with its defaults (pyramidal
 * cone, impratio 1, no noslip) and MuJoCo tuned for accuracy (elliptic
 * cone, impratio 10, noslip 10 iterations). Every round runs the four in
 * turn; each keeps its best thread CPU time over the rounds (the machine
 * is shared; taking turns exposes all of them to the same drift). The runs
 * are deterministic, so the fidelity figures are those of any round.
 *
 * Fidelity figures per scene: the tracked body's displacement against the
 * closed form (0 for a scene at rest: its drift; v0^2 / (2 mu g) for the
 * sliding box; g (sin a - mu cos a) t^2 / 2 down a 30 degree incline;
 * (5/7) g sin a t^2 / 2 for a rolling sphere; 0 for the cube the Allegro
 * hand holds), the deepest overlap seen (complan: after each step; MuJoCo:
 * its contacts' distances), and the translational kinetic energy at the
 * end (a settled scene's is ~0).
 *
 * Usage: bench_mujoco [--phases[=K]] [ROUNDS [SECONDS [MAXBOXES [SCENE]]]]
 * (defaults 5, 10, 100, every scene; SCENE: only the scenes whose name
 * contains it):
 * scenes at rest run SECONDS of simulated time, moving ones min(1, SECONDS)
 * (the bin min(2, SECONDS), the held cube min(0.25, SECONDS)); stacks up
 * to MAXBOXES boxes. Run from the source root (the grasp and the hands
 * are bundled scene files; or set CP_SOURCE_ROOT). Prints Markdown;
 * progress on stderr when a terminal.
 * BENCH_VELOCITY_SLIDING=0 in the environment runs complan with
 * cp_world_options.velocity_sliding off (it is on by default).
 * complan's worlds are made with the library's default reserve
 * (cp_world_options.reserve = CP_WORLD_RESERVE_AUTO: sized at creation for
 * the scene's contacts and joint limits within a memory cap, outside the
 * timed loop, as mj_makeData allocates MuJoCo's arena before it);
 * BENCH_RESERVE=N sizes them for N contacts, and BENCH_RESERVE=0 leaves the
 * reserve off (arrays grow, and their pages are first touched, inside the
 * timed steps). The third table counts the page faults taken in the timed
 * loops. The engines take turns in the order acceleration, MuJoCo default,
 * velocity, MuJoCo tuned, each round starting one turn further on (round r
 * at turn r mod 4), after one untimed turn of each: a round's first turn
 * has read slow on this machine whichever engine took it, so every engine
 * takes every place. BENCH_SWAP=1 exchanges the two steppers' places.
 *
 * --phases adds a table of where each engine's step goes, per phase, in
 * the round whose counted steps took the least and the one whose took the
 * most CPU time: complan's worlds are made with
 * cp_world_options.profile (its phases on the monotonic clock, per step),
 * MuJoCo's timers are switched on (mjcb_time, the same clock), and each
 * step's thread CPU time is read around it. A step enters the table only
 * when its monotonic total matches its thread CPU time (within 2 us + 1 %):
 * the thread ran all through it, so its phases are CPU time too; a step
 * during which the thread waited for a core is left out (counted). The
 * clock reads cost a little (two dozen a step), so the time table of a
 * --phases run is not comparable with one of a run without.
 *
 * --phases=K splits each run's steps into two windows, steps 0 to K-1 (the
 * bin's boxes landing) and K to the end (settled), and gives each window
 * its own phase rows (each window's fastest and slowest round are picked
 * on their own), plus a table of complan's work per window over every
 * step of it: contacts, impacts, LCP solves, pivots, steps whose friction
 * LCP was solved from the warm basis, fallbacks, steps split into islands
 * and the islands a split step had (these counts are deterministic: the
 * same in every round). */
#define _GNU_SOURCE /* getrusage's RUSAGE_THREAD */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "experiments/bench_stack.h"
#include "experiments/bench_util.h"
#include "experiments/mjcf.h"
#include "models/scene.h"
#include "planner/sim/world.h"

void openblas_set_num_threads(int n);

#define DT 5e-3
#define G 9.81
#define DEG30 0.52359877559829876 /* pi / 6 */

typedef struct scene_def {
  char name[64];
  char *text;        /* scene JSON (owned), or NULL: path */
  char path[512];    /* a bundled scene file */
  double seconds;    /* simulated time */
  int track;         /* free body whose displacement is checked */
  double expect[3];  /* its closed-form displacement over the run */
  int boxes;         /* > 0: a resting stack of that many boxes */
  int open;          /* 1: no closed form (the error column is the
                        tracked body's displacement) */
} scene_def;

/* Phases of a step (--phases): complan's cp_step_profile fields, and what
 * MuJoCo's timers split its step into (the phase table's legend in main). */
enum { PH_CONTACTS, PH_ROWS, PH_BUILD, PH_SOLVE, PH_CHECK, PH_INTEGRATE, PH_OTHER, NPH };

typedef struct phases {
  double us[NPH]; /* per step, over the steps counted (us) */
  double cpu;     /* their thread CPU time per step (us) */
  double time;    /* the round's time per step over every step (us) */
  int used, steps; /* steps counted, steps run */
  long huge_kb;    /* the process's memory on transparent huge pages at
                      the end of the timed loop (kB; -1: unknown) */
} phases;

/* complan's work over every step of a window (--phases): sums of
 * cp_step_info's counts */
typedef struct work {
  long steps, contacts, impacts, solves, pivots, warm, fallback, split, islands;
} work;

/* --phases=K: windows [0, K) and [K, end); without K one window, all */
#define NWIN 2

typedef struct res {
  double us, fid, pen, ke, pivots;
  phases ph[NWIN], ph_max[NWIN]; /* --phases: per window, the rounds whose
                                    counted steps took the least and the
                                    most CPU time a step */
  work wk[NWIN];                 /* --phases: complan's work per window */
  int failed_at; /* -1, or the step that failed (complan) */
  int warnings;  /* MuJoCo's warnings (unstable simulation, ...) */
  long flt, flt_max; /* page faults of the thread in the timed loop (this
                        round; over the rounds: fewest, most) */
} res;

static int g_phases; /* --phases */
static long g_split; /* --phases=K: K (> 0), the first step of the second
                        window; 0: one window */

/* The window of step k. */
static int window_of(long k) { return g_split > 0 && k >= g_split; }

/* A round's counted CPU time a step, for picking rounds (none counted:
 * never the fastest). */
static double phases_cpu(const phases *p) { return p->used ? p->cpu : INFINITY; }

/* A step counts in the phase table when the thread ran all through it:
 * its monotonic total is its thread CPU time (cpu, s) within 2 us + 1 %. */
static int step_unbroken(double total, double cpu) {
  return fabs(total - cpu) <= 2e-6 + 0.01 * cpu;
}

/* Sums per step (s) into per-step means (us). */
static void phases_finish(phases *p, const double sum[NPH], double cpu, int steps,
                          double time) {
  p->steps = steps;
  p->time = time;
  const double k = p->used ? 1e6 / p->used : 0;
  for (int i = 0; i < NPH; ++i) p->us[i] = sum[i] * k;
  p->cpu = cpu * k;
}

/* Window wi of a run of `steps` steps: steps [*first, *end) (empty when
 * *end <= *first: a K past the run's end). */
static void window_bounds(int wi, long steps, long *first, long *end) {
  const long k = g_split < steps ? g_split : steps;
  *first = wi ? k : 0;
  *end = (g_split > 0 && !wi) ? k : steps;
}

/* The process's anonymous memory on transparent huge pages (kB, from
 * /proc/self/smaps_rollup; -1 when it cannot be read). complan's large
 * matrices are mappings advised for huge pages (models/bigbuf.c); whether
 * the kernel backs them so depends on its free memory at the time. */
static long anon_huge_kb(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

/* phases_finish for each window of a run of `steps` steps (time: the
 * run's time a step over all its steps); the huge-page figure is the run's. */
static void phases_windows(phases p[NWIN], const double sum[NWIN][NPH], const double cpu[NWIN],
                           int steps, double time) {
  const long kb = anon_huge_kb();
  for (int wi = 0; wi < NWIN; ++wi) {
    long first, end;
    window_bounds(wi, steps, &first, &end);
    phases_finish(&p[wi], sum[wi], cpu[wi], end > first ? (int)(end - first) : 0, time);
    p[wi].huge_kb = kb;
  }
}

/* Page faults (minor and major) of the calling thread so far. */
static long thread_faults(void) {
  struct rusage u;
  if (getrusage(RUSAGE_THREAD, &u)) return 0;
  return u.ru_minflt + u.ru_majflt;
}

/* ---- scenes ---------------------------------------------------------- */

/* open_memstream's text (exits on out of memory). */
static char *text_end(FILE *f, char **buf) {
  if (fclose(f) || !*buf) {
    fprintf(stderr, "bench_mujoco: out of memory\n");
    exit(1);
  }
  return *buf;
}

/* A body on the 30 degree incline (plane through 0, normal (sin, 0, cos),
 * downhill +x): its centre h above the plane, axes turned with it. */
static char *incline_text(const char *shape, double h, double mu, double *down) {
  char *buf = NULL;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  const double s = sin(DEG30), c = cos(DEG30);
  fprintf(f,
          "{\"friction\": {\"default\": %.17g}, \"bodies\": [{\"name\": \"ramp\", \"fixed\": "
          "true, \"shape\": {\"type\": \"plane\", \"normal\": [%.17g, 0, %.17g], \"offset\": 0}},"
          " {\"name\": \"body\", \"mass\": 1, \"shape\": %s, \"position\": [%.17g, 0, %.17g], "
          "\"orientation\": [%.17g, 0, %.17g, 0]}]}",
          mu, s, c, shape, h * s, h * c, cos(DEG30 / 2), sin(DEG30 / 2));
  down[0] = c, down[1] = 0, down[2] = -s;
  return text_end(f, &buf);
}

/* The bin: a floor, four walls (fixed boxes) round a 0.66 m square, 50 boxes
 * of 0.1 x 0.1 x 0.05 m in two loose layers, each turned a little about z,
 * released 5 mm above the floor and 25 mm above the first layer. */
static char *bin_text(void) {
  char *buf = NULL;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  fprintf(f, "{\"friction\": {\"default\": 0.5}, \"bodies\": [{\"name\": \"floor\", \"fixed\": "
             "true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}");
  static const double wall[4][3] = {{0.36, 0, 0}, {-0.36, 0, 0}, {0, 0.36, 0}, {0, -0.36, 0}};
  for (int i = 0; i < 4; ++i)
    fprintf(f, ", {\"name\": \"wall%d\", \"fixed\": true, \"shape\": {\"type\": \"box\", "
               "\"size\": [%g, %g, 0.3]}, \"position\": [%g, %g, 0.15]}",
            i, i < 2 ? 0.06 : 0.78, i < 2 ? 0.78 : 0.06, wall[i][0], wall[i][1]);
  int k = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < 5; ++c, ++k) {
        double a = 0.05 * ((k * 7) % 5 - 2); /* turn about z, rad */
        fprintf(f, ", {\"name\": \"p%d\", \"mass\": 0.2, \"shape\": {\"type\": \"box\", "
                   "\"size\": [0.1, 0.1, 0.05]}, \"position\": [%.17g, %.17g, %.17g], "
                   "\"orientation\": [%.17g, 0, 0, %.17g]}",
                k, -0.24 + 0.12 * c + 0.01 * layer, -0.24 + 0.12 * r - 0.01 * layer,
                0.03 + 0.08 * layer, cos(a / 2), sin(a / 2));
      }
  fprintf(f, "]}");
  return text_end(f, &buf);
}

/* MuJoCo prints its warnings on stdout (into the Markdown): they are
 * counted per run from mjData's warning statistics and reported in the
 * fidelity table instead. */
static void quiet_warning(const char *msg) { (void)msg; }

static const char *source_root(void) {
  const char *r = getenv("CP_SOURCE_ROOT");
  return r && *r ? r : ".";
}

/* The benchmark's scenes; returns their number. */
static int make_scenes(scene_def *d, double seconds, int max_boxes) {
  int n = 0;
  const double tmove = fmin(1.0, seconds);
  static const int stacks[] = {1, 3, 5, 10, 20, 40, 100};
  for (int i = 0; i < 7; ++i) {
    if (stacks[i] > max_boxes) break;
    scene_def *s = &d[n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "stack of %d", stacks[i]);
    s->text = bench_stack_text(stacks[i], 0.5, 0);
    s->seconds = seconds;
    s->track = stacks[i] - 1;
    s->boxes = stacks[i];
  }
  scene_def *s = &d[n++]; /* sliding box: stops after v0^2 / (2 mu g) */
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "sliding box");
  s->text = bench_stack_text(1, 0.3, 1.0);
  s->seconds = tmove;
  s->expect[0] = tmove >= 1.0 / (0.3 * G) ? 1.0 / (2 * 0.3 * G) : tmove - 0.5 * 0.3 * G * tmove * tmove;
  static const char box[] = "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}";
  static const char ball[] = "{\"type\": \"sphere\", \"radius\": 0.05}";
  const struct { const char *name, *shape; double h, mu, acc; } inc[3] = {
      {"box resting on 30 deg incline", box, 0.05, 0.7, 0},
      {"box sliding down 30 deg incline", box, 0.05, 0.3, G * (sin(DEG30) - 0.3 * cos(DEG30))},
      {"sphere rolling down 30 deg incline", ball, 0.05, 0.5, 5.0 / 7 * G * sin(DEG30)}};
  for (int i = 0; i < 3; ++i) {
    s = &d[n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", inc[i].name);
    double down[3];
    s->text = incline_text(inc[i].shape, inc[i].h, inc[i].mu, down);
    s->seconds = inc[i].acc > 0 ? tmove : seconds;
    for (int k = 0; k < 3; ++k) s->expect[k] = 0.5 * inc[i].acc * s->seconds * s->seconds * down[k];
  }
  s = &d[n++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "squeeze grasp (2 fingers)");
  snprintf(s->path, sizeof s->path, "%s/models/scenes/grasp_hold.json", source_root());
  /* at dt = 5 ms this grasp does not stay at rest in complan: the box
   * creeps up and meets a proximal link at t = 0.91 s (results/mujoco.md) */
  s->seconds = fmin(0.8, seconds);
  s = &d[n++];
  memset(s, 0, sizeof *s);
  /* the hand does not touch the cube below it: its contacts are the cube's
   * on the table (its fidelity figures are the 1-box stack's) */
  snprintf(s->name, sizeof s->name, "Allegro hand (16 joints) above a cube");
  snprintf(s->path, sizeof s->path, "%s/tests/data/robots/allegro_cube.json", source_root());
  s->seconds = tmove;
  s->open = 1;
  s = &d[n++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "Allegro hand (16 joints) holding a cube");
  snprintf(s->path, sizeof s->path, "%s/tests/data/robots/allegro_hold.json", source_root());
  /* a pinch under constant joint efforts, balanced at the start (closed
   * form: the cube stays put) but an unstable equilibrium: complan keeps
   * the cube within 1e-6 m for 0.2 s and loses it after about 0.4 s
   * (tests/data/robots/allegro_hold.json; results/mujoco.md) */
  s->seconds = fmin(0.25, seconds);
  s = &d[n++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "bin of 50 boxes settling");
  s->open = 1;
  s->text = bin_text();
  s->seconds = fmin(2.0, seconds);
  s->track = 49;
  return n;
}

static int load_scene(const scene_def *d, cp_scene *sc) {
  cp_error err;
  int rc = d->text ? cp_scene_parse(d->text, strlen(d->text), NULL, NULL, sc, &err)
                   : cp_scene_load(d->path, NULL, sc, &err);
  if (rc) fprintf(stderr, "bench_mujoco: %s: %s: %s\n", d->name, err.where, err.msg);
  return rc;
}

/* Scene index of free body k. */
static int free_body(const cp_scene *sc, int k) {
  for (int i = 0; i < sc->n_bodies; ++i)
    if (!sc->bodies[i].fixed && k-- == 0) return i;
  return -1;
}

static double dist3(const double *a, const double *b, const double *e) {
  return sqrt(pow(a[0] - b[0] - e[0], 2) + pow(a[1] - b[1] - e[1], 2) + pow(a[2] - b[2] - e[2], 2));
}

/* ---- complan --------------------------------------------------------- */

static res run_complan(const cp_scene *sc, const scene_def *d, cp_stepper st) {
  res r = {.failed_at = -1};
  cp_world_options o = cp_world_defaults();
  o.dt = DT;
  o.stepper = st;
  /* BENCH_VELOCITY_SLIDING=0: cp_world_options.velocity_sliding off (on by
   * default; docs/simulate.md) */
  const char *vs = getenv("BENCH_VELOCITY_SLIDING");
  if (vs && vs[0] == '0') o.velocity_sliding = 0;
  /* The default: the world sized at creation for the scene's contacts and
   * limits (within the library's cap), as mj_makeData makes MuJoCo's arena
   * before its loop (BENCH_RESERVE=N: N contacts; 0: none, the arrays grow
   * in the timed steps) */
  const char *rs = getenv("BENCH_RESERVE");
  if (rs && rs[0]) o.reserve = atoi(rs);
  o.profile = g_phases;
  cp_world *w = NULL;
  cp_error err;
  if (cp_world_create(sc, &o, &w, &err) != CP_WORLD_OK) {
    fprintf(stderr, "bench_mujoco: %s: world: %s: %s\n", d->name, err.where, err.msg);
    exit(1);
  }
  const int steps = (int)lround(d->seconds / DT), ib = free_body(sc, d->track);
  double x0[3];
  memcpy(x0, cp_world_scene(w)->bodies[ib].x, sizeof x0);
  long piv = 0;
  int k = 0;
  double sum[NWIN][NPH] = {{0}}, cpu[NWIN] = {0}, c0 = 0;
  const long f0 = thread_faults();
  double t0 = bench_now();
  if (g_phases) c0 = t0;
  for (; k < steps; ++k) {
    cp_step_info info;
    if (cp_world_step(w, &info)) {
      r.failed_at = k;
      fprintf(stderr, "bench_mujoco: %s: %s stepper: step %d: %s\n", d->name,
              cp_stepper_name(st), k, cp_world_message(w));
      break;
    }
    if (g_phases) { /* the step's phases, if the thread ran all through it */
      const double c1 = bench_now();
      const cp_step_profile p = cp_world_profile(w);
      const int wi = window_of(k);
      if (step_unbroken(p.total, c1 - c0)) {
        const double ph[NPH - 1] = {p.collide, p.constraints, p.assembly, p.solve,
                                    p.check, p.integrate};
        double rest = p.total;
        for (int i = 0; i < NPH - 1; ++i) sum[wi][i] += ph[i], rest -= ph[i];
        sum[wi][PH_OTHER] += rest;
        cpu[wi] += c1 - c0;
        r.ph[wi].used++;
      }
      work *q = &r.wk[wi];
      q->steps++, q->contacts += info.contacts, q->impacts += info.impacts;
      q->solves += info.lcp_solves, q->pivots += info.pivots, q->warm += info.warm_started;
      q->fallback += info.fallback, q->split += info.islands > 0, q->islands += info.islands;
      c0 = c1;
    }
    piv += info.pivots;
    if (info.max_penetration > r.pen) r.pen = info.max_penetration;
  }
  r.us = 1e6 * (bench_now() - t0) / (k ? k : 1);
  r.flt = thread_faults() - f0;
  if (g_phases) phases_windows(r.ph, sum, cpu, k, r.us);
  r.pivots = (double)piv / (k ? k : 1);
  const cp_scene *ws = cp_world_scene(w);
  r.fid = dist3(ws->bodies[ib].x, x0, d->expect);
  for (int i = 0; i < ws->n_bodies; ++i) {
    const cp_body *b = &ws->bodies[i];
    if (!b->fixed) r.ke += 0.5 * b->mass * (b->v[0] * b->v[0] + b->v[1] * b->v[1] + b->v[2] * b->v[2]);
  }
  cp_world_destroy(w);
  return r;
}

/* ---- MuJoCo ---------------------------------------------------------- */

/* The scene as a MuJoCo model (through a temporary MJCF file). */
static mjModel *mujoco_model(const cp_scene *sc, const char *name) {
  char *xml = bench_mjcf(sc, DT);
  char path[] = "/tmp/bench_mujoco_XXXXXX";
  int fd = xml ? mkstemp(path) : -1;
  if (fd < 0 || write(fd, xml, strlen(xml)) != (ssize_t)strlen(xml) || close(fd)) {
    fprintf(stderr, "bench_mujoco: %s: cannot write the MJCF file\n", name);
    exit(1);
  }
  char err[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  unlink(path);
  if (!m) {
    fprintf(stderr, "bench_mujoco: %s: MuJoCo: %s\n%s", name, err, xml);
    exit(1);
  }
  free(xml);
  return m;
}

/* The scene's state into d: joint positions, velocities and efforts, free
 * bodies' velocities (MuJoCo's free joint takes the angular velocity in
 * the body frame). */
static void mujoco_state(const mjModel *m, mjData *d, const cp_scene *sc) {
  char name[64];
  for (int mi = 0; mi < sc->n_manips; ++mi)
    for (int j = 0; j < sc->manips[mi].n; ++j) {
      const cp_joint *jt = &sc->manips[mi].joints[j];
      snprintf(name, sizeof name, "m%dj%d", mi, j);
      int id = mj_name2id(m, mjOBJ_JOINT, name);
      d->qpos[m->jnt_qposadr[id]] = jt->position;
      d->qvel[m->jnt_dofadr[id]] = jt->velocity;
      d->qfrc_applied[m->jnt_dofadr[id]] = jt->effort;
    }
  for (int k = 0;; ++k) {
    int i = free_body(sc, k);
    if (i < 0) break;
    const cp_body *b = &sc->bodies[i];
    snprintf(name, sizeof name, "b%d", k);
    int dof = m->jnt_dofadr[m->body_jntadr[mj_name2id(m, mjOBJ_BODY, name)]];
    double R[9];
    mju_quat2Mat(R, b->q);
    for (int r = 0; r < 3; ++r) {
      d->qvel[dof + r] = b->v[r];
      d->qvel[dof + 3 + r] = R[r] * b->w[0] + R[3 + r] * b->w[1] + R[6 + r] * b->w[2];
    }
  }
}

static const double *mujoco_pos(const mjModel *m, const mjData *d, int k) {
  char name[32];
  snprintf(name, sizeof name, "b%d", k);
  return d->qpos + m->jnt_qposadr[m->body_jntadr[mj_name2id(m, mjOBJ_BODY, name)]];
}

static res run_mujoco(const mjModel *m, const cp_scene *sc, const scene_def *def) {
  res r = {.failed_at = -1};
  mjData *d = mj_makeData(m);
  mujoco_state(m, d, sc);
  const int steps = (int)lround(def->seconds / DT);
  double x0[3];
  memcpy(x0, mujoco_pos(m, d, def->track), sizeof x0);
  double sum[NWIN][NPH] = {{0}}, cpu[NWIN] = {0}, c0 = 0, tm[mjNTIMER] = {0};
  const long f0 = thread_faults();
  double t0 = bench_now();
  if (g_phases) c0 = t0;
  for (int k = 0; k < steps; ++k) {
    mj_step(m, d);
    if (g_phases) { /* the step's timers (mjcb_time: monotonic), as complan's */
      const double c1 = bench_now();
      double t[mjNTIMER];
      for (int i = 0; i < mjNTIMER; ++i)
        t[i] = d->timer[i].duration - tm[i], tm[i] = d->timer[i].duration;
      const int wi = window_of(k);
      if (step_unbroken(t[mjTIMER_STEP], c1 - c0)) {
        const double ph[NPH] = {
            [PH_CONTACTS] = t[mjTIMER_POS_COLLISION],
            [PH_ROWS] = t[mjTIMER_POS_MAKE] + t[mjTIMER_POS_PROJECT],
            [PH_BUILD] = t[mjTIMER_POS_KINEMATICS] + t[mjTIMER_POS_INERTIA],
            [PH_SOLVE] = t[mjTIMER_CONSTRAINT],
            [PH_INTEGRATE] = t[mjTIMER_STEP] - t[mjTIMER_FORWARD]};
        double rest = t[mjTIMER_STEP];
        for (int i = 0; i < NPH - 1; ++i) sum[wi][i] += ph[i], rest -= ph[i];
        sum[wi][PH_OTHER] += rest;
        cpu[wi] += c1 - c0;
        r.ph[wi].used++;
      }
      c0 = c1;
    }
    for (int c = 0; c < d->ncon; ++c)
      if (-d->contact[c].dist > r.pen) r.pen = -d->contact[c].dist;
  }
  r.us = 1e6 * (bench_now() - t0) / steps;
  r.flt = thread_faults() - f0;
  if (g_phases) phases_windows(r.ph, sum, cpu, steps, r.us);
  for (int i = 0; i < mjNWARNING; ++i) r.warnings += d->warning[i].number;
  r.fid = dist3(mujoco_pos(m, d, def->track), x0, def->expect);
  for (int b = 1; b < m->nbody; ++b)
    if (m->body_jntnum[b] == 1 && m->jnt_type[m->body_jntadr[b]] == mjJNT_FREE) {
      const double *v = d->qvel + m->jnt_dofadr[m->body_jntadr[b]];
      r.ke += 0.5 * m->body_mass[b] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
  mj_deleteData(d);
  return r;
}

/* ---- the run ----------------------------------------------------------- */

enum { ACC, VEL, MJD, MJT, NENG };
static const char *engine_name[NENG] = {"complan acceleration", "complan velocity",
                                        "MuJoCo default", "MuJoCo tuned"};

/* One turn of engine `eng` on the scene. */
static res run_engine(int eng, const cp_scene *sc, const scene_def *def, const mjModel *md,
                      const mjModel *mt) {
  switch (eng) {
  case ACC: return run_complan(sc, def, CP_STEPPER_ACCELERATION);
  case VEL: return run_complan(sc, def, CP_STEPPER_VELOCITY);
  case MJD: return run_mujoco(md, sc, def);
  default: return run_mujoco(mt, sc, def);
  }
}

static void run_scene(const scene_def *def, int rounds, res out[NENG], int tty) {
  cp_scene sc;
  if (load_scene(def, &sc)) exit(1);
  mjModel *md = mujoco_model(&sc, def->name), *mt = mj_copyModel(NULL, md);
  mt->opt.cone = mjCONE_ELLIPTIC;
  mt->opt.impratio = 10;
  mt->opt.noslip_iterations = 10;
  const char *sw = getenv("BENCH_SWAP");
  const int swap = sw && sw[0] == '1';
  /* The turns: acceleration, MuJoCo default, velocity, MuJoCo tuned
   * (BENCH_SWAP=1: the two steppers' places exchanged). Round r starts at
   * turn r mod 4 and goes round, so every engine takes every place in turn
   * (a round's first turn has read slow on this machine, whichever engine
   * took it: session 28), and one untimed turn of each engine before the
   * first round warms the process (its allocator, its code's pages). */
  const int order[NENG] = {swap ? VEL : ACC, MJD, swap ? ACC : VEL, MJT};
  for (int k = 0; k < NENG; ++k) (void)run_engine(order[k], &sc, def, md, mt);
  for (int r = 0; r < rounds; ++r) {
    if (tty) fprintf(stderr, "\r%-40s round %d/%d   ", def->name, r + 1, rounds);
    res e[NENG];
    for (int k = 0; k < NENG; ++k) {
      const int eng = order[(k + r) % NENG];
      e[eng] = run_engine(eng, &sc, def, md, mt);
    }
    for (int i = 0; i < NENG; ++i) {
      if (r == 0) {
        out[i] = e[i], out[i].flt_max = e[i].flt;
        memcpy(out[i].ph_max, e[i].ph, sizeof e[i].ph);
      }
      /* --phases: by the counted steps' CPU time (a round's time over every
       * step also has the steps the thread was switched out of), each
       * window on its own */
      for (int wi = 0; wi < NWIN; ++wi) {
        if (phases_cpu(&e[i].ph[wi]) < phases_cpu(&out[i].ph[wi])) out[i].ph[wi] = e[i].ph[wi];
        if (phases_cpu(&e[i].ph[wi]) > phases_cpu(&out[i].ph_max[wi]))
          out[i].ph_max[wi] = e[i].ph[wi];
      }
      out[i].us = e[i].us < out[i].us ? e[i].us : out[i].us;
      out[i].flt = e[i].flt < out[i].flt ? e[i].flt : out[i].flt;
      out[i].flt_max = e[i].flt > out[i].flt_max ? e[i].flt : out[i].flt_max;
    }
  }
  mj_deleteModel(md);
  mj_deleteModel(mt);
  cp_scene_free(&sc);
}

/* MuJoCo's timers read the monotonic clock (--phases): seconds, as
 * complan's profile. */
static mjtNum mono_seconds(void) { return cp_clock_now(); }

/* The first and last step of window wi of a run of `steps` steps, as text
 * ("0-399"; "-" when the window is empty). */
static void window_text(char *buf, size_t n, int wi, long steps) {
  long first, end;
  window_bounds(wi, steps, &first, &end);
  if (end > first) snprintf(buf, n, "%ld-%ld", first, end - 1);
  else snprintf(buf, n, "-");
}

static void print_phases(const char *scene, const char *engine, const char *round,
                         const char *win, const phases *p, int mujoco) {
  printf("| %s | %s | %s | %s | %.1f | %d / %d | %.1f |", scene, engine, round, win, p->time,
         p->used, p->steps, p->cpu);
  for (int i = 0; i < NPH; ++i) {
    if (mujoco && i == PH_CHECK) printf(" - |");
    else printf(" %.1f |", p->us[i]);
  }
  if (p->huge_kb >= 0) printf(" %.1f |\n", p->huge_kb / 1024.0);
  else printf(" - |\n");
}

static void print_fid(double v, int failed) {
  if (failed >= 0) printf(" failed at step %d |", failed);
  else printf(" %.2g |", v);
}

int main(int argc, char **argv) {
  const char *usage = "bench_mujoco [--phases[=K]] [ROUNDS [SECONDS [MAXBOXES [SCENE]]]]  "
                      "(defaults 5, 10, 100; K: the first step of the second window)";
  /* the flag, then the numbers */
  if (argc > 1 && (!strcmp(argv[1], "--phases") || !strncmp(argv[1], "--phases=", 9))) {
    g_phases = 1;
    if (argv[1][8] == '=') {
      char *end;
      const char *k = argv[1] + 9;
      g_split = strtol(k, &end, 10);
      if (end == k || *end || g_split <= 0 || g_split > 100000000) {
        fprintf(stderr, "%s: bad window '%s' in --phases=K (K: a positive whole number of "
                "steps, the first step of the second window)\nusage: %s\n", argv[0], k, usage);
        return 2;
      }
    }
    argv[1] = argv[0];
    ++argv, --argc;
  }
  const int rounds = (int)bench_positive_arg(argc, argv, 1, 5, usage);
  const double seconds = bench_positive_arg(argc, argv, 2, 10, usage);
  const int max_boxes = (int)bench_positive_arg(argc, argv, 3, 100, usage);
  openblas_set_num_threads(1);
  mju_user_warning = quiet_warning;
  if (g_phases) mjcb_time = mono_seconds;
  const int tty = isatty(2);
  scene_def defs[16];
  int n = make_scenes(defs, seconds, max_boxes);
  if (argc > 4) { /* only the scenes whose name contains argv[4] */
    int k = 0;
    for (int i = 0; i < n; ++i) {
      if (strstr(defs[i].name, argv[4])) defs[k++] = defs[i];
      else free(defs[i].text);
    }
    n = k;
    if (!n) {
      fprintf(stderr, "%s: no scene's name contains '%s'\nusage: %s\n", argv[0], argv[4], usage);
      return 2;
    }
  }
  static res r[16][NENG];
  for (int i = 0; i < n; ++i) run_scene(&defs[i], rounds, r[i], tty);
  if (tty) fprintf(stderr, "\r%60s\r", "");

  printf("## Time per step (dt = %g s; thread CPU time, best of %d interleaved rounds)\n\n",
         DT, rounds);
  printf("| scene | steps | complan acc. (us) | complan vel. (us) | MuJoCo default (us) | "
         "MuJoCo tuned (us) | acc. / MJ default | vel. / MJ default | acc. / MJ tuned | "
         "pivots/step acc. | pivots/step vel. |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < n; ++i) {
    const res *e = r[i];
    printf("| %s | %ld | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
           defs[i].name, lround(defs[i].seconds / DT), e[ACC].us, e[VEL].us, e[MJD].us,
           e[MJT].us, e[ACC].us / e[MJD].us, e[VEL].us / e[MJD].us, e[ACC].us / e[MJT].us,
           e[ACC].pivots, e[VEL].pivots);
  }
  printf("\n## Page faults in the timed loop (the thread's minor and major faults, getrusage; "
         "fewest - most over the rounds)\n\n| scene | complan acc. | complan vel. | "
         "MuJoCo default | MuJoCo tuned |\n|---|---|---|---|---|\n");
  for (int i = 0; i < n; ++i) {
    printf("| %s |", defs[i].name);
    for (int k = 0; k < NENG; ++k) printf(" %ld - %ld |", r[i][k].flt, r[i][k].flt_max);
    printf("\n");
  }
  if (g_phases) {
    printf("\n## Phases (us per step; the fastest and the slowest round by CPU)\n\n"
           "Steps counted: those the thread ran all through (monotonic total = thread CPU time "
           "within 2 us + 1 %%); their mean thread CPU time (CPU) and its split. The rounds "
           "shown are those whose counted steps took the least and the most CPU; time: that "
           "round's thread CPU time a step over all its steps. complan "
           "(cp_step_profile): contacts = collide, rows = constraints, build = assembly, LCP = "
           "solve, check, integration = integrate, other = the step's bookkeeping. MuJoCo "
           "(its timers): contacts = collision, rows = make + project, build = kinematics + "
           "inertia, LCP = constraint solver, integration = mj_step less mj_forward, other = "
           "velocity, actuation, acceleration. CPU less the phases' sum is the bench's own clock "
           "reads and loop (a thread CPU clock read is a system call: 1-2 us a step). Huge "
           "pages: the process's memory on transparent huge pages at the end of the run "
           "(AnonHugePages, /proc/self/smaps_rollup; complan's large matrices ask for them, "
           "the kernel gives them when it has them). Steps: the window (--phases=K: 0 to K-1 "
           "and K to the end, each with its own fastest and slowest round).\n\n"
           "| scene | engine | round | steps | time (us) | steps counted | CPU (us) | contacts | "
           "rows | build | LCP | check | integration | other | huge pages (MB) |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const int nwin = g_split > 0 ? NWIN : 1;
    char win[48];
    for (int i = 0; i < n; ++i)
      for (int wi = 0; wi < nwin; ++wi)
        for (int e = 0; e < NENG; ++e) {
          window_text(win, sizeof win, wi, lround(defs[i].seconds / DT));
          print_phases(defs[i].name, engine_name[e], "fastest", win, &r[i][e].ph[wi], e >= MJD);
          print_phases(defs[i].name, engine_name[e], "slowest", win, &r[i][e].ph_max[wi],
                       e >= MJD);
        }
    printf("\n## Work per window (complan, every step of the window; the same in every "
           "round)\n\n"
           "Per step: contacts generated, impacts, LCP solves, pivots (Lemke's and the warm "
           "basis's principal pivots). Warm: steps whose friction LCP was solved from the warm "
           "basis (as it was or repaired). Fallbacks: steps taken by the velocity stepper "
           "instead. Split: steps whose friction LCP was split into islands; islands: their "
           "mean count in a split step.\n\n"
           "| scene | engine | steps | contacts | impacts | LCP solves | pivots | warm | "
           "fallbacks | split | islands |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; ++i)
      for (int wi = 0; wi < nwin; ++wi)
        for (int e = ACC; e <= VEL; ++e) {
          const work *q = &r[i][e].wk[wi];
          const double k = q->steps ? 1.0 / q->steps : 0;
          window_text(win, sizeof win, wi, lround(defs[i].seconds / DT));
          printf("| %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %ld / %ld | %ld | %ld | %.1f |\n",
                 defs[i].name, engine_name[e], win, q->contacts * k, q->impacts * k,
                 q->solves * k, q->pivots * k, q->warm, q->steps, q->fallback, q->split,
                 q->split ? (double)q->islands / q->split : 0.0);
        }
  }
  /* growth of the step with the stack's size, 10 -> largest */
  int i10 = -1, ibig = -1;
  for (int i = 0; i < n; ++i)
    if (defs[i].boxes >= 10) {
      if (defs[i].boxes == 10) i10 = i;
      ibig = i;
    }
  if (i10 >= 0 && ibig > i10) {
    double lb = log((double)defs[ibig].boxes / 10);
    printf("\nStep time growth from 10 to %d boxes, as N^p:", defs[ibig].boxes);
    for (int e = 0; e < NENG; ++e)
      printf(" %s p = %.2f%s", engine_name[e], log(r[ibig][e].us / r[i10][e].us) / lb,
             e + 1 < NENG ? ";" : ".\n");
  }
  printf("\n## Fidelity (the tracked body: top box, the box, the sphere, the held cube, the "
         "bin's last box)\n\n"
         "Error: distance of the tracked body's final position from the closed form "
         "(at rest: its drift). Overlap: deepest seen (m). KE: translational kinetic energy at the "
         "end (J).\n\n");
  printf("| scene | seconds | closed-form displacement (m) | error acc. | error vel. | "
         "error MJ default | error MJ tuned | overlap acc. | overlap vel. | overlap MJ default | "
         "overlap MJ tuned | KE acc. | KE vel. | KE MJ default | KE MJ tuned | MuJoCo warnings "
         "(default, tuned) |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < n; ++i) {
    const res *e = r[i];
    const double *x = defs[i].expect;
    if (defs[i].open) printf("| %s | %g | (none) |", defs[i].name, defs[i].seconds);
    else
      printf("| %s | %g | %.4g |", defs[i].name, defs[i].seconds,
             sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
    for (int k = 0; k < NENG; ++k) print_fid(e[k].fid, e[k].failed_at);
    for (int k = 0; k < NENG; ++k) printf(" %.2g |", e[k].pen);
    for (int k = 0; k < NENG; ++k) printf(" %.2g |", e[k].ke);
    printf(" %d, %d |\n", e[MJD].warnings, e[MJT].warnings);
    free(defs[i].text);
  }
  return 0;
}
