"""Headless Blender tests of the art-direction controls and the Stiffness Group (run by
scripts/test_blender.sh): the settings layout against the library, strength and damping applied
between frames without a rebind (keyframable, in playback and in the bake), a Stiffness Group."""

import os
import sys

sys.path.insert(0, os.environ["OVERTONE_ADDON_DIR"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import importlib.util  # noqa: E402
import numpy as np  # noqa: E402

import overtone  # noqa: E402
import runner  # noqa: E402
import scenes  # noqa: E402
from overtone import native, pc2, presets, properties, session  # noqa: E402
from test_addon import CACHE_TOL, check, tube_scene  # noqa: E402

# The one definition of the settings layout check (scripts/test_cpp.sh runs it with C++ too).
_spec = importlib.util.spec_from_file_location(
    "check_settings_layout",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "check_settings_layout.py"))
check_settings_layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_settings_layout)

FRAMES = range(1, 41)
# Strength is a multiplication of the library's float64 output: exact up to round-off.
STRENGTH_TOL = 1e-12


def play_u(scene, ob, frames=FRAMES):
    """Plays ``frames`` and returns the session's float64 world displacement per frame."""
    out = []
    for f in frames:
        scene.frame_set(f)
        out.append(session.get(ob).u.copy())
    return np.array(out)


def sidecar_state(ob):
    """The keyed sidecar files beside the object's sidecar path, with their mtimes."""
    folder = os.path.dirname(bpy.path.abspath(ob.overtone.sidecar))
    return {p: os.stat(os.path.join(folder, p)).st_mtime_ns for p in sorted(os.listdir(folder))
            if p.endswith(".ovt")}


def test_settings_layout_matches_the_library():
    rust = native.settings_fields()
    compiled, size = native.settings_layout()
    found = check_settings_layout.problems(native.Settings, rust, compiled, size)
    check(not found, "settings layouts disagree: " + "; ".join(found))
    s = native.default_settings()
    # The controls' defaults as the properties hold them (float32); test_addon checks every setting.
    for name in ("damping", "strength", "time_scale", "preroll", "cut_distance", "use_cut_distance", "substeps",
                 "use_substeps", "frequency", "use_frequency", "max_displacement", "use_max_displacement"):
        want = getattr(s, name)
        want = want if isinstance(want, bool) else float(np.float32(want))
        got = properties.OvertoneSettings.bl_rna.properties[name].default
        check(got == want, f"{name}: property default {got!r}, library {want!r}")
    check(s.integrator == native.Integrator.IMPLICIT_MIDPOINT and s.rest == native.RestShape.RIG
          and s.solver == native.Solver.FAST, "integrator/rest/solver")
    check(properties.OvertoneSettings.bl_rna.properties["integrator"].default == 'IMPLICIT_MIDPOINT'
          and properties.OvertoneSettings.bl_rna.properties["rest"].default == 'RIG', "enum property defaults")
    check(list(s.gravity) == [0.0, 0.0, 0.0], "gravity default")
    print(f"    layout: {len(rust)} fields, {size} bytes, same in Rust, C and ctypes")


def test_strength_scales_the_motion_without_a_rebind():
    scene, ob, _ = tube_scene("strength")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    u1 = play_u(scene, ob)
    s = session.get(ob)
    files = sidecar_state(ob)
    ob.overtone.strength = 2.0
    u2 = play_u(scene, ob)
    ob.overtone.strength = 0.0
    u0 = play_u(scene, ob)
    rig = scenes.play(scene, ob, FRAMES)
    check(session.get(ob) is s, "changing the strength rebuilt the session")
    check(sidecar_state(ob) == files, "changing the strength touched the sidecar")
    peak = np.abs(u1).max()
    check(peak > 1e-3, f"no secondary motion ({peak:.2e})")
    err2 = np.abs(u2 - 2.0 * u1).max()
    check(err2 <= STRENGTH_TOL * peak, f"strength 2 is {err2:.2e} off twice strength 1 (peak {peak:.3e})")
    check(np.abs(u0).max() == 0.0, "strength 0 left a displacement")
    ob.overtone.live_preview = False
    plain = scenes.play(scene, ob, FRAMES)
    check(np.abs(rig - plain).max() <= 1e-6, "strength 0 does not show the plain rig")
    print(f"    strength: peak {peak:.4f}, |u(2) - 2 u(1)| {err2:.1e}, strength 0 exactly 0")


