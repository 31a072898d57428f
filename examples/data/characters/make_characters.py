"""Builds a thin-limbed rigged humanoid headless in Blender (bpy) as a user would, keys a vigorous
hop-and-swing followed by a still hold, and exports it with Blender's own glTF exporter.

    python make_characters.py OUT.glb [--variant mannequin|robot|avatar] [--render DIR]
    python make_characters.py OUT.glb --variant riggedfigure --source RiggedFigure.glb [--render DIR]

Variants (both T-pose, +Z up in Blender, exported +Y up by the exporter):

* ``mannequin``: one mesh from a Skin modifier over an edge skeleton (thin arms, legs and
  five-segment... three-segment fingers), Catmull-Clark subdivided, 52 bones, automatic
  (bone-heat) weights, metres, object scale 1.
* ``robot``: Mixamo-like units: built in centimetres under an armature object of scale 0.01;
  two skinned meshes bound to the same armature (``Body``: thin limb capsules; ``Joints``: a
  sphere at every joint, separate surface pieces), 20 bones, automatic weights.
* ``avatar``: a layered game avatar: the mannequin's body (no fingers, one subdivision) and
  six more meshes bound to the same 22 bones: an open shirt and shorts (the body's faces there,
  1.2 cm out), hair cards (open quads), eyes (spheres half in the head), teeth (a cube inside
  it) and glasses (two open rims 3 cm in front of the face); automatic weights.
* ``riggedfigure``: not built here: Khronos's RiggedFigure.glb (CC BY 4.0, (c) 2017 Cesium)
  imported with Blender's glTF importer, its own clip deleted, the same motion keyed on its 19
  bones (RIGGEDFIGURE_BONES; rotations carried over about world axes at rest by Retarget, the
  hop scaled by its height over the mannequin's); mesh, weights and bind pose as imported.

The animation (24 fps): frames 1-36 a hop (the hips rise 0.18 m, about 10% of the height, world
up, at frames 9, 17, 25 and 33 and crouch 0.10 m on the landings) with hip sway, spine bend and
large arm swings, frames 40-72 a still hold in a pose far from the bind pose (arms lowered 65
degrees toward the sides, elbows and knees bent). All three variants are keyed by the same
key_animation through a Retarget (mannequin and robot onto their own humanoid_joints bones), so
the hips offset is along world axes; riggedfigure keeps its original arm keys (motion_keys'
`legacy`: hold arms swung forward, elbows bending backward in the swing).

``--render DIR`` writes Workbench renders of a few frames of the armature-deformed mesh.
The script ends with ``os._exit`` (bpy 4.5 can hang at interpreter exit).
"""

import math
import os
import sys

import bpy
from mathutils import Euler, Vector

FPS = 24
MOTION_END = 36
HOLD_END = 72


def reset_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.frame_start = 1
    scene.frame_end = HOLD_END
    return scene


def chain(points):
    """Consecutive point pairs."""
    return list(zip(points[:-1], points[1:]))


