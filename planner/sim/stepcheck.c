// The independent per-step check; see planner/stepcheck.h.
#include "planner/sim/stepcheck.h"

#include <math.h>
#include <string.h>

// The defaults (a constant: cp_stepcheck_run takes them without a copy).
static const cp_stepcheck_options defaults = {
    .ne_rel = 1e-8, .ne_abs = 1e-12, .imp_rel = 1e-7, .imp_abs = 1e-12,
    .gap_abs = 1e-9, .gap_rel = 1e-9, .vel_lcp = 1e-5, .vel_abs = 1e-7,
    .vel_rel = 1e-6, .move_tol = 1e-9, .energy_abs = 1e-9, .energy_rel = 1e-8,
    .work_rel = 0.25, .sat_rel = 1e-2};

cp_stepcheck_options cp_stepcheck_defaults(void) { return defaults; }

const char *cp_stepcheck_law_name(cp_stepcheck_law l) {
  switch (l) {
  case CP_CHECK_OK: return "ok";
  case CP_CHECK_NEWTON_EULER: return "newton_euler";
  case CP_CHECK_NORMAL_SIGN: return "normal_sign";
  case CP_CHECK_PENETRATION: return "penetration";
  case CP_CHECK_COMPLEMENTARITY: return "complementarity";
  case CP_CHECK_FRICTION_CONE: return "friction_cone";
  case CP_CHECK_FRICTION_DIRECTION: return "friction_direction";
  case CP_CHECK_MOTION: return "motion";
  case CP_CHECK_JOINT_LIMIT: return "joint_limit";
  case CP_CHECK_ENERGY: return "energy";
  }
  return "?";
}

static cp_stepcheck_law failed(cp_stepcheck_report *rep, cp_stepcheck_law l,
                               int index, double value, double limit) {
  rep->law = l;
  rep->index = index;
  rep->value = value;
  rep->limit = limit;
  return l;
}

#define MAXD(a, b) ((b) > (a) ? (b) : (a))

// v <= lim with a finite bound: a bound made infinite by an exploded
// state must not let that state pass.
static int within(double v, double lim) { return isfinite(lim) && v <= lim; }

// The rotation a^-1 b of unit quaternions: |w| and |v| into wv[0], wv[1].
static void quat_rel(const double *a, const double *b, double *wv) {
  const double w = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const double v0 = a[0] * b[1] - b[0] * a[1] - (a[2] * b[3] - a[3] * b[2]),
               v1 = a[0] * b[2] - b[0] * a[2] - (a[3] * b[1] - a[1] * b[3]),
               v2 = a[0] * b[3] - b[0] * a[3] - (a[1] * b[2] - a[2] * b[1]);
  wv[0] = fabs(w);
  wv[1] = sqrt(v0 * v0 + v1 * v1 + v2 * v2);
}

// Angle between unit quaternions a and b (rad): 2 atan2(|v|, |w|) of
// a^-1 b (acos of the dot product loses half the digits at small angles).
static double quat_angle(const double *a, const double *b) {
  double wv[2];
  quat_rel(a, b, wv);
  return 2 * atan2(wv[1], wv[0]);
}

// Whether the angle is at most lim, without atan2 when it clearly is:
// atan(x) <= x, so |v| <= |w| lim / 2 means an angle <= lim.
static int quat_within(const double *a, const double *b, double lim) {
  double wv[2];
  quat_rel(a, b, wv);
  return wv[1] <= wv[0] * 0.5 * lim;
}

// r += col d, sc += |col| |d| over a block of 6 (a free body's).
static inline void h_column6(double *restrict r, double *restrict sc,
                             const double *restrict col, double d, double ad) {
  for (int i = 0; i < 6; ++i) {
    r[i] += col[i] * d;
    sc[i] += fabs(col[i]) * ad;
  }
}

// One side's n dofs of a constraint's columns cn, ct, co of G: acc gets
// G_n^T u0, G^T u1 (n, t, o) and |G_n||du| (n0 n1 t1 o1 gd); r loses the
// side's share of G p. Inlined with n = 6 for a free body (a loop of fixed
// length, unrolled: the same sums in the same order). G_t^T u0 and G_o^T u0
// are formed only for a contact that slides (start_tangent).
static inline __attribute__((always_inline)) void
g_columns(int n, const double *restrict cn, const double *restrict ct,
          const double *restrict co, const double *restrict u0,
          const double *restrict u1, double *restrict r, double p0, double p1,
          double p2, double *restrict acc) {
  double n0 = acc[0], n1 = acc[1], t1 = acc[2], o1 = acc[3], gd = acc[4];
  for (int i = 0; i < n; ++i) {
    const double a = cn[i], b = ct[i], c = co[i], x0 = u0[i], x1 = u1[i];
    n0 += a * x0;
    n1 += a * x1;
    t1 += b * x1;
    o1 += c * x1;
    gd += fabs(a * (x1 - x0));
    r[i] -= a * p0 + b * p1 + c * p2;
  }
  acc[0] = n0, acc[1] = n1, acc[2] = t1, acc[3] = o1, acc[4] = gd;
}

