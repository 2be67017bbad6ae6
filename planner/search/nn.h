/// \file planner/search/nn.h
/// Nearest-neighbour index for the sampling planners: an incremental k-d
/// tree over points of R^d under the Euclidean distance. The planners embed
/// states with the task's metric weights (each coordinate multiplied by its
/// weight), so the weighted state metric
///     d(x, y)^2 = sum_k w_k^2 (x_k - y_k)^2
/// is the Euclidean distance of the embeddings.
///
/// Structure: leaves hold up to 16 points; a full leaf splits at the median
/// of its widest coordinate (the coordinate of largest spread), so the tree
/// adapts to the few coordinates in which a search tree actually spreads
/// (a box sliding on a table moves in x, y and yaw; its z stays put).
/// Queries are exact (branch and bound on the splitting planes). Removal
/// marks a point dead; dead points are skipped by queries.
///
/// Ownership: the index copies the points it is given. Not thread-safe.
#ifndef CP_PLANNER_NN_H
#define CP_PLANNER_NN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_nn cp_nn;

/// A new empty index of dimension d >= 1; NULL when out of memory.
cp_nn *cp_nn_create(int d);
void cp_nn_destroy(cp_nn *nn);

/// Adds point p (d doubles) with a caller's id. Returns 0, or -1 when out of
/// memory (the index is unchanged).
int cp_nn_add(cp_nn *nn, const double *p, long id);

/// Marks the point with this id dead (first live match); returns 0, or -1
/// when no live point has it. O(1) when ids were given in insertion order
/// (0, 1, 2, ...: the planners' node ids), else a scan.
int cp_nn_remove(cp_nn *nn, long id);

/// Live points.
long cp_nn_size(const cp_nn *nn);

/// The id of the live point nearest q, and its squared distance in *d2
/// (may be NULL); -1 when the index has no live point.
long cp_nn_nearest(const cp_nn *nn, const double *q, double *d2);

/// The ids of the min(k, live) live points nearest q, nearest first (equal
/// distances by increasing id, whatever the order the points were added
/// in: the answer is a function of the live points), into ids[k], their
/// squared distances into d2[k] (may be NULL). Returns how many, or -1
/// when out of memory.
int cp_nn_knearest(const cp_nn *nn, const double *q, int k, long *ids,
                   double *d2);

/// Ids of the live points within distance r of q (at most cap of them are
/// written to ids); returns how many there are in all.
long cp_nn_radius(const cp_nn *nn, const double *q, double r, long *ids,
                  long cap);

/// Distance evaluations done by queries since the index was created (to
/// measure that queries do not scan).
long long cp_nn_evaluations(const cp_nn *nn);

#ifdef __cplusplus
}
#endif
#endif
