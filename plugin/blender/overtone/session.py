"""Per-object runtime state: the bound rig, the native deformer, and the frame it is at.

Sessions live in memory only (keyed by the object's ``session_uid``); the precompute they need is
in the sidecar on disk, so a session is rebuilt cheaply after a file is reopened or a setting
changes.
"""

import ctypes
import glob
import hashlib
import os
import re
import time

import bpy
import numpy as np

from . import native, settings_table, shape_key
from .rig_binding import BindError, RigBinding, vertex_group_weights

_sessions = {}

#: Memory the live preview's frame cache of one body may hold (bytes); frames past it are played
#: but not kept (a jump back to them simulates again from the start frame).
CACHE_LIMIT_BYTES = 1 << 30


class SettingsError(ValueError):
    """A path or setting cannot be used; the message says what to change."""


def resolve_path(path, what, allow_temp):
    """Absolute path of a ``//``-relative or absolute path. In an unsaved file, ``//`` paths go
    to Blender's temporary folder when ``allow_temp`` (caches that can be rebuilt), else they are
    refused (a bake must survive the session)."""
    if not path:
        raise SettingsError(f"the {what} path is empty")
    if path.startswith("//") and not bpy.data.filepath:
        if not allow_temp:
            raise SettingsError(f"save the .blend file first, or give the {what} an absolute path "
                                f"(it is '{path}', relative to an unsaved file)")
        return os.path.join(bpy.app.tempdir, path[2:])
    return os.path.abspath(bpy.path.abspath(path))


def check_sidecar_path(path):
    """Refuses a sidecar path that cannot be read or written (a folder, a file without read
    permission, a folder that cannot be created). A readable file with stale or corrupt content
    is fine: the library rebuilds it and says so."""
    if os.path.isdir(path):
        raise SettingsError(f"the sidecar path {path} is a folder; give a file name ending in .ovt")
    if os.path.exists(path) and not os.access(path, os.R_OK):
        raise SettingsError(f"the sidecar {path} cannot be read (permissions); fix them or choose another path")
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise SettingsError(f"cannot create the sidecar folder {folder}: {e}") from e


# How many precomputes of one body are kept beside its sidecar path (newest used first).
KEEP_SIDECARS = 4


def precompute_key(settings):
    """The settings a precompute depends on (``native.PRECOMPUTE_FIELDS``) as plain values:
    ``[(name, value)]``, an enum as its index, an optional setting as ``(use flag, value)`` with
    the value None while unset (the library then ignores it, so the number shown must not make a
    new sidecar)."""
    out = []
    for f in native.PRECOMPUTE_FIELDS:
        value = getattr(settings, f)
        if isinstance(value, ctypes.Array):
            value = tuple(value)
        if hasattr(native.Settings, f"use_{f}"):
            use = bool(getattr(settings, f"use_{f}"))
            value = (use, value if use else None)
        out.append((f, value))
    return out


def keyed_sidecar(base, settings, arrays):
    """The sidecar file for these inputs: ``<base without .ovt>.<16 hex digits>.ovt``, the digits a
    blake2b hash of the settings and every array the precompute depends on. Keeping one file per
    input set makes switching a setting back a cache hit (the library still checks its own key
    inside the file and rebuilds a stale one)."""
    h = hashlib.blake2b(digest_size=8)
    # Only the settings the precompute depends on: the art-direction controls (damping, strength,
    # substeps, ...) are applied by the library and never make a new sidecar.
    h.update(repr(precompute_key(settings)).encode())
    for a in arrays:
        if a is None:
            h.update(b"none")
            continue
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    root = base[:-4] if base.endswith(".ovt") else base
    return f"{root}.{h.hexdigest()}.ovt"


