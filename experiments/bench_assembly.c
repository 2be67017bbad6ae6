/* Assembly stability and sequence planning against the number of parts
 * (issue 11; planner/assembly.h). Scenes: towers of n blocks, and walls of
 * n blocks laid in rows of up to 6 side by side (every neighbour touches),
 * 0.2 x 0.2 x 0.1 m, 1 kg, mu 0.5, on a ground plane; contacts generated
 * from the shapes. For each scene, side by side in one run:
 *   check  one full stability check of the whole assembly (scene copy,
 *          contact generation, system, equilibrium LP, energy test / MILP):
 *          median time and checks per second;
 *   lp     the equilibrium question alone (what the sequence search asks);
 *   plan   the whole sequence search (cp_assembly_plan, six directions);
 * and the ratio plan / check. Times are thread CPU time (the machine is
 * shared); medians of repeated runs. Target: a 30-block wall's check < 1 s. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/scene.h"
#include "planner/assembly.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* n blocks: a tower (wall = 0) or rows of up to 6 (wall = 1). */
static char *scene_text(int n, int wall) {
  char *s = malloc(4096 + (size_t)n * 256), *p = s;
  p += sprintf(p, "{\"friction\": {\"default\": 0.5}, \"bodies\": [{\"name\": \"ground\","
                  " \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1]}}");
  const int per_row = wall ? 6 : 1;
  for (int i = 0; i < n; i++) {
    const int row = i / per_row, col = i % per_row;
    p += sprintf(p, ", {\"name\": \"b%d\", \"mass\": 1, \"shape\": {\"type\": \"box\","
                    " \"size\": [0.2, 0.2, 0.1]}, \"position\": [%.17g, 0, %.17g]}",
                 i, 0.2 * col, 0.05 + 0.1 * row);
  }
  sprintf(p, "]}");
  return s;
}

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  const int sizes[] = {2, 4, 8, 12, 16, 20, 25, 30};
  printf("# bench_assembly (median of %d runs, thread CPU time)\n\n", reps);
  printf("| scene | parts | contacts | kind | check [ms] | checks/s | lp [ms] | plan [ms] | explored | plan / check |\n");
  printf("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (int wall = 0; wall < 2; wall++)
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
      const int n = sizes[si];
      char *text = scene_text(n, wall);
      cp_scene sc;
      cp_error err;
      cp_scene_options so = cp_scene_options_defaults();
      if (cp_scene_parse(text, strlen(text), NULL, &so, &sc, &err)) {
        fprintf(stderr, "scene: %s: %s\n", err.where, err.msg);
        return 1;
      }
      free(text);
      const uint64_t all = n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
      double *t_check = malloc(sizeof(double) * (size_t)reps);
      double *t_lp = malloc(sizeof(double) * (size_t)reps);
      double *t_plan = malloc(sizeof(double) * (size_t)reps);
      const char *kind = "?";
      int explored = 0;
      cp_stability_options full = cp_stability_defaults(), eq = full;
      eq.depth = CP_STABILITY_EQUILIBRIUM;
      eq.try_solve = 0;
      for (int r = 0; r < reps; r++) {
        cp_stability_result res;
        double t0 = now();
        if (cp_assembly_stability(&sc, all, &full, &res, NULL, NULL, NULL, &err)) return 1;
        t_check[r] = now() - t0;
        kind = cp_stability_kind_name(res.kind);
        cp_stability_result_free(&res);
        t0 = now();
        if (cp_assembly_stability(&sc, all, &eq, &res, NULL, NULL, NULL, &err)) return 1;
        t_lp[r] = now() - t0;
        cp_stability_result_free(&res);
        cp_assembly_result ar;
        t0 = now();
        cp_assembly_plan(&sc, NULL, &ar);
        t_plan[r] = now() - t0;
        explored = ar.explored;
        if (ar.status != CP_ASSEMBLY_FOUND) kind = "plan failed";
        cp_assembly_result_free(&ar);
      }
      const double c = median(t_check, reps), l = median(t_lp, reps), p = median(t_plan, reps);
      printf("| %s | %d | %d | %s | %.2f | %.0f | %.2f | %.1f | %d | %.1f |\n",
             wall ? "wall" : "tower", n, sc.n_contacts, kind, 1e3 * c, 1.0 / c, 1e3 * l,
             1e3 * p, explored, p / c);
      fflush(stdout);
      free(t_check);
      free(t_lp);
      free(t_plan);
      cp_scene_free(&sc);
    }
  return 0;
}
