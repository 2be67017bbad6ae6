#include "experiments/stacklcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/dynamics.h"
#include "contact/problem.h"
#include "contact/pyramid.h"
#include "models/scene.h"
#include "models/system.h"

/* Appends to s (capacity cap, *len used) with vsnprintf, never past the
 * end: the text is cut short rather than overrun (the capacity below is
 * ample). It replaces a chain of unbounded sprintf calls through a moving
 * pointer, which GCC flagged at -O1 with the sanitizers
 * (-Wformat-overflow, "null destination pointer"). */
static void put(char *s, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *s, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(s + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k > 0) *len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
}

char *cp_stack_scene(int n, double edge, double height, double mu, int sliding) {
  size_t cap = 4096 + (size_t)n * 1024, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = '\0';
  const double h = 0.5 * edge;
  put(s, cap, &len, "{\"gravity\": [0, 0, -9.81], \"friction\": {\"default\": %.17g},"
                    " \"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\":"
                    " {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}", mu);
  for (int i = 0; i < n; i++)
    put(s, cap, &len, ", {\"name\": \"b%d\", \"mass\": 1, \"shape\": {\"type\": \"box\","
                      " \"size\": [%.17g, %.17g, %.17g]}, \"position\": [0, 0, %.17g],"
                      " \"velocity\": [%g, 0, 0]}",
        i, edge, edge, height, height * (0.5 + i), sliding && i % 2 ? 0.1 : 0.0);
  put(s, cap, &len, "], \"contacts\": [");
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 4; c++) {
      double x = c & 1 ? h : -h, y = c & 2 ? h : -h;
      char below[16];
      if (i == 0) snprintf(below, sizeof below, "table");
      else snprintf(below, sizeof below, "b%d", i - 1);
      put(s, cap, &len, "%s{\"a\": \"b%d\", \"b\": \"%s\", \"point\": [%.17g, %.17g, %.17g],"
                        " \"normal\": [0, 0, 1], \"tangent\": [1, 0, 0]}",
          i || c ? ", " : "", i, below, x, y, height * i);
    }
  put(s, cap, &len, "]}");
  return s;
}

int cp_scene_lcp(const char *text, double **Mout, double **qout) {
  cp_scene scene;
  cp_system sys;
  cp_error err;
  if (cp_scene_parse(text, strlen(text), NULL, NULL, &scene, &err)) {
    fprintf(stderr, "cp_scene_lcp: %s: %s\n", err.where, err.msg);
    return -1;
  }
  if (cp_system_build(&scene, &sys, &err)) {
    fprintf(stderr, "cp_scene_lcp: %s: %s\n", err.where, err.msg);
    cp_scene_free(&scene);
    return -1;
  }
  cp_contact_space cs;
  cp_contact_space_build(sys.n_u, sys.n_c, sys.H, sys.G, sys.f, sys.k, NULL, NULL, &cs);
  const int m = cp_system_pyramid_lcp(&sys, &cs, Mout, qout);
  if (m < 0) fprintf(stderr, "cp_scene_lcp: out of memory\n");
  cp_contact_space_free(&cs);
  cp_system_free(&sys);
  cp_scene_free(&scene);
  return m;
}

int cp_system_pyramid_lcp(const cp_system *sys, const cp_contact_space *cs, double **Mout,
                          double **qout) {
  const size_t nc = sys->n_c > 0 ? (size_t)sys->n_c : 1;
  cp_pyramid_contact *pc = malloc(sizeof *pc * nc);
  int *order = malloc(sizeof(int) * nc), *rank = malloc(sizeof(int) * nc);
  int m = -1;
  *Mout = *qout = NULL;
  if (pc && order && rank) {
    cp_problem_pyramid_contacts(sys, pc);
    cp_pyramid_layout lay;
    cp_pyramid_layout_make(sys->n_c, pc, order, rank, &lay);
    m = lay.m;
    *Mout = malloc(sizeof(double) * (size_t)(m > 0 ? m * m : 1));
    *qout = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    if (*Mout && *qout) {
      cp_pyramid_build(&lay, pc, cs->A, cs->b, *Mout, *qout);
    } else {
      free(*Mout);
      free(*qout);
      *Mout = *qout = NULL;
      m = -1;
    }
  }
  free(pc);
  free(order);
  free(rank);
  return m;
}

int cp_resting_stack_lcp(int n, double edge, double **M, double **q) {
  char *text = cp_stack_scene(n, edge, edge, 0.5, 0);
  if (!text) return -1;
  const int m = cp_scene_lcp(text, M, q);
  free(text);
  return m;
}
