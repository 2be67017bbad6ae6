#!/usr/bin/env python3
"""Writes the bundled assemblies of models/scenes/ (docs/assembly.md):
tower.json, arch.json, arch_centering.json, friction_stack.json,
no_sequence.json. Positions are computed so that faces touch exactly.
Run from anywhere: python3 models/scenes/generate_assembly.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
G = [0.0, 0.0, -9.81]
GROUND = {"name": "ground", "fixed": True,
          "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}}


def box(name, size, centre, mass=1.0, fixed=False, q=None):
    b = {"name": name}
    if fixed:
        b["fixed"] = True
    else:
        b["mass"] = mass
    b["shape"] = {"type": "box", "size": size}
    b["position"] = [round(c, 12) for c in centre]
    if q is not None:
        b["orientation"] = q
    return b


def write(name, comment, mu, bodies):
    scene = {"name": name, "comment": comment, "gravity": G,
             "friction": {"default": mu}, "bodies": bodies}
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(scene, f, indent=2)
        f.write("\n")


def tower(n=4):
    h = 0.1
    bodies = [GROUND] + [box(f"block{i}", [0.2, 0.2, h], [0, 0, h / 2 + i * h])
                         for i in range(n)]
    write("tower", f"{n} 1 kg blocks stacked on the ground; sequenced bottom-up.",
          0.5, bodies)


def arch(centering):
    # Fixed piers; two voussoirs cantilevered inward (each alone tips into
    # the opening: its centre of mass lies 0.1 m beyond its pier's edge) and
    # a keystone wedged between them, held by friction on its sides.
    bodies = [GROUND,
              box("pier_left", [0.2, 0.2, 0.4], [-0.4, 0, 0.2], fixed=True),
              box("pier_right", [0.2, 0.2, 0.4], [0.4, 0, 0.2], fixed=True)]
    if centering:
        bodies.append(box("centering", [0.6, 0.2, 0.4], [0, 0, 0.2], fixed=True))
    bodies += [box("voussoir_left", [0.3, 0.2, 0.2], [-0.2, 0, 0.5]),
               box("keystone", [0.1, 0.2, 0.2], [0, 0, 0.5]),
               box("voussoir_right", [0.3, 0.2, 0.2], [0.2, 0, 0.5])]
    if centering:
        write("arch_centering",
              "The arch of arch.json on a temporary fixed centering (a support "
              "under the voussoirs and keystone): a sequence exists.", 0.8, bodies)
    else:
        write("arch",
              "Two voussoirs cantilevered from fixed piers and a keystone wedged "
              "between them: stable only when complete, so no stable sequence "
              "without a temporary support (see arch_centering.json).", 0.8, bodies)


def friction_stack(theta_deg=25.0, mu=0.5):
    th = math.radians(theta_deg)
    n = [-math.sin(th), 0.0, math.cos(th)]
    q = [math.cos(-th / 2), 0.0, math.sin(-th / 2), 0.0]
    bodies = [{"name": "slope", "fixed": True,
               "shape": {"type": "plane", "normal": [round(c, 15) for c in n], "offset": 0}},
              box("lower", [0.2, 0.2, 0.1], [0.05 * c for c in n], q=q),
              box("upper", [0.2, 0.2, 0.1], [0.15 * c for c in n], q=q)]
    write("friction_stack",
          f"Two blocks stacked on a {theta_deg:g} degree slope with mu = {mu:g}: "
          f"stable only thanks to friction (tan {theta_deg:g} deg = "
          f"{math.tan(th):.4f}; unstable for lower mu).", mu, bodies)


def no_sequence():
    # A plank overhanging its pillar (alone it tips over the edge) and a
    # 5 kg counterweight on its short end: the pair stands, but the plank
    # cannot stand without the counterweight, nor the counterweight without
    # the plank.
    bodies = [GROUND,
              box("pillar", [0.2, 0.2, 0.5], [0, 0, 0.25], fixed=True),
              box("plank", [0.8, 0.2, 0.05], [0.25, 0, 0.525]),
              box("counterweight", [0.1, 0.2, 0.1], [-0.1, 0, 0.6], mass=5.0)]
    write("no_sequence",
          "A plank overhanging a fixed pillar, held by a counterweight on its "
          "short end: stable, but neither part stands without the other.",
          0.5, bodies)


tower()
arch(False)
arch(True)
friction_stack()
no_sequence()
