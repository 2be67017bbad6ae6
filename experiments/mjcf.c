/* A complan scene as MuJoCo MJCF (experiments/mjcf.h). */
#include "experiments/mjcf.h"

#include <stdio.h>
#include <stdlib.h>

#include "models/mesh.h"

#define G17 "%.17g"

static void put_inertial(FILE *f, double mass, const double *com, const double *I) {
  fprintf(f,
          "<inertial pos=\"" G17 " " G17 " " G17 "\" mass=\"" G17 "\" fullinertia=\"" G17
          " " G17 " " G17 " " G17 " " G17 " " G17 "\"/>\n",
          com[0], com[1], com[2], mass, I[0], I[4], I[8], I[1], I[2], I[5]);
}

/* One geom of shape s at pos/quat in its body's frame (mesh: asset `mesh`). */
static void put_geom(FILE *f, const cp_shape *s, const double *pos, const double *quat,
                     double mu, const char *mesh) {
  fprintf(f, "<geom friction=\"" G17 " 0 0\" pos=\"" G17 " " G17 " " G17 "\" quat=\"" G17
             " " G17 " " G17 " " G17 "\" ",
          mu, pos[0], pos[1], pos[2], quat[0], quat[1], quat[2], quat[3]);
  switch (s->type) {
  case CP_SHAPE_BOX:
    fprintf(f, "type=\"box\" size=\"" G17 " " G17 " " G17 "\"/>\n", s->size[0] / 2,
            s->size[1] / 2, s->size[2] / 2);
    break;
  case CP_SHAPE_SPHERE: fprintf(f, "type=\"sphere\" size=\"" G17 "\"/>\n", s->radius); break;
  case CP_SHAPE_CAPSULE:
  case CP_SHAPE_CYLINDER:
    fprintf(f, "type=\"%s\" size=\"" G17 " " G17 "\"/>\n",
            s->type == CP_SHAPE_CAPSULE ? "capsule" : "cylinder", s->radius, s->length / 2);
    break;
  case CP_SHAPE_MESH: fprintf(f, "type=\"mesh\" mesh=\"%s\"/>\n", mesh); break;
  default: fprintf(f, "type=\"sphere\" size=\"0.001\" contype=\"0\" conaffinity=\"0\"/>\n");
  }
}

/* A mesh's convex hull points (shape frame) as an asset. */
static void put_mesh_asset(FILE *f, const cp_shape *s, const char *name) {
  const cp_mesh *m = s->mesh;
  fprintf(f, "<mesh name=\"%s\" vertex=\"", name);
  if (m->hull_n_points > 0)
    for (int i = 0; i < m->hull_n_points; ++i)
      for (int k = 0; k < 3; ++k)
        fprintf(f, G17 " ", m->hull_points[3 * i + k] + m->hull_center[k]);
  else
    for (int i = 0; i < 3 * m->n_vertices; ++i) fprintf(f, G17 " ", m->vertices[i]);
  fprintf(f, "\"/>\n");
}

/* Mesh asset names: body i's "bm<i>", shape k of link j of manipulator m
 * "lm<m>_<j>_<k>". */
static const char *body_mesh(char *buf, size_t n, int i) {
  snprintf(buf, n, "bm%d", i);
  return buf;
}
static const char *link_mesh(char *buf, size_t n, int m, int j, int k) {
  snprintf(buf, n, "lm%d_%d_%d", m, j, k);
  return buf;
}

/* Every mesh of the scene as an asset. */
static void put_assets(FILE *f, const cp_scene *sc) {
  char name[64];
  for (int i = 0; i < sc->n_bodies; ++i)
    if (sc->bodies[i].shape.type == CP_SHAPE_MESH)
      put_mesh_asset(f, &sc->bodies[i].shape, body_mesh(name, sizeof name, i));
  for (int m = 0; m < sc->n_manips; ++m)
    for (int j = 0; j < sc->manips[m].n; ++j) {
      const cp_link *l = &sc->manips[m].joints[j].link;
      for (int k = 0; k < cp_link_shape_count(l); ++k) {
        cp_link_shape ls;
        cp_link_shape_get(l, k, &ls);
        if (ls.shape.type == CP_SHAPE_MESH)
          put_mesh_asset(f, &ls.shape, link_mesh(name, sizeof name, m, j, k));
      }
    }
}