def prune_sidecars(path, keep=KEEP_SIDECARS):
    """Marks ``path`` as just used and deletes all but the ``keep`` most recently used sidecars of
    the same base name; returns the deleted paths."""
    m = re.fullmatch(r"(.*)\.[0-9a-f]{16}\.ovt", path)
    if m is None:
        return []
    if os.path.exists(path):
        os.utime(path)
    siblings = [p for p in glob.glob(glob.escape(m.group(1)) + ".*.ovt")
                if re.fullmatch(re.escape(m.group(1)) + r"\.[0-9a-f]{16}\.ovt", p)]
    siblings.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    removed = []
    for p in siblings[keep:]:
        try:
            os.unlink(p)
            removed.append(p)
        except OSError:
            pass
    return removed


def _enum_index(row, identifier):
    """The index of an ENUM row's item (what the library takes) from its identifier."""
    return [item[0] for item in row["items"]].index(identifier)


def _row_fields(row, props):
    """The ``Settings`` fields of one table row from an object's properties: ``[(field, value)]``,
    an optional row's ``use_`` flag first, an enum as its item's index (animated values are the
    current frame's: Blender evaluates them into the properties)."""
    name = row["name"]
    value = getattr(props, name)
    if row["type"] == "ENUM":
        value = _enum_index(row, value)
    elif row["type"] == "FLOAT":
        value = float(value)
    elif row["type"] == "INT":
        value = int(value)
    elif row["type"] == "BOOL":
        value = bool(value)
    if row["optional"]:
        return [(f"use_{name}", bool(getattr(props, f"use_{name}"))), (name, value)]
    return [(name, value)]


def clocked(settings):
    """Whether a deformer bound with ``settings`` steps on the fixed physics clock (every
    integrator but backward Euler, which steps once per frame): its frame rate then changes
    without a new bind."""
    return settings.integrator != native.Integrator.BACKWARD_EULER


def _scene_fps(props, scene):
    """The scene's frame rate (frames per second of the timeline)."""
    return scene.render.fps / scene.render.fps_base


def _scene_gravity(props, scene):
    """The scene's gravity (m/s², Blender's convention) in world units/s² (the simulation runs in
    world space at bind): divided by the unit scale (metres per Blender unit); zero unless both the
    object's Gravity and the scene's are on."""
    g = scene.gravity if (props.use_gravity and scene.use_gravity) else (0.0, 0.0, 0.0)
    unit = scene.unit_settings.scale_length or 1.0
    return [float(x) / unit for x in g]


# The HOST settings of the table, filled from the scene rather than from a property (a HOST
# setting missing here is a KeyError in native_settings: it must be filled, not left at the
# library's default).
_HOST = {"fps": _scene_fps, "gravity": _scene_gravity}


def native_settings(props, scene):
    """The library's ``Settings`` for an object's properties: every row of the settings table (an
    optional one as its ``use_`` flag and value, an enum as its item's index), the frame rate
    and gravity from the scene."""
    s = native.default_settings()
    for row in settings_table.SETTINGS:
        if row["group"] == "HOST":
            value = _HOST[row["name"]](props, scene)
            if isinstance(value, list):
                getattr(s, row["name"])[:] = value
            else:
                setattr(s, row["name"], value)
            continue
        for field, value in _row_fields(row, props):
            setattr(s, field, value)
    return s


# The animatable rows (``native.ANIMATABLE_FIELDS``): what the running session hands the deformer
# between frames without a rebind.
_ANIMATABLE_ROWS = tuple(row for row in settings_table.SETTINGS if row["name"] in native.ANIMATABLE_FIELDS)


def controls(props):
    """The animatable settings now (animated values included) as ``((field, value), ...)`` in
    table order, an optional one with its ``use_`` flag: compared frame to frame, and written over
    a copy of the bind's settings for ``set_controls``."""
    return tuple(fv for row in _ANIMATABLE_ROWS for fv in _row_fields(row, props))


def settings_controls(settings):
    """:func:`controls` of a ``native.Settings`` (the values a deformer was bound or last set with)."""
    return tuple((field, getattr(settings, field)) for row in _ANIMATABLE_ROWS
                 for field in ((f"use_{row['name']}", row["name"]) if row["optional"] else (row["name"],)))


