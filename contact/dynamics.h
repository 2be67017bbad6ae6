/// \file contact/dynamics.h
/// From the multibody quantities to contact space (docs/math.md §1-§2):
///
///     H u' = f + G c                                                (E1)
///     a = G^T u' + k = A c + b,   A = G^T H^-1 G,   b = G^T H^-1 f + k   (24-26)
///
/// with acceleration-driven joints (paper §2.5) moved across first: for the
/// driven set D (u'_D given, effort unknown) and the free set F,
///
///     A = G_F^T H_FF^-1 G_F,
///     b = G_F^T H_FF^-1 (f_F - H_FD u'_D) + G_D^T u'_D + k,
///     tau_D = H_DF u'_F + H_DD u'_D - f_D - G_D c   (the unknown efforts,
///             returned as the extra effort on top of those in f).
///
/// A is formed from a Cholesky factor H_FF = L L^T as (L^-1 G_F)^T (L^-1 G_F)
/// (dpotrf, dtrsm, dsyrk): never an explicit inverse. H is block diagonal in
/// practice (one 6x6 block per free body, one block per chain), and a
/// contact's columns of G touch at most two blocks; so the work is done block
/// by block: for block B with the contact columns C that touch it,
/// A[C, C] += X^T X and b[C] += X^T y with X = L_B^-1 G[B, C],
/// y = L_B^-1 rhs_B. The blocks are the connected components of H_FF's
/// nonzero pattern, found here; the result is the same matrix, with cost
/// proportional to sum_B |B| |C_B|^2 instead of nfree (3 nc)^2.
///
/// Arrays are column-major: H [nu*nu], G [nu * 3nc], f [nu], k [3nc],
/// A [3nc * 3nc], b [3nc]. This module knows matrices only: no scene types.
#ifndef CP_CONTACT_DYNAMICS_H
#define CP_CONTACT_DYNAMICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Contact-space form of one state. Owns its arrays (cp_contact_space_free).
typedef struct cp_contact_space {
  int nu, nc;          ///< generalised dofs, contacts
  int nfree;           ///< dofs whose acceleration is unknown
  int *free_idx;       ///< [nfree] free dofs, grouped by block of H_FF
  int nblocks;         ///< diagonal blocks of H_FF
  int *bstart;         ///< [nblocks+1] block k is free_idx[bstart[k]..bstart[k+1])
  size_t *loff;        ///< [nblocks] offset of block k's factor in L
  double *L;           ///< Cholesky factors (lower) of the blocks, packed:
                       ///< block k is s x s column-major at L + loff[k]
  double *A;           ///< [3nc*3nc] symmetric positive semidefinite
  double *b;           ///< [3nc]
  const double *H, *G, *f, *k; ///< borrowed inputs (must outlive this)
  const unsigned char *driven; ///< borrowed [nu] (NULL: none driven)
  const double *udot_driven;   ///< borrowed [nu] given u' of driven dofs
  size_t own_cap;      ///< bytes of the block that starts at A (reuse)
  size_t own_dirty;    ///< rebuild: bytes of that block from its start
                       ///< beyond which it holds only zeros
  void *scratch;       ///< temporaries kept by cp_contact_space_rebuild
  size_t scratch_cap;  ///< bytes of scratch
  unsigned long long hpat; ///< rebuild: H's upper nonzero pattern of this
                       ///< build's blocks (when hpat_ok)
  int hpat_ok;         ///< rebuild: blocks kept in scratch match hpat
  const int *range;    ///< borrowed cp_contact_sparsity::range, or NULL
  int fp_kept;         ///< rebuild: A's footprint is kept in scratch
  int fp_lists;        ///< rebuild: that footprint is the per-group lists
                       ///< of constraints (not each column's first row)
} cp_contact_space;

/// What the caller knows of where H and G can be nonzero (a simulator knows
/// it from its bodies and contacts): with it a large build visits only
/// those entries instead of testing all nu^2 of H and nu 3nc of G for
/// zero, and cp_contact_space_accel sums only over them. The results are
/// those of the build without it, bit for bit (every entry left out is a
/// zero of either sign, which neither the tests for zero nor the sums
/// see), provided the promise holds; an entry outside that is not zero is
/// silently ignored.
typedef struct cp_contact_sparsity {
  int nblock;          ///< diagonal blocks of H
  const int *block;    ///< NULL, or [nblock + 1] increasing starts from 0
                       ///< to nu: H is zero outside the diagonal blocks
                       ///< [block[b], block[b+1]) x [block[b], block[b+1])
  const int *range;    ///< NULL, or [4 nc]: contact j's three columns of G
                       ///< are zero outside the rows [range[4j],
                       ///< range[4j+1]) and [range[4j+2], range[4j+3])
                       ///< (disjoint; lo = hi: empty). Borrowed by the
                       ///< result (must outlive it)
} cp_contact_sparsity;

