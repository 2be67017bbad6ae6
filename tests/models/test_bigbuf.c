// The large buffers of models/bigbuf.h: sizes and alignment on both sides of
// the threshold, zero-sized buffers, growth keeping the contents (within
// the heap, across the threshold, between mappings), calloc's zeros, the
// fallback, and a mapped buffer's release. Whether the kernel grants huge
// pages is not asserted (machines differ): only that the buffer is placed
// so that it can.
#define _GNU_SOURCE 1 // mincore, MAP_FIXED_NOREPLACE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "models/bigbuf.h"

// Whether this platform maps large buffers (as bigbuf.c decides).
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
#define MAPS 1
#else
#define MAPS 0
#endif

static int aligned(const void *p, size_t a) { return (uintptr_t)p % a == 0; }

// Byte i of a buffer filled by fill(p, n, seed).
static unsigned char pat(size_t i, unsigned seed) { return (unsigned char)(i * 131u + seed + i / 4099); }

static void fill(void *p, size_t n, unsigned seed) {
  unsigned char *c = p;
  for (size_t i = 0; i < n; ++i) c[i] = pat(i, seed);
}

static size_t first_diff(const void *p, size_t n, unsigned seed) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; ++i)
    if (c[i] != pat(i, seed)) return i;
  return n;
}

static size_t first_nonzero(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; ++i)
    if (c[i]) return i;
  return n;
}

Test(bigbuf, small_buffers_are_the_heaps) {
  const size_t sizes[] = {1, 8, 100, 4096, 65536, CP_BIGBUF_HUGE - 1};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
    void *p = cp_bigbuf_alloc(sizes[k]);
    cr_assert_not_null(p);
    cr_assert(aligned(p, 16), "16-byte aligned (doubles, SSE)");
    cr_assert_eq(cp_bigbuf_size(p), sizes[k], "exactly what was asked below the threshold");
    cr_assert_eq(cp_bigbuf_huge(p), 0);
    fill(p, sizes[k], 7);
    cr_assert_eq(first_diff(p, sizes[k], 7), sizes[k]);
    cp_bigbuf_free(p);
  }
}

Test(bigbuf, zero_size) {
  void *p = cp_bigbuf_alloc(0), *q = cp_bigbuf_calloc(0);
  cr_assert_not_null(p, "an empty buffer is a valid one");
  cr_assert_not_null(q);
  cr_assert_neq(p, q);
  cr_assert_eq(cp_bigbuf_size(p), 0);
  cr_assert_eq(cp_bigbuf_huge(p), 0);
  // Growing an empty buffer: nothing to keep, whatever keep says.
  size_t cap = 0;
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, 24, 24), 0);
  cr_assert_geq(cap, 24);
  cr_assert_eq(cap, cp_bigbuf_size(p));
  cp_bigbuf_free(p);
  cp_bigbuf_free(q);
  // NULL: nothing to free, no size; a grow to 0 leaves it NULL.
  cp_bigbuf_free(NULL);
  cr_assert_eq(cp_bigbuf_size(NULL), 0);
  cr_assert_eq(cp_bigbuf_huge(NULL), 0);
  void *n = NULL;
  cap = 0;
  cr_assert_eq(cp_bigbuf_grow(&n, &cap, 0, 0), 0);
  cr_assert_null(n);
  cr_assert_eq(cap, 0);
}

Test(bigbuf, large_buffers_are_aligned_mappings) {
  const size_t sizes[] = {CP_BIGBUF_HUGE, CP_BIGBUF_ALIGN, CP_BIGBUF_ALIGN + 1, 5 * CP_BIGBUF_ALIGN - 8};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
    double *p = cp_bigbuf_alloc(sizes[k]);
    cr_assert_not_null(p);
    const size_t cap = cp_bigbuf_size(p);
    cr_assert_geq(cap, sizes[k]);
    if (MAPS) {
      cr_assert(aligned(p, CP_BIGBUF_ALIGN), "buffer %zu at %p: 2 MB aligned", k, (void *)p);
      cr_assert_eq(cap % CP_BIGBUF_ALIGN, 0, "whole huge pages");
      cr_assert_lt(cap - sizes[k], CP_BIGBUF_ALIGN);
    } else {
      cr_assert_eq(cp_bigbuf_huge(p), 0);
    }
    if (cp_bigbuf_huge(p)) cr_assert(aligned(p, CP_BIGBUF_ALIGN));
    // Every byte of the usable size is there, and the last double too.
    fill(p, cap, 11);
    cr_assert_eq(first_diff(p, cap, 11), cap);
    p[cap / sizeof(double) - 1] = 1.5;
    cr_assert_eq(p[cap / sizeof(double) - 1], 1.5);
    cp_bigbuf_free(p);
  }
}

