#include "models/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

void cp_system_free(cp_system *s) {
  if (!s) return;
  free(s->obj_body); free(s->body_obj);
  free(s->joint_manip); free(s->joint_index); free(s->joint_offset);
  free(s->chain_row); free(s->chain_row_scale); free(s->chain_row_offset);
  free(s->u); free(s->H); free(s->f);
  free(s->drive); free(s->tau); free(s->qdd); free(s->g_man); free(s->h_man);
  free(s->G); free(s->k); free(s->v); free(s->Gtor); free(s->ktor);
  free(s->frame); free(s->point); free(s->mu); free(s->sliding); free(s->d);
  memset(s, 0, sizeof *s);
}

int cp_system_joint_row(const cp_system *s, int m, int k) {
  return 6 * s->n_obj + s->chain_row[s->chain_row_offset[m] + k];
}

// calloc of at least one element, so that empty arrays are non-NULL too.
static void *zalloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }

// Per-ref data at a contact point: velocity, velocity-product acceleration,
// angular velocity and angular velocity-product acceleration.
typedef struct point_kin {
  double vel[3], acc[3], w[3], dw[3];
} point_kin;

typedef struct build_ctx {
  const cp_scene *scene;
  cp_system *sys;
  cp_link_state **states; // [n_manips] link states of each chain
  double *J, *Jw;         // [3 * max chain length] scratch
} build_ctx;

// Adds sign * scale * (N^T column) of the full-space Jacobians J, Jw of link
// k into the rows of contact j: each joint on k's path contributes to the
// row of the coordinate that moves it.
static void add_joint_columns(build_ctx *bc, int j, int m, int k, double sign) {
  cp_system *s = bc->sys;
  const cp_chain *ch = &bc->scene->manips[m];
  const double *N = s->frame + 9 * j;
  size_t nu = (size_t)s->n_u;
  const int *row = s->chain_row + s->chain_row_offset[m];
  const double *scale = s->chain_row_scale + s->chain_row_offset[m];
  for (int i = k; i >= 0; i = cp_chain_parent(ch, i)) {
    size_t r = (size_t)(6 * s->n_obj + row[i]);
    double sg = sign * scale[i];
    for (int c = 0; c < 3; ++c)
      s->G[(size_t)(3 * j + c) * nu + r] += sg * cp_v3_dot(bc->J + 3 * i, N + 3 * c);
    s->Gtor[(size_t)j * nu + r] += sg * cp_v3_dot(bc->Jw + 3 * i, N);
  }
}

static void ref_kin(const build_ctx *bc, cp_ref r, const double *p,
                    point_kin *pk) {
  memset(pk, 0, sizeof *pk);
  if (r.body >= 0) {
    const cp_body *b = &bc->scene->bodies[r.body];
    if (b->fixed) return;
    double d[3], t[3];
    cp_v3_sub(d, p, b->x);
    cp_v3_cross(t, b->w, d);
    cp_v3_add(pk->vel, b->v, t);
    cp_v3_cross(pk->acc, b->w, t); // w x (w x r)
    cp_v3_copy(pk->w, b->w);
    return;
  }
  const cp_link_state *st = bc->states[r.manip];
  cp_chain_point_velocity(st, r.link, p, pk->vel);
  cp_chain_point_bias(st, r.link, p, pk->acc);
  cp_v3_copy(pk->w, st[r.link].w);
  cp_v3_copy(pk->dw, st[r.link].dw);
}

// Adds sign * (contribution of ref r) to the columns of contact j in G, Gtor.
static void add_columns(build_ctx *bc, int j, cp_ref r, double sign) {
  cp_system *s = bc->sys;
  const cp_scene *sc = bc->scene;
  const double *N = s->frame + 9 * j, *p = s->point + 3 * j;
  size_t nu = (size_t)s->n_u;
  if (r.body >= 0) {
    int oi = s->body_obj[r.body];
    if (oi < 0) return; // fixed
    double d[3];
    cp_v3_sub(d, p, sc->bodies[r.body].x);
    for (int c = 0; c < 3; ++c) {
      double *col = s->G + (size_t)(3 * j + c) * nu + 6 * oi, rx[3];
      cp_v3_cross(rx, d, N + 3 * c);
      for (int i = 0; i < 3; ++i) {
        col[i] += sign * N[3 * c + i];
        col[3 + i] += sign * rx[i];
      }
    }
    double *tc = s->Gtor + (size_t)j * nu + 6 * oi;
    for (int i = 0; i < 3; ++i) tc[3 + i] += sign * N[i];
    return;
  }
  const cp_chain *ch = &sc->manips[r.manip];
  const cp_link_state *st = bc->states[r.manip];
  cp_chain_point_jacobian(ch, st, r.link, p, bc->J);
  cp_chain_angular_jacobian(ch, st, r.link, bc->Jw);
  add_joint_columns(bc, j, r.manip, r.link, sign);
}

