/* Atomic output files and their signal-safe cleanup (planner/io/outfile.h). */
#include "planner/io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct cp_outfile {
  FILE *f;
  char *path, *tmp;
  int slot;
};

/* The cleanup list: a slot holds a pending temporary file's name. Claimed
 * and released with atomic operations, read by the signal handler. */
static _Atomic(char *) pending[CP_OUTFILE_MAX_PENDING];

void cp_outfile_remove_pending(void) {
  for (int i = 0; i < CP_OUTFILE_MAX_PENDING; ++i) {
    char *p = atomic_load(&pending[i]);
    if (p) unlink(p);
  }
}

static int claim(char *tmp) {
  for (int i = 0; i < CP_OUTFILE_MAX_PENDING; ++i) {
    char *expected = NULL;
    if (atomic_compare_exchange_strong(&pending[i], &expected, tmp)) return i;
  }
  return -1;
}

static void release(int slot) {
  if (slot >= 0) atomic_store(&pending[slot], NULL);
}

static void on_signal(int sig) {
  int saved = errno;
  cp_outfile_remove_pending();
  signal(sig, SIG_DFL);
  raise(sig);
  errno = saved;
}

void cp_outfile_catch_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; ++i) {
    struct sigaction old;
    if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

/* Six letters or digits for a temporary name: a different draw per call
 * (time, process, counter) through splitmix64; O_EXCL settles clashes. */
static void random_suffix(char *out) {
  static const char set[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static atomic_uint_fast64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
               ((uint64_t)getpid() << 20) ^
               (atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  for (int i = 0; i < 6; ++i, z /= 62) out[i] = set[z % 62];
  out[6] = '\0';
}

static void free_outfile(cp_outfile *o) {
  free(o->path);
  free(o->tmp);
  free(o);
}

cp_outfile *cp_outfile_open(const char *path, cp_error *err) {
  if (!path || !*path) {
    cp_error_set(err, "", "no output file name");
    return NULL;
  }
  cp_outfile *o = calloc(1, sizeof *o);
  size_t n = strlen(path) + 8;
  if (o) {
    o->slot = -1;
    o->path = strdup(path);
    o->tmp = malloc(n);
  }
  if (!o || !o->path || !o->tmp) {
    if (o) free_outfile(o);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return NULL;
  }
  /* A folder in the way: said now, before any work is done for it (a
   * rename onto it would fail at the end). */
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    cp_error_setc(err, CP_ERR_IO, "", "%s: cannot create: %s", path, strerror(EISDIR));
    free_outfile(o);
    return NULL;
  }
  int fd = -1, e = EEXIST;
  for (int tries = 0; fd < 0 && e == EEXIST && tries < 100; ++tries) {
    memcpy(o->tmp, path, n - 8);
    o->tmp[n - 8] = '.';
    random_suffix(o->tmp + n - 7);
    /* Mode 0666: the kernel takes the umask off, as for any new file. */
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = fd < 0 ? errno : 0;
  }
  if (fd < 0) {
    cp_error_setc(err, CP_ERR_IO, "", "%s: cannot create: %s", path, strerror(e));
    free_outfile(o);
    return NULL;
  }
  o->slot = claim(o->tmp);
  o->f = o->slot >= 0 ? fdopen(fd, "w") : NULL;
  if (!o->f) {
    e = o->slot < 0 ? EMFILE : errno;
    close(fd);
    unlink(o->tmp);
    release(o->slot);
    cp_error_setc(err, CP_ERR_IO, "", "%s: cannot create: %s", path,
                 o->slot < 0 ? "too many output files at once" : strerror(e));
    free_outfile(o);
    return NULL;
  }
  return o;
}

FILE *cp_outfile_stream(cp_outfile *o) { return o->f; }

/* The test hook (header): wait on the FIFO named by the environment. */
static void test_hold(void) {
  const char *fifo = getenv("COMPLAN_TEST_HOLD_OUTPUT");
  if (!fifo || !*fifo) return;
  int fd = open(fifo, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  close(fd);
}

int cp_outfile_commit(cp_outfile *o, cp_error *err) {
  errno = 0;
  int bad = fflush(o->f) != 0 || ferror(o->f);
  int e = bad ? (errno ? errno : EIO) : 0;
  if (!bad) test_hold();
  if (!bad && fsync(fileno(o->f)) != 0 && errno != EINVAL) {
    bad = 1;
    e = errno;
  }
  if (fclose(o->f) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (!bad && rename(o->tmp, o->path) != 0) {
    bad = 1;
    e = errno;
  }
  if (bad) {
    unlink(o->tmp);
    cp_error_setc(err, CP_ERR_IO, "", "%s: cannot write: %s", o->path, strerror(e));
  }
  release(o->slot);
  free_outfile(o);
  return bad ? -1 : 0;
}

void cp_outfile_discard(cp_outfile *o) {
  if (!o) return;
  fclose(o->f);
  unlink(o->tmp);
  release(o->slot);
  free_outfile(o);
}

int cp_outfile_write_all(const char *path, const char *text, size_t len,
                         cp_error *err) {
  cp_outfile *o = cp_outfile_open(path, err);
  if (!o) return -1;
  fwrite(text, 1, len, o->f);
  return cp_outfile_commit(o, err);
}
