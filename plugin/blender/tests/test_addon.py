"""Headless Blender tests of the Overtone add-on (run by scripts/test_blender.sh under a timeout).

Each test builds its scene from scratch; the process ends with ``os._exit`` after unregistering
the add-on (bpy 4.5 can hang at interpreter exit otherwise)."""

import os
import sys
import tempfile

sys.path.insert(0, os.environ["OVERTONE_ADDON_DIR"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import overtone  # noqa: E402
import runner  # noqa: E402
import scenes  # noqa: E402
from overtone import native, pc2, properties, session, settings_table, shape_key  # noqa: E402

TMP = tempfile.mkdtemp(prefix="overtone-blender-")
# The library's residual is relative (|Jᵀ M D u| over |Jᵀ M D| |u|); the contract is 1e-8.
RESIDUAL_TOL = 1e-8
# The baked cache (float32 PC2) against the live preview (float32 shape key through the modifier).
CACHE_TOL = 1e-5


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def sidecar_key(path):
    """The blake3 key in a sidecar's header (layout in rust/overtone/src/cache/sidecar.rs)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    check(head[:8] == b"OVTCACHE", f"{path} is not a sidecar")
    vlen = int.from_bytes(head[12:16], "little")
    return head[16 + vlen:48 + vlen]


def tube_scene(name="tube", **tube):
    session.drop_all()
    scene = scenes.empty_scene()
    ob, rig = scenes.rigged_tube(**tube)
    ob.overtone.sidecar = os.path.join(TMP, f"{name}.ovt")
    ob.overtone.cache_file = os.path.join(TMP, f"{name}.pc2")
    return scene, ob, rig


def expect_error(op, needle):
    """Runs ``op`` and checks that Blender reported an error containing ``needle``."""
    try:
        op()
    except RuntimeError as e:
        check(needle in str(e), f"error message {str(e)!r} lacks {needle!r}")
        return str(e)
    raise AssertionError(f"expected an error containing {needle!r}, the operator succeeded")


def property_default(name):
    """The default of an ``OvertoneSettings`` property as the library's ``Settings`` holds it (an
    enum as its item's index)."""
    p = properties.OvertoneSettings.bl_rna.properties[name]
    if p.type == 'ENUM':
        return [e.identifier for e in p.enum_items].index(p.default)
    return p.default


def _as_stored(value, prop_type):
    """A library value as Blender stores it: a float property is float32."""
    return float(np.float32(value)) if prop_type == 'FLOAT' else value


def test_defaults_match_the_library():
    """Every property built from the settings table (and an optional setting's use_ switch) has
    the library's default, and a fresh object's native settings are the library's defaults but
    for the scene's frame rate and gravity."""
    s = native.default_settings()
    rna = properties.OvertoneSettings.bl_rna.properties
    host = {row["name"] for row in settings_table.SETTINGS if row["group"] == "HOST"}
    check(host == {"fps", "gravity"}, f"HOST settings {host}: native_settings fills only fps and gravity")
    names = [n for row in properties.ROWS for n in properties.property_names(row)]
    fields = [f for f, _ in native.Settings._fields_ if f not in host]
    check(names == fields, f"properties {names} are not the library's settings {fields}")
    for name in names:
        want = _as_stored(getattr(s, name), rna[name].type)
        got = property_default(name)
        check(got == want, f"{name}: the property's default is {got!r}, the library's {want!r}")
        check(rna[name].type != 'BOOLEAN' or isinstance(getattr(s, name), bool), f"{name} is not a bool")
    check(not any(getattr(s, f"use_{row['name']}") for row in properties.ROWS
                  if row["optional"] and not row["default_set"]), "an optional setting unset in the table is set")
    check(s.use_cut_distance and s.use_frequency and not s.use_max_displacement and not s.use_modes
          and not s.use_lattice_resolution and not s.use_substeps, "the library's optional defaults changed")
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(rings=5, segments=6)
    mine = session.native_settings(ob.overtone, scene)
    for name in fields:
        want = _as_stored(getattr(s, name), rna[name].type)
        check(getattr(mine, name) == want, f"native_settings: {name} is {getattr(mine, name)!r}, the default {want!r}")
    check(mine.fps == 24.0 and list(mine.gravity) == [0.0, 0.0, 0.0], "fps and gravity are not the scene's")
    print(f"    defaults: {len(names)} properties agree with the library")


def test_only_the_animatable_settings_are_keyframable():
    """Damping and strength (the animatable rows, honoured per frame) can be keyframed; every
    other setting of the table, and its use_ switch, cannot (an F-curve on it would be ignored)."""
    session.drop_all()
    scenes.empty_scene()
    ob, _ = scenes.rigged_tube(rings=5, segments=6)
    rna = properties.OvertoneSettings.bl_rna.properties
    animatable = set(native.ANIMATABLE_FIELDS)
    check(animatable == {"damping", "strength"}, f"animatable settings {animatable}")
    for row in properties.ROWS:
        for name in properties.property_names(row):
            check(rna[name].is_animatable == (row["name"] in animatable),
                  f"{name}: animatable {rna[name].is_animatable}")
    check(ob.overtone.keyframe_insert("damping", frame=1), "damping could not be keyframed")
    check(ob.overtone.keyframe_insert("strength", frame=1), "strength could not be keyframed")
    for name in ("youngs_modulus", "solver", "use_substeps", "substeps", "max_displacement"):
        try:
            inserted = ob.overtone.keyframe_insert(name, frame=1)
        except (TypeError, RuntimeError) as e:
            check("animat" in str(e), f"{name}: unexpected error {e}")
            continue
        raise AssertionError(f"{name} was keyframed ({inserted})")
    fcurves = {fc.data_path for fc in ob.animation_data.action.fcurves}
    check(fcurves == {"overtone.damping", "overtone.strength"}, f"F-curves {fcurves}")


def _preview_rig_and_bake(scene, ob, frames):
    """Plays the live preview, the plain rig (preview off) and the baked cache over ``frames``."""
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    preview = scenes.play(scene, ob, frames)
    residual = session.get(ob).max_residual
    ob.overtone.live_preview = False
    rig_only = scenes.play(scene, ob, frames)
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake failed")
    baked = scenes.play(scene, ob, frames)
    return preview, rig_only, baked, residual


class _Layout:
    """Stands in for a UI layout (there is no window headless): records and checks every call."""

    def __init__(self, calls, parent=None):
        self.calls = calls
        self.parent = parent
        self.enabled = True
        self.active = True
        # Property name -> whether it was drawn greyed out (this layout or a parent inactive).
        self.greyed = {} if parent is None else parent.greyed
        # Property name -> whether it was drawn not editable (this layout or a parent disabled).
        self.locked = {} if parent is None else parent.locked

    def column(self, **_):
        return _Layout(self.calls, self)

    def inactive(self):
        return not self.active or (self.parent is not None and self.parent.inactive())

    def disabled(self):
        return not self.enabled or (self.parent is not None and self.parent.disabled())

    row = column
    box = column

    def separator(self, **_):
        pass

    def prop_decorator(self, data, name, **_):
        check(name in data.bl_rna.properties, f"panel decorates a missing property {name}")

    def label(self, text="", icon='NONE'):
        check(icon in bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items, icon)
        self.calls.append(("label", text))

    def prop(self, data, name, **_):
        check(name in data.bl_rna.properties, f"panel draws a missing property {name}")
        self.calls.append(("prop", name))
        self.greyed[name] = self.inactive()
        self.locked[name] = self.disabled()

    def prop_search(self, data, name, search_data, search_name, **_):
        check(name in data.bl_rna.properties and search_name in search_data.bl_rna.properties, name)
        self.calls.append(("prop", name))

    def popover(self, panel, icon='NONE', text="", **_):
        check(hasattr(bpy.types, panel), f"panel shows a popover of an unregistered panel {panel}")
        check(icon in bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items, icon)
        self.calls.append(("popover", panel))

    def operator(self, idname, text="", icon='NONE'):
        module, op = idname.split(".")
        check(hasattr(getattr(bpy.ops, module), op), f"panel shows a missing operator {idname}")
        check(icon in bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items, icon)
        self.calls.append(("operator", idname))


def test_panel_draws_every_setting():
    """Every setting of the table is drawn, in sub-panels as Cloth's are (the Solver one closed by
    default), also before the first Add; the draw tree is printed."""
    from overtone import panel
    scene, ob, _ = tube_scene("panel")

    class Ctx:
        object = ob
        scene = bpy.context.scene

    def draw():
        calls = []
        layout = _Layout(calls)
        for cls in panel.classes:
            if cls.poll(Ctx()):
                calls.append(("panel", cls.bl_label))
                if hasattr(cls, "draw_header_preset"):
                    cls.draw_header_preset(type("P", (), {"layout": layout})(), Ctx())
                cls.draw(type("P", (), {"layout": layout})(), Ctx())
        return calls, layout.greyed

    labels = [c.bl_label for c in panel.classes]
    check(labels == ["Overtone", "Motion", "Material", "Weights", "Cache", "Solver"], f"sub-panels {labels}")
    closed = [c.bl_label for c in panel.classes if 'DEFAULT_CLOSED' in getattr(c, "bl_options", set())]
    check(closed == ["Solver"], f"closed by default: {closed}")
    ob.overtone.enabled = False
    before, _ = draw()
    check({"damping", "youngs_modulus", "solver"} <= {n for k, n in before if k == "prop"},
          "settings are hidden before the first Add")
    for enabled in (False, True):
        ob.overtone.enabled = enabled
        calls, _ = draw()
        if enabled:
            shown = {name for kind, name in calls if kind == "prop"}
            wanted = {"youngs_modulus", "density", "solver", "modes", "clusters", "lattice_resolution",
                      "leak_group", "sidecar", "cache_file", "live_preview", "poisson_ratio",
                      "stiffness_group", "damping", "strength", "frequency", "time_scale", "preroll",
                      "use_gravity", "cut_distance", "rest", "integrator", "substeps", "max_displacement",
                      "use_frequency", "use_cut_distance", "use_max_displacement", "use_modes",
                      "use_lattice_resolution", "use_substeps"}
            # Every setting of the table, and the use_ switch of each optional one.
            wanted |= {n for row in properties.ROWS for n in properties.property_names(row)}
            check(wanted <= shown, f"panel lacks {wanted - shown}")
            optional_names = {row["name"] for row in properties.ROWS if row["optional"]}
            tree, current = [], None
            for kind, name in calls:
                if kind == "panel":
                    current = [name]
                    tree.append(current)
                elif kind == "prop" and not (name.startswith("use_") and name[4:] in optional_names):
                    current.append(name)
            print("    panel: " + " | ".join(f"{t[0]}: {', '.join(t[1:])}" for t in tree))
            check(("operator", "object.overtone_bake") in calls, "no bake button")
            # The Motion sub-panel's header has the presets button, as Cloth's.
            motion = calls.index(("panel", "Motion"))
            check(calls[motion + 1] == ("popover", "OVERTONE_PT_motion_presets"), "no motion presets button")
            # An optional setting: its use_ checkbox right before the value, the value greyed out
            # while the switch is off and not once it is on (the switch itself never greyed).
            optional = [row["name"] for row in properties.ROWS if row["optional"]]
            for name in optional:
                i = calls.index(("prop", f"use_{name}"))
                check(calls[i + 1] == ("prop", name), f"{name} is not drawn beside its checkbox")
            for use in (False, True):
                for name in optional:
                    setattr(ob.overtone, f"use_{name}", use)
                _, greyed = draw()
                for name in optional:
                    check(greyed[name] == (not use), f"{name} greyed {greyed[name]} with use_{name} {use}")
                    check(not greyed[f"use_{name}"], f"use_{name} greyed")
                # With a frequency set, Young's modulus is only rescaled: shown greyed.
                check(greyed["youngs_modulus"] == use, f"Young's modulus greyed {greyed['youngs_modulus']}")
        else:
            check(calls[1] == ("operator", "object.overtone_add"), "no add button")
    ob.overtone.enabled = False


def test_tube_preview_bake_and_contract():
    scene, ob, _ = tube_scene()
    frames = range(1, 61)
    preview, rig_only, baked, residual = _preview_rig_and_bake(scene, ob, frames)
    check(residual <= RESIDUAL_TOL, f"rig residual {residual:.2e} > {RESIDUAL_TOL}")
    secondary = np.abs(preview - rig_only).max()
    check(secondary > 1e-3, f"no secondary motion (max {secondary:.2e})")
    check(np.abs(preview[0] - rig_only[0]).max() < 1e-6, "the start frame is not the rig pose")
    diff = np.abs(baked - preview).max()
    check(diff <= CACHE_TOL, f"baked cache differs from the live preview by {diff:.2e}")
    umask = os.umask(0)
    os.umask(umask)
    mode = os.stat(ob.overtone.cache_file).st_mode & 0o777
    check(mode == 0o666 & ~umask, f"the cache has mode {mode:o}, not the user's default {0o666 & ~umask:o}")
    data, start, rate = pc2.read_pc2(ob.overtone.cache_file)
    check(data.shape == (60, len(ob.data.vertices), 3) and start == 1.0 and rate == 1.0, "PC2 layout")
    mods = [m.type for m in ob.modifiers]
    check(mods == ['ARMATURE', 'MESH_CACHE'], f"modifier stack {mods}")
    print(f"    tube: secondary max {secondary:.4f}, cache vs preview {diff:.1e}, residual {residual:.1e}")


def test_scrubbing_and_looping_show_cached_frames_and_edits_make_the_cache_outdated():
    """The live preview keeps the frames it played, like Cloth's point cache: a rewind, a jump
    back, a loop and the start frame show cached frames (no step, equal to the first playback to
    1e-6); a jump past the run's end simulates on from its end (10 steps for 10 frames, the same
    frame as a playback from the start); a keyed setting changed after playing makes the cache
    outdated: the next frame simulates again from the start and shows the new motion."""
    scene, ob, rig = tube_scene("replay")
    bpy.ops.object.overtone_add()
    sequential = scenes.play(scene, ob, range(1, 41))
    s = session.get(ob)
    steps = s.steps
    check(steps == 39, f"{steps} steps for frames 2-40")
    check(s.cache_info().startswith("Cache: frames 1-40"), s.cache_info())
    for f in [25, 1, 40, 12]:
        scene.frame_set(f)
        check(np.abs(scenes.evaluated_positions(ob) - sequential[f - 1]).max() <= 1e-6, f"cached frame {f} differs")
    for _ in range(5):
        for f in range(30, 41):
            scene.frame_set(f)
    scene.frame_set(33)
    check(np.abs(scenes.evaluated_positions(ob) - sequential[32]).max() <= 1e-6, "looped frame 33 differs")
    check(s.steps == steps, f"scrubbing and looping simulated {s.steps - steps} frames")
    # Past the end of the played run: on from frame 40, not from the start.
    scene.frame_set(50)
    check(s.steps == steps + 10, f"the jump 40 -> 50 took {s.steps - steps} steps")
    jumped = scenes.evaluated_positions(ob)
    s.clear_cache()
    s.last_frame = None
    scene.frame_set(50)
    check(np.abs(scenes.evaluated_positions(ob) - jumped).max() <= 1e-6, "continuing the run differs from a replay")
    # A setting changed after playing: the cached frame 30 no longer matches.
    steps = s.steps
    ob.overtone.damping = 0.9
    scene.frame_set(30)
    check(s.steps - steps == 29, f"an outdated cache replayed {s.steps - steps} frames, not 29")
    changed = scenes.evaluated_positions(ob)
    check(np.abs(changed - sequential[29]).max() > 1e-4, "the new damping did not change frame 30")
    check(not s.outdated and s.cache_info().startswith("Cache: frames 1-30"), s.cache_info())
    print(f"    cache: {s.cache_info()}; frame 30 moved {np.abs(changed - sequential[29]).max():.4f} with damping 0.9")


def test_a_far_jump_catches_up_off_the_ui_thread_and_esc_keeps_what_was_simulated():
    """In the UI (the frame handler as it runs there: binds already done, no blocking replays), a
    jump 36 frames past the played run does not simulate before the frame is shown: the plain rig
    shows, the status says so, and a catch-up job steps the frames on a worker thread while each
    tick leaves the timeline on the user's frame. Done, the frame equals a sequential playback
    (1e-6) and the run's frames are cached; stopped with Esc part-way, the frames simulated so far
    stay cached (equal to the playback), the target shows the plain rig, and the same catch-up is
    not started again at that frame (another jump starts one)."""
    from overtone import catch_up, live

    scene, ob, rig = tube_scene("catchup")
    bpy.ops.object.overtone_add()
    sequential = scenes.play(scene, ob, range(1, 61))
    s = session.get(ob)
    started = []
    blocking, start = live.blocking_binds, catch_up.start
    live.blocking_binds = lambda: False
    catch_up.start = started.append
    try:
        s.clear_cache()
        scene.frame_set(1)  # back to rest at the start frame, the cache holding frame 1 only
        scene.frame_set(24)
        check(len(started) == 1 and s.catching_up is started[0], f"no catch-up started ({started})")
        job = started[0]
        check(ob.overtone.status.startswith("catching up"), ob.overtone.status)
        kb = shape_key.get(ob)
        shown = np.array([v.co for v in kb.data]) - np.array([v.co for v in ob.data.shape_keys.reference_key.data])
        check(np.abs(shown).max() == 0.0, "the plain rig must show while catching up")
        modal = catch_up.ModalCatchUp(job, budget=1e-4)
        answers = []
        while len(answers) < 5000:
            answers.append(modal.handle('TIMER'))
            check(scene.frame_current == 24, f"a tick left the timeline on frame {scene.frame_current}")
            if answers[-1] != {'PASS_THROUGH'}:
                break
            job.worker.wait(0.01)
        check(answers[-1] == {'FINISHED'} and len(answers) > 3, f"{len(answers)} ticks, last {answers[-1]}")
        live.after_catch_up(job)
        caught = scenes.evaluated_positions(ob)
        check(np.abs(caught - sequential[23]).max() <= 1e-6, "the caught-up frame differs from a playback")
        check(all(f in s.cache for f in range(1, 25)) and s.last_frame == 24, s.cache_info())
        # Esc part-way: a jump to 60.
        scene.frame_set(60)
        job = started[-1]
        check(len(started) == 2 and job.target == 60, "the second jump started no catch-up")
        modal = catch_up.ModalCatchUp(job, budget=1e-4)
        while job.done < 10:
            modal.handle('TIMER')
            job.worker.wait(0.01)
        check(modal.handle('ESC') == {'CANCELLED'} and s.catching_up is None, "Esc did not stop the catch-up")
        live.after_catch_up(job)
        reached = s.last_frame
        check(24 < reached < 60, f"stopped at {reached}")
        shown = np.array([v.co for v in kb.data]) - np.array([v.co for v in ob.data.shape_keys.reference_key.data])
        check(np.abs(shown).max() == 0.0, "frame 60 was not reached: the plain rig must show")
        check("catch-up stopped" in ob.overtone.status, ob.overtone.status)
        scene.frame_set(60)
        check(len(started) == 2, "the stopped catch-up started again at the same frame")
        scene.frame_set(reached - 3)
        check(np.abs(scenes.evaluated_positions(ob) - sequential[reached - 4]).max() <= 1e-6,
              "a frame the stopped catch-up simulated differs from the playback")
        scene.frame_set(reached + 20)
        check(len(started) == 3, "a jump to another frame after Esc started no catch-up")
        started[-1].cancel()
    finally:
        live.blocking_binds, catch_up.start = blocking, start
    print(f"    caught up 2-24 in {len(answers)} ticks (UI thread {job.main_seconds * 1e3:.1f} ms for the last job); "
          f"Esc kept frames up to {reached}")


def test_leak_group_changes_the_result_and_the_sidecar_key():
    scene, ob, _ = tube_scene("leak")
    frames = range(1, 41)
    bpy.ops.object.overtone_add()
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "first bake failed")
    first = scenes.play(scene, ob, frames)
    key_first = sidecar_key(session.get(ob).sidecar)
    z = np.array([v.co.z for v in ob.data.vertices])
    vg = ob.vertex_groups.new(name="leak")
    for v in np.nonzero(z > 2.0)[0]:
        vg.add([int(v)], 1.0, 'REPLACE')
    ob.overtone.leak_group = "leak"
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "second bake failed")
    second = scenes.play(scene, ob, frames)
    key_second = sidecar_key(session.get(ob).sidecar)
    check(key_first != key_second, "painting the leak group did not change the sidecar key")
    change = np.abs(second - first).max()
    check(change > 1e-4, f"painting the leak group changed the bake by only {change:.2e}")
    print(f"    leak group: bake changed by {change:.4f}, key changed")


