"""Pipeline tests of the add-on in headless Blender (run by scripts/test_blender.sh).

Cache formats: one bake of a rigged tube as PC2 (Mesh Cache), Alembic and USD (Mesh Sequence
Cache modifier right after the Armature modifier) plays the same positions at every frame
(float32: 1e-5 of the size); the Sequence Cache keeps the mesh's topology.

Farm bakes: the farm entry (``overtone.batch.bake_all``) in a separate headless process, as a farm runs it:
a saved .blend with two Overtone objects bakes both (exit 0, two caches, one progress line per
frame); with one object's cache path emptied the process exits 1, names that object, and still
bakes the other. Run by scripts/test_blender.sh."""

import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.environ["OVERTONE_ADDON_DIR"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import overtone  # noqa: E402
import scenes  # noqa: E402

TMP = tempfile.mkdtemp(prefix="overtone-batch-")
FRAMES = 12
DRIVER = (
    "import sys; sys.path.insert(0, {addon!r}); import bpy, overtone; overtone.register(); "
    "bpy.ops.wm.open_mainfile(filepath={blend!r}); overtone.batch.bake_all()"
)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def make_shot():
    scene = scenes.empty_scene()
    scene.frame_end = FRAMES
    names = []
    for k in range(2):
        ob, rig = scenes.rigged_tube(rings=21, segments=12)
        ob.location.x = rig.location.x = 2.0 * k
        # One body per Add: only this tube selected (Add binds every selected mesh on the armature).
        for o in bpy.context.selected_objects:
            o.select_set(False)
        bpy.context.view_layer.objects.active = ob
        ob.select_set(True)
        ob.overtone.use_lattice_resolution = True
        ob.overtone.lattice_resolution = 12
        ob.overtone.sidecar = f"//{ob.name}.ovt"
        ob.overtone.cache_file = f"//caches/{ob.name}.pc2"
        check(bpy.ops.object.overtone_add() == {'FINISHED'}, f"add failed on {ob.name}")
        names.append(ob.name)
    return scene, names


def run(blend):
    cmd = [sys.executable, "-c", DRIVER.format(addon=os.environ["OVERTONE_ADDON_DIR"], blend=blend)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def pc2_samples(path):
    with open(path, "rb") as f:
        head = f.read(32)
    return struct.unpack_from("<i", head, 28)[0]


def formats():
    scene = scenes.empty_scene()
    scene.frame_end = FRAMES
    ob, rig = scenes.rigged_tube(rings=21, segments=12)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    ob.overtone.use_lattice_resolution = True
    ob.overtone.lattice_resolution = 12
    ob.overtone.sidecar = os.path.join(TMP, "formats.ovt")
    ob.overtone.cache_file = os.path.join(TMP, "formats.pc2")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    frames = range(1, FRAMES + 1)
    played = {}
    n_faces = len(ob.data.polygons)
    for fmt, ext in (('PC2', ".pc2"), ('ABC', ".abc"), ('USD', ".usda")):
        ob.overtone.cache_format = fmt
        check(ob.overtone.cache_file.endswith(ext), f"path {ob.overtone.cache_file} did not follow {fmt}")
        check(bpy.ops.object.overtone_bake() == {'FINISHED'}, f"{fmt} bake failed")
        kinds = [m.type for m in ob.modifiers]
        arm = kinds.index('ARMATURE')
        want = 'MESH_CACHE' if fmt == 'PC2' else 'MESH_SEQUENCE_CACHE'
        check(kinds[arm + 1] == want and kinds.count('MESH_CACHE') + kinds.count('MESH_SEQUENCE_CACHE') == 1,
              f"{fmt}: modifiers {kinds}")
        played[fmt] = scenes.play(scene, ob, frames)
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
        check(len(ev.data.polygons) == n_faces, f"{fmt}: the cache changed the topology")
    size = float(np.abs(played['PC2']).max())
    moved = float(np.abs(played['PC2'][-1] - played['PC2'][0]).max())
    check(moved > 1e-3 * size, "the tube did not move")
    for fmt in ('ABC', 'USD'):
        diff = float(np.abs(played[fmt] - played['PC2']).max())
        print(f"  {fmt} plays the PC2's positions: largest difference {diff:.2e} over {FRAMES} frames")
        check(diff <= 1e-5 * size, f"{fmt} playback differs from the PC2 by {diff:.2e}")
    ob.overtone.cache_file = os.path.join(TMP, "formats.obj")
    ob.overtone.cache_format = 'ABC'
    try:
        bpy.ops.object.overtone_bake()
        refused = False
    except RuntimeError as e:
        refused = ".abc" in str(e)
    check(refused, "a .obj path was accepted for an Alembic bake")


def main():
    overtone.register()
    formats()
    print("formats: 3 passed, 0 failed")
    scene, names = make_shot()
    good = os.path.join(TMP, "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=good)
    r = run(good)
    frame_lines = [ln for ln in r.stdout.splitlines() if " frame " in ln]
    print(f"  two objects: exit {r.returncode}, {len(frame_lines)} progress lines")
    check(r.returncode == 0, f"batch bake exited {r.returncode}: {r.stderr[-2000:]}")
    check(len(frame_lines) == 2 * FRAMES, f"{len(frame_lines)} progress lines, expected {2 * FRAMES}")
    for n in names:
        p = os.path.join(TMP, "caches", f"{n}.pc2")
        check(os.path.isfile(p) and pc2_samples(p) == FRAMES, f"{p} missing or not {FRAMES} samples")
        print(f"    {p}: {pc2_samples(p)} samples, {os.path.getsize(p)} bytes")
        os.remove(p)
    # A failing object: its cache format (Alembic) does not match its cache path (.pc2).
    bad_ob = bpy.data.objects[names[1]]
    bad_ob.overtone.cache_format = 'ABC'
    bad_ob.overtone.cache_file = f"//caches/{names[1]}.pc2"
    bad = os.path.join(TMP, "shot_fail.blend")
    bpy.ops.wm.save_as_mainfile(filepath=bad)
    r = run(bad)
    failed = [ln for ln in r.stderr.splitlines() if ln.startswith("overtone: FAILED")]
    print(f"  one failing object: exit {r.returncode}, {failed}")
    check(r.returncode == 1, f"a failing object gave exit {r.returncode}")
    check(any(names[1] in ln for ln in failed), f"the failure does not name {names[1]}: {r.stderr[-2000:]}")
    check(os.path.isfile(os.path.join(TMP, "caches", f"{names[0]}.pc2")), "the good object was not baked")
    check(not os.path.exists(os.path.join(TMP, "caches", f"{names[1]}.pc2")), "the failing object left a file")
    overtone.unregister()
    print("batch: 2 passed, 0 failed")


if __name__ == "__main__":
    code = 1
    try:
        main()
        code = 0
    except Exception:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
