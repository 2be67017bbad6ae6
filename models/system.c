#include "models/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

void cp_system_free(cp_system *s) {
  if (!s) return;
  free(s->own); // one allocation holds every array (alloc_all); NULL when
                // they are a workspace's (cp_system_build_ws)
  memset(s, 0, sizeof *s);
}

void cp_system_ws_free(cp_system_ws *ws) {
  if (!ws) return;
  free(ws->block);
  free(ws->scratch);
  memset(ws, 0, sizeof *ws);
}

// *p holds at least need bytes (grown, never shrunk; *size its size) and
// its first need bytes are zero, as calloc would give. 0, or -1. (The
// scratch: small, so simply all zeroed.)
static int zreserve(void **p, size_t *size, size_t need) {
  if (need > *size) {
    free(*p);
    *p = malloc(need);
    *size = *p ? need : 0;
    if (!*p) return -1;
  }
  memset(*p, 0, need);
  return 0;
}

int cp_system_joint_row(const cp_system *s, int m, int k) {
  return 6 * s->n_obj + s->chain_row[s->chain_row_offset[m] + k];
}

// Per-ref data at a contact point: velocity, velocity-product acceleration,
// angular velocity and angular velocity-product acceleration.
typedef struct point_kin {
  double vel[3], acc[3], w[3], dw[3];
} point_kin;

typedef struct build_ctx {
  const cp_scene *scene;
  cp_system *sys;
  cp_link_state *states;  // link states of every chain, chain m's at
  const int *state_off;   // states + state_off[m]
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
  const cp_link_state *st = bc->states + bc->state_off[r.manip];
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
  const cp_link_state *st = bc->states + bc->state_off[r.manip];
  cp_chain_point_jacobian(ch, st, r.link, p, bc->J);
  cp_chain_angular_jacobian(ch, st, r.link, bc->Jw);
  add_joint_columns(bc, j, r.manip, r.link, sign);
}

// Every array in one block, ws->block (a simulator builds a system per
// step; 26 calls to the allocator were a tenth of a small scene's step,
// and with a workspace there are none): doubles first, then the int-sized
// arrays; each at least one element, so that empty arrays are non-NULL too.
// The arrays the build accumulates into or writes only in part (H, G,
// Gtor, g_man, h_man, d) come first and are zeroed; every other one is
// written in full by the build, so only their placeholder elements (empty
// arrays) are zeroed: the block reads as a calloc'd one would.
static int alloc_all(cp_system *s, cp_system_ws *ws, int n_bodies,
                     int n_manips, int n_full) {
  size_t nu = (size_t)s->n_u, nc = (size_t)s->n_c, nl = (size_t)s->n_l;
  enum { NZ = 6 }; // the zeroed ones
  double **dp[] = {&s->H, &s->G, &s->Gtor, &s->g_man, &s->h_man, &s->d,
                   &s->u, &s->chain_row_scale, &s->f, &s->tau, &s->qdd,
                   &s->k, &s->v, &s->ktor, &s->frame, &s->point, &s->mu};
  const size_t dn[] = {nu * nu, nu * 3 * nc, nu * nc, nl, nl, 2 * nc,
                       nu, (size_t)n_full, nu, nl, nl,
                       3 * nc, 3 * nc, nc, 9 * nc, 3 * nc, nc};
  int **ip[] = {&s->obj_body, &s->body_obj, &s->joint_manip, &s->joint_index,
                &s->joint_offset, &s->chain_row, &s->chain_row_offset,
                &s->sliding};
  const size_t in[] = {(size_t)s->n_obj, (size_t)n_bodies, nl, nl,
                       (size_t)n_manips, (size_t)n_full, (size_t)n_manips, nc};
  enum { ND = sizeof dn / sizeof dn[0], NI = sizeof in / sizeof in[0] };
  size_t nd = 0, ni = 0, nzero = 0;
  for (int i = 0; i < ND; ++i) {
    nd += dn[i] ? dn[i] : 1;
    if (i + 1 == NZ) nzero = nd;
  }
  for (int i = 0; i < NI; ++i) ni += in[i] ? in[i] : 1;
  const size_t nld = nl ? nl : 1;
  const size_t bytes = sizeof(double) * nd + sizeof(int) * ni +
                       sizeof(cp_joint_drive) * nld;
  if (bytes > ws->block_size) {
    free(ws->block);
    ws->block = malloc(bytes);
    ws->block_size = ws->block ? bytes : 0;
    if (!ws->block) return -1;
  }
  double *d = ws->block;
  memset(d, 0, sizeof(double) * nzero);
  for (int i = 0; i < ND; ++i) {
    *dp[i] = d;
    if (!dn[i]) *d = 0;
    d += dn[i] ? dn[i] : 1;
  }
  int *q = (int *)d;
  for (int i = 0; i < NI; ++i) {
    *ip[i] = q;
    if (!in[i]) *q = 0;
    q += in[i] ? in[i] : 1;
  }
  s->drive = (cp_joint_drive *)q;
  if (!nl) memset(s->drive, 0, sizeof *s->drive);
  return 0;
}

