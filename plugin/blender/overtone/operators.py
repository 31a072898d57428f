"""Operators: add (bind and precompute), bake, bake all, current cache to bake, free bake, remove. Every failure is reported with
``self.report({'ERROR'}, ...)`` and leaves the object as it was."""

import uuid

import bpy

from . import bake, cache_modifier, live, native, properties, session, setup_check, shape_key
from .rig_binding import BindError

_ERRORS = (BindError, native.NativeError, session.SettingsError, OSError, ValueError)
# Add and Remove push undo steps (bl_options 'UNDO'), and so does a finished Bake. After an undo or
# redo every native session is dropped (``undo.py``): the restored settings, shape key and
# modifiers are the truth, and the live preview rebuilds its session from the sidecar.


def _progress(context):
    wm = context.window_manager

    class Progress:
        def __enter__(self):
            try:
                wm.progress_begin(0, 100)
            except Exception:
                pass
            return self

        def __call__(self, done, total):
            try:
                wm.progress_update(int(100 * done / max(total, 1)))
            except Exception:
                pass

        def __exit__(self, *exc):
            try:
                wm.progress_end()
            except Exception:
                pass
            return False

    return Progress()


def _cache_report(op, ob, state, status):
    """Branches on the deformer's :class:`native.CacheState`; ``status`` (its text) is the detail
    shown. A sidecar that was missing or built for other inputs is rebuilt silently (BUILT: that
    is its job); one that was unreadable (corrupt, truncated, foreign version) or did not fit
    (UNUSABLE), or could not be written (WRITE_FAILED), is a warning the TD should see."""
    if state == native.CacheState.UNUSABLE:
        op.report({'WARNING'}, f"Overtone: the sidecar of '{ob.name}' could not be used, {status}")
    elif state == native.CacheState.WRITE_FAILED:
        op.report({'WARNING'}, f"Overtone: '{ob.name}': {status}")


def _active_mesh(context):
    ob = context.active_object
    return ob is not None and ob.type == 'MESH'


def _body_objects(context):
    """The meshes *Add Overtone* binds: the active mesh first, then the other selected meshes
    that have an Armature modifier (in name order)."""
    ob = context.active_object
    others = sorted((o for o in context.selected_objects
                     if o is not ob and o.type == 'MESH' and any(m.type == 'ARMATURE' for m in o.modifiers)),
                    key=lambda o: o.name)
    return [ob] + others


def _rebind_group(context, ob):
    """Rebind on a bound object rebinds its whole body (unless other meshes are selected)."""
    objects = _body_objects(context)
    if len(objects) == 1 and ob.overtone.enabled and ob.overtone.body:
        return session.members(context.scene, ob)
    return objects


