"""ctypes binding of Overtone's C ABI (``libovertone_c.so``, see ``plugin/cpp/overtone_c.h``).

Arrays cross the boundary as C-contiguous float64/uint32 numpy arrays: rest positions ``n x 3``,
triangles ``t x 3``, weights ``n x bones``, the leak field ``n``, poses ``bones x 12`` (the 3 x 4
skin transform of each bone, bind space to posed world space, row-major) and the displacement
``n x 3`` (world units). Every failure of the library comes back as :class:`NativeError` with the
library's message; nothing the library does can raise anything else.
"""

import ctypes
import os

import numpy as np

_LIB_NAME = "libovertone_c.so"
_ERR_LEN = 2048


class NativeError(RuntimeError):
    """The native library refused an input or failed; the message says what to change."""


class Settings(ctypes.Structure):
    """Mirror of ``overtone_settings``."""

    _fields_ = [
        ("youngs_modulus", ctypes.c_double),
        ("poisson_ratio", ctypes.c_double),
        ("density", ctypes.c_double),
        ("fps", ctypes.c_double),
        ("lattice_resolution", ctypes.c_size_t),
        ("fast", ctypes.c_int),
        ("modes", ctypes.c_size_t),
        ("clusters", ctypes.c_size_t),
    ]


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
                                                dp, dp, cp, ctypes.POINTER(vp), cp, sz]
    lib.overtone_create_with_morphs.restype = ctypes.c_int
    lib.overtone_step_with_morphs.argtypes = [vp, dp, dp, dp, cp, sz]
    lib.overtone_step_with_morphs.restype = ctypes.c_int
    lib.overtone_reset_with_morphs.argtypes = [vp, dp, dp, cp, sz]
    lib.overtone_reset_with_morphs.restype = ctypes.c_int
    lib.overtone_residual.argtypes = [vp]
    lib.overtone_residual.restype = ctypes.c_double
    lib.overtone_cache_status.argtypes = [vp, cp, sz]
    lib.overtone_cache_status.restype = ctypes.c_int
    lib.overtone_vertex_count.argtypes = [vp]
    lib.overtone_vertex_count.restype = sz
    lib.overtone_bone_count.argtypes = [vp]
    lib.overtone_bone_count.restype = sz
    lib.overtone_debug_panic.argtypes = [vp, cp, sz]
    lib.overtone_debug_panic.restype = ctypes.c_int
    lib.overtone_destroy.argtypes = [vp]
    lib.overtone_destroy.restype = None
    _lib = lib
    return lib


def default_settings():
    """The library's defaults as a :class:`Settings`."""
    s = Settings()
    load().overtone_default_settings(ctypes.byref(s))
    return s


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _f64(name, a, shape):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != shape:
        raise NativeError(f"{name} has shape {a.shape}, expected {shape}")
    return a


class Deformer:
    """One native deformer: created from a rest surface, stepped one pose per frame.

    ``morph_deltas`` (``targets x n x 3``, bind space) are blendshapes (shape keys) the rig
    animates before skinning; each frame then gives their ``targets`` weights."""

    def __init__(self, settings, rest, triangles, weights, leak, first_pose, sidecar, morph_deltas=None,
                 first_morph_weights=None):
        lib = load()
        rest = np.ascontiguousarray(rest, dtype=np.float64)
        if rest.ndim != 2 or rest.shape[1] != 3:
            raise NativeError(f"rest positions have shape {rest.shape}, expected (n, 3)")
        n = rest.shape[0]
        tris = np.ascontiguousarray(triangles, dtype=np.uint32)
        if tris.ndim != 2 or tris.shape[1] != 3:
            raise NativeError(f"triangles have shape {tris.shape}, expected (t, 3)")
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[0] != n:
            raise NativeError(f"weights have shape {weights.shape}, expected ({n}, bones)")
        bones = weights.shape[1]
        first_pose = _f64("first pose", first_pose, (bones, 12))
        leak_arr = None if leak is None else _f64("leak field", leak, (n,))
        targets = 0 if morph_deltas is None else len(morph_deltas)
        if targets:
            morph_deltas = _f64("shape key offsets", morph_deltas, (targets, n, 3))
            first_morph_weights = _f64("shape key values", first_morph_weights, (targets,))
        err = ctypes.create_string_buffer(_ERR_LEN)
        handle = ctypes.c_void_p()
        rc = lib.overtone_create_with_morphs(
            ctypes.byref(settings), _ptr(rest, ctypes.c_double), n, _ptr(tris, ctypes.c_uint32),
            tris.shape[0], _ptr(weights, ctypes.c_double), bones,
            _ptr(morph_deltas, ctypes.c_double) if targets else None, targets,
            _ptr(first_morph_weights, ctypes.c_double) if targets else None,
            None if leak_arr is None else _ptr(leak_arr, ctypes.c_double),
            _ptr(first_pose, ctypes.c_double), (sidecar or "").encode("utf-8"), ctypes.byref(handle),
            err, _ERR_LEN)
        if rc != 0 or not handle.value:
            raise NativeError(err.value.decode("utf-8", "replace"))
        self._lib = lib
        self._h = handle
        self.vertices = n
        self.bones = bones
        self.targets = targets
        self._err = err
        self.out = np.zeros((n, 3), dtype=np.float64)
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
        buf = ctypes.create_string_buffer(1024)
        if not self._h or self._lib.overtone_cache_status(self._h, buf, 1024) != 0:
            return "freed"
        return buf.value.decode("utf-8", "replace")

    def debug_panic(self):
        """Test hook: a Rust panic forced inside the library must come back as NativeError."""
        self._check(self._lib.overtone_debug_panic(self._h, self._err, _ERR_LEN))

    def free(self):
        if self._h:
            self._lib.overtone_destroy(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass
