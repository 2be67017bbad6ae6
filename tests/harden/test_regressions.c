/* Replays every file of tests/fuzz/regressions/TARGET/ through the fuzz targets (any
 * compiler; under ASan/UBSan in the sanitizer build): inputs that once
 * broke a parser, or the hostile examples, must be handled. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/targets.h"
#include "tests/support.h"

static void replay(const char *target, int (*fn)(const uint8_t *, size_t)) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/../fuzz/regressions/%s", cpt_data(""), target);
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len;
    char *data = cpt_read_file(path, &len);
    cr_assert_not_null(data, "%s", path);
    cr_assert_eq(fn((const uint8_t *)data, len), 0, "%s", path);
    free(data);
    count++;
  }
  closedir(d);
  cr_assert_gt(count, 0, "no regression inputs in %s", dir);
}

Test(regressions, lcp_json) { replay("lcp_json", cpf_lcp_json); }
Test(regressions, lcp_dat) { replay("lcp_dat", cpf_lcp_dat); }
Test(regressions, scene) { replay("scene", cpf_scene); }
Test(regressions, urdf) { replay("urdf", cpf_urdf); }
Test(regressions, task) {
  /* relative scene paths resolve as from planner/tasks (as in run.sh) */
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert_not_null(root);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/planner/tasks", root);
  setenv("CP_FUZZ_TASK_DIR", dir, 1);
  replay("task", cpf_task);
}
