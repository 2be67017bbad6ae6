/* Contact space (formulation §2): A and b against an independent LU-based
 * computation, the equations of motion balanced after recovery, driven dofs,
 * and the diagnostics on cases with known answers. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/dynamics.h"
#include "tests/support.h"

enum { NU = 8, NC = 2, M3 = 6 };

static void random_system(uint64_t seed, double *H, double *G, double *f, double *k) {
  uint64_t s = seed;
  double B[NU * NU];
  for (int i = 0; i < NU * NU; i++) B[i] = cpt_uniform(&s, -1, 1);
  for (int i = 0; i < NU; i++)     /* H = B B^T + I: symmetric positive definite */
    for (int j = 0; j < NU; j++) {
      double v = i == j ? 1.0 : 0.0;
      for (int l = 0; l < NU; l++) v += B[i + l * NU] * B[j + l * NU];
      H[i + j * NU] = v;
    }
  for (int i = 0; i < NU * M3; i++) G[i] = cpt_uniform(&s, -1, 1);
  for (int i = 0; i < NU; i++) f[i] = cpt_uniform(&s, -5, 5);
  for (int i = 0; i < M3; i++) k[i] = cpt_uniform(&s, -1, 1);
}

Test(dynamics, a_and_b_match_lu_solution) {
  double H[NU * NU], G[NU * M3], f[NU], k[M3];
  random_system(3, H, G, f, k);
  cp_contact_space cs;
  cr_assert_eq(cp_contact_space_build(NU, NC, H, G, f, k, NULL, NULL, &cs), 0);
  /* X = H^-1 [G f] by LU (a different factorisation from the Cholesky). */
  double Hc[NU * NU], X[NU * (M3 + 1)];
  lapack_int piv[NU];
  memcpy(Hc, H, sizeof Hc);
  memcpy(X, G, sizeof(double) * NU * M3);
  memcpy(X + NU * M3, f, sizeof f);
  cr_assert_eq(LAPACKE_dgesv(LAPACK_COL_MAJOR, NU, M3 + 1, Hc, NU, piv, X, NU), 0);
  for (int i = 0; i < M3; i++) {
    double bi = k[i];
    for (int l = 0; l < NU; l++) bi += G[l + i * NU] * X[l + NU * M3];
    cr_assert_float_eq(cs.b[i], bi, 1e-10);
    for (int j = 0; j < M3; j++) {
      double aij = 0;
      for (int l = 0; l < NU; l++) aij += G[l + i * NU] * X[l + j * NU];
      cr_assert_float_eq(cs.A[i + j * M3], aij, 1e-10);
    }
  }
  cp_contact_space_free(&cs);
}

/* With dofs 1 and 5 acceleration-driven: for any c, the recovered u' and
 * driven efforts satisfy H u' = f + tau + G c, and G^T u' + k = A c + b. */
Test(dynamics, driven_dofs_balance) {
  double H[NU * NU], G[NU * M3], f[NU], k[M3], ud[NU] = {0};
  random_system(5, H, G, f, k);
  unsigned char driven[NU] = {0};
  driven[1] = driven[5] = 1;
  ud[1] = 0.7;
  ud[5] = -1.3;
  cp_contact_space cs;
  cr_assert_eq(cp_contact_space_build(NU, NC, H, G, f, k, driven, ud, &cs), 0);
  cr_assert_eq(cs.nfree, NU - 2);
  uint64_t s = 9;
  double c[M3], udot[NU], tau[NU];
  for (int i = 0; i < M3; i++) c[i] = cpt_uniform(&s, -2, 2);
  cr_assert_eq(cp_contact_space_accel(&cs, c, udot, tau), 0);
  cr_assert_eq(udot[1], 0.7);
  cr_assert_eq(udot[5], -1.3);
  for (int i = 0; i < NU; i++) {
    double lhs = 0, rhs = f[i] + tau[i];
    for (int j = 0; j < NU; j++) lhs += H[i + j * NU] * udot[j];
    for (int j = 0; j < M3; j++) rhs += G[i + j * NU] * c[j];
    cr_assert_float_eq(lhs, rhs, 1e-9, "row %d", i);
    if (!driven[i]) cr_assert_eq(tau[i], 0.0);
  }
  for (int i = 0; i < M3; i++) {
    double a1 = k[i], a2 = cs.b[i];
    for (int j = 0; j < NU; j++) a1 += G[j + i * NU] * udot[j];
    for (int j = 0; j < M3; j++) a2 += cs.A[i + j * M3] * c[j];
    cr_assert_float_eq(a1, a2, 1e-9, "contact row %d", i);
  }
  cp_contact_space_free(&cs);
}

Test(dynamics, not_positive_definite_h_is_reported) {
  double H[4] = {1, 2, 2, 1}, G[2] = {1, 0}, f[2] = {0, 0};
  cp_contact_space cs;
  /* one "contact" needs 3 columns; use nc = 0 to test H alone */
  (void)G;
  cr_assert_eq(cp_contact_space_build(2, 0, H, NULL, f, NULL, NULL, NULL, &cs), -1);
}

/* A point mass (3 dofs) with two contacts: 6 columns, rank 3, A singular.
 * One contact alone: full rank, A = I / m. */
