"""Headless Blender tests of the add-on's data safety (run by scripts/test_blender.sh): paths the
add-on may not write, a cancelled modal bake, and undo after Add, Bake and Remove.

Prints a table of the clashing-path cases (the target's checksum before and after) and ends with
``os._exit``."""

import hashlib
import glob
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.environ["OVERTONE_ADDON_DIR"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import overtone  # noqa: E402
import runner  # noqa: E402
import scenes  # noqa: E402
from overtone import bake, cache_modifier, live, pc2, session, shape_key  # noqa: E402

TMP = tempfile.mkdtemp(prefix="overtone-blender-safety-")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def digest(path):
    if os.path.isdir(path):
        return "<folder>"
    with open(path, "rb") as f:
        return hashlib.blake2b(f.read(), digest_size=4).hexdigest()


def tube(name, frames=12):
    session.drop_all()
    scene = scenes.empty_scene()
    scene.frame_end = frames
    ob, rig = scenes.rigged_tube(rings=21, segments=12)
    ob.overtone.sidecar = os.path.join(TMP, f"{name}.ovt")
    ob.overtone.cache_file = os.path.join(TMP, f"{name}.pc2")
    return scene, ob


def object_state(ob):
    """What must agree after a cancel or an undo: shape keys, modifiers, settings."""
    keys = ob.data.shape_keys
    mods = []
    for m in ob.modifiers:
        entry = [m.name, m.type, m.show_viewport, m.show_render]
        if m.type == 'MESH_CACHE':
            entry += [m.filepath, m.frame_start, m.cache_format, m.deform_mode]
        mods.append(tuple(entry))
    p = ob.overtone
    return {
        "shape_keys": None if keys is None else [(k.name, round(k.value, 6)) for k in keys.key_blocks],
        "modifiers": mods,
        "settings": (p.enabled, p.live_preview, p.bound_vertex_count, p.cache_file, p.sidecar, p.created_basis),
    }


def expect_refused(op, needle):
    try:
        op()
    except RuntimeError as e:
        check(needle in str(e), f"error message {str(e)!r} lacks {needle!r}")
        return str(e).strip().splitlines()[-1]
    raise AssertionError(f"expected an error containing {needle!r}, the operator succeeded")


def _png(path):
    img = bpy.data.images.new("probe", 4, 4)
    img.filepath_raw = path
    img.file_format = 'PNG'
    img.save()
    bpy.data.images.remove(img)


def test_paths_the_addon_may_not_write():
    """Bake's point cache and Add's sidecar onto protected files: each refused with a report, the
    target byte-identical, the object unchanged."""
    scene, ob = tube("paths")
    work = os.path.join(TMP, "paths")
    os.makedirs(os.path.join(work, "sub"))
    blend = os.path.join(work, "shot.blend")
    # A library to link, an image in use, another bound object with a cache, a Mesh Cache file.
    lib_scene_ob = bpy.data.objects.new("LibEmpty", None)
    scene.collection.objects.link(lib_scene_ob)
    library = os.path.join(work, "props.blend")
    bpy.data.libraries.write(library, {lib_scene_ob})
    with bpy.data.libraries.load(library, link=True) as (src, dst):
        dst.objects = ["LibEmpty"]
    image = os.path.join(work, "albedo.png")
    _png(image)
    img = bpy.data.images.load(image)
    img.use_fake_user = True
    other_ob, _ = scenes.rigged_tube(rings=11, segments=8)
    other_ob.name = "Other"
    other_ob.overtone.sidecar = os.path.join(work, "other.ovt")
    other_ob.overtone.cache_file = os.path.join(work, "other.pc2")
    scenes._select_only([other_ob], other_ob)
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add on the other object")
    pc2.write_pc2(os.path.join(work, "other.pc2"), np.zeros((2, len(other_ob.data.vertices), 3)), 1)
    played = os.path.join(work, "played.pc2")
    pc2.write_pc2(played, np.zeros((2, len(other_ob.data.vertices), 3)), 1)
    mc = other_ob.modifiers.new("Imported Cache", 'MESH_CACHE')
    mc.filepath = played
    foreign = os.path.join(work, "model.obj")
    with open(foreign, "w") as f:
        f.write("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    ob = bpy.data.objects["Tube"]
    scenes._select_only([ob], ob)
    os.symlink(blend, os.path.join(work, "link.pc2"))
    os.link(image, os.path.join(work, "hard.pc2"))
    ob.overtone.sidecar = os.path.join(work, "tube.ovt")
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add on the tube")
    # The other object's precompute as written: <base>.<hash>.ovt (kept sidecars).
    kept_sidecar = sorted(glob.glob(os.path.join(work, "other.*.ovt")))[0]
    own_sidecar = sorted(glob.glob(os.path.join(work, "tube.*.ovt")))[0]
    cases = [
        ("the .blend itself", blend, blend, "destroy it"),
        ("the .blend through sub/..", os.path.join(work, "sub", "..", "shot.blend"), blend, "destroy it"),
        ("the .blend through a symlink", os.path.join(work, "link.pc2"), blend, "destroy it"),
        ("//-relative .blend", "//shot.blend", blend, "destroy it"),
        ("a linked library", library, library, "linked library"),
        ("an image in use", image, image, "the image"),
        ("an image through a hard link", os.path.join(work, "hard.pc2"), image, "the image"),
        ("another object's cache", os.path.join(work, "other.pc2"), os.path.join(work, "other.pc2"), "of 'Other'"),
        ("another object's sidecar", kept_sidecar, kept_sidecar, "of 'Other'"),
        ("a Mesh Cache modifier's file", played, played, "Mesh Cache modifier"),
        ("this object's sidecar", own_sidecar, own_sidecar, "of this object"),
        ("an existing folder", os.path.join(work, "sub"), os.path.join(work, "sub"), "is a folder"),
        ("a foreign file (OBJ)", foreign, foreign, "not a PC2 point cache"),
    ]
    print("    | operator | path | target checksum before | after | report |")
    for label, value, target, needle in cases:
        before_sum, before_state = digest(target), object_state(ob)
        ob.overtone.cache_file = value
        msg = expect_refused(lambda: bpy.ops.object.overtone_bake(), needle)
        after_sum = digest(target)
        print(f"    | bake | {label} | {before_sum} | {after_sum} | {msg} |")
        check(before_sum == after_sum, f"{label}: the target changed")
        ob.overtone.cache_file = before_state["settings"][3]
        check(object_state(ob) == before_state, f"{label}: the object changed")
        check(not any(m.type == 'MESH_CACHE' for m in ob.modifiers), f"{label}: a modifier was added")
    # The sidecar (written by Add) onto the .blend, the image or another object's cache. The
    # sidecar path is a base name: the precompute goes to <base>.<hash>.ovt beside it (kept
    # sidecars), so these targets cannot be overwritten whether or not Add refuses the base.
    for label, value, target, needle in [cases[0], cases[5], cases[7], cases[12]]:
        before_sum = digest(target)
        ob.overtone.sidecar = value
        try:
            bpy.ops.object.overtone_add()
            msg = "accepted: the precompute went to a keyed file beside it"
        except RuntimeError as e:
            msg = str(e).strip()
        after_sum = digest(target)
        print(f"    | add (sidecar) | {label} | {before_sum} | {after_sum} | {msg} |")
        check(before_sum == after_sum, f"sidecar {label}: the target changed")
        bpy.ops.object.overtone_remove()
        ob.overtone.sidecar = os.path.join(work, "tube.ovt")
        check(bpy.ops.object.overtone_add() == {'FINISHED'}, f"sidecar {label}: add again")
    # A good path still bakes, and re-baking over the earlier cache is silent.
    ob.overtone.cache_file = os.path.join(work, "tube.pc2")
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake to a good path")
    ob.overtone.live_preview = True
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "re-bake over the earlier cache")
    # Alembic and USD bakes get the same checks (issue 30: they skipped them): an Alembic file
    # another object's Mesh Sequence Cache plays, files of another kind under the format's
    # extension, the .blend through a symlink; then a good path, and a re-bake over the object's
    # own Alembic/USD cache (which its own Mesh Sequence Cache reads) stays silent.
    from overtone import cache_formats
    counts, indices = cache_formats.topology(other_ob.data)
    imported = os.path.join(work, "imported.abc")
    cache_formats.write(imported, 'ABC', "Other", np.zeros((2, len(other_ob.data.vertices), 3)),
                        counts, indices, 24.0, 1)
    before = set(bpy.data.cache_files)
    bpy.ops.cachefile.open(filepath=imported)
    seq = other_ob.modifiers.new("Imported Alembic", 'MESH_SEQUENCE_CACHE')
    seq.cache_file = next(c for c in bpy.data.cache_files if c not in before)
    not_abc, not_usd = os.path.join(work, "notes.abc"), os.path.join(work, "layout.usda")
    for path in (not_abc, not_usd):
        with open(path, "w") as f:
            f.write("a file of another kind\n")
    os.symlink(blend, os.path.join(work, "link.usda"))
    ob.overtone.live_preview = True
    for fmt, label, value, target, needle in [
            ('ABC', "another object's Mesh Sequence Cache file", imported, imported, "cache file (Alembic/USD)"),
            ('ABC', "a file of another kind named .abc", not_abc, not_abc, "not an Alembic (Ogawa) cache"),
            ('USD', "a file of another kind named .usda", not_usd, not_usd, "not a USD file"),
            ('USD', "the .blend through a .usda symlink", os.path.join(work, "link.usda"), blend, "destroy it")]:
        ob.overtone.cache_format = fmt
        before_sum, before_state = digest(target), object_state(ob)
        ob.overtone.cache_file = value
        msg = expect_refused(lambda: bpy.ops.object.overtone_bake(), needle)
        after_sum = digest(target)
        print(f"    | bake {fmt} | {label} | {before_sum} | {after_sum} | {msg} |")
        check(before_sum == after_sum, f"{fmt} {label}: the target changed")
        ob.overtone.cache_file = before_state["settings"][3]
        check(not any(m.type == 'MESH_SEQUENCE_CACHE' for m in ob.modifiers), f"{label}: a modifier was added")
    for fmt, name in (('ABC', "tube.abc"), ('USD', "tube.usda")):
        ob.overtone.cache_format = fmt
        ob.overtone.cache_file = os.path.join(work, name)
        for attempt in ("bake", "re-bake"):
            ob.overtone.live_preview = True
            check(bpy.ops.object.overtone_bake() == {'FINISHED'}, f"{fmt} {attempt} to a good path")
    ob.overtone.cache_format = 'PC2'


def test_cancelled_modal_bake_keeps_the_previous_cache_and_modifier():
    scene, ob = tube("cancel", frames=20)
    bpy.ops.object.overtone_add()
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "first bake")
    path = bpy.path.abspath(ob.overtone.cache_file)
    previous = open(path, "rb").read()
    ob.overtone.frequency *= 0.5  # a second bake would differ
    ob.overtone.live_preview = True
    scene.frame_set(7)
    before = object_state(ob)
    job = bake.BakeJob(ob, scene)
    modal = bake.ModalBake(job, budget=1e-4, on_progress=lambda d, t: None)
    answers = [modal.handle('TIMER') for _ in range(5)] + [modal.handle('MOUSEMOVE')]
    job.worker.wait()  # the frames sampled so far stepped and streamed on the bake's worker thread
    check(all(a == {'RUNNING_MODAL'} for a in answers) and 0 < job.done < job.total,
          f"the modal bake did not advance frame by frame ({job.done}/{job.total})")
    check(live._replaying, "the live preview must stay quiet while the bake runs")
    # The PC2 is streamed: no frame array is held, and the frames baked so far are in a
    # temporary file beside the cache (flushed: header + frames x points x 12 bytes).
    n = len(ob.data.vertices)
    job.streams[0].file.flush()
    partial = [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".pc2.tmp")]
    sizes = [os.path.getsize(os.path.join(os.path.dirname(path), f)) for f in partial]
    check(not hasattr(job, "frames") and sizes == [32 + 12 * n * job.done],
          f"the bake holds its frames instead of streaming them: {partial} {sizes}, {job.done} frames done")
    check(modal.handle('ESC') == {'CANCELLED'}, "Esc did not cancel")
    check(open(path, "rb").read() == previous, "a cancelled bake changed the previous cache")
    check(object_state(ob) == before, f"a cancelled bake changed the object:\n{before}\n{object_state(ob)}")
    check(scene.frame_current == 7 and not live._replaying, "frame or live state not restored")
    stray = [f for f in os.listdir(TMP) if "tmp" in f]
    check(not stray, f"temporary files left: {stray}")
    print(f"    cancelled after {job.done} of {job.total} frames: cache byte-identical "
          f"({len(previous)} bytes), modifier and shape key as before")
    # Blender stopping the modal operator itself (a file opened, the window closed) is an Esc:
    # the operator's cancel() leaves the previous cache and deletes the partial one.
    from overtone.operators import OBJECT_OT_overtone_bake

    class _BakeOperator:
        cancel = OBJECT_OT_overtone_bake.cancel
        _end = OBJECT_OT_overtone_bake._end
        _timer = None

    op = _BakeOperator()
    op._modal = bake.ModalBake(bake.BakeJob(ob, scene), budget=1e-4)
    for _ in range(3):
        op._modal.handle('TIMER')
    op._modal.job.worker.wait()
    check(0 < op._modal.job.done < op._modal.job.total, "the bake should be part-way")
    op.cancel(bpy.context)
    stray = [f for f in os.listdir(TMP) if "tmp" in f]
    check(op._modal.cancelled and open(path, "rb").read() == previous and not stray and not live._replaying,
          f"the operator's cancel(): cancelled {op._modal.cancelled}, temporary files {stray}")
    # A modal bake run to the end replaces the cache and updates the modifier. It steps on its
    # worker thread and leaves the timeline on the user's frame after every tick; its cache is
    # byte-identical to the one a bake on the calling thread writes.
    scene.frame_set(7)
    modal = bake.ModalBake(bake.BakeJob(ob, scene), budget=1e-3)
    for _ in range(10000):
        answer = modal.handle('TIMER')
        check(scene.frame_current == 7, f"a bake tick left the timeline on frame {scene.frame_current}")
        if answer != {'RUNNING_MODAL'}:
            break
        modal.job.worker.wait(0.01)
    check(answer == {'FINISHED'} and modal.result["frames"] == 20, f"modal bake did not finish: {answer}")
    threaded = open(path, "rb").read()
    check(threaded != previous, "the finished modal bake did not write the new cache")
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "the bake on the calling thread")
    check(open(path, "rb").read() == threaded, "the worker thread's bake differs from the calling thread's")
    check(cache_modifier.get(ob) is not None and not ob.overtone.live_preview, "modifier after a modal bake")


