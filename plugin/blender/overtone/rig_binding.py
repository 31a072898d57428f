"""What Overtone needs from skinned Blender meshes: the bind data (read once) and the pose of each
frame, in one simulation space.

**Spaces.** Blender's Armature modifier works in the armature's space: a rest vertex ``X`` (mesh
object space, the mesh data's own units and axes) goes to ``Ma⁻¹ Mo X``, is blended by
``Σ_b w_b P_b R_b⁻¹`` (``P_b`` the pose bone's ``matrix``, ``R_b`` the bone's ``matrix_local``)
and comes back through ``Mo⁻¹ Ma``. In world space a vertex is ``Σ_b w_b W_b X`` with

    W_b(t) = Ma(t) · P_b(t) · R_b⁻¹ · Ma(t)⁻¹ · Mo(t)                      (4 x 4, per bone)

Overtone simulates in **world space at bind**: the rest surface handed to the library is
``Mo_bind · X`` (``Mo_bind`` the object's world matrix when Overtone was added, stored on the
object), and the skin transform of bone ``b`` is

    T_b(t) = W_b(t) · Mo_bind⁻¹ = Ma · P_b · R_b⁻¹ · Ma⁻¹ · E(t),   E(t) = Mo(t) · Mo_bind⁻¹

(its top 3 x 4 rows), which maps the bind-world rest to the posed world, the object's own motion
since bind included. Rest and pose are then in the same metric whatever the object scale (0.01 from
FBX/Mixamo, 100, negative on one axis), rotation, parent (armature, bone) or the orientation of
the mesh data: the library's normalised frame, and with it the material, means the same on every
character. A negative-determinant ``Mo_bind`` mirrors the surface, so its triangles are flipped to
stay outward. The library returns the displacement ``u`` in world units.

Several meshes on one armature are one body: their bind-world surfaces are concatenated (one
embedding, one simulation) and share the bone columns. They must move together since bind
(``E(t)`` equal for all of them: parented to the armature, or not animated); a frame where they do
not is refused with a message.

**Welded surface.** Meshes split at UV seams or hard edges (glTF imports, game assets) hold
several vertices at one position with the same weights. Handed over as they are, each split
piece is a separate surface piece to the library (its own lattice copy, never glued) and the
body falls apart into hundreds of free pieces: the precompute crawls and the motion depends on
float rounding. The library therefore gets each part's *welded* surface: vertices equal in
bind-world position, weights and shape-key offsets (bit for bit) are one vertex, as the CLI
does for glTF files; the displacement of a welded vertex is copied back to all of its copies.

Vertices with no weight are not moved by the modifier (total weight ≤ 1e-4, as in the modifier);
they get an extra column with ``T = E(t)``. Weights are normalised per vertex as the modifier
does.
"""

import numpy as np

from . import native
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