Test(bigbuf, calloc_zeroes_both_kinds) {
  // A dirtied and freed buffer first, so that the heap's next block may be
  // the same memory.
  const size_t sizes[] = {3000, CP_BIGBUF_HUGE - 16, CP_BIGBUF_HUGE, 3 * CP_BIGBUF_ALIGN + 40};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
    void *d = cp_bigbuf_alloc(sizes[k]);
    cr_assert_not_null(d);
    fill(d, sizes[k], 3);
    cp_bigbuf_free(d);
    void *p = cp_bigbuf_calloc(sizes[k]);
    cr_assert_not_null(p);
    cr_assert_eq(first_nonzero(p, cp_bigbuf_size(p)), cp_bigbuf_size(p), "size %zu", sizes[k]);
    cp_bigbuf_free(p);
  }
}

Test(bigbuf, growth_keeps_the_contents) {
  void *p = NULL;
  size_t cap = 0;
  // Within the heap.
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, 1000, 0), 0);
  cr_assert_eq(cap, 1000);
  fill(p, 1000, 5);
  void *same = p;
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, 800, 800), 0);
  cr_assert_eq(p, same, "large enough already: nothing moves");
  cr_assert_eq(cap, 1000);
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, 50000, 1000), 0);
  cr_assert_eq(cap, 50000);
  cr_assert_eq(first_diff(p, 1000, 5), 1000);
  // Across the threshold (keep larger than the old size: the old size).
  fill(p, 50000, 9);
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, CP_BIGBUF_HUGE + 12345, SIZE_MAX), 0);
  cr_assert_geq(cap, CP_BIGBUF_HUGE + 12345);
  cr_assert_eq(first_diff(p, 50000, 9), 50000);
  if (MAPS) cr_assert(aligned(p, CP_BIGBUF_ALIGN));
  // Within the mapping's rounding: nothing moves.
  same = p;
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, cap, 0), 0);
  cr_assert_eq(p, same);
  // Between mappings, keeping part.
  fill(p, cap, 13);
  const size_t old = cap;
  cr_assert_eq(cp_bigbuf_grow(&p, &cap, 3 * old, old / 2), 0);
  cr_assert_geq(cap, 3 * old);
  cr_assert_eq(first_diff(p, old / 2, 13), old / 2);
  if (MAPS) cr_assert(aligned(p, CP_BIGBUF_ALIGN));
  cp_bigbuf_free(p);
}

Test(bigbuf, fallback) {
  cp_bigbuf_force_fallback(1);
  double *p = cp_bigbuf_alloc(3 * CP_BIGBUF_ALIGN);
  cr_assert_not_null(p);
  cr_assert_eq(cp_bigbuf_huge(p), 0);
  cr_assert_eq(cp_bigbuf_size(p), 3 * CP_BIGBUF_ALIGN, "a heap block: exactly what was asked");
  cr_assert(aligned(p, 16));
  fill(p, 3 * CP_BIGBUF_ALIGN, 17);
  size_t cap = cp_bigbuf_size(p);
  cr_assert_eq(cp_bigbuf_grow((void **)&p, &cap, 4 * CP_BIGBUF_ALIGN, cap), 0);
  cr_assert_eq(cap, 4 * CP_BIGBUF_ALIGN);
  cr_assert_eq(first_diff(p, 3 * CP_BIGBUF_ALIGN, 17), 3 * CP_BIGBUF_ALIGN);
  void *z = cp_bigbuf_calloc(2 * CP_BIGBUF_ALIGN);
  cr_assert_not_null(z);
  cr_assert_eq(first_nonzero(z, 2 * CP_BIGBUF_ALIGN), 2 * CP_BIGBUF_ALIGN);
  cp_bigbuf_force_fallback(0);
  // A fallback buffer is freed as a heap one after the default is back,
  // and a mapped one grows from it keeping the contents.
  cp_bigbuf_free(z);
  cr_assert_eq(cp_bigbuf_grow((void **)&p, &cap, 5 * CP_BIGBUF_ALIGN, cap), 0);
  cr_assert_eq(first_diff(p, 3 * CP_BIGBUF_ALIGN, 17), 3 * CP_BIGBUF_ALIGN);
  if (MAPS) cr_assert(aligned(p, CP_BIGBUF_ALIGN));
  cp_bigbuf_free(p);
}