def stiffness_multiplier(weights, stiffness_range):
    """A Stiffness Group weight ``w`` in [0, 1] as the multiplier of Young's modulus
    ``range^(2w - 1)``: 1 at 0.5, ``range`` at 1, ``1/range`` at 0."""
    return np.power(float(stiffness_range), 2.0 * np.clip(weights, 0.0, 1.0) - 1.0)


def fingerprint(pose, values, control_values):
    """What a frame's result depends on besides the frames before it: the rig's pose (``bones x
    12``), the shape-key values (or None) and the animatable controls (:func:`controls`)."""
    h = hashlib.blake2b(np.ascontiguousarray(pose).tobytes(), digest_size=16)
    if values is not None:
        h.update(np.ascontiguousarray(values).tobytes())
    h.update(repr(control_values).encode())
    return h.digest()


def body_key(ob):
    """The body an object belongs to (its ``overtone.body`` id, or its own name before one is set)."""
    return ob.overtone.body or f"object:{ob.name}"


def split_copies(scene):
    """A duplicated object (Shift-D, Ctrl-C/V) carries its original's body id and place: it would
    join that body silently. Each such copy becomes a body of its own (a new id; it binds at its
    next frame like a new Add) and says so; the object the body's session was bound with keeps
    its place (without a session: the first by name). Returns the copies split off."""
    import uuid

    seen = {}
    for o in scene.objects:
        # Linked data is not ours to write (and a library's copies are the library's business).
        if o.library is not None or o.override_library is not None:
            continue
        if o.type == 'MESH' and o.overtone.enabled and o.overtone.body:
            seen.setdefault((o.overtone.body, o.overtone.body_index), []).append(o)
    split = []
    for (key, _), obs in seen.items():
        if len(obs) < 2:
            continue
        s = _sessions.get(key)
        bound = [o for o in obs if s is not None and o.session_uid in s.uids]
        keep = bound[0] if bound else min(obs, key=lambda o: o.name)
        for o in obs:
            if o is keep:
                continue
            o.overtone.body = uuid.uuid4().hex
            o.overtone.body_index = 0
            o.overtone.cache_file = ""  # its own cache at its bake, not the original's
            o.overtone.status = (f"a copy of '{keep.name}': simulated as a body of its own (select it with "
                                 "the other meshes and Rebind to join a body)")
            split.append(o)
    return split


def members(scene, ob):
    """The enabled objects of ``ob``'s body in body order (``ob`` alone if it has no body id)."""
    key = ob.overtone.body
    if not key:
        return [ob]
    found = [o for o in scene.objects if o.type == 'MESH' and o.overtone.body == key and
             (o.overtone.enabled or o == ob)]
    found.sort(key=lambda o: (o.overtone.body_index, o.name))
    return found


def bind_matrix(ob, depsgraph):
    """The object's stored bind matrix ``Mo_bind`` (4 x 4), or its evaluated world matrix now if
    none is stored yet."""
    m = np.array(ob.overtone.bind_matrix, dtype=np.float64).reshape(4, 4)
    if ob.overtone.has_bind_matrix:
        return m
    return np.array(ob.evaluated_get(depsgraph).matrix_world, dtype=np.float64)


def body_leak(binding, objects):
    """The body's painted leak field: per vertex the leak group's weight where the vertex is in
    its object's leak group, and ``-1`` (unpainted: the library's default field there)
    elsewhere; ``None`` when no object has a leak group."""
    if not any(ob.overtone.leak_group for ob in objects):
        return None
    leak = np.full(binding.vertex_count, -1.0)
    for ob, p in zip(objects, binding.parts):
        if ob.overtone.leak_group:
            values, member = vertex_group_weights(ob, ob.overtone.leak_group)
            leak[p.slice][member] = values[member]
    return leak


def body_stiffness(binding, objects):
    """The body's painted stiffness field: per vertex the multiplier of the Stiffness Group's
    weight (:func:`stiffness_multiplier`) where the vertex is in its object's group, ``-1``
    (unpainted: the default stiffness there) elsewhere; ``None`` when no object has a group."""
    if not any(ob.overtone.stiffness_group for ob in objects):
        return None
    stiff = np.full(binding.vertex_count, -1.0)
    for ob, p in zip(objects, binding.parts):
        group = ob.overtone.stiffness_group
        if group:
            values, member = vertex_group_weights(ob, group)
            stiff[p.slice][member] = stiffness_multiplier(values[member], ob.overtone.stiffness_range)
    return stiff