/* Link j of chain c and (recursively) its children, as nested bodies. */
static void put_link(FILE *f, const cp_scene *sc, int m, int j) {
  char name[64];
  const cp_chain *c = &sc->manips[m];
  const cp_joint *jt = &c->joints[j];
  fprintf(f, "<body name=\"m%dl%d\" pos=\"" G17 " " G17 " " G17 "\" quat=\"" G17 " " G17 " " G17
             " " G17 "\">\n",
          m, j, jt->origin_pos[0], jt->origin_pos[1], jt->origin_pos[2], jt->origin_quat[0],
          jt->origin_quat[1], jt->origin_quat[2], jt->origin_quat[3]);
  fprintf(f, "<joint name=\"m%dj%d\" type=\"%s\" axis=\"" G17 " " G17 " " G17 "\"/>\n", m, j,
          jt->type == CP_JOINT_REVOLUTE ? "hinge" : "slide", jt->axis[0], jt->axis[1],
          jt->axis[2]);
  put_inertial(f, jt->link.mass, jt->link.com, jt->link.inertia);
  for (int k = 0; k < cp_link_shape_count(&jt->link); ++k) {
    cp_link_shape ls;
    cp_link_shape_get(&jt->link, k, &ls);
    put_geom(f, &ls.shape, ls.pos, ls.quat, sc->mu_default, link_mesh(name, sizeof name, m, j, k));
  }
  for (int i = j + 1; i < c->n; ++i)
    if (cp_chain_parent(c, i) == j) put_link(f, sc, m, i);
  fprintf(f, "</body>\n");
}

