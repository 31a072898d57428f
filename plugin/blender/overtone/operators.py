"""Operators: add (bind and precompute), bake, remove. Every failure is reported with
``self.report({'ERROR'}, ...)`` and leaves the object as it was."""

import bpy

from . import bake, cache_modifier, live, native, session, shape_key
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


def _cache_report(op, ob, status):
    """A sidecar that was missing or built for other inputs is rebuilt silently (that is its job);
    one that was unreadable (corrupt, truncated, foreign version) or could not be written is a
    warning the TD should see."""
    expected = ("no sidecar yet", "built for different inputs")
    if status.startswith("rebuilt") and not any(e in status for e in expected):
        op.report({'WARNING'}, f"Overtone: the sidecar of '{ob.name}' could not be used, {status}")
    elif status.startswith("built; sidecar not written"):
        op.report({'WARNING'}, f"Overtone: '{ob.name}': {status}")


def _active_mesh(context):
    ob = context.active_object
    return ob is not None and ob.type == 'MESH'


class OBJECT_OT_overtone_add(bpy.types.Operator):
    """Bind Overtone to the active mesh: read its armature weights, build (or load) the precompute
    and start the live preview"""

    bl_idname = "object.overtone_add"
    bl_label = "Add Overtone"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context)

    def execute(self, context):
        ob = context.active_object
        props = ob.overtone
        scene = context.scene
        if not props.sidecar:
            props.sidecar = f"//overtone/{bpy.path.clean_name(ob.name)}.ovt"
        if not props.cache_file:
            props.cache_file = f"//overtone/{bpy.path.clean_name(ob.name)}.pc2"
        previous_count = props.bound_vertex_count
        with _progress(context) as progress:
            try:
                progress(1, 4)
                props.bound_vertex_count = 0
                s = session.create(ob, scene, context.evaluated_depsgraph_get())
                progress(3, 4)
            except _ERRORS as e:
                props.bound_vertex_count = previous_count
                self.report({'ERROR'}, f"Overtone: {e}")
                return {'CANCELLED'}
        props.bound_vertex_count = s.binding.vertex_count
        _, created = shape_key.ensure(ob)
        if created:
            props.created_basis = True
        s.reference = shape_key.reference_positions(ob)
        props.enabled = True
        props.live_preview = True
        status = s.deformer.cache_status()
        props.status = f"bound: {s.binding.vertex_count} vertices, {len(s.binding.bone_names)} bones; {status}"
        _cache_report(self, ob, status)
        live.update(scene, context.evaluated_depsgraph_get())
        self.report({'INFO'}, f"Overtone added to '{ob.name}' ({status})")
        return {'FINISHED'}


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
        _cache_report(self, ob, result["cache"])
        ob.overtone.status = (f"baked {result['frames']} frames to {result['path']} "
                              f"(residual ≤ {result['max_residual']:.1e})")
        self.report({'INFO'}, f"Overtone baked {result['frames']} frames of '{ob.name}' in "
                              f"{result['seconds']:.2f} s")
        return {'FINISHED'}

    def execute(self, context):
        """The whole bake at once (scripts, background mode)."""
        ob = context.active_object
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
        try:
            job = bake.BakeJob(ob, context.scene)
        except Exception as e:
            return self._failed(ob, e)
        wm = context.window_manager
        self._ob_name = ob.name
        self._modal = bake.ModalBake(job, on_progress=lambda d, t: self._show(context, d, t))
        self._timer = wm.event_timer_add(0.0, window=context.window)
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
    on disk are kept)"""

    bl_idname = "object.overtone_remove"
    bl_label = "Remove Overtone"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context)

    def execute(self, context):
        ob = context.active_object
        props = ob.overtone
        session.drop(ob)
        cache_modifier.remove(ob)
        shape_key.remove(ob, props.created_basis)
        props.created_basis = False
        props.enabled = False
        props.bound_vertex_count = 0
        props.status = ""
        self.report({'INFO'}, f"Overtone removed from '{ob.name}'")
        return {'FINISHED'}


classes = (OBJECT_OT_overtone_add, OBJECT_OT_overtone_bake, OBJECT_OT_overtone_remove)
