"""Staleness of a bind: a fingerprint of everything a body's precompute was built from, in
Blender's data (the rest positions, the vertex groups and their weights, the modifiers up to and
including the Armature modifier and its settings, the shape keys' state, the scene's gravity and
unit scale), taken at bind and checked again after the user edits the body.

A mismatch marks the session *outdated*: the live preview stops writing frames simulated from the
old setup and shows the plain rig, and the panel says "Outdated — Rebind" with what changed. The
check is not on the frame path: a ``depsgraph_update_post`` handler only notes which bodies'
data changed (cheap), and a timer checks them once the edits pause (reading the weights of a 16k
vertex mesh takes tens of milliseconds), or :func:`check` is called directly (scripts, tests)."""

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


def _weights(ob):
    """The vertex groups (names in index order) and every vertex's (group, weight) pairs."""
    me = ob.data
    counts = np.fromiter((len(v.groups) for v in me.vertices), dtype=np.int32, count=len(me.vertices))
    pairs = np.array([(g.group, g.weight) for v in me.vertices for g in v.groups], dtype=np.float64)
    return _digest(tuple(g.name for g in ob.vertex_groups), counts.tobytes(), pairs.tobytes())


def _modifiers(ob):
    """The modifiers up to and including the first Armature modifier, and its settings (what
    the rig's skinning and the bind's checks depend on)."""
    out = []
    for m in ob.modifiers:
        out.append((m.name, m.type, m.show_viewport, m.show_render))
        if m.type == 'ARMATURE':
            out.append((m.object.name if m.object else None, m.use_deform_preserve_volume,
                        m.use_bone_envelopes, m.use_vertex_groups, m.vertex_group, m.use_multi_modifier))
            break
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


def fingerprint(objects, scene):
    """``{part: digest}`` of the body ``objects`` (see :data:`PARTS`), plus the scene's gravity
    and unit scale as the first object's settings see them."""
    out = {name: _digest(*(read(ob) for ob in objects)) for name, _, read in PARTS}
    props = objects[0].overtone
    out["scene"] = _digest(props.use_gravity and scene.use_gravity and tuple(scene.gravity),
                           scene.unit_settings.scale_length)
    return out


_WORDS = dict((name, words) for name, words, _ in PARTS) | {"scene": "the scene's gravity or units"}


def changed(old, new):
    """The words for the parts of two fingerprints that differ."""
    return [_WORDS[k] for k in old if old[k] != new.get(k)]


def check(scene):
    """Checks every bound body of ``scene`` that has a session: one whose fingerprint no longer
    matches its bind is marked outdated (plain rig shown, the status says what changed).
    Returns the objects marked."""
    from . import live

    marked = []
    for obs in live._live_bodies(scene):
        s = session.get(obs[0])
        if s is None or s.setup_outdated or s.setup is None:
            continue
        what = changed(s.setup, fingerprint(obs, scene))
        if what:
            s.setup_outdated = True
            for ob in obs:
                live.zero_offsets(ob)
                ob.overtone.status = f"Outdated — Rebind: {', '.join(what)} changed since Overtone was added"
            marked += obs
    return marked


def _bodies_touched(depsgraph):
    """Keys of the bound bodies whose object or mesh data the update touched."""
    keys = set()
    for u in depsgraph.updates:
        if not u.is_updated_geometry:
            continue
        idb = u.id.original if u.id is not None else None
        if isinstance(idb, bpy.types.Object) and idb.type == 'MESH' and idb.overtone.enabled:
            keys.add(session.body_key(idb))
        elif isinstance(idb, bpy.types.Mesh):
            for ob in bpy.context.scene.objects:
                if ob.data == idb and ob.overtone.enabled:
                    keys.add(session.body_key(ob))
    return keys


def _timer():
    """Checks the noted bodies once the edits have paused for :data:`QUIET_SECONDS`."""
    wait = QUIET_SECONDS - (time.perf_counter() - _last_edit[0])
    if wait > 0.0:
        return wait
    _dirty.clear()
    try:
        check(bpy.context.scene)
    except Exception as e:  # a timer must never raise into Blender
        print(f"Overtone: checking the bind: {e}")
    return None


@persistent
def on_depsgraph_update(scene, depsgraph):
    from . import live

    if live._replaying or live._rendering:
        return
    touched = {k for k in _bodies_touched(depsgraph) if session.get_key(k) is not None}
    if not touched:
        return
    _dirty.update(touched)
    _last_edit[0] = time.perf_counter()
    if not bpy.app.timers.is_registered(_timer):
        bpy.app.timers.register(_timer, first_interval=QUIET_SECONDS)


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
