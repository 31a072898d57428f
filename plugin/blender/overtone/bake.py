"""Bake: simulate the scene's frame range (or the object's own) and write, for every object of the body, a cache of
final object-space positions (PC2 by default, Alembic or USD as options), played right after its
Armature modifier (a Mesh Cache modifier for PC2, a Mesh Sequence Cache modifier otherwise).

Per frame an object's cache holds ``skin(X) + L(t)⁻¹ u`` (``skin`` the Armature modifier's own
output in object space, ``L(t)`` the linear part of the object's world matrix at that frame,
``u`` the world displacement) — exactly what the live preview's shape key produces, up to
float32 rounding. In an unsaved file a ``//`` cache path goes to Blender's temporary folder
(with a warning); saving the file moves it next to the .blend (``saving.move_temporary_caches``).

A bake is a :class:`BakeJob`: from a script it steps frame by frame on the calling thread
(:meth:`BakeJob.step`); from the UI the modal operator calls :meth:`BakeJob.tick`, which reads the
next frames' rig and Armature output on the UI thread for a few milliseconds and leaves the
physics and the writing to a worker thread (``step_worker``), so that the viewport stays usable
and Esc stops it between ticks. Both write the same bytes. Every format is streamed frame by
frame into a temporary file beside its cache (``frame_stream``: memory flat in the frame count);
until the last frame is simulated no cache is replaced and the cache modifiers are not touched; a cancelled or failed bake restores the frame, the
modifiers' visibility and the shape key values, and leaves the previous cache files and modifiers
exactly as they were.
"""

import time

import bpy
import numpy as np

from . import cache_formats, cache_modifier, catch_up, live, paths, pc2, session, shape_key, step_worker
from .rig_binding import BindError, affine_inverse


def _evaluated_positions(ob, depsgraph, n, out):
    me = ob.evaluated_get(depsgraph).data
    if len(me.vertices) != n:
        raise BindError(f"the Armature modifier of '{ob.name}' outputs {len(me.vertices)} vertices, "
                        f"expected {n}")
    me.vertices.foreach_get("co", out.reshape(-1))
    return out


def frame_range(ob, scene):
    """The frames a bake of ``ob`` covers: the scene's range, or the object's own (Cache
    sub-panel) when *Scene Frame Range* is off."""
    p = ob.overtone
    if p.use_scene_frame_range:
        return scene.frame_start, scene.frame_end
    return p.bake_frame_start, p.bake_frame_end


def bodies(scene):
    """One object per Overtone body of ``scene`` (its first member), in the scene's order."""
    seen, out = set(), []
    for o in scene.objects:
        if o.type != 'MESH' or not o.overtone.enabled:
            continue
        key = o.overtone.body or o.name
        if key not in seen:
            seen.add(key)
            out.append(session.members(scene, o)[0])
    return out


