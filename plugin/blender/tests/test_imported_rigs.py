"""Headless tests of the add-on on imported and transformed rigs (issue 14): any object transform,
several meshes as one body, the unsaved-file bake, kept precomputes. Run by
scripts/test_blender.sh after test_addon.py; prints a table of the measured numbers.

Every variant of a character has the same world shape and the same world motion, so Overtone
(which simulates in world space at bind) must give the same secondary motion relative to the
character's size whatever the object scale (0.01, 100, negative), rotation, parenting or
orientation of the mesh data."""

import glob
import os
import sys
import tempfile
import time

sys.path.insert(0, os.environ["OVERTONE_ADDON_DIR"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import overtone  # noqa: E402
import runner  # noqa: E402
import scenes  # noqa: E402
from overtone import live as live_module  # noqa: E402
from overtone import native, pc2, session, shape_key  # noqa: E402

TMP = tempfile.mkdtemp(prefix="overtone-rigs-")
RESIDUAL_TOL = 1e-8
# Baked (float32 PC2) against live (float32 shape key through the modifier), relative to the
# object-space diagonal.
BAKE_TOL = 1e-5
MOVING = (0.002, 0.06)   # secondary motion peak while the rig moves, / world diagonal
HOLD = 0.003             # after a 1 s hold, / world diagonal
BONE_PARENT_PEAK = 0.5  # the doubly transformed, bone-parented tube: no explosion (measured 0.40 at 5 Hz)
# Scale 1 vs 0.01, Apply All Transforms, +Y-up data, mirrored or non-uniformly scaled data, units:
# the same world surface and motion, so the per-frame motion curves must agree (relative to the
# reference peak) within the 1% (10% after Apply All Transforms). Measured 0.00%: the
# add-on hands the library the welded surface (glTF imports split vertices at UV seams: 138
# separate pieces on CesiumMan, each its own lattice copy, and the motion then followed the
# float32 rounding of the transform), and the library's lattice keeps the surface's extreme
# points mid-cell (they sat on a cube face, and rounding moved a layer of cubes in or out).
SAME = 0.01
APPLIED = 0.10
# A rotated world (the tube at scale 100 with its armature rotated by (0.7, -0.4, 1.1)) is the
# same body turned: the library builds the lattice in the body's own frame, so the motion turned
# back must match. It was 162% with a world-axis lattice (the issue allows 5%); measured now
# 0.4% of the peak (curve) and 1.5% (field), from the float32 data and transforms.
ROTATED = 0.05
STOP = 30                # the rig moves until this frame, then holds
HOLD_FRAME = STOP + 24   # 1 s later at 24 fps
RESULTS = []


class Skip(Exception):
    """A test that needs a feature this build of the library lacks (printed as SKIP)."""


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def world_points(ob, local):
    mw = np.array(ob.matrix_world)
    return local @ mw[:3, :3].T + mw[:3, 3]


def run(ob, name, bake=True, objects=None, lattice=32, stop=STOP, hold_frame=HOLD_FRAME):
    """Adds Overtone (the selection decides the body), plays frames 1..hold_frame, bakes and replays
    the cache. ``peak`` is the largest motion until ``stop`` (the rig moves until then), ``hold``
    the motion at ``hold_frame``. ``lattice`` replaces an automatic lattice resolution (``None``
    keeps the automatic one). Returns a dict of measurements; the world displacement per frame
    is in ``u``."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, hold_frame
    objects = objects or [ob]
    for o in objects:
        # A fixed lattice when asked (the automatic one is chosen in the body's own frame, so a
        # turned body gets the same one either way: see ROTATED).
        if not o.overtone.use_lattice_resolution and lattice is not None:
            o.overtone.use_lattice_resolution = True
            o.overtone.lattice_resolution = lattice
        o.overtone.sidecar = os.path.join(TMP, f"{name}.ovt")
        o.overtone.cache_file = os.path.join(TMP, f"{name}-{o.name}.pc2")
    scene.frame_set(1)
    t = time.perf_counter()
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, f"{name}: add failed")
    bind_s = time.perf_counter() - t
    s = session.get(ob)
    diag = s.binding.diagonal
    us, live = [], {o.name: [] for o in objects}
    for f in range(1, hold_frame + 1):
        scene.frame_set(f)
        us.append(session.get(ob).u.copy())
        for o in objects:
            live[o.name].append(scenes.evaluated_positions(o))
    residual = session.get(ob).max_residual
    mag = np.linalg.norm(np.array(us), axis=2).max(axis=1) / diag
    out = {"name": name, "vertices": s.binding.vertex_count, "bind_s": bind_s, "diag": diag,
           "peak": float(mag[:stop + 1].max()), "hold": float(mag[hold_frame - 1]), "residual": residual,
           "u": np.array(us) / diag, "bake": None}
    check(residual <= RESIDUAL_TOL, f"{name}: rig residual {residual:.2e}")
    check(np.isfinite(out["u"]).all(), f"{name}: non-finite displacement")
    if bake:
        check(bpy.ops.object.overtone_bake() == {'FINISHED'}, f"{name}: bake failed")
        worst = 0.0
        for o in objects:
            baked = scenes.play(scene, o, range(1, hold_frame + 1))
            rest = np.empty(3 * len(o.data.vertices))
            o.data.vertices.foreach_get("co", rest)
            rest = rest.reshape(-1, 3)
            local_diag = float(np.linalg.norm(rest.max(axis=0) - rest.min(axis=0)))
            worst = max(worst, float(np.abs(baked - np.array(live[o.name])).max()) / local_diag)
        out["bake"] = worst
        check(worst <= BAKE_TOL, f"{name}: bake differs from live by {worst:.1e} of the diagonal")
    return out


def record(r, reference=None):
    """Adds ``r`` to the table; against ``reference``, ``vs`` is the largest difference of the
    per-frame motion curves (largest displacement / diagonal, frame by frame) over the reference
    peak, and ``field`` the largest per-vertex difference of the normalised displacement fields
    over the peak (asserted for the same world surface; reported for a rotated one)."""
    if reference is not None:
        curve = np.linalg.norm(r["u"], axis=2).max(axis=1)
        ref_curve = np.linalg.norm(reference["u"], axis=2).max(axis=1)
        r["vs"] = (reference["name"], float(np.abs(curve - ref_curve).max() / reference["peak"]))
        r["field"] = float(np.abs(r["u"] - reference["u"]).max() / reference["peak"])
    RESULTS.append(r)
    return r


def check_moving(r):
    lo, hi = MOVING
    check(lo <= r["peak"] <= hi, f"{r['name']}: peak secondary motion {r['peak']:.4f} of the diagonal, "
                                 f"outside [{lo}, {hi}]")
    check(r["hold"] <= HOLD, f"{r['name']}: {r['hold']:.2e} of the diagonal left after a 1 s hold")


def character(variant, name="CesiumMan.glb"):
    session.drop_all()
    scenes.empty_scene()
    ob, arm = scenes.imported_character(name, variant)
    height = scenes.world_height(ob)
    scenes.key_hop_and_swing(arm, height, 1, STOP)
    return ob, arm


def test_imported_character_any_transform():
    """CesiumMan as imported (metres, scale 1), as FBX/Mixamo deliver it (cm data, armature at
    0.01 rotated 90° over +Y-up data), after Apply All Transforms, and with +Y-up mesh data:
    same world motion, same secondary motion relative to the size."""
    ob, _ = character("scale1")
    rest1 = world_points(ob, scenes.evaluated_positions(ob))
    base = record(run(ob, "cesium-scale1"))
    check_moving(base)
    for variant, tol in (("mixamo", SAME), ("ydata", SAME), ("applied", APPLIED)):
        ob, _ = character(variant)
        bpy.context.scene.frame_set(1)
        rest = world_points(ob, scenes.evaluated_positions(ob))
        shape = np.abs(rest - rest1).max() / base["diag"]
        check(shape < 1e-5, f"{variant}: the test scene's world shape differs by {shape:.1e}")
        r = record(run(ob, f"cesium-{variant}"), base)
        check_moving(r)
        check(r["vs"][1] <= tol, f"{variant}: secondary motion differs from scale 1 by {r['vs'][1]:.2%} "
                                 f"of the peak (tolerance {tol:.0%})")
        check(r["field"] <= tol, f"{variant}: the displacement field differs from scale 1 by {r['field']:.2%} "
                                 f"of the peak at some vertex (tolerance {tol:.0%})")


# The same motion in seconds at another frame rate (keys rescaled) agrees at the instants the
# rates share (issue 31 asks 5% of the peak): the deformer steps a fixed 240 Hz physics clock, the
# rig on a causal cubic through the frames, and takes the new rate without a new bind. Measured
# (largest per-vertex difference over the 24 fps peak) at the default 5 Hz: 30 fps 2.8%, 96 fps
# 3.8%; what remains is the rig between 24 fps frames, which a live host does not evaluate, and it
# grows with the body's frequency (96 fps: 1.8% at 4 Hz, 6.6% at 6 Hz; 5.3% with the former
# default Young's modulus). Before: every rate stepped its own frame length and a new rate
# rebuilt the precompute.
FRAME_RATES = 0.05


def _rescale_keys(arm, factor):
    """Moves every key of the armature's action from frame ``f`` to ``1 + (f - 1) * factor``
    (handles alike): the same motion in seconds at ``factor`` times the frame rate."""
    for fc in arm.animation_data.action.fcurves:
        for kp in fc.keyframe_points:
            for pt in (kp.co, kp.handle_left, kp.handle_right):
                pt.x = 1.0 + (pt.x - 1.0) * factor
        fc.update()


def test_frame_rate_changes_the_sampling_not_the_motion():
    """CesiumMan keyed at 24 fps, played live; then the scene at 30 and 96 fps with the keys
    rescaled (the same motion in seconds; the rig agrees at the instants the rates share): the
    secondary motion at those instants agrees within FRAME_RATES of the 24 fps peak, and the
    session is the same one (the precompute is not rebuilt for a new frame rate)."""
    ob, arm = character("scale1")
    scene = bpy.context.scene
    base = record(run(ob, "cesium-24fps", bake=False))
    s24 = session.get(ob)
    rig24 = []
    shared = (1, 13, 29)  # 24 fps frames that are 30 fps frames too
    for f in shared:
        scene.frame_set(f)
        rig24.append(world_points(ob, scenes.evaluated_positions(ob)) - session.get(ob).u)
    factor_done = 1.0
    for fps in (30, 96):
        factor = fps / 24.0
        _rescale_keys(arm, factor / factor_done)
        factor_done = factor
        scene.render.fps, scene.render.fps_base = fps, 1.0
        last = 1 + round((HOLD_FRAME - 1) * factor)
        scene.frame_start, scene.frame_end = 1, last
        t = time.perf_counter()
        scene.frame_set(1)
        switch_s = time.perf_counter() - t
        check(session.get(ob) is s24, f"{fps} fps: a new frame rate rebuilt the session")
        us = {}
        for f in range(1, last + 1):
            scene.frame_set(f)
            k = 1 + (f - 1) / factor
            if abs(k - round(k)) < 1e-9:
                us[round(k)] = session.get(ob).u / base["diag"]
        for f, want in zip(shared, rig24):
            scene.frame_set(1 + round((f - 1) * factor))
            rig = world_points(ob, scenes.evaluated_positions(ob)) - session.get(ob).u
            check(np.abs(rig - want).max() <= 1e-5 * base["diag"], f"{fps} fps: the rig differs at 24 fps frame {f}")
        worst = max(float(np.abs(u - base["u"][k - 1]).max()) for k, u in us.items())
        print(f"  {fps} fps vs 24 fps: {len(us)} shared instants, largest difference {worst / base['peak']:.2%} "
              f"of the peak; switching the rate took {switch_s:.2f} s (no new bind)")
        check(worst <= FRAME_RATES * base["peak"],
              f"{fps} fps: secondary motion differs from 24 fps by {worst / base['peak']:.2%} of the peak")
    scene.render.fps = 24


def tube(variant):
    """The tests' rigged tube (length 3) under a transform with the same world result."""
    session.drop_all()
    scene = scenes.empty_scene()
    ob, rig = scenes.rigged_tube(stop_frame=STOP)
    ob.parent = rig
    if variant == "scale100-rotated":
        # Everything 100x smaller in data, objects at scale 100, the armature rotated and moved.
        for o in (rig, ob):
            scenes._select_only([o], o)
        scenes._select_only([rig, ob], rig)
        rig.scale = (0.01, 0.01, 0.01)
        bpy.context.view_layer.update()
        bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
        rig.scale = (100.0, 100.0, 100.0)
        rig.rotation_euler = (0.7, -0.4, 1.1)
        rig.location = (3.0, -2.0, 1.0)
    elif variant == "mirrored":
        # Mesh data mirrored in z, its object scaled -1 in z: the same world surface.
        co = np.empty(3 * len(ob.data.vertices))
        ob.data.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
        co[:, 2] *= -1.0
        ob.data.vertices.foreach_set("co", co.ravel())
        ob.data.update()
        ob.scale = (1.0, 1.0, -1.0)
    elif variant == "nonuniform":
        co = np.empty(3 * len(ob.data.vertices))
        ob.data.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3) * np.array([2.0, 1.0, 0.5])
        ob.data.vertices.foreach_set("co", co.ravel())
        ob.data.update()
        ob.scale = (0.5, 1.0, 2.0)
    elif variant == "bone-parent":
        # Parented to the root bone (a double transform Blender shows as it is; Overtone follows).
        ob.parent = rig
        ob.parent_type = 'BONE'
        ob.parent_bone = "Bone0"
        ob.matrix_parent_inverse = (rig.matrix_world @ rig.pose.bones["Bone0"].matrix).inverted()
    elif variant == "units-cm":
        scene.unit_settings.system = 'METRIC'
        scene.unit_settings.scale_length = 0.01
    elif variant != "plain":
        raise ValueError(variant)
    bpy.context.view_layer.update()
    scenes._select_only([ob], ob)
    return ob, rig


def test_tube_any_transform():
    """The tube at scale 100 with a rotated, moved armature; mirrored (scale -1 on z); non-uniform
    scale; centimetre units; parented to a bone: same motion relative to its size as the plain
    tube (the bone-parented one moves differently by construction and is only checked for
    bounds, bake = live and the contract)."""
    ob, rig = tube("plain")
    base = record(run(ob, "tube-plain"))
    check_moving(base)
    failures = []
    for variant in ("scale100-rotated", "mirrored", "nonuniform", "units-cm"):
        ob, rig = tube(variant)
        r = run(ob, f"tube-{variant}")
        if variant == "scale100-rotated":
            # Rotate the world displacement back into the plain tube's frame, in the plain
            # tube's units: ``u`` is divided by the binding's world bounding-box diagonal, which
            # a turned body's axis-aligned box makes larger (here 21%) for the same body.
            lin = np.array(rig.matrix_world)[:3, :3]
            lin = lin / np.cbrt(np.linalg.det(lin))
            r["u"] = r["u"] @ lin * (r["diag"] / base["diag"])
        record(r, base)
        check_moving(r)
        tol = ROTATED if variant == "scale100-rotated" else SAME
        if r["vs"][1] > tol:
            failures.append(f"{variant}: secondary motion differs from the plain tube by {r['vs'][1]:.2%} "
                            f"of the peak (tolerance {tol:.0%})")
    check(not failures, "; ".join(failures))
    ob, rig = tube("bone-parent")
    r = record(run(ob, "tube-bone-parent"))
    # Parented to the bone that also skins it, the tube is carried twice (Blender shows it so),
    # so its rig swings harder than the plain tube's and the secondary motion is larger: 5.3x
    # the plain tube's peak at E = 2e5, 8.6x at 5e4, 7.3x (0.27 of the diagonal) at the former
    # default 2.5e4 with the lattice's material shares, 12x (0.40 of the diagonal) at the default
    # 5 Hz. What must hold is that it does not explode (the broken add-on reached 5.5-17
    # diagonals).
    check(r["peak"] <= BONE_PARENT_PEAK, f"bone-parent: peak {r['peak']:.4f}")


def two_meshes():
    """The tube and a sleeve (a shorter, wider tube around its middle) as two objects on one
    armature, weighted the same way."""
    session.drop_all()
    scene = scenes.empty_scene()
    ob, rig = scenes.rigged_tube(stop_frame=STOP)
    sleeve, rig2 = scenes.rigged_tube(rings=21, segments=40, length=1.2, radius=0.32, stop_frame=STOP)
    # Move the sleeve's data to z 0.9..2.1, weight it from the first rig's bones, drop its rig.
    co = np.empty(3 * len(sleeve.data.vertices))
    sleeve.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[:, 2] += 0.9
    sleeve.data.vertices.foreach_set("co", co.ravel())
    sleeve.data.update()
    for vg in list(sleeve.vertex_groups):
        sleeve.vertex_groups.remove(vg)
    seg = 1.0
    w = np.exp(-((co[:, 2][:, None] - (np.arange(3) + 0.5)[None, :] * seg) / (0.45 * seg)) ** 2)
    w /= w.sum(axis=1, keepdims=True)
    for i in range(3):
        vg = sleeve.vertex_groups.new(name=f"Bone{i}")
        for v in np.nonzero(w[:, i] > 1e-4)[0]:
            vg.add([int(v)], float(w[v, i]), 'REPLACE')
    sleeve.modifiers["Armature"].object = rig
    bpy.data.objects.remove(rig2)
    sleeve.name = "Sleeve"
    ob.parent = rig
    sleeve.parent = rig
    scenes._select_only([ob, sleeve], ob)
    return scene, ob, sleeve, rig


def test_a_duplicated_member_is_a_body_of_its_own():
    """Issue 30's trap: a copy of one mesh of a two-mesh body (Shift-D copies the Overtone
    settings, body id included) does not join the original's body silently: at the next frame it
    is a body of its own (its own session, the status says so), and the original body keeps its
    two meshes and its session."""
    scene, ob, sleeve, rig = two_meshes()
    for o in (ob, sleeve):
        o.overtone.use_lattice_resolution, o.overtone.lattice_resolution = True, 12
        o.overtone.sidecar = os.path.join(TMP, "dup.ovt")
    scenes._select_only([ob, sleeve], ob)
    scene.frame_set(1)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    scene.frame_set(2)
    s = session.get(ob)
    copy = sleeve.copy()
    copy.data = sleeve.data.copy()
    scene.collection.objects.link(copy)
    check(copy.overtone.body == sleeve.overtone.body, "the copy did not carry the body id (test premise)")
    scene.frame_set(3)
    check(copy.overtone.body != sleeve.overtone.body and copy.overtone.status.startswith("a copy of"),
          f"the copy joined the body: {copy.overtone.status!r}")
    check(session.members(scene, ob) == [ob, sleeve] and session.get(ob) is s and s.last_frame == 3,
          "the original body changed")
    c = session.get(copy)
    check(c is not None and c is not s and c.binding.vertex_count == len(copy.data.vertices),
          "the copy is not simulated as a body of its own")
    # A Bake right after a copy (no frame in between) bakes the original body only.
    again = sleeve.copy()
    again.data = sleeve.data.copy()
    scene.collection.objects.link(again)
    scenes._select_only([ob], ob)
    scene.frame_start, scene.frame_end = 1, 4
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "the bake after a copy failed")
    check(again.overtone.body != sleeve.overtone.body and session.members(scene, ob) == [ob, sleeve],
          "the bake took the copy into the body")