def test_alembic_and_usd_bakes_stream_their_frames_and_a_cancel_keeps_the_previous_cache():
    """Issue 30, delivery 2 for every format: an Alembic or USD bake writes each frame into its
    temporary file as it is baked (the job keeps two offsets a frame for Alembic, nothing for
    USD), Esc keeps the previous cache byte-identical, and a modal bake run to the end writes the
    bytes a bake on the calling thread writes."""
    for fmt, ext in (('ABC', ".abc"), ('USD', ".usda")):
        scene, ob = tube(f"stream-{fmt}", frames=20)
        ob.overtone.cache_format = fmt
        ob.overtone.cache_file = os.path.join(TMP, f"stream-{fmt}{ext}")
        check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add")
        check(bpy.ops.object.overtone_bake() == {'FINISHED'}, f"first {fmt} bake")
        path = ob.overtone.cache_file
        previous = open(path, "rb").read()
        ob.overtone.frequency *= 0.5  # a second bake would differ
        ob.overtone.live_preview = True
        job = bake.BakeJob(ob, scene)
        modal = bake.ModalBake(job, budget=1e-4, on_progress=lambda d, t: None)
        for _ in range(5):
            modal.handle('TIMER')
        job.worker.wait()
        check(0 < job.done < job.total, f"{fmt}: the bake should be part-way ({job.done}/{job.total})")
        stream = job.streams[0]
        stream.file.flush()
        partial = [f for f in os.listdir(TMP) if f.endswith(f"{ext}.tmp")]
        check(len(partial) == 1, f"{fmt}: temporary files {partial}")
        size = os.path.getsize(os.path.join(TMP, partial[0]))
        n = len(ob.data.vertices)
        if fmt == 'ABC':
            # Header 16 + version and library data 2 x 12; per frame its bounds (8 + 16 + 48) and
            # P (8 + 16 + 12 n) data blocks, nothing else until the last frame.
            check(size == 40 + job.done * (96 + 12 * n) and len(stream.positions) == 2 * job.done,
                  f"ABC: {size} bytes for {job.done} frames of {n} points")
        else:
            text = open(os.path.join(TMP, partial[0])).read()
            samples = [line for line in text.splitlines() if line.startswith("        ") and ": [(" in line]
            check(len(samples) == job.done and samples[-1].count("(") == n,
                  f"USD: {len(samples)} time samples written for {job.done} frames")
        check(not hasattr(job, "frames"), f"{fmt}: the bake holds its frames")
        check(modal.handle('ESC') == {'CANCELLED'}, "Esc did not cancel")
        stray = [f for f in os.listdir(TMP) if "tmp" in f]
        check(open(path, "rb").read() == previous and not stray,
              f"{fmt}: a cancelled bake changed the previous cache or left {stray}")
        print(f"    {fmt}: cancelled after {job.done} of {job.total} frames ({size} bytes streamed), "
              f"previous cache byte-identical")
        modal = bake.ModalBake(bake.BakeJob(ob, scene), budget=1e-3)
        for _ in range(10000):
            answer = modal.handle('TIMER')
            if answer != {'RUNNING_MODAL'}:
                break
            modal.job.worker.wait(0.01)
        check(answer == {'FINISHED'}, f"{fmt}: the modal bake did not finish: {answer}")
        threaded = open(path, "rb").read()
        check(threaded != previous, f"{fmt}: the finished bake did not write the new cache")
        ob.overtone.live_preview = True
        check(bpy.ops.object.overtone_bake() == {'FINISHED'}, f"{fmt}: the bake on the calling thread")
        check(open(path, "rb").read() == threaded, f"{fmt}: the worker thread's bake differs")