Test(bigbuf, mapped_buffer_is_released) {
  if (!MAPS) return;
  char *p = cp_bigbuf_alloc(2 * CP_BIGBUF_ALIGN);
  cr_assert_not_null(p);
  const size_t cap = cp_bigbuf_size(p), ps = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char vec[4];
  memset(p, 1, cap);
  // The buffer and its header's page are mapped, and nothing past the end.
  cr_assert_eq(mincore(p - ps, ps, vec), 0);
  cr_assert_eq(mincore(p + cap - ps, ps, vec), 0);
  cp_bigbuf_free(p);
  errno = 0;
  cr_assert_eq(mincore(p - ps, ps, vec), -1, "the header's page is unmapped");
  cr_assert_eq(errno, ENOMEM);
  cr_assert_eq(mincore(p + cap - ps, ps, vec), -1, "the buffer is unmapped");
}

// Whether the n bytes from p (page aligned) are all resident, without
// touching them; 0 also when mincore fails.
static int resident(const void *p, size_t n) {
  const size_t ps = (size_t)sysconf(_SC_PAGESIZE), pages = (n + ps - 1) / ps;
  unsigned char *vec = malloc(pages);
  cr_assert_not_null(vec);
  int all = mincore((void *)(uintptr_t)p, n, vec) == 0;
  for (size_t i = 0; all && i < pages; ++i) all = vec[i] & 1;
  free(vec);
  return all;
}

