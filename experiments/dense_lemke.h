/// \file experiments/dense_lemke.h
/// Reference implementation for benchmarks: Lemke's method on the full dense
/// tableau [I, -M, -d | q] (n x (2n+2), column-major), one full rank-1 row
/// operation per pivot, covering vector of ones, the same lexicographic ratio
/// test and z0 tie rule as contact/lemke.c. Written plainly; no refinement of
/// the answer. Not part of the library.
#ifndef CP_EXPERIMENTS_DENSE_LEMKE_H
#define CP_EXPERIMENTS_DENSE_LEMKE_H

#include "contact/lcp.h"

typedef struct cp_dense_lemke cp_dense_lemke;

/// Workspace (tableau and vectors) for problems of size <= capacity.
cp_dense_lemke *cp_dense_lemke_create(int capacity);
void cp_dense_lemke_destroy(cp_dense_lemke *dl);

/// Solves the LCP (M column-major) from the all-w basis. Writes z[n], w[n]
/// (w read off the tableau), *pivots and *k_avg (mean number of basic
/// non-w variables during the pivots). Returns CP_LCP_SOLVED (z0 left the
/// basis; the caller checks the answer), CP_LCP_SECONDARY_RAY,
/// CP_LCP_PIVOT_CAP (max_pivots <= 0: 50 (n+1) + 100), or CP_LCP_NOMEM when
/// n exceeds the capacity.
cp_lcp_status cp_dense_lemke_solve(cp_dense_lemke *dl, int n, const double *M,
                                   const double *q, int max_pivots, double *z,
                                   double *w, int *pivots, double *k_avg);

#endif
