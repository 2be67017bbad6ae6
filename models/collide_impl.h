// Internal (not installed): objects validated once and collided in many
// pairs (models/contactgen.c). cp_collide_pair_ws validates and turns both
// objects of every pair (the quaternion normalised, its rotation matrix, a
// plane's world normal and offset); a caller that puts one object in many
// pairs of one pose does that once per object here instead. The results
// are those of cp_collide_pair_ws on the same objects, bit for bit, errors
// included (an object that does not validate is passed on to it).
#ifndef CP_MODELS_COLLIDE_IMPL_H
#define CP_MODELS_COLLIDE_IMPL_H

#include "models/collide.h"

/// An object with what cp_collide_pair_ws computes from it on each call
/// (models/collide.c works on this struct for every object).
typedef struct cp_collide_posed {
  const cp_shape *s;   ///< o.shape
  double x[3];         ///< o.x
  double q[4];         ///< the quaternion normalised
  double R[9];         ///< its rotation matrix (row major)
  double N[3], D;      ///< a plane's world normal and offset (else 0)
  int hull;            ///< a mesh collided as its convex hull (per pair)
  cp_collide_object o; ///< as given (the shape is not owned)
  int valid;           ///< 1: o passed the checks of cp_collide_pair_ws
} cp_collide_posed;

/// Validates and turns o into *p (never fails: an invalid o is marked so).
void cp_collide_pose(const cp_collide_object *o, cp_collide_posed *p);

/// cp_collide_pair_ws(&a->o, &b->o, opt, ws, out, cap, err), bit for bit,
/// without validating and turning a and b again.
int cp_collide_pair_posed(const cp_collide_posed *a, const cp_collide_posed *b,
                          const cp_collide_options *opt, cp_collide_ws *ws,
                          cp_collide_contact *out, int cap, cp_error *err);

/// For tests: step 1 of two boxes (a grown by tol against b) both ways:
/// the normal without ODE's clipping (models/collide.c, box_box_normal)
/// into n_fast when that path answers, and the deepest contact's normal of
/// ODE's collider into n_ode when it finds contacts. Returns -1 when a or b
/// is not a valid box, else bit 0: the fast path answered, bit 1: ODE found
/// contacts.
int cp_collide_box_box_step1(const cp_collide_object *a,
                             const cp_collide_object *b, double tol,
                             double n_fast[3], double n_ode[3]);

#endif
