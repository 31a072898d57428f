"""Bake: simulate the scene's frame range and write, for every object of the body, a PC2 of final
object-space positions, played by a Mesh Cache modifier right after its Armature modifier.

Per frame an object's cache holds ``skin(X) + L(t)⁻¹ u`` (``skin`` the Armature modifier's own
output in object space, ``L(t)`` the linear part of the object's world matrix at that frame,
``u`` the world displacement) — exactly what the live preview's shape key produces, up to
float32 rounding. The frame, modifier visibility and shape key values are restored whatever
happens, and nothing is written unless every frame succeeded. In an unsaved file a ``//`` cache
path goes to Blender's temporary folder (with a warning); saving the file moves it next to the
.blend (``saving.move_temporary_caches``).
"""

import time

import bpy
import numpy as np

from . import cache_modifier, live, pc2, session, shape_key
from .rig_binding import BindError, affine_inverse


def _evaluated_positions(ob, depsgraph, n, out):
    me = ob.evaluated_get(depsgraph).data
    if len(me.vertices) != n:
        raise BindError(f"the Armature modifier of '{ob.name}' outputs {len(me.vertices)} vertices, "
                        f"expected {n}")
    me.vertices.foreach_get("co", out.reshape(-1))
    return out


def bake(ob, scene, progress=None):
    """Bakes the body of ``ob`` over ``scene.frame_start..frame_end``; returns a dict of what it
    did (``paths``: one PC2 per object, ``temporary``: objects whose cache went to the temporary
    folder because the file is unsaved)."""
    objects = session.members(scene, ob)
    targets = []
    temporary = []
    for o in objects:
        if not o.overtone.cache_file:
            o.overtone.cache_file = f"//overtone/{bpy.path.clean_name(o.name)}.pc2"
        path = session.resolve_path(o.overtone.cache_file, "point cache", allow_temp=True)
        if o.overtone.cache_file.startswith("//") and not bpy.data.filepath:
            temporary.append(o.name)
        targets.append(path)
    start, end = scene.frame_start, scene.frame_end
    if end < start:
        raise session.SettingsError(f"the scene's frame range {start}..{end} is empty")
    frame0 = scene.frame_current
    dg = bpy.context.evaluated_depsgraph_get()
    s = session.create(objects, scene, dg)
    b = s.binding
    saved_vis = []
    saved_keys = []
    for o, p in zip(objects, b.parts):
        saved_vis += [(m, m.show_viewport) for m in o.modifiers[p.modifier_index + 1:]]
        kb = shape_key.get(o)
        if kb is not None:
            saved_keys.append((kb, kb.value))
    count = end - start + 1
    frames = [np.empty((count, p.n, 3), dtype=np.float32) for p in b.parts]
    t0 = time.perf_counter()
    step_s = 0.0
    live._replaying = True
    ok = False
    try:
        for m, _ in saved_vis:
            m.show_viewport = False
        for kb, _ in saved_keys:
            kb.value = 0.0
        for i, f in enumerate(range(start, end + 1)):
            scene.frame_set(f)
            dg = bpy.context.evaluated_depsgraph_get()
            t = time.perf_counter()
            if i == 0:
                s.reset(objects, dg, f)
            else:
                s.step(objects, dg, f)
            step_s += time.perf_counter() - t
            for o, p, fr in zip(objects, b.parts, frames):
                mo = np.array(o.evaluated_get(dg).matrix_world, dtype=np.float64)
                world_to_object = affine_inverse(mo)[:3, :3]
                _evaluated_positions(o, dg, p.n, fr[i])
                fr[i] += (s.u[p.slice] @ world_to_object.T).astype(np.float32)
            if progress is not None:
                progress(i + 1, count)
        for path, fr in zip(targets, frames):
            pc2.write_pc2(path, fr, start, 1.0)
        ok = True
    finally:
        for m, vis in saved_vis:
            m.show_viewport = vis
        for kb, value in saved_keys:
            kb.value = value
        if ok:
            for o, p, path in zip(objects, b.parts, targets):
                temp = o.name in temporary
                cache_modifier.ensure(o, p.modifier_index, path if temp else o.overtone.cache_file, start)
                o.overtone.cache_in_temp = temp
                o.overtone.live_preview = False
        else:
            # The shape keys were not touched; the live preview rebuilds its session on the next frame.
            session.drop(ob)
        scene.frame_set(frame0)
        live._replaying = False
    return {
        "path": targets[objects.index(ob)],
        "paths": targets,
        "objects": [o.name for o in objects],
        "temporary": temporary,
        "frames": count,
        "vertices": b.vertex_count,
        "seconds": time.perf_counter() - t0,
        "step_seconds": step_s,
        "max_residual": s.max_residual,
        "cache": s.deformer.cache_status(),
    }