class BakeJob:
    """One bake of the body of ``ob`` over its frame range: :meth:`step` simulates one frame and
    streams it into each object's cache file (a temporary file beside it, any format), :meth:`finish` completes every object's cache (atomically) and sets up its modifier,
    :meth:`cancel` deletes the temporary files and undoes the temporary changes. Construction
    checks the paths and binds; it changes nothing if it raises."""

    def __init__(self, ob, scene, from_cache=False):
        self.objects = objects = session.members(scene, ob)
        self.targets, self.temporary, self.formats = [], [], []
        for o in objects:
            if not o.overtone.cache_file:
                o.overtone.cache_file = f"//overtone/{bpy.path.clean_name(o.name)}.pc2"
            path = session.resolve_path(o.overtone.cache_file, "point cache", allow_temp=True)
            fmt = o.overtone.cache_format
            if fmt != 'PC2':
                cache_formats.check_path(path, fmt)
            paths.check_output(path, "point cache", o, paths.FORMAT_KIND[fmt])
            if o.overtone.cache_file.startswith("//") and not bpy.data.filepath:
                self.temporary.append(o.name)
            self.targets.append(path)
            self.formats.append(fmt)
        self.path = self.targets[objects.index(ob)]
        self.start, self.end = frame_range(objects[0], scene)
        if self.end < self.start:
            what = "scene's" if objects[0].overtone.use_scene_frame_range else "bake's"
            raise session.SettingsError(f"the {what} frame range {self.start}..{self.end} is empty")
        self.ob, self.scene = ob, scene
        self.frame0 = scene.frame_current
        # Current Cache to Bake: the live preview's played frames instead of a new simulation
        # (each checked against the rig and controls it was played with, as playback does).
        self.from_cache = from_cache
        if from_cache:
            s = session.get(ob)
            missing = [] if s is None or not s.matches(objects) else \
                [f for f in range(self.start, self.end + 1) if f not in s.cache]
            if s is None or not s.matches(objects) or s.setup_outdated or missing:
                what = (f"frames {missing[0]}..{missing[-1]} are not" if missing else "nothing is")
                raise session.SettingsError(f"the live cache does not cover frames {self.start}..{self.end} "
                                            f"({what} cached): play the range first, or Bake")
            # Edits not yet checked (the check waits for a pause) count too.
            from . import setup_check
            what = setup_check.changed(s.setup, setup_check.fingerprint(objects, scene))
            if what:
                raise session.SettingsError(f"{setup_check.words(what)} changed since the frames were played: "
                                            "Rebind and play the range again, or Bake")
            self.session = s
        else:
            self.session = s = session.create(objects, scene, bpy.context.evaluated_depsgraph_get())
        b = s.binding
        self.saved_vis, self.saved_keys = [], []
        for o, p in zip(objects, b.parts):
            self.saved_vis += [(m, m.show_viewport) for m in o.modifiers[p.modifier_index + 1:]]
            kb = shape_key.get(o)
            if kb is not None:
                self.saved_keys.append((kb, kb.value))
        # Every cache is streamed to its temporary file frame by frame (one frame in memory per
        # object, whatever the format): the bake's memory does not grow with its length.
        fps = scene.render.fps / scene.render.fps_base
        self.streams = []
        try:
            for o, p, path, fmt in zip(objects, b.parts, self.targets, self.formats):
                if fmt == 'PC2':
                    self.streams.append(pc2.Pc2Stream(path, p.n, self.total, self.start, 1.0))
                else:
                    counts, indices = cache_formats.topology(o.data)
                    self.streams.append(cache_formats.stream(path, fmt, o.name, p.n, self.total, counts,
                                                             indices, fps, self.start))
        except BaseException:
            self._abort_streams()
            if not from_cache:
                session.drop(ob)
            raise
        self.worker = None  # the worker thread of tick()
        self.sampled = 0  # frames handed to it
        self.done = 0
        self.t0 = time.perf_counter()
        self.step_s = 0.0
        self.open = True
        live._replaying = True
        for m, _ in self.saved_vis:
            m.show_viewport = False
        for kb, _ in self.saved_keys:
            kb.value = 0.0

    @property
    def total(self):
        return self.end - self.start + 1

    @property
    def finished(self):
        return self.done == self.total

    def _sample(self, f):
        """Moves the timeline to frame ``f`` and reads what its step needs (UI thread): the rig
        (``Session.sample``; None for Current Cache to Bake, which shows the cached frame here),
        and per object the Armature modifier's output and the world-to-object linear part."""
        s = self.session
        self.scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        rig = None
        if self.from_cache:
            if not s.show_cached(self.objects, dg, f):
                raise session.SettingsError(f"frame {f} of the live cache is outdated (the rig or a keyed "
                                            "setting changed since it was played): play the range again, or Bake")
        else:
            rig = s.sample(self.objects, dg)
        meshes = []
        for o, p in zip(self.objects, s.binding.parts):
            mo = np.array(o.evaluated_get(dg).matrix_world, dtype=np.float64)
            meshes.append((_evaluated_positions(o, dg, p.n, np.empty((p.n, 3), dtype=np.float32)),
                           affine_inverse(mo)[:3, :3]))
        return rig, meshes

    def _advance(self, i, f, sampled):
        """Steps frame ``f`` (the ``i``-th of the bake) from what :meth:`_sample` read and streams
        each object's positions; touches no ``bpy`` data (the worker thread of :meth:`tick`)."""
        s = self.session
        rig, meshes = sampled
        t = time.perf_counter()
        if rig is not None:
            if i == 0:
                s.restart(f, *rig)
            else:
                s.advance(f, *rig)
        self.step_s += time.perf_counter() - t
        for p, (buf, world_to_object), stream in zip(s.binding.parts, meshes, self.streams):
            buf += (s.u[p.slice] @ world_to_object.T).astype(np.float32)
            stream.push(buf)
        self.done += 1

    def step(self):
        """Simulates the next frame on the calling thread; returns ``(done, total)``."""
        if self.worker is not None:
            raise RuntimeError("this bake runs on its worker thread (tick)")
        i = self.done
        self._advance(i, self.start + i, self._sample(self.start + i))
        return self.done, self.total

    def tick(self, budget=0.02):
        """The bake off the UI thread: samples the next frames for up to ``budget`` seconds (at
        least one while the worker has room) and queues their steps and writes on the worker
        thread; the timeline ends the tick on the frame it started on (the user's). Returns
        ``(done, total)``, raising what a step raised. Current Cache to Bake, which simulates
        nothing, writes its frames here."""
        if self.from_cache:
            t = time.perf_counter()
            while not self.finished and time.perf_counter() - t < budget:
                self.step()
            return self.done, self.total
        if self.worker is None:
            self.worker = step_worker.StepWorker(limit=catch_up.AHEAD, name="overtone-bake")
        self.worker.check()
        t0 = time.perf_counter()
        user = self.scene.frame_current
        try:
            while self.sampled < self.total and self.worker.room > 0:
                i = self.sampled
                self.worker.submit(self._advance, i, self.start + i, self._sample(self.start + i))
                self.sampled += 1
                if time.perf_counter() - t0 >= budget:
                    break
        finally:
            if self.scene.frame_current != user:
                self.scene.frame_set(user)
        self.worker.check()
        return self.done, self.total

    def _stop_worker(self):
        if self.worker is not None:
            self.worker.close()

    def _restore(self):
        for m, vis in self.saved_vis:
            m.show_viewport = vis
        for kb, value in self.saved_keys:
            kb.value = value
        self.scene.frame_set(self.frame0)
        live._replaying = False
        self.open = False

    def finish(self):
        """Writes every object's cache (atomically), then points its modifier at it; returns a
        dict of what the bake did."""
        if self.worker is not None:
            self.worker.wait()
            self._stop_worker()
        if not self.finished:
            raise RuntimeError(f"bake finished after {self.done} of {self.total} frames")
        try:
            # Every cache complete on disk first (each stream's tail written and synced), then the
            # streams renamed over their caches: a failure before the renames (a full disk)
            # replaces none of the caches.
            for stream in self.streams:
                stream.sync()
            for stream in self.streams:
                stream.commit()
        except BaseException:
            self.cancel()
            raise
        self._restore()
        for o, p, path, fmt in zip(self.objects, self.session.binding.parts, self.targets, self.formats):
            temp = o.name in self.temporary
            if fmt == 'PC2':
                cache_modifier.ensure(o, p.modifier_index, path if temp else o.overtone.cache_file, self.start)
            else:
                cache_modifier.ensure_sequence(o, p.modifier_index, path if temp else o.overtone.cache_file,
                                               cache_formats.object_path(o, fmt))
            o.overtone.cache_in_temp = temp
            o.overtone.live_preview = False
        return {
            "path": self.path,
            "paths": self.targets,
            "objects": [o.name for o in self.objects],
            "temporary": self.temporary,
            "frames": self.total,
            "vertices": self.session.binding.vertex_count,
            "seconds": time.perf_counter() - self.t0,
            "step_seconds": self.step_s,
            "max_residual": self.session.max_residual,
            "cache": self.session.deformer.cache_status(),
            "cache_state": self.session.deformer.cache_state(),
        }

    def _abort_streams(self):
        """Deletes the temporary files of the caches being streamed (the previous caches stay)."""
        for stream in getattr(self, "streams", []):
            stream.abort()

    def cancel(self):
        """Stops without writing: frame, modifier visibility and shape key values as before, the
        previous cache files and modifiers untouched. The live preview rebuilds its session on
        the next frame."""
        self._stop_worker()  # after the frame in progress; the frames queued are dropped
        self._abort_streams()
        if self.open:
            self._restore()
            if not self.from_cache:  # the live session of Current Cache to Bake stays
                session.drop(self.ob)


