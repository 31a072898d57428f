"""Test scenes built in headless Blender: a procedurally rigged tube and CesiumMan from glTF."""

import math
import os

import bpy
import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def empty_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start = 1
    scene.frame_end = 60
    return scene


def _tube_mesh(rings, segments, length, radius):
    verts = []
    for r in range(rings):
        z = length * r / (rings - 1)
        for s in range(segments):
            a = 2.0 * math.pi * s / segments
            verts.append((radius * math.cos(a), radius * math.sin(a), z))
    bottom = len(verts)
    verts.append((0.0, 0.0, 0.0))
    top = len(verts)
    verts.append((0.0, 0.0, length))
    faces = []
    for r in range(rings - 1):
        for s in range(segments):
            a = r * segments + s
            b = r * segments + (s + 1) % segments
            faces.append((a, b, b + segments, a + segments))
    for s in range(segments):
        faces.append((bottom, (s + 1) % segments, s))
        last = (rings - 1) * segments
        faces.append((top, last + s, last + (s + 1) % segments))
    return verts, faces


def rigged_tube(rings=81, segments=40, length=3.0, radius=0.25, bones=3, stop_frame=30):
    """A closed tube along +z (``rings x segments + 2`` vertices) skinned to a chain of ``bones``
    bones with smooth weights; the root swings about x until ``stop_frame`` and then holds."""
    verts, faces = _tube_mesh(rings, segments, length, radius)
    me = bpy.data.meshes.new("Tube")
    me.from_pydata(verts, [], faces)
    me.validate()
    ob = bpy.data.objects.new("Tube", me)
    bpy.context.scene.collection.objects.link(ob)
    arm = bpy.data.armatures.new("TubeRig")
    rig = bpy.data.objects.new("TubeRig", arm)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='EDIT')
    seg = length / bones
    prev = None
    for i in range(bones):
        eb = arm.edit_bones.new(f"Bone{i}")
        eb.head = (0.0, 0.0, i * seg)
        eb.tail = (0.0, 0.0, (i + 1) * seg)
        if prev is not None:
            eb.parent = prev
            eb.use_connect = True
        prev = eb
    bpy.ops.object.mode_set(mode='OBJECT')
    z = np.array([v[2] for v in verts])
    centres = (np.arange(bones) + 0.5) * seg
    w = np.exp(-((z[:, None] - centres[None, :]) / (0.45 * seg)) ** 2)
    w /= w.sum(axis=1, keepdims=True)
    for i in range(bones):
        vg = ob.vertex_groups.new(name=f"Bone{i}")
        for v in range(len(verts)):
            if w[v, i] > 1e-4:
                vg.add([v], float(w[v, i]), 'REPLACE')
    mod = ob.modifiers.new("Armature", 'ARMATURE')
    mod.object = rig
    root = rig.pose.bones["Bone0"]
    root.rotation_mode = 'XYZ'
    for f, angle in ((1, 0.0), (8, 0.7), (16, -0.5), (24, 0.3), (stop_frame, 0.0)):
        root.rotation_euler = (angle, 0.0, 0.0)
        root.keyframe_insert("rotation_euler", frame=f)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    return ob, rig


def cesium_man():
    """CesiumMan imported with Blender's glTF importer; returns the skinned mesh object."""
    path = os.path.join(REPO, "examples", "data", "khronos-gltf-sample-assets", "CesiumMan.glb")
    bpy.ops.import_scene.gltf(filepath=path)
    for ob in bpy.context.scene.objects:
        if ob.type == 'MESH' and any(m.type == 'ARMATURE' for m in ob.modifiers):
            for o in bpy.context.selected_objects:
                o.select_set(False)
            bpy.context.view_layer.objects.active = ob
            ob.select_set(True)
            return ob
    raise RuntimeError("CesiumMan.glb imported no skinned mesh")


def evaluated_positions(ob):
    dg = bpy.context.evaluated_depsgraph_get()
    me = ob.evaluated_get(dg).data
    buf = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", buf)
    return buf.reshape(-1, 3).astype(np.float64)


def play(scene, ob, frames):
    """Sets each frame in turn and returns the evaluated positions, ``len(frames) x n x 3``."""
    out = []
    for f in frames:
        scene.frame_set(f)
        out.append(evaluated_positions(ob))
    return np.array(out)


def _select_only(objects, active):
    bpy.context.view_layer.update()
    for o in bpy.context.scene.objects:
        o.select_set(False)
    for o in objects:
        o.select_set(True)
    bpy.context.view_layer.objects.active = active


