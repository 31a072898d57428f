"""The bake's cache formats: PC2 (Mesh Cache modifier, the default), Alembic and USD (Mesh
Sequence Cache modifier). Alembic and USD files hold the object's own polygons (so the modifier
only replaces positions and the mesh keeps its UVs and attributes) and one sample per frame at
``(frame_start + k) / fps`` seconds.

* Alembic (``.abc``): the Ogawa layout of Overtone's core writer (``rust/overtone/src/io/alembic``)
  — one PolyMesh named after the object under the top object, ``P`` per frame, constant
  ``.faceIndices`` / ``.faceCounts``; Alembic is +Y up with clockwise polygons, so positions go
  ``(x, y, z) -> (x, z, -y)`` and every polygon's loop order is reversed (Blender's reader undoes
  both).
* USD (``.usda``, text): a ``Mesh`` prim named after the object, ``upAxis = "Z"`` (Blender's own
  axes, no conversion), time-sampled ``points`` at time codes ``frame_start + k``,
  ``timeCodesPerSecond`` = fps.
"""

import hashlib
import os
import re
import struct

import numpy as np

from . import frame_stream
from .session import SettingsError

EXTENSIONS = {'PC2': (".pc2",), 'ABC': (".abc",), 'USD': (".usda", ".usd")}


def check_path(path, fmt):
    """Refuses a cache path whose extension does not name ``fmt``, before any frame is baked."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS[fmt]:
        raise SettingsError(f"the {fmt} cache must end in {' or '.join(EXTENSIONS[fmt])}; "
                            f"'{os.path.basename(path)}' does not (change the Point Cache path or the format)")


def object_path(ob, fmt):
    """Where the Mesh Sequence Cache modifier finds the mesh in the file."""
    return "/" + (alembic_name(ob.name) if fmt == 'ABC' else usd_name(ob.name))


def usd_name(name):
    s = re.sub(r"[^A-Za-z0-9_]", "_", name) or "mesh"
    return "_" + s if s[0].isdigit() else s


def alembic_name(name):
    return re.sub(r"[/\x00-\x1f]", "_", name) or "mesh"


def topology(mesh):
    """``(counts, indices)`` of the mesh's polygons, loop order, as int32 arrays."""
    counts = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", counts)
    indices = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", indices)
    return counts, indices


def stream(path, fmt, name, points, samples, counts, indices, fps, frame_start):
    """A :class:`AlembicStream` or :class:`UsdStream` (``fmt`` ``'ABC'`` or ``'USD'``) of
    ``samples`` frames of ``points`` positions into ``path``, after checking the extension."""
    check_path(path, fmt)
    cls = AlembicStream if fmt == 'ABC' else UsdStream
    return cls(path, name, points, samples, counts, indices, fps, frame_start)


def write(path, fmt, name, frames, counts, indices, fps, frame_start):
    """Writes ``frames`` (``nf x n x 3`` object-space positions, Blender axes) with the polygons
    ``counts`` / ``indices`` as ``fmt`` (``'ABC'`` or ``'USD'``), atomically."""
    frames = np.asarray(frames)
    frame_stream.write_all(stream(path, fmt, name, frames.shape[1], len(frames), counts, indices, fps,
                                  frame_start), frames)


# --- Alembic (Ogawa) ---------------------------------------------------------------------------

_DATA = 1 << 63
_META = ["interpretation=box", "geoScope=vtx;interpretation=point",
         "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1",
         "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1;schemaObjTitle=AbcGeom_PolyMesh_v1:.geom"]


class _Ogawa:
    """Ogawa container written into a :class:`frame_stream.FrameStream`: header
    ``Ogawa\\xff\\x00\\x01`` + root offset (patched by :meth:`finish`); data = u64 size + bytes;
    group = u64 count + child offsets (top bit: data); empty data/group = offset 0. Children are
    written before the group that lists them, so frames can be appended as they come."""

    def __init__(self, out):
        self.out = out
        out.write(b"Ogawa\xff\x00\x01" + bytes(8))

    def data(self, *parts):
        size = sum(len(p) for p in parts)
        if size == 0:
            return _DATA
        at = self.out.write(struct.pack("<Q", size))
        for p in parts:
            self.out.write(p)
        return at | _DATA

    def group(self, children):
        if not children:
            return 0
        return self.out.write(struct.pack(f"<Q{len(children)}Q", len(children), *children))

    def finish(self, root):
        self.out.patch(8, struct.pack("<Q", root))


def _key(b):
    return hashlib.blake2b(b, digest_size=16).digest()


def _prop_header(name, kind, pod, extent, n, constant, meta):
    """AbcCoreOgawa property header (see rust/overtone/src/io/alembic/mod.rs)."""
    widest = max(len(meta), len(name), n, 1)
    hint = 0 if widest < 256 else (1 if widest < 65536 else 2)
    info = (hint << 2) | ((_META.index(meta) + 1 if meta else 0) << 20)
    if kind:
        info |= kind | (pod << 4) | 0x100 | 0x400 | (extent << 12) | (0x800 if constant else 0)
    fmt = "<" + "BHI"[hint]
    out = struct.pack("<I", info)
    if kind:
        out += struct.pack(fmt, n) + struct.pack(fmt, 1)
    return out + struct.pack(fmt, len(name)) + name.encode()


