"""The simulator (planner/sim/world.h): a scene's state stepped in time."""
import ctypes
from ctypes import byref, c_int, c_void_p

import numpy as np

from . import _lib as L
from ._lib import Error

__all__ = ["World"]


def _status_error(code, message):
    return Error(L.world_status_name(code).decode(), message)


def state_names(scene_ptr):
    """The state layout's entry names of the scene at scene_ptr
    (cp_state_layout, planner/sim/statelayout.h)."""
    lay = ctypes.create_string_buffer(L.LAYOUT_SIZE)
    if L.state_layout_init(lay, scene_ptr):
        L.state_layout_free(lay)
        raise Error("nomem", "out of memory for the state layout")
    try:
        names = []
        buf = ctypes.create_string_buffer(256)
        for i in range(L.field(ctypes.addressof(lay), "cp_state_layout.n", c_int)):
            k = L.state_column_name(lay, scene_ptr, i, buf, len(buf))
            if k >= len(buf):
                buf = ctypes.create_string_buffer(k + 1)
                L.state_column_name(lay, scene_ptr, i, buf, len(buf))
            names.append(buf.value.decode())
        return names
    finally:
        L.state_layout_free(lay)


class World:
    """World(scene, dt=1e-3, stepper="acceleration", solver=None, **options)

    stepper: "acceleration" (the paper's model), "velocity" or
    "quasistatic". solver: the LCP solver of the steps ("lemke", the
    default, "auto", "fip", "certify"). options: fields of cp_world_options
    (warm_start, compliance, allow_fallback, check, impact_memo, profile;
    solve={...} as in complan.lcp.solve). Units: SI (s, m, kg, N, rad)."""

    def __init__(self, scene, dt=1e-3, stepper="acceleration", solver=None, **options):
        self._w = None
        opt = L.world_defaults()
        s = c_int()
        if not isinstance(stepper, str) or L.stepper_parse(stepper.encode(), byref(s)):
            raise Error("input", "unknown stepper %r: expected acceleration, velocity or "
                        "quasistatic" % (stepper,))
        opt.stepper = s.value
        self._quasi = s.value == 2  # CP_STEPPER_QUASISTATIC: inputs are velocities
        if not (isinstance(dt, (int, float)) and dt > 0 and dt < float("inf")):
            raise Error("input", "dt must be a finite time step > 0 (s), got %r" % (dt,))
        opt.dt = dt
        if solver is not None:
            if not isinstance(solver, str) or L.lcp_solver_parse(solver.encode(), byref(s)):
                raise Error("input", "unknown solver %r: expected lemke, auto, fip or certify"
                            % (solver,))
            opt.solve.solver = s.value
        for k in ("warm_start", "allow_fallback", "check", "profile"):
            if k in options and isinstance(options[k], bool):
                options[k] = int(options[k])
        L.set_fields(opt, options, "world options")
        out = c_void_p()
        err = L.CError()
        st = L.world_create(scene._ptr, byref(opt), byref(out), byref(err))
        if st != 0:
            raise Error(L.world_status_name(st).decode(), err.msg.decode(errors="replace"),
                        err.where.decode(errors="replace"))
        self._w = out.value
        self._scene = scene
        self._info = L.CStepInfo()
        self._info_ref = byref(self._info)
        self._wp = c_void_p(self._w)  # converted once, not at every step
        self._step = L.world_step
        self._n = L.world_state_size(self._w)
        self._nj = L.world_joint_count(self._w)

    def __del__(self):
        if getattr(self, "_w", None) and L.world_destroy is not None:
            L.world_destroy(self._w)
            self._w = None

    def step(self, efforts=None, n=1):
        """Advances n steps of dt (a Python loop over cp_world_step; for
        long runs without Python in between see simulate). efforts: (joint_count,) array of joint
        inputs (N or N m for effort-driven joints, the acceleration of an
        acceleration-driven one, the joint velocity for the quasistatic
        stepper), set before the first step and kept. On a failed step the
        state stays at the last good step and Error is raised with the
        world's status name as its code ("penetration", "check_failed",
        ...) and the C message."""
        if efforts is None and n == 1:  # the common call: keep it short
            st = self._step(self._wp, self._info_ref)
            if st:
                raise _status_error(st, L.world_message(self._w).decode(errors="replace"))
            return
        if efforts is not None:
            self.set_efforts(efforts)
        step, w, info = self._step, self._wp, self._info_ref
        for _ in range(n):
            st = step(w, info)
            if st:
                raise _status_error(st, L.world_message(self._w).decode(errors="replace"))

    def simulate(self, duration, every=1, csv=None, html=None, title=None):
        """Runs round(duration / dt) steps in C (cp_simulate: no Python
        between the steps) and returns its summary as a dict: steps,
        time_us_per_step, fallback_steps, lcp_pivots, warm_steps,
        lcp_solves, checked_steps, retried_steps, max_penetration (m),
        energy_initial, energy_final, max_step_increase (J), hash. A step
        that fails raises Error (the state stays at the last good step).
        csv, html: files for the frames (the start and every every-th
        step), as `complan simulate --csv --html` writes them (title: the
        page's, default "complan"); written up to where the run stopped,
        whole or not at all."""
        opt = L.sim_defaults()
        opt.duration = float(duration)
        if not (isinstance(every, int) and every >= 1):
            raise Error("input", "every must be an integer >= 1, got %r" % (every,))
        opt.every = every
        rec = None
        if csv is not None or html is not None:
            from .recording import Recorder
            rec = Recorder(self, csv, html, "complan" if title is None else title)
            cb = L.SIM_FRAME(rec.frame)
            opt.frame = ctypes.cast(cb, ctypes.c_void_p)
        res = L.CSimResult()
        try:
            st = L.simulate(self._w, byref(opt), byref(res))
        except BaseException:
            if rec:
                rec.close(False)
            raise
        if rec:
            rec.close(True)
        if st:
            raise _status_error(st, res.message.decode(errors="replace"))
        return {k: getattr(res, k) for k, _ in L.CSimResult._fields_
                if k not in ("status", "message", "profile")}

    def set_efforts(self, efforts):
        e = np.asarray(efforts, dtype=np.float64)
        if e.shape != (self._nj,):
            raise Error("input", "efforts must have shape (%d,) (one per joint row), got %s"
                        % (self._nj, e.shape))
        setter = L.world_set_joint_velocity if self._quasi else L.world_set_effort
        for j in range(self._nj):
            st = setter(self._w, j, float(e[j]))
            if st:
                raise _status_error(st, L.world_message(self._w).decode(errors="replace"))

    @property
    def info(self):
        """What the last step did (dict of cp_step_info's fields)."""
        return {k: getattr(self._info, k) for k, _ in L.CStepInfo._fields_}

    @property
    def state(self):
        """A copy of the state: float64 array of shape (state_size,), laid
        out as state_names() says (free bodies: x y z (m), qw qx qy qz, vx vy
        vz (m/s), wx wy wz (rad/s, world frame); joints: q (rad or m), qd)."""
        x = np.empty(self._n)
        L.world_get_state(self._w, x.ctypes.data_as(L.dptr))
        return x

    def set_state(self, x):
        """Sets the state (quaternions renormalised). Raises Error
        ("bad_input", "nonfinite") leaving the state unchanged."""
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.shape != (self._n,):
            raise Error("input", "state must have shape (%d,), got %s" % (self._n, a.shape))
        st = L.world_set_state(self._w, a.ctypes.data_as(L.dptr))
        if st:
            raise _status_error(st, L.world_message(self._w).decode(errors="replace"))

    @property
    def state_size(self):
        return self._n

    @property
    def joint_count(self):
        return self._nj

    def joint_index(self, name):
        """The joint row of "manip/joint", or -1."""
        return L.world_joint_index(self._w, name.encode())

    def state_names(self):
        """Names of the state entries ("box.x", "arm/elbow.q"), from
        cp_state_layout."""
        return state_names(L.world_scene(self._w))

    def contacts(self):
        """The contacts of the last step with their forces, as a dict of
        arrays (k contacts): "a", "b" (lists of k names, "box" or
        "manip/link"), "point" (k, 3) world point (m), "normal" (k, 3) from
        b into a, "force" (k, 3) force on a in the world frame (N; impulse
        / dt on an impulsive step), "depth" (k,) penetration at the start
        of the step (m)."""
        arr = ctypes.POINTER(L.CWorldContact)()
        k = L.world_contacts(self._w, byref(arr))
        sc = L.world_scene(self._w)
        buf = ctypes.create_string_buffer(256)
        out = {"a": [], "b": [], "point": np.empty((k, 3)), "normal": np.empty((k, 3)),
               "force": np.empty((k, 3)), "depth": np.empty(k)}
        for i in range(k):
            c = arr[i]
            out["a"].append(L.scene_ref_name(sc, c.a, buf, len(buf)).decode())
            out["b"].append(L.scene_ref_name(sc, c.b, buf, len(buf)).decode())
            out["point"][i] = c.p[:]
            out["normal"][i] = c.n[:]
            out["force"][i] = c.force[:]
            out["depth"][i] = c.depth
        return out

    def warm_get(self):
        """The warm-start data of the last step (its LCP basis and the
        contacts it belongs to) as bytes; b"" when there is none."""
        n = L.world_warm_size(self._w)
        buf = ctypes.create_string_buffer(n)
        if n:
            L.world_warm_get(self._w, buf, n)
        return buf.raw

    def warm_set(self, blob):
        """Installs bytes from warm_get (of this world or another of the same
        scene); a blob that does not fit the current contacts is ignored."""
        blob = bytes(blob)
        L.world_warm_set(self._w, blob, len(blob))

    @property
    def time(self):
        """Simulated time (s)."""
        return L.world_time(self._w)

    def set_time(self, t):
        L.world_set_time(self._w, float(t))

    @property
    def dt(self):
        return L.world_dt(self._w)

    def energy(self):
        """Kinetic plus gravitational potential energy (J)."""
        return L.world_energy(self._w)

    def hash(self):
        """The running 64-bit digest of every state bit after every step
        (cp_world_hash); as `complan simulate --json` prints it: '%016x'."""
        return L.world_hash(self._w)
