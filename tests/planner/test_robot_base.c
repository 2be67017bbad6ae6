/* Robot models (issue 23 item 4): a URDF root link's collision geometry is
 * fixed geometry of the manipulator (the Allegro palm holds a block), and
 * "ignore_pairs" removes body/link pairs from contact generation, with
 * patterns, and refuses names that match nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/contactgen.h"
#include "models/scene.h"
#include "planner/sim/world.h"
#include "tests/support.h"

#define ERD "robots/example-robot-data"
#define ALLEGRO ERD "/robots/allegro_hand_description/urdf/allegro_right_hand.urdf"

static int parse(const char *text, cp_scene *s, cp_error *e) {
  cp_scene_options so = cp_scene_options_defaults();
  return cp_scene_parse(text, strlen(text), NULL, &so, s, e);
}

/* The Allegro hand turned so that the back of its palm faces up (the base
 * turned +90 deg about y: the palm's -x face up), every joint held, a 3 cm
 * cube dropped 1 mm above the palm's face: it comes to rest on the palm.
 * Nothing else is below it (without the palm it falls freely). */
Test(robot_base, the_allegro_palm_holds_a_block) {
  char pkg[2048], urdf[2048], joints[2048] = "", text[8192];
  snprintf(pkg, sizeof pkg, "%s", cpt_data(ERD));
  snprintf(urdf, sizeof urdf, "%s", cpt_data(ALLEGRO));
  for (int j = 0; j < 16; ++j) {
    size_t n = strlen(joints);
    snprintf(joints + n, sizeof joints - n,
             "%s\"joint_%d.0\": {\"position\": %s, \"acceleration\": 0}",
             j ? ", " : "", j, j == 12 ? "0.5" : "0");
  }
  /* Palm box (URDF): size (0.0408, 0.113, 0.095) at (-0.0093, 0, -0.0475)
   * in the base frame; turned, its -x face is at world z = 0.2 + 0.0297,
   * centred at x = -0.0475. */
  const double top = 0.2 + 0.0093 + 0.0204;
  snprintf(text, sizeof text,
           "{\"gravity\": [0, 0, -9.81], \"packages\": {\"example-robot-data\":"
           " \"%s\"}, \"bodies\": [{\"name\": \"cube\", \"mass\": 0.05,"
           " \"shape\": {\"type\": \"box\", \"size\": [0.03, 0.03, 0.03]},"
           " \"position\": [-0.0475, 0, %.17g]}], \"manipulators\": [{\"name\":"
           " \"hand\", \"urdf\": \"%s\", \"base\": {\"position\": [0, 0, 0.2],"
           " \"orientation\": [0.7071067811865476, 0, 0.7071067811865476, 0]},"
           " \"state\": {%s}}]}",
           pkg, top + 0.016, urdf, joints);
  cp_scene s;
  cp_error e;
  cr_assert_eq(parse(text, &s, &e), 0, "%s: %s", e.where, e.msg);
  cr_assert_eq(s.n_bodies, 2);
  const cp_body *palm = &s.bodies[1];
  cr_assert_str_eq(palm->name, "hand:palm_link");
  cr_assert_eq(palm->fixed, 1);
  cr_assert_eq(palm->base_of, 1);
  cr_assert_eq(palm->shape.type, CP_SHAPE_BOX);
  cr_assert_float_eq(palm->x[0], -0.0475, 1e-12);
  cr_assert_float_eq(palm->x[2], 0.2 + 0.0093, 1e-12);
  cp_world_options o = cp_world_defaults();
  o.dt = 1e-3;
  cp_world *w;
  cr_assert_eq(cp_world_create(&s, &o, &w, &e), CP_WORLD_OK, "%s", e.msg);
  for (int k = 0; k < 500; ++k)
    cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK, "step %d: %s", k,
                 cp_world_message(w));
  double x[13 + 2 * 16];
  cr_assert_eq(cp_world_state_size(w), 13 + 2 * 16);
  cp_world_get_state(w, x);
  cr_assert(fabs(x[2] - (top + 0.015)) < 1e-3,
            "cube at z %g, resting on the palm at %g", x[2], top + 0.015);
  cr_assert(fabs(x[7]) + fabs(x[8]) + fabs(x[9]) < 1e-2, "at rest");
  cp_world_destroy(w);
  cp_scene_free(&s);
}

/* A one-link JSON arm whose box overlaps a fixed plate by 1 cm: contact
 * generation refuses the overlap; "ignore_pairs" (by name or pattern)
 * removes the pair and only that pair. */