static int alloc_all(cp_system *s, int n_bodies, int n_manips, int n_full) {
  size_t nu = (size_t)s->n_u, nc = (size_t)s->n_c, nl = (size_t)s->n_l;
  s->obj_body = zalloc((size_t)s->n_obj, sizeof(int));
  s->body_obj = zalloc((size_t)n_bodies, sizeof(int));
  s->joint_manip = zalloc(nl, sizeof(int));
  s->joint_index = zalloc(nl, sizeof(int));
  s->joint_offset = zalloc((size_t)n_manips, sizeof(int));
  s->chain_row = zalloc((size_t)n_full, sizeof(int));
  s->chain_row_scale = zalloc((size_t)n_full, sizeof(double));
  s->chain_row_offset = zalloc((size_t)n_manips, sizeof(int));
  s->u = zalloc(nu, sizeof(double));
  s->H = zalloc(nu * nu, sizeof(double));
  s->f = zalloc(nu, sizeof(double));
  s->drive = zalloc(nl, sizeof(cp_joint_drive));
  s->tau = zalloc(nl, sizeof(double));
  s->qdd = zalloc(nl, sizeof(double));
  s->g_man = zalloc(nl, sizeof(double));
  s->h_man = zalloc(nl, sizeof(double));
  s->G = zalloc(nu * 3 * nc, sizeof(double));
  s->k = zalloc(3 * nc, sizeof(double));
  s->v = zalloc(3 * nc, sizeof(double));
  s->Gtor = zalloc(nu * nc, sizeof(double));
  s->ktor = zalloc(nc, sizeof(double));
  s->frame = zalloc(9 * nc, sizeof(double));
  s->point = zalloc(3 * nc, sizeof(double));
  s->mu = zalloc(nc, sizeof(double));
  s->sliding = zalloc(nc, sizeof(int));
  s->d = zalloc(2 * nc, sizeof(double));
  return s->obj_body && s->body_obj && s->joint_manip && s->joint_index &&
                 s->joint_offset && s->chain_row && s->chain_row_scale &&
                 s->chain_row_offset && s->u && s->H && s->f && s->drive &&
                 s->tau && s->qdd && s->g_man && s->h_man && s->G && s->k &&
                 s->v && s->Gtor && s->ktor && s->frame && s->point && s->mu &&
                 s->sliding && s->d
             ? 0
             : -1;
}

