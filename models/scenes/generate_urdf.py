#!/usr/bin/env python3
"""Writes the URDF robots of models/scenes/ and the scenes that use them, with
automatic contacts ("contacts" absent: generated from the shapes).

  finger3.urdf          a planar three-joint finger (joints about +y, capsule
                        links along their z axes), with fixed joints at both
                        ends (a base mount and a fingertip frame) that the
                        reader merges away.
  gripper.urdf          ONE finger of a parallel gripper: palm (fixed base) ->
                        prismatic "lift" (z) -> carriage -> prismatic "slide"
                        (y, towards the object) -> pad (a box). A two-finger
                        gripper is a tree, and complan reads serial chains,
                        so a scene loads this file twice, as two manipulators
                        whose bases face each other (each has its own lift;
                        driving both lifts alike moves them as one).
  urdf_finger_push.json finger3 pushes a box on a table along +x while its
                        fingertip slides down the box face (finger_push.json
                        with three joints and automatic contacts).
  gripper_box.json      two gripper.urdf fingers squeeze a box resting on a
                        table.

The geometry is computed here so that every contact touches exactly and every
normal speed is zero. Run from anywhere: python3 models/scenes/generate_urdf.py
"""
import math
import os

from generate import fmt  # the scenes' JSON layout, one for both scripts

HERE = os.path.dirname(os.path.abspath(__file__))
G = [0.0, 0.0, -9.81]

# --------------------------------------------------------------- finger3
R = 0.01                                  # capsule radius
LINKS = [("proximal", 0.10, 0.05), ("middle", 0.08, 0.04), ("distal", 0.05, 0.03)]
MOUNT = 0.02                              # base_link -> mount (fixed joint), z


def rod_inertia(m, L):
    """Solid cylinder of radius R and length L about its centre, axis z."""
    i = m * (3 * R * R + L * L) / 12
    return i, i, m * R * R / 2


def g(x):
    return repr(float(x))


def finger3_urdf():
    out = ['<?xml version="1.0"?>',
           '<!-- Written by generate_urdf.py: a planar three-joint finger. Joints',
           '     turn about +y; each link is a capsule along its z axis from its',
           '     joint (link origin) to the next joint, centred at its centre of',
           '     mass as complan requires. base_link -> mount and distal ->',
           '     fingertip are fixed joints (merged by the reader). -->',
           '<robot name="finger3">',
           '  <link name="base_link"/>',
           '  <link name="mount"/>',
           '  <joint name="mount_joint" type="fixed">',
           '    <parent link="base_link"/>',
           '    <child link="mount"/>',
           f'    <origin xyz="0 0 {g(MOUNT)}" rpy="0 0 0"/>',
           '  </joint>']
    parent, z = "mount", 0.0
    for k, (name, L, m) in enumerate(LINKS):
        ixx, iyy, izz = rod_inertia(m, L)
        out += [f'  <link name="{name}">',
                '    <inertial>',
                f'      <origin xyz="0 0 {g(L / 2)}" rpy="0 0 0"/>',
                f'      <mass value="{g(m)}"/>',
                f'      <inertia ixx="{g(ixx)}" ixy="0" ixz="0" iyy="{g(iyy)}" '
                f'iyz="0" izz="{g(izz)}"/>',
                '    </inertial>',
                '    <visual>',
                f'      <origin xyz="0 0 {g(L / 2)}"/>',
                f'      <geometry><cylinder radius="{g(R)}" length="{g(L)}"/></geometry>',
                '    </visual>',
                '    <collision>',
                f'      <origin xyz="0 0 {g(L / 2)}" rpy="0 0 0"/>',
                f'      <geometry><capsule radius="{g(R)}" length="{g(L)}"/></geometry>',
                '    </collision>',
                '  </link>',
                f'  <joint name="j{k + 1}" type="revolute">',
                f'    <parent link="{parent}"/>',
                f'    <child link="{name}"/>',
                f'    <origin xyz="0 0 {g(z)}" rpy="0 0 0"/>',
                '    <axis xyz="0 1 0"/>',
                '    <limit lower="-3.2" upper="3.2" effort="5" velocity="10"/>',
                '  </joint>']
        parent, z = name, L
    out += ['  <link name="fingertip"/>',
            '  <joint name="tip_joint" type="fixed">',
            '    <parent link="distal"/>',
            '    <child link="fingertip"/>',
            f'    <origin xyz="0 0 {g(LINKS[-1][1])}"/>',
            '  </joint>',
            '</robot>', '']
    return "\n".join(out)


def u(phi):
    return (math.sin(phi), math.cos(phi))


