/* placeholder: being written */
#include "contact/fip.h"
cp_fip_options cp_fip_defaults(void) { cp_fip_options o = {0}; o.max_iter = 300; o.gap_tol = 1e-6; o.check = cp_check_defaults(); return o; }
cp_lcp_status cp_fip_solve(int n, const double *M, const double *q, const cp_fip_options *opt, double *z, double *w, cp_lcp_info *info) { (void)n;(void)M;(void)q;(void)opt;(void)z;(void)w; cp_lcp_info_clear(info); return info->status; }
