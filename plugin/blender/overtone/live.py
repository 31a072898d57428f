"""Live preview: a persistent ``frame_change_post`` handler that steps every bound object one frame
when the timeline moves forward by one and keeps the frames it played in memory, like the point
cache of Cloth: scrubbing, looping and rewinding inside the played run show cached frames without
simulating; a jump past the run's end simulates on from its end. A cached frame whose rig, shape
keys or animatable settings changed since it was played makes the cache outdated: it is cleared
and the body simulates again from the scene's start frame. Errors never escape into Blender: they
go to the object's status and the shape key is zeroed (the mesh shows the plain rig)."""

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import catch_up, native, session, setup_check, shape_key
from .rig_binding import BindError

_replaying = False
# While a render runs: the live shape keys muted (what they were), and no mesh writes from the
# frame handler (writing mesh data during a render can crash Blender); the render shows the
# plain rig or the bake.
_rendering = []


def _live_bodies(scene):
    """The live bodies of the scene: ``[(members, ...)]``, each the enabled objects of one body in
    body order (an object whose live preview is off is left out with its body)."""
    bodies = {}
    for ob in scene.objects:
        if ob.type == 'MESH' and ob.overtone.enabled and ob.overtone.live_preview:
            key = session.body_key(ob)
            if key not in bodies:
                bodies[key] = session.members(scene, ob)
    return [m for m in bodies.values() if all(o.overtone.live_preview for o in m)]


def _fail(objects, err):
    msg = f"error: {err}"
    for ob in objects:
        if ob.overtone.status != msg:
            ob.overtone.status = msg
        print(f"Overtone: {ob.name}: {err}")
        zero_offsets(ob)
    session.drop(objects[0])


def _error(e):
    if isinstance(e, (BindError, native.NativeError, session.SettingsError)):
        return e
    return f"internal error ({type(e).__name__}: {e}); please report"


def blocking_binds():
    """Whether the frame handler precomputes before showing a frame (background mode: scripts,
    farm renders) instead of on the worker thread with the plain rig meanwhile (the UI)."""
    return bpy.app.background


def _session_or_bind(objects, scene, depsgraph, fps):
    """A body without a usable session: in background mode (scripts; a render itself shows the
    bake or the plain rig, see ``on_render_init``) it is precomputed before the frame is shown; in the UI the precompute starts on the library's
    worker thread and this returns None (the shape keys are zeroed, so the plain rig plays until
    it is done; a timer installs the session and catches up to the current frame)."""
    if blocking_binds() or not native.has_async_bind():
        return session.create(objects, scene, depsgraph)
    bind = session.pending(objects[0])
    if bind is not None and bind.uids == [o.session_uid for o in objects] and (bind.fps == fps or bind.clocked):
        return None
    session.drop(objects[0])
    session.start_pending(objects, scene, depsgraph)
    for ob in objects:
        zero_offsets(ob)
        ob.overtone.status = "binding on a worker thread; the plain rig plays until it is done"
    if not bpy.app.timers.is_registered(poll_pending):
        bpy.app.timers.register(poll_pending, first_interval=0.1)
    return None


def poll_pending():
    """Timer: installs finished precomputes, reports failed ones, brings the scene to its frame."""
    done, failed = session.finish_pending()
    if failed:
        for ob in bpy.data.objects:
            if ob.type == 'MESH' and session.body_key(ob) in failed:
                ob.overtone.status = f"error: {failed[session.body_key(ob)]}"
    if done:
        try:
            scene = bpy.context.scene
            # Edits made while a body was binding: bind it again rather than play the old setup.
            setup_check.rebind_if_changed(scene, done)
            update(scene, bpy.context.evaluated_depsgraph_get())
        except Exception as e:  # a timer must never raise into Blender
            print(f"Overtone: {e}")
    return 0.1 if session.any_pending() else None


