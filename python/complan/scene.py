"""Scenes (models/scene.h, docs/formats.md): loaded from a file or built
from a Python dict in the scene JSON format."""
import ctypes
import json
import os
from ctypes import byref, c_double, c_int, c_void_p

import numpy as np

from . import _lib as L

__all__ = ["Scene", "Result"]


class Result(dict):
    """A result: the keys and values of the command line's --json document
    (dicts and lists of plain numbers, None where the JSON has null), with
    numpy arrays of the same numbers as attributes."""

    def __repr__(self):
        return "<complan.%s %s>" % (type(self).__name__, dict.__repr__(self)[:200])


_FRICTIONS = {"pyramid": 0, "cone": 1}
_STATUS = {0: "solved", 5: "no_solution"}  # cp_lcp_status: SOLVED, INFEASIBLE


def joint_name(scene_ptr, m, k):
    """"manipulator/joint" of joint k of manipulator m (python/bind.c)."""
    buf = ctypes.create_string_buffer(256)
    need = L.joint_name(scene_ptr, m, k, buf, len(buf))
    if need >= len(buf):
        buf = ctypes.create_string_buffer(need + 1)
        L.joint_name(scene_ptr, m, k, buf, len(buf))
    return buf.value.decode()


class Scene:
    """A parsed and checked scene. Make one with Scene.load(path) or
    Scene.from_dict(d); a World copies it, so a Scene may make many worlds."""

    def __init__(self):
        raise TypeError("use Scene.load(path) or Scene.from_dict(d)")

    @classmethod
    def _empty(cls):
        s = object.__new__(cls)
        s._buf = ctypes.create_string_buffer(L.SCENE_SIZE)
        s._ok = False
        s.path = None
        return s

    @staticmethod
    def _options(check_normal_speed):
        o = L.scene_options_defaults()
        o.check_normal_speed = 1 if check_normal_speed else 0
        return o

    @classmethod
    def load(cls, path, check_normal_speed=True):
        """Reads a scene file (JSON; URDF and mesh paths relative to it).
        check_normal_speed=False accepts approaching contacts (they become
        impacts), as `complan simulate` does. Raises Error naming the file,
        the JSON path and what was expected."""
        s = cls._empty()
        s.path = str(path)
        err = L.CError()
        o = cls._options(check_normal_speed)
        if L.scene_load(s.path.encode(), byref(o), s._buf, byref(err)):
            L.raise_error(err, s.path)
        s._ok = True
        return s

    @classmethod
    def from_json(cls, text, base_dir=None, check_normal_speed=True):
        """Parses scene JSON text; base_dir resolves relative URDF and mesh
        paths (default: the current directory)."""
        if isinstance(text, str):
            text = text.encode()
        s = cls._empty()
        err = L.CError()
        o = cls._options(check_normal_speed)
        bd = os.fspath(base_dir).encode() if base_dir is not None else None
        if L.scene_parse(text, len(text), bd, byref(o), s._buf, byref(err)):
            L.raise_error(err)
        s._ok = True
        return s

    @classmethod
    def from_dict(cls, d, base_dir=None, check_normal_speed=True):
        """A scene from a dict in the scene file's format (docs/formats.md)."""
        try:
            text = json.dumps(d, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise L.Error("input", "the scene dict is not JSON: %s" % e) from None
        return cls.from_json(text, base_dir, check_normal_speed)

    @property
    def warnings(self):
        """What the loader accepted with a warning (URDF habits), each with
        its JSON path and file: the lines `complan` prints as "warning"."""
        n = L.field(self._ptr, "cp_scene.n_warnings", c_int)
        arr = ctypes.cast(L.field(self._ptr, "cp_scene.warnings", c_void_p),
                          ctypes.POINTER(ctypes.c_char_p))
        return [arr[i].decode(errors="replace") for i in range(n)]

    def _ref_name(self, ref):
        buf = ctypes.create_string_buffer(512)
        return L.scene_ref_name(self._buf, ref, buf, len(buf)).decode()

    def _joint_name(self, m, k):
        return joint_name(self._buf, m, k)

    def _auto_contacts(self):
        """A copy whose contacts are generated from the shapes, the
        explicit list dropped (`complan simulate --auto-contacts`)."""
        s = Scene._empty()
        s.path = self.path
        if L.scene_copy(self._buf, s._buf):
            raise L.Error("nomem", "out of memory copying the scene")
        s._ok = True
        L.scene_auto_contacts(s._buf)
        return s

    def _body_name(self, i):
        return self._ref_name(L.CRef(i, -1, -1))

    def contacts(self):
        """The scene's contacts, as `complan contacts --json` lists them:
        generated from the shapes ("contacts": "auto" or absent) or the
        explicit list (depth 0). Returns a Result {"contacts": [{"a", "b",
        "point", "normal", "depth"}]} with the arrays a, b (names), point
        (k, 3) world point (m), normal (k, 3) unit normal from b into a,
        depth (k,) penetration (m; > 0 overlap, <= 0 touching) and mu (k,)
        the resolved friction coefficients."""
        k = L.field(self._ptr, "cp_scene.n_contacts", c_int)
        base = L.field(self._ptr, "cp_scene.contacts", c_void_p)
        arr = ctypes.cast(base, ctypes.POINTER(L.CContact)) if k else None
        r = Result(contacts=[])
        r.a, r.b = [], []
        r.point, r.normal = np.empty((k, 3)), np.empty((k, 3))
        r.depth, r.mu = np.empty(k), np.empty(k)
        for j in range(k):
            c = arr[j]
            a, b = self._ref_name(c.a), self._ref_name(c.b)
            r.a.append(a)
            r.b.append(b)
            r.point[j], r.normal[j] = c.p[:], c.n[:]
            r.depth[j], r.mu[j] = c.depth, c.mu
            r["contacts"].append({"a": a, "b": b, "point": [L.num(x) for x in c.p],
                                  "normal": [L.num(x) for x in c.n],
                                  "depth": L.num(c.depth)})
        return r

    def solve(self, friction="pyramid", quasistatic=False, solver="auto", cone_tol=None,
              **options):
        """The contact problem of the scene, as `complan solve --json`
        (docs/outputs.md): the same keys and numbers, bit for bit.

        friction: "pyramid" (the paper's four-sided pyramid) or "cone"
        (polygons refined until every rolling force lies in the Coulomb
        cone to cone_tol, default 1e-3). quasistatic=True: the quasistatic
        problem (inertia dropped; pyramid only; make the scene with
        check_normal_speed=False as the command does). solver: "auto",
        "lemke", "fip" or "certify" (certify also decides whether the
        accelerations are unique). options: fields of cp_solve_options as
        in complan.lcp.solve.

        Returns a Result with the JSON's keys (status "solved",
        "no_solution" or "failed"; bodies, joints and contacts as named
        records) and the arrays: udot (n_u,) the generalised acceleration
        (6 per free body: linear m/s^2 then angular rad/s^2, then one per
        joint row) -- velocity (n_u,) in quasistatic mode --; effort (n_l,)
        the joint efforts (N or N m); force (k, 3) the contact forces
        (n, t, o) on body a (N); contact_acceleration (k, 3) (or
        contact_velocity) relative (n, t, o); outcome (list of "rolling",
        "sliding", "breaking"); joint_names."""
        if friction not in _FRICTIONS:
            raise L.Error("input", "unknown friction %r: expected pyramid or cone" % (friction,))
        if quasistatic and friction != "pyramid":
            raise L.Error("input", "quasistatic uses the friction pyramid: friction 'cone' "
                          "is not supported")
        opt = L.problem_defaults()
        s = c_int()
        if not isinstance(solver, str) or L.lcp_solver_parse(solver.encode(), byref(s)):
            raise L.Error("input", "unknown solver %r: expected auto, lemke, fip or certify"
                          % (solver,))
        opt.solve.solver = s.value
        opt.friction = _FRICTIONS[friction]
        if cone_tol is not None:
            if not (isinstance(cone_tol, (int, float)) and 1e-12 <= cone_tol <= 1):
                raise L.Error("input", "cone_tol must be a number in (0, 1], got %r"
                              % (cone_tol,))
            opt.cone_tol = cone_tol
        L.set_fields(opt.solve, options, "solve options")
        opt.check_unique = int(solver == "certify" and not quasistatic)
        sys_buf = ctypes.create_string_buffer(L.abi_size(b"cp_system"))
        err = L.CError()
        if L.system_build(self._buf, sys_buf, byref(err)):
            L.raise_error(err, self.path)
        try:
            nc = L.field(self._ptr, "cp_scene.n_contacts", c_int)
            mu_tor = (c_double * max(nc, 1))()
            if L.problem_torsion_from_scene(self._buf, mu_tor) > 0:
                opt.mu_torsion = mu_tor
            return self._answer(sys_buf, opt, friction, quasistatic)
        finally:
            L.system_free(sys_buf)

    def _system(self, sys_buf):
        """The system's sizes and the names of its objects and joint rows."""
        base = ctypes.addressof(sys_buf)
        n_obj = L.field(base, "cp_system.n_obj", c_int)
        n_l = L.field(base, "cp_system.n_l", c_int)
        n_c = L.field(base, "cp_system.n_c", c_int)

        def ints(name, n):
            p = ctypes.cast(L.field(base, "cp_system." + name, c_void_p),
                            ctypes.POINTER(c_int))
            return [p[i] for i in range(n)] if n else []

        bodies = [self._body_name(i) for i in ints("obj_body", n_obj)]
        jm, ji = ints("joint_manip", n_l), ints("joint_index", n_l)
        joints = [self._joint_name(jm[r], ji[r]) for r in range(n_l)]
        return n_obj, n_l, n_c, bodies, joints, ints("sliding", n_c)

    @staticmethod
    def _frames(sys_buf, n_c):
        """Each contact's point and frame (n, t, o), world frame, as lists
        of floats: the system's `point` and `frame` arrays."""
        base = ctypes.addressof(sys_buf)

        def doubles(name, n):
            p = ctypes.cast(L.field(base, "cp_system." + name, c_void_p),
                            ctypes.POINTER(c_double))
            return [L.num(p[i]) for i in range(n)] if n else []

        point, frame = doubles("point", 3 * n_c), doubles("frame", 9 * n_c)
        return [(point[3 * j:3 * j + 3],
                 {"n": frame[9 * j:9 * j + 3], "t": frame[9 * j + 3:9 * j + 6],
                  "o": frame[9 * j + 6:9 * j + 9]}) for j in range(n_c)]

    def _contact_names(self, n_c):
        arr = ctypes.cast(L.field(self._ptr, "cp_scene.contacts", c_void_p),
                          ctypes.POINTER(L.CContact))
        return [(self._ref_name(arr[j].a), self._ref_name(arr[j].b)) for j in range(n_c)]

    def _contact_records(self, r, n_c, sliding, motion, spin, res, frames):
        """The contacts as the JSON lists them: a, b, initial (dynamic only),
        outcome, force, the relative motion (key, (k, 3) array), point and
        frame (from _frames) and, for soft fingers, torsion and the spin
        (key, C array)."""
        cl = []
        for j, (a, b) in enumerate(self._contact_names(n_c)):
            c = {"a": a, "b": b}
            if sliding is not None:
                c["initial"] = "sliding" if sliding[j] else "rolling"
            c["outcome"] = r.outcome[j]
            c["force"] = [L.num(x) for x in r.force[j]]
            c[motion[0]] = [L.num(x) for x in motion[1][j]]
            c["point"], c["frame"] = frames[j]
            if res.soft[j]:
                c["torsion"] = L.num(res.torsion[j])
                c[spin[0]] = L.num(spin[1][j])
            cl.append(c)
        return cl

    @staticmethod
    def _head(r, info, friction, lcp_size):
        solved = info.status == 0
        r["status"] = _STATUS.get(info.status, "failed")
        r["solver"] = L.lcp_solver_name(info.solver).decode()
        r["friction"] = friction
        r["lcp_size"] = lcp_size
        r["iterations"] = info.iterations
        r["starts"] = info.starts
        if not solved:
            r["reason"] = (info.reason.decode(errors="replace") if info.reason
                           else L.lcp_status_name(info.status).decode())
        return solved

    def _records(self, r, names, u, lin, ang, key, values, effort):
        bodies, joints = names
        n_obj = len(bodies)
        r["bodies"] = [{"name": bodies[i], lin: [L.num(x) for x in u[6 * i:6 * i + 3]],
                        ang: [L.num(x) for x in u[6 * i + 3:6 * i + 6]]}
                       for i in range(n_obj)]
        r["joints"] = [{"name": joints[k], key: L.num(values[k]), "effort": L.num(effort[k])}
                       for k in range(len(joints))]

    def _answer(self, sys_buf, opt, friction, quasistatic):
        """The Result of the dynamic or the quasistatic problem (`complan
        solve --json` with or without --quasistatic): one builder, the
        differences in _KINDS."""
        k = _KINDS[quasistatic]
        n_obj, n_l, n_c, bodies, joints, sliding = self._system(sys_buf)
        res = k["result"]()
        k["run"](sys_buf, byref(opt), byref(res))
        try:
            r = Result()
            solved = self._head(r, res.info, friction, res.lcp_size)
            if quasistatic:
                r["quasistatic"] = True
            r.joint_names = joints
            if solved:
                nu = 6 * n_obj + n_l
                u = L.c_array(getattr(res, k["u"]), nu)
                # the dynamic result's efforts are per generalised row
                r.effort = L.c_array(res.effort, n_l) if quasistatic else \
                    L.c_array(res.effort, nu)[6 * n_obj:]
                r.force = L.c_array(res.force, 3 * n_c, (n_c, 3))
                motion = L.c_array(getattr(res, k["motion"]), 3 * n_c, (n_c, 3))
                setattr(r, k["u_attr"], u)
                setattr(r, k["motion_attr"], motion)
                r.outcome = [L.outcome_name(res.outcome[j]).decode() for j in range(n_c)]
                self._records(r, (bodies, joints), u, k["linear"], k["angular"], k["joint"],
                              u[6 * n_obj:], r.effort)
                r["contacts"] = self._contact_records(
                    r, n_c, None if quasistatic else sliding, (k["joint"], motion),
                    (k["spin_key"], getattr(res, k["spin"])), res, self._frames(sys_buf, n_c))
            k["extras"](r, res, opt, friction, solved, 6 * n_obj + n_l)
            return r
        finally:
            k["free"](byref(res))

    @property
    def _ptr(self):
        return ctypes.addressof(self._buf)

    def __del__(self):
        if getattr(self, "_ok", False) and L.scene_free is not None:
            L.scene_free(self._buf)
            self._ok = False


def _dynamic_extras(r, res, opt, friction, solved, nu):
    if solved:
        if friction == "cone":
            r["cone_edges"] = res.cone_edges
            r["cone_violation"] = res.cone_violation
        if opt.check_unique:
            r["unique"] = bool(res.unique) if res.unique_decided else None
            if res.udot_other:
                r.other_acceleration = L.c_array(res.udot_other, nu)
                r["other_acceleration"] = [L.num(x) for x in r.other_acceleration]
    d = res.diag
    r["diagnostics"] = {"jacobian_rank": d.jacobian_rank,
                        "full_column_rank": bool(d.full_column_rank),
                        "a_positive_definite": bool(d.a_positive_definite),
                        "friction_bound": L.num(d.friction_bound),
                        "within_friction_bound": bool(d.within_friction_bound)}


def _quasistatic_extras(r, res, opt, friction, solved, nu):
    if solved:
        r["diagnostics"] = {"jacobian_rank": res.jacobian_rank,
                            "full_row_rank": bool(res.full_row_rank),
                            "balance_residual": L.num(res.balance_residual)}


# What differs between the dynamic and the quasistatic problem's answers:
# the C result and its functions, the fields and the JSON names of the
# generalised motion (u), the contacts' relative motion and spin.
_KINDS = {
    False: {"result": L.CProblemResult, "run": L.problem_solve, "free": L.problem_result_free,
            "u": "udot", "u_attr": "udot", "motion": "accel",
            "motion_attr": "contact_acceleration", "linear": "linear_acceleration",
            "angular": "angular_acceleration", "joint": "acceleration",
            "spin": "spin_accel", "spin_key": "spin_acceleration", "extras": _dynamic_extras},
    True: {"result": L.CQuasistaticResult, "run": L.problem_quasistatic,
           "free": L.quasistatic_result_free, "u": "velocity", "u_attr": "velocity",
           "motion": "contact_velocity", "motion_attr": "contact_velocity",
           "linear": "linear_velocity", "angular": "angular_velocity", "joint": "velocity",
           "spin": "spin", "spin_key": "spin_velocity", "extras": _quasistatic_extras},
}