def test_two_meshes_one_body():
    """Add with two selected meshes binds one body: one session, one simulation; each object has
    its shape key and its own baked cache (= live); the sleeve (a separate piece) stays within
    1.5 peaks of the tube under it;
    Remove on the sleeve leaves the tube bound on its own."""
    scene, ob, sleeve, rig = two_meshes()
    r = record(run(ob, "two-meshes", objects=[ob, sleeve]))
    check_moving(r)
    s = session.get(ob)
    check(session.get(sleeve) is s and s.binding.vertex_count == len(ob.data.vertices) + len(sleeve.data.vertices),
          "the two meshes are not one body")
    check(shape_key.get(ob) is not None and shape_key.get(sleeve) is not None, "a shape key is missing")
    for o in (ob, sleeve):
        frames, _, _ = pc2.read_pc2(bpy.path.abspath(o.overtone.cache_file))
        check(frames.shape[1] == len(o.data.vertices), f"{o.name}: cache has {frames.shape[1]} points")
    # One body: at the frame of largest motion, the sleeve's displacement matches that of the
    # tube vertices nearest to it (they share lattice cells) to a fraction of the peak.
    u = r["u"]
    f = int(np.argmax(np.linalg.norm(u, axis=2).max(axis=1)))
    p = s.binding.parts
    tube_rest, sleeve_rest = s.binding.rest[p[0].slice], s.binding.rest[p[1].slice]
    near = np.argmin(np.abs(tube_rest[:, 2][None, :] - sleeve_rest[:, 2][:, None])
                     + np.abs(np.arctan2(tube_rest[:, 1], tube_rest[:, 0])[None, :]
                              - np.arctan2(sleeve_rest[:, 1], sleeve_rest[:, 0])[:, None]), axis=1)
    gap = np.linalg.norm(u[f][p[1].slice] - u[f][p[0].slice][near], axis=1).max() / r["peak"]
    r["sleeve_gap"] = float(gap)
    r["name"] += f" (sleeve vs tube under it: {gap:.2f} of the peak)"
    # Separate surface pieces get their own lattice cubes (issue 13: never glued), so the sleeve
    # is carried by the rig, not by the tube's secondary motion: their displacements differ by
    # about the peak (measured 1.05). Bounded, not equal.
    check(gap < 1.5, f"the sleeve moves apart from the tube under it ({gap:.2f} of the peak)")
    # The table's settings (an optional one's use_ switch too) are the body's: set on the tube,
    # the sleeve follows; put back, both are as before.
    changes = (("use_max_displacement", True), ("max_displacement", 0.25), ("use_modes", True), ("modes", 24),
               ("solver", 'FULL'), ("damping", 0.5))
    before = {name: getattr(ob.overtone, name) for name, _ in changes}
    for name, value in changes:
        setattr(ob.overtone, name, value)
        check(getattr(sleeve.overtone, name) == getattr(ob.overtone, name) != before[name],
              f"{name} was not shared with the sleeve")
    for name, value in before.items():
        setattr(ob.overtone, name, value)
        check(getattr(sleeve.overtone, name) == value, f"{name} was not put back on the sleeve")
    # Remove the sleeve: the tube stays bound as a body of its own and keeps playing.
    scenes._select_only([sleeve], sleeve)
    check(bpy.ops.object.overtone_remove() == {'FINISHED'}, "remove failed")
    check(not sleeve.overtone.enabled and shape_key.get(sleeve) is None, "the sleeve is still bound")
    check(ob.overtone.enabled and ob.overtone.body == "", "the tube lost its binding")
    ob.overtone.live_preview = True
    scenes.play(scene, ob, range(1, 12))
    s2 = session.get(ob)
    check(s2 is not None and s2.binding.vertex_count == len(ob.data.vertices) and s2.last_frame == 11,
          "the tube is not simulated on its own after the sleeve was removed")
    check(np.abs(s2.u).max() > 0.0, "the tube has no secondary motion after the sleeve was removed")


