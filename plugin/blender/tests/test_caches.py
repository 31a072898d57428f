"""Blender's own Alembic and USD importers read Overtone's caches (run by scripts/test_caches.sh).

Usage: test_caches.py NAME FPS PC2 CACHE... Each cache is imported into an empty scene at FPS
frames per second; the importer must give one mesh object of the PC2's vertex and triangle
counts, played by a Mesh Sequence Cache modifier, whose evaluated world-space vertices at scene
frame ``start + k`` equal PC2 sample ``k`` carried from Y-up to Blender's Z-up,
``(x, y, z) -> (x, -z, y)``, within 1e-5 of the bounding box (float32 transforms)."""

import os
import struct
import sys

import bpy
import numpy as np


def read_pc2(path):
    with open(path, "rb") as f:
        b = f.read()
    _, n, start, _, ns = struct.unpack_from("<iiffi", b, 12)
    return start, np.frombuffer(b, dtype="<f4", offset=32).reshape(ns, n, 3).astype(np.float64)


def check(path, fps, start, ref):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = int(round(fps))
    scene.render.fps_base = scene.render.fps / fps
    if path.endswith(".abc"):
        bpy.ops.wm.alembic_import(filepath=path, as_background_job=False)
    else:
        bpy.ops.wm.usd_import(filepath=path)
    meshes = [o for o in scene.objects if o.type == 'MESH']
    assert len(meshes) == 1, f"{path}: {len(meshes)} mesh objects imported"
    ob = meshes[0]
    mods = [m.type for m in ob.modifiers]
    assert 'MESH_SEQUENCE_CACHE' in mods, f"{path}: modifiers {mods}, no Mesh Sequence Cache"
    want = ref[:, :, [0, 2, 1]] * np.array([1.0, -1.0, 1.0])
    tol = 1e-5 * float(np.abs(ref).max())
    worst = 0.0
    for k in range(ref.shape[0]):
        scene.frame_set(int(start) + k)
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
        me = ev.to_mesh()
        co = np.empty(3 * len(me.vertices))
        me.vertices.foreach_get("co", co)
        n_faces = len(me.polygons)
        ev.to_mesh_clear()
        co = co.reshape(-1, 3)
        assert co.shape == ref.shape[1:], f"{path}: {co.shape[0]} vertices at frame {start + k}, PC2 has {ref.shape[1]}"
        m = np.array(ob.matrix_world)
        world = co @ m[:3, :3].T + m[:3, 3]
        worst = max(worst, float(np.abs(world - want[k]).max()))
    assert worst <= tol, f"{path}: largest difference to the PC2 {worst:.3e} > {tol:.1e}"
    print(f"  {os.path.basename(path)}: Blender {bpy.app.version_string} importer: {ob.name}, "
          f"{ref.shape[0]} frames, {n_faces} faces, largest |x - x_pc2| = {worst:.3e}")


def main():
    name, fps, pc2_path, caches = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    start, ref = read_pc2(pc2_path)
    print(f"{name}: Blender importers")
    for path in caches:
        check(os.path.abspath(path), fps, start, ref)


if __name__ == "__main__":
    try:
        main()
        code = 0
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
