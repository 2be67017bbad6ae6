// Whole scenes: parse (models/scene.c) then generate automatic contacts
// (models/contactgen.c), load from a file, deep copy. See models/scene.h.
//
// Data flows one way: scene.c parses and answers queries about a scene;
// contactgen.c turns a scene's shapes at its current state into contacts
// (using those queries); this file composes the two for the callers that
// want a scene with its contacts, and the simulator (planner/sim/world.c) calls
// contactgen.c itself at every step.
#include <stdlib.h>
#include <string.h>

#include "models/contactgen.h"
#include "models/mesh.h"
#include "models/scene.h"

int cp_scene_parse(const char *text, size_t len, const char *base_dir,
                   const cp_scene_options *opts, cp_scene *scene,
                   cp_error *err) {
  cp_scene_options def = cp_scene_options_defaults();
  if (!opts) opts = &def;
  if (cp_scene_parse_geometry(text, len, base_dir, opts, scene, err))
    return -1;
  if (!scene->contacts_auto) return 0;
  if (cp_scene_generate_contacts(scene, NULL, err)) {
    cp_scene_free(scene);
    return -1;
  }
  cp_error serr;
  if (opts->check_normal_speed && cp_scene_check_normal_speeds(scene, &serr)) {
    // There is no contacts[j] in the file: point at "contacts" instead.
    cp_error_setc(err, serr.code, "contacts", "generated %s", serr.msg);
    cp_scene_free(scene);
    return -1;
  }
  return 0;
}

int cp_scene_load(const char *path, const cp_scene_options *opts,
                  cp_scene *scene, cp_error *err) {
  memset(scene, 0, sizeof *scene);
  size_t n = 0;
  char *buf = cp_read_file(path, &n, err);
  if (!buf) return -1;
  // base_dir: everything up to the last '/', or "." for a bare file name.
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path))
                    : strdup(".");
  int rc = dir ? cp_scene_parse(buf, n, dir, opts, scene, err)
               : cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  free(dir);
  free(buf);
  return rc;
}

static int dup_to(char **dst, const char *src) {
  *dst = NULL;
  if (!src) return 0;
  return (*dst = strdup(src)) ? 0 : -1;
}

/* Deep copy of n friction (or restitution) pairs into *dst. On failure
 * *n_dst counts the entries to free (their names may be NULL). */
static int copy_pairs(const cp_friction_pair *src, int n, cp_friction_pair **dst, int *n_dst) {
  *dst = NULL;
  *n_dst = 0;
  if (!n) return 0;
  if (!(*dst = calloc((size_t)n, sizeof **dst))) return -1;
  for (int i = 0; i < n; ++i) {
    *n_dst = i + 1;
    (*dst)[i].mu = src[i].mu;
    if (dup_to(&(*dst)[i].a, src[i].a) || dup_to(&(*dst)[i].b, src[i].b)) return -1;
  }
  return 0;
}

int cp_scene_copy(const cp_scene *src, cp_scene *dst) {
  memset(dst, 0, sizeof *dst);
  cp_scene d = *src;
  d.pairs = d.epairs = NULL;
  d.bodies = NULL;
  d.manips = NULL;
  d.contacts = NULL;
  d.base_dir = NULL;
  d.warnings = NULL;
  d.ignore = NULL;
  d.n_ignore = 0;
  d.n_pairs = d.n_epairs = d.n_bodies = d.n_manips = d.n_contacts = d.n_warnings = 0;
  int rc = copy_pairs(src->pairs, src->n_pairs, &d.pairs, &d.n_pairs);
  if (!rc && src->n_ignore) {
    size_t n = 2 * (size_t)src->n_ignore * sizeof *d.ignore;
    if (!(d.ignore = malloc(n))) rc = -1;
    else {
      memcpy(d.ignore, src->ignore, n);
      d.n_ignore = src->n_ignore;
    }
  }
  if (!rc) rc = copy_pairs(src->epairs, src->n_epairs, &d.epairs, &d.n_epairs);
  if (!rc && src->n_bodies) {
    d.bodies = calloc((size_t)src->n_bodies, sizeof *d.bodies);
    if (!d.bodies) rc = -1;
    for (int i = 0; !rc && i < src->n_bodies; ++i) {
      d.n_bodies = i + 1;
      d.bodies[i] = src->bodies[i];
      d.bodies[i].name = NULL;
      if (d.bodies[i].shape.type == CP_SHAPE_MESH)
        cp_mesh_retain(d.bodies[i].shape.mesh);
      if (dup_to(&d.bodies[i].name, src->bodies[i].name)) rc = -1;
    }
  }
  if (!rc && src->n_manips) {
    d.manips = calloc((size_t)src->n_manips, sizeof *d.manips);
    if (!d.manips) rc = -1;
    for (int i = 0; !rc && i < src->n_manips; ++i) {
      d.n_manips = i + 1;
      if (cp_chain_copy(&d.manips[i], &src->manips[i])) rc = -1;
    }
  }
  if (!rc && src->n_contacts) {
    d.contacts = malloc((size_t)src->n_contacts * sizeof *d.contacts);
    if (!d.contacts) rc = -1;
    else {
      memcpy(d.contacts, src->contacts,
             (size_t)src->n_contacts * sizeof *d.contacts);
      d.n_contacts = src->n_contacts;
    }
  }
  if (!rc && dup_to(&d.base_dir, src->base_dir)) rc = -1;
  /* The warnings too: a copy sharing them would free them twice. */
  if (!rc && src->n_warnings) {
    d.warnings = calloc((size_t)src->n_warnings, sizeof *d.warnings);
    if (!d.warnings) rc = -1;
    for (int i = 0; !rc && i < src->n_warnings; ++i) {
      d.n_warnings = i + 1;
      if (dup_to(&d.warnings[i], src->warnings[i])) rc = -1;
    }
  }
  if (rc) {
    cp_scene_free(&d);
    return -1;
  }
  *dst = d;
  return 0;
}