// Whether the addresses [p, p + n) are free now (a mapping there is tried
// and undone).
static int addresses_free(void *p, size_t n) {
  void *r = mmap(p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (r == MAP_FAILED) return 0;
  (void)munmap(r, n);
  return r == p; // (a kernel without the flag took it as a hint)
}

// A mapped buffer grows where it lies when the addresses after it are free:
// the same address, every byte it held, its pages still faulted in, the new
// part zero.
Test(bigbuf, regrow_in_place) {
  if (!MAPS) return;
  // Room after it: mappings are placed from the top down, so the buffer
  // lands just below a larger one made first, which is then released (a
  // hole elsewhere may take it instead: then it is kept, filling the hole,
  // and the next try made).
  char *p = NULL, *held[8];
  size_t cap = 0, n_held = 0;
  for (; n_held < 8; ++n_held) {
    void *above = cp_bigbuf_alloc(8 * CP_BIGBUF_ALIGN);
    p = cp_bigbuf_alloc(2 * CP_BIGBUF_ALIGN);
    cr_assert_not_null(p);
    cp_bigbuf_free(above);
    cap = cp_bigbuf_size(p);
    if (addresses_free(p + cap, 4 * CP_BIGBUF_ALIGN)) break;
    held[n_held] = p;
  }
  for (size_t i = 0; i < n_held; ++i) cp_bigbuf_free(held[i]);
  if (n_held == 8) cr_skip_test("the addresses after the buffer are taken");
  fill(p, cap, 21);
  char *q = cp_bigbuf_regrow(p, 4 * CP_BIGBUF_ALIGN);
  cr_assert_eq(q, p, "grown in place");
  cr_assert_eq(cp_bigbuf_size(q), 4 * CP_BIGBUF_ALIGN);
  cr_assert(resident(q, cap), "the touched pages are still there");
  cr_assert_eq(first_diff(q, cap, 21), cap, "contents kept");
  cr_assert_eq(first_nonzero(q + cap, 4 * CP_BIGBUF_ALIGN - cap), 4 * CP_BIGBUF_ALIGN - cap);
  cp_bigbuf_free(q);
}

// When the addresses after it are taken, the buffer moves with its pages to
// a new 2 MB boundary: nothing copied, nothing re-faulted.
Test(bigbuf, regrow_moves_the_pages) {
  if (!MAPS) return;
  char *p = cp_bigbuf_alloc(2 * CP_BIGBUF_ALIGN);
  cr_assert_not_null(p);
  const size_t cap = cp_bigbuf_size(p), ps = (size_t)sysconf(_SC_PAGESIZE);
  fill(p, cap, 23);
  void *block = mmap(p + cap, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (block != p + cap) {
    if (block != MAP_FAILED) (void)munmap(block, ps);
    cr_skip_test("could not take the page after the buffer");
  }
  char *q = cp_bigbuf_regrow(p, 3 * CP_BIGBUF_ALIGN + 5);
  cr_assert_not_null(q);
  cr_assert_neq(q, p, "moved");
  cr_assert(aligned(q, CP_BIGBUF_ALIGN));
  cr_assert_eq(cp_bigbuf_size(q), 4 * CP_BIGBUF_ALIGN);
  cr_assert(resident(q, cap), "the pages moved, faulted in (not a fresh mapping)");
  cr_assert_eq(first_diff(q, cap, 23), cap, "contents kept");
  cr_assert_eq(first_nonzero(q + cap, 4 * CP_BIGBUF_ALIGN - cap), 4 * CP_BIGBUF_ALIGN - cap);
  // cp_bigbuf_grow takes the same path: all contents kept, whatever keep.
  fill(q, 4 * CP_BIGBUF_ALIGN, 29);
  size_t c = cp_bigbuf_size(q);
  cr_assert_eq(cp_bigbuf_grow((void **)&q, &c, 6 * CP_BIGBUF_ALIGN, 0), 0);
  cr_assert_eq(c, 6 * CP_BIGBUF_ALIGN);
  cr_assert(resident(q, 4 * CP_BIGBUF_ALIGN));
  cr_assert_eq(first_diff(q, 4 * CP_BIGBUF_ALIGN, 29), 4 * CP_BIGBUF_ALIGN);
  cp_bigbuf_free(q);
  (void)munmap(block, ps);
}

// Small buffers and NULL: the heap; large enough: the same buffer.
Test(bigbuf, regrow_small) {
  char *p = cp_bigbuf_regrow(NULL, 100);
  cr_assert_not_null(p);
  cr_assert_eq(cp_bigbuf_size(p), 100);
  cr_assert_eq(cp_bigbuf_regrow(p, 60), p);
  p = cp_bigbuf_regrow(p, 5000);
  cr_assert_not_null(p);
  cr_assert_eq(cp_bigbuf_size(p), 5000);
  p = cp_bigbuf_regrow(p, CP_BIGBUF_HUGE);
  cr_assert_not_null(p);
  if (MAPS) cr_assert(aligned(p, CP_BIGBUF_ALIGN));
  cr_assert_eq(cp_bigbuf_regrow(p, CP_BIGBUF_ALIGN), p, "within the mapping's rounding");
  cp_bigbuf_free(p);
}

// The zeroed variant: a kept, grown or moved buffer keeps its caller's
// record (its first *dirty bytes as they were, zero beyond); a new one is
// zero throughout and the record 0 (a small buffer, the forced fallback).
Test(bigbuf, regrow_zeroed) {
  const size_t d0 = 5000;
  size_t dirty = 0;
  char *p = cp_bigbuf_regrow_zeroed(NULL, 3000, &dirty);
  cr_assert_not_null(p);
  cr_assert_eq(first_nonzero(p, 3000), 3000);
  fill(p, 2000, 31);
  dirty = 2000;
  cr_assert_eq(cp_bigbuf_regrow_zeroed(p, 2500, &dirty), p, "large enough");
  cr_assert_eq(dirty, 2000);
  p = cp_bigbuf_regrow_zeroed(p, CP_BIGBUF_ALIGN + 100, &dirty); // heap to a mapping: new
  cr_assert_not_null(p);
  cr_assert_eq(dirty, 0);
  size_t cap = cp_bigbuf_size(p);
  cr_assert_eq(first_nonzero(p, cap), cap);
  fill(p, d0, 33);
  dirty = d0;
  p = cp_bigbuf_regrow_zeroed(p, 3 * CP_BIGBUF_ALIGN, &dirty);
  cr_assert_not_null(p);
  cap = cp_bigbuf_size(p);
  if (MAPS) {
    cr_assert_eq(dirty, d0, "grown or moved: the record holds");
    cr_assert_eq(first_diff(p, d0, 33), d0);
  } else {
    cr_assert_eq(dirty, 0);
  }
  cr_assert_eq(first_nonzero(p + dirty, cap - dirty), cap - dirty);
  // The fallback forced: a new heap buffer, zero, the record 0.
  fill(p, d0, 35);
  dirty = d0;
  cp_bigbuf_force_fallback(1);
  p = cp_bigbuf_regrow_zeroed(p, 4 * CP_BIGBUF_ALIGN, &dirty);
  cp_bigbuf_force_fallback(0);
  cr_assert_not_null(p);
  cr_assert_eq(dirty, 0);
  cr_assert_eq(cp_bigbuf_huge(p), 0);
  cr_assert_eq(cp_bigbuf_size(p), 4 * CP_BIGBUF_ALIGN);
  cr_assert_eq(first_nonzero(p, 4 * CP_BIGBUF_ALIGN), 4 * CP_BIGBUF_ALIGN);
  cp_bigbuf_free(p);
}
