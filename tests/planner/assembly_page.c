/* Test helper for browser_assembly.py: plans SCENE's assembly sequence,
 * writes its viewer page and the part poses the page must show after
 * seek(i), from the animation's closed form (planner/view/assembly.h): in
 * step k part P_k is at final - (1 - s) D d_k, s = (i - k F) / F clamped to
 * [0, 1], its orientation the scene's.
 * usage: assembly_page SCENE OUTDIR -> OUTDIR/page.html, OUTDIR/expected.json */
#include <stdio.h>
#include <stdlib.h>

#include "planner/assembly/assembly.h"
#include "planner/view/assembly.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: assembly_page SCENE OUTDIR\n");
    return 2;
  }
  cp_scene sc;
  cp_error err;
  if (cp_assembly_load_scene(argv[1], &sc, &err)) {
    fprintf(stderr, "%s: %s: %s\n", argv[1], err.where, err.msg);
    return 1;
  }
  cp_assembly_result res;
  if (cp_assembly_plan(&sc, NULL, &res) != CP_ASSEMBLY_FOUND) {
    fprintf(stderr, "%s: no sequence found\n", argv[1]);
    return 1;
  }
  const cp_assembly_anim_options o = cp_assembly_anim_defaults();
  char path[4096];
  snprintf(path, sizeof path, "%s/page.html", argv[2]);
  if (cp_assembly_write_page(&sc, &res, &o, path, &err) != CP_VIEWER_OK) {
    fprintf(stderr, "%s: %s\n", err.where, err.msg);
    return 1;
  }
  const int F = o.frames_per_step, nf = res.n_steps * F + 1;
  const double D = cp_assembly_anim_distance(&sc, &o);
  snprintf(path, sizeof path, "%s/expected.json", argv[2]);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "{\"frames\": %d, \"seconds_per_step\": %.17g, \"parts\": [", nf, o.step_seconds);
  for (int k = 0; k < res.n_steps; k++)
    fprintf(f, "%s\"%s\"", k ? ", " : "", sc.bodies[res.steps[k].body].name);
  fprintf(f, "],\n \"poses\": {");
  for (int i = 0, first = 1; i < nf; i += F / 2) {
    fprintf(f, "%s\n  \"%d\": {", first ? "" : ",", i);
    first = 0;
    for (int k = 0; k < res.n_steps; k++) {
      const cp_body *b = &sc.bodies[res.steps[k].body];
      double s = (double)(i - k * F) / F;
      s = s < 0 ? 0 : s > 1 ? 1 : s;
      fprintf(f, "%s\"%s\": {\"position\": [", k ? ", " : "", b->name);
      for (int a = 0; a < 3; a++)
        fprintf(f, "%s%.17g", a ? ", " : "", b->x[a] - (1.0 - s) * D * res.steps[k].direction[a]);
      fprintf(f, "], \"orientation\": [%.17g, %.17g, %.17g, %.17g]}", b->q[0], b->q[1], b->q[2],
              b->q[3]);
    }
    fprintf(f, "}");
  }
  fprintf(f, "\n}}\n");
  fclose(f);
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
  return 0;
}