def imported_character(name="CesiumMan.glb", variant="scale1", subdivide=False):
    """A glTF character imported with Blender's importer, its animation cleared, in one of the
    transforms a TD meets (the world shape and size are the same in every variant):

    * ``scale1``: as imported (objects at scale 1, metres);
    * ``mixamo``: mesh and armature data in centimetres (x100) with the armature object at scale
      0.01 and rotated 90° about x over +Y-up data, as FBX/Mixamo characters arrive;
    * ``applied``: ``mixamo`` after *Apply All Transforms* on both objects;
    * ``ydata``: the mesh data alone stored +Y up, its object rotated 90° about x to compensate.

    ``subdivide`` merges the vertices the glTF importer splits at UV seams (a connected mesh, as
    a character modelled in Blender is) and applies one Catmull-Clark level before the armature
    (about 14k vertices for CesiumMan; subdividing the split mesh would leave 80 separate
    pieces). Returns ``(mesh, armature)``, the mesh active and selected."""
    path = name if os.path.isabs(name) else os.path.join(REPO, "examples", "data", "khronos-gltf-sample-assets", name)
    bpy.ops.import_scene.gltf(filepath=path)
    mesh = next(o for o in bpy.context.scene.objects
                if o.type == 'MESH' and any(m.type == 'ARMATURE' for m in o.modifiers))
    arm = next(m.object for m in mesh.modifiers if m.type == 'ARMATURE')
    for o in list(bpy.context.scene.objects):
        if o.type == 'MESH' and o is not mesh:
            bpy.data.objects.remove(o)
    arm.animation_data_clear()
    for pb in arm.pose.bones:
        pb.matrix_basis.identity()
    if arm.parent is not None:
        _select_only([arm], arm)
        bpy.ops.object.parent_clear(type='CLEAR_KEEP_TRANSFORM')
    for o in list(bpy.context.scene.objects):
        if o.type == 'EMPTY':
            bpy.data.objects.remove(o)
    if subdivide:
        import bmesh
        bm = bmesh.new()
        bm.from_mesh(mesh.data)
        bmesh.ops.remove_doubles(bm, verts=bm.verts, dist=1e-6)
        bm.to_mesh(mesh.data)
        bm.free()
        mesh.data.update()
        _select_only([mesh], mesh)
        sub = mesh.modifiers.new("Subdivision", 'SUBSURF')
        sub.levels = 1
        bpy.ops.object.modifier_move_to_index(modifier=sub.name, index=0)
        bpy.ops.object.modifier_apply(modifier=sub.name)
    if variant in ("mixamo", "applied"):
        _select_only([arm, mesh], arm)
        arm.rotation_euler = (-math.pi / 2, 0.0, 0.0)
        arm.scale = (100.0, 100.0, 100.0)
        bpy.context.view_layer.update()
        bpy.ops.object.transform_apply(location=False, rotation=True, scale=True)
        arm.rotation_euler = (math.pi / 2, 0.0, 0.0)
        arm.scale = (0.01, 0.01, 0.01)
        bpy.context.view_layer.update()
        if variant == "applied":
            _select_only([arm, mesh], arm)
            bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)
    elif variant == "ydata":
        # Data stored +Y up (rotated by R⁻¹), the object's own matrix rotated by R = 90° about x:
        # the same world surface.
        import mathutils
        r = mathutils.Matrix.Rotation(math.pi / 2, 4, 'X')
        rinv = np.array(r.inverted())[:3, :3]
        co = np.empty(3 * len(mesh.data.vertices))
        mesh.data.vertices.foreach_get("co", co)
        mesh.data.vertices.foreach_set("co", (co.reshape(-1, 3) @ rinv.T).ravel())
        mesh.data.update()
        mesh.matrix_basis = mesh.matrix_basis @ r
        bpy.context.view_layer.update()
    elif variant != "scale1":
        raise ValueError(variant)
    _select_only([mesh], mesh)
    return mesh, arm


def world_height(ob):
    """Height of the object's evaluated world bounding box."""
    pos = evaluated_positions(ob)
    mw = np.array(ob.matrix_world)
    w = pos @ mw[:3, :3].T + mw[:3, 3]
    return float(w[:, 2].max() - w[:, 2].min())


def key_hop_and_swing(arm, height, start=1, stop=30):
    """A vigorous motion until ``stop`` then a hold: the armature object hops (0.15 of the height)
    and turns, the first bone bends the body, and every bone whose name says arm swings."""
    base = np.array(arm.location)
    up = np.array([0.0, 0.0, 0.15 * height])
    for f, h, yaw in ((start, 0.0, 0.0), (start + 7, 1.0, 0.4), (start + 14, 0.0, -0.3),
                      (start + 21, 0.8, 0.2), (stop, 0.0, 0.0)):
        arm.location = tuple(base + up * h)
        arm.keyframe_insert("location", frame=f)
        rot = arm.rotation_euler.copy()
        arm.rotation_euler[2] = yaw
        arm.keyframe_insert("rotation_euler", index=2, frame=f)
        arm.rotation_euler = rot
    swing = [pb for pb in arm.pose.bones if "arm" in pb.name.lower()]
    root = arm.pose.bones[0]
    for pb in swing + [root]:
        pb.rotation_mode = 'XYZ'
    for f, a in ((start, 0.0), (start + 6, 0.9), (start + 12, -0.7), (start + 18, 0.6), (start + 24, -0.3),
                 (stop, 0.0)):
        for pb in swing:
            pb.rotation_euler = (a, 0.0, 0.5 * a)
            pb.keyframe_insert("rotation_euler", frame=f)
        root.rotation_euler = (0.25 * a, 0.0, 0.0)
        root.keyframe_insert("rotation_euler", frame=f)
