/// \file models/hash.h
/// complan's one 64-bit hash: FNV-1a (Fowler, Noll, Vo), the hash of every
/// determinism fingerprint (cp_world_hash, the stored search keys, the
/// benchmarks' checksums). Two forms: bytewise (the textbook one) and
/// wordwise over 64-bit words (one multiply per word: the simulator hashes
/// its state every step). Their values differ; each caller keeps the form
/// its stored values were made with.
#ifndef CP_MODELS_HASH_H
#define CP_MODELS_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// complan's FNV start value. It is the published FNV-1a 64-bit offset
/// basis (14695981039346656037) with its last digit missing -- a slip made
/// long ago and kept on purpose: stored hashes and the determinism
/// fingerprints were all made with it, and the hash is as good with it.
#define CP_FNV_OFFSET 1469598103934665603ull
#define CP_FNV_PRIME 1099511628211ull        ///< FNV-1a 64-bit prime

/// FNV-1a over n bytes, continuing from h (start with CP_FNV_OFFSET).
static inline uint64_t cp_fnv_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) {
    h ^= s[i];
    h *= CP_FNV_PRIME;
  }
  return h;
}

/// FNV-1a over the 64-bit words of n bytes (the trailing n % 8 bytes are
/// not read), continuing from h.
static inline uint64_t cp_fnv_words(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = (const unsigned char *)p;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, s + i, 8);
    h ^= v;
    h *= CP_FNV_PRIME;
  }
  return h;
}

#endif