class Bind:
    """Everything read from Blender for a precompute (on the UI thread, no native work): the
    binding, settings, leak field, sidecar path and first pose of a body. :meth:`start` runs the
    precompute on the library's worker thread, :meth:`run` runs it here."""

    def __init__(self, objects, scene, depsgraph):
        props = objects[0].overtone
        self.key = body_key(objects[0])
        self.binding = b = RigBinding(objects, [bind_matrix(ob, depsgraph) for ob in objects])
        for ob, p in zip(objects, b.parts):
            bound = ob.overtone.bound_vertex_count
            if bound and bound != p.n:
                raise BindError(f"'{ob.name}' has {p.n} vertices but had {bound} when Overtone was "
                                "added; press Overtone ▸ Rebind")
        leak = body_leak(b, objects)
        self.leak = None if leak is None else b.weld_field(leak)
        stiffness = body_stiffness(b, objects)
        self.stiffness = None if stiffness is None else b.weld_field(stiffness)
        # Per object and painted field, (vertices in the group, vertices of the object): the
        # panel says how many keep the default (unassigned differs from weight 0).
        self.painted = {ob.name: {name: (int((f[p.slice] >= 0.0).sum()), p.n)
                                  for name, f in (("leak", leak), ("stiffness", stiffness)) if f is not None}
                        for ob, p in zip(objects, b.parts)}
        self.settings = native_settings(props, scene)
        sidecar = resolve_path(props.sidecar, "sidecar", allow_temp=True) if props.sidecar else ""
        if sidecar:
            check_sidecar_path(sidecar)
            sidecar = keyed_sidecar(sidecar, self.settings, (b.sim_rest, b.sim_triangles, b.sim_weights,
                                                             self.leak, b.sim_morph_deltas, self.stiffness))
            if len(objects) == 1:
                # The data-safety checks (the .blend, libraries, datablock files, other objects'
                # caches); the members of one body share their sidecar, so a body of several
                # meshes is checked by check_sidecar_path only.
                from . import paths
                paths.check_output(sidecar, "sidecar", objects[0], paths.SIDECAR)
        self.sidecar = sidecar
        self.pose = b.skin_transforms(objects, depsgraph).copy()
        keys = b.shape_key_values(objects, depsgraph)
        self.keys = None if keys is None else keys.copy()
        self.uids = [ob.session_uid for ob in objects]
        self.fps = scene.render.fps / scene.render.fps_base
        self.clocked = clocked(self.settings)
        self.job = None
        # What the precompute is built from, checked again after edits (setup_check).
        from . import setup_check
        self.setup = setup_check.fingerprint(objects, scene)

    def body(self):
        """The ``native.Body`` of this bind: the welded surface, its fields, first pose and sidecar."""
        b = self.binding
        return native.Body(b.sim_rest, b.sim_triangles, b.sim_weights, self.pose, leak=self.leak,
                           stiffness=self.stiffness, morph_deltas=b.sim_morph_deltas, first_morph_weights=self.keys,
                           sidecar=self.sidecar)

    def start(self):
        """Starts the precompute on the worker thread (returns at once)."""
        self.job = native.BindJob(self.settings, self.body())
        return self

    def poll(self):
        """``(state, fraction, stage)`` of the running precompute."""
        return self.job.poll()

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def free(self):
        if self.job is not None:
            self.job.free()
            self.job = None

    def finish(self):
        """The session of a finished job (NativeError if it failed or was cancelled)."""
        try:
            deformer = self.job.take()
        finally:
            self.free()
        return Session(self, deformer)

    def run(self):
        """The session, precomputed on this thread (blocking)."""
        return Session(self, native.Deformer(self.settings, self.body()))

    def wait(self, poll_seconds=0.005):
        """Starts the precompute on the worker thread if the library can, waits for it, returns the
        session; otherwise :meth:`run`."""
        if not native.has_async_bind():
            return self.run()
        self.start()
        try:
            while self.poll()[0] == native.BIND_RUNNING:
                time.sleep(poll_seconds)
        except BaseException:
            self.free()
            raise
        return self.finish()


