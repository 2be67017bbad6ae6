"""The simulator (planner/sim/world.h): a scene's state stepped in time."""
import ctypes
import os
from ctypes import byref, c_int, c_void_p

import numpy as np

from . import _lib as L
from ._lib import Error
from .scene import Result, joint_name

__all__ = ["World", "simulate"]


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
    """World(scene, dt=1e-3, stepper="acceleration", solver=None, auto_contacts=False,
    **options)

    stepper: "acceleration" (the paper's model), "velocity" or
    "quasistatic". solver: the LCP solver of the steps ("lemke", the
    default, "auto", "fip", "certify"). auto_contacts: ignore the scene's
    explicit contact list and generate contacts from the shapes (`complan
    simulate --auto-contacts`; the Scene itself is not changed). options:
    fields of cp_world_options (warm_start, compliance, allow_fallback,
    check, impact_memo, profile, velocity_sliding, reserve: -1 (default)
    sizes the world at creation for the scene's contacts as far as they
    keep the LCP within 256 unknowns, n > 0 for n contacts, 0 not at all
    (docs/simulate.md, "Reserve"); solve={...} as in
    complan.lcp.solve).
    Units: SI (s, m, kg, N, rad)."""

    def __init__(self, scene, dt=1e-3, stepper="acceleration", solver=None,
                 auto_contacts=False, **options):
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
        for k in ("warm_start", "allow_fallback", "check", "profile", "velocity_sliding"):
            if k in options and isinstance(options[k], bool):
                options[k] = int(options[k])
        L.set_fields(opt, options, "world options")
        out = c_void_p()
        err = L.CError()
        src = scene._auto_contacts() if auto_contacts else scene
        st = L.world_create(src._ptr, byref(opt), byref(out), byref(err))
        if st != 0:
            msg, where = err.msg.decode(errors="replace"), err.where.decode(errors="replace")
            if where == "contacts" and not auto_contacts:  # an explicit contact list
                msg += " (or pass auto_contacts=True)"
            raise Error(L.world_status_name(st).decode(), msg, where, scene.path)
        self._w = out.value
        self._scene = scene
        self._stepper = L.stepper_name(opt.stepper).decode()
        self._profile = bool(opt.profile)
        self._info = L.CStepInfo()
        self._info_ref = byref(self._info)
        self._wp = c_void_p(self._w)  # converted once, not at every step
        self._step = L.world_step_raw
        self._get = L.world_get_state_raw
        self._out = self._outp = None  # get_state's last buffer (kept: see there)
        self._n = L.world_state_size(self._w)
        self._nj = L.world_joint_count(self._w)
        self._earr = (ctypes.c_double * max(self._nj, 1))()  # set_efforts' inputs
        self._eview = np.frombuffer(self._earr, dtype=np.float64, count=self._nj)
        self._eref = byref(self._earr)
        self._failed_row = c_int()
        self._failed_ref = byref(self._failed_row)

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
        ...) and the C message. The call without arguments is the cheap
        one (docs/python.md, "Cost of a step from Python")."""
        if efforts is None and n == 1:  # the common call: keep it short
            st = self._step(self._wp, self._info_ref)
            if st:
                self._failed(st)
            return
        if efforts is not None:
            self.set_efforts(efforts)
        step, w, info = self._step, self._wp, self._info_ref
        for _ in range(n):
            st = step(w, info)
            if st:
                self._failed(st)

    def _failed(self, st):
        raise _status_error(st, L.world_message(self._w).decode(errors="replace"))

    def simulate(self, duration, every=1, csv=None, html=None, title=None, progress=None):
        """Runs round(duration / dt) steps in C (cp_simulate: no Python
        between the steps) and returns `complan simulate --json`'s document
        of the run as a Result (the same keys and numbers, bit for bit but
        for the measured time_us_per_step and profile): status, stepper,
        steps, dt, time_us_per_step, fallback_steps, checked_steps,
        retried_steps, lcp_pivots, max_penetration (m), energy {initial,
        final, max_step_increase} (J), hash ('%016x'), profile (s per
        phase; only for a world made with profile=True) and final {time,
        bodies, joints}; attributes warm_steps, lcp_solves, state (the
        final state) and hash (the int). A step that fails raises Error
        (the state stays at the last good step) with the document as its
        `result`. csv, html: files for the frames (the start and every
        every-th step), as `complan simulate --csv --html` writes them
        (title: the page's, default "complan"); written up to where the run
        stopped, whole or not at all. progress: a function called about
        every 1/20 s of stepping with (step, steps) (what `--progress`
        prints); an exception it raises is raised when the run is over
        (the run is not stopped)."""
        r = self._run(duration, every, csv, html, title, progress)
        if r["status"] != "ok":
            e = _status_error(r._status, r["message"])
            e.result = r
            raise e
        return r

    def _run(self, duration, every, csv, html, title, progress):
        """cp_simulate with the recorders and the progress callback; the
        document whatever the status (bad arguments and files raise)."""
        if not (isinstance(duration, (int, float)) and 0 <= duration <= 1e9):
            raise Error("input", "duration must be a finite number of seconds >= 0, got %r"
                        % (duration,))
        if not (isinstance(every, int) and every >= 1):
            raise Error("input", "every must be an integer >= 1, got %r" % (every,))
        prog = L.Progress(progress, L.SIM_PROGRESS, lambda a: a[:2], "(step, steps)")
        opt = L.sim_defaults()
        opt.duration = float(duration)
        opt.every = every
        opt.progress = prog.ptr
        rec = None
        if csv is not None or html is not None:
            from .recording import Recorder
            rec = Recorder(self, csv, html, "complan" if title is None else title)
            cb = L.SIM_FRAME(rec.frame)
            opt.frame = ctypes.cast(cb, ctypes.c_void_p)
        res = L.CSimResult()
        try:
            L.simulate(self._w, byref(opt), byref(res))
        except BaseException:
            if rec:
                rec.close(False)
            raise
        if rec:
            rec.close(True)
        prog.raise_kept()
        return self._document(res)

    def _document(self, res):
        """`complan simulate --json`'s document of a cp_sim_result."""
        num = L.num
        r = Result()
        r._status = res.status
        r["status"] = L.world_status_name(res.status).decode()
        if res.status:
            r["message"] = res.message.decode(errors="replace")
        r["stepper"] = self._stepper
        r["steps"] = res.steps
        r["dt"] = num(self.dt)
        r["time_us_per_step"] = num(res.time_us_per_step)
        for k in ("fallback_steps", "checked_steps", "retried_steps", "lcp_pivots"):
            r[k] = getattr(res, k)
        r["max_penetration"] = num(res.max_penetration)
        r["energy"] = {"initial": num(res.energy_initial), "final": num(res.energy_final),
                       "max_step_increase": num(res.max_step_increase)}
        r["hash"] = "%016x" % res.hash
        if self._profile:
            r["profile"] = {k: num(getattr(res.profile, k)) for k, _ in L.CStepProfile._fields_}
        r.warm_steps, r.lcp_solves, r.hash = res.warm_steps, res.lcp_solves, res.hash
        r.state = self.state
        r["final"] = self._final(r.state)
        return r

    def _final(self, x):
        """The document's "final": the time, every free body's pose and
        velocity (from the state x) and every joint of the scene, mimic
        followers included (python/bind.c: cp_py_joints)."""
        num = L.num
        names = self.state_names()
        bodies = [{"name": names[o][:-2],  # "box.x" -> "box"
                   "position": [num(v) for v in x[o:o + 3]],
                   "orientation": [num(v) for v in x[o + 3:o + 7]],
                   "linear_velocity": [num(v) for v in x[o + 7:o + 10]],
                   "angular_velocity": [num(v) for v in x[o + 10:o + 13]]}
                  for o in range(0, self._n - 2 * self._nj, 13)]
        sc = L.world_scene(self._w)
        nj = L.py_joints(sc, None, None, None)
        pv = (ctypes.c_double * (2 * nj + 1))()
        jm, jk = (c_int * (nj + 1))(), (c_int * (nj + 1))()
        L.py_joints(sc, pv, jm, jk)
        joints = [{"name": joint_name(sc, jm[j], jk[j]), "position": num(pv[2 * j]),
                   "velocity": num(pv[2 * j + 1])} for j in range(nj)]
        return {"time": num(self.time), "bodies": bodies, "joints": joints}

    def set_efforts(self, efforts):
        """Sets every joint row's input (see step), kept for the steps that
        follow: (joint_count,) numbers. Raises Error ("input" for a wrong
        shape; the world's status, e.g. "bad_input" for a non-finite value,
        naming the joint row) with the rows before the refused one set."""
        try:
            if len(efforts) != self._nj:
                raise ValueError
            self._eview[:] = efforts  # into the C array the call reads
        except (TypeError, ValueError):
            raise Error("input", "efforts: expected %d number(s), one per joint row, got %.60r"
                        % (self._nj, efforts)) from None
        st = L.world_set_inputs_raw(self._wp, self._eref, self._nj, self._quasi,
                                    self._failed_ref)
        if st:
            self._failed(st)

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

    def get_state(self, out=None):
        """The state as `state` gives it, written into out when given (a
        C-contiguous, writeable float64 array of shape (state_size,), reused
        from call to call: no allocation) and returned. The world keeps a
        reference to the last out, so that the next call with the same
        array skips its checks (numpy then refuses to resize it in place)."""
        if out is self._out:  # the buffer of the last call: checked then
            self._get(self._wp, self._outp)
            return out
        if out is None:
            return self.state
        if not (type(out) is np.ndarray and out.dtype == np.float64 and
                out.shape == (self._n,) and out.flags.c_contiguous and out.flags.writeable):
            raise Error("input", "out must be a writeable C-contiguous float64 array of "
                        "shape (%d,)" % self._n)
        self._out, self._outp = out, c_void_p(out.ctypes.data)
        self._get(self._wp, self._outp)
        return out

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


def simulate(scene, duration=1.0, dt=1e-3, stepper="acceleration", solver=None,
             compliance=None, warm_start=True, auto_contacts=False, csv=None, html=None,
             every=1, profile=False, progress=None, title=None, velocity_sliding=True):
    """`complan simulate SCENE --json` from Python: a world made from scene
    (a Scene, or a scene file's path, loaded as the command does: normal
    speeds not checked) with the command's options, run for duration
    seconds in C; returns the document World.simulate returns. Unlike
    World.simulate a failed step does not raise: the document says so
    (status, message), as the command prints it (exit status 1).
    dt, stepper, solver, compliance, warm_start, auto_contacts, csv, html,
    every, profile, velocity_sliding: the command's --dt, --stepper, --solver,
    --compliance, --no-warm-start (False), --auto-contacts, --csv, --html,
    --every, --profile, --no-velocity-sliding (False). title: the page's (default "complan simulate: PATH", as the
    command's). progress: as in World.simulate. Bad input raises Error."""
    from .scene import Scene
    if isinstance(scene, Scene):
        sc = scene
    elif isinstance(scene, (str, os.PathLike)):
        sc = Scene.load(os.fspath(scene), check_normal_speed=False)
    else:
        raise Error("input", "expected a complan.Scene or a scene file's path, got %r"
                    % type(scene).__name__)
    opts = {"warm_start": bool(warm_start), "profile": bool(profile),
            "velocity_sliding": bool(velocity_sliding)}
    if compliance is not None:
        if not (isinstance(compliance, (int, float)) and 0 <= compliance <= 1e-2):
            raise Error("input", "compliance must be a number in [0, 0.01], got %r"
                        % (compliance,))
        opts["compliance"] = float(compliance)
    w = World(sc, dt=dt, stepper=stepper, solver=solver, auto_contacts=auto_contacts, **opts)
    if title is None:
        title = "complan simulate: %s" % (sc.path or "(python)")
    return w._run(duration, every, csv, html, title, progress)
