/// \file python/bind.c
/// Small helpers for the Python package (python/complan) where reading the
/// C structs from ctypes would mean mirroring deep chains of them. Compiled
/// into the shared libcomplan only (meson.build), like python/abi.c.
#include <stdio.h>

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
