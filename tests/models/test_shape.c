// Uniform-density inertias of the shapes (models/shape.h): the box formula of
// the brief, and the solids of revolution against numerical integration.
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "models/scene.h"
#include "models/shape.h"
#include "tests/models/mtest.h"

// Radius profile r(z) of a solid of revolution about z, z in [-h, h].
typedef double (*profile)(double z, double r, double L);

static double cyl_profile(double z, double r, double L) {
  (void)z; (void)L;
  return r;
}
static double capsule_profile(double z, double r, double L) {
  double a = fabs(z) - L / 2;
  return a <= 0 ? r : sqrt(fmax(0, r * r - a * a));
}
static double sphere_profile(double z, double r, double L) {
  (void)L;
  return sqrt(fmax(0, r * r - z * z));
}

// Simpson's rule on [a, b] of V, Izz, Ixx integrands (each piecewise
// polynomial in z, so Simpson is accurate to rounding with the breaks on the
// grid).
static void integrate(profile pf, double r, double L, double a, double b,
                      double *V, double *Izz, double *Ixx) {
  const int n = 2000;
  double h = (b - a) / n;
  for (int i = 0; i <= n; ++i) {
    double z = a + i * h, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    double rr = pf(z, r, L), r2 = rr * rr;
    *V += w * h / 3 * 3.14159265358979323846 * r2;
    *Izz += w * h / 3 * 3.14159265358979323846 * r2 * r2 / 2;
    *Ixx += w * h / 3 * 3.14159265358979323846 * r2 * (r2 / 4 + z * z);
  }
}

static void check_revolution(cp_shape_type t, profile pf, double r, double L,
                             double m) {
  double V = 0, Izz = 0, Ixx = 0;
  double h = t == CP_SHAPE_CAPSULE ? L / 2 + r : t == CP_SHAPE_SPHERE ? r : L / 2;
  if (t == CP_SHAPE_CAPSULE) {
    integrate(pf, r, L, -h, -L / 2, &V, &Izz, &Ixx);
    integrate(pf, r, L, -L / 2, L / 2, &V, &Izz, &Ixx);
    integrate(pf, r, L, L / 2, h, &V, &Izz, &Ixx);
  } else {
    integrate(pf, r, L, -h, h, &V, &Izz, &Ixx);
  }
  double rho = m / V;
  cp_shape s = {.type = t, .radius = r, .length = L};
  double In[9];
  cr_assert_eq(cp_shape_inertia(&s, m, In), 0);
  cr_assert_float_eq(In[8], rho * Izz, 1e-12 * rho * Izz, "%s Izz %g vs %g",
                     cp_shape_type_name(t), In[8], rho * Izz);
  cr_assert_float_eq(In[0], rho * Ixx, 1e-12 * rho * Ixx, "%s Ixx %g vs %g",
                     cp_shape_type_name(t), In[0], rho * Ixx);
  cr_assert_float_eq(In[4], In[0], 0);
  for (int k = 0; k < 9; ++k)
    if (k % 4) cr_assert_eq(In[k], 0);
}

Test(shape, box_formula) {
  cp_shape s = {.type = CP_SHAPE_BOX, .size = {0.3, 0.2, 0.1}};
  double In[9], m = 2.5;
  cr_assert_eq(cp_shape_inertia(&s, m, In), 0);
  cr_assert_float_eq(In[0], m / 12 * (0.04 + 0.01), 1e-16);
  cr_assert_float_eq(In[4], m / 12 * (0.09 + 0.01), 1e-16);
  cr_assert_float_eq(In[8], m / 12 * (0.09 + 0.04), 1e-16);
  cr_assert_eq(In[1], 0);
  cr_assert_eq(In[5], 0);
  mt_assert_no_leaks();
}

Test(shape, sphere_cylinder_capsule_against_integration) {
  check_revolution(CP_SHAPE_SPHERE, sphere_profile, 0.3, 0, 1.7);
  cp_shape s = {.type = CP_SHAPE_SPHERE, .radius = 0.3};
  double In[9];
  cp_shape_inertia(&s, 1.7, In);
  cr_assert_float_eq(In[0], 0.4 * 1.7 * 0.09, 1e-16);
  check_revolution(CP_SHAPE_CYLINDER, cyl_profile, 0.05, 0.4, 0.9);
  check_revolution(CP_SHAPE_CAPSULE, capsule_profile, 0.05, 0.4, 0.9);
  check_revolution(CP_SHAPE_CAPSULE, capsule_profile, 0.2, 0.1, 3.0);
  // A capsule of length 0 is a sphere.
  cp_shape c = {.type = CP_SHAPE_CAPSULE, .radius = 0.3, .length = 0};
  double J[9];
  cp_shape_inertia(&c, 1.7, J);
  cr_assert_float_eq(J[0], In[0], 1e-16);
  cr_assert_float_eq(J[8], In[8], 1e-16);
  mt_assert_no_leaks();
}

Test(shape, plane_and_none_have_no_inertia) {
  cp_shape p = {.type = CP_SHAPE_PLANE}, n = {.type = CP_SHAPE_NONE};
  double In[9];
  cr_assert_eq(cp_shape_inertia(&p, 1, In), -1);
  cr_assert_eq(cp_shape_inertia(&n, 1, In), -1);
  cr_assert_str_eq(cp_shape_type_name(CP_SHAPE_CAPSULE), "capsule");
  mt_assert_no_leaks();
}

Test(shape, scene_uses_shape_inertia_unless_given) {
  const char *t =
      "{\"contacts\": [], \"bodies\": ["
      "{\"name\": \"c\", \"mass\": 2, \"shape\": {\"type\": \"cylinder\", "
      "\"radius\": 0.1, \"length\": 0.6}},"
      "{\"name\": \"d\", \"mass\": 2, \"shape\": {\"type\": \"cylinder\", "
      "\"radius\": 0.1, \"length\": 0.6}, \"inertia\": [[1, 0.1, 0], [0.1, 2, "
      "0], [0, 0, 3]]}]}";
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  cr_assert_float_eq(s.bodies[0].inertia[0], 2 * (3 * 0.01 + 0.36) / 12, 1e-16);
  cr_assert_float_eq(s.bodies[0].inertia[8], 0.5 * 2 * 0.01, 1e-16);
  cr_assert_float_eq(s.bodies[1].inertia[1], 0.1, 0);
  cr_assert_float_eq(s.bodies[1].inertia[8], 3, 0);
  cr_assert(s.bodies[1].inertia_given);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}