char *bench_mjcf(const cp_scene *sc, double dt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  int nc = 0; /* a generous contact budget: MuJoCo 2.2 allocates it up front */
  for (int i = 0; i < sc->n_bodies; ++i) nc += 16;
  for (int m = 0; m < sc->n_manips; ++m) nc += 16 * sc->manips[m].n;
  fprintf(f,
          "<mujoco model=\"complan\">\n<compiler angle=\"radian\" balanceinertia=\"true\"/>\n"
          "<size nconmax=\"%d\" njmax=\"%d\"/>\n"
          "<option timestep=\"" G17 "\" gravity=\"" G17 " " G17 " " G17 "\"/>\n<asset>\n",
          nc + 100, 6 * nc + 500, dt, sc->gravity[0], sc->gravity[1], sc->gravity[2]);
  put_assets(f, sc);
  fprintf(f, "</asset>\n<worldbody>\n");
  static const double q1[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0};
  char name[64];
  int nb = 0;
  for (int i = 0; i < sc->n_bodies; ++i) {
    const cp_body *b = &sc->bodies[i];
    if (b->base_of || !b->fixed) continue;
    if (b->shape.type == CP_SHAPE_PLANE) {
      double R[9], x[3], n[3], p[3];
      cp_scene_frame(sc, (cp_ref){i, -1, -1}, R, x);
      for (int r = 0; r < 3; ++r) {
        n[r] = R[3 * r] * b->shape.normal[0] + R[3 * r + 1] * b->shape.normal[1] +
               R[3 * r + 2] * b->shape.normal[2];
        p[r] = x[r] + b->shape.offset * n[r];
      }
      fprintf(f, "<geom type=\"plane\" size=\"0 0 1\" friction=\"" G17 " 0 0\" pos=\"" G17 " " G17
                 " " G17 "\" zaxis=\"" G17 " " G17 " " G17 "\"/>\n",
              sc->mu_default, p[0], p[1], p[2], n[0], n[1], n[2]);
    } else {
      put_geom(f, &b->shape, b->x, b->q, sc->mu_default, body_mesh(name, sizeof name, i));
    }
  }
  for (int i = 0; i < sc->n_bodies; ++i) {
    const cp_body *b = &sc->bodies[i];
    if (b->fixed) continue;
    fprintf(f, "<body name=\"b%d\" pos=\"" G17 " " G17 " " G17 "\" quat=\"" G17 " " G17 " " G17
               " " G17 "\">\n<freejoint/>\n",
            nb++, b->x[0], b->x[1], b->x[2], b->q[0], b->q[1], b->q[2], b->q[3]);
    put_inertial(f, b->mass, zero, b->inertia);
    put_geom(f, &b->shape, zero, q1, sc->mu_default, body_mesh(name, sizeof name, i));
    fprintf(f, "</body>\n");
  }
  for (int m = 0; m < sc->n_manips; ++m) {
    const cp_chain *c = &sc->manips[m];
    fprintf(f, "<body name=\"m%dbase\" pos=\"" G17 " " G17 " " G17 "\" quat=\"" G17 " " G17 " " G17
               " " G17 "\">\n",
            m, c->base_pos[0], c->base_pos[1], c->base_pos[2], c->base_quat[0], c->base_quat[1],
            c->base_quat[2], c->base_quat[3]);
    for (int i = 0; i < sc->n_bodies; ++i) { /* root geometry, in the base frame */
      const cp_body *b = &sc->bodies[i];
      if (b->base_of != m + 1) continue;
      /* world pose -> base frame: p = R_b^T (x - o_b), q = q_b^-1 q */
      const double *o = c->base_pos, *qb = c->base_quat;
      double d[3] = {b->x[0] - o[0], b->x[1] - o[1], b->x[2] - o[2]}, p[3], q[4];
      double w = qb[0], u[3] = {-qb[1], -qb[2], -qb[3]}; /* conjugate */
      double t[3] = {2 * (u[1] * d[2] - u[2] * d[1]), 2 * (u[2] * d[0] - u[0] * d[2]),
                     2 * (u[0] * d[1] - u[1] * d[0])};
      p[0] = d[0] + w * t[0] + u[1] * t[2] - u[2] * t[1];
      p[1] = d[1] + w * t[1] + u[2] * t[0] - u[0] * t[2];
      p[2] = d[2] + w * t[2] + u[0] * t[1] - u[1] * t[0];
      const double *r = b->q;
      q[0] = w * r[0] - u[0] * r[1] - u[1] * r[2] - u[2] * r[3];
      q[1] = w * r[1] + u[0] * r[0] + u[1] * r[3] - u[2] * r[2];
      q[2] = w * r[2] - u[0] * r[3] + u[1] * r[0] + u[2] * r[1];
      q[3] = w * r[3] + u[0] * r[2] - u[1] * r[1] + u[2] * r[0];
      put_geom(f, &b->shape, p, q, sc->mu_default, body_mesh(name, sizeof name, i));
    }
    for (int j = 0; j < c->n; ++j)
      if (cp_chain_parent(c, j) < 0) put_link(f, sc, m, j);
    fprintf(f, "</body>\n");
  }
  fprintf(f, "</worldbody>\n<contact>\n");
  for (int m = 0; m < sc->n_manips; ++m) {
    const cp_chain *c = &sc->manips[m];
    for (int j = 0; j < c->n; ++j) {
      if (c->no_self_contacts || cp_chain_parent(c, j) < 0)
        fprintf(f, "<exclude body1=\"m%dbase\" body2=\"m%dl%d\"/>\n", m, m, j);
      if (c->no_self_contacts)
        for (int k = j + 1; k < c->n; ++k)
          if (cp_chain_parent(c, k) != j) /* MuJoCo skips parent and child */
            fprintf(f, "<exclude body1=\"m%dl%d\" body2=\"m%dl%d\"/>\n", m, j, m, k);
    }
  }
  fprintf(f, "</contact>\n</mujoco>\n");
  if (fclose(f)) {
    free(buf);
    return NULL;
  }
  return buf;
}