# The clip of examples/data/characters (make_characters.py): the rig moves until frame 40 (a hop
# until 36, then into the hold pose), holds still from 40 to 72.
OWN_CLIP_STOP = 40
OWN_CLIP_HOLD = OWN_CLIP_STOP + 24


def test_thin_limbed_characters_with_their_own_clip():
    """The thin-limbed humanoids of examples/data/characters (issue 13) as a user gets them:
    imported with Blender's glTF importer, their own keyed clip (a hop, then a hold far from the
    bind pose), every skinned mesh selected (the robot's Body and Joints on one armature at
    scale 0.01), the automatic lattice. The secondary motion stays within the issue's 0.2-6 %
    of the diagonal while the rig moves and under 0.3 % after a 1 s hold, with the rig residual,
    and the bake replays the live motion."""
    for name, meshes_expected in (("mannequin", 1), ("robot", 2)):
        session.drop_all()
        scene = scenes.empty_scene()
        bpy.ops.import_scene.gltf(filepath=os.path.join(scenes.REPO, "examples", "data", "characters", f"{name}.glb"))
        meshes = sorted((o for o in scene.objects
                         if o.type == 'MESH' and any(m.type == 'ARMATURE' for m in o.modifiers)),
                        key=lambda o: o.name)
        check(len(meshes) == meshes_expected, f"{name}: {len(meshes)} skinned meshes imported")
        check(not any(o.overtone.use_lattice_resolution for o in meshes), f"{name}: lattice not automatic")
        scenes._select_only(meshes, meshes[0])
        r = record(run(meshes[0], name, objects=meshes, lattice=None, stop=OWN_CLIP_STOP,
                       hold_frame=OWN_CLIP_HOLD))
        check_moving(r)


