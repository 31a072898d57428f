"""What Overtone needs from a skinned Blender mesh: the bind data (read once) and the pose of each
frame.

Blender's Armature modifier works in the armature's space: a rest vertex ``X`` (mesh object
space) goes to ``Ma⁻¹ Mo X``, is blended by ``Σ_b w_b P_b R_b⁻¹`` (``P_b`` the pose bone's
``matrix``, ``R_b`` the bone's ``matrix_local``) and comes back through ``Mo⁻¹ Ma``. In world
space a vertex is therefore ``Σ_b w_b W_b X`` with

    W_b = Ma · P_b · R_b⁻¹ · Ma⁻¹ · Mo                                  (4 x 4, per bone)

which is the skin transform the library takes (its top 3 x 4 rows). Vertices with no weight are
not moved by the modifier (total weight ≤ 1e-4, as in the modifier); they get an extra column
with ``W = Mo``. Weights are normalised per vertex as the modifier does.
"""

import numpy as np

from .shape_key import SHAPE_KEY


def affine_inverse(m):
    """Inverse of a 4 x 4 affine matrix ``[[A, t], [0, 1]]`` as ``[[A⁻¹, -A⁻¹ t], [0, 1]]``, by
    cofactors (``np.linalg.inv`` costs ~0.5 ms per call on a busy machine through its thread pool;
    this runs every frame). Raises BindError for a singular ``A`` (an object scaled to zero)."""
    a = m[:3, :3]
    c = np.empty((3, 3))
    c[0, 0] = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c[0, 1] = a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]
    c[0, 2] = a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]
    c[1, 0] = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]
    c[1, 1] = a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]
    c[1, 2] = a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]
    c[2, 0] = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]
    c[2, 1] = a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]
    c[2, 2] = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    det = a[0, 0] * c[0, 0] + a[0, 1] * c[1, 0] + a[0, 2] * c[2, 0]
    if not abs(det) > 1e-300:
        raise BindError("an object or armature is scaled to zero; Overtone cannot follow it")
    out = np.eye(4)
    out[:3, :3] = c / det
    out[:3, 3] = -(out[:3, :3] @ m[:3, 3])
    return out


class BindError(ValueError):
    """The object cannot be bound; the message says what to change."""


def armature_modifier(ob):
    """The object's first Armature modifier with an armature set (BindError otherwise)."""
    for i, m in enumerate(ob.modifiers):
        if m.type == 'ARMATURE':
            if m.object is None or m.object.type != 'ARMATURE':
                raise BindError(f"the Armature modifier '{m.name}' of '{ob.name}' has no armature object")
            return i, m
    raise BindError(f"'{ob.name}' has no Armature modifier: Overtone adds secondary motion on top of "
                    "an armature; parent the mesh to an armature with automatic or painted weights first")


def _check_modifier(ob, index, mod):
    if mod.use_bone_envelopes:
        raise BindError(f"the Armature modifier '{mod.name}' uses bone envelopes; Overtone reads vertex "
                        "groups only: turn Bone Envelopes off")
    if not mod.use_vertex_groups:
        raise BindError(f"the Armature modifier '{mod.name}' ignores vertex groups; turn Vertex Groups on")
    if mod.use_deform_preserve_volume:
        raise BindError(f"the Armature modifier '{mod.name}' uses Preserve Volume (dual quaternions); "
                        "Overtone's rig contract is linear blend skinning: turn it off")
    if mod.vertex_group:
        raise BindError(f"the Armature modifier '{mod.name}' is masked by the vertex group "
                        f"'{mod.vertex_group}'; Overtone does not support a mask: clear it")
    for m in ob.modifiers[:index]:
        if m.show_viewport or m.show_render:
            raise BindError(f"modifier '{m.name}' comes before the Armature modifier; Overtone needs the "
                            "Armature modifier first (move it up or apply the modifier)")


def _triangles(mesh):
    mesh.calc_loop_triangles()
    tris = np.empty(3 * len(mesh.loop_triangles), dtype=np.uint32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3)


def vertex_group_weights(ob, name):
    """Per-vertex weights of the vertex group ``name`` (0 where a vertex is not in it)."""
    vg = ob.vertex_groups.get(name)
    if vg is None:
        raise BindError(f"'{ob.name}' has no vertex group '{name}' (the leak group)")
    gi = vg.index
    out = np.zeros(len(ob.data.vertices), dtype=np.float64)
    for v in ob.data.vertices:
        for g in v.groups:
            if g.group == gi:
                out[v.index] = g.weight
    return out


