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


# @generated begin ctypes-types (from overtone::settings::SETTINGS: scripts/generate_host_files.sh)
class RestShape(enum.IntEnum):
    """The choices of setting ``rest``."""

    RIG = 0  #: Rig Pose
    BIND = 1  #: Bind Shape


class Solver(enum.IntEnum):
    """The choices of setting ``solver``."""

    FAST = 0  #: Fast
    FULL = 1  #: Full


class Integrator(enum.IntEnum):
    """The choices of setting ``integrator``."""

    IMPLICIT_MIDPOINT = 0  #: Implicit Midpoint
    BACKWARD_EULER = 1  #: Backward Euler


class ErrorKind(enum.IntEnum):
    """What a failed call returns (``overtone_status``; ``overtone::ErrorKind``): retry a
    STEP_FAILED (the state is unchanged), report the others."""

    OK = 0
    INVALID_INPUT = 1
    INVALID_SETTING = 2
    STEP_FAILED = 3
    NUMERICAL = 4
    FILE = 5
    UNSUPPORTED = 6
    CANCELLED = 7
    INTERNAL = 8


class Settings(ctypes.Structure):
    """Mirror of ``overtone_settings`` (units, ranges and defaults in ``SETTINGS`` of
    ``settings_table.py``; an optional setting is its ``use_`` flag and its value)."""

    _fields_ = [
        ("youngs_modulus", ctypes.c_double),
        ("poisson_ratio", ctypes.c_double),
        ("density", ctypes.c_double),
        ("use_frequency", ctypes.c_bool),
        ("frequency", ctypes.c_double),
        ("damping", ctypes.c_double),
        ("strength", ctypes.c_double),
        ("time_scale", ctypes.c_double),
        ("preroll", ctypes.c_double),
        ("use_cut_distance", ctypes.c_bool),
        ("cut_distance", ctypes.c_double),
        ("use_max_displacement", ctypes.c_bool),
        ("max_displacement", ctypes.c_double),
        ("rest", ctypes.c_int),
        ("gravity", ctypes.c_double * 3),
        ("fps", ctypes.c_double),
        ("solver", ctypes.c_int),
        ("use_modes", ctypes.c_bool),
        ("modes", ctypes.c_size_t),
        ("clusters", ctypes.c_size_t),
        ("use_lattice_resolution", ctypes.c_bool),
        ("lattice_resolution", ctypes.c_size_t),
        ("integrator", ctypes.c_int),
        ("use_substeps", ctypes.c_bool),
        ("substeps", ctypes.c_size_t),
    ]


# The settings that change the precompute (what a keyed sidecar hashes), and the ones a host
# may animate (applied per frame by set_controls, no rebind).
PRECOMPUTE_FIELDS = ("youngs_modulus", "poisson_ratio", "density", "solver", "modes", "clusters", "lattice_resolution",)
ANIMATABLE_FIELDS = ("damping", "strength",)
# @generated end ctypes-types


