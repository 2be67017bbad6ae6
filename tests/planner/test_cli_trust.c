/* complan used from its documents alone (session 28's audit): scenes a user
 * writes from docs/formats.md, run through `complan solve`, `contacts` and
 * `simulate`, checked against closed forms derived by hand -- a box on an
 * incline sticks when tan(theta) <= mu and otherwise slides with
 * g (sin - mu cos); a sphere rolls with 5/7 g sin, or slips with
 * g (sin - mu cos) and spins up at 5 mu g cos / (2 r); the reported contact
 * forces balance gravity and m a (Newton-Euler, forces and moments) -- and
 * bad inputs a user makes (exit 2, the file and the place named). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "tests/support.h"

#define G 9.81
#define PI 3.14159265358979323846

/* A fixed plane through the origin tilted by theta about y (its normal
 * (sin, 0, cos)), and one free body of 1 kg resting on it at rest: a box
 * of 0.2 x 0.2 x 0.1 m lying on its large face, or a sphere of radius
 * 0.1 m. Downhill is (cos, 0, -sin). Returns a temporary file's path. */
static char *incline_scene(double theta_deg, double mu, int sphere) {
  const double t = theta_deg * PI / 180, s = sin(t), c = cos(t),
               d = sphere ? 0.1 : 0.05;
  char text[2048];
  snprintf(text, sizeof text,
           "{\"friction\": {\"default\": %.17g}, \"bodies\": ["
           "{\"name\": \"ramp\", \"fixed\": true, \"shape\": {\"type\": "
           "\"plane\", \"normal\": [%.17g, 0, %.17g], \"offset\": 0}},"
           "{\"name\": \"obj\", \"mass\": 1, \"shape\": %s,"
           " \"position\": [%.17g, 0, %.17g],"
           " \"orientation\": [%.17g, 0, %.17g, 0]}]}",
           mu, s, c,
           sphere ? "{\"type\": \"sphere\", \"radius\": 0.1}"
                  : "{\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]}",
           d * s, d * c, cos(t / 2), sin(t / 2));
  return cpt_temp_file(text, ".json");
}

static double vget(json_t *a, size_t i) {
  return json_number_value(json_array_get(a, i));
}

static json_t *solve(const char *scene) {
  const char *argv[] = {"complan", "solve", scene, "--json", NULL};
  json_t *d = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(d, "status")), "solved");
  return d;
}

/* The body's acceleration must be a along downhill (a >= 0). */
static void assert_downhill(json_t *doc, double theta_deg, double a,
                            double tol) {
  const double t = theta_deg * PI / 180;
  json_t *la = json_object_get(json_array_get(json_object_get(doc, "bodies"), 0),
                               "linear_acceleration");
  const double ex[3] = {a * cos(t), 0, -a * sin(t)};
  for (size_t i = 0; i < 3; ++i)
    cr_assert(fabs(vget(la, i) - ex[i]) <= tol,
              "theta %g: a[%zu] = %.17g, closed form %.17g", theta_deg, i,
              vget(la, i), ex[i]);
}

Test(cli_trust, box_on_incline_sticks_below_tan_theta_equal_mu_and_slides_above) {
  /* mu 0.3: atan(0.3) = 16.70 degrees. */
  const double mu = 0.3, thetas[] = {10, 15, 16.5, 17, 20, 30, 45};
  for (size_t k = 0; k < sizeof thetas / sizeof *thetas; ++k) {
    const double t = thetas[k] * PI / 180;
    char *scene = incline_scene(thetas[k], mu, 0);
    json_t *d = solve(scene);
    const int slides = tan(t) > mu;
    assert_downhill(d, thetas[k], slides ? G * (sin(t) - mu * cos(t)) : 0,
                    1e-9);
    /* Outcome of every loaded corner: sliding exactly when it slides. */
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(d, "contacts"), i, c) {
      if (vget(json_object_get(c, "force"), 0) <= 1e-9) continue;
      cr_assert_str_eq(json_string_value(json_object_get(c, "outcome")),
                       slides ? "sliding" : "rolling", "theta %g", thetas[k]);
    }
    json_decref(d);
    unlink(scene);
    free(scene);
  }
}