def humanoid_joints(fingers):
    """Joint positions (metres, T-pose) and bones as (name, head, tail, parent)."""
    bones = []

    def add(name, head, tail, parent):
        bones.append((name, Vector(head), Vector(tail), parent))

    add("Hips", (0, 0, 0.95), (0, 0, 1.05), None)
    add("Spine", (0, 0, 1.05), (0, 0, 1.18), "Hips")
    add("Spine1", (0, 0, 1.18), (0, 0, 1.30), "Spine")
    add("Spine2", (0, 0, 1.30), (0, 0, 1.42), "Spine1")
    add("Neck", (0, 0, 1.42), (0, 0, 1.52), "Spine2")
    add("Head", (0, 0, 1.52), (0, 0, 1.72), "Neck")
    for side, s in (("Left", 1.0), ("Right", -1.0)):
        add(f"{side}Shoulder", (0.03 * s, 0, 1.40), (0.16 * s, 0, 1.40), "Spine2")
        add(f"{side}Arm", (0.16 * s, 0, 1.40), (0.43 * s, 0, 1.40), f"{side}Shoulder")
        add(f"{side}ForeArm", (0.43 * s, 0, 1.40), (0.68 * s, 0, 1.40), f"{side}Arm")
        add(f"{side}Hand", (0.68 * s, 0, 1.40), (0.76 * s, 0, 1.40), f"{side}ForeArm")
        if fingers:
            for f, dy in enumerate((-0.032, -0.012, 0.008, 0.028)):
                start = Vector((0.76 * s, dy, 1.40))
                step = Vector((0.027 * s, 0, 0))
                parent = f"{side}Hand"
                for seg in range(3):
                    name = f"{side}Finger{f}_{seg}"
                    add(name, start + seg * step, start + (seg + 1) * step, parent)
                    parent = name
            start = Vector((0.71 * s, -0.04, 1.39))
            step = Vector((0.02 * s, -0.018, 0))
            parent = f"{side}Hand"
            for seg in range(3):
                name = f"{side}Thumb_{seg}"
                add(name, start + seg * step, start + (seg + 1) * step, parent)
                parent = name
        add(f"{side}UpLeg", (0.10 * s, 0, 0.93), (0.11 * s, 0, 0.52), "Hips")
        add(f"{side}Leg", (0.11 * s, 0, 0.52), (0.11 * s, 0.02, 0.10), f"{side}UpLeg")
        add(f"{side}Foot", (0.11 * s, 0.02, 0.10), (0.11 * s, -0.12, 0.03), f"{side}Leg")
        if fingers:
            add(f"{side}ToeBase", (0.11 * s, -0.12, 0.03), (0.11 * s, -0.20, 0.02), f"{side}Foot")
    return bones


def radius_for(name):
    """Skin radius (metres) at the head of a bone."""
    table = [
        ("Finger", 0.009), ("Thumb", 0.010), ("Hand", 0.022), ("ForeArm", 0.032), ("Arm", 0.040),
        ("Shoulder", 0.055), ("ToeBase", 0.025), ("Foot", 0.035), ("UpLeg", 0.070), ("Leg", 0.048),
        ("Head", 0.080), ("Neck", 0.045), ("Spine2", 0.13), ("Spine1", 0.12), ("Spine", 0.12), ("Hips", 0.13),
    ]
    for key, r in table:
        if key in name:
            return r
    return 0.05


def make_armature(name, bones, unit):
    arm = bpy.data.armatures.new(name)
    rig = bpy.data.objects.new(name, arm)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    for bname, head, tail, parent in bones:
        eb = arm.edit_bones.new(bname)
        eb.head = head * unit
        eb.tail = tail * unit
        if parent:
            eb.parent = arm.edit_bones[parent]
            eb.use_connect = (eb.parent.tail - eb.head).length < 1e-6
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def skin_mesh(name, bones, unit, subdivisions, segments):
    """A Skin-modifier surface over the bone segments (each split into `segments` edges)."""
    verts, edges, radii, index = [], [], [], {}

    def vid(p, r):
        key = tuple(round(c, 6) for c in p)
        if key not in index:
            index[key] = len(verts)
            verts.append(Vector(p))
            radii.append(r)
        return index[key]

    by_name = {b[0]: b for b in bones}
    for bname, head, tail, parent in bones:
        r0 = radius_for(bname)
        children = [b for b in bones if b[3] == bname and (b[1] - tail).length < 1e-6]
        r1 = radius_for(children[0][0]) if len(children) == 1 else r0 * 0.8
        if parent and (by_name[parent][2] - head).length > 1e-6:
            # A bone not connected to its parent: bridge to the parent's tail (clavicles, legs,
            # fingers start inside the parent's skin).
            a = vid(tuple(by_name[parent][2] * unit), radius_for(parent) * unit)
            b = vid(tuple(head * unit), r0 * unit)
            if a != b:
                edges.append((a, b))
        prev = vid(tuple(head * unit), r0 * unit)
        for k in range(1, segments + 1):
            t = k / segments
            p = head.lerp(tail, t) * unit
            cur = vid(tuple(p), (r0 + (r1 - r0) * t) * unit)
            edges.append((prev, cur))
            prev = cur
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(v) for v in verts], edges, [])
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    sk = ob.modifiers.new("Skin", "SKIN")
    sk.use_smooth_shade = True
    for sv, r in zip(me.skin_vertices[0].data, radii):
        sv.radius = (r, r)
    me.skin_vertices[0].data[0].use_root = True
    bpy.ops.object.modifier_apply(modifier="Skin")
    if subdivisions:
        sub = ob.modifiers.new("Subdivision", "SUBSURF")
        sub.levels = subdivisions
        sub.render_levels = subdivisions
        bpy.ops.object.modifier_apply(modifier="Subdivision")
    ob.select_set(False)
    return ob


