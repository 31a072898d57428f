"""Reads Overtone's Alembic and USD caches with the reference readers (PyAlembic ``alembic3d``,
Pixar's ``usd-core``) and compares them with the PC2 of the same bake.

Usage: check_readers.py NAME FPS PC2 CACHE... ; prints one line per cache and exits non-zero
on the first disagreement. Checked: one sample per PC2 frame, positions equal to the PC2's
float32 values (largest difference 0, tolerance 1e-6 of the bounding box), the face count
(every face a triangle), the time base (Alembic: first sample at start/fps s, 1/fps apart;
USD: timeCodesPerSecond = fps, start/end time codes) and the mesh name."""

import os
import struct
import sys

import numpy as np


def read_pc2(path):
    with open(path, "rb") as f:
        b = f.read()
    assert b[:12] == b"POINTCACHE2\0", f"{path}: not a PC2"
    _, n, start, rate, ns = struct.unpack_from("<iiffi", b, 12)
    pos = np.frombuffer(b, dtype="<f4", offset=32).reshape(ns, n, 3)
    return start, pos


def read_alembic(path):
    from alembic3d import Abc, AbcGeom

    top = Abc.IArchive(path).getTop()
    assert top.getNumChildren() == 1, f"{path}: {top.getNumChildren()} top objects"
    name = top.getChild(0).getName()
    schema = AbcGeom.IPolyMesh(top, name).getSchema()
    ts = schema.getTimeSampling()
    frames, faces = [], None
    for i in range(schema.getNumSamples()):
        s = schema.getValue(i)  # an int is a sample index (ISampleSelector(int) would be a time)
        frames.append(np.asarray(s.getPositions()).copy())
        if faces is None:
            counts = np.asarray(list(s.getFaceCounts()))
            faces = (len(counts), set(counts.tolist()))
    times = [ts.getSampleTime(i) for i in range(schema.getNumSamples())]
    return name, np.array(frames), faces, times


def read_usd(path):
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(path)
    prim = stage.GetDefaultPrim()
    mesh = UsdGeom.Mesh(prim)
    codes = mesh.GetPointsAttr().GetTimeSamples()
    frames = np.array([np.array(mesh.GetPointsAttr().Get(t)) for t in codes])
    counts = np.array(mesh.GetFaceVertexCountsAttr().Get())
    meta = (stage.GetTimeCodesPerSecond(), stage.GetStartTimeCode(), stage.GetEndTimeCode())
    return prim.GetName(), frames, (len(counts), set(counts.tolist())), codes, meta


def main():
    name, fps, pc2_path, caches = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    start, ref = read_pc2(pc2_path)
    ns = ref.shape[0]
    tol = 1e-6 * float(np.abs(ref).max())
    print(f"{name}: PC2 {ns} frames x {ref.shape[1]} points, start frame {start:g}, {os.path.getsize(pc2_path)} bytes")
    for path in caches:
        ext = os.path.splitext(path)[1]
        if ext == ".abc":
            got_name, frames, faces, times = read_alembic(path)
            want = [(start + k) / fps for k in range(ns)]
            assert np.allclose(times, want, rtol=0, atol=1e-9), f"{path}: sample times {times[:3]}... want {want[:3]}..."
            reader = "alembic3d"
        else:
            got_name, frames, faces, codes, meta = read_usd(path)
            assert list(codes) == [start + k for k in range(ns)], f"{path}: time codes {codes[:3]}..."
            assert meta == (fps, start, start + ns - 1), f"{path}: timeCodesPerSecond/start/end {meta}"
            reader = "usd-core"
        assert got_name == name, f"{path}: mesh named {got_name!r}, want {name!r}"
        assert frames.shape == ref.shape, f"{path}: {frames.shape} samples x points, PC2 has {ref.shape}"
        assert faces[1] == {3}, f"{path}: face sizes {faces[1]}"
        diff = float(np.abs(frames.astype(np.float64) - ref.astype(np.float64)).max())
        assert diff <= tol, f"{path}: largest position difference to the PC2 {diff:.3e} > {tol:.1e}"
        print(
            f"  {os.path.basename(path)}: {reader}: {frames.shape[0]} samples, {faces[0]} triangles, "
            f"largest |x - x_pc2| = {diff:.3e}, {os.path.getsize(path)} bytes"
        )
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)
