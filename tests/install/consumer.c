/* A program outside the tree: it includes only <complan/complan.h> and links
 * with pkg-config's flags for the installed complan (install_test.sh). It
 * solves a 2x2 LCP with a known answer, hashes a byte with the one FNV and
 * opens an in-memory store, so that each floor's library code links. */
#include <complan/complan.h>

#include <math.h>
#include <stdio.h>

int main(void) {
  /* M = [2 1; 1 2] (column-major), q = (-5, -6): both z_i > 0, w = 0, so
   * z = -M^-1 q = (4/3, 7/3). */
  const double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lemke_options o = cp_lemke_defaults();
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  if (!ws) return 1;
  cp_lcp_status s = cp_lemke_solve(ws, 2, M, q, &o, NULL, z, w, &info);
  cp_lemke_ws_destroy(ws);
  if (s != CP_LCP_SOLVED || fabs(z[0] - 4.0 / 3) > 1e-12 ||
      fabs(z[1] - 7.0 / 3) > 1e-12 || fabs(w[0]) > 1e-12 || fabs(w[1]) > 1e-12) {
    fprintf(stderr, "consumer: LCP: %s, z = (%.17g, %.17g)\n",
            cp_lcp_status_name(s), z[0], z[1]);
    return 1;
  }
  /* complan's FNV of "a": (offset ^ 'a') * prime mod 2^64, worked out by
   * hand. complan's offset is 1469598103934665603, the published FNV-1a
   * basis 14695981039346656037 without its last digit (kept: stored values
   * are made with it), so this is not the published vector af63dc4c.... */
  if (cp_fnv_bytes(CP_FNV_OFFSET, "a", 1) != 0x44bd8ad473cd9906ull) {
    fprintf(stderr, "consumer: FNV-1a of \"a\" is wrong\n");
    return 1;
  }
  cp_store *st;
  char msg[256];
  if (cp_store_open(":memory:", 0, &st, msg, sizeof msg) != CP_STORE_OK) {
    fprintf(stderr, "consumer: %s\n", msg);
    return 1;
  }
  cp_store_close(st);
  printf("consumer: z = (%.6f, %.6f)\n", z[0], z[1]);
  return 0;
}