def joint_spheres(name, bones, unit):
    """One UV sphere per joint (separate surface pieces in one mesh)."""
    import bmesh

    bm = bmesh.new()
    seen = set()
    for bname, head, tail, parent in bones:
        for p in (head, tail):
            key = tuple(round(c, 5) for c in p)
            if key in seen:
                continue
            seen.add(key)
            r = radius_for(bname) * 1.25 * unit
            bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=10, radius=r,
                                      matrix=__import__("mathutils").Matrix.Translation(p * unit))
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def capsule_body(name, bones, unit):
    """Thin limb capsules (cylinders with end caps) around each bone, one mesh."""
    import bmesh
    from mathutils import Matrix

    bm = bmesh.new()
    for bname, head, tail, parent in bones:
        d = tail - head
        length = d.length
        if length < 1e-6:
            continue
        r = radius_for(bname) * unit
        rot = d.to_track_quat("Z", "Y").to_matrix().to_4x4()
        mat = Matrix.Translation((head + tail) * 0.5 * unit) @ rot
        bmesh.ops.create_cone(bm, cap_ends=True, segments=24, radius1=r, radius2=r * 0.9,
                              depth=length * unit * 0.82, matrix=mat)
    bmesh.ops.subdivide_edges(bm, edges=[e for e in bm.edges if e.calc_length() > 3.0 * unit * 0.01],
                              cuts=3, use_grid_fill=True)
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def layer_from_body(name, body, keep, offset):
    """An open shell over part of `body`: the faces whose vertices all satisfy `keep(co)`,
    pushed out along the vertex normals by `offset` (clothing: a shirt, shorts)."""
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(body.data)
    bm.normal_update()
    drop = [f for f in bm.faces if not all(keep(v.co) for v in f.verts)]
    bmesh.ops.delete(bm, geom=drop, context="FACES")
    loose = [v for v in bm.verts if not v.link_faces]
    bmesh.ops.delete(bm, geom=loose, context="VERTS")
    for v in bm.verts:
        v.co = v.co + v.normal * offset
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def avatar_layers(body):
    """The layers of a game avatar over `body` (the mannequin, facing -Y, head 1.52-1.72 m):
    an open shirt and shorts, hair cards, eyes, teeth and glasses, each its own mesh."""
    import bmesh
    from mathutils import Matrix

    top = layer_from_body("OutfitTop", body,
                          lambda c: 0.90 <= c.z <= 1.47 and abs(c.x) <= 0.33, 0.012)
    bottom = layer_from_body("OutfitBottom", body,
                             lambda c: 0.55 <= c.z <= 1.00, 0.012)

    def mesh_of(name, build):
        bm = bmesh.new()
        build(bm)
        me = bpy.data.meshes.new(name)
        bm.to_mesh(me)
        bm.free()
        ob = bpy.data.objects.new(name, me)
        bpy.context.scene.collection.objects.link(ob)
        return ob

    def hair(bm):
        # Cards (single quads, open) over the back and top of the head, 1.5 cm off it.
        for k in range(7):
            a = math.radians(-90 + 30 * k)  # around the back of the head
            mat = (Matrix.Translation((0.095 * math.cos(a), 0.095 * math.sin(a) + 0.01, 1.63))
                   @ Matrix.Rotation(a + math.pi / 2, 4, "Z") @ Matrix.Rotation(math.pi / 2, 4, "X"))
            bmesh.ops.create_grid(bm, x_segments=2, y_segments=4, size=0.05, matrix=mat)

    def eyes(bm):
        for s in (1.0, -1.0):
            bmesh.ops.create_uvsphere(bm, u_segments=12, v_segments=8, radius=0.014,
                                      matrix=Matrix.Translation((0.03 * s, -0.072, 1.65)))

    def teeth(bm):
        bmesh.ops.create_cube(bm, size=0.03, matrix=Matrix.Translation((0.0, -0.06, 1.585)))

    def glasses(bm):
        for s in (1.0, -1.0):
            bmesh.ops.create_circle(bm, cap_ends=False, segments=16, radius=0.022,
                                    matrix=Matrix.Translation((0.032 * s, -0.10, 1.65))
                                    @ Matrix.Rotation(math.pi / 2, 4, "X"))
        # Rims as thin tubes: extrude the circles into short cylinders.
        edges = [e for e in bm.edges]
        ret = bmesh.ops.extrude_edge_only(bm, edges=edges)
        moved = [v for v in ret["geom"] if isinstance(v, bmesh.types.BMVert)]
        bmesh.ops.translate(bm, verts=moved, vec=(0.0, -0.004, 0.0))

    return [top, bottom, mesh_of("Hair", hair), mesh_of("Eyes", eyes), mesh_of("Teeth", teeth),
            mesh_of("Glasses", glasses)]