def test_keyframed_strength_follows_the_curve_in_playback_and_bake():
    scene, ob, _ = tube_scene("keyed")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    u1 = play_u(scene, ob)
    for f, v in ((1, 1.0), (15, 0.2), (30, 2.0)):
        ob.overtone.strength = v
        ob.overtone.keyframe_insert("strength", frame=f)
    fc = ob.animation_data.action.fcurves.find('overtone.strength')
    check(fc is not None, "no FCurve on the strength")
    keyed = play_u(scene, ob)
    curve = np.array([fc.evaluate(f) for f in FRAMES])
    want = u1 * curve[:, None, None]
    err = np.abs(keyed - want).max()
    peak = np.abs(u1).max()
    check(err <= STRENGTH_TOL * peak * curve.max(), f"keyed strength off the curve by {err:.2e}")
    preview = scenes.play(scene, ob, FRAMES)
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake failed")
    data, _, _ = pc2.read_pc2(ob.overtone.cache_file)
    ob.overtone.live_preview = False
    baked = scenes.play(scene, ob, FRAMES)
    diff = np.abs(baked - preview).max()
    check(diff <= CACHE_TOL, f"the bake differs from the keyed preview by {diff:.2e}")
    print(f"    keyed strength: off the curve by {err:.1e} (curve {curve.min():.2f}..{curve.max():.2f}), "
          f"bake vs preview {diff:.1e}")


def test_damping_changes_the_motion_without_a_rebind_and_is_keyframable():
    scene, ob, _ = tube_scene("damping")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    frames = range(1, 61)
    u_default = play_u(scene, ob, frames)
    s = session.get(ob)
    files = sidecar_state(ob)
    ob.overtone.damping = 1.0
    u_heavy = play_u(scene, ob, frames)
    check(session.get(ob) is s, "changing the damping rebuilt the session")
    check(sidecar_state(ob) == files, "changing the damping touched the sidecar")
    # After the rig stops (frame 30), heavier damping leaves less motion.
    tail = slice(35, 60)
    a, b = np.abs(u_default[tail]).max(), np.abs(u_heavy[tail]).max()
    zeta = properties.OvertoneSettings.bl_rna.properties["damping"].default
    check(b < 0.8 * a, f"damping 1 left {b:.3e} of motion after the stop, damping {zeta} {a:.3e}")
    # A keyframed damping (the default until frame 30, 1.0 from frame 31) follows the curve:
    # equal to the default run up to frame 30, different after.
    ob.overtone.damping = zeta
    ob.overtone.keyframe_insert("damping", frame=30)
    ob.overtone.damping = 1.0
    ob.overtone.keyframe_insert("damping", frame=31)
    for kp in ob.animation_data.action.fcurves.find('overtone.damping').keyframe_points:
        kp.interpolation = 'CONSTANT'
    u_keyed = play_u(scene, ob, frames)
    before = np.abs(u_keyed[:30] - u_default[:30]).max()
    after = np.abs(u_keyed[35:] - u_default[35:]).max()
    check(before <= 1e-12 * np.abs(u_default).max(), f"keyed damping changed frames before its key ({before:.2e})")
    check(after > 1e-2 * a, f"keyed damping did not change the motion after its key ({after:.2e})")
    check(session.get(ob) is s and sidecar_state(ob) == files, "keyed damping rebuilt")
    # The session hands the deformer a copy of the bind's settings with the animated values: a
    # change of any other setting that way is refused (it needs a rebind), nothing changed.
    bad = native.Settings.from_buffer_copy(s.settings)
    bad.youngs_modulus *= 2.0
    try:
        s.deformer.set_controls(bad)
        raise AssertionError("set_controls accepted a new Young's modulus")
    except native.NativeError as e:
        check(e.kind == native.ErrorKind.INVALID_SETTING, f"refused as {e.kind!r}: {e}")
    # A setting that rebuilds the session but not the precompute keeps the same sidecar file.
    ob.overtone.use_substeps = True
    ob.overtone.substeps = 3
    play_u(scene, ob, range(1, 4))
    s2 = session.get(ob)
    check(s2 is not s, "changing the substeps kept the old session")
    check(set(sidecar_state(ob)) == set(files), "changing the substeps made a new sidecar")
    check(s2.deformer.cache_state() == native.CacheState.LOADED, f"cache status {s2.deformer.cache_status()}")
    print(f"    damping: motion after the stop {a:.4f} ({zeta:g}) vs {b:.4f} (1.0); keyed: before {before:.1e}, "
          f"after {after:.4f}; sidecar untouched")