class OBJECT_OT_overtone_add(bpy.types.Operator):
    """Bind Overtone to the active mesh (and the other selected meshes on the same armature, as one
    body): read the armature weights, build (or load) the precompute and start the live preview"""

    bl_idname = "object.overtone_add"
    bl_label = "Add Overtone"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context)

    _timer = None

    def _prepare(self, context):
        """Reads everything on the UI thread and marks the objects as one body; returns the
        :class:`session.Bind` (not started). On error the objects are restored and the error
        raised."""
        ob = context.active_object
        scene = context.scene
        objects = _rebind_group(context, ob)
        dg = context.evaluated_depsgraph_get()
        props = ob.overtone
        body = f"body:{ob.name}:{uuid.uuid4().hex[:8]}" if len(objects) > 1 else ""
        self._saved = [(o, o.overtone.body, o.overtone.body_index, o.overtone.bound_vertex_count,
                        tuple(o.overtone.bind_matrix), o.overtone.has_bind_matrix, o.overtone.enabled,
                        o.overtone.sidecar) for o in objects]
        self._objects = objects
        try:
            if not props.sidecar:
                props.sidecar = f"//overtone/{bpy.path.clean_name(ob.name)}.ovt"
            for i, o in enumerate(objects):
                o.overtone.bound_vertex_count = 0
                o.overtone.body = body
                o.overtone.body_index = i
                o.overtone.bind_matrix = [x for row in o.evaluated_get(dg).matrix_world for x in row]
                o.overtone.has_bind_matrix = True
                if o is not ob:
                    for name in properties.SHARED:
                        if name != "live_preview" and getattr(o.overtone, name) != getattr(props, name):
                            setattr(o.overtone, name, getattr(props, name))
            session.drop(ob)
            for _, old_body, *_ in self._saved:
                if old_body and old_body != body:
                    session.drop_key(old_body)
            return session.Bind(objects, scene, dg)
        except BaseException:
            self._restore()
            raise

    def _restore(self):
        """Puts the objects' Overtone settings back as they were before this operator ran."""
        for o, b_, bi, bc, bm, hb, en, sc in self._saved:
            o.overtone.body, o.overtone.body_index, o.overtone.bound_vertex_count = b_, bi, bc
            o.overtone.bind_matrix, o.overtone.has_bind_matrix, o.overtone.enabled = bm, hb, en
            if o.overtone.sidecar != sc:
                o.overtone.sidecar = sc

    def _finish(self, context, s):
        """Installs the finished session and sets up the objects (shape keys, status)."""
        session.install(s)
        objects = self._objects
        ob = objects[0]
        state, status = s.deformer.cache_state(), s.deformer.cache_status()
        names = ", ".join(o.name for o in objects)
        for o, p in zip(objects, s.binding.parts):
            op = o.overtone
            if not op.cache_file:
                op.cache_file = f"//overtone/{bpy.path.clean_name(o.name)}.pc2"
            op.bound_vertex_count = p.n
            _, created = shape_key.ensure(o)
            if created:
                op.created_basis = True
            s.references[p.uid] = shape_key.reference_positions(o)
            op.enabled = True
            op.live_preview = True
            what = (f"bound as one body with {len(objects) - 1} other mesh(es) ({names}): "
                    f"{s.binding.vertex_count} vertices" if len(objects) > 1 else
                    f"bound: {p.n} vertices")
            op.status = f"{what}, {len(s.binding.bone_names)} bones; {status}"
        _cache_report(self, ob, state, status)
        # Edits made while it was binding (the UI stays usable): said, not silently dropped.
        if setup_check.check(context.scene, {s.key}):
            self.report({'WARNING'}, f"Overtone: {ob.overtone.status}")
        live.update(context.scene, context.evaluated_depsgraph_get())
        self.report({'INFO'}, f"Overtone added to {names} ({status})")
        return {'FINISHED'}

    def execute(self, context):
        """Binds on the worker thread and waits for it (scripts, background mode)."""
        with _progress(context) as progress:
            try:
                progress(1, 4)
                bind = self._prepare(context)
                s = bind.wait()
                progress(3, 4)
            except _ERRORS as e:
                if hasattr(self, "_saved"):
                    self._restore()
                self.report({'ERROR'}, f"Overtone: {e}")
                return {'CANCELLED'}
        return self._finish(context, s)

    def invoke(self, context, event):
        """In the UI: starts the bind on the worker thread and returns; :meth:`modal` polls it
        (progress in the status bar, Esc cancels). The timeline plays the plain rig meanwhile."""
        if context.window is None or not native.has_async_bind():
            return self.execute(context)
        try:
            self._bind = self._prepare(context).start()
        except _ERRORS as e:
            if hasattr(self, "_saved"):
                self._restore()
            self.report({'ERROR'}, f"Overtone: {e}")
            return {'CANCELLED'}
        session.hold_pending(self._bind)
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        self._status(context, 0.0, "starting")
        return {'RUNNING_MODAL'}

    def _status(self, context, fraction, stage):
        text = f"Overtone: binding {', '.join(o.name for o in self._objects)}: {stage} {100 * fraction:.0f}% (Esc cancels)"
        try:
            context.workspace.status_text_set(text)
            context.window_manager.progress_update(int(100 * fraction))
        except Exception:
            pass

    def _end(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        try:
            wm.progress_end()
            context.workspace.status_text_set(None)
        except Exception:
            pass
        session.release_pending(self._bind)

    def modal(self, context, event):
        if event.type == 'ESC':
            self._bind.cancel()
            self._bind.free()
            self._end(context)
            self._restore()
            self.report({'WARNING'}, "Overtone: bind cancelled; the objects are as they were")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'}
        state, fraction, stage = self._bind.poll()
        if state == native.BIND_RUNNING:
            self._status(context, fraction, stage)
            return {'RUNNING_MODAL'}
        self._end(context)
        try:
            s = self._bind.finish()
        except native.NativeError as e:
            self._restore()
            self.report({'ERROR'}, f"Overtone: {e}")
            return {'CANCELLED'}
        return self._finish(context, s)


class OBJECT_OT_overtone_bake(bpy.types.Operator):
    """Simulate the scene's frame range and write a point cache played by a Mesh Cache modifier
    (Esc cancels: the previous cache and modifier are kept)"""

    bl_idname = "object.overtone_bake"
    bl_label = "Bake Overtone"
    # UNDO: Ctrl-Z after a bake brings back the modifier and settings of before (the file on disk
    # stays: files are not part of Blender's undo).
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context) and context.active_object.overtone.enabled

    def _failed(self, ob, e):
        ob.overtone.status = f"error: {e}"
        if isinstance(e, _ERRORS):
            self.report({'ERROR'}, f"Overtone bake failed: {e}")
        else:  # the scene was restored by the job; say what happened
            self.report({'ERROR'}, f"Overtone bake failed with an internal error ({type(e).__name__}: {e}); "
                                   "please report")
        return {'CANCELLED'}

    def _done(self, ob, result):
        _cache_report(self, ob, result["cache_state"], result["cache"])
        for name, path in zip(result["objects"], result["paths"]):
            o = bpy.data.objects[name]
            where = " (temporary folder until the .blend is saved)" if name in result["temporary"] else ""
            o.overtone.status = (f"baked {result['frames']} frames to {path}{where} "
                                 f"(residual ≤ {result['max_residual']:.1e})")
        if result["temporary"]:
            self.report({'WARNING'}, "Overtone: the file is unsaved, so the cache went to Blender's temporary "
                                     "folder; it moves next to the .blend when you save")
        self.report({'INFO'}, f"Overtone baked {result['frames']} frames of {', '.join(result['objects'])} in "
                              f"{result['seconds']:.2f} s")
        return {'FINISHED'}

    def execute(self, context):
        """The whole bake at once (scripts, background mode)."""
        ob = context.active_object
        session.split_copies(context.scene)
        with _progress(context) as progress:
            try:
                result = bake.bake(ob, context.scene, progress)
            except Exception as e:
                return self._failed(ob, e)
        return self._done(ob, result)

    def invoke(self, context, event):
        """From the UI: a modal bake, one timer tick at a time, with progress in the status bar
        and Esc to cancel."""
        if context.window is None or bpy.app.background:
            return self.execute(context)
        ob = context.active_object
        session.split_copies(context.scene)
        try:
            job = bake.BakeJob(ob, context.scene)
        except Exception as e:
            return self._failed(ob, e)
        wm = context.window_manager
        self._ob_name = ob.name
        self._modal = bake.ModalBake(job, on_progress=lambda d, t: self._show(context, d, t))
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.progress_begin(0, job.total)
        wm.modal_handler_add(self)
        self._show(context, 0, job.total)
        return {'RUNNING_MODAL'}

    def _show(self, context, done, total):
        context.window_manager.progress_update(done)
        if context.workspace is not None:
            context.workspace.status_text_set(f"Overtone: baking '{self._ob_name}', frame {done} of {total} "
                                              f"(Esc to cancel)")

    def _end(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        if context.workspace is not None:
            context.workspace.status_text_set(None)

    def cancel(self, context):
        """Blender stops the modal bake itself (a file is opened, the window closes): as Esc,
        the previous cache and modifier stay and the partial cache's temporary file is deleted."""
        if self._modal.result is None and not self._modal.cancelled:
            self._modal.handle('ESC')
        try:
            self._end(context)
        except (RuntimeError, TypeError, ValueError):  # no timer or window any more
            pass

    def modal(self, context, event):
        ob = bpy.data.objects.get(self._ob_name)
        try:
            answer = self._modal.handle(event.type)
        except Exception as e:
            self._end(context)
            return self._failed(ob, e)
        if 'RUNNING_MODAL' in answer:
            return answer
        self._end(context)
        if 'CANCELLED' in answer:
            ob.overtone.status = "bake cancelled: the previous cache and modifier are unchanged"
            self.report({'WARNING'}, f"Overtone bake of '{ob.name}' cancelled; nothing was written")
            return {'CANCELLED'}
        return self._done(ob, self._modal.result)


class OBJECT_OT_overtone_remove(bpy.types.Operator):
    """Remove Overtone from the active mesh: its shape key, cache modifier and runtime state (files
    on disk are kept). In a body of several meshes the others stay bound, as a body of their own
    (rebuilt at the next frame)"""

    bl_idname = "object.overtone_remove"
    bl_label = "Remove Overtone"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context)

    def execute(self, context):
        ob = context.active_object
        props = ob.overtone
        session.split_copies(context.scene)
        rest = [o for o in session.members(context.scene, ob) if o is not ob] if props.body else []
        session.drop(ob)
        # Every cache modifier a bake added: the PC2 Mesh Cache and the Alembic/USD Sequence Cache.
        cache_modifier.free(ob)
        shape_key.remove(ob, props.created_basis)
        props.created_basis = False
        props.enabled = False
        props.bound_vertex_count = 0
        props.status = ""
        props.body = ""
        props.body_index = 0
        props.has_bind_matrix = False
        for i, o in enumerate(rest):
            o.overtone.body_index = i
            if len(rest) == 1:
                o.overtone.body = ""
            o.overtone.status = (f"'{ob.name}' was removed from this body; the rest is rebound at the next "
                                 "frame; bake again")
        msg = f"Overtone removed from '{ob.name}'"
        if rest:
            msg += f"; {', '.join(o.name for o in rest)} stay bound without it"
        self.report({'INFO'}, msg)
        return {'FINISHED'}


