"""Overtone in Blender, end to end: imports CesiumMan, adds Overtone, bakes its walk and saves the
.blend next to the cache, ready to open in Blender and play.

    scripts/build_blender_addon.sh
    ~/.cache/overtone/bpy-4.5.15/bin/python examples/blender/cesium_man.py [OUT_DIR]

(the venv is the one scripts/test_blender.sh creates). Writes OUT_DIR/cesium_man.blend and
OUT_DIR/overtone/Cesium_Man.{ovt,pc2} (default OUT_DIR: overtone-blender-demo)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "target", "blender"))

import bpy  # noqa: E402

import overtone  # noqa: E402


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 48
    bpy.ops.import_scene.gltf(filepath=os.path.join(REPO, "examples", "data", "khronos-gltf-sample-assets",
                                                    "CesiumMan.glb"))
    body = next(o for o in scene.objects if o.type == 'MESH' and any(m.type == 'ARMATURE' for m in o.modifiers))
    bpy.context.view_layer.objects.active = body
    blend = os.path.abspath(os.path.join(out_dir, "cesium_man.blend"))
    bpy.ops.wm.save_as_mainfile(filepath=blend)  # so that the default //overtone/ paths sit beside it
    bpy.ops.object.overtone_add()
    bpy.ops.object.overtone_bake()
    bpy.ops.wm.save_mainfile()
    print(f"{body.name}: {body.overtone.status}")
    print(f"open {blend} in Blender (with the add-on installed) and press play")


if __name__ == "__main__":
    overtone.register()
    code = 1
    try:
        main(sys.argv[1] if len(sys.argv) > 1 else "overtone-blender-demo")
        code = 0
    finally:
        overtone.unregister()
        sys.stdout.flush()
        os._exit(code)
