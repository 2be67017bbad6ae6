// Islands (planner/sim/world_impl.h, docs/simulate.md "Islands"): the
// friction LCP of a step split into independent groups of constraints and
// each group solved on its own, from its own part of the warm basis.
//
// Two constraints are coupled when they act on a common moving part: a free
// body, or a manipulator (whose joints share one mass matrix). Fixed bodies
// couple nothing. A = G^T H^-1 G has a zero block between constraints of
// different groups (H is block diagonal over the moving parts), so the LCP
// of lcp_setup is block diagonal over the groups, up to the order of its
// unknowns, and its solution is the union of the groups' solutions. What a
// split saves is the dense work over the whole problem: the warm basis's LU
// and the check of every row against every basic column (k^3 and n k), and,
// when the warm basis does not fit (boxes landing in a bin), Lemke's pivots
// over all n rows and the forming of the whole n x n matrix.
//
// A scene of one group never comes here past the count (its bits stay those
// of the unsplit solve). A group's solve is cp_wi_solve_friction itself on a
// problem made of the group's rows (the world's LCP state is switched to it
// and restored); when any group is not solved, everything is put back and
// the caller solves the whole problem as before.
#include <stdlib.h>
#include <string.h>

#include "models/grow.h"
#include "planner/sim/world_impl.h"

// Below this many constraints the problem is solved whole: the split's
// bookkeeping costs more than it saves on a few contacts.
#define CP_WORLD_ISLAND_MIN 8

struct cp_wi_islands {
  int busy; // a group is being solved (cp_wi_solve_friction re-entered)
  int taken; // the most groups of a split solve since cp_wi_islands_taken
  // Per constraint / node: union-find parents, labels, group members.
  int *parent, *lab, *members, *start;
  int node_cap, con_cap;
  // The whole problem kept while groups are solved: q, basis, z, w (m);
  // rank, order (ns); and a group's own arrays: A (3 n square), bs (3 n),
  // pc (n), sel (n), the map of its unknowns to the whole's (m).
  double *q, *z, *w, *A, *bs;
  unsigned char *basis, *bout;
  int *rank, *order, *sel, *map;
  cp_pyramid_contact *pc;
  int m_cap, a_cap;
  long cold_taken; // impact LCPs solved split (cp_wi_islands_cold_taken)
};

void cp_wi_islands_free(cp_world *w) {
  struct cp_wi_islands *s = w->isl;
  if (!s) return;
  free(s->parent);
  free(s->lab);
  free(s->members);
  free(s->start);
  free(s->q);
  free(s->z);
  free(s->w);
  free(s->A);
  free(s->bs);
  free(s->basis);
  free(s->bout);
  free(s->rank);
  free(s->order);
  free(s->sel);
  free(s->map);
  free(s->pc);
  free(s);
  w->isl = NULL;
}

int cp_wi_islands_taken(cp_world *w) {
  if (!w->isl) return 0;
  const int n = w->isl->taken;
  w->isl->taken = 0;
  return n;
}

static int find(int *parent, int a) {
  while (parent[a] != a) a = parent[a] = parent[parent[a]];
  return a;
}

// The moving part (node) of a contact side: a free body's index, a
// manipulator's n_bodies + index; -1 for fixed geometry.
static int node_of(const cp_world *w, cp_ref r) {
  if (r.body >= 0) return w->sc.bodies[r.body].fixed ? -1 : r.body;
  return r.manip >= 0 ? w->sc.n_bodies + r.manip : -1;
}

void cp_wi_con_nodes(const cp_world *w, const con *c, int nd[2]) {
  nd[0] = nd[1] = -1;
  if (c->contact == CP_CON_SUPPORT) { // a planar body's support: the body
    nd[0] = c->key.a[1];
    return;
  }
  if (c->contact < 0) { // a joint limit: its manipulator
    nd[0] = w->sc.n_bodies + w->row_manip[c->row];
    return;
  }
  const cp_contact *ct = &w->sc.contacts[c->contact];
  nd[0] = node_of(w, ct->a);
  nd[1] = node_of(w, ct->b);
}