Test(cli_trust, sphere_rolls_at_five_sevenths_or_slips_below_two_sevenths_tan) {
  /* Rolling needs mu >= 2/7 tan(theta) = 0.104 at 20 degrees. */
  const double t = 20 * PI / 180;
  for (int slip = 0; slip < 2; ++slip) {
    const double mu = slip ? 0.05 : 0.3;
    char *scene = incline_scene(20, mu, 1);
    json_t *d = solve(scene);
    const double a = slip ? G * (sin(t) - mu * cos(t)) : 5.0 / 7 * G * sin(t),
                 alpha = slip ? 5 * mu * G * cos(t) / (2 * 0.1) : a / 0.1;
    assert_downhill(d, 20, a, 1e-9);
    json_t *w = json_object_get(json_array_get(json_object_get(d, "bodies"), 0),
                                "angular_acceleration");
    cr_assert(fabs(vget(w, 0)) < 1e-9 && fabs(vget(w, 2)) < 1e-9);
    cr_assert(fabs(vget(w, 1) - alpha) < 1e-8, "alpha %.17g, closed form %.17g",
              vget(w, 1), alpha);
    json_decref(d);
    unlink(scene);
    free(scene);
  }
}

/* The contact frame docs/formats.md describes: t from the world axis least
 * aligned with the normal, made orthogonal to it; o = n x t. */
static void frame(const double n[3], double t[3], double o[3]) {
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (fabs(n[i]) < fabs(n[k])) k = i;
  double e[3] = {0, 0, 0};
  e[k] = 1;
  const double d = n[k];
  double len = 0;
  for (int i = 0; i < 3; ++i) {
    t[i] = e[i] - d * n[i];
    len += t[i] * t[i];
  }
  for (int i = 0; i < 3; ++i) t[i] /= sqrt(len);
  o[0] = n[1] * t[2] - n[2] * t[1];
  o[1] = n[2] * t[0] - n[0] * t[2];
  o[2] = n[0] * t[1] - n[1] * t[0];
}

