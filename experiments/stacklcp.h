/// \file experiments/stacklcp.h
/// Stacks of boxes, the commonest scene a simulator steps, as scene text and
/// as pyramid LCPs (the real pipeline: scene, system, contact space, pyramid).
/// Shared by the benchmarks and the tests.
#ifndef CP_EXPERIMENTS_STACKLCP_H
#define CP_EXPERIMENTS_STACKLCP_H

#include "contact/dynamics.h"
#include "models/system.h"

/// JSON scene (malloc'd): n boxes (1 kg, footprint edge x edge, given
/// height) stacked on a table, four corner contacts under each, friction
/// mu. sliding = 0: everything at rest (every contact rolling); 1: box i
/// moves at 0.1 m/s along x when i is odd (its contacts slide).
char *cp_stack_scene(int n, double edge, double height, double mu, int sliding);

/// Pyramid LCP of a scene text: returns its size m and malloc'd *M [m*m,
/// column-major] and *q [m], or -1 (message on stderr) when the scene is bad.
int cp_scene_lcp(const char *text, double **M, double **q);

/// The pyramid LCP of a built system and its contact space (A, b): returns
/// its size m and malloc'd *M [m*m, column-major] and *q [m], or -1 when out
/// of memory. The step cp_scene_lcp and bench_contact's "M, q" share.
int cp_system_pyramid_lcp(const cp_system *sys, const cp_contact_space *cs, double **M,
                          double **q);

/// cp_scene_lcp of a resting stack of n cubes of edge `edge` (mu 0.5).
int cp_resting_stack_lcp(int n, double edge, double **M, double **q);

#endif