class OBJECT_OT_overtone_cache_to_bake(bpy.types.Operator):
    """Write the frames the live preview has played to the bake's cache files, as Cloth's Current
    Cache to Bake (no new simulation; every frame of the bake range must be cached and still match
    the rig and keyed settings it was played with)"""

    bl_idname = "object.overtone_cache_to_bake"
    bl_label = "Current Cache to Bake"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return _active_mesh(context) and ob.overtone.enabled and bake.cache_covers(ob, context.scene)

    def execute(self, context):
        ob = context.active_object
        session.split_copies(context.scene)
        with _progress(context) as progress:
            try:
                result = bake.bake(ob, context.scene, progress, from_cache=True)
            except Exception as e:
                return OBJECT_OT_overtone_bake._failed(self, ob, e)
        return OBJECT_OT_overtone_bake._done(self, ob, result)


class OBJECT_OT_overtone_free_bake(bpy.types.Operator):
    """Free the bake of the active mesh's body, as Cloth's Free Bake does: its cache modifiers are
    removed and the live preview plays again (the cache files stay on disk)"""

    bl_idname = "object.overtone_free_bake"
    bl_label = "Free Bake"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        if not _active_mesh(context) or not context.active_object.overtone.enabled:
            return False
        return any(cache_modifier.has_cache(o) for o in session.members(context.scene, context.active_object))

    def execute(self, context):
        objects = session.members(context.scene, context.active_object)
        freed = [o.name for o in objects if cache_modifier.free(o)]
        for o in objects:
            o.overtone.live_preview = True
            o.overtone.cache_in_temp = False
            o.overtone.status = "bake freed: the live preview plays (the cache files are kept on disk)"
        self.report({'INFO'}, f"Overtone: freed the bake of {', '.join(freed)}")
        return {'FINISHED'}


