/* placeholder */
int cp_output_placeholder;