Test(cli_trust, reported_contact_forces_balance_gravity_and_m_a) {
  /* Sticking box (the four corners share the load in some way the rigid
   * model leaves open: only the sums are fixed), sliding box, rolling
   * sphere. Body 1 kg; box inertia m (b^2 + c^2) / 12 about its axes, the
   * sphere's 2/5 m r^2. */
  struct {
    double theta, mu;
    int sphere;
  } cases[] = {{15, 0.3, 0}, {20, 0.3, 0}, {20, 0.3, 1}, {20, 0.05, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    const double t = cases[k].theta * PI / 180, d = cases[k].sphere ? 0.1 : 0.05;
    char *scene = incline_scene(cases[k].theta, cases[k].mu, cases[k].sphere);
    json_t *sol = solve(scene);
    const char *cv[] = {"complan", "contacts", scene, "--json", NULL};
    json_t *con = cpt_run_json(cv, 0);
    json_t *cs = json_object_get(con, "contacts"),
           *ks = json_object_get(sol, "contacts");
    cr_assert_eq(json_array_size(cs), json_array_size(ks));
    const double x[3] = {d * sin(t), 0, d * cos(t)};
    double F[3] = {0, 0, -G}, T[3] = {0, 0, 0};
    for (size_t i = 0; i < json_array_size(cs); ++i) {
      json_t *c = json_array_get(cs, i), *f = json_object_get(json_array_get(ks, i), "force");
      double n[3], tt[3], o[3], p[3], fw[3];
      for (int j = 0; j < 3; ++j) {
        n[j] = vget(json_object_get(c, "normal"), (size_t)j);
        p[j] = vget(json_object_get(c, "point"), (size_t)j) - x[j];
      }
      frame(n, tt, o);
      for (int j = 0; j < 3; ++j) {
        fw[j] = vget(f, 0) * n[j] + vget(f, 1) * tt[j] + vget(f, 2) * o[j];
        F[j] += fw[j];
      }
      T[0] += p[1] * fw[2] - p[2] * fw[1];
      T[1] += p[2] * fw[0] - p[0] * fw[2];
      T[2] += p[0] * fw[1] - p[1] * fw[0];
    }
    json_t *b = json_array_get(json_object_get(sol, "bodies"), 0);
    /* The box's axes: x (cos, 0, -sin), y, z = n; its inertia about y is
     * (0.04 + 0.01) / 12, about x (0.04 + 0.01) / 12, about z 0.08 / 12:
     * equal about x and y, so only the z entry matters in world axes. The
     * accelerations here turn about y only. */
    const double Iy = cases[k].sphere ? 0.4 * 0.01 : 0.05 / 12;
    for (int j = 0; j < 3; ++j) {
      const double ma = vget(json_object_get(b, "linear_acceleration"), (size_t)j);
      cr_assert(fabs(F[j] - ma) < 1e-12, "case %zu: force[%d] %.3g vs m a %.3g",
                k, j, F[j], ma);
    }
    json_t *al = json_object_get(b, "angular_acceleration");
    cr_assert(fabs(vget(al, 0)) < 1e-9 && fabs(vget(al, 2)) < 1e-9);
    cr_assert(fabs(T[0]) < 1e-12 && fabs(T[2]) < 1e-12, "case %zu", k);
    cr_assert(fabs(T[1] - Iy * vget(al, 1)) < 1e-12, "case %zu: moment %.17g vs I alpha %.17g",
              k, T[1], Iy * vget(al, 1));
    json_decref(con);
    json_decref(sol);
    unlink(scene);
    free(scene);
  }
}

/* a x b */
static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* R I R^T v for the body-frame inertia I (row-major) and the orientation
 * q = [w, x, y, z]: the world inertia applied to v. */
static void world_inertia_times(const double q[4], const double I[9], const double v[3],
                                double out[3]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                       2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                       2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  double b[3], c[3];
  for (int i = 0; i < 3; ++i) b[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
  for (int i = 0; i < 3; ++i) c[i] = I[3 * i] * b[0] + I[3 * i + 1] * b[1] + I[3 * i + 2] * b[2];
  for (int i = 0; i < 3; ++i) out[i] = R[3 * i] * c[0] + R[3 * i + 1] * c[1] + R[3 * i + 2] * c[2];
}

/* `complan solve --json` reports each contact's point and frame (n, t, o):
 * the frame is orthonormal and right-handed, its normal is `complan
 * contacts`' normal, and the force entries recombined with it, c_n n +
 * c_t t + c_o o on body a (its opposite on b) at the point, balance every
 * free body's Newton-Euler equations with the reported accelerations:
 * m a = m g + sum F and I alpha + w x I w = sum (p - x) x F, the masses,
 * inertias and poses read from the scene by the library, not from the
 * command. Scenes: two blocks held on a slope by friction, a box sliding
 * on a table, a tower of boxes, and a sphere rolling on a plane tilted
 * about two axes (a frame along no world axis). */
Test(cli_trust, solve_frame_balances_newton_euler) {
  char *tilted = cpt_temp_file(
      "{\"friction\": {\"default\": 0.4}, \"bodies\": [{\"name\": \"ramp\", "
      "\"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0.3, -0.2, "
      "0.9327379053088815], \"offset\": 0}}, {\"name\": \"ball\", \"mass\": 2, "
      "\"shape\": {\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0.03, "
      "-0.02, 0.09327379053088815], \"angular_velocity\": [0.4, 0.6, 0]}]}",
      ".json");
  char paths[4][1024];
  snprintf(paths[0], sizeof paths[0], "%s/models/scenes/friction_stack.json", getenv("CP_SOURCE_ROOT"));
  snprintf(paths[1], sizeof paths[1], "%s/models/scenes/box_sliding.json", getenv("CP_SOURCE_ROOT"));
  snprintf(paths[2], sizeof paths[2], "%s/models/scenes/tower.json", getenv("CP_SOURCE_ROOT"));
  snprintf(paths[3], sizeof paths[3], "%s", tilted);
  for (int k = 0; k < 4; ++k) {
    cp_scene sc;
    cp_error e;
    cr_assert_eq(cp_scene_load(paths[k], NULL, &sc, &e), 0, "%s: %s: %s", paths[k], e.where,
                 e.msg);
    json_t *sol = solve(paths[k]);
    const char *cv[] = {"complan", "contacts", paths[k], "--json", NULL};
    json_t *con = cpt_run_json(cv, 0);
    json_t *ks = json_object_get(sol, "contacts"), *cs = json_object_get(con, "contacts");
    cr_assert_gt(json_array_size(ks), 0);
    cr_assert_eq(json_array_size(ks), json_array_size(cs));
    json_t *bodies = json_object_get(sol, "bodies");
    int checked = 0;
    for (size_t bi = 0; bi < json_array_size(bodies); ++bi) {
      json_t *jb = json_array_get(bodies, bi);
      const char *name = json_string_value(json_object_get(jb, "name"));
      const cp_body *b = NULL;
      for (int i = 0; i < sc.n_bodies; ++i)
        if (!strcmp(sc.bodies[i].name, name)) b = &sc.bodies[i];
      cr_assert(b && !b->fixed, "%s: body %s", paths[k], name);
      double F[3], T[3] = {0, 0, 0}, scale = b->mass * G;
      for (int j = 0; j < 3; ++j) F[j] = b->mass * sc.gravity[j];
      for (size_t i = 0; i < json_array_size(ks); ++i) {
        json_t *c = json_array_get(ks, i), *fr = json_object_get(c, "frame");
        double n[3], t[3], o[3], p[3], f[3], fw[3], r[3], m[3], nxt[3];
        for (int j = 0; j < 3; ++j) {
          n[j] = vget(json_object_get(fr, "n"), (size_t)j);
          t[j] = vget(json_object_get(fr, "t"), (size_t)j);
          o[j] = vget(json_object_get(fr, "o"), (size_t)j);
          p[j] = vget(json_object_get(c, "point"), (size_t)j);
          f[j] = vget(json_object_get(c, "force"), (size_t)j);
          const double cn = vget(json_object_get(json_array_get(cs, i), "normal"), (size_t)j);
          cr_assert(fabs(n[j] - cn) <= 1e-15, "%s: contact %zu's normal is not contacts'",
                    paths[k], i);
        }
        cross3(n, t, nxt);
        for (int j = 0; j < 3; ++j) cr_assert(fabs(nxt[j] - o[j]) <= 1e-15, "o != n x t");
        cr_assert(fabs(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1) <= 1e-15);
        cr_assert(fabs(t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1) <= 1e-15);
        cr_assert(fabs(n[0] * t[0] + n[1] * t[1] + n[2] * t[2]) <= 1e-15);
        const char *a = json_string_value(json_object_get(c, "a")),
                   *bn = json_string_value(json_object_get(c, "b"));
        const double sign = !strcmp(a, name) ? 1 : !strcmp(bn, name) ? -1 : 0;
        if (sign == 0) continue;
        for (int j = 0; j < 3; ++j) {
          fw[j] = sign * (f[0] * n[j] + f[1] * t[j] + f[2] * o[j]);
          F[j] += fw[j];
          r[j] = p[j] - b->x[j];
        }
        scale += fabs(f[0]) + fabs(f[1]) + fabs(f[2]);
        cross3(r, fw, m);
        for (int j = 0; j < 3; ++j) T[j] += m[j];
      }
      double al[3], Ia[3], Iw[3], wIw[3];
      for (int j = 0; j < 3; ++j)
        al[j] = vget(json_object_get(jb, "angular_acceleration"), (size_t)j);
      world_inertia_times(b->q, b->inertia, al, Ia);
      world_inertia_times(b->q, b->inertia, b->w, Iw);
      cross3(b->w, Iw, wIw);
      for (int j = 0; j < 3; ++j) {
        const double ma = b->mass * vget(json_object_get(jb, "linear_acceleration"), (size_t)j);
        cr_assert(fabs(F[j] - ma) <= 1e-11 * scale, "%s, %s: force[%d] %.17g, m a %.17g",
                  paths[k], name, j, F[j], ma);
        cr_assert(fabs(T[j] - Ia[j] - wIw[j]) <= 1e-11 * scale, "%s, %s: moment[%d] %.17g, "
                  "I alpha + w x I w %.17g", paths[k], name, j, T[j], Ia[j] + wIw[j]);
      }
      ++checked;
    }
    cr_assert_gt(checked, 0);
    json_decref(con);
    json_decref(sol);
    cp_scene_free(&sc);
  }
  unlink(tilted);
  free(tilted);
}

Test(cli_trust, simulated_sliding_box_follows_the_closed_form) {
  /* 1 s at h = 1 ms on 20 degrees, mu 0.3: semi-implicit Euler gives the
   * speed a T exactly and the distance a h^2 N (N + 1) / 2. */
  const double t = 20 * PI / 180, a = G * (sin(t) - 0.3 * cos(t));
  char *scene = incline_scene(20, 0.3, 0);
  const char *steppers[] = {"acceleration", "velocity"};
  for (int k = 0; k < 2; ++k) {
    const char *argv[] = {"complan", "simulate", scene, "--stepper", steppers[k],
                          "--duration", "1", "--json", NULL};
    json_t *d = cpt_run_json(argv, 0);
    cr_assert_str_eq(json_string_value(json_object_get(d, "status")), "ok");
    json_t *b = json_array_get(json_object_get(json_object_get(d, "final"), "bodies"), 0);
    json_t *v = json_object_get(b, "linear_velocity"), *p = json_object_get(b, "position");
    cr_assert(fabs(vget(v, 0) - a * cos(t)) < 1e-9 && fabs(vget(v, 2) + a * sin(t)) < 1e-9,
              "%s: v = (%.17g, %.17g), closed form %.17g", steppers[k], vget(v, 0),
              vget(v, 2), a);
    const double s = a * 1e-6 * 1000 * 1001 / 2;
    cr_assert(fabs(vget(p, 0) - (0.05 * sin(t) + s * cos(t))) < 1e-9 &&
                  fabs(vget(p, 2) - (0.05 * cos(t) - s * sin(t))) < 1e-9,
              "%s: travelled off the closed form %.17g", steppers[k], s);
    json_decref(d);
  }
  unlink(scene);
  free(scene);
}

/* Exit 2, nothing on stdout, stderr naming the file and holding `want`. */
static void refused(const char *const *argv, const char *file, const char *want) {
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
  cr_assert_eq(out[0], '\0', "stdout: %s", out);
  cr_assert(strstr(err, file), "no file name in: %s", err);
  cr_assert(strstr(err, want), "expected '%s' in: %s", want, err);
  free(out);
  free(err);
}

Test(cli_trust, empty_and_blank_json_files_are_named_as_such) {
  char *empty = cpt_temp_file("", ".json"), *blank = cpt_temp_file(" \n\t\n", ".json");
  const char *a1[] = {"complan", "solve", empty, NULL};
  refused(a1, empty, "line 1: expected a JSON object, found an empty file");
  const char *a2[] = {"complan", "simulate", blank, NULL};
  refused(a2, blank, "line 1: expected a JSON object, found only blank space");
  const char *a3[] = {"complan", "stability", empty, NULL};
  refused(a3, empty, "found an empty file");
  unlink(empty);
  unlink(blank);
  free(empty);
  free(blank);
}