int cp_system_build(const cp_scene *sc, cp_system *s, cp_error *err) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < sc->n_bodies; ++i) s->n_obj += !sc->bodies[i].fixed;
  s->n_l = cp_scene_joint_count(sc);
  s->n_u = 6 * s->n_obj + s->n_l;
  s->n_c = sc->n_contacts;
  s->tol = sc->velocity_tolerance;
  size_t nu = (size_t)s->n_u;
  int maxn = 1, n_full = 0;
  for (int m = 0; m < sc->n_manips; ++m) {
    if (sc->manips[m].n > maxn) maxn = sc->manips[m].n;
    n_full += sc->manips[m].n;
  }
  build_ctx bc = {.scene = sc, .sys = s};
  bc.states = zalloc((size_t)sc->n_manips, sizeof *bc.states);
  bc.J = zalloc((size_t)(3 * maxn), sizeof(double));
  bc.Jw = zalloc((size_t)(3 * maxn), sizeof(double));
  double *Mm = zalloc((size_t)maxn * (size_t)maxn, sizeof(double));
  double *gf = zalloc((size_t)(2 * maxn), sizeof(double)), *hf = gf + maxn;
  int ok = bc.states && bc.J && bc.Jw && Mm && gf &&
           !alloc_all(s, sc->n_bodies, sc->n_manips, n_full);
  for (int m = 0; ok && m < sc->n_manips; ++m)
    ok = (bc.states[m] = zalloc((size_t)sc->manips[m].n,
                                sizeof(cp_link_state))) != NULL;
  if (!ok) {
    cp_error_set(err, "", "out of memory building the system");
    goto done;
  }

  // Free bodies: rows, H blocks, f.
  for (int i = 0, oi = 0; i < sc->n_bodies; ++i) {
    const cp_body *b = &sc->bodies[i];
    if (b->fixed) { s->body_obj[i] = -1; continue; }
    s->body_obj[i] = oi;
    s->obj_body[oi] = i;
    size_t r0 = 6 * (size_t)oi;
    double R[9], Iw[9], Iww[3], gyro[3];
    cp_quat_to_mat(R, b->q);
    cp_m3_rotate_sym(Iw, R, b->inertia);
    for (int k = 0; k < 3; ++k) {
      s->H[(r0 + k) + (r0 + k) * nu] = b->mass;
      for (int c = 0; c < 3; ++c)
        s->H[(r0 + 3 + k) + (r0 + 3 + c) * nu] = Iw[3 * k + c];
      s->u[r0 + k] = b->v[k];
      s->u[r0 + 3 + k] = b->w[k];
      s->f[r0 + k] = b->mass * sc->gravity[k];
    }
    cp_m3_mulv(Iww, Iw, b->w);
    cp_v3_cross(gyro, b->w, Iww);
    for (int k = 0; k < 3; ++k) s->f[r0 + 3 + k] = -gyro[k];
    ++oi;
  }

  // Manipulators: kinematics, CRBA block, bias efforts, f -- in the full
  // joint space of the chain, then reduced to its independent coordinates
  // (P^T M P, P^T g, P^T h; P from cp_chain_dof_map). Without mimic joints
  // P = I and the blocks are copied unchanged.
  for (int m = 0, off = 0, foff = 0; m < sc->n_manips; ++m) {
    const cp_chain *c = &sc->manips[m];
    int *row = s->chain_row + foff;
    double *scale = s->chain_row_scale + foff;
    s->joint_offset[m] = off;
    s->chain_row_offset[m] = foff;
    cp_chain_dof_map(c, row, scale);
    for (int i = 0; i < c->n; ++i) row[i] += off;
    cp_chain_kinematics(c, bc.states[m]);
    cp_chain_mass_matrix(c, bc.states[m], Mm);
    cp_chain_bias_efforts(c, bc.states[m], sc->gravity, gf, hf);
    // Both say "out of memory" by NaN (models/chain.h); inputs are finite.
    if (isnan(Mm[0]) || isnan(gf[0]) || isnan(hf[0])) {
      cp_error_set(err, "", "out of memory building the system");
      ok = 0;
      goto done;
    }
    size_t rb = 6 * (size_t)s->n_obj;
    for (int a = 0; a < c->n; ++a) {
      size_t ra = rb + (size_t)row[a];
      for (int b = 0; b < c->n; ++b)
        s->H[ra + (rb + (size_t)row[b]) * nu] +=
            scale[a] * scale[b] * Mm[a + (size_t)b * (size_t)c->n];
      s->g_man[row[a]] += scale[a] * gf[a];
      s->h_man[row[a]] += scale[a] * hf[a];
    }
    int nd = 0;
    for (int k = 0; k < c->n; ++k) {
      const cp_joint *jt = &c->joints[k];
      if (jt->is_mimic) continue;
      int r = off + nd++;
      s->joint_manip[r] = m;
      s->joint_index[r] = k;
      s->drive[r] = jt->drive;
      s->tau[r] = jt->drive == CP_DRIVE_EFFORT ? jt->effort : 0;
      s->qdd[r] = jt->drive == CP_DRIVE_ACCELERATION ? jt->acceleration : 0;
      s->u[rb + (size_t)r] = jt->velocity;
      s->f[rb + (size_t)r] = s->tau[r] - s->g_man[r] - s->h_man[r];
    }
    off += nd;
    foff += c->n;
  }

  // Contacts: frames, G, Gtor, k, ktor.
  for (int j = 0; j < s->n_c; ++j) {
    const cp_contact *ct = &sc->contacts[j];
    double *N = s->frame + 9 * j;
    cp_v3_copy(N, ct->n);
    cp_v3_copy(N + 3, ct->t);
    cp_v3_copy(N + 6, ct->o);
    cp_v3_copy(s->point + 3 * j, ct->p);
    s->mu[j] = ct->mu;
    add_columns(&bc, j, ct->a, +1.0);
    add_columns(&bc, j, ct->b, -1.0);
    point_kin ka, kb;
    ref_kin(&bc, ct->a, ct->p, &ka);
    ref_kin(&bc, ct->b, ct->p, &kb);
    double dv[3], da[3], dw[3], ddw[3];
    cp_v3_sub(dv, ka.vel, kb.vel);
    cp_v3_sub(da, ka.acc, kb.acc);
    cp_v3_sub(dw, ka.w, kb.w);
    cp_v3_sub(ddw, ka.dw, kb.dw);
    for (int c = 0; c < 3; ++c) {
      double Nd[3]; // rate of the frame column: w_b x N_c
      cp_v3_cross(Nd, kb.w, N + 3 * c);
      s->k[3 * j + c] = cp_v3_dot(N + 3 * c, da) + cp_v3_dot(Nd, dv);
    }
    double nd[3];
    cp_v3_cross(nd, kb.w, N);
    s->ktor[j] = cp_v3_dot(N, ddw) + cp_v3_dot(nd, dw);
  }

  // v = G^T u, sliding / rolling, directions.
  for (int col = 0; col < 3 * s->n_c; ++col) {
    double acc = 0;
    const double *g = s->G + (size_t)col * nu;
    for (size_t r = 0; r < nu; ++r) acc += g[r] * s->u[r];
    s->v[col] = acc;
  }
  for (int j = 0; j < s->n_c; ++j) {
    double vt = s->v[3 * j + 1], vo = s->v[3 * j + 2], sp = hypot(vt, vo);
    s->sliding[j] = sp > s->tol;
    if (s->sliding[j]) {
      s->d[2 * j] = vt / sp;
      s->d[2 * j + 1] = vo / sp;
    }
  }

done:
  if (bc.states)
    for (int m = 0; m < sc->n_manips; ++m) free(bc.states[m]);
  free(bc.states);
  free(bc.J);
  free(bc.Jw);
  free(Mm);
  free(gf);
  if (!ok) cp_system_free(s);
  return ok ? 0 : -1;
}