/// Forms A and b. `driven` may be NULL (every dof free); otherwise driven[i]
/// marks dof i as acceleration-driven with u'_i = udot_driven[i]. Returns 0,
/// -1 when H_FF is not positive definite, -2 when out of memory.
int cp_contact_space_build(int nu, int nc, const double *H, const double *G,
                           const double *f, const double *k,
                           const unsigned char *driven,
                           const double *udot_driven, cp_contact_space *cs);

/// cp_contact_space_build into the arrays of a previous build or rebuild of
/// cs (or a zeroed cs), growing them when needed: a simulator forms one
/// contact space per step, and the allocator's calls (and the kernel's
/// zeroed pages for a large A) were a sizeable part of a step. Same results
/// bit for bit as cp_contact_space_build. On failure cs is freed.
int cp_contact_space_rebuild(int nu, int nc, const double *H, const double *G,
                             const double *f, const double *k,
                             const unsigned char *driven,
                             const double *udot_driven, cp_contact_space *cs);

/// cp_contact_space_rebuild with the structure of H and G given (sp may be
/// NULL: none known). The same results bit for bit.
int cp_contact_space_rebuild_sparse(int nu, int nc, const double *H, const double *G,
                                    const double *f, const double *k,
                                    const unsigned char *driven,
                                    const double *udot_driven,
                                    const cp_contact_sparsity *sp,
                                    cp_contact_space *cs);

/// Sizes cs's kept blocks (a zeroed cs, or one of a previous build or
/// rebuild) so that no rebuild of at most nu dofs and nc contacts whose
/// H_FF has diagonal blocks with squared sizes summing to at most ltot
/// (nu * nu bounds every case; the sum of the squares of H's own diagonal
/// blocks bounds it when those are known) takes new memory, and writes
/// every page of them once (models/bigbuf.h's cp_bigbuf_touch) so that the
/// page faults are taken here, not in the rebuild. A simulator calls it
/// where it is created, as MuJoCo's mj_makeData makes its arena. Blocks
/// already large enough are kept (and touched). cs holds no result
/// afterwards (b, L, ... are NULL; A is the block), only what a rebuild
/// reuses; rebuilds give the same results bit for bit with or without it.
/// Returns 0, -1 for nu < 0 or nc < 0 (cs unchanged), -2 when out of
/// memory (cs freed and zeroed).
int cp_contact_space_reserve(cp_contact_space *cs, int nu, int nc, size_t ltot);

void cp_contact_space_free(cp_contact_space *cs);

/// Given contact forces c [3nc], computes u' [nu] from (E1) (driven dofs take
/// their given values) and, when tau_driven is not NULL, the efforts [nu] the
/// driven dofs need beyond f (0 for free dofs). Returns 0 or -2 (memory).
int cp_contact_space_accel(const cp_contact_space *cs, const double *c,
                           double *udot, double *tau_driven);

/// Diagnostics of docs/math.md §5.
typedef struct cp_contact_diag {
  int jacobian_rank;        ///< numerical rank of G_F (SVD)
  int full_column_rank;     ///< rank == 3 nc
  int a_positive_definite;  ///< A positive definite (Cholesky succeeds)
  double friction_bound;    ///< Proposition 3's mu_bar; INFINITY when no
                            ///< contact slides; 0 when B~ is not PD
  int within_friction_bound;///< every sliding mu_j < mu_bar (B~ PD)
} cp_contact_diag;

/// Computes the diagnostics. sliding [nc] marks the sliding contacts, mu [nc]
/// their friction coefficients. Returns 0 or -2 (memory).
int cp_contact_diagnostics(const cp_contact_space *cs,
                           const unsigned char *sliding, const double *mu,
                           cp_contact_diag *d);

/// The same over an augmented contact space (contact/problem.c's soft
/// fingers): the first nc contacts are the real ones, tor_row [nc] gives the
/// row of A holding contact j's torsion (-1: none), spinning [nc] and
/// mu_tor [nc] its torsional state. B~ then also holds the non-spinning
/// torsion rows, and the spinning ones perturb it like sliding t and o
/// columns: within_friction_bound when max_S mu (delta_t + delta_o) +
/// max mu_tau delta_tau < lambda_min(B~). tor_row NULL: no soft fingers
/// (spinning and mu_tor are then not read). Returns 0 or -2 (memory).
int cp_contact_diagnostics_ext(const cp_contact_space *cs, int nc, const int *tor_row,
                               const unsigned char *sliding, const double *mu,
                               const unsigned char *spinning, const double *mu_tor,
                               cp_contact_diag *d);

#ifdef __cplusplus
}
#endif
#endif
