#include "contact/glpkout.h"

#include <glpk.h>

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

static cp_glpk_fault_fn fault_fn;
static void *fault_ctx;

void cp_glpk_set_fault(cp_glpk_fault_fn fn, void *ctx) {
  fault_fn = fn;
  fault_ctx = ctx;
}

int cp_glpk_fault(const char *where) {
  return fault_fn && fault_fn(fault_ctx, where) ? 1 : 0;
}

void cp_glpk_thread_end(void) { glp_free_env(); }
