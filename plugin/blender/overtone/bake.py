"""Bake: simulate the scene's frame range and write a PC2 of final object-space positions, played by
a Mesh Cache modifier right after the Armature modifier.

Per frame the cache holds ``skin(X) + Mo⁻¹ u`` (``skin`` the Armature modifier's own output,
``Mo`` the object's world matrix, ``u`` the world displacement) — exactly what the live preview's
shape key produces, up to float32 rounding. The frame, modifier visibility and shape key value are
restored whatever happens, and nothing is written unless every frame succeeded.
"""

import time

import bpy
import numpy as np

from . import cache_formats, cache_modifier, live, pc2, session, shape_key
from .rig_binding import BindError, affine_inverse


def _evaluated_positions(ob, depsgraph, n):
    me = ob.evaluated_get(depsgraph).data
    if len(me.vertices) != n:
        raise BindError(f"the Armature modifier of '{ob.name}' outputs {len(me.vertices)} vertices, "
                        f"expected {n}")
    buf = np.empty(3 * n, dtype=np.float32)
    me.vertices.foreach_get("co", buf)
    return buf.reshape(n, 3)


def bake(ob, scene, progress=None):
    """Bakes ``ob`` over ``scene.frame_start..frame_end``; returns a dict of what it did."""
    props = ob.overtone
    path = session.resolve_path(props.cache_file, "point cache", allow_temp=False)
    if props.cache_format != 'PC2':
        cache_formats.check_path(path, props.cache_format)
    start, end = scene.frame_start, scene.frame_end
    if end < start:
        raise session.SettingsError(f"the scene's frame range {start}..{end} is empty")
    frame0 = scene.frame_current
    dg = bpy.context.evaluated_depsgraph_get()
    s = session.create(ob, scene, dg)
    b = s.binding
    n = b.vertex_count
    after = [m for m in ob.modifiers[b.modifier_index + 1:]]
    saved_vis = [(m, m.show_viewport) for m in after]
    kb = shape_key.get(ob)
    saved_value = kb.value if kb is not None else None
    frames = np.empty((end - start + 1, n, 3), dtype=np.float32)
    t0 = time.perf_counter()
    step_s = 0.0
    live._replaying = True
    ok = False
    try:
        for m in after:
            m.show_viewport = False
        if kb is not None:
            kb.value = 0.0
        for i, f in enumerate(range(start, end + 1)):
            scene.frame_set(f)
            dg = bpy.context.evaluated_depsgraph_get()
            t = time.perf_counter()
            if i == 0:
                s.reset(ob, dg, f)
            else:
                s.step(ob, dg, f)
            step_s += time.perf_counter() - t
            mo = np.array(ob.evaluated_get(dg).matrix_world, dtype=np.float64)
            world_to_object = affine_inverse(mo)[:3, :3]
            frames[i] = _evaluated_positions(ob, dg, n) + (s.u @ world_to_object.T).astype(np.float32)
            if progress is not None:
                progress(i + 1, end - start + 1)
        if props.cache_format == 'PC2':
            pc2.write_pc2(path, frames, start, 1.0)
        else:
            counts, indices = cache_formats.topology(ob.data)
            fps = scene.render.fps / scene.render.fps_base
            cache_formats.write(path, props.cache_format, ob.name, frames, counts, indices, fps, start)
        ok = True
    finally:
        for m, vis in saved_vis:
            m.show_viewport = vis
        if kb is not None:
            kb.value = saved_value
        if ok:
            if props.cache_format == 'PC2':
                cache_modifier.ensure(ob, b.modifier_index, props.cache_file, start)
            else:
                cache_modifier.ensure_sequence(ob, b.modifier_index, props.cache_file,
                                               cache_formats.object_path(ob, props.cache_format))
            props.live_preview = False
        else:
            # The shape key was not touched; the live preview rebuilds its session on the next frame.
            session.drop(ob)
        scene.frame_set(frame0)
        live._replaying = False
    return {
        "path": path,
        "frames": end - start + 1,
        "vertices": n,
        "seconds": time.perf_counter() - t0,
        "step_seconds": step_s,
        "max_residual": s.max_residual,
        "cache": s.deformer.cache_status(),
    }
