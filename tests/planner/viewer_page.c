/* Test helper for browser_viewer.py: writes the fixture's page and the
 * closed-form poses the page must show after seek(i).
 * usage: viewer_page OUTDIR  ->  OUTDIR/page.html, OUTDIR/expected.json */
#include <stdio.h>
#include <stdlib.h>

#include "viewer_fixture.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: viewer_page OUTDIR\n");
    return 2;
  }
  char path[4096];
  cp_viewer *v = vf_viewer();
  if (!v) return 1;
  snprintf(path, sizeof path, "%s/page.html", argv[1]);
  if (cp_viewer_write(v, path) != CP_VIEWER_OK) {
    fprintf(stderr, "cp_viewer_write: %s\n", cp_viewer_message(v));
    cp_viewer_destroy(v);
    return 1;
  }
  cp_viewer_destroy(v);

  snprintf(path, sizeof path, "%s/expected.json", argv[1]);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "{\"frames\": %d, \"bodies\": [", VF_FRAMES);
  for (int k = 0; k < VF_BODIES; ++k)
    fprintf(f, "%s\"%s\"", k ? ", " : "", vf_names[k]);
  fprintf(f, "],\n \"time\": [");
  for (int i = 0; i < VF_FRAMES; ++i) {
    double t, x[VF_STATE];
    vf_state(i, &t, x);
    fprintf(f, "%s%.17g", i ? ", " : "", t);
  }
  fprintf(f, "],\n \"poses\": {");
  static const int check[] = {0, 1, 17, 33, VF_FRAMES - 1};
  for (size_t c = 0; c < sizeof check / sizeof *check; ++c) {
    int i = check[c];
    fprintf(f, "%s\n  \"%d\": {", c ? "," : "", i);
    for (int k = 0; k < VF_BODIES; ++k) {
      double p[3], q[4];
      vf_expected(i, k, p, q);
      fprintf(f,
              "%s\"%s\": {\"position\": [%.17g, %.17g, %.17g], "
              "\"orientation\": [%.17g, %.17g, %.17g, %.17g]}",
              k ? ", " : "", vf_names[k], p[0], p[1], p[2], q[0], q[1], q[2],
              q[3]);
    }
    fprintf(f, "}");
  }
  fprintf(f, "}}\n");
  if (fclose(f) != 0) {
    perror(path);
    return 1;
  }
  return 0;
}