def test_sidecar_is_reused_and_corrupt_sidecar_rebuilt_with_a_warning():
    """The state is what the add-on branches on; the status line shows the library's text."""
    scene, ob, _ = tube_scene("reuse")
    bpy.ops.object.overtone_add()
    check("rebuilt" in ob.overtone.status, ob.overtone.status)
    check(session.get(ob).deformer.cache_state() == native.CacheState.BUILT, ob.overtone.status)
    bpy.ops.object.overtone_add()
    check("loaded from sidecar" in ob.overtone.status, ob.overtone.status)
    check(session.get(ob).deformer.cache_state() == native.CacheState.LOADED, ob.overtone.status)
    with open(session.get(ob).sidecar, "r+b") as f:
        f.seek(200)
        f.write(b"\xff" * 64)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "a corrupt sidecar stopped the add")
    check("rebuilt" in ob.overtone.status and "corrupt" in ob.overtone.status, ob.overtone.status)
    check(session.get(ob).deformer.cache_state() == native.CacheState.UNUSABLE, ob.overtone.status)


def test_error_paths_report_and_leave_the_scene_intact():
    session.drop_all()
    scene = scenes.empty_scene()
    # 1. No armature.
    bpy.ops.mesh.primitive_uv_sphere_add()
    expect_error(lambda: bpy.ops.object.overtone_add(), "no Armature modifier")
    check(not bpy.context.active_object.overtone.enabled, "a failed add left Overtone enabled")
    check(bpy.context.active_object.data.shape_keys is None, "a failed add left a shape key")
    # 2. An Armature modifier Overtone cannot mirror (dual quaternions), then an unusable sidecar
    #    path (a folder).
    scene, ob, _ = tube_scene("errors")
    ob.modifiers["Armature"].use_deform_preserve_volume = True
    expect_error(lambda: bpy.ops.object.overtone_add(), "Preserve Volume")
    ob.modifiers["Armature"].use_deform_preserve_volume = False
    ob.shape_key_add(name="Basis", from_mix=False)
    ob.shape_key_add(name="Key 1", from_mix=False)
    ob.data.shape_keys.use_relative = False
    expect_error(lambda: bpy.ops.object.overtone_add(), "absolute shape keys")
    ob.shape_key_clear()
    ob.overtone.sidecar = TMP
    expect_error(lambda: bpy.ops.object.overtone_add(), "is a folder")
    check(ob.data.shape_keys is None and not ob.overtone.enabled, "a failed add changed the object")
    # 3. Vertex count changed after add: bake refuses, the live preview reports and shows the rig.
    ob.overtone.sidecar = os.path.join(TMP, "errors.ovt")
    bpy.ops.object.overtone_add()
    scenes.play(scene, ob, range(1, 10))
    ob.shape_key_clear()
    ob.overtone.created_basis = False
    import bmesh
    bm = bmesh.new()
    bm.from_mesh(ob.data)
    bm.verts.new((5.0, 5.0, 5.0))
    bm.to_mesh(ob.data)
    bm.free()
    ob.data.update()
    expect_error(lambda: bpy.ops.object.overtone_bake(), "vertices but had")
    scene.frame_set(12)
    check(ob.overtone.status.startswith("error") and "vertices" in ob.overtone.status, ob.overtone.status)
    scenes.evaluated_positions(ob)
    # 4. Bake to a //-relative path in an unsaved file: the cache goes to the temporary folder
    #    with a warning (test_unsaved_bake_moves_next_to_the_blend_on_save covers the move).
    scene, ob, _ = tube_scene("unsaved")
    bpy.ops.object.overtone_add()
    # 5. A panic inside the native library comes back as an error and the deformer keeps working.
    s = session.get(ob)
    try:
        s.deformer.debug_panic()
        raise AssertionError("the forced panic was not reported")
    except native.NativeError as e:
        check("internal error" in str(e), str(e))
    scenes.play(scene, ob, range(1, 6))
    check(session.get(ob) is s and s.last_frame == 5, "the deformer stopped after a contained panic")
    # 6. Refused settings: the library's message reaches the TD, the bound state is kept.
    ob.overtone.use_lattice_resolution = True
    ob.overtone.lattice_resolution = 2
    ob.overtone.clusters = 100000
    expect_error(lambda: bpy.ops.object.overtone_add(), "clusters")
    check(ob.overtone.enabled and ob.overtone.bound_vertex_count == len(ob.data.vertices),
          "a refused rebind changed the bound state")


def test_shape_keys_are_rig_columns_too():
    """A face-rig-like setup: the bones hold still while two animated shape keys (a bulge and a
    bend) drive the tube. Overtone adds secondary motion that is orthogonal to the shape keys
    (the library's residual covers them) and the bake still equals the preview."""
    scene, ob, rig = tube_scene("keys")
    rig.animation_data_clear()
    ob.shape_key_add(name="Basis", from_mix=False)
    co = np.array([v.co[:] for v in ob.data.vertices])
    r = np.hypot(co[:, 0], co[:, 1])
    bulge = ob.shape_key_add(name="Bulge", from_mix=False)
    bend = ob.shape_key_add(name="Bend", from_mix=False)
    mid = (co[:, 2] > 1.0) & (co[:, 2] < 2.0) & (r > 1e-6)
    b = co.copy()
    s = 0.15 * np.sin(np.pi * (co[:, 2] - 1.0))
    b[mid, 0] += s[mid] * co[mid, 0] / r[mid]
    b[mid, 1] += s[mid] * co[mid, 1] / r[mid]
    bulge.data.foreach_set("co", b.astype(np.float32).ravel())
    t = np.clip((co[:, 2] - 1.5) / 1.5, 0.0, None)
    c = co.copy()
    c[:, 0] += 0.5 * t * t
    bend.data.foreach_set("co", c.astype(np.float32).ravel())
    for f, (vb, vn) in ((1, (0, 0)), (8, (1, 0.3)), (16, (0, 1)), (24, (0.6, 0)), (30, (0, 0))):
        bulge.value, bend.value = vb, vn
        bulge.keyframe_insert("value", frame=f)
        bend.keyframe_insert("value", frame=f)
    frames = range(1, 41)
    preview, rig_only, baked, residual = _preview_rig_and_bake(scene, ob, frames)
    check([k for _, k in session.get(ob).binding.shape_key_names] == ["Bulge", "Bend"], "the shape keys were not read")
    check(residual <= RESIDUAL_TOL, f"residual against bones and shape keys {residual:.2e}")
    secondary = np.abs(preview - rig_only).max()
    check(secondary > 1e-3, f"the shape keys drive no secondary motion ({secondary:.2e})")
    diff = np.abs(baked - preview).max()
    check(diff <= CACHE_TOL, f"baked cache differs from the preview by {diff:.2e}")
    print(f"    shape keys: secondary max {secondary:.4f}, cache vs preview {diff:.1e}, residual {residual:.1e}")