def _segment_distance(p, a, b):
    ab = b - a
    t = max(0.0, min(1.0, (p - a).dot(ab) / max(ab.dot(ab), 1e-12)))
    return (a + t * ab - p).length


def bind(meshes, rig):
    for ob in meshes:
        bpy.ops.object.select_all(action="DESELECT")
        ob.select_set(True)
        rig.select_set(True)
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.parent_set(type="ARMATURE_AUTO")
        # Bone heat can leave a few vertices of a closed capsule without weight; a TD would
        # paint them: give each to the bone nearest to it.
        for v in ob.data.vertices:
            if not any(g.weight > 0 for g in v.groups):
                p = ob.matrix_world @ v.co
                best = min(rig.data.bones, key=lambda b: _segment_distance(
                    p, rig.matrix_world @ b.head_local, rig.matrix_world @ b.tail_local))
                ob.vertex_groups[best.name].add([v.index], 1.0, "REPLACE")
        groups = {g.group for v in ob.data.vertices for g in v.groups if g.weight > 0}
        unweighted = sum(1 for v in ob.data.vertices if not any(g.weight > 0 for g in v.groups))
        print(f"{ob.name}: {len(ob.data.vertices)} vertices, {len(groups)} weighted groups, "
              f"{unweighted} unweighted vertices")