int cp_system_build(const cp_scene *sc, cp_system *s, cp_error *err) {
  cp_system_ws ws = {0};
  int rc = cp_system_build_ws(sc, &ws, s, err);
  if (!rc) { // the system keeps the block
    s->own = ws.block;
    ws.block = NULL;
  }
  cp_system_ws_free(&ws);
  return rc;
}

int cp_system_build_ws(const cp_scene *sc, cp_system_ws *ws, cp_system *s,
                       cp_error *err) {
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
  // Scratch (zeroed): link states of every chain [n_full], J, Jw [3 maxn
  // each], Mm [maxn^2], gf, hf [maxn each], the chains' state offsets.
  const size_t mx = (size_t)maxn, nst = (size_t)(n_full ? n_full : 1);
  const size_t nsd = 6 * mx + mx * mx + 2 * mx;
  int ok = !zreserve(&ws->scratch, &ws->scratch_size,
                     nst * sizeof(cp_link_state) + nsd * sizeof(double) +
                         (size_t)(sc->n_manips + 1) * sizeof(int));
  double *Mm = NULL, *gf = NULL, *hf = NULL;
  int *state_off = NULL;
  if (ok) {
    bc.states = ws->scratch;
    double *tmp = (double *)(bc.states + nst);
    bc.J = tmp;
    bc.Jw = tmp + 3 * mx;
    Mm = tmp + 6 * mx;
    gf = Mm + mx * mx;
    hf = gf + mx;
    state_off = (int *)(tmp + nsd);
    for (int m = 0, o = 0; m < sc->n_manips; o += sc->manips[m].n, ++m)
      state_off[m] = o;
    bc.state_off = state_off;
    ok = !alloc_all(s, ws, sc->n_bodies, sc->n_manips, n_full);
  }
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
    cp_link_state *st = bc.states + state_off[m];
    cp_chain_kinematics(c, st);
    cp_chain_mass_matrix(c, st, Mm);
    cp_chain_bias_efforts(c, st, sc->gravity, gf, hf);
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
    double vt = s->v[3 * j + 1], vo = s->v[3 * j + 2];
    // |vt| + |vo| bounds the speed: below tol / 2 it is rolling without
    // hypot (slow on the 1e-17 speeds of contacts at rest).
    if (fabs(vt) + fabs(vo) <= 0.5 * s->tol) {
      s->sliding[j] = 0;
      continue;
    }
    double sp = hypot(vt, vo);
    s->sliding[j] = sp > s->tol;
    if (s->sliding[j]) {
      s->d[2 * j] = vt / sp;
      s->d[2 * j + 1] = vo / sp;
    }
  }

done:
  if (!ok) memset(s, 0, sizeof *s); // the block stays ws's
  return ok ? 0 : -1;
}