class RigBinding:
    """The bind data of one skinned mesh and a reader of its pose.

    Attributes: ``rest`` (n x 3, object space), ``triangles`` (t x 3), ``weights`` (n x bones,
    rows sum to 1), ``bone_names`` (the deform bones with weight; ``None`` marks the static
    column), ``armature`` (object name), ``vertex_count``.
    """

    def __init__(self, ob):
        if ob is None or ob.type != 'MESH':
            raise BindError("select a mesh object")
        index, mod = armature_modifier(ob)
        _check_modifier(ob, index, mod)
        self.object_name = ob.name
        self.armature = mod.object.name
        self.modifier_index = index
        mesh = ob.data
        n = len(mesh.vertices)
        if n < 4:
            raise BindError(f"'{ob.name}' has {n} vertices; Overtone needs a closed surface")
        rest = np.empty(3 * n, dtype=np.float64)
        mesh.vertices.foreach_get("co", rest)
        self.rest = rest.reshape(n, 3)
        self._read_shape_keys(ob)
        self.triangles = _triangles(mesh)
        if len(self.triangles) == 0:
            raise BindError(f"'{ob.name}' has no faces; Overtone needs a surface")
        arm = mod.object.data
        deform = [b.name for b in arm.bones if b.use_deform]
        group_col = {}
        for name in deform:
            vg = ob.vertex_groups.get(name)
            if vg is not None:
                group_col[vg.index] = name
        raw = {}
        for v in mesh.vertices:
            for g in v.groups:
                name = group_col.get(g.group)
                if name is not None and g.weight > 0.0:
                    raw.setdefault(name, []).append((v.index, g.weight))
        names = [b for b in deform if b in raw]
        w = np.zeros((n, len(names) + 1), dtype=np.float64)
        for j, name in enumerate(names):
            idx, val = zip(*raw[name])
            w[list(idx), j] = val
        total = w.sum(axis=1)
        # The modifier leaves a vertex in place when its deform weights sum to at most 1e-4.
        static = total <= 1e-4
        w[static, :] = 0.0
        w[static, -1] = 1.0
        w /= w.sum(axis=1, keepdims=True)
        if static.any():
            self.bone_names = names + [None]
        else:
            self.bone_names = names
            w = w[:, :-1]
        if not names:
            raise BindError(f"no vertex of '{ob.name}' is weighted to a deform bone of '{self.armature}'; "
                            "paint weights or parent with automatic weights")
        self.weights = np.ascontiguousarray(w)
        self._weights_t = np.ascontiguousarray(w.T)
        self._offsets = np.zeros((n, 3), dtype=np.float64)
        self.vertex_count = n
        self.static_vertices = int(static.sum())
        pose_names = [pb.name for pb in mod.object.pose.bones]
        self._pose_index = np.array([pose_names.index(b) for b in names], dtype=np.int64)
        rl = np.empty(16 * len(arm.bones), dtype=np.float64)
        arm.bones.foreach_get("matrix_local", rl)
        rl = rl.reshape(-1, 4, 4).transpose(0, 2, 1)
        bone_names = [b.name for b in arm.bones]
        rest_local = rl[[bone_names.index(b) for b in names]]
        self._rest_inv = np.linalg.inv(rest_local)
        self._pose_buf = np.empty(16 * len(pose_names), dtype=np.float64)
        self._out = np.empty((len(self.bone_names), 12), dtype=np.float64)
        self._world = np.empty((len(self.bone_names), 4, 4), dtype=np.float64)

    def _read_shape_keys(self, ob):
        """The mesh's own shape keys become blendshape columns of the rig (``targets x n x 3``
        offsets ``co - relative_key.co``, scaled by the key's vertex group if it has one); muted
        keys, keys that move nothing and Overtone's own key are left out. The rest shape is the
        reference key."""
        self.shape_key_names = []
        self.morph_deltas = None
        keys = ob.data.shape_keys
        if keys is None:
            return
        if not keys.use_relative:
            raise BindError(f"'{ob.name}' uses absolute shape keys (Evaluation Time); Overtone supports "
                            "relative shape keys only")
        n = len(ob.data.vertices)

        def co(kb):
            buf = np.empty(3 * n, dtype=np.float64)
            kb.data.foreach_get("co", buf)
            return buf.reshape(n, 3)

        ref = keys.reference_key
        self.rest = co(ref)
        deltas = []
        for kb in keys.key_blocks:
            if kb == ref or kb.name == SHAPE_KEY or kb.mute:
                continue
            if kb.relative_key is not None and kb.relative_key.name == SHAPE_KEY:
                raise BindError(f"shape key '{kb.name}' is relative to Overtone's own key; make it relative "
                                "to the Basis")
            delta = co(kb) - co(kb.relative_key if kb.relative_key is not None else ref)
            if kb.vertex_group:
                delta *= vertex_group_weights(ob, kb.vertex_group)[:, None]
            if not np.any(delta):
                continue
            self.shape_key_names.append(kb.name)
            deltas.append(delta)
        if deltas:
            self.morph_deltas = np.ascontiguousarray(np.array(deltas))
            self._key_values = np.empty(len(deltas), dtype=np.float64)

    def shape_key_values(self, ob, depsgraph):
        """The evaluated values of the target shape keys at this frame (``targets``), or None."""
        if self.morph_deltas is None:
            return None
        keys = ob.data.shape_keys
        blocks = keys.evaluated_get(depsgraph).key_blocks if keys is not None else {}
        for i, name in enumerate(self.shape_key_names):
            kb = blocks.get(name)
            if kb is None:
                raise BindError(f"shape key '{name}' of '{ob.name}' is gone since Overtone was added; press "
                                "Overtone ▸ Rebind")
            self._key_values[i] = kb.value
        return self._key_values

    def check_object(self, ob):
        """Raises BindError if the mesh no longer matches what was bound."""
        n = len(ob.data.vertices)
        if n != self.vertex_count:
            raise BindError(f"'{ob.name}' has {n} vertices but had {self.vertex_count} when Overtone was "
                            "added; press Overtone ▸ Rebind (the precompute depends on the mesh)")

    def skin_transforms(self, ob, depsgraph):
        """Per bone, the 3 x 4 world skin transform ``W_b`` at the evaluated frame
        (``bones x 12``, row-major; a view reused by the next call)."""
        index, mod = armature_modifier(ob)
        arm_ob = mod.object
        if index != self.modifier_index or arm_ob.name != self.armature:
            raise BindError(f"the Armature modifier of '{ob.name}' changed since Overtone was added; "
                            "press Overtone ▸ Rebind")
        arm_eval = arm_ob.evaluated_get(depsgraph)
        ob_eval = ob.evaluated_get(depsgraph)
        arm_eval.pose.bones.foreach_get("matrix", self._pose_buf)
        pose = self._pose_buf.reshape(-1, 4, 4).transpose(0, 2, 1)[self._pose_index]
        ma = np.array(arm_eval.matrix_world, dtype=np.float64)
        mo = np.array(ob_eval.matrix_world, dtype=np.float64)
        tail = affine_inverse(ma) @ mo
        m = len(self._pose_index)
        self._world[:m] = ma @ pose @ self._rest_inv @ tail
        if m < len(self.bone_names):
            self._world[m] = mo
        self._out[:] = self._world[:, :3, :].reshape(-1, 12)
        return self._out

    def rest_offsets(self, transforms, u):
        """Pulls a world displacement back to rest space: ``d_v = A_v⁻¹ u_v`` with
        ``A_v = Σ_b w_vb W_b[:3, :3]``, so that skinning ``X + d`` gives ``skin(X) + u`` exactly
        (LBS is affine per vertex). ``transforms`` is ``bones x 12``, ``u`` is ``n x 3``.

        Blends all vertices at once (``(9 x bones) · (bones x n)``) and inverts by cofactors (adjugate over
        determinant); a vertex whose blended matrix is singular (a bone scaled to zero) gets
        ``d = 0`` rather than an infinity."""
        lin = transforms.reshape(-1, 3, 4)[:, :, :3].reshape(-1, 9)
        a = lin.T @ self._weights_t
        a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
        c0 = a4 * a8 - a5 * a7
        c1 = a5 * a6 - a3 * a8
        c2 = a3 * a7 - a4 * a6
        det = a0 * c0 + a1 * c1 + a2 * c2
        scale = np.abs(a).max(axis=0) ** 3
        ok = np.abs(det) > 1e-12 * np.maximum(scale, 1e-300)
        inv_det = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        x, y, z = u[:, 0], u[:, 1], u[:, 2]
        out = self._offsets
        out[:, 0] = (c0 * x + (a2 * a7 - a1 * a8) * y + (a1 * a5 - a2 * a4) * z) * inv_det
        out[:, 1] = (c1 * x + (a0 * a8 - a2 * a6) * y + (a2 * a3 - a0 * a5) * z) * inv_det
        out[:, 2] = (c2 * x + (a1 * a6 - a0 * a7) * y + (a0 * a4 - a1 * a3) * z) * inv_det
        return out
