/// \file
/// Large buffers: the simulator's dense blocks (A's block, H and G, the LCP's
/// square matrices) on transparent huge pages (internal; not installed).
///
/// A large scene reads its dense matrices a few entries at a time across
/// many columns, each column in pages of its own: with 4 KB pages the TLB
/// misses cost more than the arithmetic (a bin of 50 boxes: docs/simulate.md,
/// "Memory"). From CP_BIGBUF_HUGE bytes a buffer is its own mapping, 2 MB
/// aligned and rounded up to whole 2 MB, and asks the kernel for huge pages
/// (madvise(MADV_HUGEPAGE): Linux's "madvise" mode of transparent huge pages
/// grants them only to memory that asks). Smaller ones come from malloc,
/// so small worlds (a planner's per-thread worlds of a few bodies) use no
/// more memory than before. Where the platform has no MADV_HUGEPAGE, or the
/// mapping or the advice fails, the buffer is an ordinary one: placement
/// only, never the numbers. A mapped buffer that must grow keeps the pages
/// it has touched: it is extended where it lies or moved with them
/// (cp_bigbuf_regrow, mremap), never copied.
///
/// A buffer is released by cp_bigbuf_free only (never free() or realloc()).
#ifndef CP_MODELS_BIGBUF_H
#define CP_MODELS_BIGBUF_H

#include <stddef.h>

/// Buffers of at least this many bytes are mapped on huge pages.
#define CP_BIGBUF_HUGE ((size_t)1 << 20)
/// Their alignment, and the unit their mapping is rounded up to (a huge page
/// on x86-64).
#define CP_BIGBUF_ALIGN ((size_t)2 << 20)

/// A buffer of at least bytes bytes (0 is allowed: a valid, empty buffer),
/// contents undefined; NULL when out of memory. Aligned to 16 bytes, and to
/// CP_BIGBUF_ALIGN when mapped.
void *cp_bigbuf_alloc(size_t bytes);

/// As cp_bigbuf_alloc, zeroed (a mapped buffer comes zeroed from the kernel
/// and is not written).
void *cp_bigbuf_calloc(size_t bytes);

/// Makes *p (a buffer or NULL; *cap its usable bytes, 0 for NULL) hold at
/// least need bytes, like realloc: a larger buffer whose first keep bytes
/// (at most *cap) are the old ones, the rest undefined; the old buffer is
/// released. A mapped buffer grows as in cp_bigbuf_regrow (all its
/// contents kept, nothing copied). Nothing happens when *cap >= need. *cap becomes the new usable
/// size (cp_bigbuf_size). Returns 0, or -1 when out of memory (*p and *cap
/// then unchanged).
int cp_bigbuf_grow(void **p, size_t *cap, size_t need, size_t keep);

/// A buffer of at least need bytes in place of p (a buffer or NULL), for a
/// caller that rewrites it: p itself when large enough; a mapped p grown
/// where it lies, or moved with its pages to a new CP_BIGBUF_ALIGN boundary
/// (the kernel moves its page tables: nothing is copied, and the pages p
/// had touched, huge ones included, stay faulted in, so growing a block
/// costs faults and kernel zeroing of its new part only); otherwise p is
/// released and a new buffer made (as cp_bigbuf_alloc). Contents undefined
/// (in fact p's first bytes when grown or moved). NULL when out of memory
/// (p is then released).
void *cp_bigbuf_regrow(void *p, size_t need);

/// As cp_bigbuf_regrow, for a block kept zeroed with its caller's record
/// of what it wrote: on entry every byte of p from *dirty on reads zero;
/// on return every byte of the result from *dirty on reads zero, *dirty
/// unchanged when p was kept, grown or moved (its first *dirty bytes are
/// p's, for the caller to clear as it would p's) and 0 when the result is
/// a new buffer (zeroed in full). NULL when out of memory (p released).
void *cp_bigbuf_regrow_zeroed(void *p, size_t need, size_t *dirty);

/// Makes the first bytes bytes of p (any memory of at least that size, not
/// only a big buffer) resident: writes every page once with the value it
/// holds, so its contents are unchanged and the page faults (a 4 KB page's
/// or a huge page's, with the kernel's zeroing) are taken now rather than
/// where the memory is first used. For callers that size their memory
/// before a timed or repeated loop (a world's reserve: docs/simulate.md).
void cp_bigbuf_touch(void *p, size_t bytes);

/// Releases a buffer of cp_bigbuf_alloc, _calloc or _grow; NULL is ignored.
void cp_bigbuf_free(void *p);

/// The usable bytes of a buffer (at least what was asked; a mapped one's
/// are rounded up to whole CP_BIGBUF_ALIGN); 0 for NULL.
size_t cp_bigbuf_size(const void *p);

/// 1 when the buffer is mapped on its own, CP_BIGBUF_ALIGN aligned, and the
/// kernel took the advice to back it with huge pages (whether it could grant
/// them is the kernel's: /proc/PID/smaps' AnonHugePages); 0 otherwise.
int cp_bigbuf_huge(const void *p);

/// For tests: with on != 0, every later buffer takes the fallback (malloc,
/// as where the platform has no huge pages); 0 restores the default. Not
/// meant to be changed while other threads allocate.
void cp_bigbuf_force_fallback(int on);

#endif
