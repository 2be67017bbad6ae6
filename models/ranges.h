/// \file models/ranges.h
/// Sensible ranges of a scene's physical quantities (docs/ranges.md), checked
/// at the boundary so that the numerics inside stay well scaled (the way
/// Chipmunk2D asserts sane masses and moments). Everything in SI units.
///
/// Why ranges at all: the contact LCP mixes masses, lengths and friction
/// coefficients in one matrix (A = G^T H^-1 G, then mu times A's normal
/// columns). Values that are absurd physically (mu = 1e12, a mass of 1e-300,
/// a contact point 1e12 m from its body) make entries that differ by more
/// than double precision can hold: forming M rounds away the small ones and
/// no solver's answer can be trusted. Inside these ranges the LCP's entries
/// stay within about 1e14 of each other in the worst combination and
/// usually far closer. The limits are wide for robotics (a microgram to a
/// thousand tonnes, a micrometre to a kilometre) and are constants here so
/// that a user with other needs can see and change them in one place.
///
/// Ownership: the checker reads a parsed scene and the JSON it came from
/// (for paths only); it allocates nothing.
#ifndef CP_MODELS_RANGES_H
#define CP_MODELS_RANGES_H

#include <jansson.h>

#include "models/error.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CP_RANGE_MU_MAX 100.0          ///< friction coefficients: [0, 100]
#define CP_RANGE_MU_TORSION_MAX 10.0   ///< soft-finger mu_torsion (m): [0, 10]
#define CP_RANGE_MASS_MIN 1e-6         ///< kg (a milligram)
#define CP_RANGE_MASS_MAX 1e6          ///< kg (a thousand tonnes)
#define CP_RANGE_INERTIA_MIN 1e-15     ///< kg m^2, each diagonal entry
#define CP_RANGE_INERTIA_MAX 1e9       ///< kg m^2, every entry in modulus
#define CP_RANGE_LENGTH_MIN 1e-6       ///< m, shape sizes, radii, lengths
#define CP_RANGE_LENGTH_MAX 1e3        ///< m
#define CP_RANGE_POSITION_MAX 1e4      ///< m, |coordinate| of any position
#define CP_RANGE_GRAVITY_MAX 1e3       ///< m/s^2, |component| (100 g)
#define CP_RANGE_SPEED_MAX 1e3         ///< m/s (and joint rad/s or m/s)
#define CP_RANGE_ANGULAR_SPEED_MAX 1e4 ///< rad/s
#define CP_RANGE_EFFORT_MAX 1e7        ///< N or N m, joint efforts
#define CP_RANGE_JOINT_ACCEL_MAX 1e6   ///< rad/s^2 or m/s^2, driven joints
#define CP_RANGE_JOINT_POSITION_MAX 1e3///< rad or m
/// A contact point may lie at most this many bounding radii (plus
/// CP_RANGE_CONTACT_SLACK m) from the centre of each finite body it names.
#define CP_RANGE_CONTACT_RADII 100.0
#define CP_RANGE_CONTACT_SLACK 1.0

/// Checks every physical quantity of a parsed scene against the ranges
/// above. root is the scene's JSON (used only to name paths: a manipulator
/// read from URDF is named by its link or joint). Returns 0, or -1 with
/// *err: where = the JSON path (e.g. "bodies[1].mass",
/// "contacts[0].point"), msg = the value, the range and the unit.
int cp_scene_check_ranges(const cp_scene *s, const json_t *root, cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
