/* The state vector's layout (planner/sim/statelayout.h). */
#include "planner/sim/statelayout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const body_comp[CP_STATE_BODY_SIZE] = {
    "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
static const char *const joint_comp[CP_STATE_JOINT_SIZE] = {"q", "qd"};

void cp_state_layout_free(cp_state_layout *l) {
  free(l->body_at);
  free(l->free_body);
  free(l->manip_first);
  free(l->joint_at);
  free(l->row_manip);
  free(l->row_joint);
  memset(l, 0, sizeof *l);
}

int cp_state_layout_init(cp_state_layout *l, const cp_scene *s) {
  memset(l, 0, sizeof *l);
  int total = 0, rows = 0;
  for (int m = 0; m < s->n_manips; ++m) {
    total += s->manips[m].n;
    for (int k = 0; k < s->manips[m].n; ++k)
      rows += !s->manips[m].joints[k].is_mimic;
  }
  l->n_bodies = s->n_bodies;
  l->n_manips = s->n_manips;
  l->body_at = malloc(((size_t)s->n_bodies + 1) * sizeof *l->body_at);
  l->free_body = malloc(((size_t)s->n_bodies + 1) * sizeof *l->free_body);
  l->manip_first = malloc(((size_t)s->n_manips + 1) * sizeof *l->manip_first);
  l->joint_at = malloc(((size_t)total + 1) * sizeof *l->joint_at);
  l->row_manip = malloc(((size_t)rows + 1) * sizeof *l->row_manip);
  l->row_joint = malloc(((size_t)rows + 1) * sizeof *l->row_joint);
  if (!l->body_at || !l->free_body || !l->manip_first || !l->joint_at ||
      !l->row_manip || !l->row_joint) {
    cp_state_layout_free(l);
    return -1;
  }
  int at = 0;
  for (int b = 0; b < s->n_bodies; ++b) {
    if (s->bodies[b].fixed) {
      l->body_at[b] = -1;
      continue;
    }
    l->body_at[b] = at;
    l->free_body[l->n_free++] = b;
    at += CP_STATE_BODY_SIZE;
  }
  int j = 0;
  for (int m = 0; m < s->n_manips; ++m) {
    l->manip_first[m] = j;
    for (int k = 0; k < s->manips[m].n; ++k, ++j) {
      if (s->manips[m].joints[k].is_mimic) {
        l->joint_at[j] = -1;
        continue;
      }
      l->joint_at[j] = at;
      l->row_manip[l->n_joints] = m;
      l->row_joint[l->n_joints++] = k;
      at += CP_STATE_JOINT_SIZE;
    }
  }
  l->manip_first[s->n_manips] = j;
  l->n = at;
  return 0;
}

int cp_state_body_at(const cp_state_layout *l, int b) {
  return b >= 0 && b < l->n_bodies ? l->body_at[b] : -1;
}

int cp_state_joint_at(const cp_state_layout *l, int m, int k) {
  if (m < 0 || m >= l->n_manips || k < 0 ||
      k >= l->manip_first[m + 1] - l->manip_first[m])
    return -1;
  return l->joint_at[l->manip_first[m] + k];
}

int cp_state_joint_row(const cp_state_layout *l, const cp_scene *s,
                       const char *name, const char **leader) {
  const char *slash = strchr(name, '/');
  if (!slash) return -1;
  size_t ml = (size_t)(slash - name);
  for (int m = 0; m < s->n_manips && m < l->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    if (strlen(c->name) != ml || strncmp(c->name, name, ml)) continue;
    for (int k = 0; k < c->n; ++k) {
      if (strcmp(c->joints[k].name, slash + 1)) continue;
      int at = cp_state_joint_at(l, m, k);
      if (at >= 0)
        return (at - CP_STATE_BODY_SIZE * l->n_free) / CP_STATE_JOINT_SIZE;
      if (leader) *leader = c->joints[c->joints[k].mimic_leader].name;
      return -2;
    }
  }
  return -1;
}

int cp_state_entry_of(const cp_state_layout *l, int i, cp_state_entry *e) {
  if (i < 0 || i >= l->n) return -1;
  int bodies = CP_STATE_BODY_SIZE * l->n_free;
  if (i < bodies) {
    *e = (cp_state_entry){0, l->free_body[i / CP_STATE_BODY_SIZE], -1, -1,
                          i % CP_STATE_BODY_SIZE,
                          body_comp[i % CP_STATE_BODY_SIZE]};
  } else {
    int r = (i - bodies) / CP_STATE_JOINT_SIZE,
        c = (i - bodies) % CP_STATE_JOINT_SIZE;
    *e = (cp_state_entry){1, -1, l->row_manip[r], l->row_joint[r], c,
                          joint_comp[c]};
  }
  return 0;
}

int cp_state_owner_name(const cp_state_layout *l, const cp_scene *s, int i,
                        char *buf, size_t size) {
  cp_state_entry e;
  if (cp_state_entry_of(l, i, &e)) return -1;
  if (!e.is_joint) return snprintf(buf, size, "%s", s->bodies[e.body].name);
  return snprintf(buf, size, "%s/%s", s->manips[e.manip].name,
                  s->manips[e.manip].joints[e.joint].name);
}

int cp_state_column_name(const cp_state_layout *l, const cp_scene *s, int i,
                         char *buf, size_t size) {
  cp_state_entry e;
  if (cp_state_entry_of(l, i, &e)) return -1;
  if (!e.is_joint)
    return snprintf(buf, size, "%s.%s", s->bodies[e.body].name,
                    e.component_name);
  return snprintf(buf, size, "%s/%s.%s", s->manips[e.manip].name,
                  s->manips[e.manip].joints[e.joint].name, e.component_name);
}
