#!/usr/bin/env python3
"""Writes ur_like.urdf and its collision meshes (complan's own test arm).

A six-joint arm with the kinematics of the UR5 as published in
example-robot-data (joint origins and axes), whose links collide as
16-sided prisms written as mesh files: binary STL for the shoulder and the
three wrist links, OBJ for the upper arm and forearm. The upper arm has a
second <collision> (a box at the elbow) and wrist_3 carries the ee_link's
small box through a fixed joint, so links have several shapes. Meshes are
placed by <origin> (not at the link frame) on purpose: contact generation
must compose the collision origin with the link pose.

Run from this folder: python3 generate.py (pure Python, no packages).
"""
import math
import os
import struct

SIDES = 16


def prism(axis, radius, lo, hi):
    """Vertices and triangles (counter-clockwise from outside) of a
    SIDES-gon prism about `axis` (0, 1, 2) from lo to hi."""
    a, b = [(1, 2), (2, 0), (0, 1)][axis]
    verts = []
    for end in (lo, hi):
        for k in range(SIDES):
            t = 2 * math.pi * k / SIDES
            v = [0.0, 0.0, 0.0]
            v[axis] = end
            v[a] = radius * math.cos(t)
            v[b] = radius * math.sin(t)
            verts.append(v)
    tris = []
    for k in range(SIDES):
        k1 = (k + 1) % SIDES
        tris.append((k, k1, SIDES + k1))
        tris.append((k, SIDES + k1, SIDES + k))
    for k in range(1, SIDES - 1):  # caps as fans
        tris.append((0, k + 1, k))
        tris.append((SIDES, SIDES + k, SIDES + k + 1))
    return verts, tris


def write_stl(path, verts, tris):
    with open(path, "wb") as f:
        f.write(b"complan ur_like test mesh".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<3f", 0, 0, 0))
            for i in t:
                f.write(struct.pack("<3f", *verts[i]))
            f.write(b"\0\0")


def write_obj(path, verts, tris):
    with open(path, "w") as f:
        f.write("# complan ur_like test mesh\n")
        for v in verts:
            f.write("v %.6f %.6f %.6f\n" % tuple(v))
        for t in tris:
            f.write("f %d %d %d\n" % tuple(i + 1 for i in t))


# name: (format, axis, radius, lo, hi)
MESHES = {
    "shoulder": ("stl", 2, 0.06, -0.07, 0.07),
    "upperarm": ("obj", 2, 0.05, -0.02, 0.40),
    "forearm": ("obj", 2, 0.04, -0.03, 0.36),
    "wrist1": ("stl", 1, 0.045, -0.03, 0.04),
    "wrist2": ("stl", 2, 0.045, -0.03, 0.04),
    "wrist3": ("stl", 1, 0.0375, -0.02, 0.03),
}

os.makedirs("meshes", exist_ok=True)
os.makedirs("urdf", exist_ok=True)
for name, (fmt, axis, r, lo, hi) in MESHES.items():
    v, t = prism(axis, r, lo, hi)
    (write_stl if fmt == "stl" else write_obj)("meshes/%s.%s" % (name, fmt), v, t)


def link(name, mass, inertia, collisions):
    s = '<link name="%s">\n' % name
    if mass:
        s += ('  <inertial><origin xyz="0 0 0"/><mass value="%g"/><inertia '
              'ixx="%g" ixy="0" ixz="0" iyy="%g" iyz="0" izz="%g"/></inertial>\n'
              % (mass, inertia, inertia, inertia))
    for geom, xyz in collisions:
        s += ('  <collision><origin xyz="%s" rpy="0 0 0"/><geometry>%s'
              '</geometry></collision>\n' % (xyz, geom))
    return s + "</link>\n"


def mesh(name):
    return '<mesh filename="../meshes/%s.%s"/>' % (name, MESHES[name][0])


def joint(name, kind, parent, child, xyz, rpy, axis):
    s = ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
         '<origin xyz="%s" rpy="%s"/>' % (name, kind, parent, child, xyz, rpy))
    if kind != "fixed":
        s += ('<axis xyz="%s"/><limit lower="-6.283185" upper="6.283185" '
              'effort="150" velocity="3.15"/>' % axis)
    return s + "</joint>\n"


HALF_PI = "1.570796326794897"
urdf = '<robot name="ur_like">\n'
urdf += link("base_link", 4.0, 0.0061, [(mesh("shoulder"), "0 0 0.03")])
urdf += link("shoulder_link", 3.7, 0.0102, [(mesh("shoulder"), "0 0 0")])
urdf += link("upper_arm_link", 8.393, 0.2269,
             [(mesh("upperarm"), "0 0 0"),
              ('<box size="0.1 0.12 0.1"/>', "0 -0.06 0.425")])
urdf += link("forearm_link", 2.275, 0.0312, [(mesh("forearm"), "0 0 0")])
urdf += link("wrist_1_link", 1.219, 0.0026, [(mesh("wrist1"), "0 0.06 0")])
urdf += link("wrist_2_link", 1.219, 0.0026, [(mesh("wrist2"), "0 0 0.06")])
urdf += link("wrist_3_link", 0.1879, 0.0001, [(mesh("wrist3"), "0 0.05 0")])
urdf += link("ee_link", 0, 0, [('<box size="0.01 0.01 0.01"/>', "-0.01 0 0")])
urdf += joint("shoulder_pan_joint", "revolute", "base_link", "shoulder_link",
              "0 0 0.089159", "0 0 0", "0 0 1")
urdf += joint("shoulder_lift_joint", "revolute", "shoulder_link",
              "upper_arm_link", "0 0.13585 0", "0 %s 0" % HALF_PI, "0 1 0")
urdf += joint("elbow_joint", "revolute", "upper_arm_link", "forearm_link",
              "0 -0.1197 0.425", "0 0 0", "0 1 0")
urdf += joint("wrist_1_joint", "revolute", "forearm_link", "wrist_1_link",
              "0 0 0.39225", "0 %s 0" % HALF_PI, "0 1 0")
urdf += joint("wrist_2_joint", "revolute", "wrist_1_link", "wrist_2_link",
              "0 0.093 0", "0 0 0", "0 0 1")
urdf += joint("wrist_3_joint", "revolute", "wrist_2_link", "wrist_3_link",
              "0 0 0.09465", "0 0 0", "0 1 0")
urdf += joint("ee_fixed_joint", "fixed", "wrist_3_link", "ee_link",
              "0 0.0823 0", "0 0 %s" % HALF_PI, "")
urdf += "</robot>\n"
with open("urdf/ur_like.urdf", "w") as f:
    f.write(urdf)
