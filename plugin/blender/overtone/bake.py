"""Bake: simulate the scene's frame range and write a PC2 of final object-space positions, played by
a Mesh Cache modifier right after the Armature modifier.

Per frame the cache holds ``skin(X) + Mo⁻¹ u`` (``skin`` the Armature modifier's own output,
``Mo`` the object's world matrix, ``u`` the world displacement) — exactly what the live preview's
shape key produces, up to float32 rounding.

A bake is a :class:`BakeJob` stepped one frame at a time, so that the modal operator can show
progress and stop on Esc between frames. Until the last frame is simulated nothing is written and
the Mesh Cache modifier is not touched; a cancelled or failed bake restores the frame, the
modifiers' visibility and the shape key value, and leaves the previous cache file and modifier
exactly as they were.
"""

import time

import bpy
import numpy as np

from . import cache_formats, cache_modifier, live, paths, pc2, session, shape_key
from .rig_binding import BindError, affine_inverse


def _evaluated_positions(ob, depsgraph, n):
    me = ob.evaluated_get(depsgraph).data
    if len(me.vertices) != n:
        raise BindError(f"the Armature modifier of '{ob.name}' outputs {len(me.vertices)} vertices, "
                        f"expected {n}")
    buf = np.empty(3 * n, dtype=np.float32)
    me.vertices.foreach_get("co", buf)
    return buf.reshape(n, 3)


class BakeJob:
    """One bake of ``ob`` over ``scene.frame_start..frame_end``: :meth:`step` simulates one frame,
    :meth:`finish` writes the cache and sets up the modifier, :meth:`cancel` undoes the temporary
    changes. Construction checks the path and binds; it changes nothing if it raises."""

    def __init__(self, ob, scene):
        props = ob.overtone
        self.path = session.resolve_path(props.cache_file, "point cache", allow_temp=False)
        self.format = props.cache_format
        if self.format == 'PC2':
            paths.check_output(self.path, "point cache", ob, paths.PC2)
        else:
            # Alembic / USD: the format's own checks (a Mesh Sequence Cache of this object may
            # already read the file, so Blender's cache-file datablocks are not refused here).
            cache_formats.check_path(self.path, self.format)
        self.start, self.end = scene.frame_start, scene.frame_end
        if self.end < self.start:
            raise session.SettingsError(f"the scene's frame range {self.start}..{self.end} is empty")
        self.ob, self.scene = ob, scene
        self.frame0 = scene.frame_current
        self.session = session.create(ob, scene, bpy.context.evaluated_depsgraph_get())
        b = self.session.binding
        self.n = b.vertex_count
        self.after = list(ob.modifiers[b.modifier_index + 1:])
        self.saved_vis = [(m, m.show_viewport) for m in self.after]
        self.kb = shape_key.get(ob)
        self.saved_value = self.kb.value if self.kb is not None else None
        self.frames = np.empty((self.end - self.start + 1, self.n, 3), dtype=np.float32)
        self.done = 0
        self.t0 = time.perf_counter()
        self.step_s = 0.0
        self.open = True
        live._replaying = True
        for m in self.after:
            m.show_viewport = False
        if self.kb is not None:
            self.kb.value = 0.0

    @property
    def total(self):
        return self.end - self.start + 1

    @property
    def finished(self):
        return self.done == self.total

    def step(self):
        """Simulates the next frame; returns ``(done, total)``."""
        ob, s, f = self.ob, self.session, self.start + self.done
        self.scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        t = time.perf_counter()
        if self.done == 0:
            s.reset(ob, dg, f)
        else:
            s.step(ob, dg, f)
        self.step_s += time.perf_counter() - t
        mo = np.array(ob.evaluated_get(dg).matrix_world, dtype=np.float64)
        world_to_object = affine_inverse(mo)[:3, :3]
        self.frames[self.done] = _evaluated_positions(ob, dg, self.n) + (s.u @ world_to_object.T).astype(np.float32)
        self.done += 1
        return self.done, self.total

    def _restore(self):
        for m, vis in self.saved_vis:
            m.show_viewport = vis
        if self.kb is not None:
            self.kb.value = self.saved_value
        self.scene.frame_set(self.frame0)
        live._replaying = False
        self.open = False

    def finish(self):
        """Writes the cache (atomically), then points the Mesh Cache modifier at it; returns a
        dict of what the bake did."""
        if not self.finished:
            raise RuntimeError(f"bake finished after {self.done} of {self.total} frames")
        ob, props = self.ob, self.ob.overtone
        try:
            if self.format == 'PC2':
                pc2.write_pc2(self.path, self.frames, self.start, 1.0)
            else:
                counts, indices = cache_formats.topology(ob.data)
                fps = self.scene.render.fps / self.scene.render.fps_base
                cache_formats.write(self.path, self.format, ob.name, self.frames, counts, indices, fps, self.start)
        except BaseException:
            self.cancel()
            raise
        self._restore()
        if self.format == 'PC2':
            cache_modifier.ensure(ob, self.session.binding.modifier_index, props.cache_file, self.start)
        else:
            cache_modifier.ensure_sequence(ob, self.session.binding.modifier_index, props.cache_file,
                                           cache_formats.object_path(ob, self.format))
        props.live_preview = False
        return {
            "path": self.path,
            "frames": self.total,
            "vertices": self.n,
            "seconds": time.perf_counter() - self.t0,
            "step_seconds": self.step_s,
            "max_residual": self.session.max_residual,
            "cache": self.session.deformer.cache_status(),
        }

    def cancel(self):
        """Stops without writing: frame, modifier visibility and shape key value as before, the
        previous cache file and Mesh Cache modifier untouched. The live preview rebuilds its
        session on the next frame."""
        if self.open:
            self._restore()
            session.drop(self.ob)


def bake(ob, scene, progress=None):
    """Bakes ``ob`` over ``scene.frame_start..frame_end`` in one go; returns a dict of what it did."""
    job = BakeJob(ob, scene)
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
        t = time.perf_counter()
        try:
            while not self.job.finished and time.perf_counter() - t < self.budget:
                done, total = self.job.step()
                if self.on_progress is not None:
                    self.on_progress(done, total)
            if self.job.finished:
                self.result = self.job.finish()
                return {'FINISHED'}
        except BaseException:
            self.job.cancel()
            raise
        return {'RUNNING_MODAL'}