def test_saved_file_reopens_and_previews_from_the_sidecar():
    scene, ob, _ = tube_scene("saved")
    blend = os.path.join(TMP, "saved.blend")
    ob.overtone.sidecar = ""
    ob.overtone.cache_file = ""
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    bpy.ops.object.overtone_add()
    check(ob.overtone.sidecar == "//overtone/Tube.ovt", f"default sidecar path {ob.overtone.sidecar!r}")
    check(os.path.dirname(session.get(ob).sidecar) == os.path.join(TMP, "overtone")
          and os.path.isfile(session.get(ob).sidecar), "the sidecar is not next to the .blend")
    before = scenes.play(scene, ob, range(1, 21))
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    ob = scene.objects["Tube"]
    check(session.get(ob) is None, "a session survived reopening the file")
    after = scenes.play(scene, ob, range(1, 21))
    check(np.abs(after - before).max() <= 1e-6, "the reopened file previews differently")
    check(session.get(ob).deformer.cache_state() == native.CacheState.LOADED, session.get(ob).deformer.cache_status())
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake with the default // path failed")
    check(os.path.isfile(os.path.join(TMP, "overtone", "Tube.pc2")), "the bake is not next to the .blend")


def test_remove_restores_the_plain_rig():
    scene, ob, _ = tube_scene("remove")
    ob.overtone.live_preview = False
    scene.frame_set(12)
    rig_only = scenes.evaluated_positions(ob)
    bpy.ops.object.overtone_add()
    bpy.ops.object.overtone_bake()
    scene.frame_set(12)
    check(np.abs(scenes.evaluated_positions(ob) - rig_only).max() > 1e-4, "no secondary motion at frame 12")
    check(bpy.ops.object.overtone_remove() == {'FINISHED'}, "remove failed")
    check(ob.data.shape_keys is None, "remove left shape keys")
    check([m.type for m in ob.modifiers] == ['ARMATURE'], "remove left modifiers")
    check(session.get(ob) is None and not ob.overtone.enabled, "remove left runtime state")
    scene.frame_set(13)
    scene.frame_set(12)
    check(np.abs(scenes.evaluated_positions(ob) - rig_only).max() < 1e-6, "the plain rig is not restored")