def test_motion_presets_set_the_motion_and_save_new_ones():
    """The Motion sub-panel's presets, as Cloth's: the bundled ones are installed, applying one
    sets the motion settings (a softer preset moves the body more), *+* saves the current values
    as a new preset that applies back, and a user's edit of a bundled file survives a restart."""
    scene, ob, _ = tube_scene("presets")
    bpy.context.view_layer.objects.active = ob
    folders = bpy.utils.preset_paths(presets.SUBDIR)
    found = {f for d in folders for f in os.listdir(d)}
    wanted = {bpy.path.clean_name(n) + ".py" for n in presets.BUNDLED}
    check(wanted <= found, f"bundled presets missing: {sorted(wanted - found)} in {folders}")
    path = {f: os.path.join(d, f) for d in folders for f in os.listdir(d)}

    def apply(name):
        check(bpy.ops.script.execute_preset(filepath=path[bpy.path.clean_name(name) + ".py"],
                                            menu_idname="OVERTONE_MT_motion_presets") == {'FINISHED'},
              f"preset {name} did not apply")

    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    peaks = {}
    for name in ("Soft Belly", "Firm Muscle"):
        apply(name)
        p = ob.overtone
        got = tuple(getattr(p, v) for v in presets.VALUES)
        check(all(abs(a - b) < 1e-6 for a, b in zip(got, presets.BUNDLED[name])), f"{name}: {got}")
        peaks[name] = np.abs(play_u(scene, ob, range(1, 41))).max()
    check(peaks["Soft Belly"] > 1.5 * peaks["Firm Muscle"],
          f"the soft preset should move the tube more than the firm one: {peaks}")
    # A user preset keeps the current values and applies them back.
    ob.overtone.frequency, ob.overtone.damping, ob.overtone.strength = 6.5, 0.2, 0.75
    for d in bpy.utils.preset_paths(presets.SUBDIR):  # left by an interrupted run
        if os.path.exists(os.path.join(d, "My_Jiggle.py")):
            os.remove(os.path.join(d, "My_Jiggle.py"))
    check(bpy.ops.object.overtone_motion_preset_add(name="My Jiggle") == {'FINISHED'}, "preset add failed")
    mine = [os.path.join(d, "My_Jiggle.py") for d in bpy.utils.preset_paths(presets.SUBDIR)
            if os.path.exists(os.path.join(d, "My_Jiggle.py"))]
    check(len(mine) == 1, f"the new preset file: {mine}")
    path["My_Jiggle.py"] = mine[0]
    apply("Default")
    check(abs(ob.overtone.frequency - 5.0) < 1e-6 and abs(ob.overtone.damping - 0.1) < 1e-6, "Default did not apply")
    apply("My Jiggle")
    check(abs(ob.overtone.frequency - 6.5) < 1e-6 and abs(ob.overtone.damping - 0.2) < 1e-6
          and abs(ob.overtone.strength - 0.75) < 1e-6, "the saved preset did not apply back")
    os.remove(mine[0])
    # A bundled preset the user edited is kept when the add-on registers again.
    soft = path["Soft_Belly.py"]
    original = open(soft).read()
    try:
        with open(soft, "a") as f:
            f.write("props.damping = 0.2\n")
        edited = open(soft).read()
        presets.install_bundled()
        check(open(soft).read() == edited, "registering overwrote a user's edit of a bundled preset")
    finally:
        with open(soft, "w") as f:
            f.write(original)
    print(f"    presets: peak |u| Soft Belly {peaks['Soft Belly']:.4f} vs Firm Muscle {peaks['Firm Muscle']:.4f}; "
          "a saved preset applies back")