def fk(base, q):
    """Joint origins, link centres of mass and the cap centre at the end of
    the distal link, (x, z), for joint angles q about +y."""
    o, phi, origins, coms = base, 0.0, [], []
    for (name, L, m), qi in zip(LINKS, q):
        phi += qi
        d = u(phi)
        origins.append(o)
        coms.append((o[0] + L / 2 * d[0], o[1] + L / 2 * d[1]))
        o = (o[0] + L * d[0], o[1] + L * d[1])
    return origins, coms, o


def y_cross(r):
    """(0, 1, 0) x (rx, 0, rz) in the x-z plane: (rz, -rx)."""
    return (r[1], -r[0])


def finger_push_scene():
    half, push, vz, mbox = 0.05, 2.0, -0.05, 0.5
    base_pos = (-0.20, 0.0, 0.16)
    base = (base_pos[0], base_pos[2] + MOUNT)      # j1's axis (x, z)
    zc = half
    centre = (-(half + R), zc)                     # fingertip cap centre
    point = (-half, zc)                            # on the box face
    # Distal link horizontal, pointing +x (phi3 = pi/2); two-link IK for
    # the wrist, elbow up.
    L1, L2, L3 = (L for _, L, _ in LINKS)
    wrist = (centre[0] - L3, centre[1])
    dx, dz = wrist[0] - base[0], wrist[1] - base[1]
    c2 = (dx * dx + dz * dz - L1 * L1 - L2 * L2) / (2 * L1 * L2)
    assert -1 < c2 < 1
    best = None
    for s in (1, -1):
        q2 = s * math.acos(c2)
        q1 = math.atan2(dx, dz) - math.atan2(L2 * math.sin(q2), L1 + L2 * math.cos(q2))
        q3 = math.pi / 2 - q1 - q2
        origins, _, tip = fk(base, (q1, q2, q3))
        assert abs(tip[0] - centre[0]) < 1e-12 and abs(tip[1] - centre[1]) < 1e-12
        if best is None or origins[1][1] > best[1]:   # elbow highest
            best = ((q1, q2, q3), origins[1][1])
    q = best[0]
    origins, coms, _ = fk(base, q)
    # Rates moving the cap centre straight down the face with q3' = 0.
    j1 = y_cross((centre[0] - origins[0][0], centre[1] - origins[0][1]))
    j2 = y_cross((centre[0] - origins[1][0], centre[1] - origins[1][1]))
    det = j1[0] * j2[1] - j2[0] * j1[1]
    qd = ((-j2[0] * vz) / det, (j1[0] * vz) / det, 0.0)
    # Efforts: gravity compensation + J(point)^T F, F = (push, 0) on the box.
    tau = []
    for i in range(3):
        oi = origins[i]
        gi = 0.0
        for k in range(i, 3):
            jc = y_cross((coms[k][0] - oi[0], coms[k][1] - oi[1]))
            gi -= LINKS[k][2] * (jc[0] * G[0] + jc[1] * G[2])
        jp = y_cross((point[0] - oi[0], point[1] - oi[1]))
        tau.append(gi + jp[0] * push)
    state = {f"j{i + 1}": {"position": q[i], "velocity": qd[i], "effort": tau[i]}
             for i in range(3)}
    return {
        "name": "urdf_finger_push",
        "comment": ("finger3.urdf (three joints about +y) pushes a 0.5 kg box "
                    "resting on a table (mu 0.3) along +x with about 2 N while "
                    "its fingertip slides down the box face at 0.05 m/s (mu "
                    "0.5). Contacts are generated from the shapes: the box's "
                    "four bottom corners and the fingertip cap on the face."),
        "gravity": G,
        "friction": {"default": 0.3,
                     "pairs": [{"a": "box", "b": "finger", "mu": 0.5}]},
        "bodies": [
            {"name": "table", "fixed": True,
             "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}},
            {"name": "box", "mass": mbox,
             "shape": {"type": "box", "size": [2 * half, 0.1, 0.1]},
             "position": [0.0, 0.0, half], "orientation": [1, 0, 0, 0]}],
        "manipulators": [
            {"name": "finger", "urdf": "finger3.urdf",
             "base": {"position": list(base_pos), "orientation": [1, 0, 0, 0]},
             "state": state}],
    }


# --------------------------------------------------------------- gripper
PAD = (0.04, 0.01, 0.04)
M_CARRIAGE, M_PAD, CARRIAGE = 0.1, 0.05, 0.04


def box_inertia(m, s):
    return (m * (s[1] ** 2 + s[2] ** 2) / 12, m * (s[0] ** 2 + s[2] ** 2) / 12,
            m * (s[0] ** 2 + s[1] ** 2) / 12)


def gripper_urdf():
    ci = box_inertia(M_CARRIAGE, (CARRIAGE,) * 3)
    pi = box_inertia(M_PAD, PAD)
    sz = " ".join(g(x) for x in PAD)
    return "\n".join([
        '<?xml version="1.0"?>',
        '<!-- Written by generate_urdf.py: ONE finger of a parallel gripper.',
        '     palm (the fixed base) -> lift (prismatic, z) -> carriage ->',
        '     slide (prismatic, +y: towards the object) -> pad (a box) ->',
        '     pad_frame (fixed, a frame without mass). A two-finger gripper is',
        '     a tree; complan reads serial chains, so a scene loads this file',
        '     once per finger with the bases facing each other. -->',
        '<robot name="gripper_finger">',
        '  <link name="palm"/>',
        '  <link name="carriage">',
        '    <inertial>',
        f'      <mass value="{g(M_CARRIAGE)}"/>',
        f'      <inertia ixx="{g(ci[0])}" ixy="0" ixz="0" iyy="{g(ci[1])}" '
        f'iyz="0" izz="{g(ci[2])}"/>',
        '    </inertial>',
        '  </link>',
        '  <joint name="lift" type="prismatic">',
        '    <parent link="palm"/>',
        '    <child link="carriage"/>',
        '    <axis xyz="0 0 1"/>',
        '    <limit lower="-0.05" upper="0.2" effort="50" velocity="0.5"/>',
        '  </joint>',
        '  <link name="pad">',
        '    <inertial>',
        f'      <mass value="{g(M_PAD)}"/>',
        f'      <inertia ixx="{g(pi[0])}" ixy="0" ixz="0" iyy="{g(pi[1])}" '
        f'iyz="0" izz="{g(pi[2])}"/>',
        '    </inertial>',
        '    <collision>',
        f'      <geometry><box size="{sz}"/></geometry>',
        '    </collision>',
        '  </link>',
        '  <joint name="slide" type="prismatic">',
        '    <parent link="carriage"/>',
        '    <child link="pad"/>',
        '    <axis xyz="0 1 0"/>',
        '    <limit lower="0" upper="0.1" effort="20" velocity="0.2"/>',
        '  </joint>',
        '  <link name="pad_frame"/>',
        '  <joint name="pad_frame_joint" type="fixed">',
        '    <parent link="pad"/>',
        '    <child link="pad_frame"/>',
        f'    <origin xyz="0 {g(PAD[1] / 2)} 0"/>',
        '  </joint>',
        '</robot>', ''])


def gripper_scene():
    half, mbox, squeeze, mu = 0.03, 0.2, 5.0, 0.5
    reach = 0.1                              # palm to box centre, along y
    slide = reach - half - PAD[1] / 2        # pad face on the box face
    lift = (M_CARRIAGE + M_PAD) * -G[2] + mbox * -G[2] / 2
    manips = []
    for name, side, quat in (("left", -1, [1, 0, 0, 0]), ("right", 1, [0, 0, 0, 1])):
        manips.append({
            "name": name, "urdf": "gripper.urdf",
            "base": {"position": [0.0, side * reach, half], "orientation": quat},
            "state": {"lift": {"position": 0.0, "velocity": 0.0, "effort": lift},
                      "slide": {"position": slide, "velocity": 0.0,
                                "effort": squeeze}}})
    return {
        "name": "gripper_box",
        "comment": (f"Two fingers of a parallel gripper (gripper.urdf loaded "
                    f"twice, bases facing each other along y) squeeze a "
                    f"{mbox:g} kg cube resting on a table with {squeeze:g} N "
                    f"each and lift with gravity compensation plus half the "
                    f"cube's weight each ({lift:g} N); mu {mu:g}. Contacts are "
                    f"generated: the cube's four bottom corners and the four "
                    f"corners of each pad. Everything at rest."),
        "gravity": G,
        "friction": {"default": mu},
        "bodies": [
            {"name": "table", "fixed": True,
             "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}},
            {"name": "box", "mass": mbox,
             "shape": {"type": "box", "size": [2 * half] * 3},
             "position": [0.0, 0.0, half], "orientation": [1, 0, 0, 0]}],
        "manipulators": manips,
        "contacts": "auto",
    }


def write(name, text):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(text)


if __name__ == "__main__":
    write("finger3.urdf", finger3_urdf())
    write("gripper.urdf", gripper_urdf())
    write("urdf_finger_push.json", fmt(finger_push_scene()) + "\n")
    write("gripper_box.json", fmt(gripper_scene()) + "\n")