def motion_keys(legacy=False):
    """The keys of the hop-and-swing (frames 1-36) and the still hold (37-72), as
    (frame, rotations, hips_offset): Euler XYZ degrees per bone in the local (rest) axes of the
    humanoid_joints rig, and a Hips offset in metres along world axes (x: sway, z up: crouch
    -0.10 on the landings, +0.18 (about 10% of the 1.78 m height) at the tops of the hops,
    -0.06 in the hold, where the bent knees lower the hips by about as much).

    At rest (T-pose) an arm bone's local x is world -Y on the left, +Y on the right (forward /
    back), its z world up: a negative x rotation lowers either arm toward the side, a z rotation
    swings it about the vertical; the forearm's z rotation bends the elbow in front (negative on
    the left, positive on the right, with the arm as rotated). The legs' local x is world x: a
    negative UpLeg x rotation lifts the thigh forward, a positive Leg x bends the knee, a negative
    Foot x (by their sum) keeps the foot level.

    `legacy`: the keys riggedfigure_keyed.glb was made with (elbows bending 10-90 degrees
    backward in the swing rather than 10-50 in front, the arms swung 60 degrees forward about
    the vertical in the hold rather than lowered, no foot keys), kept so that that file
    regenerates byte-identical."""

    def swing(phase, hop):
        a = math.sin(phase)
        c = math.cos(phase)
        elbow = 50 + 40 * a if legacy else -(30 + 20 * a)
        return {
            "Hips": (6 * a, 0, 12 * c),
            "Spine": (10 * a, 0, -6 * c),
            "Spine1": (10 * a, 6 * c, -6 * c),
            "Spine2": (8 * a, 6 * c, 0),
            "Neck": (-10 * a, 0, 0),
            "LeftArm": (60 * a, 0, -40 + 55 * c),
            "RightArm": (-60 * a, 0, 40 - 55 * c),
            "LeftForeArm": (0, 0, elbow),
            "RightForeArm": (0, 0, -elbow),
            "LeftUpLeg": (-35 * hop, 0, 0),
            "RightUpLeg": (-35 * hop, 0, 0),
            "LeftLeg": (60 * hop, 0, 0),
            "RightLeg": (60 * hop, 0, 0),
            **({} if legacy else {"LeftFoot": (-25 * hop, 0, 0), "RightFoot": (-25 * hop, 0, 0)}),
        }

    keys = [(1, {}, (0, 0, 0))]
    for i, f in enumerate(range(5, MOTION_END + 1, 4)):
        phase = 2.2 * i
        hop = 1.0 if i % 2 == 0 else 0.0
        z = 0.0 if hop else 0.18
        keys.append((f, swing(phase, hop), (0.03 * math.sin(phase), 0, z - 0.10 * hop)))
    if legacy:
        arms = {
            "LeftArm": (0, 0, -60), "RightArm": (0, 0, 60),
            "LeftForeArm": (0, 0, 30), "RightForeArm": (0, 0, -30),
        }
    else:
        # Lowered 65 degrees from the T-pose toward the sides, a little forward, elbows bent.
        arms = {
            "LeftArm": (-65, 0, -10), "RightArm": (-65, 0, 10),
            "LeftForeArm": (0, 0, -30), "RightForeArm": (0, 0, 30),
            "LeftFoot": (-20, 0, 0), "RightFoot": (-20, 0, 0),
        }
    hold = {
        **arms,
        "LeftUpLeg": (-25, 0, 0), "RightUpLeg": (-25, 0, 0),
        "LeftLeg": (45, 0, 0), "RightLeg": (45, 0, 0),
        "Spine1": (8, 0, 0), "Head": (-10, 0, 15),
    }
    keys.append((MOTION_END + 4, hold, (0, 0, -0.06)))
    keys.append((HOLD_END, hold, (0, 0, -0.06)))
    return keys


class Retarget:
    """Carries motion_keys() over to a rig (with other bone names and rest axes, or the
    humanoid_joints rig itself, where the rotations come out as written): each rotation
    is turned into the same rotation about world axes at rest (a rotation R in a humanoid_joints
    bone's local axes L becomes L R L^T in the world, then T^T (L R L^T) T in the target bone's
    local axes T), and the Hips offset (metres) is applied along world axes (z up), scaled by
    `scale` (the armature's units per metre times any height ratio)."""

    def __init__(self, rig, names, scale):
        bpy.ops.object.select_all(action="DESELECT")
        ref = make_armature("Reference", humanoid_joints(fingers=False), 1.0)
        self.ref_axes = {b.name: b.matrix_local.to_3x3() for b in ref.data.bones}
        ref_data = ref.data
        bpy.data.objects.remove(ref)
        bpy.data.armatures.remove(ref_data)
        world = rig.matrix_world.to_3x3().normalized()
        self.axes = {b.name: world @ b.matrix_local.to_3x3() for b in rig.data.bones}
        self.names = names
        self.scale = scale
        self.previous = {}

    def rotation(self, ref_name, degrees):
        target = self.names[ref_name]
        r = Euler(tuple(math.radians(a) for a in degrees)).to_matrix()
        lr, tr = self.ref_axes[ref_name], self.axes[target]
        local = tr.transposed() @ (lr @ r @ lr.transposed()) @ tr
        e = local.to_euler("XYZ", self.previous.get(target, Euler((0, 0, 0))))
        self.previous[target] = e
        return target, e

    def location(self, offset):
        return self.axes[self.names["Hips"]].transposed() @ (Vector(offset) * self.scale)


