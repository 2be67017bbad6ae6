/* placeholder */
int cp_cli_lcp_placeholder;
