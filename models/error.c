#include "models/error.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vset(cp_error *err, cp_error_code code, const char *where,
                 const char *fmt, va_list ap) {
  err->code = code;
  snprintf(err->where, sizeof err->where, "%s", where ? where : "");
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

int cp_error_set(cp_error *err, const char *where, const char *fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vset(err, CP_ERR_INPUT, where, fmt, ap);
  va_end(ap);
  return -1;
}

int cp_error_setc(cp_error *err, cp_error_code code, const char *where,
                  const char *fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vset(err, code, where, fmt, ap);
  va_end(ap);
  return -1;
}

const char *cp_error_code_name(cp_error_code code) {
  static const char *const names[CP_ERR_CODE_COUNT] = {
      "none", "input", "nomem", "overlap", "io", "unsupported", "numerical"};
  return (unsigned)code < CP_ERR_CODE_COUNT ? names[code] : "unknown";
}

static const char *file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

char *cp_file_source_read(const cp_file_source *src, const char *path,
                          const char *kind, size_t *len, cp_error *err) {
  return src ? src->read(src->ctx, path, kind, len, err)
             : cp_read_file(path, len, err);
}

char *cp_read_file(const char *path, size_t *len, cp_error *err) {
  /* O_NONBLOCK: opening a FIFO without a writer must not hang; the type is
   * checked on the open descriptor (no race with a rename in between). */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    cp_error_setc(err, CP_ERR_IO, "", "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    cp_error_setc(err, CP_ERR_IO, "", "cannot read %s: %s", path, strerror(errno));
    close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    cp_error_set(err, "", "cannot read %s: it is %s; only regular files are read",
                 path, file_kind(st.st_mode));
    close(fd);
    return NULL;
  }
  if (st.st_size > (off_t)CP_READ_FILE_MAX) {
    cp_error_set(err, "", "cannot read %s: it has %lld bytes, more than the limit of %d MiB",
                 path, (long long)st.st_size, CP_READ_FILE_MAX >> 20);
    close(fd);
    return NULL;
  }
  /* The file may change while it is read: never read past the cap. */
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = malloc(cap + 1);
  int bad = 0;
  while (buf) {
    if (n == cap) {
      if (cap > (size_t)CP_READ_FILE_MAX) { bad = 2; break; }
      size_t nc = cap * 2 > (size_t)CP_READ_FILE_MAX + 1 ? (size_t)CP_READ_FILE_MAX + 1 : cap * 2;
      char *t = realloc(buf, nc + 1);
      if (!t) { free(buf); buf = NULL; break; }
      buf = t;
      cap = nc;
    }
    ssize_t k = read(fd, buf + n, cap - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) { bad = 1; break; }
    if (k == 0) break;
    n += (size_t)k;
  }
  const int e = errno;
  close(fd);
  if (!buf || bad) {
    free(buf);
    if (bad == 2)
      cp_error_set(err, "", "cannot read %s: it grew beyond the limit of %d MiB", path,
                   CP_READ_FILE_MAX >> 20);
    else
      cp_error_setc(err, buf ? CP_ERR_IO : CP_ERR_NOMEM, "", "cannot read %s: %s", path, buf ? strerror(e) : "out of memory");
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}