static int grow_all(cp_world *w, int nodes, int ns, int m) {
  struct cp_wi_islands *s = w->isl;
  if (nodes > s->node_cap) {
    int cap = s->node_cap;
    if (cp_grow((void **)&s->parent, &cap, nodes, sizeof(int))) return -1;
    s->node_cap = cap;
  }
  if (ns > s->con_cap) {
    int c = 2 * ns;
    int **iv[6] = {&s->lab, &s->members, &s->start, &s->rank, &s->order, &s->sel};
    for (int i = 0; i < 6; ++i) {
      int *p = realloc(*iv[i], sizeof(int) * (size_t)(c + 1));
      if (!p) return -1;
      *iv[i] = p;
    }
    double *d = realloc(s->bs, sizeof(double) * 3 * (size_t)c);
    if (!d) return -1;
    s->bs = d;
    cp_pyramid_contact *p = realloc(s->pc, sizeof *p * (size_t)c);
    if (!p) return -1;
    s->pc = p;
    s->con_cap = c;
  }
  if (m > s->m_cap) {
    int c = 2 * m;
    double **dv[3] = {&s->q, &s->z, &s->w};
    for (int i = 0; i < 3; ++i) {
      double *p = realloc(*dv[i], sizeof(double) * (size_t)c);
      if (!p) return -1;
      *dv[i] = p;
    }
    unsigned char **bv[2] = {&s->basis, &s->bout};
    for (int i = 0; i < 2; ++i) {
      unsigned char *p = realloc(*bv[i], (size_t)c);
      if (!p) return -1;
      *bv[i] = p;
    }
    int *p = realloc(s->map, sizeof(int) * (size_t)c);
    if (!p) return -1;
    s->map = p;
    s->m_cap = c;
  }
  return 0;
}

// Groups of the ns selected constraints: s->lab[k] in [0, ng), numbered in
// order of their first constraint; members of group g are
// s->members[s->start[g] .. s->start[g + 1]) in increasing order. Returns
// ng.
static int label(cp_world *w, int ns) {
  struct cp_wi_islands *s = w->isl;
  const int nodes = w->sc.n_bodies + w->sc.n_manips;
  int *parent = s->parent;
  for (int i = 0; i < nodes; ++i) parent[i] = i;
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    if (nd[0] >= 0 && nd[1] >= 0) {
      int a = find(parent, nd[0]), b = find(parent, nd[1]);
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  }
  // A node's group number (parent[] of roots reused: -1 - group).
  int ng = 0;
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    const int n = nd[0] >= 0 ? nd[0] : nd[1];
    if (n < 0) { // touches nothing that moves: a group of its own
      s->lab[k] = ng++;
      continue;
    }
    int r = n;
    while (parent[r] >= 0 && parent[r] != r) r = parent[r];
    if (parent[r] >= 0) parent[r] = -1 - ng++; // first constraint of r's group
    s->lab[k] = -1 - parent[r];
  }
  // Counting sort of the constraints by group (stable: increasing within).
  for (int g = 0; g <= ng; ++g) s->start[g] = 0;
  for (int k = 0; k < ns; ++k) s->start[s->lab[k] + 1]++;
  for (int g = 0; g < ng; ++g) s->start[g + 1] += s->start[g];
  for (int k = 0; k < ns; ++k) s->members[s->start[s->lab[k]]++] = k;
  for (int g = ng; g > 0; --g) s->start[g] = s->start[g - 1];
  s->start[0] = 0;
  return ng;
}

