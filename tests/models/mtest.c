#include "tests/models/mtest.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

#if defined(__SANITIZE_ADDRESS__)
#define MT_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_HAVE_LSAN 1
#endif
#endif
#ifdef MT_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif
#include "tests/support.h"

void mt_parse_ok(const char *text, int check, cp_scene *s) {
  cp_error err = {0};
  cp_scene_options o = cp_scene_options_defaults();
  o.check_normal_speed = check;
  int rc = cp_scene_parse(text, strlen(text), NULL, &o, s, &err);
  cr_assert_eq(rc, 0, "scene rejected at '%s': %s", err.where, err.msg);
}

void mt_parse_fails(const char *text, const char *where, const char *msg_part) {
  cp_error err = {0};
  cp_scene s;
  int rc = cp_scene_parse(text, strlen(text), NULL, NULL, &s, &err);
  if (rc == 0) cp_scene_free(&s);
  cr_assert_eq(rc, -1, "scene accepted, expected an error at '%s'", where);
  cr_assert_str_eq(err.where, where, "error at '%s' (%s), expected at '%s'",
                   err.where, err.msg, where);
  if (msg_part)
    cr_assert(strstr(err.msg, msg_part), "message '%s' lacks '%s'", err.msg,
              msg_part);
  // A failed parse leaves the scene zeroed.
  cr_assert_eq(s.n_bodies + s.n_manips + s.n_contacts, 0);
  cr_assert_null(s.bodies);
}

// ------------------------------------------------------ random scenes --

typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;

__attribute__((format(printf, 2, 3))) static void put(sbuf *b, const char *fmt,
                                                      ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    cr_assert(k >= 0);
    if ((size_t)k < b->cap - b->n) {
      b->n += (size_t)k;
      return;
    }
    b->cap = 2 * b->cap + (size_t)k;
    b->s = realloc(b->s, b->cap);
    cr_assert_not_null(b->s);
  }
}

static void put_vec(sbuf *b, const double *v, int n) {
  put(b, "[");
  for (int i = 0; i < n; ++i) put(b, "%s%.17g", i ? ", " : "", v[i]);
  put(b, "]");
}

static void rand_vec(uint64_t *r, double *v, double lo, double hi) {
  for (int i = 0; i < 3; ++i) v[i] = cpt_uniform(r, lo, hi);
}

static void rand_quat(uint64_t *r, double *q) {
  double n = 0;
  do {
    for (int i = 0; i < 4; ++i) q[i] = cpt_uniform(r, -1, 1);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 0.2);
  for (int i = 0; i < 4; ++i) q[i] /= n;
}

// Random physically valid inertia: R diag(d) R^T with triangle inequality.
static void rand_inertia(uint64_t *r, double m, double *In) {
  double a = cpt_uniform(r, 0.02, 0.2), b = cpt_uniform(r, 0.02, 0.2),
         c = cpt_uniform(r, 0.02, 0.2); // box extents
  double D[9] = {m / 12 * (b * b + c * c), 0, 0, 0, m / 12 * (a * a + c * c),
                 0, 0, 0, m / 12 * (a * a + b * b)};
  double q[4], R[9];
  rand_quat(r, q);
  cp_quat_to_mat(R, q);
  cp_m3_rotate_sym(In, R, D);
  for (int i = 0; i < 3; ++i) // exact symmetry in the printed digits
    for (int j = i + 1; j < 3; ++j) In[3 * j + i] = In[3 * i + j];
}

static void put_mat(sbuf *b, const double *In) {
  put(b, "[");
  for (int i = 0; i < 3; ++i) {
    if (i) put(b, ", ");
    put_vec(b, In + 3 * i, 3);
  }
  put(b, "]");
}

static void random_unit(uint64_t *r, double *n) {
  double l;
  do {
    rand_vec(r, n, -1, 1);
    l = cp_v3_norm(n);
  } while (l < 0.2 || l > 1);
  cp_v3_scale(n, n, 1 / l);
}

