// Large buffers on huge pages (models/bigbuf.h).
//
// Every buffer has a 16-byte header just before it: its usable size and how
// it was made. A small one is one malloc (header and buffer). A mapped one is
// a private anonymous mapping of one ordinary page (the header's, at its
// end) followed by the buffer, which starts on a CP_BIGBUF_ALIGN boundary
// and covers whole CP_BIGBUF_ALIGN units, so that the kernel can back every
// unit with one huge page. The advice covers the whole mapping (the header's
// page cannot be in a huge page anyway), which so stays one mapping for the
// kernel: one that mremap can grow or move whole (cp_bigbuf_regrow). The
// mapping is made CP_BIGBUF_ALIGN longer than that and its two ends cut
// off.
#define _GNU_SOURCE 1 // MAP_ANONYMOUS, madvise, MADV_HUGEPAGE, mremap (Linux)
#include "models/bigbuf.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { HEAP = 0x4b1b0f01, MAPPED = 0x4b1b0f02, MAPPED_HUGE = 0x4b1b0f03 };

typedef struct hdr {
  size_t cap;  // usable bytes
  size_t kind; // HEAP, MAPPED or MAPPED_HUGE
} hdr;
_Static_assert(sizeof(hdr) == 16, "the buffer stays 16-byte aligned");

static atomic_int fallback;

void cp_bigbuf_force_fallback(int on) { atomic_store_explicit(&fallback, on != 0, memory_order_relaxed); }

static hdr *hdr_of(const void *p) { return (hdr *)((char *)(uintptr_t)p - sizeof(hdr)); }

static void *heap(size_t bytes, int zero) {
  if (bytes > SIZE_MAX - sizeof(hdr)) return NULL;
  hdr *h = zero ? calloc(1, sizeof(hdr) + bytes) : malloc(sizeof(hdr) + bytes);
  if (!h) return NULL;
  h->cap = bytes;
  h->kind = HEAP;
  return h + 1;
}

// The page the header sits in (a mapped buffer's first byte is preceded by
// exactly one); 0 when unusable here.
static size_t page_size(void) {
  const long ps = sysconf(_SC_PAGESIZE);
  return ps >= (long)sizeof(hdr) && (size_t)ps < CP_BIGBUF_ALIGN ? (size_t)ps : 0;
}

// A mapped buffer of at least bytes, or NULL (then the caller falls back).
static void *mapped(size_t bytes) {
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
  const size_t ps = page_size();
  if (!ps || bytes > SIZE_MAX - 2 * CP_BIGBUF_ALIGN) return NULL;
  const size_t cap = (bytes + CP_BIGBUF_ALIGN - 1) / CP_BIGBUF_ALIGN * CP_BIGBUF_ALIGN;
  const size_t len = cap + CP_BIGBUF_ALIGN;
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  // The first boundary with a page before it (raw is page aligned).
  const uintptr_t a = ((uintptr_t)raw + ps + CP_BIGBUF_ALIGN - 1) & ~(uintptr_t)(CP_BIGBUF_ALIGN - 1);
  char *q = raw + (a - (uintptr_t)raw);
  const size_t head = (size_t)(q - ps - raw), tail = len - head - ps - cap;
  if (head) (void)munmap(raw, head);
  if (tail) (void)munmap(q + cap, tail);
  hdr *h = (hdr *)q - 1;
  h->cap = cap;
  h->kind = madvise(q - ps, ps + cap, MADV_HUGEPAGE) == 0 ? MAPPED_HUGE : MAPPED;
  return q;
#else
  (void)bytes;
  return NULL;
#endif
}

static void *make(size_t bytes, int zero) {
  if (bytes >= CP_BIGBUF_HUGE && !atomic_load_explicit(&fallback, memory_order_relaxed)) {
    void *q = mapped(bytes);
    if (q) return q; // (fresh anonymous memory reads zero)
  }
  return heap(bytes, zero);
}

void *cp_bigbuf_alloc(size_t bytes) { return make(bytes, 0); }

void *cp_bigbuf_calloc(size_t bytes) { return make(bytes, 1); }

void cp_bigbuf_free(void *p) {
  if (!p) return;
  hdr *h = hdr_of(p);
  if (h->kind == HEAP) {
    free(h);
    return;
  }
  const size_t ps = page_size();
  (void)munmap((char *)p - ps, ps + h->cap);
}