def test_a_step_failing_on_the_worker_thread_is_raised_on_the_ui_thread():
    """A bake from the UI steps on a worker thread: a step that fails there (the library
    refusing a frame) is raised by the next tick on the UI thread, the modal bake cancels, the
    previous cache stays byte-identical and no temporary file is left; the worker takes no more
    work after a failure."""
    from overtone import step_worker

    worker = step_worker.StepWorker(limit=2)
    worker.submit(lambda: 1 / 0)
    worker.wait()
    try:
        worker.check()
        raise AssertionError("the worker's failure was lost")
    except ZeroDivisionError:
        pass
    try:
        worker.submit(print, "after the failure")
        raise AssertionError("a stopped worker took a job")
    except RuntimeError:
        pass
    worker.close()
    scene, ob = tube("workerfail", frames=20)
    bpy.ops.object.overtone_add()
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "first bake")
    path = bpy.path.abspath(ob.overtone.cache_file)
    previous = open(path, "rb").read()
    ob.overtone.live_preview = True
    job = bake.BakeJob(ob, scene)
    advance = job.session.advance

    def failing(frame, *args):
        if frame == scene.frame_start + 6:
            raise session.SettingsError("refused frame (test)")
        advance(frame, *args)

    job.session.advance = failing
    modal = bake.ModalBake(job, budget=1e-4)
    raised = None
    for _ in range(2000):
        try:
            if modal.handle('TIMER') != {'RUNNING_MODAL'}:
                break
        except session.SettingsError as e:
            raised = e
            break
        job.worker.wait(0.01)
    check(raised is not None and "refused frame" in str(raised), f"the worker's failure did not reach the UI: {raised}")
    check(open(path, "rb").read() == previous, "a failed bake changed the previous cache")
    stray = [f for f in os.listdir(TMP) if "tmp" in f]
    check(not stray and not live._replaying, f"temporary files {stray}, live preview quiet {live._replaying}")
    print(f"    failed at frame {scene.frame_start + 6} on the worker: raised on the UI thread, previous cache kept")


