"""Staleness of a bind: a fingerprint of everything a body's precompute was built from, in
Blender's data (the rest positions, the vertex groups and their weights, the modifiers up to and
including the Armature modifier and its settings, the shape keys' state, the scene's gravity and
unit scale), taken at bind and checked again after the user edits the body.

A mismatch marks the session *outdated*: the live preview stops writing frames simulated from the
old setup and shows the plain rig, and the panel says "Outdated — Rebind" with what changed; an
edit undone by hand (or a toggle switched back) makes it live again. The check is not on the
frame path: a ``depsgraph_update_post`` handler only notes which bodies' data changed (cheap),
and a timer checks those once the edits pause and playback has stopped (reading every vertex's
groups of a 16k-vertex mesh with ~4 groups a vertex took ~60 ms, the whole fingerprint ~90 ms,
measured before the read-groups filter), or
:func:`check` is called directly (scripts, tests). The add-on's own shape-key writes also note
their body, so one check follows each stop of playback."""

import hashlib
import time

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import session
from .shape_key import SHAPE_KEY

# Seconds without edits before the timer checks the noted bodies.
QUIET_SECONDS = 0.5

# Body keys whose data changed since their last check, and when the last change was seen.
_dirty = set()
_last_edit = [0.0]


def _digest(*parts):
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode())
    return h.hexdigest()


def _read_groups(ob):
    """The vertex groups a bind reads: the Armature's deform bones', the leak and stiffness
    groups and the shape keys' (other groups, e.g. a Mask modifier's, do not matter)."""
    names = {ob.overtone.leak_group, ob.overtone.stiffness_group}
    for m in ob.modifiers:
        if m.type == 'ARMATURE':
            if m.object is not None and m.object.type == 'ARMATURE':
                names |= {b.name for b in m.object.data.bones if b.use_deform}
            break
    keys = ob.data.shape_keys
    if keys is not None:
        names |= {kb.vertex_group for kb in keys.key_blocks}
    return names - {""}


def _weights(ob):
    """The read groups (:func:`_read_groups`: names and indices) and every vertex's (group,
    weight) pairs in them."""
    read = _read_groups(ob)
    groups = sorted((g.index, g.name) for g in ob.vertex_groups if g.name in read)
    wanted = {i for i, _ in groups}
    pairs = np.array([(v.index, g.group, g.weight) for v in ob.data.vertices for g in v.groups
                      if g.group in wanted], dtype=np.float64)
    return _digest(tuple(groups), pairs.tobytes())


def _modifiers(ob):
    """The modifiers up to and including the first Armature modifier, and its settings (what
    the rig's skinning and the bind's checks depend on)."""
    out = []
    for m in ob.modifiers:
        if m.type == 'ARMATURE':
            out.append((m.object.name if m.object else None, m.use_deform_preserve_volume,
                        m.use_bone_envelopes, m.use_vertex_groups, m.vertex_group, m.use_multi_modifier))
            break
        out.append((m.type, m.show_viewport, m.show_render))
    return _digest(tuple(out))


def _shape_keys(ob):
    """The shape keys other than the reference (the rest, see :func:`_rest`) and Overtone's own:
    name, mute, relative key, vertex group and positions (their values are the pose, read every
    frame, not part of the bind). A mesh without keys and one with only the Basis Add created
    give the same digest."""
    keys = ob.data.shape_keys
    if keys is None:
        return _digest()
    n = len(ob.data.vertices)
    buf = np.empty(3 * n, dtype=np.float32)
    parts = []
    for kb in keys.key_blocks:
        if kb.name == SHAPE_KEY or kb == keys.reference_key:
            continue
        kb.data.foreach_get("co", buf)
        parts += [(keys.use_relative, kb.name, kb.mute, kb.relative_key.name if kb.relative_key else None,
                   kb.vertex_group), buf.tobytes()]
    return _digest(*parts)


def _rest(ob):
    me = ob.data
    buf = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", buf)
    return _digest(len(me.vertices), buf.tobytes())


# What a fingerprint covers, each part with the words the panel uses for it.
PARTS = (
    ("rest", "the rest positions", _rest),
    ("weights", "the vertex groups or weights", _weights),
    ("modifiers", "the modifiers up to the Armature modifier", _modifiers),
    ("shape_keys", "the shape keys", _shape_keys),
)


def _scene(objects, scene):
    """The scene's gravity in world units as the bind used it (nothing without gravity: the
    unit scale only converts gravity)."""
    props = objects[0].overtone
    if not (props.use_gravity and scene.use_gravity):
        return _digest(None)
    return _digest(tuple(scene.gravity), scene.unit_settings.scale_length)


def fingerprint(objects, scene):
    """``{part: digest}`` of the body ``objects`` (see :data:`PARTS`), plus the scene's gravity
    and unit scale as the first object's settings see them."""
    out = {name: _digest(*(read(ob) for ob in objects)) for name, _, read in PARTS}
    out["scene"] = _scene(objects, scene)
    return out


def scene_changed(s, objects, scene):
    """Whether the scene's gravity or units differ from the bind of session ``s`` (a few
    numbers: cheap enough for every frame)."""
    return s.setup is not None and s.setup.get("scene") != _scene(objects, scene)


