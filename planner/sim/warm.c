// Warm starts across steps (planner/sim/world_impl.h): each constraint's
// basic LCP unknowns recorded under its identity (cp_wi_lcp_record), a new
// step's warm basis mapped back through them (cp_wi_lcp_warm), the records
// exported for a planner's siblings (cp_world_warm_*), and the impact memo.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/grow.h"
#include "models/hash.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// Warm starts

static int key_eq(const ckey *x, const ckey *y) {
  return !memcmp(x, y, sizeof *x);
}

// Previous flags of constraint key for the LCP kind, or NULL. The previous
// list is in constraint order, which is stable between steps, so the search
// starts where the last one ended.
static const wrec *warm_find(const cp_world *w, const ckey *k, int kind,
                             int *hint) {
  for (int t = 0; t < w->nwarm; ++t) {
    int i = (*hint + t) % w->nwarm;
    if (w->warm[i].kind == kind && key_eq(&w->warm[i].key, k)) {
      *hint = i + 1;
      return &w->warm[i];
    }
  }
  return NULL;
}

static int warm_push(cp_world *w, const ckey *k, int kind,
                     const unsigned char *flag) {
  const int cap0 = w->warm_cap;
  if (cp_grow((void **)&w->warm_next, &w->warm_cap, w->nwarm_next + 1,
            sizeof *w->warm_next))
    return -1;
  // warm and warm_next share warm_cap: keep both large enough (only when it
  // grew: a realloc per record was a call per contact per step).
  if (w->warm_cap != cap0 || !w->warm) {
    wrec *p = realloc(w->warm, sizeof *p * (size_t)w->warm_cap);
    if (!p) {
      w->warm_cap = cap0; // warm_next is larger, warm still holds cap0
      return -1;
    }
    w->warm = p;
  }
  wrec *r = &w->warm_next[w->nwarm_next++];
  memset(r, 0, sizeof *r);
  r->key = *k;
  r->kind = (unsigned char)kind;
  memcpy(r->flag, flag, 6);
  return 0;
}

void cp_wi_warm_commit(cp_world *w) {
  wrec *t = w->warm;
  w->warm = w->warm_next;
  w->warm_next = t;
  w->nwarm = w->nwarm_next;
  w->nwarm_next = 0;
}

size_t cp_world_warm_size(const cp_world *w) {
  if (!w->nwarm) return 0;
  return 2 * sizeof(uint32_t) + (size_t)w->nwarm * sizeof(wrec);
}

void cp_world_warm_get(const cp_world *w, void *buf, size_t size) {
  size_t need = cp_world_warm_size(w);
  if (!need || size < need) return;
  uint32_t h[2] = {WARM_MAGIC, (uint32_t)w->nwarm};
  memcpy(buf, h, sizeof h);
  memcpy((char *)buf + sizeof h, w->warm, (size_t)w->nwarm * sizeof(wrec));
}

void cp_world_warm_set(cp_world *w, const void *buf, size_t size) {
  uint32_t h[2];
  if (!buf || size < sizeof h) return;
  memcpy(h, buf, sizeof h);
  if (h[0] != WARM_MAGIC || size != sizeof h + (size_t)h[1] * sizeof(wrec))
    return;
  int n = (int)h[1];
  if (cp_grow((void **)&w->warm_next, &w->warm_cap, n + 1, sizeof *w->warm_next))
    return;
  wrec *p = realloc(w->warm, sizeof *p * (size_t)w->warm_cap);
  if (!p) return;
  w->warm = p;
  if (n > 0) memcpy(w->warm, (const char *)buf + sizeof h, (size_t)n * sizeof(wrec));
  w->nwarm = n;
}