def test_stiffness_group_painted_stiffer_reduces_the_motion_there():
    scene, ob, _ = tube_scene("stiff")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    z = np.array([v.co.z for v in ob.data.vertices])
    region = z > 2.0
    plain = play_u(scene, ob)
    key_plain = session.get(ob).sidecar
    vg = ob.vertex_groups.new(name="stiff")
    vg.add([int(v) for v in np.nonzero(region)[0]], 1.0, 'REPLACE')
    ob.overtone.stiffness_group = "stiff"
    ob.overtone.stiffness_range = 10.0
    stiff = play_u(scene, ob)
    check(session.get(ob).sidecar != key_plain, "painting the stiffness did not change the sidecar key")
    a = np.linalg.norm(plain[:, region], axis=2).max()
    b = np.linalg.norm(stiff[:, region], axis=2).max()
    check(b < 0.7 * a, f"10x stiffness left {b:.4f} of {a:.4f} secondary motion in the painted region")
    print(f"    stiffness group 10x on z > 2: peak there {a:.4f} -> {b:.4f} ({b / a:.2f})")


def test_max_displacement_limits_the_largest_displacement_shown():
    """Max Displacement reaches the library from Blender: with the tube's swing made strong
    (strength 3), the largest world displacement the session computed stays within the limit
    times the body's bounding-box diagonal, the limit chosen below the unlimited peak (which
    exceeds it); each frame is the unlimited one scaled as a whole (the simulation unchanged)."""
    scene, ob, _ = tube_scene("maxdisp")
    ob.overtone.strength = 3.0
    check(not ob.overtone.use_max_displacement, "Max Displacement is on by default")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    free = play_u(scene, ob)
    diag = session.get(ob).binding.diagonal
    per_frame = np.linalg.norm(free, axis=2).max(axis=1)
    peak = per_frame.max()
    check(peak > 1e-3 * diag, f"no secondary motion ({peak:.2e} of a {diag:.3f} diagonal)")
    ob.overtone.use_max_displacement = True
    ob.overtone.max_displacement = 0.5 * peak / diag
    limit = ob.overtone.max_displacement * diag  # the value as stored (float32), in world units
    check(peak > limit, f"the unlimited peak {peak:.4f} does not exceed the limit {limit:.4f}")
    limited = play_u(scene, ob)
    s = session.get(ob)
    check(s.settings.use_max_displacement and s.settings.max_displacement == ob.overtone.max_displacement,
          "the session was not bound with the limit")
    largest = np.linalg.norm(limited, axis=2).max()
    check(largest <= limit * (1.0 + 1e-9), f"largest displacement {largest:.6f} > limit {limit:.6f}")
    check(largest >= 0.999 * limit, f"the limit {limit:.4f} was never reached ({largest:.4f})")
    scale = np.minimum(1.0, limit / np.maximum(per_frame, 1e-300))
    off = np.abs(limited - free * scale[:, None, None]).max()
    check(off <= 1e-6 * peak, f"the limited frames are not the free ones scaled ({off:.2e})")
    ob.overtone.use_max_displacement = False
    again = np.linalg.norm(play_u(scene, ob), axis=2).max()
    check(again > limit and abs(again - peak) <= 1e-6 * peak, f"switched off, the peak is {again:.4f}, not {peak:.4f}")
    print(f"    max displacement: peak {peak / diag:.4f} of the diagonal unlimited, limit {limit / diag:.4f}, "
          f"largest shown {largest / diag:.4f}; frames {off:.1e} off the scaled free ones")


if __name__ == "__main__":
    runner.main(globals())