def weld_rows(rows):
    """Groups equal rows of ``rows`` (``n x k`` float64, compared bit for bit): returns ``(keep,
    inverse)``, ``keep`` the first row of each group in order of first occurrence (``w``
    indices) and ``inverse`` the group of every row (``n`` indices into ``keep``), so that
    ``rows[keep][inverse] == rows``."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise BindError("nothing to weld: the surface has no vertices")
    view = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.ravel()]


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


def vertex_group_weights(ob, name, what="leak group"):
    """Per-vertex weights of the vertex group ``name`` and which vertices are in it:
    ``(values, member)``, both of length ``n`` (values 0 where a vertex is not in the group)."""
    vg = ob.vertex_groups.get(name)
    if vg is None:
        raise BindError(f"'{ob.name}' has no vertex group '{name}' (the {what})")
    gi = vg.index
    n = len(ob.data.vertices)
    out = np.zeros(n, dtype=np.float64)
    member = np.zeros(n, dtype=bool)
    for v in ob.data.vertices:
        for g in v.groups:
            if g.group == gi:
                out[v.index] = g.weight
                member[v.index] = True
    return out, member


def _matrix(m):
    return np.array(m, dtype=np.float64).reshape(4, 4)


def _same_motion(a, b, size):
    """Whether two 4 x 4 affine motions agree (linear parts to 1e-6 relative, translations to
    1e-6 of ``size``)."""
    lin = np.abs(a[:3, :3] - b[:3, :3]).max() <= 1e-6 * max(np.abs(a[:3, :3]).max(), 1e-300)
    return lin and np.abs(a[:3, 3] - b[:3, 3]).max() <= 1e-6 * size


class _Part:
    """One mesh object of a body: its slice ``offset:offset + n`` of the body's vertices and its
    bind matrix ``Mo_bind``."""

    def __init__(self, ob, index, mod, offset, bind_matrix):
        self.name = ob.name
        self.uid = ob.session_uid
        self.modifier_index = index
        self.armature = mod.object.name
        mesh = ob.data
        n = len(mesh.vertices)
        if n < 4:
            raise BindError(f"'{ob.name}' has {n} vertices; Overtone needs a surface")
        self.n = n
        self.offset = offset
        self.slice = slice(offset, offset + n)
        rest = np.empty(3 * n, dtype=np.float64)
        mesh.vertices.foreach_get("co", rest)
        self.rest_local = rest.reshape(n, 3)
        self.bind = np.array(bind_matrix, dtype=np.float64).reshape(4, 4)
        if not np.isfinite(self.bind).all():
            raise BindError(f"'{ob.name}' has a non-finite world matrix")
        self.bind_inv = affine_inverse(self.bind)
        self.lin = np.ascontiguousarray(self.bind[:3, :3])
        self.mirrored = bool(np.linalg.det(self.lin) < 0.0)
        self._read_shape_keys(ob)
        tris = _triangles(mesh)
        if len(tris) == 0:
            raise BindError(f"'{ob.name}' has no faces; Overtone needs a surface")
        if self.mirrored:
            tris = tris[:, [0, 2, 1]]
        self.triangles = tris.astype(np.int64) + offset

    def _read_shape_keys(self, ob):
        """The mesh's own shape keys become blendshape columns of the rig (offsets
        ``co - relative_key.co`` in object space, scaled by the key's vertex group if it has one);
        muted keys, keys that move nothing and Overtone's own key are left out. The rest shape is
        the reference key."""
        self.shape_key_names = []
        self.deltas_local = []
        keys = ob.data.shape_keys
        if keys is None:
            return
        if not keys.use_relative:
            raise BindError(f"'{ob.name}' uses absolute shape keys (Evaluation Time); Overtone supports "
                            "relative shape keys only")
        n = self.n

        def co(kb):
            buf = np.empty(3 * n, dtype=np.float64)
            kb.data.foreach_get("co", buf)
            return buf.reshape(n, 3)

        ref = keys.reference_key
        self.rest_local = co(ref)
        for kb in keys.key_blocks:
            if kb == ref or kb.name == SHAPE_KEY or kb.mute:
                continue
            if kb.relative_key is not None and kb.relative_key.name == SHAPE_KEY:
                raise BindError(f"shape key '{kb.name}' of '{ob.name}' is relative to Overtone's own key; "
                                "make it relative to the Basis")
            delta = co(kb) - co(kb.relative_key if kb.relative_key is not None else ref)
            if kb.vertex_group:
                delta *= vertex_group_weights(ob, kb.vertex_group, "shape key's vertex group")[0][:, None]
            if not np.any(delta):
                continue
            self.shape_key_names.append(kb.name)
            self.deltas_local.append(delta)


def _deform_weights(ob, mesh, deform):
    """``{bone name: (vertex indices, weights)}`` of the vertex groups named after deform bones
    (positive weights only); one pass over the vertices."""
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
    return raw


class RigBinding:
    """The bind data of a body (one or more skinned meshes on one armature) and a reader of its
    pose, in world space at bind (see the module's doc).

    Attributes: ``parts`` (one per object, in body order), ``rest`` (N x 3, bind world),
    ``triangles`` (t x 3), ``weights`` (N x columns, rows sum to 1), ``bone_names`` (the deform
    bones with weight; ``None`` marks the static column), ``morph_deltas`` (targets x N x 3,
    bind world, or None), ``shape_key_names`` ((object, key) pairs), ``armature`` (object name),
    ``vertex_count`` (N).
    """

    def __init__(self, objects, bind_matrices):
        if not objects:
            raise BindError("select a mesh object")
        for ob in objects:
            if ob is None or ob.type != 'MESH':
                raise BindError("select a mesh object")
        mods = []
        for ob in objects:
            index, mod = armature_modifier(ob)
            _check_modifier(ob, index, mod)
            mods.append((index, mod))
        arm_ob = mods[0][1].object
        for ob, (_, mod) in zip(objects, mods):
            if mod.object != arm_ob:
                raise BindError(f"'{ob.name}' is deformed by the armature '{mod.object.name}', not "
                                f"'{arm_ob.name}'; meshes bound as one body share one armature")
        self.armature = arm_ob.name
        self.object_name = objects[0].name
        self.parts = []
        offset = 0
        for ob, (index, mod), bm in zip(objects, mods, bind_matrices):
            p = _Part(ob, index, mod, offset, bm)
            self.parts.append(p)
            offset += p.n
        n = offset
        self.vertex_count = n
        self.rest = np.concatenate([p.rest_local @ p.lin.T + p.bind[:3, 3] for p in self.parts])
        self.triangles = np.concatenate([p.triangles for p in self.parts])
        arm = arm_ob.data
        deform = [b.name for b in arm.bones if b.use_deform]
        raws = [_deform_weights(ob, ob.data, deform) for ob in objects]
        names = [b for b in deform if any(b in r for r in raws)]
        if not names:
            raise BindError(f"no vertex of '{objects[0].name}' is weighted to a deform bone of "
                            f"'{self.armature}'; paint weights or parent with automatic weights")
        w = np.zeros((n, len(names) + 1), dtype=np.float64)
        for p, raw in zip(self.parts, raws):
            for j, name in enumerate(names):
                if name in raw:
                    idx, val = zip(*raw[name])
                    w[p.offset + np.array(idx), j] = val
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
        self.weights = np.ascontiguousarray(w)
        self.static_vertices = int(static.sum())
        # The library's pull-back for rest_offsets: the weights kept sparse, each part's
        # offsets multiplied by the linear part of its Mo_bind⁻¹.
        self._pull_back = native.PullBack(w, [p.n for p in self.parts],
                                          [p.bind_inv[:3, :3] for p in self.parts])
        # Shape keys of every part, as bind-world offsets over the whole body.
        self.shape_key_names = [(p.name, k_) for p in self.parts for k_ in p.shape_key_names]
        if self.shape_key_names:
            deltas = np.zeros((len(self.shape_key_names), n, 3), dtype=np.float64)
            t = 0
            for p in self.parts:
                for d in p.deltas_local:
                    deltas[t, p.slice] = d @ p.lin.T
                    t += 1
            self.morph_deltas = deltas
            self._key_values = np.empty(len(self.shape_key_names), dtype=np.float64)
        else:
            self.morph_deltas = None
        self._weld()
        lo, hi = self.rest.min(axis=0), self.rest.max(axis=0)
        self.diagonal = float(np.linalg.norm(hi - lo))
        pose_names = [pb.name for pb in arm_ob.pose.bones]
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
        self._offsets = np.zeros((n, 3), dtype=np.float64)

    def _weld(self):
        """The surface the library simulates (see the module's doc): per part, vertices equal in
        bind-world position, weights and shape-key offsets become one. Sets ``sim_rest``
        (``w x 3``), ``sim_triangles`` (triangles that collapse to an edge or a point are
        dropped), ``sim_weights``, ``sim_morph_deltas`` (``targets x w x 3`` or None), and
        ``weld_inverse`` (``N`` indices into the welded vertices)."""
        cols = [self.rest, self.weights]
        if self.morph_deltas is not None:
            cols.append(self.morph_deltas.transpose(1, 0, 2).reshape(self.vertex_count, -1))
        rows = np.concatenate(cols, axis=1)
        keep, inverse = [], np.empty(self.vertex_count, dtype=np.int64)
        base = 0
        for p in self.parts:
            k, inv = weld_rows(rows[p.slice])
            keep.append(k + p.offset)
            inverse[p.slice] = inv + base
            base += len(k)
        keep = np.concatenate(keep)
        self.weld_inverse = inverse
        # No vertex merged (every copy its own welded vertex, in order): unwelding is a copy.
        self.weld_is_identity = bool(np.array_equal(inverse, np.arange(self.vertex_count)))
        self.sim_vertex_count = len(keep)
        self.sim_rest = np.ascontiguousarray(self.rest[keep])
        self.sim_weights = np.ascontiguousarray(self.weights[keep])
        self.sim_morph_deltas = (None if self.morph_deltas is None
                                 else np.ascontiguousarray(self.morph_deltas[:, keep]))
        t = inverse[self.triangles]
        proper = (t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])
        if not proper.any():
            raise BindError(f"'{self.object_name}' has no faces with area; Overtone needs a surface")
        self.sim_triangles = np.ascontiguousarray(t[proper])

    def unweld(self, welded, out):
        """Writes the per-welded-vertex rows ``welded`` (``w x 3``) to every copy: ``out``
        (``N x 3``). A plain copy when no vertex was merged (at 15,763 vertices ``np.take`` took 0.070 ms,
        the copy 0.010 ms, numpy in Blender 4.5's Python)."""
        if self.weld_is_identity:
            np.copyto(out, welded)
        else:
            np.take(welded, self.weld_inverse, axis=0, out=out)

    def weld_field(self, values, unpainted=-1.0):
        """A per-vertex field (``N``) on the welded surface (``w``): the mean of the painted values
        of a welded vertex's copies, ``unpainted`` where none of them is painted."""
        values = np.asarray(values, dtype=np.float64)
        painted = values != unpainted
        total = np.zeros(self.sim_vertex_count)
        count = np.zeros(self.sim_vertex_count)
        np.add.at(total, self.weld_inverse[painted], values[painted])
        np.add.at(count, self.weld_inverse[painted], 1.0)
        out = np.full(self.sim_vertex_count, unpainted)
        np.divide(total, count, out=out, where=count > 0)
        return out

    @property
    def modifier_index(self):
        return self.parts[0].modifier_index

    def part_of(self, ob):
        for p in self.parts:
            if p.uid == ob.session_uid:
                return p
        raise BindError(f"'{ob.name}' is not part of this Overtone body; press Overtone ▸ Rebind")

    def shape_key_values(self, objects, depsgraph):
        """The evaluated values of the target shape keys at this frame (``targets``), or None."""
        if self.morph_deltas is None:
            return None
        i = 0
        for ob, p in zip(objects, self.parts):
            if not p.shape_key_names:
                continue
            keys = ob.data.shape_keys
            blocks = keys.evaluated_get(depsgraph).key_blocks if keys is not None else {}
            for name in p.shape_key_names:
                kb = blocks.get(name)
                if kb is None:
                    raise BindError(f"shape key '{name}' of '{ob.name}' is gone since Overtone was added; "
                                    "press Overtone ▸ Rebind")
                self._key_values[i] = kb.value
                i += 1
        return self._key_values

    def check_objects(self, objects):
        """Raises BindError if the meshes no longer match what was bound."""
        if len(objects) != len(self.parts):
            raise BindError(f"the Overtone body of '{self.object_name}' changed (objects added or removed); "
                            "press Overtone ▸ Rebind")
        for ob, p in zip(objects, self.parts):
            n = len(ob.data.vertices)
            if n != p.n:
                raise BindError(f"'{ob.name}' has {n} vertices but had {p.n} when Overtone was "
                                "added; press Overtone ▸ Rebind (the precompute depends on the mesh)")

    def skin_transforms(self, objects, depsgraph):
        """Per bone, the 3 x 4 skin transform ``T_b = W_b · Mo_bind⁻¹`` from the bind world to the
        posed world at the evaluated frame (``bones x 12``, row-major; a view reused by the next
        call). Refuses a frame where the body's objects have not moved together since bind."""
        arm_ob = None
        motions = []
        for ob, p in zip(objects, self.parts):
            index, mod = armature_modifier(ob)
            if index != p.modifier_index or mod.object.name != self.armature:
                raise BindError(f"the Armature modifier of '{ob.name}' changed since Overtone was added; "
                                "press Overtone ▸ Rebind")
            arm_ob = mod.object
            mo = _matrix(ob.evaluated_get(depsgraph).matrix_world)
            motions.append(mo @ p.bind_inv)
        e = motions[0]
        for ob, m in zip(objects[1:], motions[1:]):
            if not _same_motion(e, m, self.diagonal):
                raise BindError(f"'{ob.name}' has moved relative to '{objects[0].name}' since Overtone was "
                                "added; meshes bound as one body must move together (parent them to the "
                                "armature), or add Overtone to them separately")
        arm_eval = arm_ob.evaluated_get(depsgraph)
        arm_eval.pose.bones.foreach_get("matrix", self._pose_buf)
        pose = self._pose_buf.reshape(-1, 4, 4).transpose(0, 2, 1)[self._pose_index]
        ma = _matrix(arm_eval.matrix_world)
        tail = affine_inverse(ma) @ e
        m = len(self._pose_index)
        self._world[:m] = ma @ pose @ self._rest_inv @ tail
        if m < len(self.bone_names):
            self._world[m] = e
        self._out[:] = self._world[:, :3, :].reshape(-1, 12)
        return self._out

    def rest_offsets(self, transforms, u, out=None):
        """Pulls a world displacement back to each object's rest space: ``d_v = L⁻¹ A_v⁻¹ u_v``
        with ``A_v = Σ_b w_vb T_b[:3, :3]`` (``L`` the linear part of the vertex's ``Mo_bind``),
        so that the Armature modifier skinning ``X + d`` gives ``skin(X) + u`` exactly (LBS is
        affine per vertex). ``transforms`` is ``bones x 12``, ``u`` is ``N x 3``; writes the
        ``N x 3`` object-space offsets into ``out`` (C-contiguous float64) or, without it, into
        a buffer reused by the next call, and returns it.

        The library computes it (``native.PullBack``, built at bind): the weights are kept
        sparse (a vertex has a few bones), the inverse is by cofactors, and a vertex whose
        blended matrix is singular (a bone scaled to zero: ``|det| ≤ 1e-12 s³``, ``s`` the
        largest entry of any bone's matrix) gets ``d = 0`` rather than an infinity. No array is
        allocated for C-contiguous float64 inputs (what skin_transforms and the session pass)."""
        out = self._offsets if out is None else out
        t = np.ascontiguousarray(transforms, dtype=np.float64)
        u = np.ascontiguousarray(u, dtype=np.float64)
        return self._pull_back.apply(t, u, out)