def test_bake_range_free_bake_bake_all_and_motion_blur():
    """The Cache sub-panel as Cloth's: a bake of the object's own frame range (the cache's first
    sample at its start frame), sub-frames between two samples interpolated (a render's motion
    blur samples them), *Free Bake* removes the cache modifiers and the live preview plays again
    (the file stays), *Bake All* bakes every Overtone body of the scene (the UI's Esc path too,
    through the modal logic: a cancel keeps the bodies baked before)."""
    from overtone import bake, cache_modifier
    scene, ob, rig = tube_scene("range")
    scene.frame_start, scene.frame_end = 1, 24
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    ob.overtone.use_scene_frame_range = False
    ob.overtone.bake_frame_start, ob.overtone.bake_frame_end = 5, 24
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake failed")
    m = cache_modifier.get(ob)
    check(m is not None and m.frame_start == 5.0 and m.interpolation == 'LINEAR', "the range bake's modifier")
    with open(ob.overtone.cache_file, "rb") as f:
        f.seek(28)
        samples = int(np.frombuffer(f.read(4), dtype="<i4")[0])
    check(samples == 20, f"the range 5..24 baked {samples} samples")
    scene.frame_set(12)
    a = scenes.evaluated_positions(ob)
    scene.frame_set(13)
    b = scenes.evaluated_positions(ob)
    scene.frame_set(12, subframe=0.5)
    mid = scenes.evaluated_positions(ob)
    # The rig part of the sub-frame is the armature's own pose there; the cache's is linear.
    err = np.abs(mid - 0.5 * (a + b)).max()
    step = np.abs(b - a).max()
    print(f"    sub-frame 12.5 vs the mean of frames 12 and 13: {err:.2e} (the frames differ by {step:.2e})")
    check(step > 1e-4 and err < 1e-5, f"sub-frame not interpolated: {err:e} of a {step:e} step")
    from overtone import panel

    def locked():
        layout = _Layout([])
        ctx = type("Ctx", (), {"object": ob, "scene": scene})()
        for cls in panel.classes:
            cls.draw(type("P", (), {"layout": layout})(), ctx)
        return layout.locked
    while_baked = locked()
    check(while_baked["damping"] and while_baked["frequency"] and while_baked["solver"]
          and not while_baked["bake_frame_start"], f"locked while baked: {while_baked}")
    path = ob.overtone.cache_file
    check(bpy.ops.object.overtone_free_bake() == {'FINISHED'}, "free bake failed")
    check(not any(locked().values()), "settings stay locked after Free Bake")
    check(not cache_modifier.has_cache(ob) and ob.overtone.live_preview, "free bake left the cache playing")
    check(os.path.exists(path), "free bake deleted the file")
    check(not bpy.ops.object.overtone_free_bake.poll(), "free bake is offered with nothing baked")
    # A second body; Bake All bakes both.
    other, _ = scenes.rigged_tube()
    other.overtone.sidecar = os.path.join(TMP, "range2.ovt")
    other.overtone.cache_file = os.path.join(TMP, "range2.pc2")
    scenes._select_only([other], other)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add of the second body failed")
    check([o.name for o in bake.bodies(scene)] == sorted([ob.name, other.name],
          key=lambda n: list(scene.objects).index(bpy.data.objects[n])), "bodies of the scene")
    check(bpy.ops.object.overtone_bake_all() == {'FINISHED'}, "bake all failed")
    check(cache_modifier.has_cache(ob) and cache_modifier.has_cache(other), "bake all left a body unbaked")
    # The modal path: Esc during the second body keeps the first one's new cache.
    for o in (ob, other):
        cache_modifier.free(o)
    job = bake.ModalBakeAll(scene, bake.bodies(scene), budget=1e-4)
    for _ in range(1000):
        if job.results:
            break
        check('RUNNING_MODAL' in job.handle('TIMER'), f"the modal bake all ended early: {job.failures}")
        if job.current is not None and job.current.job.worker is not None:
            job.current.job.worker.wait(0.01)
    check(len(job.results) == 1 and not job.failures, f"bake all: {job.results} {job.failures}")
    job.handle('TIMER')
    check(job.current is not None and not job.failures, f"the second body's bake did not start: {job.failures}")
    check(job.handle('ESC') == {'CANCELLED'} and job.cancelled, "Esc did not cancel")
    first = bpy.data.objects[job.results[0][0]]
    second = other if first is ob else ob
    check(cache_modifier.has_cache(first) and not cache_modifier.has_cache(second),
          "a cancelled bake all lost the finished body or baked the cancelled one")