class OBJECT_OT_overtone_bake_all(bpy.types.Operator):
    """Bake every Overtone body of the scene, one after the other, each over its own frame range
    (Esc cancels the body being baked and the rest; bodies already baked keep their new cache)"""

    bl_idname = "object.overtone_bake_all"
    bl_label = "Bake All"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.scene is not None and bool(bake.bodies(context.scene))

    def _summary(self, results, failures, cancelled=False):
        for name, e in failures:
            ob = bpy.data.objects.get(name)
            if ob is not None:
                ob.overtone.status = f"error: {e}"
            self.report({'ERROR'}, f"Overtone: the bake of '{name}' failed: {e}")
        for name, result in results:
            for o_name, path in zip(result["objects"], result["paths"]):
                o = bpy.data.objects.get(o_name)
                if o is not None:
                    o.overtone.status = f"baked {result['frames']} frames to {path}"
        done = ", ".join(name for name, _ in results) or "no body"
        self.report({'WARNING' if cancelled or failures else 'INFO'},
                    f"Overtone: baked {done}" + (" (cancelled)" if cancelled else ""))
        # Bodies baked before a cancel keep their new cache: an undo step for them.
        return {'FINISHED'} if results else {'CANCELLED'}

    def execute(self, context):
        """Every body at once (scripts, background mode)."""
        session.split_copies(context.scene)
        results, failures = [], []
        with _progress(context) as progress:
            for ob in bake.bodies(context.scene):
                try:
                    results.append((ob.name, bake.bake(ob, context.scene, progress)))
                except Exception as e:
                    failures.append((ob.name, e))
        return self._summary(results, failures)

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:
            return self.execute(context)
        session.split_copies(context.scene)
        wm = context.window_manager
        self._all = bake.ModalBakeAll(context.scene, bake.bodies(context.scene),
                                      on_progress=lambda d, t: self._show(context, d, t))
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.modal_handler_add(self)
        return {'RUNNING_MODAL'}

    def _show(self, context, done, total):
        if context.workspace is not None:
            name = getattr(self._all, "current_name", "")
            context.workspace.status_text_set(f"Overtone: baking '{name}', frame {done} of {total}, "
                                              f"{len(self._all.queue)} bodies after it (Esc to cancel)")

    def cancel(self, context):
        """Blender stops the modal Bake All itself: as Esc (the body being baked keeps its
        previous cache, its partial cache's temporary file is deleted; bodies baked keep theirs)."""
        if not self._all.cancelled:
            self._all.handle('ESC')
        try:
            context.window_manager.event_timer_remove(self._timer)
        except (RuntimeError, TypeError, ValueError):  # no timer or window any more
            pass

    def modal(self, context, event):
        answer = self._all.handle(event.type)
        if 'RUNNING_MODAL' in answer:
            return answer
        context.window_manager.event_timer_remove(self._timer)
        if context.workspace is not None:
            context.workspace.status_text_set(None)
        return self._summary(self._all.results, self._all.failures, self._all.cancelled)