def replay(scene, bodies, frame):
    """Steps ``bodies`` (members, session) to ``frame``: each from the end of its played run when
    that lies before ``frame``, else from rest at the start frame."""
    global _replaying
    start = scene.frame_start
    begin = [s.last_frame if s.last_frame is not None and start <= s.last_frame < frame else None
             for _, s in bodies]
    # The run continues from its end only if that frame still has the rig and settings it was
    # played with (a key edited before it makes the cache outdated: simulate from the start).
    for i, (obs, s) in enumerate(bodies):
        if begin[i] is not None and begin[i] in s.cache:
            _replaying = True
            try:
                scene.frame_set(begin[i])
                if not s.show_cached(obs, bpy.context.evaluated_depsgraph_get(), begin[i]):
                    begin[i] = None
            finally:
                _replaying = False
    first = min((b if b is not None else start) for b in begin)
    _replaying = True
    try:
        scene.frame_set(first)
        dg = bpy.context.evaluated_depsgraph_get()
        for (obs, s), b in zip(bodies, begin):
            if b is None:
                s.reset(obs, dg, start)
        for k in range(first + 1, frame + 1):
            scene.frame_set(k)
            dg = bpy.context.evaluated_depsgraph_get()
            for (obs, s), b in zip(bodies, begin):
                if k > (b if b is not None else start):
                    s.step(obs, dg, k)
    finally:
        _replaying = False


def update(scene, depsgraph):
    """Brings every live body to the scene's current frame and writes its objects' shape keys
    (nothing while a render runs)."""
    if _rendering:
        return
    frame = scene.frame_current
    pending = []
    done = []
    fps = scene.render.fps / scene.render.fps_base
    try:
        session.split_copies(scene)
    except Exception as e:  # a frame handler must never break playback
        print(f"Overtone: {e}")
    for obs in _live_bodies(scene):
        try:
            s = session.get(obs[0])
            if s is not None and s.catching_up is not None:
                for ob in obs:
                    zero_offsets(ob)  # the plain rig until the catch-up is done (catch_up.py)
                continue
            if s is not None and s.matches(obs):
                setup_check.check_scene(s, obs, scene)
            if s is not None and s.setup_outdated and s.matches(obs):
                continue  # edited since the bind: the plain rig until a Rebind (setup_check)
            if s is not None and s.fps != fps and s.clocked and s.matches(obs):
                # The default integrator runs on the fixed physics clock: a new frame rate only
                # changes how far a frame advances (no new bind), and the motion restarts.
                s.set_fps(fps)
            if s is None or s.fps != fps or not s.matches(obs):
                s = _session_or_bind(obs, scene, depsgraph, fps)
                if s is None:
                    continue  # precomputing on the worker thread: the plain rig plays meanwhile
            if s.show_cached(obs, depsgraph, frame):
                done.append((obs, s))
            elif s.last_frame == frame:
                s.show_live()
                done.append((obs, s))
            elif frame <= scene.frame_start:
                s.reset(obs, depsgraph, frame)
                done.append((obs, s))
            elif s.last_frame == frame - 1:
                s.step(obs, depsgraph, frame)
                done.append((obs, s))
            else:
                pending.append((obs, s))
        except Exception as e:  # a frame handler must never break playback
            _fail(obs, _error(e))
    if pending and not blocking_binds() and _span(scene, pending, frame) >= catch_up.SYNCHRONOUS_FRAMES:
        _start_catch_up(scene, pending, frame)
        pending = []
    if pending:
        try:
            replay(scene, pending, frame)
            done.extend(pending)
        except Exception as e:
            for obs, _ in pending:
                _fail(obs, _error(e))
    for obs, s in done:
        s.write_shape_keys(obs)
        for ob in obs:
            if ob.overtone.status.startswith(("error", "binding", "Outdated")):
                ob.overtone.status = "live"
        if s.outdated and s.last_frame is not None:
            # Simulated again from the start: up to date; the status says why it took longer.
            s.outdated = False
            for ob in obs:
                ob.overtone.status = ("live (the cache was outdated: the rig or a setting changed since those "
                                      "frames were played; simulated again from the start frame)")