def test_current_cache_to_bake_writes_the_played_frames():
    """*Current Cache to Bake* (Cloth's): the frames the live preview played become the bake
    without simulating again (no step taken), and the bake plays what the preview showed; a range
    the cache does not cover is refused with what to do."""
    from overtone import bake, cache_modifier
    scene, ob, _ = tube_scene("cache2bake", rings=41, segments=16)
    ob.overtone.use_lattice_resolution, ob.overtone.lattice_resolution = True, 12
    scene.frame_start, scene.frame_end = 1, 12
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    live = scenes.play(scene, ob, range(1, 13))
    s = session.get(ob)
    steps = s.steps
    check(bpy.ops.object.overtone_cache_to_bake.poll(), "the played range is not offered")
    check(bpy.ops.object.overtone_cache_to_bake() == {'FINISHED'}, "current cache to bake failed")
    check(session.get(ob) is s and s.steps == steps, f"it simulated ({s.steps - steps} steps)")
    check(cache_modifier.get(ob) is not None and not ob.overtone.live_preview, "the bake does not play")
    baked = scenes.play(scene, ob, range(1, 13))
    diag = float(np.linalg.norm(live[0].max(0) - live[0].min(0)))
    err = float(np.abs(baked - live).max()) / diag
    moved = float(np.abs(live - live[0]).max()) / diag
    print(f"    baked from the live cache vs the live preview: {err:.1e} of the diagonal "
          f"(the body moves {moved:.2f} of it)")
    check(err <= 1e-5 and moved > 1e-2, f"the bake differs from the preview by {err:e} of the diagonal")
    check(bpy.ops.object.overtone_free_bake() == {'FINISHED'}, "free bake failed")
    scene.frame_end = 20
    check(not bpy.ops.object.overtone_cache_to_bake.poll(), "a range the cache does not cover is offered")
    try:
        bake.bake(ob, scene, from_cache=True)
        raise AssertionError("an uncovered range was baked from the cache")
    except session.SettingsError as e:
        check("13..20" in str(e) and "play the range" in str(e), str(e))


