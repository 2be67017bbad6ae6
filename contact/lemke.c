/* placeholder: being written */
#include "contact/lemke.h"
#include <stdlib.h>
cp_lemke_options cp_lemke_defaults(void) { cp_lemke_options o = {0}; o.restarts = 3; o.seed = 1; o.pivot_tol = 1e-12; o.lexicographic = 1; o.check = cp_check_defaults(); return o; }
struct cp_lemke_ws { int cap; };
cp_lemke_ws *cp_lemke_ws_create(int capacity) { cp_lemke_ws *w = malloc(sizeof *w); if (w) w->cap = capacity; return w; }
void cp_lemke_ws_destroy(cp_lemke_ws *ws) { free(ws); }
cp_lcp_status cp_lemke_solve(cp_lemke_ws *ws, int n, const double *M, const double *q, const cp_lemke_options *opt, const unsigned char *warm, double *z, double *w, cp_lcp_info *info) { (void)ws;(void)n;(void)M;(void)q;(void)opt;(void)warm;(void)z;(void)w; cp_lcp_info_clear(info); return info->status; }
int cp_lemke_basis(const cp_lemke_ws *ws, unsigned char *basis) { (void)ws; (void)basis; return -1; }
int cp_lemke_pivots_per_start(const cp_lemke_ws *ws, int *p, int cap) { (void)ws;(void)p;(void)cap; return 0; }