Test(dynamics, rank_and_definiteness) {
  double H[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, f[3] = {0, 0, -19.62};
  double G[18] = {0};
  for (int c = 0; c < 6; c++) G[(c % 3) + 3 * c] = 1.0; /* two frames = identity */
  unsigned char sl[2] = {0, 0};
  double mu[2] = {0.5, 0.5};
  cp_contact_space cs;
  cp_contact_diag d;
  cr_assert_eq(cp_contact_space_build(3, 2, H, G, f, NULL, NULL, NULL, &cs), 0);
  cr_assert_eq(cp_contact_diagnostics(&cs, sl, mu, &d), 0);
  cr_assert_eq(d.jacobian_rank, 3);
  cr_assert_not(d.full_column_rank);
  cr_assert_not(d.a_positive_definite);
  cp_contact_space_free(&cs);
  cr_assert_eq(cp_contact_space_build(3, 1, H, G, f, NULL, NULL, NULL, &cs), 0);
  cr_assert_eq(cp_contact_diagnostics(&cs, sl, mu, &d), 0);
  cr_assert_eq(d.jacobian_rank, 3);
  cr_assert(d.full_column_rank);
  cr_assert(d.a_positive_definite);
  for (int i = 0; i < 9; i++) cr_assert_float_eq(cs.A[i], i % 4 == 0 ? 0.5 : 0.0, 1e-15);
  cr_assert_float_eq(cs.b[2], -9.81, 1e-12);
  cr_assert(isinf(d.friction_bound)); /* nothing slides */
  cr_assert(d.within_friction_bound);
  /* The same contact sliding: B~ = A_nn = 1/2, A_.t on B~'s rows is A_nt = 0,
   * so delta = 0 and the bound is infinite too. */
  sl[0] = 1;
  cr_assert_eq(cp_contact_diagnostics(&cs, sl, mu, &d), 0);
  cr_assert(isinf(d.friction_bound));
  cp_contact_space_free(&cs);
}

/* Proposition 3 by hand: A = [[2, 1, 0], [1, 2, 0], [0, 0, 1]] for one
 * sliding contact (n, t, o): B~ = [2], delta_t = |A_nt| = 1, delta_o = 0,
 * so mu_bar = 2. Realised with H = I and G = chol-like factor of A. */
Test(dynamics, proposition3_bound) {
  /* G^T G = A with G upper triangular (Cholesky of A, transposed). */
  double G[9] = {0};
  double l11 = sqrt(2.0), l21 = 1.0 / l11, l22 = sqrt(2.0 - l21 * l21);
  G[0 + 0 * 3] = l11;
  G[0 + 1 * 3] = l21;
  G[1 + 1 * 3] = l22;
  G[2 + 2 * 3] = 1.0;
  double H[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, f[3] = {0, 0, 0};
  cp_contact_space cs;
  cr_assert_eq(cp_contact_space_build(3, 1, H, G, f, NULL, NULL, NULL, &cs), 0);
  cr_assert_float_eq(cs.A[1], 1.0, 1e-14);
  unsigned char sl[1] = {1};
  double mu[1] = {1.5};
  cp_contact_diag d;
  cr_assert_eq(cp_contact_diagnostics(&cs, sl, mu, &d), 0);
  cr_assert_float_eq(d.friction_bound, 2.0, 1e-12);
  cr_assert(d.within_friction_bound);
  mu[0] = 2.5;
  cr_assert_eq(cp_contact_diagnostics(&cs, sl, mu, &d), 0);
  cr_assert_not(d.within_friction_bound);
  cp_contact_space_free(&cs);
}

/* H u' = f + G c (nu dofs, m contact rows) to 1e-9. */
static void assert_balanced(int nu, int m, const double *H, const double *G, const double *f,
                            const double *c, const double *udot) {
  for (int i = 0; i < nu; i++) {
    double lhs = 0, rhs = f[i];
    for (int j = 0; j < nu; j++) lhs += H[i + j * nu] * udot[j];
    for (int j = 0; j < m; j++) rhs += G[i + j * nu] * c[j];
    cr_assert_float_eq(lhs, rhs, 1e-9);
  }
}

/* H with single-dof blocks (a free body's diagonal m I3, I) next to a dense
 * 3 x 3 block, and a sparse G whose contacts touch two "bodies" each (many
 * contacts, so A is large and sparse): A and b against LU, A exactly
 * symmetric. Exercises the single-dof path and the dense-block path at once. */
Test(dynamics, diagonal_and_dense_blocks_match_lu) {
  enum { N = 9, C = 44, M = 3 * C };
  static double H[N * N], G[N * M], X[N * (M + 1)], Hc[N * N];
  double f[N], k[M];
  uint64_t s = 11;
  memset(H, 0, sizeof H);
  for (int i = 0; i < 6; i++) H[i + i * N] = cpt_uniform(&s, 0.5, 3);
  for (int i = 6; i < N; i++)
    for (int j = 6; j < N; j++) H[i + j * N] = (i == j ? 3.0 : 0.0) + 0.5;
  memset(G, 0, sizeof G);
  for (int j = 0; j < C; j++) {
    int b0 = (j % 3) * 3, b1 = ((j + 1) % 3) * 3; /* two of three 3-dof groups */
    for (int t = 0; t < 3; t++)
      for (int r = 0; r < 3; r++) {
        if ((j + t + r) % 4 != 0) G[b0 + r + (3 * j + t) * N] = cpt_uniform(&s, -1, 1);
        if ((j + t + r) % 3 == 0) G[b1 + r + (3 * j + t) * N] = cpt_uniform(&s, -1, 1);
      }
  }
  for (int i = 0; i < N; i++) f[i] = cpt_uniform(&s, -5, 5);
  for (int i = 0; i < M; i++) k[i] = cpt_uniform(&s, -1, 1);
  cp_contact_space cs;
  cr_assert_eq(cp_contact_space_build(N, C, H, G, f, k, NULL, NULL, &cs), 0);
  cr_assert_eq(cs.nblocks, 7);
  lapack_int piv[N];
  memcpy(Hc, H, sizeof Hc);
  memcpy(X, G, sizeof G);
  memcpy(X + N * M, f, sizeof f);
  cr_assert_eq(LAPACKE_dgesv(LAPACK_COL_MAJOR, N, M + 1, Hc, N, piv, X, N), 0);
  for (int i = 0; i < M; i++) {
    double bi = k[i];
    for (int l = 0; l < N; l++) bi += G[l + i * N] * X[l + N * M];
    cr_assert_float_eq(cs.b[i], bi, 1e-10);
    for (int j = 0; j < M; j++) {
      double aij = 0;
      for (int l = 0; l < N; l++) aij += G[l + i * N] * X[l + j * N];
      cr_assert_float_eq(cs.A[i + j * M], aij, 1e-10);
      cr_assert(cs.A[i + j * M] == cs.A[j + i * M]);
    }
  }
  double c[M], udot[N];
  for (int i = 0; i < M; i++) c[i] = cpt_uniform(&s, 0, 1);
  cr_assert_eq(cp_contact_space_accel(&cs, c, udot, NULL), 0);
  assert_balanced(N, M, H, G, f, c, udot);
  cp_contact_space_free(&cs);
}

/* cp_contact_space_rebuild reuses one cs's arrays across problems of
 * changing size (as the simulator does every step) and must give what a
 * fresh cp_contact_space_build gives, bit for bit: A, b, the blocks and the
 * accelerations; a failed rebuild (H not positive definite) leaves cs
 * freed, and the next rebuild starts over. */
static void same_space(int nu, int nc, const double *H, const double *G,
                       const double *f, const double *k,
                       const unsigned char *driven, const double *ud,
                       cp_contact_space *kept) {
  cp_contact_space fresh;
  cr_assert_eq(cp_contact_space_build(nu, nc, H, G, f, k, driven, ud, &fresh), 0);
  cr_assert_eq(cp_contact_space_rebuild(nu, nc, H, G, f, k, driven, ud, kept), 0);
  const int m = 3 * nc;
  cr_assert_eq(kept->nblocks, fresh.nblocks);
  cr_assert_eq(kept->nfree, fresh.nfree);
  cr_assert_eq(memcmp(kept->A, fresh.A, sizeof(double) * (size_t)(m * m)), 0);
  cr_assert_eq(memcmp(kept->b, fresh.b, sizeof(double) * (size_t)m), 0);
  double c[3 * NC + 3], u1[NU], u2[NU];
  for (int i = 0; i < m; i++) c[i] = 0.25 * (i + 1);
  cr_assert_eq(cp_contact_space_accel(&fresh, c, u1, NULL), 0);
  cr_assert_eq(cp_contact_space_accel(kept, c, u2, NULL), 0);
  cr_assert_eq(memcmp(u1, u2, sizeof(double) * (size_t)nu), 0);
  cp_contact_space_free(&fresh);
}

/* cp_contact_space_reserve: a space reserved for NU dofs, NC contacts and
 * H_FF's whole square (one dense block: ltot = NU^2) takes rebuilds of
 * those sizes and smaller ones in its blocks, bit for bit as fresh builds;
 * reserved for ltot 0 its first rebuild grows the result's block (the
 * bound is what is tested); a reserve of a used space keeps its rebuilds
 * exact; negative sizes are refused. */
Test(dynamics, reserve_takes_rebuilds_without_growth) {
  double H[NU * NU], G[NU * M3], f[NU], k[M3];
  random_system(11, H, G, f, k);
  cp_contact_space cs;
  memset(&cs, 0, sizeof cs);
  cr_assert_eq(cp_contact_space_reserve(&cs, -1, NC, 0), -1);
  cr_assert_eq(cp_contact_space_reserve(&cs, NU, -1, 0), -1);
  cr_assert_null(cs.A);
  cr_assert_eq(cp_contact_space_reserve(&cs, NU, NC, NU * NU), 0);
  const void *A0 = cs.A, *S0 = cs.scratch;
  const size_t own = cs.own_cap, scr = cs.scratch_cap;
  cr_assert(A0 && S0 && own > 0 && scr > 0);
  const int ncs[3] = {NC, 1, NC};
  for (int r = 0; r < 3; r++) {
    same_space(NU, ncs[r], H, G, f, k, NULL, NULL, &cs);
    cr_assert(cs.A == A0 && cs.scratch == S0, "round %d: a block was made anew", r);
    cr_assert(cs.own_cap == own && cs.scratch_cap == scr, "round %d: grown", r);
  }
  /* Reserved again, larger, after use: the rebuilds stay exact. */
  cr_assert_eq(cp_contact_space_reserve(&cs, NU, 40, NU * NU), 0);
  cr_assert_gt(cs.own_cap, own);
  same_space(NU, NC, H, G, f, k, NULL, NULL, &cs);
  cp_contact_space_free(&cs);
  /* Without the factors' room the first rebuild grows. */
  cr_assert_eq(cp_contact_space_reserve(&cs, NU, NC, 0), 0);
  const size_t small = cs.own_cap;
  same_space(NU, NC, H, G, f, k, NULL, NULL, &cs);
  cr_assert_gt(cs.own_cap, small);
  cp_contact_space_free(&cs);
}

Test(dynamics, rebuild_reuses_arrays_bit_for_bit) {
  double H[NU * NU], G[NU * M3], f[NU], k[M3], ud[NU] = {0};
  random_system(7, H, G, f, k);
  unsigned char driven[NU] = {0};
  driven[2] = 1;
  ud[2] = -0.7;
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  same_space(NU, NC, H, G, f, k, NULL, NULL, &kept);      /* first: allocates */
  void *a0 = kept.A;
  same_space(NU, 1, H, G, f, k, driven, ud, &kept);       /* smaller: kept */
  cr_assert_eq(kept.A, a0);
  same_space(NU, NC, H, G, f, k, driven, ud, &kept);      /* back to full */
  same_space(NU, 0, H, G, f, NULL, NULL, NULL, &kept);    /* no contact */
  double Hbad[NU * NU];
  memcpy(Hbad, H, sizeof Hbad);
  Hbad[3 + 3 * NU] = -1.0;
  cr_assert_eq(cp_contact_space_rebuild(NU, NC, Hbad, G, f, k, NULL, NULL, &kept), -1);
  cr_assert_null(kept.A);
  cr_assert_null(kept.scratch);
  same_space(NU, NC, H, G, f, k, NULL, NULL, &kept);      /* starts over */
  cp_contact_space_free(&kept);
}

/* A free box on four contacts (nu = 6, nc = 4: the sizes the resting-box
 * path of contact/dynamics.c takes as constants, A mirrored whole, the
 * blocks of H kept between rebuilds while H's pattern stays): H = m I3 (+)
 * a 3 x 3 block whose coupled dofs change (0-1-2, then 3-4 coupled and 5
 * alone, then 4-5 coupled and 3 alone: the same block sizes, other
 * members), its values changing at every rebuild. Each rebuild against a
 * fresh build bit for bit, and the fresh build against LU: A and b, A
 * exactly symmetric, H u' = f + G c. */
enum { BNU = 6, BNC = 4, BM = 12 };

static void box_h(uint64_t *s, int pattern, double *H) {
  memset(H, 0, sizeof(double) * BNU * BNU);
  for (int i = 0; i < 3; i++) H[i + i * BNU] = cpt_uniform(s, 0.5, 2);
  for (int i = 3; i < BNU; i++) H[i + i * BNU] = cpt_uniform(s, 1, 2);
  for (int i = 3; i < BNU; i++)
    for (int j = 3; j < i; j++) {
      const int on = pattern == 0 || (pattern == 1 && i == 4 && j == 3) ||
                     (pattern == 2 && i == 5 && j == 4);
      if (on) H[i + j * BNU] = H[j + i * BNU] = cpt_uniform(s, -0.3, 0.3);
    }
}

static void box_against_lu(const double *H, const double *G, const double *f,
                           const double *k, const cp_contact_space *cs) {
  double Hc[BNU * BNU], X[BNU * (BM + 1)];
  lapack_int piv[BNU];
  memcpy(Hc, H, sizeof Hc);
  memcpy(X, G, sizeof(double) * BNU * BM);
  memcpy(X + BNU * BM, f, sizeof(double) * BNU);
  cr_assert_eq(LAPACKE_dgesv(LAPACK_COL_MAJOR, BNU, BM + 1, Hc, BNU, piv, X, BNU), 0);
  for (int i = 0; i < BM; i++) {
    double bi = k[i];
    for (int l = 0; l < BNU; l++) bi += G[l + i * BNU] * X[l + BNU * BM];
    cr_assert_float_eq(cs->b[i], bi, 1e-10);
    for (int j = 0; j < BM; j++) {
      double aij = 0;
      for (int l = 0; l < BNU; l++) aij += G[l + i * BNU] * X[l + j * BNU];
      cr_assert_float_eq(cs->A[i + j * BM], aij, 1e-10);
      cr_assert(cs->A[i + j * BM] == cs->A[j + i * BM]);
    }
  }
}

Test(dynamics, box_rebuilds_keep_blocks_bit_for_bit) {
  const int patterns[] = {0, 0, 0, 1, 1, 2, 2, 0, 1};
  const int nblocks[] = {4, 5, 5};
  uint64_t s = 29;
  double H[BNU * BNU], G[BNU * BM], f[BNU], k[BM], c[BM], u1[BNU], u2[BNU];
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  for (size_t t = 0; t < sizeof patterns / sizeof *patterns; t++) {
    box_h(&s, patterns[t], H);
    for (int i = 0; i < BNU * BM; i++) G[i] = cpt_uniform(&s, -1, 1);
    for (int i = 0; i < BNU; i++) f[i] = cpt_uniform(&s, -5, 5);
    for (int i = 0; i < BM; i++) k[i] = cpt_uniform(&s, -1, 1);
    for (int i = 0; i < BM; i++) c[i] = cpt_uniform(&s, 0, 1);
    cp_contact_space fresh;
    cr_assert_eq(cp_contact_space_build(BNU, BNC, H, G, f, k, NULL, NULL, &fresh), 0);
    cr_assert_eq(cp_contact_space_rebuild(BNU, BNC, H, G, f, k, NULL, NULL, &kept), 0);
    cr_assert_eq(fresh.nblocks, nblocks[patterns[t]]);
    cr_assert_eq(kept.nblocks, fresh.nblocks);
    cr_assert_eq(memcmp(kept.free_idx, fresh.free_idx, sizeof(int) * BNU), 0);
    cr_assert_eq(memcmp(kept.A, fresh.A, sizeof(double) * BM * BM), 0);
    cr_assert_eq(memcmp(kept.b, fresh.b, sizeof(double) * BM), 0);
    box_against_lu(H, G, f, k, &fresh);
    cr_assert_eq(cp_contact_space_accel(&fresh, c, u1, NULL), 0);
    cr_assert_eq(cp_contact_space_accel(&kept, c, u2, NULL), 0);
    cr_assert_eq(memcmp(u1, u2, sizeof u1), 0);
    assert_balanced(BNU, BM, H, G, f, c, u1);
    cp_contact_space_free(&fresh);
  }
  cp_contact_space_free(&kept);
}

/* A scene-sized problem on the large path (3 nc >= 96 rows): 40 free
 * bodies (a diagonal translational block and a dense 3 x 3 rotational one
 * each) and a 5-dof chain with two dofs driven; 70 contacts between two
 * bodies, a body and the ground, a body and the chain, or two links of the
 * chain. cp_contact_space_rebuild_sparse, told where H and G can be nonzero,
 * gives what the build that scans them gives, entry by entry: A, b, the
 * blocks, the accelerations and the driven efforts; twice, the second time
 * reusing the first's arrays with new values on the same pattern, and a
 * third time with fewer contacts (a new size: the first builds' A must be
 * cleared on their footprint, which here is the per-group lists of
 * constraints, fp_lists: these contacts are scattered over the bodies, so
 * each column's first row would span most of A). The
 * entries left out hold zeros of both signs, and some rows inside the
 * ranges are zero too. That the ranges are what the sparse build reads is
 * shown by a nonzero planted outside them: it goes unseen. */
enum { SB = 40, SNU = 6 * SB + 5, SNC = 70, SM = 3 * SNC };

/* H (nu x nu, zeroed first) with nb free bodies' blocks on its diagonal
 * from row 0: a diagonal translational block and a dense symmetric 3 x 3
 * rotational one each. */
static void body_blocks(uint64_t *s, int nb, int nu, double *H) {
  memset(H, 0, sizeof(double) * (size_t)nu * (size_t)nu);
  for (int b = 0; b < nb; b++) {
    const int o = 6 * b;
    for (int i = 0; i < 3; i++) H[(size_t)(o + i) * (size_t)(nu + 1)] = cpt_uniform(s, 0.5, 2);
    for (int i = 3; i < 6; i++)
      for (int j = 3; j <= i; j++)
        H[o + i + (size_t)(o + j) * nu] = H[o + j + (size_t)(o + i) * nu] =
            i == j ? cpt_uniform(s, 1, 2) : cpt_uniform(s, -0.3, 0.3);
  }
}

static void sparse_problem(uint64_t *s, double *H, double *G, double *f, double *k,
                           int *range) {
  body_blocks(s, SB, SNU, H);
  for (int i = 6 * SB; i < SNU; i++) /* the chain: dense, diagonally dominant */
    for (int j = 6 * SB; j <= i; j++)
      H[i + (size_t)j * SNU] = H[j + (size_t)i * SNU] =
          i == j ? cpt_uniform(s, 3, 4) : cpt_uniform(s, -0.5, 0.5);
  for (int i = 0; i < SNU; i++) f[i] = cpt_uniform(s, -5, 5);
  for (int i = 0; i < SM; i++) k[i] = cpt_uniform(s, -1, 1);
  for (int i = 0; i < SNU * SM; i++) G[i] = (i % 7) ? 0.0 : -0.0;
  for (int j = 0; j < SNC; j++) {
    int *r = range + 4 * j;
    const int a = j % SB, b = (j * 7 + 3) % SB;
    switch (j % 5) {
    case 0: r[0] = 6 * a, r[1] = r[0] + 6, r[2] = r[3] = 0; break;  /* ground */
    case 1: r[0] = 6 * b, r[1] = r[0] + 6, r[2] = 6 * SB, r[3] = SNU; break; /* chain */
    case 2: r[0] = 6 * SB, r[1] = SNU, r[2] = r[3] = 0; break; /* two of its links */
    default: /* two bodies, either order */
      r[0] = 6 * a, r[1] = r[0] + 6;
      r[2] = 6 * (a == b ? (a + 1) % SB : b), r[3] = r[2] + 6;
    }
    for (int c = 3 * j; c < 3 * j + 3; c++)
      for (int h = 0; h < 4; h += 2)
        for (int i = r[h]; i < r[h + 1]; i++)
          G[i + (size_t)c * SNU] = (i + c) % 11 ? cpt_uniform(s, -1, 1) : 0.0;
  }
}

Test(dynamics, sparse_rebuild_equals_dense_build) {
  uint64_t s = 41;
  double *H = malloc(sizeof(double) * SNU * SNU), *G = malloc(sizeof(double) * SNU * SM);
  double f[SNU], k[SM], c[SM], ud[SNU], u1[SNU], u2[SNU], t1[SNU], t2[SNU];
  int range[4 * SNC], block[SB + 2];
  unsigned char driven[SNU] = {0};
  cr_assert(H && G);
  driven[6 * SB + 1] = driven[6 * SB + 3] = 1;
  for (int b = 0; b <= SB; b++) block[b] = 6 * b;
  block[SB + 1] = SNU;
  const cp_contact_sparsity sp = {.nblock = SB + 1, .block = block, .range = range};
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  for (int round = 0; round < 3; round++) {
    const int nc = round < 2 ? SNC : SNC - 7, m = 3 * nc;
    sparse_problem(&s, H, G, f, k, range);
    for (int i = 0; i < SNU; i++) ud[i] = cpt_uniform(&s, -2, 2);
    for (int i = 0; i < SM; i++) c[i] = cpt_uniform(&s, 0, 1);
    cp_contact_space dense;
    cr_assert_eq(cp_contact_space_build(SNU, nc, H, G, f, k, driven, ud, &dense), 0);
    /* Contact 5 touches body 5 and the chain; row 0 is body 0's. */
    double *planted = G + (size_t)(3 * 5 + 1) * SNU;
    cr_assert(range[4 * 5] > 0 && planted[0] == 0.0);
    planted[0] = 5.0;
    cr_assert_eq(cp_contact_space_rebuild_sparse(SNU, nc, H, G, f, k, driven, ud, &sp, &kept), 0);
    cr_assert_eq(kept.fp_lists, 1, "round %d: A's footprint as lists", round);
    cr_assert_eq(dense.nblocks, 4 * SB + 1); /* 3 single dofs + a 3 x 3 each, the chain */
    cr_assert_eq(kept.nblocks, dense.nblocks);
    cr_assert_eq(kept.nfree, SNU - 2);
    for (int i = 0; i < kept.nfree; i++) cr_assert_eq(kept.free_idx[i], dense.free_idx[i]);
    for (int i = 0; i < m; i++) {
      cr_assert(kept.b[i] == dense.b[i], "b[%d]: %.17g != %.17g", i, kept.b[i], dense.b[i]);
      for (int j = 0; j < m; j++)
        cr_assert(kept.A[i + j * m] == dense.A[i + j * m], "A[%d, %d] (round %d): %.17g != %.17g",
                  i, j, round, kept.A[i + j * m], dense.A[i + j * m]);
    }
    cr_assert_eq(cp_contact_space_accel(&kept, c, u2, t2), 0); /* (planted: unseen) */
    planted[0] = 0.0; /* (dense borrows G too) */
    cr_assert_eq(cp_contact_space_accel(&dense, c, u1, t1), 0);
    for (int i = 0; i < SNU; i++) {
      cr_assert(u1[i] == u2[i], "udot[%d]: %.17g != %.17g", i, u1[i], u2[i]);
      cr_assert(t1[i] == t2[i], "tau[%d]: %.17g != %.17g", i, t1[i], t2[i]);
    }
    cr_assert(t1[6 * SB + 1] != 0.0 && t1[6 * SB + 3] != 0.0); /* the driven dofs' efforts */
    /* The contacts touch the driven dofs: b depends on their accelerations. */
    int moved = 0;
    for (int i = 0; i < SNU; i++) ud[i] += 1.0;
    cp_contact_space other;
    cr_assert_eq(cp_contact_space_build(SNU, nc, H, G, f, k, driven, ud, &other), 0);
    for (int i = 0; i < m; i++) moved += other.b[i] != dense.b[i];
    cr_assert_gt(moved, 0);
    cp_contact_space_free(&other);
    cp_contact_space_free(&dense);
  }
  cp_contact_space_free(&kept);
  free(H);
  free(G);
}

/* The rebuild's block grows by half again when it must grow, and is then
 * all zeros; a kept block is cleared only where a build wrote (the last
 * footprint, and what lay past A and b: the factors and indices). Contact
 * counts going up and down across both (20: a small A zeroed whole; 45
 * after 40: a new block; 48 after 45: kept, A reaching past what was ever
 * written; 30, 48, 70: kept, then new again) must give, entry by entry,
 * the fresh build's A (zeros included), b and accelerations. */
Test(dynamics, rebuild_growth_keeps_zeros) {
  uint64_t s = 43;
  double *H = malloc(sizeof(double) * SNU * SNU), *G = malloc(sizeof(double) * SNU * SM);
  double f[SNU], k[SM], c[SM], u1[SNU], u2[SNU];
  int range[4 * SNC], block[SB + 2];
  cr_assert(H && G);
  for (int b = 0; b <= SB; b++) block[b] = 6 * b;
  block[SB + 1] = SNU;
  const cp_contact_sparsity sp = {.nblock = SB + 1, .block = block, .range = range};
  static const int sizes[] = {20, 40, 45, 48, 30, 48, 70};
  static const int same_block[] = {0, 0, 0, 1, 1, 1, 0};
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  for (int round = 0; round < 7; round++) {
    const int nc = sizes[round], m = 3 * nc;
    sparse_problem(&s, H, G, f, k, range);
    for (int i = 0; i < SM; i++) c[i] = cpt_uniform(&s, 0, 1);
    cp_contact_space dense;
    cr_assert_eq(cp_contact_space_build(SNU, nc, H, G, f, k, NULL, NULL, &dense), 0);
    const double *before = kept.A;
    const size_t cap = kept.own_cap;
    cr_assert_eq(cp_contact_space_rebuild_sparse(SNU, nc, H, G, f, k, NULL, NULL, &sp, &kept), 0);
    if (same_block[round]) {
      cr_assert(kept.A == before && kept.own_cap == cap, "round %d (%d contacts): kept", round, nc);
    } else {
      cr_assert_gt(kept.own_cap, cap, "round %d (%d contacts): a new block", round, nc);
      cr_assert_geq(kept.own_cap, cap + cap / 2); /* at least half again */
    }
    cr_assert_geq(kept.own_cap, kept.own_dirty);
    for (int i = 0; i < m; i++) {
      cr_assert(kept.b[i] == dense.b[i], "b[%d]: %.17g != %.17g", i, kept.b[i], dense.b[i]);
      for (int j = 0; j < m; j++)
        cr_assert(kept.A[i + j * m] == dense.A[i + j * m], "A[%d, %d] (round %d): %.17g != %.17g",
                  i, j, round, kept.A[i + j * m], dense.A[i + j * m]);
    }
    cr_assert_eq(cp_contact_space_accel(&kept, c, u2, NULL), 0);
    cr_assert_eq(cp_contact_space_accel(&dense, c, u1, NULL), 0);
    for (int i = 0; i < SNU; i++) cr_assert(u1[i] == u2[i], "udot[%d]", i);
    cp_contact_space_free(&dense);
  }
  cp_contact_space_free(&kept);
  free(H);
  free(G);
}

/* The same at the sizes where A's block is a mapping of its own
 * (models/bigbuf.h, from 1 MB): 100 free bodies, contacts with the ground
 * spread over them. Growing from 150 to 200 contacts (A 3.2 MB) grows the
 * block in place or moves it with its pages, so the old part keeps what
 * the earlier builds wrote and the record of it must hold (the new part
 * is zero from the kernel); with 130 contacts after 200 and 200 again the
 * block is kept. Entry by entry, A (zeros included), b and the
 * accelerations must be the fresh build's. */
enum { LB = 100, LNU = 6 * LB, LNC = 200 };

static void ground_problem(uint64_t *s, int nc, double *H, double *G, double *f, double *k) {
  body_blocks(s, LB, LNU, H);
  for (int i = 0; i < LNU; i++) f[i] = cpt_uniform(s, -5, 5);
  memset(G, 0, sizeof(double) * LNU * 3 * (size_t)nc);
  for (int j = 0; j < nc; j++) {
    const int o = 6 * ((j * 37) % LB);
    for (int c = 3 * j; c < 3 * j + 3; c++) {
      k[c] = cpt_uniform(s, -1, 1);
      for (int i = o; i < o + 6; i++) G[i + (size_t)c * LNU] = cpt_uniform(s, -1, 1);
    }
  }
}

Test(dynamics, large_rebuild_growth_keeps_zeros) {
  uint64_t s = 47;
  double *H = malloc(sizeof(double) * LNU * LNU), *G = malloc(sizeof(double) * LNU * 3 * LNC);
  double *f = malloc(sizeof(double) * LNU), *k = malloc(sizeof(double) * 3 * LNC),
         *c = malloc(sizeof(double) * 3 * LNC), *u1 = malloc(sizeof(double) * LNU),
         *u2 = malloc(sizeof(double) * LNU);
  cr_assert(H && G && f && k && c && u1 && u2);
  static const int sizes[] = {150, 200, 130, 200};
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  for (int round = 0; round < 4; round++) {
    const int nc = sizes[round], m = 3 * nc;
    ground_problem(&s, nc, H, G, f, k);
    for (int i = 0; i < m; i++) c[i] = cpt_uniform(&s, 0, 1);
    cp_contact_space dense;
    cr_assert_eq(cp_contact_space_build(LNU, nc, H, G, f, k, NULL, NULL, &dense), 0);
    const size_t cap = kept.own_cap;
    cr_assert_eq(cp_contact_space_rebuild(LNU, nc, H, G, f, k, NULL, NULL, &kept), 0);
    if (round == 1) cr_assert_gt(kept.own_cap, cap, "grown");
    if (round >= 2) cr_assert_eq(kept.own_cap, cap, "kept");
    cr_assert_geq(kept.own_cap, kept.own_dirty);
    for (int i = 0; i < m; i++) {
      cr_assert(kept.b[i] == dense.b[i], "b[%d]: %.17g != %.17g", i, kept.b[i], dense.b[i]);
      for (int j = 0; j < m; j++)
        cr_assert(kept.A[i + (size_t)j * m] == dense.A[i + (size_t)j * m],
                  "A[%d, %d] (round %d): %.17g != %.17g", i, j, round, kept.A[i + (size_t)j * m],
                  dense.A[i + (size_t)j * m]);
    }
    cr_assert_eq(cp_contact_space_accel(&kept, c, u2, NULL), 0);
    cr_assert_eq(cp_contact_space_accel(&dense, c, u1, NULL), 0);
    for (int i = 0; i < LNU; i++) cr_assert(u1[i] == u2[i], "udot[%d]", i);
    cp_contact_space_free(&dense);
  }
  cp_contact_space_free(&kept);
  free(H), free(G), free(f), free(k), free(c), free(u1), free(u2);
}

/* Rebuilds of the same sizes whose footprints differ (the contacts of the
 * problem above taken in another order each round): a build with the
 * sizes of the last one clears the old lower triangle only after its own
 * mirror is known, where that mirror does not reach. At every size (30
 * rows: the smallest tracked; 60; 120 and 210: the lists or colmin), every
 * entry of A, zeros included, and b must be the fresh build's. */
Test(dynamics, same_size_rebuilds_new_footprint) {
  uint64_t s = 47;
  double *H = malloc(sizeof(double) * SNU * SNU), *G0 = malloc(sizeof(double) * SNU * SM),
         *G = malloc(sizeof(double) * SNU * SM);
  double f[SNU], k0[SM], k[SM];
  int range0[4 * SNC], range[4 * SNC], block[SB + 2];
  cr_assert(H && G0 && G);
  for (int b = 0; b <= SB; b++) block[b] = 6 * b;
  block[SB + 1] = SNU;
  const cp_contact_sparsity sp = {.nblock = SB + 1, .block = block, .range = range};
  static const int sizes[] = {10, 20, 40, 70};
  for (int si = 0; si < 4; si++) {
    const int nc = sizes[si], m = 3 * nc;
    cp_contact_space kept;
    memset(&kept, 0, sizeof kept);
    sparse_problem(&s, H, G0, f, k0, range0);
    for (int round = 0; round < 4; round++) {
      /* contact j is the problem's contact (j p + round) mod nc, p prime to nc */
      const int p = round % 2 ? 3 : 7;
      for (int j = 0; j < nc; j++) {
        const int from = (j * p + round) % nc;
        memcpy(G + (size_t)(3 * j) * SNU, G0 + (size_t)(3 * from) * SNU, sizeof(double) * 3 * SNU);
        memcpy(range + 4 * j, range0 + 4 * from, sizeof(int) * 4);
        memcpy(k + 3 * j, k0 + 3 * from, sizeof(double) * 3);
      }
      cp_contact_space dense;
      cr_assert_eq(cp_contact_space_build(SNU, nc, H, G, f, k, NULL, NULL, &dense), 0);
      cr_assert_eq(cp_contact_space_rebuild_sparse(SNU, nc, H, G, f, k, NULL, NULL, &sp, &kept), 0);
      for (int i = 0; i < m; i++) {
        cr_assert(kept.b[i] == dense.b[i], "b[%d]: %.17g != %.17g", i, kept.b[i], dense.b[i]);
        for (int j = 0; j < m; j++)
          cr_assert(kept.A[i + j * m] == dense.A[i + j * m],
                    "A[%d, %d] (%d contacts, round %d): %.17g != %.17g", i, j, nc, round,
                    kept.A[i + j * m], dense.A[i + j * m]);
      }
      cp_contact_space_free(&dense);
    }
    cp_contact_space_free(&kept);
  }
  free(H);
  free(G0);
  free(G);
}

/* A diagonal H: every dof is a block of its own, whose columns of G are
 * contiguous (the dof in all three columns of a run of contacts), a
 * progression of step 3 (one column per contact), irregular, or a single
 * column. A and b must be, bit for bit, the sums the formulation gives in
 * dof order, skipping zeros: A_rc = sum_i (G_ir / d_i)(G_ic / d_i),
 * b_c = sum_i (G_ic / d_i)(f_i / d_i) + k_c with d_i = sqrt(H_ii) (the
 * order every path of the build keeps), for a small problem (gathered by
 * contact), a large one (by column, A cleared on its footprint) and
 * rebuilds into the same arrays. */
enum { DNU = 12 };

static void diagonal_problem(uint64_t *s, int nc, double *H, double *G, double *f,
                             double *k) {
  const int m = 3 * nc;
  memset(H, 0, sizeof(double) * DNU * DNU);
  memset(G, 0, sizeof(double) * (size_t)DNU * (size_t)m);
  for (int i = 0; i < DNU; i++) {
    H[i + i * DNU] = cpt_uniform(s, 0.5, 3);
    f[i] = cpt_uniform(s, -5, 5);
    const int j0 = (int)(cpt_rand(s) % (uint64_t)(nc / 2)), len = 1 + (int)(cpt_rand(s) % (uint64_t)(nc / 2));
    const int e = (int)(cpt_rand(s) % 3);
    for (int j = j0; j < j0 + len && j < nc; j++)
      for (int t = 0; t < 3; t++) {
        const int on = i % 4 == 0 ? 1 : i % 4 == 1 ? t == e : i % 4 == 2 ? cpt_rand(s) % 3 == 0
                                                                      : j == j0 && t == e;
        if (on) G[i + (size_t)(3 * j + t) * DNU] = cpt_uniform(s, -1, 1);
      }
  }
  for (int c = 0; c < m; c++) k[c] = cpt_uniform(s, -1, 1);
}

static void diagonal_check(int nc, const double *H, const double *G, const double *f,
                           const double *k, const cp_contact_space *cs) {
  const int m = 3 * nc;
  for (int c = 0; c < m; c++) {
    double b = 0.0;
    for (int i = 0; i < DNU; i++) {
      const double d = sqrt(H[i + i * DNU]), gc = G[i + (size_t)c * DNU];
      if (gc != 0.0) b += (gc / d) * (f[i] / d);
    }
    b += k[c];
    cr_assert(memcmp(&b, &cs->b[c], sizeof b) == 0, "b[%d]: %.17g != %.17g", c, cs->b[c], b);
    for (int r = 0; r <= c; r++) {
      double a = 0.0;
      for (int i = 0; i < DNU; i++) {
        const double d = sqrt(H[i + i * DNU]), gr = G[i + (size_t)r * DNU],
                     gc = G[i + (size_t)c * DNU];
        if (gr != 0.0 && gc != 0.0) a += (gr / d) * (gc / d);
      }
      const double up = cs->A[r + (size_t)c * m], lo = cs->A[c + (size_t)r * m];
      cr_assert(memcmp(&a, &up, sizeof a) == 0 && memcmp(&a, &lo, sizeof a) == 0,
                "A[%d, %d] (m = %d): %.17g, %.17g != %.17g", r, c, m, up, lo, a);
    }
  }
}

Test(dynamics, single_dof_columns_bit_for_bit) {
  uint64_t s = 77;
  enum { NCMAX = 40 };
  double *G = malloc(sizeof(double) * DNU * 3 * NCMAX);
  double H[DNU * DNU], f[DNU], k[3 * NCMAX];
  cr_assert(G);
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  const int sizes[4] = {6, NCMAX, NCMAX, 10}; /* m = 18, 120 (twice), 30 */
  for (int round = 0; round < 4; round++) {
    const int nc = sizes[round];
    diagonal_problem(&s, nc, H, G, f, k);
    cp_contact_space cs;
    cr_assert_eq(cp_contact_space_build(DNU, nc, H, G, f, k, NULL, NULL, &cs), 0);
    cr_assert_eq(cs.nblocks, DNU);
    diagonal_check(nc, H, G, f, k, &cs);
    cp_contact_space_free(&cs);
    cr_assert_eq(cp_contact_space_rebuild(DNU, nc, H, G, f, k, NULL, NULL, &kept), 0);
    diagonal_check(nc, H, G, f, k, &kept);
  }
  cp_contact_space_free(&kept);
  free(G);
}

/* cp_contact_space_accel's pass down G's columns (3 nc >= 96, or from 48
 * rows with the contacts' row ranges), whose ranges are taken two rows at
 * a time: with H diagonal, u'_i must be, bit for bit, ((f_i + sum_j G_ij
 * c_j) / d_i) / d_i with d_i = sqrt(H_ii) and the sum in column order,
 * zeros included. Ranges of 5 and 7 rows (a pair left over), the upper
 * one given first for odd contacts; and no ranges (12 rows). */
Test(dynamics, accel_by_column_bit_for_bit) {
  uint64_t s = 91;
  enum { NCMAX = 40 };
  double *G = malloc(sizeof(double) * DNU * 3 * NCMAX);
  double H[DNU * DNU], f[DNU], k[3 * NCMAX], c[3 * NCMAX], u[DNU];
  int range[4 * NCMAX];
  cr_assert(G);
  for (int j = 0; j < NCMAX; j++) {
    int *r = range + 4 * j, lo[4] = {0, 5, 5, DNU};
    if (j % 2) lo[0] = 5, lo[1] = DNU, lo[2] = 0, lo[3] = 5;
    memcpy(r, lo, sizeof lo);
  }
  const int sizes[3] = {NCMAX, 17, NCMAX}; /* m = 120, 51 (by column with the ranges only) */
  for (int round = 0; round < 3; round++) {
    const int nc = sizes[round], m = 3 * nc;
    diagonal_problem(&s, nc, H, G, f, k);
    for (int j = 0; j < m; j++) c[j] = j % 5 ? cpt_uniform(&s, 0, 2) : 0.0;
    for (int with = 0; with < 2; with++) {
      if (!with && m < 96) continue; /* (the rows' pass: another path) */
      cp_contact_space cs;
      memset(&cs, 0, sizeof cs);
      const cp_contact_sparsity sp = {.range = range};
      cr_assert_eq(cp_contact_space_rebuild_sparse(DNU, nc, H, G, f, k, NULL, NULL,
                                                   with ? &sp : NULL, &cs), 0);
      cr_assert_eq(cp_contact_space_accel(&cs, c, u, NULL), 0);
      for (int i = 0; i < DNU; i++) {
        const double d = sqrt(H[i + i * DNU]);
        double a = f[i];
        for (int j = 0; j < m; j++) a += G[i + (size_t)j * DNU] * c[j];
        const double want = (a / d) / d;
        cr_assert(memcmp(&want, &u[i], sizeof want) == 0,
                  "udot[%d] (m = %d, ranges %d): %.17g != %.17g", i, m, with, u[i], want);
      }
      cp_contact_space_free(&cs);
    }
  }
  free(G);
}

/* Free bodies in a stack (body b on b - 1, body 0 on a fixed ground; four
 * contacts per interface, so each body's contacts are contiguous), with
 * each body's translations in a different pattern: in every column of its
 * contacts (taken with its rotation in one pass), in one column per
 * contact (on their own), and in a column where the rotation's rows are
 * zero (a contact through the centre, as a sphere's normal: on their own).
 * A and b must be, bit for bit, the block-by-block sums (every path of
 * the build keeps that order): per body, its translations' products
 * (G_ir / d_i)(G_ic / d_i) over its nonzeros, then the rotation's
 * 0 + x0r x0c + x1r x1c + x2r x2c (x = L^-1 G with the build's own 3 x 3
 * factor) where both columns touch it; b the same with f, then + k. Built
 * fresh, rebuilt, and rebuilt with the contacts' row ranges, small (A
 * zeroed whole), medium (footprint) and large (lists by column). */
static void stack_problem(uint64_t *s, int nb, double *H, double *G, double *f, double *k,
                          int *range) {
  const int nu = 6 * nb, nc = 4 * nb, m = 3 * nc;
  body_blocks(s, nb, nu, H);
  memset(G, 0, sizeof(double) * (size_t)nu * (size_t)m);
  for (int i = 0; i < nu; i++) f[i] = cpt_uniform(s, -5, 5);
  for (int c = 0; c < m; c++) k[c] = cpt_uniform(s, -1, 1);
  for (int j = 0; j < nc; j++) {
    const int top = j / 4, low = top - 1; /* interface top: body top on low */
    int *r = range + 4 * j;
    r[0] = 6 * top, r[1] = r[0] + 6;
    r[2] = low >= 0 ? 6 * low : 0, r[3] = low >= 0 ? r[2] + 6 : 0;
    for (int side = 0; side < 2; side++) {
      const int b = side ? low : top;
      if (b < 0) continue;
      const int kind = b % 3; /* 0 dense, 1 one column per contact, 2 through the centre */
      for (int t = 0; t < 3; t++) {
        double *g = G + (size_t)(3 * j + t) * nu + 6 * b;
        for (int i = 0; i < 3; i++)
          if (kind != 1 || i == (j + t) % 3) g[i] = cpt_uniform(s, -1, 1);
        if (!(kind == 2 && t == 0 && j % 2 == 0))
          for (int i = 3; i < 6; i++) g[i] = cpt_uniform(s, -1, 1);
      }
    }
  }
}

/* v := L^-1 v for a 3 x 3 lower factor, by forward substitution. */
static void forward3(const double *L, double *v) {
  v[0] = v[0] / L[0];
  v[1] = (v[1] - L[1] * v[0]) / L[4];
  v[2] = ((v[2] - L[2] * v[0]) - L[5] * v[1]) / L[8];
}

static void stack_check(int nb, const double *H, const double *G, const double *f,
                        const double *k, const cp_contact_space *cs) {
  const int nu = 6 * nb, m = 12 * nb;
  cr_assert_eq(cs->nblocks, 4 * nb);
  double *x = malloc(sizeof(double) * 3 * (size_t)m);
  unsigned char *on = malloc((size_t)m);
  double *A = calloc((size_t)m * (size_t)m, sizeof(double)), *b = calloc((size_t)m, sizeof(double));
  cr_assert(x && on && A && b);
  for (int body = 0; body < nb; body++) {
    const int o = 6 * body;
    for (int i = o; i < o + 3; i++) {
      const double d = sqrt(H[i + (size_t)i * nu]);
      for (int c = 0; c < m; c++) {
        const double gc = G[i + (size_t)c * nu];
        if (gc == 0.0) continue;
        b[c] += (gc / d) * (f[i] / d);
        for (int r = 0; r <= c; r++) {
          const double gr = G[i + (size_t)r * nu];
          if (gr != 0.0) A[r + (size_t)c * m] += (gr / d) * (gc / d);
        }
      }
    }
    const int kb = 4 * body + 3;
    cr_assert_eq(cs->bstart[kb + 1] - cs->bstart[kb], 3);
    const double *L = cs->L + cs->loff[kb];
    double y[3] = {f[o + 3], f[o + 4], f[o + 5]};
    forward3(L, y);
    for (int c = 0; c < m; c++) {
      const double *g = G + (size_t)c * nu + o + 3;
      on[c] = g[0] != 0.0 || g[1] != 0.0 || g[2] != 0.0;
      double *v = x + 3 * c;
      v[0] = g[0], v[1] = g[1], v[2] = g[2];
      forward3(L, v);
      if (!on[c]) continue;
      double bc = 0.0;
      for (int t = 0; t < 3; t++) bc += v[t] * y[t];
      b[c] += bc;
    }
    for (int c = 0; c < m; c++)
      for (int r = 0; r <= c && on[c]; r++) {
        if (!on[r]) continue;
        double v = 0.0;
        v += x[3 * r] * x[3 * c];
        v += x[3 * r + 1] * x[3 * c + 1];
        v += x[3 * r + 2] * x[3 * c + 2];
        A[r + (size_t)c * m] += v;
      }
  }
  for (int c = 0; c < m; c++) {
    const double bc = b[c] + k[c];
    cr_assert(memcmp(&bc, &cs->b[c], sizeof bc) == 0, "b[%d] (m = %d): %.17g != %.17g", c, m,
              cs->b[c], bc);
    for (int r = 0; r <= c; r++) {
      const double a = A[r + (size_t)c * m], up = cs->A[r + (size_t)c * m],
                   lo = cs->A[c + (size_t)r * m];
      cr_assert(memcmp(&a, &up, sizeof a) == 0 && memcmp(&a, &lo, sizeof a) == 0,
                "A[%d, %d] (m = %d): %.17g, %.17g != %.17g", r, c, m, up, lo, a);
    }
  }
  free(x), free(on), free(A), free(b);
}

Test(dynamics, stacked_bodies_bit_for_bit) {
  enum { NBMAX = 9 };
  const int nbs[4] = {1, 3, NBMAX, 4}; /* m = 12, 36, 108 (by column), 48 */
  double *H = malloc(sizeof(double) * 36 * NBMAX * NBMAX),
         *G = malloc(sizeof(double) * 72 * NBMAX * NBMAX);
  double f[6 * NBMAX], k[12 * NBMAX];
  int range[16 * NBMAX];
  cr_assert(H && G);
  uint64_t s = 2026;
  cp_contact_space kept, kept_sp;
  memset(&kept, 0, sizeof kept);
  memset(&kept_sp, 0, sizeof kept_sp);
  for (int round = 0; round < 8; round++) {
    const int nb = nbs[round % 4], nu = 6 * nb, nc = 4 * nb;
    stack_problem(&s, nb, H, G, f, k, range);
    cp_contact_space cs;
    cr_assert_eq(cp_contact_space_build(nu, nc, H, G, f, k, NULL, NULL, &cs), 0);
    stack_check(nb, H, G, f, k, &cs);
    cp_contact_space_free(&cs);
    cr_assert_eq(cp_contact_space_rebuild(nu, nc, H, G, f, k, NULL, NULL, &kept), 0);
    stack_check(nb, H, G, f, k, &kept);
    const cp_contact_sparsity sp = {.range = range};
    cr_assert_eq(cp_contact_space_rebuild_sparse(nu, nc, H, G, f, k, NULL, NULL, &sp, &kept_sp),
                 0);
    stack_check(nb, H, G, f, k, &kept_sp);
  }
  cp_contact_space_free(&kept);
  cp_contact_space_free(&kept_sp);
  free(H), free(G);
}

/* A large build keeps what decided its footprint (the per-group lists'
 * cost, and the lists) while the contacts' ranges and H's blocks stay the
 * same, and decides again when they change. A stack of KB bodies, four
 * contacts under each (the lists too dear: colmin's footprint), rebuilt
 * into the same arrays: new values on the same ranges, a contact gone (a
 * size of its own), the same size with a contact moved to another pair,
 * that again (the lists now: colmin's footprint spreads), another contact
 * moved instead (the lists made again), and the first ranges back. Every round's A (zeros included) and b must be the fresh
 * build's, bit for bit. */
enum { KB = 12, KNU = 6 * KB, KNC = 4 * KB };

static void pair_stack_problem(uint64_t *s, int nc, int moved, double *H, double *G, double *f,
                          double *k, int *range) {
  body_blocks(s, KB, KNU, H);
  for (int i = 0; i < KNU; i++) f[i] = cpt_uniform(s, -5, 5);
  memset(G, 0, sizeof(double) * KNU * 3 * (size_t)nc);
  for (int j = 0; j < nc; j++) {
    int *r = range + 4 * j;
    const int p = j == moved ? KB - 1 : j / 4; /* pair p: bodies p - 1 and p */
    r[0] = p ? 6 * (p - 1) : 6 * p, r[1] = r[0] + 6;
    r[2] = p ? 6 * p : 0, r[3] = p ? r[2] + 6 : 0;
    for (int c = 3 * j; c < 3 * j + 3; c++) {
      k[c] = cpt_uniform(s, -1, 1);
      for (int h = 0; h < 4; h += 2)
        for (int i = r[h]; i < r[h + 1]; i++) G[i + (size_t)c * KNU] = cpt_uniform(s, -1, 1);
    }
  }
}

Test(dynamics, kept_footprint_choice_bit_for_bit) {
  uint64_t s = 53;
  double *H = malloc(sizeof(double) * KNU * KNU), *G = malloc(sizeof(double) * KNU * 3 * KNC);
  double f[KNU], k[3 * KNC];
  int range[4 * KNC], block[KB + 1];
  cr_assert(H && G);
  for (int b = 0; b <= KB; b++) block[b] = 6 * b;
  const cp_contact_sparsity sp = {.nblock = KB, .block = block, .range = range};
  static const int sizes[] = {KNC, KNC, KNC - 1, KNC, KNC, KNC, KNC};
  static const int moved[] = {-1, -1, -1, 5, 5, 9, -1};
  static const int lists[] = {0, 0, 0, 1, 1, 1, 0}; /* (a moved contact spreads colmin's) */
  cp_contact_space kept;
  memset(&kept, 0, sizeof kept);
  for (int round = 0; round < 7; round++) {
    const int nc = sizes[round], m = 3 * nc;
    pair_stack_problem(&s, nc, moved[round], H, G, f, k, range);
    cp_contact_space dense;
    cr_assert_eq(cp_contact_space_build(KNU, nc, H, G, f, k, NULL, NULL, &dense), 0);
    cr_assert_eq(cp_contact_space_rebuild_sparse(KNU, nc, H, G, f, k, NULL, NULL, &sp, &kept), 0);
    cr_assert_eq(kept.fp_kept, 1);
    cr_assert_eq(kept.fp_lists, lists[round], "round %d: the footprint's kind", round);
    for (int i = 0; i < m; i++) {
      cr_assert(kept.b[i] == dense.b[i], "b[%d]: %.17g != %.17g", i, kept.b[i], dense.b[i]);
      for (int j = 0; j < m; j++)
        cr_assert(memcmp(&kept.A[i + j * m], &dense.A[i + j * m], sizeof(double)) == 0,
                  "A[%d, %d] (round %d): %.17g != %.17g", i, j, round, kept.A[i + j * m],
                  dense.A[i + j * m]);
    }
    cp_contact_space_free(&dense);
  }
  cp_contact_space_free(&kept);
  free(H), free(G);
}
