/* A complan scene (models/scene.h) written as MuJoCo's MJCF, for the peer
 * benchmark experiments/bench_mujoco: the same bodies, shapes, masses,
 * inertias, poses, chains and friction in the other engine.
 *
 * - Free bodies get a <freejoint/> and an <inertial> at their centre of mass
 *   (the body frame, as complan's); fixed bodies' shapes are world geoms.
 * - A manipulator is a static base body with its links nested as bodies
 *   (joint origin as the body's pos/quat, the joint at its origin, so that
 *   MuJoCo's qpos is complan's joint position); a URDF's root geometry goes
 *   on that base body, and contacts between the base and its links, and
 *   between the links of a chain without self contacts, are excluded as
 *   complan's contact generation skips them.
 * - Planes become plane geoms through the point offset * normal; meshes
 *   their convex hull's points (MuJoCo collides a mesh's hull; complan
 *   its hull too).
 * - Friction: condim 3, the scene's default mu on every geom (a pair's
 *   friction is the larger of the two geoms'); scenes that need another mu
 *   set it as the default.
 * Joint j of manipulator m is named "m<m>j<j>", free body i "b<i>". */
#ifndef CP_EXPERIMENTS_MJCF_H
#define CP_EXPERIMENTS_MJCF_H

#include "models/scene.h"

/* The MJCF text for scene sc with time step dt (malloc'd, NULL on out of
 * memory). Options are MuJoCo's defaults; the caller tunes m->opt. */
char *bench_mjcf(const cp_scene *sc, double dt);

#endif
