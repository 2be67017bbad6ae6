/* placeholder */
#include "contact/lcpio.h"
int cp_lcp_parse_json(const char *t, size_t l, cp_lcp *o, cp_error *e) { (void)t;(void)l;(void)o; return cp_error_set(e, "", "todo"); }
int cp_lcp_parse_dat(const char *t, size_t l, cp_lcp *o, cp_error *e) { (void)t;(void)l;(void)o; return cp_error_set(e, "", "todo"); }
int cp_lcp_parse(const char *t, size_t l, cp_lcp *o, cp_error *e) { (void)t;(void)l;(void)o; return cp_error_set(e, "", "todo"); }
char *cp_lcp_format_json(const cp_lcp *l) { (void)l; return 0; }
char *cp_lcp_format_dat(const cp_lcp *l) { (void)l; return 0; }
