/* placeholder: being written */
#include "contact/certify.h"
cp_certify_options cp_certify_defaults(void) { cp_certify_options o = {0}; o.time_limit_s = 60; o.alpha_tol = 1e-9; o.max_cuts = 64; o.check = cp_check_defaults(); return o; }
cp_lcp_status cp_certify(int n, const double *M, const double *q, const cp_certify_options *opt, double *z, double *w, double *z2, double *w2, cp_certify_result *res, cp_lcp_info *info) { (void)n;(void)M;(void)q;(void)opt;(void)z;(void)w;(void)z2;(void)w2;(void)res; cp_lcp_info_clear(info); return info->status; }
