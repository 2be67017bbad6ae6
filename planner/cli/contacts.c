/* `complan contacts SCENE [--json]`: list a scene's contacts (docs/outputs.md)
 * -- those generated from the shapes ("contacts": "auto" or absent,
 * models/contactgen.h) or the explicit list (depth 0). Thin: the scene
 * parser does the work. */
#include <stdio.h>
#include <string.h>

#include "models/scene.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"

static const char head[] =
    "List the contacts of a scene: generated from the shapes' geometry when the\n"
    "scene's \"contacts\" is \"auto\" or absent, else its explicit list (depth 0).\n"
    "Each contact joins a and b (bodies by name, links as \"manipulator/link\");\n"
    "the normal points from b into a; depth > 0 is penetration, <= 0 touching\n"
    "(a gap no larger than the scene's touch_tolerance).\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 listed, 2 bad input or usage (penetration deeper than the\n"
    "scene's penetration_tolerance is bad input).\n";

int cp_cli_contacts(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL;
  int json = 0, no_speed_check = 0;
  const cp_cli_flag flags[] = {
      CP_CLI_BOOL("--json", &json,
                  "print one JSON document:\n"
                  "{\"contacts\": [{\"a\", \"b\", \"point\", \"normal\", \"depth\"}]}"),
      CP_CLI_BOOL("--no-speed-check", &no_speed_check,
                  "list the contacts even when a contact's normal\n"
                  "relative speed is not zero (an impact or separation)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "SCENE", &file, flags, sizeof flags / sizeof *flags, 0, cmd->usage};
  int rc = cp_cli_parse(&spec, argc, argv);
  if (rc != CP_CLI_GO) return rc;

  cp_scene_options opt = cp_scene_options_defaults();
  opt.check_normal_speed = !no_speed_check;
  cp_scene scene;
  cp_error err;
  if (cp_scene_load(file, &opt, &scene, &err))
    return cp_cli_input_error(file, &err);
  cp_cli_scene_warnings(file, &scene);

  rc = CP_EXIT_ANSWERED;
  if (json) {
    json_t *doc = json_object(), *list = json_array();
    for (int j = 0; j < scene.n_contacts; j++) {
      const cp_contact *c = &scene.contacts[j];
      json_t *o = json_object();
      json_object_set_new(o, "a", json_string(cp_cli_ref_name(&scene, c->a, 0)));
      json_object_set_new(o, "b", json_string(cp_cli_ref_name(&scene, c->b, 1)));
      json_object_set_new(o, "point", cp_json_vec(c->p, 3));
      json_object_set_new(o, "normal", cp_json_vec(c->n, 3));
      json_object_set_new(o, "depth", cp_json_num(c->depth));
      json_array_append_new(list, o);
    }
    json_object_set_new(doc, "contacts", list);
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %d contact%s (%s)\n", file, scene.n_contacts,
           scene.n_contacts == 1 ? "" : "s",
           scene.contacts_auto ? "generated from the shapes" : "explicit list");
    if (scene.n_contacts > 0)
      printf("%4s  %-18s %-18s %-32s %-26s %11s %6s\n", "#", "a", "b",
             "point [m]", "normal (b into a)", "depth [m]", "mu");
    for (int j = 0; j < scene.n_contacts; j++) {
      const cp_contact *c = &scene.contacts[j];
      char pt[64], nm[64];
      snprintf(pt, sizeof pt, "[%.4g, %.4g, %.4g]", c->p[0], c->p[1], c->p[2]);
      snprintf(nm, sizeof nm, "[%.4g, %.4g, %.4g]", c->n[0], c->n[1], c->n[2]);
      printf("%4d  %-18s %-18s %-32s %-26s %11.3g %6.3g\n", j,
             cp_cli_ref_name(&scene, c->a, 0),
             cp_cli_ref_name(&scene, c->b, 1), pt, nm, c->depth,
             c->mu);
    }
  }
  cp_scene_free(&scene);
  return rc;
}
