/* Assembly stability and sequence planning against the number of parts
 * (issue 11; planner/assembly/assembly.h). Scenes: towers of n blocks, and walls of
 * n blocks laid in rows of up to 6 side by side (every neighbour touches),
 * 0.2 x 0.2 x 0.1 m, 1 kg, mu 0.5, on a ground plane; contacts generated
 * from the shapes. For each scene, side by side in one run:
 *   check  one full stability check of the whole assembly (scene copy,
 *          contact generation, system, equilibrium LP, energy test / MILP):
 *          median time and checks per second;
 *   lp     the equilibrium question alone (what the sequence search asks);
 *   plan   the whole sequence search (cp_assembly_plan, six directions);
 * and the ratio plan / check. Times are thread CPU time (the machine is
 * shared); medians of repeated runs. Target: a 30-block wall's check < 1 s.
 *
 * `bench_assembly milp [LIMIT]`: the strong/weak decision where only
 * friction holds (the energy test cannot decide), before and after, side by
 * side in one run: the per-dof MILPs of session 2 (CP_STABILITY_MILP_PER_COORD)
 * and the one energy MILP followed by the band (CP_STABILITY_MILP_ENERGY),
 * each with the wall-clock limit LIMIT s (default 60), no contact solve
 * first (try_solve = 0, so the MILPs decide). Scenes: a box on a 0.4 rad
 * slope (mu = 1.2 tan), the bundled friction_stack.json and arch.json (run
 * from the source root). Thread CPU time, verdict and MILPs per side. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scene.h"
#include "models/clock.h"
#include "planner/assembly/assembly.h"

static double now(void) { return cp_clock_thread_cpu(); }

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

static int bench_milp(double limit) {
  static const char slope[] =
      "{\"friction\": {\"default\": 0.507}, \"bodies\": [{\"name\": \"slope\", \"fixed\": true,"
      " \"shape\": {\"type\": \"plane\", \"normal\": [-0.389418342308651, 0, 0.921060994002885]}},"
      " {\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]},"
      " \"position\": [-0.0194709171, 0, 0.0460530497], \"orientation\": [0.980066577841242, 0, -0.198669330795061, 0]}]}";
  const char *names[] = {"slope (box, 0.4 rad)", "models/scenes/friction_stack.json",
                         "models/scenes/arch.json"};
  printf("# bench_assembly milp (limit %g s wall clock per decision, thread CPU time)\n\n", limit);
  printf("| scene | parts | contacts | per-dof MILPs: kind | CPU [s] | MILPs | one MILP + band: kind | CPU [s] | MILPs | speed-up |\n");
  printf("|---|---:|---:|---|---:|---:|---|---:|---:|---:|\n");
  for (int i = 0; i < 3; i++) {
    cp_scene sc;
    cp_error err;
    if (i == 0) {
      cp_scene_options so = cp_scene_options_defaults();
      if (cp_scene_parse(slope, strlen(slope), NULL, &so, &sc, &err)) {
        fprintf(stderr, "slope: %s: %s\n", err.where, err.msg);
        return 1;
      }
    } else if (cp_assembly_load_scene(names[i], &sc, &err)) {
      fprintf(stderr, "%s: %s: %s\n", names[i], err.where, err.msg);
      return 1;
    }
    int pb[64];
    const int n = cp_assembly_parts(&sc, pb);
    const uint64_t all = n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
    double t[2];
    const char *kind[2];
    int milps[2];
    for (int how = 0; how < 2; how++) {
      cp_stability_options o = cp_stability_defaults();
      o.milp = how ? CP_STABILITY_MILP_ENERGY : CP_STABILITY_MILP_PER_COORD;
      o.try_solve = 0;
      o.time_limit_s = limit;
      cp_stability_result res;
      double t0 = now();
      if (cp_assembly_stability(&sc, all, &o, &res, NULL, NULL, NULL, &err)) return 1;
      t[how] = now() - t0;
      kind[how] = cp_stability_kind_name(res.kind);
      milps[how] = res.mip_solves;
      cp_stability_result_free(&res);
    }
    printf("| %s | %d | %d | %s | %.2f | %d | %s | %.2f | %d | %.1f |\n", names[i], n,
           sc.n_contacts, kind[0], t[0], milps[0], kind[1], t[1], milps[1], t[0] / t[1]);
    fflush(stdout);
    cp_scene_free(&sc);
  }
  return 0;
}

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  if (argc > 1 && !strcmp(argv[1], "milp")) return bench_milp(argc > 2 ? atof(argv[2]) : 60.0);
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