// Warm basis of lcp_setup's problem from the previous step's flags (slots:
// 0 c_n, 1-4 beta, 5 lambda) of the same LCP kind.
// With no record at all (a world's first step with contacts, or one whose
// records were cleared) every normal force starts basic: a scene that
// begins at rest (a stack, a grasp) is then taken by the warm start's small
// LU over its normals instead of a cold Lemke run over the whole problem
// (a 5-box stack's first step: 12.4 M instructions cold).
void cp_wi_lcp_warm(cp_world *w, int ns, const int *sel, int kind, int m) {
  int nr = (m - ns) / 5, hint = 0;
  if (m == 0) return;
  memset(w->basis, 0, (size_t)m);
  if (!w->nwarm) {
    memset(w->basis, 1, (size_t)ns);
    return;
  }
  for (int k = 0, f = 0; k < ns; ++k) {
    const wrec *rec = warm_find(w, &w->cons[sel[k]].key, kind, &hint);
    const unsigned char *fl = rec ? rec->flag : NULL;
    int r = cp_wi_rolling(&w->pc[k]);
    if (fl) {
      w->basis[k] = fl[0];
      if (r) { // the four corners' flags at once
        memcpy(w->basis + ns + 4 * f, fl + 1, 4);
        w->basis[ns + 4 * nr + f] = fl[5];
      }
    }
    f += r;
  }
}

// Returns -1 when out of memory (the step then fails: dropping the record
// would change the next step's warm start, hence its answer).
// Call after the solve of lcp_setup's problem over these ns constraints
// (its rolling count w->lnr).
int cp_wi_lcp_record(cp_world *w, int ns, const int *sel, int kind) {
  const int nr = w->lnr;
  // Degenerate basic variables (z_i = 0 at rounding level, w_i = 0 too)
  // are recorded as nonbasic: the same answer, with w_i basic instead. The
  // next step's basis is then smaller (a resting box's Lemke basis holds
  // seven degenerate friction variables beside its four normals: a 11 x 11
  // system instead of 4 x 4) and better conditioned.
  // A principal submatrix M_BB can turn singular when a variable leaves B,
  // so only those whose leaving keeps each contact's block regular go:
  // degenerate betas when lambda is degenerate or nonbasic (a basic
  // lambda's column lives in its beta rows only); then a degenerate lambda
  // unless two opposite corners stay basic (their columns differ only in
  // the lambda row); a degenerate c_n when nothing of its contact's
  // friction stays basic.
  const int m = ns + 5 * nr;
  // The largest |z_i| in four independent chains (a maximum does not
  // depend on the order; NaN is skipped by MAXD in any order).
  double z0 = 0, z1 = 0, z2 = 0, z3 = 0;
  int i4 = 0;
  for (; i4 + 4 <= m; i4 += 4) {
    z0 = MAXD(z0, fabs(w->z[i4]));
    z1 = MAXD(z1, fabs(w->z[i4 + 1]));
    z2 = MAXD(z2, fabs(w->z[i4 + 2]));
    z3 = MAXD(z3, fabs(w->z[i4 + 3]));
  }
  for (; i4 < m; ++i4) z0 = MAXD(z0, fabs(w->z[i4]));
  const double zmax = MAXD(MAXD(z0, z1), MAXD(z2, z3));
  const double zt = 1e-12 * zmax;
#define DEGEN(i) (w->basis[i] && !(w->z[i] > zt))
  for (int k = 0, f = 0; k < ns; ++k) {
    int fric = 0;
    if (cp_wi_rolling(&w->pc[k])) {
      const int lam = ns + 4 * nr + f, b0 = ns + 4 * f;
      if (!w->basis[lam] || DEGEN(lam)) {
        for (int e = 0; e < 4; ++e)
          if (DEGEN(b0 + e)) w->basis[b0 + e] = 0;
        // corners 0 and 3, 1 and 2 are opposite (corner[] above)
        const int opp = (w->basis[b0] && w->basis[b0 + 3]) ||
                        (w->basis[b0 + 1] && w->basis[b0 + 2]);
        if (!opp && DEGEN(lam)) w->basis[lam] = 0;
      } else {
        // lambda > 0 (at the friction limit): its degenerate corners go
        // while a corner with force stays basic to carry lambda's column.
        int pos = 0;
        for (int e = 0; e < 4; ++e) pos |= w->basis[b0 + e] && !DEGEN(b0 + e);
        for (int e = 0; pos && e < 4; ++e)
          if (DEGEN(b0 + e)) w->basis[b0 + e] = 0;
      }
      for (int e = 0; e < 5; ++e) fric |= w->basis[e < 4 ? b0 + e : lam];
      ++f;
    }
    if (!fric && DEGEN(k)) w->basis[k] = 0;
  }
#undef DEGEN
  for (int k = 0, f = 0; k < ns; ++k) {
    unsigned char fl[6] = {w->basis[k], 0, 0, 0, 0, 0};
    if (cp_wi_rolling(&w->pc[k])) {
      memcpy(fl + 1, w->basis + ns + 4 * f, 4);
      fl[5] = w->basis[ns + 4 * nr + f];
      ++f;
    }
    if (warm_push(w, &w->cons[sel[k]].key, kind, fl)) return -1;
  }
  return 0;
}