class OVERTONE_OT_catch_up(bpy.types.Operator):
    """Simulate the frames up to the current one off the UI thread (the live preview starts this
    itself after a far jump; Esc stops it, keeping the frames simulated so far)"""

    bl_idname = "overtone.catch_up"
    bl_label = "Overtone: Catch Up"
    bl_options = {'INTERNAL'}

    def invoke(self, context, event):
        from . import catch_up

        if not catch_up.requested or context.window is None:
            return {'CANCELLED'}
        self._job = catch_up.requested.pop()
        self._modal = catch_up.ModalCatchUp(self._job, on_progress=lambda d, t: self._show(context, d, t))
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.progress_begin(0, max(self._job.total, 1))
        wm.modal_handler_add(self)
        self._show(context, 0, self._job.total)
        return {'RUNNING_MODAL'}

    def _show(self, context, done, total):
        context.window_manager.progress_update(done)
        if context.workspace is not None:
            context.workspace.status_text_set(f"Overtone: catching up to frame {self._job.target}, step {done} "
                                              f"of {total} (Esc to stop)")

    def _end(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        if context.workspace is not None:
            context.workspace.status_text_set(None)
        live.after_catch_up(self._job)

    def cancel(self, context):
        """Blender ends the operator itself (a file is opened, the window closes): as Esc."""
        self._job.cancel()
        try:
            self._end(context)
        except (RuntimeError, TypeError, ValueError):
            pass

    def modal(self, context, event):
        try:
            answer = self._modal.handle(event.type)
        except Exception as e:
            self._end(context)
            for obs, _ in self._job.bodies:
                live._fail(obs, live._error(e))
            self.report({'ERROR'}, f"Overtone: the catch-up failed: {live._error(e)}")
            return {'CANCELLED'}
        if 'PASS_THROUGH' in answer:
            return answer
        self._end(context)
        return {'FINISHED'} if 'FINISHED' in answer else {'CANCELLED'}


classes = (OVERTONE_OT_catch_up, OBJECT_OT_overtone_add, OBJECT_OT_overtone_bake, OBJECT_OT_overtone_bake_all,
           OBJECT_OT_overtone_cache_to_bake, OBJECT_OT_overtone_free_bake, OBJECT_OT_overtone_remove)