def _span(scene, bodies, frame):
    """Frames a replay of ``bodies`` to ``frame`` would step at most."""
    start = scene.frame_start
    return max(frame - (s.last_frame if s.last_frame is not None and start <= s.last_frame < frame else start)
               for _, s in bodies)


def _start_catch_up(scene, bodies, frame):
    """In the UI, a far frame is caught up off the UI thread (catch_up.py); the plain rig shows
    meanwhile. A catch-up the user stopped at this frame is not started again."""
    if all(s.declined == frame for _, s in bodies):
        for obs, s in bodies:
            for ob in obs:
                zero_offsets(ob)
                ob.overtone.status = (f"not simulated past frame {s.last_frame} (catch-up stopped): play on "
                                      "from there, jump to another frame, or Bake")
        return
    try:
        job = catch_up.CatchUp(scene, bodies, frame)
    except Exception as e:
        for obs, _ in bodies:
            _fail(obs, _error(e))
        return
    for obs, _ in bodies:
        for ob in obs:
            zero_offsets(ob)
            ob.overtone.status = f"catching up to frame {frame} (Esc stops); the plain rig shows meanwhile"
    catch_up.start(job)


def after_catch_up(job):
    """A catch-up ended (done, stopped or failed): the bodies' statuses, and the current frame
    shown again (from the frame cache it filled)."""
    scene = job.scene
    for obs, s in job.bodies:
        for ob in obs:
            if ob.overtone.status.startswith("catching up"):
                ob.overtone.status = "live" if not job.cancelled else (
                    f"catch-up stopped at frame {s.last_frame}: the frames before it are cached")
    try:
        update(scene, bpy.context.evaluated_depsgraph_get())
    except Exception as e:  # called from a timer or a modal operator: never raise into Blender
        print(f"Overtone: {e}")


@persistent
def on_frame_change(scene, depsgraph=None):
    if _replaying or _rendering:
        return
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    update(scene, depsgraph)


@persistent
def on_render_init(*_args):
    from . import saving

    _rendering[:] = [saving.mute_live_offsets()]


@persistent
def on_render_end(*_args):
    from . import saving

    if _rendering:
        saving.unmute_live_offsets(_rendering[0])
    _rendering.clear()


@persistent
def on_load_pre(*_args):
    """Another file is about to replace this one: free every native deformer."""
    _rendering.clear()
    session.drop_all()


def _remove(handlers, fn):
    for h in list(handlers):
        if getattr(h, "__name__", "") == fn.__name__ and getattr(h, "__module__", "") == fn.__module__:
            handlers.remove(h)


_RENDER_HANDLERS = (("render_init", "on_render_init"), ("render_complete", "on_render_end"),
                    ("render_cancel", "on_render_end"))


def register():
    _remove(bpy.app.handlers.frame_change_post, on_frame_change)
    _remove(bpy.app.handlers.load_pre, on_load_pre)
    bpy.app.handlers.frame_change_post.append(on_frame_change)
    bpy.app.handlers.load_pre.append(on_load_pre)
    for handlers, fn in _RENDER_HANDLERS:
        _remove(getattr(bpy.app.handlers, handlers), globals()[fn])
        getattr(bpy.app.handlers, handlers).append(globals()[fn])


def unregister():
    if bpy.app.timers.is_registered(poll_pending):
        bpy.app.timers.unregister(poll_pending)
    _remove(bpy.app.handlers.frame_change_post, on_frame_change)
    _remove(bpy.app.handlers.load_pre, on_load_pre)
    for handlers, fn in _RENDER_HANDLERS:
        _remove(getattr(bpy.app.handlers, handlers), globals()[fn])
    session.drop_all()


def zero_offsets(ob):
    """Writes zero offsets into the object's Overtone key (the plain rig)."""
    kb = shape_key.get(ob)
    if kb is not None:
        ref = shape_key.reference_positions(ob)
        shape_key.write(ob, ref, np.zeros_like(ref))