def test_pull_back_matches_the_dense_blend():
    """The library's pull-back (sparse weights, rig_binding.rest_offsets) equals the dense blend
    ``d_v = L_p⁻¹ (Σ_b w_vb T_b[:3, :3])⁻¹ u_v`` solved per vertex by numpy, to 1e-12 of the
    largest offset, on two meshes with different bind matrices (scale, rotation, mirror); with a
    bone scaled to zero, the vertices whose blend becomes singular get 0 and the others still
    match."""
    from overtone import native
    from overtone.rig_binding import RigBinding
    _, ob, sleeve, _ = two_meshes()
    rng = np.random.default_rng(3)
    c, s_ = np.cos(0.4), np.sin(0.4)
    m1 = np.diag([2.0, 2.0, 2.0, 1.0])
    m1[:3, 3] = (0.1, -0.2, 0.3)
    m2 = np.array([[c, -s_, 0.0, 1.0], [s_, c, 0.0, 0.0], [0.0, 0.0, -0.5, 0.2], [0.0, 0.0, 0.0, 1.0]])
    b = RigBinding([ob, sleeve], [m1, m2])
    n, m = b.weights.shape
    t = np.zeros((m, 3, 4))
    t[:, :, :3] = np.eye(3) + 0.3 * rng.standard_normal((m, 3, 3))
    t[:, :, 3] = rng.standard_normal((m, 3))
    u = rng.standard_normal((n, 3))
    lin_inv = np.concatenate([np.repeat(np.linalg.inv(bm[:3, :3])[None], p.n, axis=0)
                              for bm, p in zip((m1, m2), b.parts)])

    def dense(t):
        a = np.einsum("vb,bij->vij", b.weights, t[:, :, :3])
        s = np.abs(t[:, :, :3]).max()
        ok = np.abs(np.linalg.det(a)) > 1e-12 * s ** 3
        d = np.zeros((n, 3))
        d[ok] = np.linalg.solve(a[ok], u[ok][:, :, None])[:, :, 0]
        return np.einsum("vij,vj->vi", lin_inv, d), ok

    for case in ("regular", "bone scaled to zero"):
        if case != "regular":
            alone = (b.weights > 0.0).sum(axis=1) == 1
            k = int(np.argmax((b.weights[alone] > 0.0).sum(axis=0)))
            t[k, :, :3] = 0.0
        want, ok = dense(t)
        got = b.rest_offsets(np.ascontiguousarray(t.reshape(m, 12)), u).copy()
        err = np.abs(got - want).max() / np.abs(want).max()
        check(err <= 1e-12, f"{case}: the pull-back differs from the dense blend by {err:.1e} relative")
        check(np.all(got[~ok] == 0.0), f"{case}: singular blends did not give 0")
        if case != "regular":
            check((~ok).sum() > 0, "no vertex became singular with a bone scaled to zero")
        print(f"  pull-back {case}: {err:.1e} relative to the dense blend, {(~ok).sum()} singular of {n}")
    out = np.empty((n, 3))
    check(b.rest_offsets(t.reshape(m, 12), u, out=out) is out, "rest_offsets ignored `out`")
    try:
        b.rest_offsets(np.full((m, 12), np.nan), u)
        check(False, "a NaN pose was accepted by the pull-back")
    except native.NativeError as e:
        check("non-finite" in str(e), f"unexpected message: {e}")