def cache_covers(ob, scene):
    """Whether the live preview's frame cache of ``ob``'s body holds every frame of its bake
    range (what *Current Cache to Bake* writes)."""
    s = session.get(ob)
    if s is None or s.setup_outdated:
        return False
    start, end = frame_range(session.members(scene, ob)[0], scene)
    return end >= start and all(f in s.cache for f in range(start, end + 1))


def bake(ob, scene, progress=None, from_cache=False):
    """Bakes the body of ``ob`` in one go; returns a dict of what it did (``paths``: one cache per
    object, ``temporary``: objects whose cache went to the temporary folder because the file is
    unsaved, ``cache_state``: where the precompute came from, a :class:`native.CacheState`, and
    ``cache`` its text)."""
    job = BakeJob(ob, scene, from_cache)
    try:
        while not job.finished:
            done, total = job.step()
            if progress is not None:
                progress(done, total)
    except BaseException:
        job.cancel()
        raise
    return job.finish()


class ModalBake:
    """The modal operator's logic, kept free of window-manager calls so it can be tested
    headless: :meth:`handle` takes an event type and answers the operator's return set.
    ``'TIMER'`` steps frames for up to ``budget`` seconds; ``'ESC'`` (or right click) cancels."""

    CANCEL_EVENTS = {'ESC', 'RIGHTMOUSE'}

    def __init__(self, job, budget=0.1, on_progress=None):
        self.job = job
        self.budget = budget
        self.on_progress = on_progress
        self.result = None
        self.cancelled = False

    def handle(self, event_type):
        if event_type in self.CANCEL_EVENTS:
            self.job.cancel()
            self.cancelled = True
            return {'CANCELLED'}
        if event_type != 'TIMER':
            return {'RUNNING_MODAL'}
        try:
            done, total = self.job.tick(self.budget)
            if self.on_progress is not None:
                self.on_progress(done, total)
            if self.job.finished:
                self.result = self.job.finish()
                return {'FINISHED'}
        except BaseException:
            self.job.cancel()
            raise
        return {'RUNNING_MODAL'}