class NativeError(RuntimeError):
    """The native library refused an input or failed; the message says what to change and
    ``kind`` (an :class:`ErrorKind`) what kind of failure it was: a ``STEP_FAILED`` may be
    retried (the state is unchanged), the others are reported."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = ErrorKind.INVALID_INPUT if kind is None else ErrorKind(kind)


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


class Pose(ctypes.Structure):
    """Mirror of ``overtone_pose`` (one frame's rig)."""

    _fields_ = [
        ("transforms", ctypes.POINTER(ctypes.c_double)),
        ("morph_weights", ctypes.POINTER(ctypes.c_double)),
    ]


class CBody(ctypes.Structure):
    """Mirror of ``overtone_body``."""

    _fields_ = [
        ("parts", ctypes.POINTER(Part)),
        ("part_count", ctypes.c_size_t),
        ("bones", ctypes.c_size_t),
        ("targets", ctypes.c_size_t),
        ("first_pose", Pose),
        ("sidecar", ctypes.c_char_p),
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
    lib.overtone_create.argtypes = [ctypes.POINTER(Settings), ctypes.POINTER(CBody), ctypes.POINTER(vp), cp, sz]
    lib.overtone_create.restype = ctypes.c_int
    lib.overtone_step.argtypes = [vp, ctypes.POINTER(Pose), dp, cp, sz]
    lib.overtone_step.restype = ctypes.c_int
    lib.overtone_reset.argtypes = [vp, ctypes.POINTER(Pose), cp, sz]
    lib.overtone_reset.restype = ctypes.c_int
    lib.overtone_set_controls.argtypes = [vp, ctypes.POINTER(Settings), cp, sz]
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
        lib.overtone_bind_start.argtypes = [ctypes.POINTER(Settings), ctypes.POINTER(CBody), ctypes.POINTER(vp), cp,
                                            sz]
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
    """The Rust bridge's settings fields in order: ``[(name, type)]``, types ``f64 usize bool enum f64x3``."""
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


def _error(rc, err):
    """A failed call's :class:`NativeError` (``rc`` its ``overtone_status``)."""
    kind = rc if rc in ErrorKind._value2member_map_ and rc != 0 else ErrorKind.INTERNAL
    return NativeError(err.value.decode("utf-8", "replace"), kind)


class Body:
    """Everything a bind takes, checked and converted to C-contiguous arrays (NativeError
    otherwise): ``rest`` ``n x 3``, ``triangles`` ``t x 3``, ``weights`` ``n x bones``, the first
    frame's ``first_pose`` (``bones x 12``) and, for shape keys, ``morph_deltas`` (``targets x n x
    3``) and ``first_morph_weights``; the painted ``leak`` and ``stiffness`` fields (``n`` values,
    -1 unpainted) or None; the ``sidecar`` path ("" none). One part (the add-on welds a body's
    meshes into one surface)."""

    def __init__(self, rest, triangles, weights, first_pose, leak=None, stiffness=None, morph_deltas=None,
                 first_morph_weights=None, sidecar=""):
        self.rest = np.ascontiguousarray(rest, dtype=np.float64)
        if self.rest.ndim != 2 or self.rest.shape[1] != 3:
            raise NativeError(f"rest positions have shape {self.rest.shape}, expected (n, 3)")
        self.n = n = self.rest.shape[0]
        self.tris = np.ascontiguousarray(triangles, dtype=np.uint32)
        if self.tris.ndim != 2 or self.tris.shape[1] != 3:
            raise NativeError(f"triangles have shape {self.tris.shape}, expected (t, 3)")
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        if self.weights.ndim != 2 or self.weights.shape[0] != n:
            raise NativeError(f"weights have shape {self.weights.shape}, expected ({n}, bones)")
        self.bones = self.weights.shape[1]
        self.first_pose = _f64("first pose", first_pose, (self.bones, 12))
        self.leak = None if leak is None else _f64("leak field", leak, (n,))
        self.stiffness = None if stiffness is None else _f64("stiffness field", stiffness, (n,))
        self.targets = 0 if morph_deltas is None else len(morph_deltas)
        self.morph_deltas = self.first_morph_weights = None
        if self.targets:
            self.morph_deltas = _f64("shape key offsets", morph_deltas, (self.targets, n, 3))
            self.first_morph_weights = _f64("shape key values", first_morph_weights, (self.targets,))
        self.sidecar = sidecar or ""

    def c_struct(self):
        """The ``overtone_body`` over these arrays (valid while this object lives)."""
        opt = lambda a: None if a is None else _ptr(a, ctypes.c_double)  # noqa: E731
        self._part = Part(_ptr(self.rest, ctypes.c_double), self.n, _ptr(self.tris, ctypes.c_uint32),
                          self.tris.shape[0], _ptr(self.weights, ctypes.c_double), opt(self.morph_deltas),
                          opt(self.leak), opt(self.stiffness))
        self._sidecar = self.sidecar.encode("utf-8")
        return CBody(ctypes.pointer(self._part), 1, self.bones, self.targets,
                     Pose(_ptr(self.first_pose, ctypes.c_double), opt(self.first_morph_weights)), self._sidecar)


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

    def __init__(self, settings, body):
        lib = load()
        if not has_async_bind():
            raise NativeError("this build of the library has no asynchronous bind")
        self._body = body
        err = ctypes.create_string_buffer(_ERR_LEN)
        handle = ctypes.c_void_p()
        c = body.c_struct()
        rc = lib.overtone_bind_start(ctypes.byref(settings), ctypes.byref(c), ctypes.byref(handle), err, _ERR_LEN)
        if rc != 0 or not handle.value:
            raise _error(rc, err)
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
            raise _error(rc, err)
        return Deformer(None, self._body, _handle=out)

    # Freeing cancels a running bind and waits for its worker.
    _DESTROY = "overtone_bind_destroy"


class Deformer(_Handle):
    """One native deformer: created from a :class:`Body` (on the calling thread; ``BindJob`` binds
    on a worker), stepped one pose per frame. With shape keys each frame also gives their
    ``targets`` weights."""

    def __init__(self, settings, body, _handle=None):
        lib = load()
        err = ctypes.create_string_buffer(_ERR_LEN)
        if _handle is None:
            handle = ctypes.c_void_p()
            c = body.c_struct()
            rc = lib.overtone_create(ctypes.byref(settings), ctypes.byref(c), ctypes.byref(handle), err, _ERR_LEN)
            if rc != 0 or not handle.value:
                raise _error(rc, err)
        else:
            handle = _handle
        self._lib = lib
        self._h = handle
        self.vertices = body.n
        self.bones = body.bones
        self.targets = body.targets
        self._err = err
        self.out = np.zeros((body.n, 3), dtype=np.float64)
        self._out_ptr = _ptr(self.out, ctypes.c_double)
        self._pose_struct = Pose()

    def _check(self, rc):
        if rc != 0:
            raise _error(rc, self._err)

    def _pose(self, pose, morph_weights):
        """The ``overtone_pose`` of a frame (the arrays kept alive on ``self`` until the next call)."""
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        if pose.shape != (self.bones, 12):
            raise NativeError(f"pose has shape {pose.shape}, expected ({self.bones}, 12)")
        self._pose_arrays = (pose, None)
        self._pose_struct.transforms = _ptr(pose, ctypes.c_double)
        self._pose_struct.morph_weights = None
        if self.targets:
            w = _f64("shape key values", morph_weights, (self.targets,))
            self._pose_arrays = (pose, w)
            self._pose_struct.morph_weights = _ptr(w, ctypes.c_double)
        return ctypes.byref(self._pose_struct)

    def step(self, pose, morph_weights=None):
        """Advances one frame to ``pose`` (and the shape keys' ``morph_weights``); returns the
        ``n x 3`` displacement (a view that the next call overwrites)."""
        if not self._h:
            raise NativeError("the deformer was freed")
        p = self._pose(pose, morph_weights)
        self._check(self._lib.overtone_step(self._h, p, self._out_ptr, self._err, _ERR_LEN))
        return self.out

    def set_controls(self, settings):
        """The host's settings between frames: the animatable ones (``ANIMATABLE_FIELDS``) apply
        from the next step on without a rebind; NativeError (nothing changed) for a bad value or
        another setting that differs from the bind's (rebind for those)."""
        if not self._h:
            raise NativeError("the deformer was freed")
        self._check(self._lib.overtone_set_controls(self._h, ctypes.byref(settings), self._err, _ERR_LEN))

    def reset(self, pose, morph_weights=None):
        """Back to rest (no secondary motion, no velocity) in ``pose``."""
        if not self._h:
            raise NativeError("the deformer was freed")
        p = self._pose(pose, morph_weights)
        self._check(self._lib.overtone_reset(self._h, p, self._err, _ERR_LEN))

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
            raise _error(rc, err)
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
            raise _error(rc, self._err)
        return out

    _DESTROY = "overtone_pullback_destroy"