// cold: each group solved cold (cp_wi_solve_islands_cold), else by
// cp_wi_solve_friction from its part of the warm basis.
static int solve_split(cp_world *w, int m, int *piv, int *warm_used, cp_lcp_info *info,
                       int cold) {
  const int ns = w->lns, nr = w->lnr;
  if (ns < CP_WORLD_ISLAND_MIN || (w->isl && w->isl->busy)) return 1;
  if (!w->isl && !(w->isl = calloc(1, sizeof *w->isl))) return 1;
  struct cp_wi_islands *s = w->isl;
  if (grow_all(w, w->sc.n_bodies + w->sc.n_manips, ns, m)) return 1;
  const int ng = label(w, ns);
  if (ng < 2) return 1;
  // The whole problem, kept.
  const double *Asel = w->Asel;
  double *bs = w->bs;
  cp_pyramid_contact *pc = w->pc;
  int *sel = w->sel;
  memcpy(s->q, w->q, sizeof(double) * (size_t)m);
  memcpy(s->basis, w->basis, (size_t)m);
  memcpy(s->rank, w->rank, sizeof(int) * (size_t)ns);
  memcpy(s->order, w->order, sizeof(int) * (size_t)nr);
  int biggest = 0;
  for (int g = 0; g < ng; ++g)
    if (s->start[g + 1] - s->start[g] > biggest) biggest = s->start[g + 1] - s->start[g];
  const size_t asz = 9 * (size_t)biggest * (size_t)biggest;
  if (asz > (size_t)s->a_cap) {
    double *p = realloc(s->A, sizeof(double) * asz);
    if (!p) return 1;
    s->A = p;
    s->a_cap = (int)asz;
  }
  const size_t m3 = 3 * (size_t)ns;
  int ok = 1, all_warm = 1;
  cp_lcp_info sum;
  cp_lcp_info_clear(&sum);
  sum.status = CP_LCP_SOLVED;
  sum.solver = CP_SOLVER_LEMKE;
  sum.min_z = 0;
  sum.min_w = 0;
  s->busy = 1;
  for (int g = 0; g < ng && ok; ++g) {
    const int *K = s->members + s->start[g], n = s->start[g + 1] - s->start[g];
    const size_t n3 = 3 * (size_t)n;
    // The group's rows and columns of Asel, three (a constraint's) at a
    // time.
    for (int kb = 0; kb < n; ++kb)
      for (int e = 0; e < 3; ++e) {
        const double *col = Asel + (size_t)(3 * K[kb] + e) * m3;
        double *dst = s->A + (size_t)(3 * kb + e) * n3;
        for (int ka = 0; ka < n; ++ka) memcpy(dst + 3 * ka, col + 3 * (size_t)K[ka], 3 * sizeof(double));
      }
    for (int k = 0; k < n; ++k) {
      memcpy(s->bs + 3 * k, bs + 3 * K[k], 3 * sizeof(double));
      s->pc[k] = pc[K[k]];
      s->sel[k] = sel[K[k]];
    }
    w->Asel = s->A;
    w->bs = s->bs;
    w->pc = s->pc;
    w->sel = s->sel;
    const int mg = cp_wi_lcp_setup(w, n);
    if (mg < 0) {
      ok = 0;
      break;
    }
    // The group's unknowns in the whole problem (lcp_setup's order:
    // c_n, then four beta per rolling constraint, then lambda).
    const int nrg = w->lnr;
    for (int k = 0; k < n; ++k) {
      s->map[k] = K[k];
      const int f = w->rank[k], F = s->rank[K[k]];
      if (f < 0) continue;
      for (int e = 0; e < 4; ++e) s->map[n + 4 * f + e] = ns + 4 * F + e;
      s->map[n + 4 * nrg + f] = ns + 4 * nr + F;
    }
    for (int v = 0; v < mg; ++v) w->basis[v] = s->basis[s->map[v]];
    int warm = 0, rc;
    cp_lcp_info li;
    if (cold) {
      cp_wi_lcp_fill(w, mg);
      rc = cp_wi_solve_friction_cold(w, mg, piv, &li);
    } else {
      rc = cp_wi_solve_friction(w, mg, piv, &warm, &li);
    }
    if (rc) {
      ok = 0;
      break;
    }
    all_warm &= warm;
    for (int v = 0; v < mg; ++v) {
      s->z[s->map[v]] = w->z[v];
      s->w[s->map[v]] = w->w[v];
      s->bout[s->map[v]] = w->basis[v];
    }
    sum.iterations += li.iterations;
    sum.starts += li.starts;
    sum.residual = MAXD(sum.residual, li.residual);
    sum.min_z = MIND(sum.min_z, li.min_z);
    sum.min_w = MIND(sum.min_w, li.min_w);
  }
  s->busy = 0;
  // The whole problem back (and its answer, when every group was solved).
  w->Asel = Asel;
  w->bs = bs;
  w->pc = pc;
  w->sel = sel;
  w->lns = ns;
  w->lnr = nr;
  memcpy(w->q, s->q, sizeof(double) * (size_t)m);
  memcpy(w->rank, s->rank, sizeof(int) * (size_t)ns);
  memcpy(w->order, s->order, sizeof(int) * (size_t)nr);
  if (!ok) {
    memcpy(w->basis, s->basis, (size_t)m);
    return 1;
  }
  memcpy(w->z, s->z, sizeof(double) * (size_t)m);
  memcpy(w->w, s->w, sizeof(double) * (size_t)m);
  memcpy(w->basis, s->bout, (size_t)m);
  if (warm_used) *warm_used = all_warm;
  *info = sum;
  if (ng > s->taken) s->taken = ng;
  s->cold_taken += cold;
  return 0;
}

int cp_wi_solve_islands(cp_world *w, int m, int *piv, int *warm_used,
                        cp_lcp_info *info) {
  return solve_split(w, m, piv, warm_used, info, 0);
}

int cp_wi_solve_islands_cold(cp_world *w, int m, int *piv, cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  return solve_split(w, m, piv, NULL, info, 1);
}

long cp_wi_islands_cold_taken(const cp_world *w) { return w->isl ? w->isl->cold_taken : 0; }
