#!/usr/bin/env python3
"""Writes the bundled scenes of models/scenes/ (docs/formats.md §2).

The numbers that follow from geometry (corners on inclines, finger inverse
kinematics, holding efforts, velocities that keep the normal speeds zero) are
computed here rather than typed, so that every contact is exactly at rest in
its normal direction. Run from anywhere: python3 models/scenes/generate.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
G = [0.0, 0.0, -9.81]


def fmt(v, ind=0):
    """JSON with numeric arrays (and arrays of them) kept on one line."""
    pad = "  " * ind
    if isinstance(v, dict):
        items = [f'{pad}  {json.dumps(k)}: {fmt(x, ind + 1).lstrip()}'
                 for k, x in v.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if all(isinstance(x, (int, float)) or
               (isinstance(x, list) and all(isinstance(y, (int, float)) for y in x))
               for x in v):
            return pad + json.dumps(v)
        return pad + "[\n" + ",\n".join(fmt(x, ind + 1) for x in v) + "\n" + pad + "]"
    return pad + json.dumps(v)


def write(name, scene):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(fmt(scene) + "\n")


def clean(x):
    return 0.0 if abs(x) < 1e-15 else x


def vec(*xs):
    return [clean(float(x)) for x in xs]


def quat_y(angle):
    """Rotation about +y by angle: x -> (cos, 0, -sin), z -> (sin, 0, cos)."""
    return vec(math.cos(angle / 2), 0, math.sin(angle / 2), 0)


def table():
    return {"name": "table", "fixed": True,
            "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}}


def box_body(name, size, mass, pos, quat=None, vel=None, **extra):
    b = {"name": name, "mass": mass,
         "shape": {"type": "box", "size": list(size)},
         "position": vec(*pos), "orientation": quat or [1, 0, 0, 0]}
    if vel:
        b["velocity"] = vec(*vel)
    b.update(extra)
    return b


def bottom_corners(a, b, on, size, centre, n, t, o, tangent=True):
    """Contacts at the four bottom corners of box a resting on b; the box's
    bottom face has normal -n, its edges along t and o."""
    out = []
    for sx in (1, -1):
        for sy in (1, -1):
            p = [centre[i] + sx * size[0] / 2 * t[i] + sy * size[1] / 2 * o[i]
                 - size[2] / 2 * n[i] for i in range(3)]
            c = {"a": a, "b": b, "point": vec(*p), "normal": vec(*n)}
            if tangent:
                c["tangent"] = vec(*t)
            out.append(c)
    return out


# ----------------------------------------------------------------- flat box
def box_on_table():
    size, c = (0.2, 0.1, 0.1), (0.0, 0.0, 0.05)
    return {
        "name": "box_on_table",
        "comment": "A 1 kg box at rest on a table, one contact per bottom corner.",
        "gravity": G,
        "friction": {"default": 0.5},
        "bodies": [table(), box_body("box", size, 1.0, c)],
        "contacts": bottom_corners("box", "table", None, size, c,
                                   [0, 0, 1], [1, 0, 0], [0, 1, 0]),
    }


def box_sliding():
    s = box_on_table()
    s["name"] = "box_sliding"
    s["comment"] = ("The box of box_on_table sliding along the table at 1 m/s "
                    "along +x (every corner sliding), mu = 0.3.")
    s["friction"] = {"default": 0.3}
    s["bodies"][1]["velocity"] = [1.0, 0.0, 0.0]
    return s


# ------------------------------------------------------------------ inclines
def incline(name, theta, mu, comment):
    # The ramp's surface normal n = (sin th, 0, cos th): downhill is +x.
    n = vec(math.sin(theta), 0, math.cos(theta))
    t = vec(math.cos(theta), 0, -math.sin(theta))   # downhill
    o = vec(0, 1, 0)                                 # n x t
    size = (0.2, 0.1, 0.1)
    centre = [size[2] / 2 * n[i] for i in range(3)]
    q = quat_y(theta)
    return {
        "name": name,
        "comment": comment,
        "gravity": G,
        "friction": {"default": 0.5, "pairs": [{"a": "box", "b": "ramp", "mu": mu}]},
        "bodies": [
            {"name": "ramp", "fixed": True, "orientation": q,
             "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}},
            box_body("box", size, 1.0, centre, quat=q)],
        "contacts": bottom_corners("box", "ramp", None, size, centre, n, t, o),
    }


# --------------------------------------------------------------------- stack
def stack():
    size = (0.2, 0.2, 0.1)
    bodies, contacts = [table()], []
    below = "table"
    for k in range(3):
        name = f"box{k + 1}"
        c = (0.0, 0.0, 0.05 + 0.1 * k)
        bodies.append(box_body(name, size, 1.0, c))
        contacts += bottom_corners(name, below, None, size, c,
                                   [0, 0, 1], [1, 0, 0], [0, 1, 0])
        below = name
    return {
        "name": "stack",
        "comment": "Three 1 kg boxes stacked on a table; four corner contacts "
                   "under each box (12 contacts).",
        "gravity": G,
        "friction": {"default": 0.5},
        "bodies": bodies,
        "contacts": contacts,
    }


# ------------------------------------------------------------------- fingers
L1, L2, R, MLINK = 0.12, 0.10, 0.01, 0.05


def link(name, L):
    # A capsule from the joint (link frame origin) to the tip at (0, 0, L);
    # thin-rod inertia about its centre of mass.
    m = MLINK
    return {"name": name, "mass": m, "com": [0, 0, L / 2],
            "inertia": [[m * L * L / 12, 0, 0], [0, m * L * L / 12, 0],
                        [0, 0, m * R * R / 2]],
            "shape": {"type": "capsule", "radius": R, "length": L}}


def planar_fk(base, q):
    """Finger in the x-z plane, joints about +y: returns joint origins, link
    centres of mass and the tip (x, z)."""
    bx, bz = base
    a1, a12 = q[0], q[0] + q[1]
    o1 = (bx, bz)
    o2 = (bx + L1 * math.sin(a1), bz + L1 * math.cos(a1))
    tip = (o2[0] + L2 * math.sin(a12), o2[1] + L2 * math.cos(a12))
    c1 = (bx + L1 / 2 * math.sin(a1), bz + L1 / 2 * math.cos(a1))
    c2 = (o2[0] + L2 / 2 * math.sin(a12), o2[1] + L2 / 2 * math.cos(a12))
    return (o1, o2), (c1, c2), tip


def planar_ik(base, target, elbow_out_sign):
    dx, dz = target[0] - base[0], target[1] - base[1]
    d2 = dx * dx + dz * dz
    c2 = (d2 - L1 * L1 - L2 * L2) / (2 * L1 * L2)
    assert -1 < c2 < 1, "target out of reach"
    best = None
    for s in (1, -1):
        q2 = s * math.acos(c2)
        q1 = math.atan2(dx, dz) - math.atan2(L2 * math.sin(q2), L1 + L2 * math.cos(q2))
        (o1, o2), _, tip = planar_fk(base, (q1, q2))
        assert abs(tip[0] - target[0]) < 1e-12 and abs(tip[1] - target[1]) < 1e-12
        if best is None or elbow_out_sign * o2[0] > elbow_out_sign * best[1]:
            best = ((q1, q2), o2[0])
    return best[0]


def y_cross(r):
    """(0, 1, 0) x (rx, rz) in the x-z plane: (rz, -rx)."""
    return (r[1], -r[0])


def holding_efforts(base, q, point, force):
    """tau = g(l) + J(p)^T F: hold the finger against gravity while it exerts
    force (x, z) on the environment at point (x, z)."""
    (o1, o2), (c1, c2), _ = planar_fk(base, q)
    origins, coms = (o1, o2), (c1, c2)
    tau = []
    for i in range(2):
        oi = origins[i]
        g = 0.0
        for k in range(i, 2):
            jc = y_cross((coms[k][0] - oi[0], coms[k][1] - oi[1]))
            g -= MLINK * (jc[0] * G[0] + jc[1] * G[2])
        jp = y_cross((point[0] - oi[0], point[1] - oi[1]))
        tau.append(g + jp[0] * force[0] + jp[1] * force[1])
    return tau


def finger(name, base, q, efforts, velocities=(0.0, 0.0)):
    return {
        "name": name,
        "base": {"position": vec(base[0], 0, base[1]), "orientation": [1, 0, 0, 0]},
        "joints": [
            {"name": "j1", "type": "revolute", "axis": [0, 1, 0],
             "position": q[0], "velocity": velocities[0], "effort": efforts[0],
             "link": link("proximal", L1)},
            {"name": "j2", "type": "revolute", "axis": [0, 1, 0],
             "origin": {"position": [0, 0, L1], "orientation": [1, 0, 0, 0]},
             "position": q[1], "velocity": velocities[1], "effort": efforts[1],
             "link": link("tip", L2)},
        ]}


def squeeze_grasp(squeeze=5.0, name="squeeze_grasp"):
    """Each finger squeezes with `squeeze` N and asks to carry half the box's
    weight (friction must supply it: it holds while 2 mu squeeze >= m g)."""
    half, zc, mbox = 0.05, 0.2, 0.2
    lift = mbox * -G[2] / 2
    fingers = []
    for name, side in (("left", -1), ("right", 1)):
        base = (side * 0.15, 0.35)
        centre = (side * (half + R), zc)        # fingertip cap centre
        point = (side * half, zc)               # on the box face
        q = planar_ik(base, centre, side)       # elbow away from the box
        tau = holding_efforts(base, q, point, (-side * squeeze, lift))
        fingers.append(finger(name, base, q, tau))
    contacts = []
    for name, side in (("left", -1), ("right", 1)):
        contacts.append({"a": "box", "b": f"{name}/tip",
                         "point": vec(side * half, 0, zc),
                         "normal": vec(-side, 0, 0), "tangent": [0, 0, 1]})
    return {
        "name": name,
        "comment": (f"A 0.2 kg box between two planar two-joint fingers "
                    f"(joints about +y) squeezing with {squeeze:g} N each and "
                    f"lifting with {lift:g} N each; efforts = gravity "
                    f"compensation + J^T F. mu = 0.8 at the fingertips, so "
                    f"the grasp holds iff 2 mu squeeze >= m g "
                    f"({2 * 0.8 * squeeze:g} vs {mbox * -G[2]:g} N). "
                    f"Everything at rest."),
        "gravity": G,
        "friction": {"default": 0.8},
        "bodies": [box_body("box", (2 * half, 0.1, 0.1), mbox, (0, 0, zc))],
        "manipulators": fingers,
        "contacts": contacts,
    }


def finger_push():
    half, push, vz = 0.05, 2.0, -0.05
    base = (-0.20, 0.18)
    zc = half                                   # push at mid-height
    centre = (-(half + R), zc)
    point = (-half, zc)
    q = planar_ik(base, centre, -1)
    # Joint rates that move the fingertip straight down along the face:
    # J_c(q) qd = (0, vz) for the cap centre (then the contact point, on the
    # same link, has zero normal (x) speed too).
    (o1, o2), _, _ = planar_fk(base, q)
    j1 = y_cross((centre[0] - o1[0], centre[1] - o1[1]))
    j2 = y_cross((centre[0] - o2[0], centre[1] - o2[1]))
    det = j1[0] * j2[1] - j2[0] * j1[1]
    qd = ((0.0 * j2[1] - j2[0] * vz) / det, (j1[0] * vz - 0.0 * j1[1]) / det)
    tau = holding_efforts(base, q, point, (push, 0.0))
    size, c = (0.1, 0.1, 0.1), (0.0, 0.0, 0.05)
    contacts = bottom_corners("box", "table", None, size, c,
                              [0, 0, 1], [1, 0, 0], [0, 1, 0])
    contacts.append({"a": "box", "b": "finger/tip", "point": vec(point[0], 0, zc),
                     "normal": [1, 0, 0], "tangent": [0, 0, 1], "mu": 0.5})
    return {
        "name": "finger_push",
        "comment": ("A two-joint planar finger pushes a 0.5 kg box resting on a "
                    "table (mu 0.3) along +x with about 2 N while its tip "
                    "slides down the box face at 0.05 m/s (a sliding "
                    "link contact, mu 0.5)."),
        "gravity": G,
        "friction": {"default": 0.3},
        "bodies": [table(), box_body("box", size, 0.5, c)],
        "manipulators": [finger("finger", base, q, tau, qd)],
        "contacts": contacts,
    }


# ------------------------------------------------------------------ Painleve
def painleve_rod():
    theta, L, h, mu = math.radians(60), 1.0, 0.02, 2.0
    ex = (math.cos(theta), 0, math.sin(theta))     # rod axis (body x)
    ez = (-math.sin(theta), 0, math.cos(theta))    # body z
    p = (0.0, 0.0, 0.0)                            # lower bottom edge
    x = [p[i] + L / 2 * ex[i] + h / 2 * ez[i] for i in range(3)]
    return {
        "name": "painleve_rod",
        "comment": ("Painleve's paradox: a 1 m, 1 kg rod (thin box) inclined "
                    "at 60 degrees to the table, its lower end sliding along "
                    "-x at 1 m/s with mu = 2 > (1 + 3 cos^2) / (3 sin cos) "
                    "= 1.35, so the normal-force coefficient of the sliding "
                    "contact is negative and (with gravity) the contact "
                    "problem has no solution."),
        "gravity": G,
        "friction": {"default": mu},
        "bodies": [table(),
                   box_body("rod", (L, h, h), 1.0, x, quat=quat_y(-theta),
                            vel=(-1.0, 0, 0))],
        "contacts": [{"a": "rod", "b": "table", "point": vec(*p),
                      "normal": [0, 0, 1], "tangent": [1, 0, 0]}],
    }


# ------------------------------------------------------- simulation scenes
# Automatic contacts (from the shapes): `complan simulate` regenerates them
# at every step, so these scenes give no contact list.
def sim_stack(n):
    size = (0.2, 0.2, 0.1)
    bodies = [table()]
    for k in range(n):
        bodies.append(box_body(f"box{k + 1}", size, 1.0,
                               (0.0, 0.0, 0.05 + 0.1 * k)))
    return {
        "name": f"stack{n}",
        "comment": (f"{n} boxes (0.2 x 0.2 x 0.1 m, 1 kg) stacked at rest on a "
                    "table, mu 0.5; contacts from the shapes."),
        "gravity": G,
        "friction": {"default": 0.5},
        "bodies": bodies,
    }


def sim_sphere_incline():
    theta, r, mu = math.radians(20), 0.05, 0.3
    n = vec(math.sin(theta), 0, math.cos(theta))
    return {
        "name": "sphere_incline",
        "comment": ("A 1 kg sphere (r = 0.05 m) released on a 20 degree ramp, "
                    "mu 0.3 >= (2/7) tan 20 = 0.104: it rolls down (+x) at "
                    "(5/7) g sin 20 = 2.40 m/s^2."),
        "gravity": G,
        "friction": {"default": mu},
        "bodies": [
            {"name": "ramp", "fixed": True, "orientation": quat_y(theta),
             "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}},
            {"name": "ball", "mass": 1.0,
             "shape": {"type": "sphere", "radius": r},
             "position": [r * n[i] for i in range(3)]}],
    }


def quat_x(angle):
    return vec(math.cos(angle / 2), math.sin(angle / 2), 0, 0)


def qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return vec(w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
               w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
               w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
               w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def sim_box_drop():
    return {
        "name": "box_drop",
        "comment": ("A 1 kg box dropped from 0.2 m (its bottom face 0.2 m "
                    "above the table), turned 10 degrees about x and y so "
                    "that one corner lands first; restitution 0."),
        "gravity": G,
        "friction": {"default": 0.5},
        "bodies": [table(),
                   box_body("box", (0.2, 0.1, 0.1), 1.0, (0.0, 0.0, 0.3),
                            quat=qmul(quat_x(math.radians(10)),
                                      quat_y(math.radians(10))))],
    }


def sim_painleve_slide():
    s = painleve_rod()
    s["name"] = "painleve_slide"
    s["comment"] = ("painleve_rod with its contacts from the shapes (the rod's "
                    "lower edge: two corners), for `complan simulate`: the "
                    "acceleration problem has no solution while it slides, "
                    "so those steps fall back to the velocity stepper.")
    del s["contacts"]
    return s



def sim_grasp(squeeze, name):
    s = squeeze_grasp(squeeze, name)
    del s["contacts"]
    s["comment"] += (" Contacts from the shapes (fingertip caps on the box "
                     "faces), for `complan simulate`.")
    return s


if __name__ == "__main__":
    write("box_on_table.json", box_on_table())
    write("box_sliding.json", box_sliding())
    th = math.radians(20)
    write("incline_rest.json", incline(
        "incline_rest", th, 0.5,
        "A box at rest on a 20 degree ramp (tan = 0.364) with mu = 0.5 >= "
        "tan: it can stay."))
    write("incline_slide.json", incline(
        "incline_slide", th, 0.2,
        "A box at rest on a 20 degree ramp (tan = 0.364) with mu = 0.2 < "
        "tan: it must start sliding."))
    write("stack.json", stack())
    write("squeeze_grasp.json", squeeze_grasp())
    write("squeeze_slip.json", squeeze_grasp(1.0, "squeeze_slip"))
    write("finger_push.json", finger_push())
    write("painleve_rod.json", painleve_rod())
    write("stack5.json", sim_stack(5))
    write("stack10.json", sim_stack(10))
    write("sphere_incline.json", sim_sphere_incline())
    write("box_drop.json", sim_box_drop())
    write("painleve_slide.json", sim_painleve_slide())
    write("grasp_hold.json", sim_grasp(5.0, "grasp_hold"))
    write("grasp_drop.json", sim_grasp(0.1, "grasp_drop"))