// The impact memo (cp_world_options.impact_memo). An impact LCP is fixed
// by the selected contact-space block Asel, the right-hand side bs and the
// contacts' friction (all rolling: mu alone), the compliance and solver
// options being the world's: that key, bit for bit, and the solution z
// are kept in slot hash % slots (one problem a slot, the newest). A hit
// is checked on the whole key, not the hash, and returns what the cold
// solve returned for it (Lemke's starts are deterministic), so the memo
// changes no answer. Keys of more than CP_WORLD_MEMO_KEY doubles (over 21
// contacts) are not kept: a slot stays under 40 kB.
static size_t memo_key_len(int ns) {
  return (size_t)9 * (size_t)ns * (size_t)ns + 4 * (size_t)ns;
}

static uint64_t memo_hash(const cp_world *w, int ns) {
  const size_t m3 = 3 * (size_t)ns;
  uint64_t h = cp_fnv_words(CP_FNV_OFFSET ^ (uint64_t)ns, w->Asel,
                   sizeof(double) * m3 * m3);
  h = cp_fnv_words(h, w->bs, sizeof(double) * m3);
  for (int k = 0; k < ns; ++k) h = cp_fnv_words(h, &w->pc[k].mu, sizeof(double));
  return h;
}

// The slot of the problem of size m over ns constraints (its hash in *h),
// or NULL when the memo is off or the key too long; *hit tells whether it
// holds that very problem (its z then copied to w->z).
memo_slot *cp_wi_memo_find(cp_world *w, int ns, int m, uint64_t *h, int *hit) {
  *hit = 0;
  if (!w->memo || ns == 0 || memo_key_len(ns) > CP_WORLD_MEMO_KEY) return NULL;
  *h = memo_hash(w, ns);
  memo_slot *e = &w->memo[*h % (uint64_t)w->opt.impact_memo];
  const size_t m3 = 3 * (size_t)ns, a = m3 * m3;
  if (e->ns == ns && e->m == m && e->h == *h &&
      !memcmp(e->d, w->Asel, sizeof(double) * a) &&
      !memcmp(e->d + a, w->bs, sizeof(double) * m3)) {
    int same = 1;
    for (int k = 0; same && k < ns; ++k)
      same = !memcmp(&e->d[a + m3 + (size_t)k], &w->pc[k].mu, sizeof(double));
    if (same) {
      memcpy(w->z, e->d + memo_key_len(ns), sizeof(double) * (size_t)m);
      *hit = 1;
    }
  }
  return e;
}

// Keeps the solved problem (w->z, hash h) in its slot (from memo_find, same
// step); out of memory, the slot is left empty (the memo only saves work).
void cp_wi_memo_keep(cp_world *w, memo_slot *e, uint64_t h, int ns, int m) {
  const size_t m3 = 3 * (size_t)ns, a = m3 * m3, kl = memo_key_len(ns);
  const size_t need = kl + (size_t)m;
  e->ns = 0;
  if (e->cap < need) {
    free(e->d);
    e->d = malloc(sizeof(double) * need);
    e->cap = e->d ? need : 0;
    if (!e->d) return;
  }
  memcpy(e->d, w->Asel, sizeof(double) * a);
  memcpy(e->d + a, w->bs, sizeof(double) * m3);
  for (int k = 0; k < ns; ++k) e->d[a + m3 + (size_t)k] = w->pc[k].mu;
  memcpy(e->d + kl, w->z, sizeof(double) * (size_t)m);
  e->h = h;
  e->ns = ns;
  e->m = m;
}

