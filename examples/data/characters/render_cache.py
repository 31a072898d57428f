"""Renders a baked character headless with Workbench: the rig alone (Blender's own Armature
modifier on the imported glTF, grey, left) beside the baked cache (rig + secondary motion, orange,
right), and prints per frame the largest distance between the two (the secondary motion as
Blender sees it; 0 at frame 1 checks the axes and the vertex order).

    python render_cache.py CHARACTER.glb CACHE.pc2|CACHE_FOLDER OUT_DIR [FRAME ...]

A folder holds one `<mesh name>.pc2` per mesh (what `overtone bake` writes for several meshes).
Ends with os._exit (bpy 4.5 can hang at interpreter exit).
"""

import math
import os
import struct
import sys

import bpy
import numpy as np
from mathutils import Euler, Matrix


def read_pc2(path):
    with open(path, "rb") as f:
        head = f.read(32)
        points, samples = struct.unpack("<i", head[16:20])[0], struct.unpack("<i", head[28:32])[0]
        data = np.frombuffer(f.read(), dtype="<f4")
    return data.reshape(samples, points, 3)


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    glb, cache, out_dir = argv[:3]
    frames = [int(x) for x in argv[3:]] or [1, 12, 24, 36, 72]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.import_scene.gltf(filepath=glb)
    meshes = [o for o in scene.objects if o.type == "MESH" and any(m.type == "ARMATURE" for m in o.modifiers)]
    caches = {}
    for ob in meshes:
        path = os.path.join(cache, f"{ob.name}.pc2") if os.path.isdir(cache) else cache
        caches[ob.name] = read_pc2(path)
    # glTF +Y up -> Blender +Z up: (x, y, z) -> (x, -z, y).
    conv = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float)
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for ob in meshes:
        p = caches[ob.name][0] @ conv.T
        lo, hi = np.minimum(lo, p.min(0)), np.maximum(hi, p.max(0))
    width = float(hi[0] - lo[0])
    shift = np.array([1.3 * width, 0.0, 0.0])
    copies = {}
    for ob in meshes:
        me = bpy.data.meshes.new(ob.name + "_cache")
        me.from_pydata(caches[ob.name][0].tolist(), [], [list(p.vertices) for p in ob.data.polygons])
        cp = bpy.data.objects.new(ob.name + "_cache", me)
        scene.collection.objects.link(cp)
        cp.color = (1.0, 0.45, 0.1, 1.0)
        copies[ob.name] = cp
        ob.color = (0.7, 0.7, 0.7, 1.0)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = 720, 480
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    centre = (lo + hi) / 2 + shift / 2
    size = max(float(hi[2] - lo[2]), 2.3 * width)
    cam.location = (centre[0], centre[1] - 2.8 * size, centre[2] + 0.05 * size)
    cam.rotation_euler = Euler((math.radians(88), 0, 0))
    scene.camera = cam
    os.makedirs(out_dir, exist_ok=True)
    dg = bpy.context.evaluated_depsgraph_get()
    for f in frames:
        scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        worst = 0.0
        for ob in meshes:
            ev = ob.evaluated_get(dg)
            n = len(ev.data.vertices)
            rig = np.empty(n * 3)
            ev.data.vertices.foreach_get("co", rig)
            mw = np.array(ob.matrix_world)
            rig = rig.reshape(n, 3) @ mw[:3, :3].T + mw[:3, 3]
            data = caches[ob.name]
            k = min(f - 1, data.shape[0] - 1)
            baked = data[k] @ conv.T
            if baked.shape[0] != n:
                raise SystemExit(f"{ob.name}: cache has {baked.shape[0]} points, the mesh {n}")
            worst = max(worst, float(np.linalg.norm(baked - rig, axis=1).max()))
            cp = copies[ob.name]
            cp.data.vertices.foreach_set("co", (baked + shift).ravel())
            cp.data.update()
        print(f"frame {f}: largest cache - rig distance {worst:.4f} ({worst / np.linalg.norm(hi - lo):.4f} of the diagonal)")
        scene.render.filepath = os.path.join(out_dir, f"frame{f:03d}.png")
        bpy.ops.render.render(write_still=True)


if __name__ == "__main__":
    code = 0
    try:
        main()
    except Exception:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