def check_scene(s, objects, scene):
    """The per-frame part of the check (:func:`scene_changed`): marks ``s`` outdated when the
    scene's gravity or units changed, and live again when they are back and nothing else was
    changed."""
    if not s.setup_outdated and scene_changed(s, objects, scene):
        mark(s, objects, ["scene"])
    elif s.setup_outdated and s.outdated_parts == ["scene"] and \
            not scene_changed(s, objects, scene):
        _clear(s, objects)


def _clear(s, objects):
    """Live again: the next frame simulates from the start frame."""
    s.setup_outdated = False
    s.outdated_parts = []
    s.last_frame = None
    s.clear_cache()
    for ob in objects:
        ob.overtone.status = "live (the setup matches the bind again)"


def mark(s, objects, parts):
    """Marks session ``s`` outdated for the fingerprint ``parts`` that changed: the plain rig
    shown, the status says what changed."""
    from . import live

    s.setup_outdated = True
    s.outdated_parts = list(parts)
    for ob in objects:
        live.zero_offsets(ob)
        ob.overtone.status = f"Outdated — Rebind: {words(parts)} changed since Overtone was added"


_WORDS = dict((name, words) for name, words, _ in PARTS) | {"scene": "the scene's gravity or units"}


def changed(old, new):
    """The parts (keys) of two fingerprints that differ."""
    return [k for k in old if old[k] != new.get(k)]


def words(parts):
    """What the parts of a fingerprint are, in the panel's words."""
    return ", ".join(_WORDS[k] for k in parts)


def check(scene, keys=None):
    """Checks the live bodies of ``scene`` that have a session (only those of body ``keys`` when
    given): one whose fingerprint no longer matches its bind is marked outdated (plain rig shown,
    the status says what changed); an outdated one that matches again is live again. Returns the
    objects newly marked."""
    from . import live

    marked = []
    for obs in live._live_bodies(scene):
        s = session.get(obs[0])
        if s is None or s.setup is None or (keys is not None and session.body_key(obs[0]) not in keys):
            continue
        what = changed(s.setup, fingerprint(obs, scene))
        if what and not s.setup_outdated:
            mark(s, obs, what)
            marked += obs
        elif not what and s.setup_outdated:
            _clear(s, obs)  # back to what was bound
    return marked


def rebind_if_changed(scene, keys):
    """For precomputes the frame handler ran on the worker thread (bodies ``keys``, just
    installed): a body edited while it was binding is bound again from its current data (its
    session dropped; the next frame starts the new bind) instead of playing the old setup.
    Returns the keys bound again."""
    again = []
    for ob in check(scene, set(keys)):
        key = session.body_key(ob)
        if key not in again:
            again.append(key)
            session.drop(ob)
    for ob in scene.objects:
        if ob.type == 'MESH' and session.body_key(ob) in again:
            ob.overtone.status = "binding again: the mesh changed while it was binding"
    return again


def _bodies_touched(scene, depsgraph):
    """Keys of the bound bodies whose object or mesh data the update touched (the scene's
    gravity and units are compared every frame instead: :func:`scene_changed`)."""
    keys = set()
    for u in depsgraph.updates:
        if not u.is_updated_geometry:
            continue
        idb = u.id.original if u.id is not None else None
        if isinstance(idb, bpy.types.Object) and idb.type == 'MESH' and idb.overtone.enabled:
            keys.add(session.body_key(idb))
        elif isinstance(idb, bpy.types.Mesh):
            for ob in scene.objects:
                if ob.data == idb and ob.overtone.enabled:
                    keys.add(session.body_key(ob))
    return keys


def _playing():
    """Whether any window plays the timeline (a timer has no screen in its context)."""
    wm = getattr(bpy.context, "window_manager", None)
    return wm is not None and any(w.screen is not None and w.screen.is_animation_playing for w in wm.windows)


def _timer():
    """Checks the noted bodies once the edits have paused for :data:`QUIET_SECONDS`."""
    wait = QUIET_SECONDS - (time.perf_counter() - _last_edit[0])
    if wait > 0.0:
        return wait
    try:
        if _playing() or any(o.mode in {'EDIT', 'SCULPT'} for o in bpy.context.scene.objects
                             if o.type == 'MESH' and session.body_key(o) in _dirty):
            return QUIET_SECONDS  # mesh data is not final yet: look again later
        keys = set(_dirty)
        _dirty.clear()
        check(bpy.context.scene, keys)
    except Exception as e:  # a timer must never raise into Blender
        _dirty.clear()
        print(f"Overtone: checking the bind: {e}")
    return None


@persistent
def on_depsgraph_update(scene, depsgraph):
    from . import live

    if live._replaying or live._rendering:
        return
    try:
        touched = {k for k in _bodies_touched(scene, depsgraph) if session.get_key(k) is not None}
        if not touched:
            return
        _dirty.update(touched)
        _last_edit[0] = time.perf_counter()
        if not bpy.app.timers.is_registered(_timer):
            bpy.app.timers.register(_timer, first_interval=QUIET_SECONDS)
    except Exception as e:  # a handler must never raise into Blender
        print(f"Overtone: noting an edit: {e}")


def register():
    unregister()
    bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister():
    handlers = bpy.app.handlers.depsgraph_update_post
    for h in list(handlers):
        if getattr(h, "__name__", "") == "on_depsgraph_update" and h.__module__ == __name__:
            handlers.remove(h)
    if bpy.app.timers.is_registered(_timer):
        bpy.app.timers.unregister(_timer)
