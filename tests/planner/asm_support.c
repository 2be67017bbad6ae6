#include "tests/planner/asm_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *cpt_slope_scene(double theta, double mu, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"friction\": {\"default\": %.17g}, \"bodies\": ["
           "{\"name\": \"slope\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
           "\"normal\": [%.17g, 0, %.17g], \"offset\": 0}},"
           "{\"name\": \"block\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.2, 0.2, 0.1]}, \"position\": [%.17g, 0, %.17g], "
           "\"orientation\": [%.17g, 0, %.17g, 0]}]}",
           mu, -sin(theta), cos(theta), -0.05 * sin(theta), 0.05 * cos(theta), cos(-theta / 2),
           sin(-theta / 2));
  return buf;
}

const char *cpt_bundled_scene(const char *name) {
  static char path[4][4096];
  static int k;
  k = (k + 1) % 4;
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path[k], sizeof path[k], "%s/models/scenes/%s", root ? root : ".", name);
  return path[k];
}

const char *cpt_wedged_scene(void) {
  return "{\"friction\": {\"default\": 0.8}, \"bodies\": ["
         "{\"name\": \"left\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": "
         "[0.1, 0.4, 0.4]}, \"position\": [-0.15, 0, 0.5]},"
         "{\"name\": \"right\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": "
         "[0.1, 0.4, 0.4]}, \"position\": [0.15, 0, 0.5]},"
         "{\"name\": \"block\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": "
         "[0.2, 0.2, 0.2]}, \"position\": [0, 0, 0.5]}]}";
}