def shape_key_offsets(ob):
    """The Overtone key's offsets from its reference key (n x 3)."""
    from overtone import shape_key
    kb = shape_key.get(ob)
    n = len(ob.data.vertices)
    co, ref = np.empty(3 * n), np.empty(3 * n)
    kb.data.foreach_get("co", co)
    kb.relative_key.data.foreach_get("co", ref)
    return (co - ref).reshape(n, 3)


def test_editing_the_setup_marks_the_bind_outdated():
    """Issue 30's staleness: painting a weight, Blender's Clean on a leak group (weight-0 vertices
    leave the group) or Preserve Volume after a bind mark the bind outdated — the status says "Outdated — Rebind" and what changed, and the live preview
    shows the plain rig instead of frames simulated from the old setup — while playing (the
    add-on's own shape-key writes) or a group the bind does not read does not; switching the
    edit back or a Rebind makes it live again. The Weights hint counts
    the vertices not in the group."""
    from overtone import panel, setup_check
    scene, ob, _ = tube_scene("stale", rings=41, segments=16)
    leak = ob.vertex_groups.new(name="Leak")
    leak.add(list(range(0, 200)), 0.0, 'REPLACE')
    leak.add(list(range(200, 400)), 1.0, 'REPLACE')
    ob.overtone.leak_group = "Leak"
    ob.overtone.use_lattice_resolution, ob.overtone.lattice_resolution = True, 12  # quick binds
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    scenes.play(scene, ob, range(1, 12))

    def settle():
        """What the timer does once edits pause (headless Blender runs no timers)."""
        setup_check._last_edit[0] -= setup_check.QUIET_SECONDS
        check(setup_check._timer() is None, "the check timer asked to run again")
    settle()
    check(setup_check.check(scene) == [] and not session.get(ob).setup_outdated,
          "playing (the add-on's own shape-key writes) marked the bind outdated")
    s = session.get(ob)
    n = len(ob.data.vertices)
    check(s.painted[ob.name]["leak"] == (400, n), f"painted counts {s.painted}")
    labels = []
    layout = _Layout(labels)
    panel.PHYSICS_PT_overtone_weights.draw(type("P", (), {"layout": layout})(),
                                           type("Ctx", (), {"object": ob, "scene": scene})())
    hint = f"{n - 400} of {n} vertices are not in the group: they keep the default field"
    check(("label", hint) in labels, f"the Weights hint: {labels}")

    def stale(edit, words):
        check(bpy.ops.object.overtone_add() == {'FINISHED'}, "rebind failed")
        scene.frame_set(1)
        scenes.play(scene, ob, range(2, 8))
        moving = np.abs(shape_key_offsets(ob)).max()
        check(moving > 1e-5, "no secondary motion before the edit")
        edit()
        bpy.context.view_layer.update()  # the depsgraph update notes the body
        check(session.body_key(ob) in setup_check._dirty, "the edit was not noticed")
        settle()
        status = ob.overtone.status
        check(session.get(ob).setup_outdated and status.startswith("Outdated — Rebind") and words in status,
              status)
        steps = session.get(ob).steps
        scene.frame_set(8)
        check(np.abs(shape_key_offsets(ob)).max() == 0.0 and session.get(ob).steps == steps,
              "an outdated bind still writes simulated frames")
        print(f"    {words}: {status}")

    stale(lambda: ob.vertex_groups["Bone1"].add([5], 0.123, 'REPLACE'), "weights")
    # Clean: the weight-0 vertices leave the leak group (they would get the default field).
    stale(lambda: leak.remove(list(range(0, 200))), "weights")
    arm_mod = next(m for m in ob.modifiers if m.type == 'ARMATURE')
    stale(lambda: setattr(arm_mod, "use_deform_preserve_volume", True), "modifiers")
    # Switched back: the setup matches the bind again, and the body is live without a Rebind.
    arm_mod.use_deform_preserve_volume = False
    bpy.context.view_layer.update()
    settle()
    check(not session.get(ob).setup_outdated and ob.overtone.status.startswith("live"),
          f"switched back, still {ob.overtone.status!r}")
    # A group the bind does not read (a Mask modifier's) is not part of the setup.
    ob.vertex_groups.new(name="MaskOnly").add([1, 2, 3], 1.0, 'REPLACE')
    check(setup_check.check(scene) == [] and not session.get(ob).setup_outdated,
          "a group the bind does not read marked it outdated")
    ob.overtone.use_gravity = True
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "rebind after the edits failed")
    scene.frame_set(1)
    scenes.play(scene, ob, range(2, 8))
    check(not session.get(ob).setup_outdated and np.abs(shape_key_offsets(ob)).max() > 1e-5,
          "Rebind did not bring the live preview back")
    # The scene's gravity (compared every frame): outdated while changed, live again when back.
    g = tuple(scene.gravity)
    scene.gravity = (0.0, 0.0, -4.0)
    scene.frame_set(8)
    check(session.get(ob).setup_outdated and "gravity" in ob.overtone.status, ob.overtone.status)
    scene.gravity = g
    scene.frame_set(9)
    check(not session.get(ob).setup_outdated and np.abs(shape_key_offsets(ob)).max() > 0.0,
          f"gravity switched back, still {ob.overtone.status!r}")


