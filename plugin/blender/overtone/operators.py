"""Operators: add (bind and precompute), bake, remove. Every failure is reported with
``self.report({'ERROR'}, ...)`` and leaves the object as it was."""

import bpy

from . import bake, cache_modifier, live, native, session, shape_key
from .rig_binding import BindError

_ERRORS = (BindError, native.NativeError, session.SettingsError, OSError, ValueError)


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
    """Simulate the scene's frame range and write a point cache played by a Mesh Cache modifier"""

    bl_idname = "object.overtone_bake"
    bl_label = "Bake Overtone"
    bl_options = {'REGISTER'}

    @classmethod
    def poll(cls, context):
        return _active_mesh(context) and context.active_object.overtone.enabled

    def execute(self, context):
        ob = context.active_object
        with _progress(context) as progress:
            try:
                result = bake.bake(ob, context.scene, progress)
            except _ERRORS as e:
                ob.overtone.status = f"error: {e}"
                self.report({'ERROR'}, f"Overtone bake failed: {e}")
                return {'CANCELLED'}
            except Exception as e:  # the scene was restored by bake(); say what happened
                ob.overtone.status = f"error: {e}"
                self.report({'ERROR'}, f"Overtone bake failed with an internal error ({type(e).__name__}: {e}); "
                                       "please report")
                return {'CANCELLED'}
        _cache_report(self, ob, result["cache"])
        ob.overtone.status = (f"baked {result['frames']} frames to {result['path']} "
                              f"(residual ≤ {result['max_residual']:.1e})")
        self.report({'INFO'}, f"Overtone baked {result['frames']} frames of '{ob.name}' in "
                              f"{result['seconds']:.2f} s")
        return {'FINISHED'}


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