class AlembicStream(frame_stream.FrameStream):
    """An Alembic (Ogawa) cache written frame by frame: the archive's version and library data
    first, each frame's bounds and ``P`` sample as it is pushed (only their offsets are kept),
    and the polygons, property headers, objects and time sampling after the last frame."""

    suffix = ".abc.tmp"

    def __init__(self, path, name, points, samples, counts, indices, fps, frame_start):
        super().__init__(path, points, samples)
        self.name, self.fps, self.frame_start = alembic_name(name), fps, frame_start
        self.counts, self.indices = counts, indices
        self.bounds, self.positions = [], []
        try:
            self.w = _Ogawa(self)
            self.version, self.library = self.w.data(struct.pack("<i", 0)), self.w.data(struct.pack("<i", 10800))
        except BaseException:
            self.abort()
            raise

    def _frame(self, frame):
        w = self.w
        yup = np.stack([frame[:, 0], frame[:, 2], -frame[:, 1]], axis=-1).astype("<f4")
        b = struct.pack("<6d", *yup.min(axis=0).astype(np.float64), *yup.max(axis=0).astype(np.float64))
        self.bounds.append(w.data(_key(b), b))
        p = yup.tobytes()
        self.positions += [w.data(_key(p), p), w.data()]

    def _tail(self):
        w, nf, name, counts, indices = self.w, self.samples, self.name, self.counts, self.indices
        rev = np.concatenate([indices[s:s + c][::-1]
                              for s, c in zip(np.cumsum(counts) - counts, counts)]).astype("<i4")
        fi, fc = rev.tobytes(), np.asarray(counts, dtype="<i4").tobytes()
        geom_props = [w.group(self.bounds), w.group(self.positions),
                      w.group([w.data(_key(fi), fi), w.data()]), w.group([w.data(_key(fc), fc), w.data()])]
        headers = (_prop_header(".selfBnds", 1, 11, 6, nf, nf == 1, _META[0])
                   + _prop_header("P", 2, 10, 3, nf, nf == 1, _META[1])
                   + _prop_header(".faceIndices", 2, 6, 1, nf, True, "")
                   + _prop_header(".faceCounts", 2, 6, 1, nf, True, ""))
        geom = w.group(geom_props + [w.data(headers)])
        top_props = _prop_header(".geom", 0, 0, 0, 0, False, _META[2])
        props = w.group([geom, w.data(top_props)])
        mesh_obj = w.group([props, w.data(_key(headers + top_props), _key(b""))])
        child = struct.pack("<I", len(name.encode())) + name.encode() + bytes([_META.index(_META[3]) + 1])
        top = w.group([w.group([]), mesh_obj, w.data(child, _key(b""), _key(child))])
        meta = w.data(b"_ai_Application=Overtone for Blender")
        samplings = (struct.pack("<IdId", 0, 1.0, 1, 0.0)
                     + struct.pack("<IdId", nf, 1.0 / self.fps, 1, self.frame_start / self.fps))
        table = b"".join(bytes([len(m)]) + m.encode() for m in _META)
        root = w.group([self.version, self.library, top, meta, w.data(samplings), w.data(table)])
        w.finish(root)


# --- USD (text) --------------------------------------------------------------------------------

def _f(x):
    r = repr(float(np.float32(x)))
    return r[:-2] if r.endswith(".0") else r


class UsdStream(frame_stream.FrameStream):
    """A USD text cache written frame by frame: the layer's metadata and the mesh's polygons
    first (the frame count is known from the start), one ``points`` time sample per pushed frame,
    and the closing lines after the last."""

    suffix = ".usda.tmp"

    def __init__(self, path, name, points, samples, counts, indices, fps, frame_start):
        super().__init__(path, points, samples)
        self.frame_start = frame_start
        name, code = usd_name(name), self._code
        try:
            self.write((f'#usda 1.0\n(\n    defaultPrim = "{name}"\n    doc = "Overtone for Blender bake"\n'
                        f"    endTimeCode = {code(samples - 1)}\n    framesPerSecond = {fps:g}\n"
                        f"    metersPerUnit = 1\n    startTimeCode = {code(0)}\n"
                        f"    timeCodesPerSecond = {fps:g}\n    upAxis = \"Z\"\n)\n\n"
                        f'def Mesh "{name}"\n{{\n    int[] faceVertexCounts = [{", ".join(map(str, counts.tolist()))}]\n'
                        f'    int[] faceVertexIndices = [{", ".join(map(str, indices.tolist()))}]\n'
                        f'    uniform token orientation = "rightHanded"\n    point3f[] points.timeSamples = {{\n').encode())
        except BaseException:
            self.abort()
            raise

    def _code(self, k):
        return f"{self.frame_start + k:g}"

    def _frame(self, frame):
        pts = ", ".join(f"({_f(p[0])}, {_f(p[1])}, {_f(p[2])})" for p in frame)
        self.write(f"        {self._code(self.done)}: [{pts}],\n".encode())

    def _tail(self):
        self.write('    }\n    uniform token subdivisionScheme = "none"\n}\n'.encode())
