/* Allocation-failure injection for tests/harden/test_oom.c (issue 12).
 *
 * The test executable is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=strdup,--wrap=strndup: every call of those functions
 * from complan's own code (the static library is linked into the test) and
 * from the test comes here instead. jansson and libxml2 are shared
 * libraries, so --wrap does not reach them directly, but complan sets their
 * allocators to functions of its own that call malloc (models/jsonread.c,
 * models/urdf.c: that is how it tells "out of memory" from bad input), so
 * their allocations come here too. GLPK, ODE, OpenBLAS and LAPACKE allocate
 * through paths that cannot be redirected and are not injected (see
 * test_oom.c).
 *
 * While armed, allocations are counted; the fail_at-th one returns NULL
 * (one failure per run: the sweep then moves fail_at on, as SQLite's
 * tests do). The real functions are reached as __real_* (the linker's
 * names), which under the sanitizers are ASan's own interceptors, so leak
 * and overflow detection stay intact. */
#include "tests/harden/oomhook.h"

#include <execinfo.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

cpt_oom_state cpt_oom = {0, 0, 0, 0};

/* 1 when this allocation is to fail. */
static int tick(void) {
  if (!cpt_oom.armed) return 0;
  if (++cpt_oom.count != cpt_oom.fail_at) return 0;
  cpt_oom.failed = 1;
  const char *tr = getenv("CPT_OOM_TRACE"); /* debugging aid: CPT_OOM_TRACE=k writes where allocation k fails to /tmp/cpt_oom_trace.txt */
  if (tr && atol(tr) == cpt_oom.fail_at) {
    void *bt[24];
    const int fd = open("/tmp/cpt_oom_trace.txt", O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) { /* not stderr: the CLI sweep redirects it */
      backtrace_symbols_fd(bt, backtrace(bt, 24), fd);
      close(fd);
    }
  }
  return 1;
}

void *__wrap_malloc(size_t size) { return tick() ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t n, size_t size) { return tick() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t size) { return tick() ? NULL : __real_realloc(p, size); }
char *__wrap_strdup(const char *s) { return tick() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return tick() ? NULL : __real_strndup(s, n); }

void cpt_oom_arm(long fail_at) {
  cpt_oom.count = 0;
  cpt_oom.failed = 0;
  cpt_oom.fail_at = fail_at;
  cpt_oom.armed = 1;
}

long cpt_oom_disarm(void) {
  cpt_oom.armed = 0;
  return cpt_oom.count;
}

int cpt_oom_pause(void) {
  const int armed = cpt_oom.armed;
  cpt_oom.armed = 0;
  return armed;
}

void cpt_oom_resume(int armed) { cpt_oom.armed = armed; }
