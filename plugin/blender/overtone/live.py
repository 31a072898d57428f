"""Live preview: a persistent ``frame_change_post`` handler that steps every bound object one frame
when the timeline moves forward by one, and resets to the scene's start frame and replays when
it jumps or rewinds (as simulation caches do). Errors never escape into Blender: they go to the
object's status and the shape key is zeroed (the mesh shows the plain rig)."""

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import native, session, shape_key
from .rig_binding import BindError

_replaying = False


def _live_objects(scene):
    return [ob for ob in scene.objects
            if ob.type == 'MESH' and ob.overtone.enabled and ob.overtone.live_preview]


def _fail(ob, err):
    msg = f"error: {err}"
    if ob.overtone.status != msg:
        ob.overtone.status = msg
    print(f"Overtone: {ob.name}: {err}")
    session.drop(ob)
    zero_offsets(ob)


def replay(scene, sessions, frame):
    """Resets ``sessions`` (object, session) at the start frame and steps them to ``frame``."""
    global _replaying
    start = scene.frame_start
    _replaying = True
    try:
        scene.frame_set(start)
        dg = bpy.context.evaluated_depsgraph_get()
        for ob, s in sessions:
            s.reset(ob, dg, start)
        for k in range(start + 1, frame + 1):
            scene.frame_set(k)
            dg = bpy.context.evaluated_depsgraph_get()
            for ob, s in sessions:
                s.step(ob, dg, k)
    finally:
        _replaying = False


def update(scene, depsgraph):
    """Brings every live object to the scene's current frame and writes its shape key."""
    frame = scene.frame_current
    pending = []
    done = []
    for ob in _live_objects(scene):
        try:
            s = session.get(ob)
            if s is None or s.fps != scene.render.fps / scene.render.fps_base:
                s = session.create(ob, scene, depsgraph)
            if frame <= scene.frame_start:
                s.reset(ob, depsgraph, frame)
                done.append((ob, s))
            elif s.last_frame == frame:
                done.append((ob, s))
            elif s.last_frame == frame - 1:
                s.step(ob, depsgraph, frame)
                done.append((ob, s))
            else:
                pending.append((ob, s))
        except Exception as e:  # a frame handler must never break playback
            _fail(ob, e if isinstance(e, (BindError, native.NativeError, session.SettingsError))
                  else f"internal error ({type(e).__name__}: {e}); please report")
    if pending:
        try:
            replay(scene, pending, frame)
            done.extend(pending)
        except Exception as e:
            for ob, _ in pending:
                _fail(ob, e)
    for ob, s in done:
        s.write_shape_key(ob)
        if ob.overtone.status.startswith("error"):
            ob.overtone.status = "live"


@persistent
def on_frame_change(scene, depsgraph=None):
    if _replaying:
        return
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    update(scene, depsgraph)


@persistent
def on_load_pre(*_args):
    """Another file is about to replace this one: free every native deformer."""
    session.drop_all()


def _remove(handlers, fn):
    for h in list(handlers):
        if getattr(h, "__name__", "") == fn.__name__ and getattr(h, "__module__", "") == fn.__module__:
            handlers.remove(h)


def register():
    _remove(bpy.app.handlers.frame_change_post, on_frame_change)
    _remove(bpy.app.handlers.load_pre, on_load_pre)
    bpy.app.handlers.frame_change_post.append(on_frame_change)
    bpy.app.handlers.load_pre.append(on_load_pre)


def unregister():
    _remove(bpy.app.handlers.frame_change_post, on_frame_change)
    _remove(bpy.app.handlers.load_pre, on_load_pre)
    session.drop_all()


def zero_offsets(ob):
    """Writes zero offsets into the object's Overtone key (the plain rig)."""
    kb = shape_key.get(ob)
    if kb is not None:
        ref = shape_key.reference_positions(ob)
        shape_key.write(ob, ref, np.zeros_like(ref))