class Session:
    """A bound body (one or more objects) and its deformer, at frame ``last_frame`` (``None``:
    not started)."""

    def __init__(self, bind, deformer):
        if bind.sidecar:
            prune_sidecars(bind.sidecar)
        b = bind.binding
        self.key = bind.key
        self.binding = b
        self.deformer = deformer
        self.uids = bind.uids
        self.sidecar = bind.sidecar
        self.fps = bind.fps
        # The bind's fingerprint, and whether the body's data no longer matches it: the live
        # preview then shows the plain rig until a Rebind (setup_check).
        self.setup = bind.setup
        self.setup_outdated = False
        self.outdated_parts = []
        self.painted = bind.painted
        self.clocked = bind.clocked
        self.last_frame = None
        self.u = np.zeros_like(b.rest)
        self.offsets = np.zeros_like(b.rest)
        self.references = {}
        self._buffers = {}
        self.max_residual = 0.0
        # The frame cache, like a point cache: per played frame the offsets shown and the
        # fingerprint of what they were simulated from (the rig's pose, shape-key values and the
        # animatable controls at that frame). The deformer itself is at ``last_frame``, the end
        # of the cached run; scrubbing inside the run shows cached frames without simulating.
        self.cache = {}
        self.cache_bytes = 0
        self.outdated = False
        # The offsets the shape keys show: ``offsets`` (the deformer's frame) or a cached frame's;
        # ``u`` then holds that frame's displacement too (the deformer's own, when it is not
        # cached, is kept aside in ``_u_live`` meanwhile).
        self.shown = self.offsets
        self._u_live = None
        # Frames simulated since the bind (the tests count them; the panel shows the cache).
        self.steps = 0
        # The catch-up stepping this body off the UI thread (``catch_up.CatchUp``), and the
        # frame whose catch-up the user stopped (not started again for that frame).
        self.catching_up = None
        self.declined = None
        # The settings the deformer was bound with (set_controls refuses any other change than
        # the animatable ones), and the animatable values it runs with now.
        self.settings = native.Settings.from_buffer_copy(bind.settings)
        self.controls = settings_controls(self.settings)

    def apply_controls(self, objects):
        """Hands the body's animatable settings (``native.ANIMATABLE_FIELDS``: the first member's
        values, animated ones included) to the deformer when they changed: a copy of the bind's
        settings with those values, applied from the next step without a rebind."""
        self._set_controls(controls(objects[0].overtone))

    def _set_controls(self, c):
        if c != self.controls:
            s = native.Settings.from_buffer_copy(self.settings)
            for field, value in c:
                setattr(s, field, value)
            self.deformer.set_controls(s)
            self.controls = c

    def set_fps(self, fps):
        """A new frame rate for a session on the fixed physics clock (:func:`clocked`): the
        deformer takes it without a rebind; the motion restarts at the next frame (a replay from
        the start frame), since the frames already stepped belong to the old rate."""
        s = native.Settings.from_buffer_copy(self.settings)
        s.fps = fps
        for field, value in self.controls:
            setattr(s, field, value)
        self.deformer.set_controls(s)
        self.settings.fps = fps
        self.fps = fps
        self.last_frame = None
        self.clear_cache()

    def matches(self, objects):
        return [ob.session_uid for ob in objects] == self.uids

    def sample(self, objects, depsgraph):
        """What a step to the evaluated frame needs from Blender, copied (UI thread): the skin
        transforms (``bones x 12``), the shape-key values (or None) and the animatable controls.
        :meth:`restart` and :meth:`advance` take it and touch no ``bpy`` data, so a catch-up or a
        bake can run them on a worker thread (``step_worker``)."""
        b = self.binding
        b.check_objects(objects)
        pose = b.skin_transforms(objects, depsgraph).copy()
        values = b.shape_key_values(objects, depsgraph)
        return pose, None if values is None else values.copy(), controls(objects[0].overtone)

    def reset(self, objects, depsgraph, frame):
        """Back to rest at ``frame`` (no secondary motion); the frame cache starts again there."""
        self.restart(frame, *self.sample(objects, depsgraph))

    def restart(self, frame, pose, values, control_values):
        """:meth:`reset` from a :meth:`sample` (no ``bpy``)."""
        self._set_controls(control_values)
        self.deformer.reset(pose, values)
        self.declined = None
        self.u[:] = 0.0
        self.offsets[:] = 0.0
        self.last_frame = frame
        self.max_residual = 0.0
        self.shown = self.offsets
        self._u_live = None
        self.clear_cache()
        self._remember(frame, fingerprint(pose, values, self.controls))

    def step(self, objects, depsgraph, frame):
        """One frame forward to ``frame``: the world displacement ``u`` and its rest-space offsets
        (kept in the frame cache)."""
        self.advance(frame, *self.sample(objects, depsgraph))

    def advance(self, frame, pose, values, control_values):
        """:meth:`step` from a :meth:`sample` (no ``bpy``)."""
        b = self.binding
        self._set_controls(control_values)
        # The library's displacement is per welded vertex; every copy gets its vertex's.
        b.unweld(self.deformer.step(pose, values), self.u)
        b.rest_offsets(pose, self.u, out=self.offsets)
        self.last_frame = frame
        self.declined = None
        self.shown = self.offsets
        self._u_live = None
        self.steps += 1
        self.max_residual = max(self.max_residual, self.deformer.residual())
        self._remember(frame, fingerprint(pose, values, self.controls))

    def _remember(self, frame, fingerprint):
        if frame in self.cache:
            return
        size = (self.offsets.size + self.u.size) * 4
        if self.cache_bytes + size > CACHE_LIMIT_BYTES:
            return
        self.cache[frame] = (fingerprint, self.offsets.astype(np.float32), self.u.astype(np.float32))
        self.cache_bytes += size

    def clear_cache(self):
        self.cache.clear()
        self.cache_bytes = 0

    def show_cached(self, objects, depsgraph, frame):
        """Puts the cached offsets of ``frame`` in place when that frame was played with the rig
        and controls it has now, and returns whether it did. A cached frame whose rig, shape keys
        or controls changed makes the cache *outdated*: it is cleared and the deformer is left
        without a frame, so the next update simulates again from the start frame."""
        entry = self.cache.get(frame)
        if entry is None:
            return False
        b = self.binding
        b.check_objects(objects)
        pose = b.skin_transforms(objects, depsgraph)
        values = b.shape_key_values(objects, depsgraph)
        if fingerprint(pose, values, controls(objects[0].overtone)) != entry[0]:
            self.clear_cache()
            self.outdated = True
            self.last_frame = None
            return False
        if self.shown is self.offsets and self.last_frame not in self.cache:
            self._u_live = self.u.copy()
        self.shown = entry[1]
        self.u[:] = entry[2]
        return True

    def show_live(self):
        """Shows the deformer's own frame (``last_frame``) again."""
        self.shown = self.offsets
        if self._u_live is not None:
            self.u[:] = self._u_live
            self._u_live = None

    def cache_info(self):
        """The panel's cache line: the cached frames and their memory, or "outdated"."""
        if self.outdated and not self.cache:
            return "Cache: outdated (the rig or a setting changed); simulating again from the start"
        if not self.cache:
            return "Cache: empty"
        frames = sorted(self.cache)
        return f"Cache: frames {frames[0]}-{frames[-1]} in memory ({self.cache_bytes / 2**20:.1f} MB)"

    def write_shape_keys(self, objects):
        for ob in objects:
            p = self.binding.part_of(ob)
            # On a library override of a linked character the mesh's shape keys are the
            # library's and are not saved with the shot: the Overtone key is made again in
            # memory after the shot is opened (the settings, being overridable, were saved).
            if shape_key.get(ob) is None and (ob.override_library is not None or ob.data.library is not None):
                try:
                    shape_key.ensure(ob)
                except (RuntimeError, AttributeError, TypeError) as e:
                    # The library mesh already has shape keys, which a shot cannot change: no
                    # live preview on this object (a bake still plays through its modifier).
                    ob.overtone.status = (f"error: the live preview cannot add its shape key to the library's "
                                          f"mesh '{ob.data.name}' ({e}); bake to see the motion")
                    continue
                self.references.pop(p.uid, None)
            ref = self.references.get(p.uid)
            if ref is None:
                ref = self.references[p.uid] = shape_key.reference_positions(ob)
            buf = self._buffers.get(p.uid)
            if buf is None:
                buf = self._buffers[p.uid] = np.empty((p.n, 3), dtype=np.float32)
            shape_key.write(ob, ref, self.shown[p.slice], buf)
            # A file saved with the key muted (saving.py) holds the mark: the live preview turns
            # that key back on (a key the user set or keyed is left alone).
            if ob.get("overtone_key_muted"):
                kb = shape_key.get(ob)
                if kb is not None:
                    kb.value = 1.0
                del ob["overtone_key_muted"]

    def free(self):
        self.deformer.free()