// G_t^T u0 and G_o^T u0 of constraint j, over its dof ranges in the order
// of the sums above.
static void start_tangent(const cp_stepcheck_step *s, int j, double *vt0, double *vo0) {
  const int nu = s->nu;
  const double *ct = s->G + (size_t)(3 * j + 1) * (size_t)nu, *co = ct + nu;
  const int *rg = s->range ? s->range + 4 * j : NULL;
  double t0 = 0, o0 = 0;
  for (int part = 0; part < 2; ++part) {
    const int lo = rg ? rg[2 * part] : 0, hi = rg ? rg[2 * part + 1] : part ? 0 : nu;
    for (int i = lo; i < hi; ++i) {
      t0 += ct[i] * s->u0[i];
      o0 += co[i] * s->u0[i];
    }
  }
  *vt0 = t0;
  *vo0 = o0;
}

cp_stepcheck_law cp_stepcheck_run(const cp_stepcheck_step *s,
                                  const cp_stepcheck_options *opt,
                                  double *scratch, cp_stepcheck_report *rep) {
  if (!opt) opt = &defaults;
  memset(rep, 0, sizeof *rep);
  const int nu = s->nu, nc = s->nc, n3 = 3 * nc, nb = s->nbody;
  const int j0 = nu - s->njoint;
  const double h = s->h;
  // Local restrict pointers: the stores to the scratch rows cannot alias
  // the step's arrays (without this the loops reload every input).
  const double *restrict u0 = s->u0, *restrict u1 = s->u1, *restrict f = s->f,
                         *restrict G = s->G, *restrict H = s->H;
  double *restrict r = scratch, *restrict sc = scratch + nu, *vel = scratch + 2 * nu,
         *vel0 = vel + n3, *gdu = vel0 + n3;

  // 1. Newton-Euler: r = H (u1 - u0) - h f - G p, row scale sc.
  for (int i = 0; i < nu; ++i) {
    r[i] = -h * f[i];
    sc[i] = fabs(h * f[i]);
  }
  // H by its diagonal blocks (rows outside a column's block are zero); a
  // free body's block of 6 by a loop of fixed length (unrolled; the same
  // operations in the same order).
  const int nblk = s->block ? s->nblock : 1;
  for (int bk = 0; bk < nblk; ++bk) {
    const int b0 = s->block ? s->block[bk] : 0, b1 = s->block ? s->block[bk + 1] : nu;
    for (int j = b0; j < b1; ++j) {
      const double d = u1[j] - u0[j], ad = fabs(d);
      if (d == 0) continue;
      const double *restrict col = H + (size_t)j * (size_t)nu; // symmetric
      if (b1 - b0 == 6) {
        h_column6(r + b0, sc + b0, col + b0, d, ad);
        continue;
      }
      for (int i = b0; i < b1; ++i) {
        r[i] += col[i] * d;
        sc[i] += fabs(col[i]) * ad;
      }
    }
  }
  // The kinetic energy exchanged in the step, (H du) . (u0 + u1) / 2 (H of
  // the start), for the energy law's allowance.
  double dke = 0;
  for (int i = 0; i < nu; ++i) dke += (r[i] + h * f[i]) * (u0[i] + u1[i]);
  dke = 0.5 * fabs(dke);
  // One pass down a constraint's three columns of G (over the dofs of its
  // two sides): their share of G p and the constraint velocities G^T u0,
  // G^T u1, and |G_n| |du| (the normal row's own scale).
  double pmax = 0;
  for (int j = 0; j < nc; ++j) {
    const double *pj = s->p + 3 * j;
    const double *restrict cn = G + (size_t)(3 * j) * (size_t)nu, *restrict ct = cn + nu,
                           *restrict co = ct + nu;
    const double p0 = pj[0], p1 = pj[1], p2 = pj[2];
    pmax = MAXD(pmax, MAXD(fabs(pj[0]), MAXD(fabs(pj[1]), fabs(pj[2]))));
    const int *rg = s->range ? s->range + 4 * j : NULL;
    double acc[5] = {0, 0, 0, 0, 0};
    for (int part = 0; part < 2; ++part) {
      const int lo = rg ? rg[2 * part] : 0, hi = rg ? rg[2 * part + 1] : part ? 0 : nu;
      if (hi - lo == 6) // a free body's side
        g_columns(6, cn + lo, ct + lo, co + lo, u0 + lo, u1 + lo, r + lo, p0, p1, p2, acc);
      else
        g_columns(hi - lo, cn + lo, ct + lo, co + lo, u0 + lo, u1 + lo, r + lo, p0, p1,
                  p2, acc);
    }
    vel0[3 * j] = acc[0];
    vel[3 * j] = acc[1], vel[3 * j + 1] = acc[2], vel[3 * j + 2] = acc[3];
    gdu[j] = acc[4];
  }
  // The row scale's |G||p| part is formed only for a row that fails
  // without it (rounding leaves most rows far inside ne_abs).
  for (int i = 0; i < nu; ++i) {
    if (s->driven && s->driven[i]) continue;
    double lim = opt->ne_rel * sc[i] + opt->ne_abs;
    if (within(fabs(r[i]), lim)) continue;
    double gp = 0;
    for (int c = 0; c < n3; ++c) gp += fabs(s->G[i + (size_t)c * (size_t)nu] * s->p[c]);
    lim += opt->ne_rel * gp;
    if (!within(fabs(r[i]), lim))
      return failed(rep, CP_CHECK_NEWTON_EULER, i, r[i], lim);
  }

  // 2, 3. Constraints: normal law and friction.
  // Impulses are compared at the step's momentum scale: the largest
  // impulse and the largest |H du| + h |f| of a row.
  double pscale = pmax;
  for (int i = 0; i < nu; ++i) pscale = sc[i] > pscale ? sc[i] : pscale;
  const double ptol = opt->imp_rel * pscale + opt->imp_abs;
  for (int j = 0; j < nc; ++j) {
    const double pn = s->p[3 * j], pt = s->p[3 * j + 1], po = s->p[3 * j + 2];
    const double vn1 = vel[3 * j], vn0 = vel0[3 * j];
    const double kn = s->accel_k && s->k ? s->k[3 * j] : 0;
    const double g0 = s->gap0[j], comp = s->comp_n ? s->comp_n[j] : 0;
    const double g = g0 + h * vn1 + h * h * kn, gc = g + comp * h * pn;
    const double gtol = opt->gap_abs + opt->gap_rel * fabs(g0) +
                        opt->vel_lcp * h * (fabs(vn0) + fabs(vn1) + gdu[j]) +
                        h * h * fabs(kn) + comp * h * fabs(pn);
    if (!(pn >= -ptol)) return failed(rep, CP_CHECK_NORMAL_SIGN, j, pn, -ptol);
    const double floor = (g0 < 0 ? g0 : 0) - gtol;
    if (!within(-gc, -floor)) return failed(rep, CP_CHECK_PENETRATION, j, gc, floor);
    // Restitution e: the impact's law is v+_n >= -e v-_n, so a pushing
    // constraint may open at up to e times its approach speed.
    const double e = s->rest ? s->rest[j] : 0;
    // (An open contact with e > 0 is an impact before it touches: it may
    // end as far open as it started, plus its rebound.)
    const double open =
        gtol + (e > 0 ? (g0 > 0 ? g0 : 0) + (vn0 < 0 ? -h * e * vn0 * (1 + 1e-6) : 0)
                      : 0);
    if (!s->two_phase && pn > ptol && !(gc <= open))
      return failed(rep, CP_CHECK_COMPLEMENTARITY, j, gc, open);
    const double mu = s->mu ? s->mu[j] : 0;
    const double bound = mu * (pn > 0 ? pn : 0) + ptol;
    if (!within(fabs(pt), bound) || !within(fabs(po), bound))
      return failed(rep, CP_CHECK_FRICTION_CONE, j,
                    fabs(pt) > fabs(po) ? fabs(pt) : fabs(po), bound);
    if (mu == 0 || s->two_phase) continue;
    const double kt = s->accel_k && s->k ? h * s->k[3 * j + 1] : 0,
                 ko = s->accel_k && s->k ? h * s->k[3 * j + 2] : 0;
    const double vt1 = vel[3 * j + 1] + kt, vo1 = vel[3 * j + 2] + ko;
    const double s1 = sqrt(vt1 * vt1 + vo1 * vo1);
    const double ct = s->comp_t ? s->comp_t[j] : 0;
    // v_tol's first two terms, the rest adding >= 0: a contact that rolls
    // by them rolls by v_tol (the same decision, without the rest).
    const double vtol_lo = opt->vel_abs + s->slide_tol;
    if (s1 <= vtol_lo && ct >= 0 && opt->vel_rel >= 0) continue;
    double vt0, vo0;
    start_tangent(s, j, &vt0, &vo0);
    const double s0 = sqrt(vt0 * vt0 + vo0 * vo0);
    const double vtol = vtol_lo + opt->vel_rel * (s0 + s1) + ct * sqrt(pt * pt + po * po);
    if (!(s1 > vtol)) continue;
    const double at_end = (pt * vt1 + po * vo1) / s1;
    const double at_start = s0 > vtol ? (pt * vt0 + po * vo0) / s0 : INFINITY;
    const double sat = -mu * pn * (1 - opt->sat_rel) + ptol;
    if (!(at_end <= sat) && !(at_start <= sat))
      return failed(rep, CP_CHECK_FRICTION_DIRECTION, j, at_end, sat);
  }

  // 4. Motion and joint limits.
  const double extra = opt->move_tol;
  const double *xm = s->xm ? s->xm : s->x1;
  for (int b = 0; b < nb; ++b) {
    const double *a = s->x0 + 13 * b, *e = xm + 13 * b, *v = s->u1 + 6 * b;
    double d2 = 0, v2 = 0, w2 = 0;
    for (int i = 0; i < 3; ++i) {
      d2 += (e[i] - a[i]) * (e[i] - a[i]);
      v2 += v[i] * v[i];
      w2 += v[3 + i] * v[3 + i];
    }
    const double lim = h * sqrt(v2) * (1 + 1e-12) + extra;
    if (!within(sqrt(d2), lim))
      return failed(rep, CP_CHECK_MOTION, b, sqrt(d2), lim);
    const double alim = h * sqrt(w2) * (1 + 1e-9) + opt->move_tol;
    if (!quat_within(a + 3, e + 3, alim)) {
      const double ang = quat_angle(a + 3, e + 3);
      if (!within(ang, alim)) return failed(rep, CP_CHECK_MOTION, b, ang, alim);
    }
  }
  double work = 0;
  for (int q = 0; q < s->njoint; ++q) {
    const double a = s->x0[13 * nb + 2 * q], e = s->x1[13 * nb + 2 * q],
                 em = xm[13 * nb + 2 * q];
    const double lim = h * fabs(s->u1[j0 + q]) * (1 + 1e-12) + extra;
    if (!within(fabs(em - a), lim))
      return failed(rep, CP_CHECK_MOTION, nb + q, fabs(em - a), lim);
    if (s->lower) {
      const double lo = s->lower[q], hi = s->upper[q];
      const double b0 = fmax(lo - a, a - hi), b1 = fmax(lo - e, e - hi);
      const double blim = (b0 > 0 ? b0 : 0) + opt->gap_abs;
      if (!within(b1, blim)) return failed(rep, CP_CHECK_JOINT_LIMIT, q, b1, blim);
    }
    // Work of the joint's input: its effort, or its drive's force (the
    // Newton-Euler residual of a driven dof).
    const int i = j0 + q;
    const double force = s->driven && s->driven[i] ? r[i] / h
                         : s->effort              ? s->effort[q]
                                                  : 0;
    work += force * (e - a);
  }

  // 5. Energy.
  if (!s->accel_k)
    for (int j = 0; j < nc; ++j)
      if (s->gap0[j] < 0 && s->p[3 * j] > 0) work += s->p[3 * j] * -s->gap0[j] / h;
  work += s->drift_depth * s->weight;
  rep->work = work;
  // The integrator's own term: semi-implicit Euler measures the work of
  // the forces f with the velocity after the step, the kinetic energy
  // changes with their mean; the two differ by up to h |f_i| |du_i| / 2 per
  // dof (and the drive forces likewise).
  double disc = 0, gross = 0;
  for (int i = 0; i < nu; ++i) {
    const double fi = fabs(s->driven && s->driven[i] ? r[i] / h : f[i]);
    disc += fi * fabs(u1[i] - u0[i]);
    gross += fi * (fabs(u0[i]) + fabs(u1[i]));
  }
  disc *= 0.5 * h;
  gross *= 0.5 * h;
  const double elim = work + disc + opt->energy_abs +
                      opt->energy_rel * (fabs(s->e0) + fabs(s->e1)) +
                      opt->work_rel * (fabs(work) + gross + dke);
  if (!within(s->e1 - s->e0, elim))
    return failed(rep, CP_CHECK_ENERGY, -1, s->e1 - s->e0, elim);
  return CP_CHECK_OK;
}