class ModalBakeAll:
    """*Bake All*: the bodies of a scene baked one after the other, each a :class:`ModalBake`
    (same event protocol). A body that fails is reported and skipped; Esc cancels the body
    being baked (its previous cache untouched) and the ones not started, keeping those already
    baked."""

    def __init__(self, scene, objects, budget=0.1, on_progress=None):
        self.scene = scene
        self.queue = [o.name for o in objects]
        self.budget = budget
        self.on_progress = on_progress
        self.current = None
        self.results, self.failures = [], []
        self.cancelled = False

    def _next(self):
        while self.current is None and self.queue:
            name = self.queue.pop(0)
            ob = bpy.data.objects.get(name)
            if ob is None:
                continue
            try:
                self.current = ModalBake(BakeJob(ob, self.scene), self.budget, self.on_progress)
                self.current_name = name
            except Exception as e:
                self.failures.append((name, e))

    def handle(self, event_type):
        if event_type in ModalBake.CANCEL_EVENTS:
            if self.current is not None:
                self.current.handle(event_type)
                self.current = None
            self.queue.clear()
            self.cancelled = True
            return {'CANCELLED'}
        self._next()
        if self.current is None:
            return {'FINISHED'}
        try:
            answer = self.current.handle(event_type)
        except Exception as e:
            self.failures.append((self.current_name, e))
            self.current = None
            return {'RUNNING_MODAL'}
        if 'FINISHED' in answer:
            self.results.append((self.current_name, self.current.result))
            self.current = None
            if not self.queue:
                return {'FINISHED'}
        return {'RUNNING_MODAL'}