def get(ob):
    return _sessions.get(body_key(ob))


def get_key(key):
    """The session of the body ``key`` (see :func:`body_key`), if any."""
    return _sessions.get(key)


def create(objects, scene, depsgraph):
    """A new session for the body of ``objects`` (replacing any old one), precomputed before it
    returns (on the worker thread when the library can, waiting for it)."""
    drop(objects[0])
    s = Bind(objects, scene, depsgraph).wait()
    _sessions[s.key] = s
    return s


def install(s):
    """Makes ``s`` the session of its body (replacing any old one)."""
    drop_key(s.key)
    _sessions[s.key] = s
    return s


# Precomputes started by the frame handler (UI sessions): body key -> Bind.
_pending = {}


def pending(ob):
    return _pending.get(body_key(ob))


def start_pending(objects, scene, depsgraph):
    """Starts the precompute of a body on the worker thread and keeps it in ``_pending``."""
    drop_pending(objects[0])
    bind = Bind(objects, scene, depsgraph).start()
    _pending[bind.key] = bind
    return bind


def drop_pending(ob):
    """Frees the precompute the frame handler started for ``ob``'s body (one an operator runs is
    left to the operator)."""
    bind = _pending.get(body_key(ob))
    if bind is not None and getattr(bind, "owner", None) != "operator":
        del _pending[bind.key]
        bind.free()