def test_remove_save_and_render_leave_no_live_offsets_behind():
    """Data traps of issue 30: Remove after an Alembic bake removes the Sequence Cache modifier
    too; a save writes the live shape key muted (a file opened without the add-on shows the
    plain rig) and puts it back; a render mutes it while it runs and the frame handler writes
    nothing meanwhile (writing mesh data during a render can crash Blender)."""
    from overtone import live
    scene, ob, _ = tube_scene("traps")
    ob.overtone.cache_format = 'ABC'
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake failed")
    check("MESH_SEQUENCE_CACHE" in [m.type for m in ob.modifiers], "the Alembic bake added no Sequence Cache")
    check(bpy.ops.object.overtone_remove() == {'FINISHED'}, "remove failed")
    check([m.type for m in ob.modifiers] == ['ARMATURE'], f"remove left {[m.type for m in ob.modifiers]}")
    # Live preview, then a save: the file holds the key at 0, the session keeps it at 1.
    ob.overtone.cache_format = 'PC2'
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    scenes.play(scene, ob, range(1, 21))
    kb = shape_key.get(ob)
    check(kb.value == 1.0, f"live key at {kb.value}")
    path = os.path.join(TMP, "traps.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    check(shape_key.get(ob).value == 1.0, "the save left the live key muted")
    with bpy.data.libraries.load(path) as (_, data_to):
        data_to.meshes = [ob.data.name]
    saved = data_to.meshes[0].shape_keys
    check(saved.key_blocks[shape_key.SHAPE_KEY].value == 0.0, "the saved file holds the live offsets")
    bpy.data.meshes.remove(data_to.meshes[0])
    # A render: the key muted while it runs, no step, put back after.
    cam = bpy.data.objects.new("TrapCam", bpy.data.cameras.new("TrapCam"))
    scene.collection.objects.link(cam)
    cam.location, cam.rotation_euler = (0.0, -9.0, 1.5), (1.5, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x = scene.render.resolution_y = 64
    seen = []

    def during(*_args):
        seen.append((shape_key.get(ob).value, bool(live._rendering)))

    bpy.app.handlers.render_post.append(during)
    steps = session.get(ob).steps
    try:
        bpy.ops.render.render(write_still=False)
    finally:
        bpy.app.handlers.render_post.remove(during)
    check(seen and all(v == 0.0 and r for v, r in seen), f"during the render: {seen}")
    check(session.get(ob).steps == steps, "the live preview stepped during the render")
    check(shape_key.get(ob).value == 1.0 and not live._rendering, "the render left the key muted")


def _render_pixels(scene, name):
    """Renders the current frame with Workbench to a PNG and returns its pixels (h x w x 4)."""
    scene.render.filepath = os.path.join(TMP, f"{name}.png")
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(scene.render.filepath)
    px = np.empty(len(img.pixels), dtype=np.float32)
    img.pixels.foreach_get(px)
    w, h = img.size
    bpy.data.images.remove(img)
    return px.reshape(h, w, 4)


def test_renders_show_the_bake_with_the_live_preview_on_or_off_after_reload():
    """Issue 30's render check: a baked tube is saved and reopened; a Workbench render of a frame
    is the same picture with the live preview off (the bake in the viewport) and on (the live
    preview in the viewport; a render mutes its key and shows the bake), and the same as the
    render right after the bake, and not the plain rig's picture."""
    from overtone import cache_modifier
    scene, ob, _ = tube_scene("renders")
    blend = os.path.join(TMP, "renders.blend")
    cam = bpy.data.objects.new("RenderCam", bpy.data.cameras.new("RenderCam"))
    scene.collection.objects.link(cam)
    cam.location, cam.rotation_euler = (0.0, -9.0, 1.5), (1.5, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x = scene.render.resolution_y = 96
    scene.render.image_settings.file_format = 'PNG'
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake failed")
    frame = 14
    scene.frame_set(frame)
    baked = _render_pixels(scene, "baked")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    ob = scene.objects["Tube"]
    scene.frame_set(frame)
    off = _render_pixels(scene, "reloaded-live-off")
    ob.overtone.live_preview = True
    scenes.play(scene, ob, range(1, frame + 1))
    check(np.abs(shape_key_offsets(ob)).max() > 0.0, "the live preview shows no motion at the frame")
    on = _render_pixels(scene, "reloaded-live-on")
    # The plain rig's picture: the bake's modifier off for the render, the live key at 0.
    m = cache_modifier.get(ob)
    m.show_render = False
    shape_key.get(ob).value = 0.0
    rig = _render_pixels(scene, "plain-rig")
    m.show_render = True
    shape_key.get(ob).value = 1.0
    changed = int((np.abs(baked - rig).max(axis=2) > 0.02).sum())
    check(changed >= 20, f"the bake's picture differs from the rig's in only {changed} pixels")
    for label, px in (("live preview off", off), ("live preview on", on)):
        diff = float(np.abs(px - baked).max())
        check(diff <= 1.0 / 255.0, f"reloaded, {label}: the render differs from the bake's by {diff:.3f}")
    print(f"    renders: bake vs plain rig {changed} pixels; reloaded off/on vs bake "
          f"{np.abs(off - baked).max():.1e} / {np.abs(on - baked).max():.1e}")


def test_cesium_man_preview_and_bake():
    session.drop_all()
    scene = scenes.empty_scene()
    ob = scenes.cesium_man()
    ob.overtone.sidecar = os.path.join(TMP, "cesium.ovt")
    ob.overtone.cache_file = os.path.join(TMP, "cesium.pc2")
    frames = range(1, 61)
    preview, rig_only, baked, residual = _preview_rig_and_bake(scene, ob, frames)
    check(residual <= RESIDUAL_TOL, f"rig residual {residual:.2e}")
    secondary = np.abs(preview - rig_only).max()
    check(secondary > 1e-4, f"no secondary motion on CesiumMan ({secondary:.2e})")
    diff = np.abs(baked - preview).max()
    check(diff <= CACHE_TOL, f"CesiumMan: baked cache differs from the preview by {diff:.2e}")
    print(f"    CesiumMan: {len(ob.data.vertices)} vertices, secondary max {secondary:.4f}, "
          f"cache vs preview {diff:.1e}, residual {residual:.1e}")


if __name__ == "__main__":
    runner.main(globals())
