"""Per-object runtime state: the bound rig, the native deformer, and the frame it is at.

Sessions live in memory only (keyed by the object's ``session_uid``); the precompute they need is
in the sidecar on disk, so a session is rebuilt cheaply after a file is reopened or a setting
changes.
"""

import os

import bpy
import numpy as np

from . import native, shape_key
from .rig_binding import BindError, RigBinding, vertex_group_weights

_sessions = {}


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


def native_settings(props, scene):
    s = native.default_settings()
    s.youngs_modulus = props.youngs_modulus
    s.poisson_ratio = props.poisson_ratio
    s.density = props.density
    s.fps = scene.render.fps / scene.render.fps_base
    s.lattice_resolution = props.lattice_resolution
    s.fast = 1 if props.solver == 'FAST' else 0
    s.modes = props.modes
    s.clusters = props.clusters
    return s


class Session:
    """A bound object and its deformer, at frame ``last_frame`` (``None``: not started)."""

    def __init__(self, ob, scene, depsgraph):
        props = ob.overtone
        self.binding = RigBinding(ob)
        if props.bound_vertex_count and props.bound_vertex_count != self.binding.vertex_count:
            raise BindError(f"'{ob.name}' has {self.binding.vertex_count} vertices but had "
                            f"{props.bound_vertex_count} when Overtone was added; press Overtone ▸ Rebind")
        leak = vertex_group_weights(ob, props.leak_group) if props.leak_group else None
        sidecar = resolve_path(props.sidecar, "sidecar", allow_temp=True) if props.sidecar else ""
        if sidecar:
            check_sidecar_path(sidecar)
            from . import paths
            paths.check_output(sidecar, "sidecar", ob, paths.SIDECAR)
        pose = self.binding.skin_transforms(ob, depsgraph)
        b = self.binding
        self.deformer = native.Deformer(native_settings(props, scene), b.rest, b.triangles, b.weights,
                                        leak, pose, sidecar, b.morph_deltas, b.shape_key_values(ob, depsgraph))
        self.sidecar = sidecar
        self.fps = scene.render.fps / scene.render.fps_base
        self.last_frame = None
        self.u = np.zeros_like(b.rest)
        self.offsets = np.zeros_like(b.rest)
        self.reference = None
        self.max_residual = 0.0

    def reset(self, ob, depsgraph, frame):
        """Back to rest at ``frame`` (no secondary motion)."""
        self.binding.check_object(ob)
        self.deformer.reset(self.binding.skin_transforms(ob, depsgraph), self.binding.shape_key_values(ob, depsgraph))
        self.u[:] = 0.0
        self.offsets[:] = 0.0
        self.last_frame = frame
        self.max_residual = 0.0

    def step(self, ob, depsgraph, frame):
        """One frame forward to ``frame``: the world displacement ``u`` and its rest-space offsets."""
        self.binding.check_object(ob)
        pose = self.binding.skin_transforms(ob, depsgraph)
        self.u[:] = self.deformer.step(pose, self.binding.shape_key_values(ob, depsgraph))
        self.offsets[:] = self.binding.rest_offsets(pose, self.u)
        self.last_frame = frame
        self.max_residual = max(self.max_residual, self.deformer.residual())

    def write_shape_key(self, ob):
        if self.reference is None:
            self.reference = shape_key.reference_positions(ob)
        shape_key.write(ob, self.reference, self.offsets)

    def free(self):
        self.deformer.free()


def get(ob):
    return _sessions.get(ob.session_uid)


def create(ob, scene, depsgraph):
    """A new session for ``ob`` (replacing any old one)."""
    drop(ob)
    s = Session(ob, scene, depsgraph)
    _sessions[ob.session_uid] = s
    return s


def get_or_create(ob, scene, depsgraph):
    return get(ob) or create(ob, scene, depsgraph)


def drop(ob):
    s = _sessions.pop(ob.session_uid, None)
    if s is not None:
        s.free()


def drop_all():
    for s in _sessions.values():
        s.free()
    _sessions.clear()