def key_animation(rig, retarget, legacy=False):
    """Keys motion_keys() on `rig` through a Retarget (for mannequin.glb and robot.glb one onto
    the same humanoid_joints bones, so the rotations stay as written and the Hips offset goes
    along world axes, z up). Every bone gets a rotation key on every key frame, the hips a
    location key."""
    pb = rig.pose.bones
    for b in pb:
        b.rotation_mode = "XYZ"
    hips = retarget.names["Hips"]
    for frame, rotations, hips_offset in motion_keys(legacy):
        for b in pb:
            b.rotation_euler = Euler((0, 0, 0))
        for name, r in rotations.items():
            if name in retarget.names:
                target, e = retarget.rotation(name, r)
                pb[target].rotation_euler = e
        # Bones left at rest on this key: their next Euler continues from zero.
        rotated = {retarget.names[n] for n in rotations if n in retarget.names}
        retarget.previous = {t: e for t, e in retarget.previous.items() if t in rotated}
        pb[hips].location = retarget.location(hips_offset)
        for b in pb:
            b.keyframe_insert("rotation_euler", frame=frame)
        pb[hips].keyframe_insert("location", frame=frame)
    for fc in rig.animation_data.action.fcurves if hasattr(rig.animation_data.action, "fcurves") else []:
        for kp in fc.keyframe_points:
            kp.interpolation = "BEZIER"


def render(meshes, rig, out_dir, frames):
    scene = bpy.context.scene
    os.makedirs(out_dir, exist_ok=True)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = 480
    scene.render.resolution_y = 480
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    cam_data = bpy.data.cameras.new("Camera")
    cam = bpy.data.objects.new("Camera", cam_data)
    scene.collection.objects.link(cam)
    cam.location = (1.2, -3.4, 1.3)
    cam.rotation_euler = Euler((math.radians(85), 0, math.radians(20)))
    scene.camera = cam
    for f in frames:
        scene.frame_set(f)
        scene.render.filepath = os.path.join(out_dir, f"frame{f:03d}.png")
        bpy.ops.render.render(write_still=True)


# Khronos RiggedFigure's bones for the humanoid_joints names (no clavicles, one upper-torso bone
# for Spine1 + Spine2: Spine1's bend is dropped).
RIGGEDFIGURE_BONES = {
    "Hips": "torso_joint_1", "Spine": "torso_joint_2", "Spine2": "torso_joint_3",
    "Neck": "neck_joint_1", "Head": "neck_joint_2",
    "LeftArm": "arm_joint_L_1", "LeftForeArm": "arm_joint_L_2", "LeftHand": "arm_joint_L_3",
    "RightArm": "arm_joint_R_1", "RightForeArm": "arm_joint_R_2", "RightHand": "arm_joint_R_3",
    "LeftUpLeg": "leg_joint_L_1", "LeftLeg": "leg_joint_L_2", "LeftFoot": "leg_joint_L_3",
    "LeftToeBase": "leg_joint_L_5",
    "RightUpLeg": "leg_joint_R_1", "RightLeg": "leg_joint_R_2", "RightFoot": "leg_joint_R_3",
    "RightToeBase": "leg_joint_R_5",
}
# Height of the mannequin (metres): the motion is scaled by the imported figure's height over it.
MANNEQUIN_HEIGHT = 1.78


