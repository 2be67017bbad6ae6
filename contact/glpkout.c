#include "contact/glpkout.h"

#include <stddef.h>

static cp_glpk_sink sink_fn;
static void *sink_ctx;

void cp_glpk_set_sink(cp_glpk_sink sink, void *ctx) {
  sink_fn = sink;
  sink_ctx = ctx;
}

int cp_glpk_has_sink(void) { return sink_fn != NULL; }

int cp_glpk_forward(void *info, const char *text) {
  (void)info;
  if (sink_fn && text) sink_fn(sink_ctx, text);
  return 1;
}
