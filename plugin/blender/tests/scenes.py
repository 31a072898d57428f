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
