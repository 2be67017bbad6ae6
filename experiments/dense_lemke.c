/* placeholder */
int cp_dense_lemke_placeholder;