def test_objects_that_move_apart_are_refused_per_frame():
    """Two meshes bound as one body, then one of them animated on its own: the frame is refused
    with a message and both show the plain rig."""
    scene, ob, sleeve, rig = two_meshes()
    sleeve.location = (0.0, 0.0, 0.0)
    sleeve.keyframe_insert("location", frame=1)
    sleeve.location = (0.5, 0.0, 0.0)
    sleeve.keyframe_insert("location", frame=10)
    for o in (ob, sleeve):
        o.overtone.sidecar = os.path.join(TMP, "apart.ovt")
    scene.frame_set(1)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    scenes.play(scene, ob, range(1, 6))
    check("move together" in ob.overtone.status and "move together" in sleeve.overtone.status,
          f"status: {ob.overtone.status!r}")


def test_unsaved_bake_moves_next_to_the_blend_on_save():
    """In an unsaved file the bake goes to Blender's temporary folder (with a warning) and the
    Mesh Cache plays it; saving moves it beside the .blend and the saved file points there."""
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(stop_frame=STOP)
    bpy.ops.object.overtone_add()
    check(session.get(ob).sidecar.startswith(bpy.app.tempdir), "the unsaved file's sidecar is not in the temp folder")
    scene.frame_end = 20
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "the unsaved bake was refused")
    mod = ob.modifiers["Overtone Cache"]
    temp = mod.filepath
    check(ob.overtone.cache_in_temp and temp.startswith(bpy.app.tempdir) and os.path.isfile(temp),
          f"the cache is not in the temporary folder: {temp}")
    check("temporary folder" in ob.overtone.status, ob.overtone.status)
    before = scenes.play(scene, ob, range(1, 21))
    folder = os.path.join(TMP, "saved-later")
    os.makedirs(folder)
    blend = os.path.join(folder, "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    dst = os.path.join(folder, "overtone", "Tube.pc2")
    check(os.path.isfile(dst) and not os.path.exists(temp), "the cache did not move beside the .blend")
    check(mod.filepath == "//overtone/Tube.pc2" and not ob.overtone.cache_in_temp, mod.filepath)
    check("temporary" not in ob.overtone.status and dst in ob.overtone.status, ob.overtone.status)
    check(len(glob.glob(os.path.join(folder, "overtone", "Tube.*.ovt"))) == 1, "the sidecar did not move")
    bpy.ops.wm.open_mainfile(filepath=blend)
    ob = bpy.context.scene.objects["Tube"]
    check(ob.modifiers["Overtone Cache"].filepath == "//overtone/Tube.pc2", "the saved file points elsewhere")
    after = scenes.play(bpy.context.scene, ob, range(1, 21))
    check(np.abs(after - before).max() == 0.0, "the moved cache plays differently")
    ob.overtone.live_preview = True
    scenes.play(bpy.context.scene, ob, range(1, 3))
    check(session.get(ob).deformer.cache_state() == native.CacheState.LOADED,
          f"after reopening: {session.get(ob).deformer.cache_status()}")


def test_recent_precomputes_are_kept_and_status_stays_current():
    """Changing Young's modulus and back loads the first precompute from its kept sidecar; at
    most four are kept; a changed setting clears "baked N frames"."""
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(stop_frame=STOP)
    ob.overtone.sidecar = os.path.join(TMP, "kept", "tube.ovt")
    ob.overtone.cache_file = os.path.join(TMP, "kept", "tube.pc2")
    bpy.ops.object.overtone_add()
    first = session.get(ob).sidecar
    scene.frame_end = 10
    bpy.ops.object.overtone_bake()
    check(ob.overtone.status.startswith("baked 10 frames"), ob.overtone.status)
    ob.overtone.youngs_modulus = 4e5
    check(not ob.overtone.status.startswith("baked"), f"status still says {ob.overtone.status!r}")
    ob.overtone.live_preview = True
    scene.frame_set(2)
    check(session.get(ob).sidecar != first, "a new setting reused the old sidecar file")
    ob.overtone.youngs_modulus = ob.overtone.bl_rna.properties["youngs_modulus"].default
    scene.frame_set(3)
    s = session.get(ob)
    check(s.sidecar == first and s.deformer.cache_state() == native.CacheState.LOADED,
          f"switching back did not reuse the first precompute: {s.deformer.cache_status()}")
    for e in (1e5, 3e5, 5e5, 6e5, 7e5):
        ob.overtone.youngs_modulus = e
        scene.frame_set(4 if scene.frame_current != 4 else 5)
    kept = glob.glob(os.path.join(TMP, "kept", "tube.*.ovt"))
    check(len(kept) == session.KEEP_SIDECARS, f"{len(kept)} sidecars kept")


def test_leak_group_adjusts_the_default_only_where_painted():
    """Painting the leak group with weight 1 on the tip changes the motion mostly at the tip; far
    from the paint the motion stays near the unpainted result (before: unpainted counted as 0)."""
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(stop_frame=STOP)
    # The full solver: the fast solver's eigen solve does not finish on this leak field with
    # today's core (see the report; the bounded eigen solve of issue 13 addresses it).
    ob.overtone.solver = 'FULL'
    base = run(ob, "leak-none", bake=False)
    # A leak group nobody painted: every vertex is unpainted, so the library must use the very
    # default the body gets without a group (the skeleton-derived one; before, a group blended
    # into the depth-only field and changed the motion everywhere).
    ob.vertex_groups.new(name="nothing")
    ob.overtone.leak_group = "nothing"
    empty = run(ob, "leak-empty", bake=False)
    same = float(np.abs(empty["u"] - base["u"]).max() / base["peak"])
    check(same <= 1e-9, f"an unpainted leak group changed the motion by {same:.1e} of the peak")
    ob.overtone.leak_group = ""
    z = np.array([v.co.z for v in ob.data.vertices])
    vg = ob.vertex_groups.new(name="tip")
    for v in np.nonzero(z > 2.4)[0]:
        vg.add([int(v)], 1.0, 'REPLACE')
    ob.overtone.leak_group = "tip"
    painted = run(ob, "leak-tip", bake=False)
    far = z < 1.2
    change = np.linalg.norm(painted["u"] - base["u"], axis=2)
    far_change = float(change[:, far].max() / base["peak"])
    tip_change = float(change[:, z > 2.4].max() / base["peak"])
    painted["name"] = (f"leak tip: change far {far_change:.3f}, at tip {tip_change:.3f} of peak; "
                       f"unpainted group vs none {same:.1e}")
    RESULTS.append(painted)
    check(tip_change > 0.05, f"painting the tip changed it by only {tip_change:.3f} of the peak")
    check(far_change < tip_change, f"painting the tip changed the far end more ({far_change:.3f}) "
                                   f"than the tip ({tip_change:.3f})")


def test_meshes_on_other_armatures_are_refused():
    """Add with a second selected mesh deformed by another armature: an error naming both, nothing
    bound."""
    session.drop_all()
    scenes.empty_scene()
    ob, rig = scenes.rigged_tube(stop_frame=STOP)
    other, rig2 = scenes.rigged_tube(rings=11, stop_frame=STOP)
    scenes._select_only([ob, other], ob)
    try:
        bpy.ops.object.overtone_add()
        raise AssertionError("binding meshes of two armatures succeeded")
    except RuntimeError as e:
        check(rig2.name in str(e) and rig.name in str(e) and other.name in str(e), str(e))
    for o in (ob, other):
        check(not o.overtone.enabled and o.data.shape_keys is None and o.overtone.body == "",
              f"{o.name} changed after a refused add")


class _AddOperator:
    """The Add operator's methods on a plain object (an operator cannot be instantiated headless,
    nor run modally: there is no event loop)."""

    from overtone.operators import OBJECT_OT_overtone_add as _op
    _prepare = _op._prepare
    _restore = _op._restore
    _finish = _op._finish
    _end = _op._end
    _status = _op._status
    modal = _op.modal
    _timer = None

    def __init__(self):
        self.reports = []

    def report(self, kind, msg):
        self.reports.append((kind, msg))


class _Event:
    def __init__(self, kind):
        self.type = kind


def test_cancelled_bind_leaves_the_object_unchanged():
    """The modal Add on a worker thread: polling returns at once while the bind runs, Esc cancels
    it (the worker stops), and the object is as it was: no shape key, not enabled, no session,
    its settings restored."""
    from overtone import native
    if not native.has_async_bind():
        raise Skip("this library has no asynchronous bind (overtone_bind_start)")
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(stop_frame=STOP)
    ob.overtone.sidecar = ""
    ob.overtone.use_lattice_resolution = True
    ob.overtone.lattice_resolution = 48
    before = {k: getattr(ob.overtone, k) for k in ("enabled", "body", "sidecar", "bound_vertex_count",
                                                   "has_bind_matrix", "status")}
    op = _AddOperator()
    t = time.perf_counter()
    op._bind = op._prepare(bpy.context).start()
    session.hold_pending(op._bind)
    start_s = time.perf_counter() - t
    longest = 0.0
    for _ in range(3):
        t = time.perf_counter()
        check(op.modal(bpy.context, _Event('TIMER')) == {'RUNNING_MODAL'}, "the bind finished too soon to cancel")
        longest = max(longest, time.perf_counter() - t)
    t = time.perf_counter()
    check(op.modal(bpy.context, _Event('ESC')) == {'CANCELLED'}, "Esc did not cancel")
    cancel_s = time.perf_counter() - t
    after = {k: getattr(ob.overtone, k) for k in before}
    check(after == before, f"a cancelled bind changed the settings: {before} -> {after}")
    check(ob.data.shape_keys is None and session.get(ob) is None and session.pending(ob) is None,
          "a cancelled bind left a shape key or runtime state")
    check(any("cancelled" in m for _, m in op.reports), op.reports)
    RESULTS.append({"name": f"cancelled bind: prepare+start {1e3 * start_s:.1f} ms, longest poll "
                            f"{1e3 * longest:.2f} ms, Esc (cancel + join) {1e3 * cancel_s:.1f} ms",
                    "vertices": len(ob.data.vertices), "bind_s": 0.0, "peak": 0.0, "hold": 0.0, "residual": 0.0})


def test_playing_while_binding_shows_the_plain_rig():
    """In the UI the frame handler never precomputes: after a setting change the next frames show
    the plain rig while the worker thread binds, then the timer installs the session and the
    secondary motion is back. The handler's longest call while binding is measured."""
    from overtone import live, native
    if not native.has_async_bind():
        raise Skip("this library has no asynchronous bind (overtone_bind_start)")
    session.drop_all()
    scene = scenes.empty_scene()
    ob, _ = scenes.rigged_tube(stop_frame=STOP)
    ob.overtone.sidecar = ""
    ob.overtone.live_preview = False
    scenes.play(scene, ob, range(1, 9))
    rig_only = scenes.evaluated_positions(ob)
    ob.overtone.live_preview = True
    bpy.ops.object.overtone_add()
    live.blocking_binds = lambda: False
    try:
        ob.overtone.use_lattice_resolution = True
        ob.overtone.lattice_resolution = 40
        longest = 0.0
        for f in range(1, 9):
            t = time.perf_counter()
            scene.frame_set(f)
            longest = max(longest, time.perf_counter() - t)
        check(session.pending(ob) is not None, "no bind is running after the setting changed")
        check(np.abs(scenes.evaluated_positions(ob) - rig_only).max() < 1e-6,
              "while binding, the mesh is not the plain rig")
        check(ob.overtone.status.startswith("binding"), ob.overtone.status)
        # A weight painted while it binds (issue 30's trap: the edit was dropped): the body is
        # bound again from the edited data.
        first = session.pending(ob)
        ob.vertex_groups["Bone1"].add([7], 0.321, 'REPLACE')
        t0 = time.perf_counter()
        again = False
        while session.get(ob) is None and time.perf_counter() - t0 < 60:
            time.sleep(0.02)
            live.poll_pending()
            again |= session.pending(ob) not in (None, first)
        check(again and ob.overtone.status.startswith(("binding again", "live")),
              f"an edit made while binding was not bound again: {ob.overtone.status}")
        from overtone import setup_check
        check(session.get(ob).setup == setup_check.fingerprint([ob], scene), "the session is not of the edited data")
        check(session.get(ob) is not None, f"the bind did not finish: {ob.overtone.status}")
        check(np.abs(scenes.evaluated_positions(ob) - rig_only).max() > 1e-4,
              "no secondary motion after the bind finished")
        check(ob.overtone.status == "live", ob.overtone.status)
    finally:
        live.blocking_binds = lambda: bpy.app.background
    RESULTS.append({"name": f"play while binding: longest frame {1e3 * longest:.1f} ms",
                    "vertices": len(ob.data.vertices), "bind_s": 0.0, "peak": 0.0, "hold": 0.0, "residual": 0.0})


def _render_pairs(objects, prefix, frames, out_dir, camera):
    """Plays frames 1..max(frames) with Overtone live and renders each frame of ``frames`` twice
    with Workbench: with the secondary motion (``<prefix>-<frame>-overtone.png``) and the rig
    alone (the Overtone keys at value 0, ``-rig.png``)."""
    scene = bpy.context.scene
    cam_data = bpy.data.cameras.new("Cam")
    cam = bpy.data.objects.new("Cam", cam_data)
    scene.collection.objects.link(cam)
    cam.location, cam.rotation_euler = camera
    scene.camera = cam
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x, scene.render.resolution_y = 480, 480
    os.makedirs(out_dir, exist_ok=True)
    # A render mutes the live keys (live.on_render_init); these pictures want them as set here.
    for handlers, fn in live_module._RENDER_HANDLERS:
        getattr(bpy.app.handlers, handlers).remove(getattr(live_module, fn))
    for f in range(1, max(frames) + 1):
        scene.frame_set(f)
        if f not in frames:
            continue
        for label, value in (("overtone", 1.0), ("rig", 0.0)):
            for o in objects:
                shape_key.get(o).value = value
            scene.render.filepath = os.path.join(out_dir, f"{prefix}-{f:03d}-{label}.png")
            bpy.ops.render.render(write_still=True)
        for o in objects:
            shape_key.get(o).value = 1.0
    for handlers, fn in live_module._RENDER_HANDLERS:
        getattr(bpy.app.handlers, handlers).append(getattr(live_module, fn))


def test_a_library_override_of_a_linked_character_keeps_its_settings_and_shows_the_motion():
    """A shot links a rigged character from a library file and makes a library override of it
    (the usual way a shot uses an asset). Overtone added on the override: its settings are the
    shot's own (overridable) and survive saving and reopening the shot, and after reopening the
    live preview shows the motion on the override (the mesh is the library's, whose shape keys are
    not saved: the Overtone key is made again in memory)."""
    lib, shot_path = os.path.join(TMP, "override_lib.blend"), os.path.join(TMP, "override_shot.blend")
    scene = scenes.empty_scene()
    ob, rig = scenes.rigged_tube(rings=31, segments=16)
    col = bpy.data.collections.new("Character")
    scene.collection.children.link(col)
    for o in (ob, rig):
        for c in list(o.users_collection):
            c.objects.unlink(o)
        col.objects.link(o)
    bpy.ops.wm.save_as_mainfile(filepath=lib)
    scenes.empty_scene()
    with bpy.data.libraries.load(lib, link=True) as (_, dst):
        dst.collections = ["Character"]
    shot = bpy.context.scene
    inst = bpy.data.objects.new("Character", None)
    inst.instance_type = 'COLLECTION'
    inst.instance_collection = bpy.data.collections["Character"]
    shot.collection.objects.link(inst)
    bpy.data.collections["Character"].override_hierarchy_create(shot, bpy.context.view_layer, reference=inst)

    def override_tube():
        found = [o for o in bpy.data.objects if o.type == 'MESH' and o.override_library is not None]
        check(len(found) == 1, f"one overridden tube, got {[o.name for o in found]}")
        return found[0]

    tube = override_tube()
    check(tube.data.library is not None, "the override's mesh should be the library's (linked)")
    bpy.context.view_layer.objects.active = tube
    tube.select_set(True)
    tube.overtone.sidecar = os.path.join(TMP, "override.ovt")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, f"add on the override: {tube.overtone.status}")
    tube.overtone.damping = 0.3
    bpy.ops.wm.save_as_mainfile(filepath=shot_path)
    bpy.ops.wm.open_mainfile(filepath=shot_path)
    tube = override_tube()
    check(tube.overtone.enabled and abs(tube.overtone.damping - 0.3) < 1e-6,
          f"settings lost on reopening: enabled {tube.overtone.enabled}, damping {tube.overtone.damping}")
    shot = bpy.context.scene
    for f in range(1, 25):
        shot.frame_set(f)
    s = session.get(tube)
    check(s is not None and shape_key.get(tube) is not None, "no live preview on the reopened override")
    dg = bpy.context.evaluated_depsgraph_get()
    n = len(tube.data.vertices)
    shown = np.empty(3 * n)
    tube.evaluated_get(dg).data.vertices.foreach_get("co", shown)
    kb = shape_key.get(tube)
    kb.value = 0.0
    dg = bpy.context.evaluated_depsgraph_get()
    rig_only = np.empty(3 * n)
    tube.evaluated_get(dg).data.vertices.foreach_get("co", rig_only)
    kb.value = 1.0
    u = s.u[s.binding.part_of(tube).slice]
    world = np.array(tube.matrix_world)[:3, :3]
    diff = (shown - rig_only).reshape(n, 3) @ world.T
    peak = np.abs(u).max()
    check(peak > 1e-3, f"the tube should move ({peak:.2e})")
    err = np.abs(diff - u).max()
    check(err <= 1e-4 * max(peak, 1.0), f"the override shows {err:.2e} away from the simulated motion")
    print(f"    library override: settings kept after reopening (damping 0.3), motion shown on the override "
          f"(peak {peak:.3f}, shown to {err:.1e})")