def import_riggedfigure(source):
    """Imports Khronos RiggedFigure.glb with Blender's glTF importer and drops its animation."""
    bpy.ops.import_scene.gltf(filepath=source)
    rig = next(ob for ob in bpy.context.scene.objects if ob.type == "ARMATURE")
    meshes = [ob for ob in bpy.context.scene.objects
              if ob.type == "MESH" and any(m.type == "ARMATURE" and m.object == rig for m in ob.modifiers)]
    for ob in bpy.data.objects:
        if ob.animation_data:
            ob.animation_data_clear()
    for action in list(bpy.data.actions):
        bpy.data.actions.remove(action)
    for b in rig.pose.bones:
        b.location = (0, 0, 0)
        b.rotation_quaternion = (1, 0, 0, 0)
        b.scale = (1, 1, 1)
    # The importer's bone display shape (not part of the figure).
    for ob in list(bpy.context.scene.objects):
        if ob.type == "MESH" and ob not in meshes:
            bpy.data.objects.remove(ob)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.frame_start = 1
    scene.frame_end = HOLD_END
    missing = [t for t in RIGGEDFIGURE_BONES.values() if t not in rig.data.bones]
    if missing:
        raise SystemExit(f"bones not found in {source}: {missing}")
    print(f"{rig.name}: {len(rig.data.bones)} bones: {', '.join(b.name for b in rig.data.bones)}")
    for ref, target in RIGGEDFIGURE_BONES.items():
        print(f"  {ref:>12} -> {target}")
    return rig, meshes


def mesh_height(meshes):
    zs = [(ob.matrix_world @ v.co).z for ob in meshes for v in ob.data.vertices]
    return max(zs) - min(zs)


def export(out):
    bpy.ops.object.select_all(action="SELECT")
    bpy.ops.export_scene.gltf(filepath=out, export_format="GLB", export_animations=True,
                              export_apply=False, export_yup=True, export_skins=True,
                              export_morph=False, export_frame_range=True)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    out = argv[0]
    variant = "mannequin"
    render_dir = None
    source = None
    if "--variant" in argv:
        variant = argv[argv.index("--variant") + 1]
    if "--render" in argv:
        render_dir = argv[argv.index("--render") + 1]
    if "--source" in argv:
        source = argv[argv.index("--source") + 1]
    reset_scene()
    if variant == "riggedfigure":
        if not source:
            raise SystemExit("--variant riggedfigure needs --source PATH/RiggedFigure.glb")
        rig, meshes = import_riggedfigure(source)
        height = mesh_height(meshes)
        scale = height / MANNEQUIN_HEIGHT
        print(f"height {height:.3f} m, motion scale {scale:.3f}")
        key_animation(rig, Retarget(rig, RIGGEDFIGURE_BONES, scale), legacy=True)
        export(out)
        if render_dir:
            render(meshes, rig, render_dir, [1, 5, 9, 12, 17, 24, 36, 72])
        return
    if variant == "mannequin":
        unit = 1.0
        bones = humanoid_joints(fingers=True)
        rig = make_armature("Armature", bones, unit)
        body = skin_mesh("Mannequin", bones, unit, subdivisions=2, segments=4)
        meshes = [body]
    elif variant == "avatar":
        unit = 1.0
        bones = humanoid_joints(fingers=False)
        rig = make_armature("Armature", bones, unit)
        body = skin_mesh("Body", bones, unit, subdivisions=1, segments=4)
        meshes = [body] + avatar_layers(body)
    elif variant == "robot":
        unit = 100.0
        bones = humanoid_joints(fingers=False)
        rig = make_armature("Armature", bones, unit)
        meshes = [capsule_body("Body", bones, unit), joint_spheres("Joints", bones, unit)]
    else:
        raise SystemExit(f"unknown variant {variant}")
    print(f"{variant}: {len(bones)} bones")
    bind(meshes, rig)
    if variant == "robot":
        # Mixamo's convention: centimetre data under an armature object scaled by 0.01.
        rig.scale = (0.01, 0.01, 0.01)
    # The same world-axis keying as riggedfigure, onto the rig's own humanoid_joints bones.
    names = {b[0]: b[0] for b in humanoid_joints(fingers=False)}
    key_animation(rig, Retarget(rig, names, unit))
    export(out)
    if render_dir:
        render(meshes, rig, render_dir, [1, 5, 9, 12, 17, 24, 36, 72])


if __name__ == "__main__":
    code = 0
    try:
        main()
    except Exception:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
