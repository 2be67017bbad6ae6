#include "tests/scene_support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

char *cpt_scene_text(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/models/scenes/%s", getenv("CP_SOURCE_ROOT"), rel);
  size_t len;
  char *text = cpt_read_file(path, &len);
  cr_assert_not_null(text, "cannot read %s", path);
  return text;
}

void cpt_solve_text(const char *text, const cp_problem_options *opt_in, cpt_solved *s) {
  cp_error err;
  memset(s, 0, sizeof *s);
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, NULL, &s->scene, &err), 0,
               "%s: %s", err.where, err.msg);
  cr_assert_eq(cp_system_build(&s->scene, &s->sys, &err), 0, "%s", err.msg);
  cp_problem_options opt = opt_in ? *opt_in : cp_problem_defaults();
  s->mu_tor = calloc((size_t)s->scene.n_contacts + 1, sizeof(double));
  cr_assert_not_null(s->mu_tor);
  if (cp_problem_torsion_from_scene(&s->scene, s->mu_tor) > 0) opt.mu_torsion = s->mu_tor;
  cp_problem_solve(&s->sys, &opt, &s->res);
}

void cpt_solve_file(const char *rel, const cp_problem_options *opt, cpt_solved *s) {
  char *text = cpt_scene_text(rel);
  cpt_solve_text(text, opt, s);
  free(text);
}

void cpt_release(cpt_solved *s) {
  cp_problem_result_free(&s->res);
  cp_system_free(&s->sys);
  cp_scene_free(&s->scene);
  free(s->mu_tor);
  s->mu_tor = NULL;
}

static void quat_to_R(const double *q, double *R) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z); R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z); R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y); R[7] = 2 * (y * z + w * x); R[8] = 1 - 2 * (x * x + y * y);
}

/* Newton-Euler for every free body, from the scene (not from H or G):
 * m a = m g + sum F,  I_w alpha + w x I_w w = sum (p - x) x F + sum n c_tau
 * (body a of a contact gets +, body b -). */
void cpt_assert_newton_euler(const cpt_solved *s, double tol) {
  const cp_scene *sc = &s->scene;
  for (int i = 0; i < s->sys.n_obj; i++) {
    int bi = s->sys.obj_body[i];
    const cp_body *b = &sc->bodies[bi];
    double F[3] = {0, 0, 0}, T[3] = {0, 0, 0};
    for (int j = 0; j < sc->n_contacts; j++) {
      const cp_contact *c = &sc->contacts[j];
      double sign = c->a.body == bi ? 1.0 : c->b.body == bi ? -1.0 : 0.0;
      if (sign == 0.0) continue;
      const double *f = s->res.force + 3 * j;
      double Fw[3], r[3];
      for (int k = 0; k < 3; k++) {
        Fw[k] = sign * (f[0] * c->n[k] + f[1] * c->t[k] + f[2] * c->o[k]);
        r[k] = c->p[k] - b->x[k];
        F[k] += Fw[k];
        if (c->has_torsion && s->res.torsion) T[k] += sign * s->res.torsion[j] * c->n[k];
      }
      T[0] += r[1] * Fw[2] - r[2] * Fw[1];
      T[1] += r[2] * Fw[0] - r[0] * Fw[2];
      T[2] += r[0] * Fw[1] - r[1] * Fw[0];
    }
    const double *a = s->res.udot + 6 * i, *al = a + 3;
    double R[9], Iw[9], tmp[9];
    quat_to_R(b->q, R);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        tmp[r * 3 + c] = 0;
        for (int k = 0; k < 3; k++) tmp[r * 3 + c] += R[r * 3 + k] * b->inertia[k * 3 + c];
      }
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        Iw[r * 3 + c] = 0;
        for (int k = 0; k < 3; k++) Iw[r * 3 + c] += tmp[r * 3 + k] * R[c * 3 + k];
      }
    double Iwal[3], Iww[3];
    for (int r = 0; r < 3; r++) {
      Iwal[r] = Iww[r] = 0;
      for (int k = 0; k < 3; k++) { Iwal[r] += Iw[r * 3 + k] * al[k]; Iww[r] += Iw[r * 3 + k] * b->w[k]; }
    }
    double gyro[3] = {b->w[1] * Iww[2] - b->w[2] * Iww[1], b->w[2] * Iww[0] - b->w[0] * Iww[2],
                      b->w[0] * Iww[1] - b->w[1] * Iww[0]};
    for (int k = 0; k < 3; k++) {
      cr_assert_float_eq(b->mass * a[k], b->mass * sc->gravity[k] + F[k], tol,
                         "%s: force balance axis %d", b->name, k);
      cr_assert_float_eq(Iwal[k] + gyro[k], T[k], tol, "%s: moment balance axis %d: %g vs %g",
                         b->name, k, Iwal[k] + gyro[k], T[k]);
    }
  }
}