def test_render_workbench_frames():
    """Renders frames of the Mixamo-like CesiumMan, the rotated scale-100 tube and the two-mesh
    character with Workbench, with Overtone and the rig alone, to $OVERTONE_RENDER_DIR for a look
    (skipped without it)."""
    out_dir = os.environ.get("OVERTONE_RENDER_DIR")
    if not out_dir:
        raise Skip("set OVERTONE_RENDER_DIR to render")
    frames = (8, 12, 16, 22, 30, HOLD_FRAME)
    ob, arm = character("mixamo")
    ob.overtone.sidecar = os.path.join(TMP, "render.ovt")
    ob.overtone.use_lattice_resolution = True
    ob.overtone.lattice_resolution = 32
    bpy.context.scene.frame_set(1)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    _render_pairs([ob], "cesium-mixamo", frames, out_dir, ((0.0, -4.5, 1.0), (1.45, 0.0, 0.0)))
    ob, rig = tube("scale100-rotated")
    ob.overtone.sidecar = os.path.join(TMP, "render-tube.ovt")
    ob.overtone.use_lattice_resolution = True
    ob.overtone.lattice_resolution = 32
    bpy.context.scene.frame_set(1)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    centre = np.array(rig.matrix_world)[:3, 3]
    _render_pairs([ob], "tube-scale100-rotated", frames, out_dir,
                  (tuple(centre + np.array([0.0, -9.0, 0.5])), (1.5, 0.0, 0.0)))
    scene, ob, sleeve, rig = two_meshes()
    for o in (ob, sleeve):
        o.overtone.sidecar = os.path.join(TMP, "render-two.ovt")
        o.overtone.use_lattice_resolution = True
        o.overtone.lattice_resolution = 32
    scene.frame_set(1)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add failed")
    # From the side: the root swings about x.
    _render_pairs([ob, sleeve], "two-meshes", frames, out_dir, ((8.0, 0.0, 1.5), (1.5, 0.0, np.pi / 2)))


def table():
    lines = ["| case | vertices | bind s | peak / diag | hold (1 s) / diag | vs | bake vs live / diag | residual |",
             "|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in RESULTS:
        vs = (f"curve {r['vs'][1]:.2%}, field {r['field']:.1%} of peak vs {r['vs'][0]}"
              if "vs" in r else "")
        bake = f"{r['bake']:.1e}" if r.get("bake") is not None else ""
        lines.append(f"| {r['name']} | {r['vertices']} | {r['bind_s']:.2f} | {r['peak']:.4f} | {r['hold']:.1e} | "
                     f"{vs} | {bake} | {r['residual']:.1e} |")
    return "\n".join(lines)


if __name__ == "__main__":
    runner.main(globals(), skip=(Skip,), finish=lambda: print(table()))