void cp_bigbuf_touch(void *p, size_t bytes) {
  if (!p || !bytes) return;
  volatile unsigned char *c = p;
  const size_t step = 4096; /* the smallest page: every page is written */
  for (size_t o = 0; o < bytes; o += step) c[o] = c[o];
  c[bytes - 1] = c[bytes - 1];
}

size_t cp_bigbuf_size(const void *p) { return p ? hdr_of(p)->cap : 0; }

int cp_bigbuf_huge(const void *p) { return p && hdr_of(p)->kind == MAPPED_HUGE; }

// The mapped buffer p made to hold at least bytes where it lies, or moved
// with its pages to a new CP_BIGBUF_ALIGN boundary (the kernel moves the page
// tables: no copy, and the pages already touched, huge ones included, stay
// faulted in); what it held is kept, the new part reads zero. NULL when
// neither can be done (p is then as it was).
static void *remapped(void *p, size_t bytes) {
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS) && defined(MREMAP_MAYMOVE) && defined(MREMAP_FIXED)
  const size_t ps = page_size();
  hdr *h = hdr_of(p);
  if (!ps || h->kind == HEAP || bytes > SIZE_MAX - 2 * CP_BIGBUF_ALIGN) return NULL;
  const size_t cap = (bytes + CP_BIGBUF_ALIGN - 1) / CP_BIGBUF_ALIGN * CP_BIGBUF_ALIGN;
  char *base = (char *)p - ps, *q = p;
  const size_t old_len = ps + h->cap, new_len = ps + cap;
  if (mremap(base, old_len, new_len, 0) == MAP_FAILED) {
    // Not in place (the addresses after it are taken): a reservation of
    // addresses only (no memory, no commit charge) to find an aligned
    // place, onto which the pages are moved.
    const size_t len = new_len + CP_BIGBUF_ALIGN;
    char *raw = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    const uintptr_t a = ((uintptr_t)raw + ps + CP_BIGBUF_ALIGN - 1) & ~(uintptr_t)(CP_BIGBUF_ALIGN - 1);
    q = raw + (a - (uintptr_t)raw);
    if (mremap(base, old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED, q - ps) == MAP_FAILED) {
      (void)munmap(raw, len);
      return NULL;
    }
    // The reservation's ends (its middle is the buffer's now).
    const size_t head = (size_t)(q - ps - raw), tail = len - head - new_len;
    if (head) (void)munmap(raw, head);
    if (tail) (void)munmap(q + cap, tail);
    h = hdr_of(q);
  }
  h->cap = cap;
  h->kind = madvise(q - ps, ps + cap, MADV_HUGEPAGE) == 0 ? MAPPED_HUGE : MAPPED;
  return q;
#else
  (void)p;
  (void)bytes;
  return NULL;
#endif
}

// p grown in place or moved with its pages (remapped), when it is mapped,
// bytes is large and the fallback is not forced; NULL otherwise.
static void *regrown(void *p, size_t bytes) {
  if (!p || bytes < CP_BIGBUF_HUGE || atomic_load_explicit(&fallback, memory_order_relaxed)) return NULL;
  return remapped(p, bytes);
}

void *cp_bigbuf_regrow(void *p, size_t need) {
  if (p && hdr_of(p)->cap >= need) return p;
  void *q = regrown(p, need);
  if (q) return q;
  cp_bigbuf_free(p); // (before: the two are never held at once)
  return cp_bigbuf_alloc(need);
}

void *cp_bigbuf_regrow_zeroed(void *p, size_t need, size_t *dirty) {
  if (p && hdr_of(p)->cap >= need) return p;
  void *q = regrown(p, need);
  if (q) return q; // (beyond *dirty the old part was zero, the new part is)
  cp_bigbuf_free(p);
  *dirty = 0;
  return cp_bigbuf_calloc(need);
}

int cp_bigbuf_grow(void **p, size_t *cap, size_t need, size_t keep) {
  if (*cap >= need) return 0;
  void *r = regrown(*p, need);
  if (r) {
    *p = r;
    *cap = cp_bigbuf_size(r);
    return 0;
  }
  void *q = cp_bigbuf_alloc(need);
  if (!q) return -1;
  if (keep > *cap) keep = *cap;
  if (keep && *p) memcpy(q, *p, keep);
  cp_bigbuf_free(*p);
  *p = q;
  *cap = cp_bigbuf_size(q);
  return 0;
}