def _undo():
    bpy.ops.ed.undo()
    return bpy.data.objects["Tube"]


def _consistent(ob, label, bound, baked):
    """Shape key, modifiers and settings agree with each other."""
    p = ob.overtone
    kb = shape_key.get(ob)
    check(p.enabled == bound, f"{label}: enabled is {p.enabled}")
    check((kb is not None) == bound, f"{label}: shape key {'missing' if bound else 'left over'}")
    check((p.bound_vertex_count == len(ob.data.vertices)) == bound, f"{label}: bound count {p.bound_vertex_count}")
    m = cache_modifier.get(ob)
    check((m is not None) == baked, f"{label}: cache modifier {'missing' if baked else 'left over'}")
    if bound:
        check(kb.value == (1.0 if p.live_preview else 0.0), f"{label}: key value {kb.value} vs live {p.live_preview}")
    if m is not None:
        check(m.show_viewport == (not p.live_preview), f"{label}: modifier on while live preview is on")
    check(session.get(ob) is None, f"{label}: a stale session survived the undo")


def test_undo_after_add_bake_and_remove():
    """Ctrl-Z in headless bpy (the 4.5.15 wheel): operators called from Python push no undo step
    of their own (``ed.undo`` right after ``overtone_add`` fails its poll: one step only), so each
    test step pushes one with ``ed.undo_push`` as the UI does after an operator with the UNDO
    flag, then ``ed.undo`` (no context override needed) goes back. Python references are
    re-fetched after every undo (memfile undo rebuilds the datablocks)."""
    scene, ob = tube("undo")
    bpy.ops.ed.undo_push(message="start")
    rig_only = scenes.evaluated_positions(ob)
    # Add, then undo: no binding at all.
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add")
    bpy.ops.ed.undo_push(message="Add Overtone")
    ob = _undo()
    _consistent(ob, "undo Add", bound=False, baked=False)
    print("    undo after Add: no shape key, no modifier, settings unbound")
    # Add again (works after the undo), bake, undo the bake: live preview as before the bake.
    bpy.context.view_layer.objects.active = ob
    check(bpy.ops.object.overtone_add() == {'FINISHED'}, "add after undo")
    bpy.ops.ed.undo_push(message="Add Overtone")
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake")
    bpy.ops.ed.undo_push(message="Bake Overtone")
    ob = _undo()
    _consistent(ob, "undo Bake", bound=True, baked=False)
    check(ob.overtone.live_preview, "undo Bake: live preview not back on")
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(2)
    check(session.get(ob) is not None, "the live preview did not rebuild its session after undo")
    print("    undo after Bake: live preview back, no cache modifier; the session rebuilds on the next frame")
    # A later bake works; remove, undo the remove: baked state back, and Remove works again.
    bpy.context.view_layer.objects.active = ob
    check(bpy.ops.object.overtone_bake() == {'FINISHED'}, "bake after undo")
    bpy.ops.ed.undo_push(message="Bake Overtone")
    check(bpy.ops.object.overtone_remove() == {'FINISHED'}, "remove")
    bpy.ops.ed.undo_push(message="Remove Overtone")
    ob = _undo()
    _consistent(ob, "undo Remove", bound=True, baked=True)
    scene = bpy.context.scene
    scene.frame_set(5)
    baked = scenes.evaluated_positions(ob)
    check(np.abs(baked - rig_only).max() > 1e-5, "undo Remove: the baked cache does not play")
    print("    undo after Remove: shape key, cache modifier and settings back; the cache plays")
    bpy.context.view_layer.objects.active = ob
    check(bpy.ops.object.overtone_remove() == {'FINISHED'}, "remove after undo")
    _consistent(ob, "remove after undo", bound=False, baked=False)
    # Redo brings the removal back undone, consistently too.
    bpy.ops.ed.undo_push(message="Remove Overtone")
    ob = _undo()
    _consistent(ob, "undo second Remove", bound=True, baked=True)
    print("    remove after undo works; undoing it again is consistent")


if __name__ == "__main__":
    runner.main(globals(), finish=lambda: shutil.rmtree(TMP, ignore_errors=True))
