#include "models/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

void cp_system_free(cp_system *s) {
  if (!s) return;
  free(s->u); // one allocation holds every array (alloc_all)
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

// Every array in one zeroed allocation (a simulator builds a system per
// step; 26 calls to the allocator were a tenth of a small scene's step):
// doubles first, then the int-sized arrays; each at least one element, so
// that empty arrays are non-NULL too. s->u is the block's start.
static int alloc_all(cp_system *s, int n_bodies, int n_manips, int n_full) {
  size_t nu = (size_t)s->n_u, nc = (size_t)s->n_c, nl = (size_t)s->n_l;
  double **dp[] = {&s->u, &s->chain_row_scale, &s->H, &s->f, &s->tau, &s->qdd,
                   &s->g_man, &s->h_man, &s->G, &s->k, &s->v, &s->Gtor,
                   &s->ktor, &s->frame, &s->point, &s->mu, &s->d};
  const size_t dn[] = {nu, (size_t)n_full, nu * nu, nu, nl, nl,
                       nl, nl, nu * 3 * nc, 3 * nc, 3 * nc, nu * nc,
                       nc, 9 * nc, 3 * nc, nc, 2 * nc};
  int **ip[] = {&s->obj_body, &s->body_obj, &s->joint_manip, &s->joint_index,
                &s->joint_offset, &s->chain_row, &s->chain_row_offset,
                &s->sliding};
  const size_t in[] = {(size_t)s->n_obj, (size_t)n_bodies, nl, nl,
                       (size_t)n_manips, (size_t)n_full, (size_t)n_manips, nc};
  enum { ND = sizeof dn / sizeof dn[0], NI = sizeof in / sizeof in[0] };
  size_t nd = 0, ni = 0;
  for (int i = 0; i < ND; ++i) nd += dn[i] ? dn[i] : 1;
  for (int i = 0; i < NI; ++i) ni += in[i] ? in[i] : 1;
  const size_t nld = nl ? nl : 1;
  char *block = calloc(1, sizeof(double) * nd + sizeof(int) * ni +
                              sizeof(cp_joint_drive) * nld);
  if (!block) return -1;
  double *d = (double *)block;
  for (int i = 0; i < ND; ++i) {
    *dp[i] = d;
    d += dn[i] ? dn[i] : 1;
  }
  int *q = (int *)d;
  for (int i = 0; i < NI; ++i) {
    *ip[i] = q;
    q += in[i] ? in[i] : 1;
  }
  s->drive = (cp_joint_drive *)q;
  return 0;
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
  // Scratch J, Jw [3 maxn each], Mm [maxn^2], gf, hf [maxn each] in one.
  const size_t mx = (size_t)maxn;
  double *tmp = zalloc(6 * mx + mx * mx + 2 * mx, sizeof(double));
  bc.J = tmp;
  bc.Jw = tmp ? tmp + 3 * mx : NULL;
  double *Mm = tmp ? tmp + 6 * mx : NULL;
  double *gf = tmp ? Mm + mx * mx : NULL, *hf = gf ? gf + mx : NULL;
  int ok = bc.states && tmp &&
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
  free(tmp);
  if (!ok) cp_system_free(s);
  return ok ? 0 : -1;
}