char *mt_random_scene(uint64_t seed, int nj) {
  uint64_t r = seed * 7919 + 17;
  sbuf b = {malloc(4096), 0, 4096};
  double g[3] = {cpt_uniform(&r, -1, 1), cpt_uniform(&r, -1, 1), -9.81};
  put(&b, "{\"gravity\": ");
  put_vec(&b, g, 3);
  put(&b, ", \"friction\": {\"default\": 0.4}, \"bodies\": [");
  put(&b, "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": "
          "\"plane\", \"normal\": [0, 0, 1]}}");
  const char *names[2] = {"box", "ball"};
  for (int i = 0; i < 2; ++i) {
    double x[3], q[4], v[3], w[3], m = cpt_uniform(&r, 0.5, 3), In[9];
    rand_vec(&r, x, -0.5, 0.5);
    rand_quat(&r, q);
    rand_vec(&r, v, -1, 1);
    rand_vec(&r, w, -3, 3);
    rand_inertia(&r, m, In);
    put(&b, ", {\"name\": \"%s\", \"shape\": %s, \"mass\": %.17g, "
            "\"inertia\": ",
        names[i],
        i ? "{\"type\": \"sphere\", \"radius\": 0.1}"
          : "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.3]}",
        m);
    put_mat(&b, In);
    put(&b, ", \"position\": ");
    put_vec(&b, x, 3);
    put(&b, ", \"orientation\": ");
    put_vec(&b, q, 4);
    put(&b, ", \"velocity\": ");
    put_vec(&b, v, 3);
    put(&b, ", \"angular_velocity\": ");
    put_vec(&b, w, 3);
    put(&b, "}");
  }
  put(&b, "], \"manipulators\": [{\"name\": \"arm\", \"base\": {\"position\": ");
  double bp[3], bq[4];
  rand_vec(&r, bp, -0.3, 0.3);
  rand_quat(&r, bq);
  put_vec(&b, bp, 3);
  put(&b, ", \"orientation\": ");
  put_vec(&b, bq, 4);
  put(&b, "}, \"joints\": [");
  for (int j = 0; j < nj; ++j) {
    double ax[3], op[3], oq[4], com[3], In[9], m = cpt_uniform(&r, 0.2, 2);
    random_unit(&r, ax);
    rand_vec(&r, op, -0.3, 0.3);
    rand_quat(&r, oq);
    rand_vec(&r, com, -0.2, 0.2);
    rand_inertia(&r, m, In);
    int prismatic = (j % 3 == 1);
    put(&b, "%s{\"name\": \"j%d\", \"type\": \"%s\", \"axis\": ", j ? ", " : "",
        j, prismatic ? "prismatic" : "revolute");
    put_vec(&b, ax, 3);
    put(&b, ", \"origin\": {\"position\": ");
    put_vec(&b, op, 3);
    put(&b, ", \"orientation\": ");
    put_vec(&b, oq, 4);
    put(&b, "}, \"position\": %.17g, \"velocity\": %.17g, ",
        cpt_uniform(&r, -1.5, 1.5), cpt_uniform(&r, -2, 2));
    if (j == nj - 1)
      put(&b, "\"acceleration\": %.17g, ", cpt_uniform(&r, -1, 1));
    else
      put(&b, "\"effort\": %.17g, ", cpt_uniform(&r, -1, 1));
    put(&b, "\"link\": {\"name\": \"l%d\", \"mass\": %.17g, \"com\": ", j, m);
    put_vec(&b, com, 3);
    put(&b, ", \"inertia\": ");
    put_mat(&b, In);
    put(&b, "}}");
  }
  put(&b, "]}], \"contacts\": [");
  char last[32];
  snprintf(last, sizeof last, "arm/l%d", nj - 1);
  const char *pairs[][2] = {{"box", "table"}, {"box", "ball"},
                            {last, "box"},    {"arm/l0", "table"},
                            {"ball", last},   {last, "arm/l0"}};
  for (int c = 0; c < 6; ++c) {
    double p[3], n[3];
    rand_vec(&r, p, -0.5, 0.5);
    random_unit(&r, n);
    put(&b, "%s{\"a\": \"%s\", \"b\": \"%s\", \"point\": ", c ? ", " : "",
        pairs[c][0], pairs[c][1]);
    put_vec(&b, p, 3);
    put(&b, ", \"normal\": ");
    put_vec(&b, n, 3);
    put(&b, ", \"mu_torsion\": 0.01}");
  }
  put(&b, "]}");
  return b.s;
}

// ------------------------------------------------------------ states --

void mt_save(const cp_scene *s, mt_state *st) {
  st->nb = s->n_bodies;
  st->nj = cp_scene_joint_count(s);
  st->x = calloc((size_t)(3 * st->nb + 1), sizeof(double));
  st->q = calloc((size_t)(4 * st->nb + 1), sizeof(double));
  st->l = calloc((size_t)(st->nj + 1), sizeof(double));
  for (int i = 0; i < s->n_bodies; ++i) {
    memcpy(st->x + 3 * i, s->bodies[i].x, 3 * sizeof(double));
    memcpy(st->q + 4 * i, s->bodies[i].q, 4 * sizeof(double));
  }
  int k = 0;
  for (int m = 0; m < s->n_manips; ++m)
    for (int j = 0; j < s->manips[m].n; ++j)
      st->l[k++] = s->manips[m].joints[j].position;
}

void mt_restore(cp_scene *s, const mt_state *st) {
  for (int i = 0; i < s->n_bodies; ++i) {
    memcpy(s->bodies[i].x, st->x + 3 * i, 3 * sizeof(double));
    memcpy(s->bodies[i].q, st->q + 4 * i, 4 * sizeof(double));
  }
  int k = 0;
  for (int m = 0; m < s->n_manips; ++m)
    for (int j = 0; j < s->manips[m].n; ++j)
      s->manips[m].joints[j].position = st->l[k++];
}

void mt_state_free(mt_state *st) {
  free(st->x);
  free(st->q);
  free(st->l);
}

void mt_advance(cp_scene *s, double dt) {
  for (int i = 0; i < s->n_bodies; ++i) {
    cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    cp_v3_axpy(b->x, b->x, dt, b->v);
    cp_quat_integrate(b->q, b->q, b->w, dt);
  }
  for (int m = 0; m < s->n_manips; ++m)
    for (int j = 0; j < s->manips[m].n; ++j)
      s->manips[m].joints[j].position += dt * s->manips[m].joints[j].velocity;
}

void mt_material_point(const cp_scene *s, cp_ref r, const double *local,
                       double *p) {
  double R[9], x[3];
  cp_scene_frame(s, r, R, x);
  cp_m3_mulv(p, R, local);
  cp_v3_add(p, p, x);
}

void mt_local(const cp_scene *s, cp_ref r, const double *p, double *local) {
  double R[9], x[3], d[3];
  cp_scene_frame(s, r, R, x);
  cp_v3_sub(d, p, x);
  cp_m3_tmulv(local, R, d);
}

double mt_maxdiff(const double *a, const double *b, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

void mt_assert_no_leaks(void) {
#ifdef MT_HAVE_LSAN
  cr_assert_eq(__lsan_do_recoverable_leak_check(), 0,
               "LeakSanitizer found leaks (see its report above)");
#endif
}