static const char *arm_scene =
    "{\"bodies\": [{\"name\": \"plate\", \"fixed\": true, \"shape\": {\"type\":"
    " \"box\", \"size\": [0.2, 0.2, 0.02]}, \"position\": [0, 0, 0]},"
    " {\"name\": \"ball\", \"mass\": 0.1, \"shape\": {\"type\": \"sphere\","
    " \"radius\": 0.02}, \"position\": [0.05, 0.05, 0.03]}],"
    " \"manipulators\": [{\"name\": \"arm\", \"joints\": ["
    "  {\"name\": \"j1\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
    "   \"link\": {\"name\": \"base_link\", \"mass\": 1, \"shape\": {\"type\":"
    "   \"box\", \"size\": [0.04, 0.04, 0.04]}}},"
    "  {\"name\": \"j2\", \"type\": \"prismatic\", \"axis\": [0, 1, 0],"
    "   \"origin\": {\"position\": [-0.06, 0, 0.3]},"
    "   \"link\": {\"name\": \"tip_link\", \"mass\": 1, \"shape\": {\"type\":"
    "   \"box\", \"size\": [0.04, 0.04, 0.04]}}}]}]%s}";

/* Parsing a scene with automatic contacts generates them. */
static int gen(const char *extra, cp_scene *s, cp_error *e) {
  char text[4096];
  snprintf(text, sizeof text, arm_scene, extra);
  return parse(text, s, e);
}

Test(robot_base, ignore_pairs_remove_exactly_the_named_pairs) {
  cp_scene s;
  cp_error e;
  cr_assert_neq(gen("", &s, &e), 0, "the overlap is refused");
  cr_assert_eq(e.code, CP_ERR_OVERLAP, "%s", e.msg);
  cr_assert(strstr(e.msg, "\"arm/base_link\" and \"plate\" overlap"), "%s", e.msg);
  cr_assert_eq(gen(", \"ignore_pairs\": [[\"plate\", \"arm/base_link\"]]", &s, &e),
               0, "%s", e.msg);
  cr_assert_eq(s.n_ignore, 1);
  cr_assert_eq(cp_scene_generate_contacts(&s, NULL, &e), 0, "%s", e.msg);
  /* The ball still rests on the plate: that pair is not ignored. */
  int ball_plate = 0;
  for (int i = 0; i < s.n_contacts; ++i) {
    const cp_contact *c = &s.contacts[i];
    cr_assert(!((c->a.manip == 0 && c->b.body == 0) ||
                (c->b.manip == 0 && c->a.body == 0)),
              "no plate-link contact");
    ball_plate += (c->a.body == 1 && c->b.body == 0) ||
                  (c->a.body == 0 && c->b.body == 1);
  }
  cr_assert(ball_plate > 0, "the ball touches the plate");
  cp_scene_free(&s);
  /* A pattern: both links (and "*" patterns on either side). */
  cr_assert_eq(gen(", \"ignore_pairs\": [[\"arm/*_link\", \"pl*\"]]", &s, &e),
               0, "%s", e.msg);
  cr_assert_eq(s.n_ignore, 2);
  cp_scene copy;
  cr_assert_eq(cp_scene_copy(&s, &copy), 0);
  cr_assert_eq(copy.n_ignore, 2);
  cr_assert_eq(memcmp(copy.ignore, s.ignore, 4 * sizeof *s.ignore), 0);
  cp_scene_free(&copy);
  cp_scene_free(&s);
}

Test(robot_base, bad_ignore_pairs_name_the_place) {
  const char *bad[][3] = {
      {", \"ignore_pairs\": [[\"plate\", \"arm/nothing*\"]]", "ignore_pairs[0][1]",
       "names no body and no link"},
      {", \"ignore_pairs\": [[\"plate\"]]", "ignore_pairs[0]", "expected [name, name]"},
      {", \"ignore_pairs\": {\"plate\": 1}", "ignore_pairs", "expected an array"},
  };
  for (int i = 0; i < 3; ++i) {
    char text[4096];
    snprintf(text, sizeof text, arm_scene, bad[i][0]);
    cp_scene s;
    cp_error e;
    cr_assert_neq(parse(text, &s, &e), 0, "%s", bad[i][0]);
    cr_assert_str_eq(e.where, bad[i][1], "%s", e.msg);
    cr_assert(strstr(e.msg, bad[i][2]), "%s", e.msg);
  }
}
