"""ctypes binding of Overtone's C ABI (``libovertone_c.so``, see ``plugin/cpp/overtone_c.h``).

Arrays cross the boundary as C-contiguous float64/uint32 numpy arrays: rest positions ``n x 3``,
triangles ``t x 3``, weights ``n x bones``, the leak and stiffness fields ``n``, poses ``bones x 12`` (the 3 x 4
skin transform of each bone, bind space to posed world space, row-major) and the displacement
``n x 3`` (world units). Every failure of the library comes back as :class:`NativeError` with the
library's message; nothing the library does can raise anything else.
"""

import ctypes
import enum
import os

import numpy as np

_LIB_NAME = "libovertone_c.so"
_ERR_LEN = 2048


class CacheState(enum.IntEnum):
    """Where a deformer's precompute came from (``OVERTONE_CACHE_*`` in ``overtone_c.h``): branch
    on this and show :meth:`Deformer.cache_status` (the text) as the detail."""

    NOT_REQUESTED = 0  #: no sidecar path was given
    LOADED = 1  #: loaded from the sidecar
    BUILT = 2  #: built and written: no sidecar yet, or one for other inputs (nothing to report)
    UNUSABLE = 3  #: built and written: the sidecar was unreadable or did not fit (warn)
    WRITE_FAILED = 4  #: built, but the sidecar could not be written (warn)


class NativeError(RuntimeError):
    """The native library refused an input or failed; the message says what to change."""


class Settings(ctypes.Structure):
    """Mirror of ``overtone_settings`` (units in ``overtone_c.h``; the add-on tests compare this
    layout with the library's and the field list with the Rust bridge's).

    ``integrator`` 0 implicit midpoint with substeps, 1 backward Euler; ``substeps`` 0 automatic;
    ``damping`` ratio of the lowest mode; ``frequency`` Hz of the lowest mode, 0 none; ``rest`` 0
    rig pose, 1 bind shape; ``time_scale``; ``preroll`` seconds; ``strength`` output multiplier;
    ``cut_distance`` fraction of the body's diagonal, 0 never; ``gravity`` world units/s²."""

    _fields_ = [
        ("youngs_modulus", ctypes.c_double),
        ("poisson_ratio", ctypes.c_double),
        ("density", ctypes.c_double),
        ("fps", ctypes.c_double),
        ("lattice_resolution", ctypes.c_size_t),
        ("fast", ctypes.c_int),
        ("modes", ctypes.c_size_t),
        ("clusters", ctypes.c_size_t),
        ("integrator", ctypes.c_int),
        ("substeps", ctypes.c_size_t),
        ("damping", ctypes.c_double),
        ("frequency", ctypes.c_double),
        ("rest", ctypes.c_int),
        ("time_scale", ctypes.c_double),
        ("preroll", ctypes.c_double),
        ("strength", ctypes.c_double),
        ("cut_distance", ctypes.c_double),
        ("gravity", ctypes.c_double * 3),
    ]

# The fields that change the precompute (what a keyed sidecar hashes): the others are the
# art-direction controls, which the library applies without touching the sidecar.
PRECOMPUTE_FIELDS = ("youngs_modulus", "poisson_ratio", "density", "fps", "lattice_resolution", "fast",
                     "modes", "clusters")


class Part(ctypes.Structure):
    """Mirror of ``overtone_part`` (one mesh of a body, its own vertex indices)."""

    _fields_ = [
        ("rest", ctypes.POINTER(ctypes.c_double)),
        ("vertices", ctypes.c_size_t),
        ("triangles", ctypes.POINTER(ctypes.c_uint32)),
        ("triangle_count", ctypes.c_size_t),
        ("weights", ctypes.POINTER(ctypes.c_double)),
        ("morph_deltas", ctypes.POINTER(ctypes.c_double)),
        ("leak", ctypes.POINTER(ctypes.c_double)),
        ("stiffness", ctypes.POINTER(ctypes.c_double)),
    ]


# States of an asynchronous bind (OVERTONE_BIND_*).
BIND_RUNNING, BIND_DONE, BIND_FAILED, BIND_CANCELLED = 0, 1, 2, 3

_lib = None


