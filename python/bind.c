/// \file python/bind.c
/// Small helpers for the Python package (python/complan) where reading the
/// C structs from ctypes would mean mirroring deep chains of them. Compiled
/// into the shared libcomplan only (meson.build), like python/abi.c.
#include <stdio.h>
#include <stdlib.h>

#include "complan.h"

int cp_py_joint_name(const cp_scene *scene, int m, int k, char *buf, size_t size);

/// Writes "manipulator/joint" for joint k of manipulator m (as the command
/// line names joints) into buf (size bytes, truncated, NUL-terminated);
/// returns the length the whole name needs, or -1 for indices out of range.
int cp_py_joint_name(const cp_scene *scene, int m, int k, char *buf, size_t size) {
  if (m < 0 || m >= scene->n_manips || k < 0 || k >= scene->manips[m].n) return -1;
  return snprintf(buf, size, "%s/%s", scene->manips[m].name, scene->manips[m].joints[k].name);
}

const char *cp_py_build(void);

/// The build string stored with every search run ("complan 0.1.0 (release,
/// gcc 14.2.0)", meson.build's CP_BUILD): the package's __version__ is read
/// from it, so the two cannot disagree.
const char *cp_py_build(void) { return CP_BUILD; }

int cp_py_joints(const cp_scene *scene, double *pv, int *manip, int *index);

/// Every joint of every manipulator in scene order, mimic followers
/// included (as `complan simulate --json` lists them under "final"): for
/// joint i its position and velocity in pv[2i], pv[2i+1] and its
/// manipulator and index in manip[i], index[i] (each array may be NULL).
/// Returns the number of joints.
int cp_py_joints(const cp_scene *scene, double *pv, int *manip, int *index) {
  int n = 0;
  for (int m = 0; m < scene->n_manips; m++)
    for (int k = 0; k < scene->manips[m].n; k++, n++) {
      if (pv) {
        pv[2 * n] = scene->manips[m].joints[k].position;
        pv[2 * n + 1] = scene->manips[m].joints[k].velocity;
      }
      if (manip) manip[n] = m;
      if (index) index[n] = k;
    }
  return n;
}

void cp_py_scene_auto_contacts(cp_scene *scene);

/// Drops the scene's explicit contact list: its contacts are generated from
/// the shapes from now on (what `complan simulate --auto-contacts` does to
/// the scene it loaded). A scene whose contacts are automatic is unchanged.
void cp_py_scene_auto_contacts(cp_scene *scene) {
  if (scene->contacts_auto) return;
  free(scene->contacts);
  scene->contacts = NULL;
  scene->n_contacts = 0;
  scene->contacts_auto = 1;
}

int cp_py_world_set_inputs(cp_world *w, const double *u, int n, int velocity, int *failed);

/// Sets the inputs of joint rows 0..n-1 from u in one call (World.step's
/// efforts from Python): cp_world_set_joint_velocity when velocity is
/// non-zero (the quasistatic stepper), else cp_world_set_effort. Stops at
/// the first row refused and returns its status with the row in *failed;
/// the rows before it keep their new inputs. CP_WORLD_OK when all are set.
int cp_py_world_set_inputs(cp_world *w, const double *u, int n, int velocity, int *failed) {
  for (int j = 0; j < n; j++) {
    cp_world_status st = velocity ? cp_world_set_joint_velocity(w, j, u[j])
                                  : cp_world_set_effort(w, j, u[j]);
    if (st != CP_WORLD_OK) {
      *failed = j;
      return (int)st;
    }
  }
  return CP_WORLD_OK;
}