def any_pending():
    return any(getattr(b, "owner", None) != "operator" for b in _pending.values())


def hold_pending(bind):
    """Registers a precompute run by an operator (which polls and finishes it itself): the frame
    handler sees the body as binding and plays the plain rig."""
    bind.owner = "operator"
    _pending[bind.key] = bind


def release_pending(bind):
    if _pending.get(bind.key) is bind:
        del _pending[bind.key]


def finish_pending():
    """Polls every pending precompute: installs the finished ones as sessions; returns
    ``(finished keys, {key: error message})`` and leaves the running ones."""
    done, failed = [], {}
    for key, bind in list(_pending.items()):
        if getattr(bind, "owner", None) == "operator":
            continue
        state = bind.poll()[0]
        if state == native.BIND_RUNNING:
            continue
        del _pending[key]
        try:
            install(bind.finish())
            done.append(key)
        except native.NativeError as e:
            failed[key] = str(e)
    return done, failed


def drop(ob):
    """Frees the session of ``ob``'s body and any precompute running for it."""
    drop_pending(ob)
    s = _sessions.pop(body_key(ob), None)
    if s is not None:
        s.free()


def drop_all():
    for bind in _pending.values():
        bind.free()
    _pending.clear()
    for s in _sessions.values():
        s.free()
    _sessions.clear()


def drop_key(key):
    bind = _pending.pop(key, None)
    if bind is not None:
        bind.free()
    s = _sessions.pop(key, None)
    if s is not None:
        s.free()