def library_path():
    """The library this add-on loads: ``$OVERTONE_LIBRARY`` if set, else ``lib/`` beside this file."""
    env = os.environ.get("OVERTONE_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _LIB_NAME)


def load():
    """Loads the library once and declares its signatures; raises NativeError if it is missing."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if not os.path.isfile(path):
        raise NativeError(f"Overtone's native library is missing: {path} (reinstall the add-on)")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise NativeError(f"cannot load Overtone's native library {path}: {e}") from e
    dp = ctypes.POINTER(ctypes.c_double)
    up = ctypes.POINTER(ctypes.c_uint32)
    sz = ctypes.c_size_t
    cp = ctypes.c_char_p
    vp = ctypes.c_void_p
    lib.overtone_default_settings.argtypes = [ctypes.POINTER(Settings)]
    lib.overtone_default_settings.restype = None
    lib.overtone_create_with_morphs.argtypes = [ctypes.POINTER(Settings), dp, sz, up, sz, dp, sz, dp, sz, dp,
                                                dp, dp, dp, cp, ctypes.POINTER(vp), cp, sz]
    lib.overtone_create_with_morphs.restype = ctypes.c_int
    lib.overtone_step_with_morphs.argtypes = [vp, dp, dp, dp, cp, sz]
    lib.overtone_step_with_morphs.restype = ctypes.c_int
    lib.overtone_reset_with_morphs.argtypes = [vp, dp, dp, cp, sz]
    lib.overtone_reset_with_morphs.restype = ctypes.c_int
    lib.overtone_set_controls.argtypes = [vp, ctypes.c_double, ctypes.c_double, cp, sz]
    lib.overtone_set_controls.restype = ctypes.c_int
    lib.overtone_settings_fields.argtypes = [cp, sz]
    lib.overtone_settings_fields.restype = sz
    lib.overtone_settings_layout.argtypes = [cp, sz]
    lib.overtone_settings_layout.restype = sz
    lib.overtone_residual.argtypes = [vp]
    lib.overtone_residual.restype = ctypes.c_double
    lib.overtone_cache_status.argtypes = [vp, cp, sz]
    lib.overtone_cache_status.restype = ctypes.c_int
    lib.overtone_cache_state.argtypes = [vp]
    lib.overtone_cache_state.restype = ctypes.c_int
    lib.overtone_vertex_count.argtypes = [vp]
    lib.overtone_vertex_count.restype = sz
    lib.overtone_bone_count.argtypes = [vp]
    lib.overtone_bone_count.restype = sz
    lib.overtone_debug_panic.argtypes = [vp, cp, sz]
    lib.overtone_debug_panic.restype = ctypes.c_int
    lib.overtone_destroy.argtypes = [vp]
    lib.overtone_destroy.restype = None
    lib.overtone_pullback_create.argtypes = [dp, sz, sz, ctypes.POINTER(sz), dp, sz, ctypes.POINTER(vp), cp, sz]
    lib.overtone_pullback_create.restype = ctypes.c_int
    # The arrays by address (the caller's preallocated buffers; no pointer object per frame).
    lib.overtone_pullback_apply.argtypes = [vp, vp, vp, vp, cp, sz]
    lib.overtone_pullback_apply.restype = ctypes.c_int
    lib.overtone_pullback_destroy.argtypes = [vp]
    lib.overtone_pullback_destroy.restype = None
    if hasattr(lib, "overtone_bind_start"):
        lib.overtone_bind_start.argtypes = [ctypes.POINTER(Settings), ctypes.POINTER(Part), sz, sz, sz, dp, dp, cp,
                                            ctypes.POINTER(vp), cp, sz]
        lib.overtone_bind_start.restype = ctypes.c_int
        lib.overtone_bind_poll.argtypes = [vp, dp, cp, sz]
        lib.overtone_bind_poll.restype = ctypes.c_int
        lib.overtone_bind_cancel.argtypes = [vp]
        lib.overtone_bind_cancel.restype = None
        lib.overtone_bind_take.argtypes = [vp, ctypes.POINTER(vp), cp, sz]
        lib.overtone_bind_take.restype = ctypes.c_int
        lib.overtone_bind_destroy.argtypes = [vp]
        lib.overtone_bind_destroy.restype = None
    _lib = lib
    return lib


def has_async_bind():
    """Whether the library binds on a worker thread (``overtone_bind_start``)."""
    return hasattr(load(), "overtone_bind_start")


def default_settings():
    """The library's defaults as a :class:`Settings`."""
    s = Settings()
    load().overtone_default_settings(ctypes.byref(s))
    return s


def settings_fields():
    """The Rust bridge's settings fields in order: ``[(name, type)]``, types ``f64 usize bool u8 f64x3``."""
    buf = ctypes.create_string_buffer(4096)
    load().overtone_settings_fields(buf, 4096)
    return [tuple(f.split(":")) for f in buf.value.decode().split(",")]


def settings_layout():
    """The library's compiled ``overtone_settings``: ``([(name, offset, size)], sizeof)``."""
    buf = ctypes.create_string_buffer(4096)
    load().overtone_settings_layout(buf, 4096)
    fields, size = [], None
    for f in buf.value.decode().split(","):
        parts = f.split(":")
        if parts[0] == "sizeof":
            size = int(parts[1])
        else:
            fields.append((parts[0], int(parts[1]), int(parts[2])))
    return fields, size


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _f64(name, a, shape):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != shape:
        raise NativeError(f"{name} has shape {a.shape}, expected {shape}")
    return a


class _Inputs:
    pass


def _inputs(rest, triangles, weights, leak, first_pose, morph_deltas, first_morph_weights, stiffness=None):
    """Checks and converts a deformer's inputs to C-contiguous arrays (NativeError otherwise)."""
    a = _Inputs()
    a.rest = np.ascontiguousarray(rest, dtype=np.float64)
    if a.rest.ndim != 2 or a.rest.shape[1] != 3:
        raise NativeError(f"rest positions have shape {a.rest.shape}, expected (n, 3)")
    a.n = n = a.rest.shape[0]
    a.tris = np.ascontiguousarray(triangles, dtype=np.uint32)
    if a.tris.ndim != 2 or a.tris.shape[1] != 3:
        raise NativeError(f"triangles have shape {a.tris.shape}, expected (t, 3)")
    a.weights = np.ascontiguousarray(weights, dtype=np.float64)
    if a.weights.ndim != 2 or a.weights.shape[0] != n:
        raise NativeError(f"weights have shape {a.weights.shape}, expected ({n}, bones)")
    a.bones = a.weights.shape[1]
    a.first_pose = _f64("first pose", first_pose, (a.bones, 12))
    a.leak = None if leak is None else _f64("leak field", leak, (n,))
    a.stiffness = None if stiffness is None else _f64("stiffness field", stiffness, (n,))
    a.targets = 0 if morph_deltas is None else len(morph_deltas)
    a.morph_deltas = a.first_morph_weights = None
    if a.targets:
        a.morph_deltas = _f64("shape key offsets", morph_deltas, (a.targets, n, 3))
        a.first_morph_weights = _f64("shape key values", first_morph_weights, (a.targets,))
    return a


class _Handle:
    """A library handle freed by ``_DESTROY`` (the name of its ``overtone_*_destroy`` function):
    :meth:`free` is idempotent and also runs when the object is collected."""

    _DESTROY = ""
    _h = ctypes.c_void_p()

    def free(self):
        if self._h:
            getattr(self._lib, self._DESTROY)(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


class BindJob(_Handle):
    """A precompute running on the library's worker thread (``overtone_bind_start``): poll it,
    cancel it, then take the :class:`Deformer`. The calls return at once (the library releases
    the GIL: ctypes drops it around every call). Always :meth:`free` a job, taken or not."""

    def __init__(self, settings, rest, triangles, weights, leak, first_pose, sidecar, morph_deltas=None,
                 first_morph_weights=None, stiffness=None):
        lib = load()
        if not has_async_bind():
            raise NativeError("this build of the library has no asynchronous bind")
        a = _inputs(rest, triangles, weights, leak, first_pose, morph_deltas, first_morph_weights, stiffness)
        self._a = a
        part = Part(_ptr(a.rest, ctypes.c_double), a.n, _ptr(a.tris, ctypes.c_uint32), a.tris.shape[0],
                    _ptr(a.weights, ctypes.c_double),
                    _ptr(a.morph_deltas, ctypes.c_double) if a.targets else None,
                    None if a.leak is None else _ptr(a.leak, ctypes.c_double),
                    None if a.stiffness is None else _ptr(a.stiffness, ctypes.c_double))
        err = ctypes.create_string_buffer(_ERR_LEN)
        handle = ctypes.c_void_p()
        rc = lib.overtone_bind_start(ctypes.byref(settings), ctypes.byref(part), 1, a.bones, a.targets,
                                     _ptr(a.first_morph_weights, ctypes.c_double) if a.targets else None,
                                     _ptr(a.first_pose, ctypes.c_double), (sidecar or "").encode("utf-8"),
                                     ctypes.byref(handle), err, _ERR_LEN)
        if rc != 0 or not handle.value:
            raise NativeError(err.value.decode("utf-8", "replace"))
        self._lib = lib
        self._h = handle
        self._fraction = ctypes.c_double(0.0)
        self._stage = ctypes.create_string_buffer(256)

    def poll(self):
        """``(state, fraction in [0, 1], stage text)``; ``state`` is one of the ``BIND_*``."""
        if not self._h:
            return BIND_CANCELLED, 0.0, "freed"
        state = self._lib.overtone_bind_poll(self._h, ctypes.byref(self._fraction), self._stage, 256)
        return state, float(self._fraction.value), self._stage.value.decode("utf-8", "replace")

    def cancel(self):
        if self._h:
            self._lib.overtone_bind_cancel(self._h)

    def take(self):
        """The finished deformer (waits for the worker); NativeError for a failed or cancelled bind."""
        if not self._h:
            raise NativeError("the bind was freed")
        err = ctypes.create_string_buffer(_ERR_LEN)
        out = ctypes.c_void_p()
        rc = self._lib.overtone_bind_take(self._h, ctypes.byref(out), err, _ERR_LEN)
        if rc != 0 or not out.value:
            raise NativeError(err.value.decode("utf-8", "replace"))
        a = self._a
        return Deformer(None, a.rest, a.tris, a.weights, a.leak, a.first_pose, "", a.morph_deltas,
                        a.first_morph_weights, stiffness=a.stiffness, _handle=out)

    # Freeing cancels a running bind and waits for its worker.
    _DESTROY = "overtone_bind_destroy"


class Deformer(_Handle):
    """One native deformer: created from a rest surface, stepped one pose per frame.

    ``morph_deltas`` (``targets x n x 3``, bind space) are blendshapes (shape keys) the rig
    animates before skinning; each frame then gives their ``targets`` weights. ``stiffness``
    (``n``, optional) multiplies Young's modulus per vertex: > 0 where painted, -1 unpainted."""

    def __init__(self, settings, rest, triangles, weights, leak, first_pose, sidecar, morph_deltas=None,
                 first_morph_weights=None, stiffness=None, _handle=None):
        lib = load()
        a = _inputs(rest, triangles, weights, leak, first_pose, morph_deltas, first_morph_weights, stiffness)
        err = ctypes.create_string_buffer(_ERR_LEN)
        if _handle is None:
            handle = ctypes.c_void_p()
            rc = lib.overtone_create_with_morphs(
                ctypes.byref(settings), _ptr(a.rest, ctypes.c_double), a.n, _ptr(a.tris, ctypes.c_uint32),
                a.tris.shape[0], _ptr(a.weights, ctypes.c_double), a.bones,
                _ptr(a.morph_deltas, ctypes.c_double) if a.targets else None, a.targets,
                _ptr(a.first_morph_weights, ctypes.c_double) if a.targets else None,
                None if a.leak is None else _ptr(a.leak, ctypes.c_double),
                None if a.stiffness is None else _ptr(a.stiffness, ctypes.c_double),
                _ptr(a.first_pose, ctypes.c_double), (sidecar or "").encode("utf-8"), ctypes.byref(handle),
                err, _ERR_LEN)
            if rc != 0 or not handle.value:
                raise NativeError(err.value.decode("utf-8", "replace"))
        else:
            handle = _handle
        self._lib = lib
        self._h = handle
        self.vertices = a.n
        self.bones = a.bones
        self.targets = a.targets
        self._err = err
        self.out = np.zeros((a.n, 3), dtype=np.float64)
        self._out_ptr = _ptr(self.out, ctypes.c_double)

    def _check(self, rc):
        if rc != 0:
            raise NativeError(self._err.value.decode("utf-8", "replace"))

    def _pose(self, pose):
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        if pose.shape != (self.bones, 12):
            raise NativeError(f"pose has shape {pose.shape}, expected ({self.bones}, 12)")
        return pose

    def _morphs(self, morph_weights):
        if self.targets == 0:
            return None
        w = _f64("shape key values", morph_weights, (self.targets,))
        return w, _ptr(w, ctypes.c_double)

    def step(self, pose, morph_weights=None):
        """Advances one frame to ``pose`` (and the shape keys' ``morph_weights``); returns the
        ``n x 3`` displacement (a view that the next call overwrites)."""
        if not self._h:
            raise NativeError("the deformer was freed")
        pose = self._pose(pose)
        m = self._morphs(morph_weights)
        self._check(self._lib.overtone_step_with_morphs(self._h, _ptr(pose, ctypes.c_double),
                                                        m[1] if m else None, self._out_ptr, self._err, _ERR_LEN))
        return self.out

    def set_controls(self, damping, strength):
        """The keyframable controls, from the next step on, without a rebind: the damping ratio of
        the lowest mode (>= 0; refactors only the solver's small system, never the sidecar) and the
        output multiplier ``strength`` (>= 0). NativeError (nothing changed) for a bad value."""
        if not self._h:
            raise NativeError("the deformer was freed")
        self._check(self._lib.overtone_set_controls(self._h, float(damping), float(strength), self._err, _ERR_LEN))

    def reset(self, pose, morph_weights=None):
        """Back to rest (no secondary motion, no velocity) in ``pose``."""
        if not self._h:
            raise NativeError("the deformer was freed")
        pose = self._pose(pose)
        m = self._morphs(morph_weights)
        self._check(self._lib.overtone_reset_with_morphs(self._h, _ptr(pose, ctypes.c_double),
                                                         m[1] if m else None, self._err, _ERR_LEN))

    def residual(self):
        """Relative rig-orthogonality residual ``|Jᵀ M D u| / (|Jᵀ M D| |u|)`` of the last step,
        against the bones and the shape keys."""
        return float(self._lib.overtone_residual(self._h)) if self._h else 0.0

    def cache_status(self):
        """Where the precompute came from, as text to show (``"loaded from sidecar"``, ...); branch
        on :meth:`cache_state` instead."""
        buf = ctypes.create_string_buffer(1024)
        if not self._h or self._lib.overtone_cache_status(self._h, buf, 1024) != 0:
            return "freed"
        return buf.value.decode("utf-8", "replace")

    def cache_state(self):
        """Where the precompute came from, a :class:`CacheState`; None once freed."""
        if not self._h:
            return None
        return CacheState(self._lib.overtone_cache_state(self._h))

    def debug_panic(self):
        """Test hook: a Rust panic forced inside the library must come back as NativeError."""
        self._check(self._lib.overtone_debug_panic(self._h, self._err, _ERR_LEN))

    _DESTROY = "overtone_destroy"


class PullBack(_Handle):
    """The library's rest-space pull-back (``overtone_pullback_*``): per vertex
    ``d_v = M_p · A_v⁻¹ · u_v`` with ``A_v = Σ_b w_vb T_b[:3, :3]`` and ``M_p`` a 3 x 3 per part
    (``d_v = 0`` where ``|det A_v| ≤ 1e-12 s³``, ``s`` the largest entry of any bone's linear
    part). Built once from ``weights`` (``n x bones``, ≥ 0; the library keeps the positive
    entries), ``part_vertices`` (vertex counts of consecutive parts, summing to ``n``) and
    ``part_linear`` (``parts x 3 x 3``); :meth:`apply` then costs no allocation on either side."""

    def __init__(self, weights, part_vertices, part_linear):
        lib = load()
        w = np.ascontiguousarray(weights, dtype=np.float64)
        if w.ndim != 2:
            raise NativeError(f"pull-back weights have shape {w.shape}, expected (n, bones)")
        self.vertices, self.bones = w.shape
        counts = np.ascontiguousarray(part_vertices, dtype=np.uintp)
        mats = _f64("pull-back part matrices", part_linear, (len(counts), 3, 3))
        err = ctypes.create_string_buffer(_ERR_LEN)
        handle = ctypes.c_void_p()
        rc = lib.overtone_pullback_create(_ptr(w, ctypes.c_double), self.vertices, self.bones,
                                          _ptr(counts, ctypes.c_size_t), _ptr(mats, ctypes.c_double), len(counts),
                                          ctypes.byref(handle), err, _ERR_LEN)
        if rc != 0 or not handle.value:
            raise NativeError(err.value.decode("utf-8", "replace"))
        self._lib = lib
        self._h = handle
        self._err = err

    def apply(self, transforms, u, out):
        """Writes the offsets into ``out`` (``n x 3``) for ``transforms`` (``bones x 12``) and
        ``u`` (``n x 3``); all three C-contiguous float64 (checked, never copied) and ``out``
        writable. Returns ``out``."""
        if not self._h:
            raise NativeError("the pull-back was freed")
        for name, a, shape in (("transforms", transforms, (self.bones, 12)), ("displacement", u, (self.vertices, 3)),
                               ("output", out, (self.vertices, 3))):
            if (not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != shape
                    or not a.flags.c_contiguous):
                raise NativeError(f"pull-back {name}: expected a C-contiguous float64 array of shape {shape}, got "
                                  f"{getattr(a, 'dtype', type(a).__name__)} {getattr(a, 'shape', '')}")
        if not out.flags.writeable:
            raise NativeError("pull-back output: the array is read-only")
        rc = self._lib.overtone_pullback_apply(self._h, transforms.ctypes.data, u.ctypes.data, out.ctypes.data,
                                               self._err, _ERR_LEN)
        if rc != 0:
            raise NativeError(self._err.value.decode("utf-8", "replace"))
        return out

    _DESTROY = "overtone_pullback_destroy"
