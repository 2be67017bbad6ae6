/// \file tests/contact/lemke_exact.h
/// Test oracle: Lemke's method in exact arithmetic (GMP integers, Bareiss
/// fraction-free pivoting), used only by the test suite.
///
/// It runs the same method as contact/lemke.c on the same augmented system
/// w - M z - d z0 = q (covering vector d, default e) with the same rules:
/// the first pivot takes the row of min q_i / d_i, every later pivot the row
/// of the ratio test; ties go to z0 when it is among them, otherwise to the
/// lexicographically smallest row of [qbar, B^-1] divided by the pivot
/// column. In exact arithmetic those rows are distinct (B^-1 is regular), so
/// every decision is unique and the method cannot cycle: its path is THE
/// lexicographic path, the reference for the floating-point solver.
///
/// Data: the doubles of M, q, d are read exactly (every double is a dyadic
/// rational); the whole system is scaled by one power of two to integers,
/// which scales the w variables by a positive constant and changes neither
/// the path nor the solution.
///
/// Tableau T (n x (2n+2) integers) holds det * [B^-1 A | B^-1 q], det the
/// determinant of the current basis (up to the initial scale); a pivot on
/// (r, s) replaces T_ij by (T_ij T_rs - T_is T_rj) / det_old, an exact
/// division (Bareiss/Edmonds), so entries stay as large as minors of the
/// data, not exponentially larger.
#ifndef CP_TESTS_LEMKE_EXACT_H
#define CP_TESTS_LEMKE_EXACT_H

#include "contact/lcp.h"

/// One pivot of a path: variables numbered as in cp_lemke_step (w_i = i,
/// z_i = n + i, z0 = 2n).
typedef struct cpt_exact_step {
  int entering, leaving;
  int ties; ///< rows attaining the minimum ratio (1: no tie)
} cpt_exact_step;

typedef struct cpt_exact_result {
  cp_lcp_status status; ///< SOLVED, SECONDARY_RAY or PIVOT_CAP
  int pivots;
  int ties;             ///< ratio tests with more than one minimising row
} cpt_exact_result;

/// Runs exact Lemke from the all-w basis with covering vector d (NULL: e).
/// Writes z[n] (rounded to double; may be NULL) and the first `trace_cap`
/// steps into trace (may be NULL). max_pivots <= 0: 50 (n + 1) + 100.
cpt_exact_result cpt_lemke_exact(int n, const double *M, const double *q,
                                 const double *d, int max_pivots, double *z,
                                 cpt_exact_step *trace, int trace_cap);

#endif
