//! Skinned characters from glTF 2.0 (`.glb`, or `.gltf` with external `.bin` buffers).

use std::collections::HashMap;
use std::path::Path;

use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};
use gltf::Semantic;
use nalgebra::{Matrix4, Quaternion, UnitQuaternion, Vector3};

use crate::error::{OvertoneError, Result};
use crate::io::key_curves::{self, RigInterpolation};

/// A skinned surface with its animation sampled at a fixed rate.
#[derive(Clone, Debug)]
pub struct GltfCharacter {
    /// Welded bind-space positions, `n × 3` row-major (seam duplicates merged).
    pub vertices: Vec<f64>,
    /// Triangles over the welded vertices, `t × 3`.
    pub triangles: Vec<usize>,
    /// For each vertex of the file's mesh (all primitives, in order), its welded index.
    pub original_to_welded: Vec<usize>,
    /// Triangles over the file's own vertices (all primitives, in order, `t × 3`): the topology
    /// a cache of the file's vertices is written with.
    pub file_triangles: Vec<usize>,

    /// Weights, `n × joints` row-major, rows summing to one.
    pub weights: Vec<f64>,
    pub n_joints: usize,
    /// Per frame, per joint, the skin matrix `G_j · IBM_j` (`3 × 4` row-major): bind space to
    /// posed world space. The mesh node's own transform is ignored, as the glTF spec says.
    pub frames: Vec<Vec<f64>>,
    /// Morph targets: rest-space position deltas of the welded vertices, `T × n × 3` row-major
    /// (empty without targets).
    pub morph_deltas: Vec<f64>,
    /// Number of morph targets `T` (0 without).
    pub n_morph_targets: usize,
    /// Per frame, the `T` morph target weights (animated `weights` channels of the mesh node,
    /// else the node's or the mesh's default weights, else zero). Empty rows without targets.
    pub morph_weights: Vec<Vec<f64>>,
    /// Sampling rate (frames per second) and the animation's name.
    pub fps: f64,
    pub animation: String,
}

/// Most entries of the dense weight matrix (`vertices × joints`, 8 bytes each: 512 MiB); a
/// larger product comes from a corrupt or hostile file, not a character.
const MAX_WEIGHT_ENTRIES: usize = 1 << 26;
/// Most numbers the sampled animation may hold and work it may take
/// (`frames × (12·joints + nodes)`, about 800 MB at the limit).
const MAX_ANIMATION_WORK: usize = 100_000_000;

fn err(path: &Path, reason: impl Into<String>) -> OvertoneError {
    OvertoneError::parse(path, reason)
}

/// A node's local transform, possibly animated.
#[derive(Clone, Copy)]
struct Trs {
    t: Vector3<f64>,
    r: UnitQuaternion<f64>,
    s: Vector3<f64>,
}

impl Trs {
    fn matrix(&self) -> Matrix4<f64> {
        Matrix4::new_translation(&self.t) * self.r.to_homogeneous() * Matrix4::new_nonuniform_scaling(&self.s)
    }
}

struct Channel {
    node: usize,
    property: Property,
    interpolation: Interpolation,
    times: Vec<f64>,
    /// Keyframe values (3 or 4 components each, `T` for morph weights; for cubic splines
    /// `[in, value, out]` triples). Rotations of a smoothed channel are hemisphere-aligned.
    values: Vec<Vec<f64>>,
    /// Hermite tangents per key (units per second) when a LINEAR channel is evaluated as a C¹
    /// curve ([`RigInterpolation::Smooth`]); `None` keeps the glTF semantics.
    tangents: Option<Vec<Vec<f64>>>,
}

impl Channel {
    /// Value at time `t` (clamped to the keyframe range).
    fn sample(&self, t: f64) -> Vec<f64> {
        let n = self.times.len();
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let value = |k: usize| -> &Vec<f64> {
            if cubic {
                &self.values[3 * k + 1]
            } else {
                &self.values[k]
            }
        };
        if n == 1 || t <= self.times[0] {
            return value(0).clone();
        }
        if t >= self.times[n - 1] {
            return value(n - 1).clone();
        }
        let k = self.times.partition_point(|&x| x <= t).saturating_sub(1).min(n - 2);
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let u = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        let (a, b) = (value(k), value(k + 1));
        let mut out: Vec<f64> = match self.interpolation {
            Interpolation::Step => a.clone(),
            Interpolation::Linear if self.tangents.is_some() && key_curves::is_dense(t1 - t0) => {
                let m = self.tangents.as_ref().expect("checked");
                key_curves::hermite(a, &m[k], b, &m[k + 1], t1 - t0, u)
            }
            Interpolation::Linear => {
                if self.property == Property::Rotation {
                    let qa = UnitQuaternion::from_quaternion(Quaternion::new(a[3], a[0], a[1], a[2]));
                    let qb = UnitQuaternion::from_quaternion(Quaternion::new(b[3], b[0], b[1], b[2]));
                    let q = qa.try_slerp(&qb, u, 1e-12).unwrap_or(qa);
                    vec![q.i, q.j, q.k, q.w]
                } else {
                    a.iter().zip(b).map(|(x, y)| x + u * (y - x)).collect()
                }
            }
            Interpolation::CubicSpline => {
                let dt = t1 - t0;
                let (out_a, in_b) = (&self.values[3 * k + 2], &self.values[3 * (k + 1)]);
                crate::io::key_curves::hermite(a, out_a, b, in_b, dt, u)
            }
        };
        if self.property == Property::Rotation {
            let norm = out.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                out.iter_mut().for_each(|x| *x /= norm);
            }
        }
        out
    }
}

/// Reads the first skinned mesh of a glTF file and samples animation `animation` (by index;
/// the first when `None`) at `fps` frames per second from its first to its last keyframe, with
/// the glTF interpolation semantics ([`RigInterpolation::Linear`]; see
/// [`read_gltf_character_with`]).
///
/// Morph targets (`POSITION` deltas; normals and tangents are not used) are read from every
/// primitive (all must have the same number of targets, as the glTF spec requires); their
/// weights are sampled from the animation's `weights` channels on the mesh node like the other
/// channels (linear interpolation is component-wise).
///
/// Seam duplicates (same position, joints, weights and morph deltas) are welded; weight rows are
/// renormalised (they are stored as `f32`/normalised integers); joints without influence keep
/// a zero column.
pub fn read_gltf_character(path: &Path, animation: Option<usize>, fps: f64) -> Result<GltfCharacter> {
    read_gltf_character_with(path, animation, fps, RigInterpolation::Linear)
}

/// [`read_gltf_character`] with LINEAR channels evaluated as `interpolation` says:
/// [`RigInterpolation::Smooth`] samples densely keyed LINEAR channels (key spacing ≤ 1/12 s)
/// on the C¹ Hermite curve through their keys ([`crate::io::key_curves`]); STEP and CUBICSPLINE
/// channels keep their glTF semantics either way.
pub fn read_gltf_character_with(
    path: &Path,
    animation: Option<usize>,
    fps: f64,
    interpolation: RigInterpolation,
) -> Result<GltfCharacter> {
    let bytes = read_checked(path, fps)?;
    parse_gltf_character_with(path, &bytes, animation, fps, interpolation)
}

/// Reads the first `len` bytes of an external buffer file; refuses anything but a regular file
/// (a URI naming a device or a pipe must not block or fill memory) and a file shorter than
/// `len`.
fn read_external_buffer(p: &Path, len: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(p).map_err(|e| OvertoneError::io(p, format!("cannot read buffer: {e}")))?;
    if !meta.is_file() {
        return Err(OvertoneError::io(p, "a glTF buffer must be a regular file"));
    }
    if meta.len() < len as u64 {
        return Err(OvertoneError::io(
            p,
            format!("buffer file holds {} bytes, the glTF declares {len}", meta.len()),
        ));
    }
    let mut data = Vec::with_capacity(len);
    std::fs::File::open(p)
        .and_then(|f| f.take(len as u64).read_to_end(&mut data))
        .map_err(|e| OvertoneError::io(p, format!("cannot read buffer: {e}")))?;
    Ok(data)
}

/// Checks that `accessor` can be read as `what` with element type one of `types` and shape
/// `dims`: dense (not sparse), at least one element, on a buffer view that lies inside its
/// buffer (`buffers` holds each buffer's bytes), a byte stride no smaller than an element, and
/// `offset + stride·(count − 1) + size ≤ view length`. The gltf crate's readers assume all of
/// this (they index, subtract and multiply without checks), so every accessor is checked
/// before it is read.
fn check_accessor(
    path: &Path,
    accessor: &gltf::Accessor,
    what: &str,
    types: &[DataType],
    dims: Dimensions,
    buffers: &[Vec<u8>],
) -> Result<()> {
    let bad = |reason: String| err(path, format!("{what} (accessor {}): {reason}", accessor.index()));
    if accessor.sparse().is_some() {
        return Err(bad("sparse accessors are not supported".into()));
    }
    if !types.contains(&accessor.data_type()) || accessor.dimensions() != dims {
        return Err(bad(format!(
            "is {:?} {:?}, expected {dims:?} of {types:?}",
            accessor.dimensions(),
            accessor.data_type()
        )));
    }
    let count = accessor.count();
    if count == 0 {
        return Err(bad("has no elements".into()));
    }
    let view = accessor.view().ok_or_else(|| bad("has no buffer view".into()))?;
    let data_len = buffers.get(view.buffer().index()).map_or(0, |b| b.len());
    if view
        .offset()
        .checked_add(view.length())
        .is_none_or(|end| end > data_len)
    {
        return Err(bad(format!(
            "buffer view {} (bytes {}..+{}) lies outside its buffer of {data_len} bytes",
            view.index(),
            view.offset(),
            view.length()
        )));
    }
    let size = accessor.size();
    let stride = view.stride().unwrap_or(size);
    if stride < size {
        return Err(bad(format!(
            "byte stride {stride} is smaller than an element ({size} bytes)"
        )));
    }
    let end = stride
        .checked_mul(count - 1)
        .and_then(|x| x.checked_add(size))
        .and_then(|x| x.checked_add(accessor.offset()));
    if end.is_none_or(|end| end > view.length()) {
        return Err(bad(format!(
            "{count} elements from byte {} overrun buffer view {} ({} bytes)",
            accessor.offset(),
            view.index(),
            view.length()
        )));
    }
    Ok(())
}

/// Parses the bytes of a glTF/GLB file (`path` names it in errors, and external `.bin` buffers
/// are looked up beside it); see [`read_gltf_character`].
///
/// The gltf crate's own validation leaves some indices unchecked and its readers unwrap them;
/// the indices this reader relies on are checked first ([`check_raw_indices`]) and every
/// accessor before it is read ([`check_accessor`]). As a last line of defence a panic inside
/// the crate on a file no check anticipated is turned into a parse error, so a hostile file
/// never takes the host down.
pub fn parse_gltf_character(path: &Path, bytes: &[u8], animation: Option<usize>, fps: f64) -> Result<GltfCharacter> {
    parse_gltf_character_with(path, bytes, animation, fps, RigInterpolation::Linear)
}

/// [`parse_gltf_character`] with LINEAR channels evaluated as `interpolation` says (see
/// [`read_gltf_character_with`]).
pub(crate) fn parse_gltf_character_with(
    path: &Path,
    bytes: &[u8],
    animation: Option<usize>,
    fps: f64,
    interpolation: RigInterpolation,
) -> Result<GltfCharacter> {
    check_fps(fps)?;
    parse_guarded(path, bytes, animation, fps, None, interpolation)
}

/// Indices the gltf crate's validation uses or leaves unchecked before its readers unwrap
/// them: every primitive attribute's accessor, every animation channel's target node and
/// property.
fn check_raw_indices(path: &Path, root: &gltf::json::Root) -> Result<()> {
    let (n_accessors, n_nodes) = (root.accessors.len(), root.nodes.len());
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let indices = prim.attributes.values().chain(prim.indices.as_ref());
            if let Some(bad) = indices.map(|a| a.value()).find(|&a| a >= n_accessors) {
                return Err(err(
                    path,
                    format!("mesh {m} primitive {p} uses accessor {bad}; the file has {n_accessors}"),
                ));
            }
        }
    }
    for (a, anim) in root.animations.iter().enumerate() {
        for (k, ch) in anim.channels.iter().enumerate() {
            if ch.target.node.value() >= n_nodes || !matches!(ch.target.path, gltf::json::validation::Checked::Valid(_))
            {
                return Err(err(
                    path,
                    format!(
                        "animation {a} channel {k} targets node {} (the file has {n_nodes}) or an unknown property",
                        ch.target.node.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A mesh node with a skin: what `overtone bake` can simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMeshNode {
    /// Index of the node in the file.
    pub node: usize,
    /// The node's name, else its mesh's, else `mesh<node>`.
    pub name: String,
    /// Index of its skin, and the skin's joints (node indices).
    pub skin: usize,
    pub joints: Vec<usize>,
}

/// The skinned mesh nodes of a glTF file, in node order.
pub(crate) fn list_skinned_meshes(path: &Path) -> Result<Vec<SkinnedMeshNode>> {
    let bytes = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    std::panic::catch_unwind(|| -> Result<Vec<SkinnedMeshNode>> {
        let invalid = |e: gltf::Error| err(path, format!("not a valid glTF: {e}"));
        if bytes.starts_with(b"glTF") && bytes.len() < 12 {
            return Err(err(path, "GLB header shorter than 12 bytes"));
        }
        if let Some(h) = bytes.strip_prefix(b"glTF").and_then(|h| h.get(4..8)) {
            if u32::from_le_bytes([h[0], h[1], h[2], h[3]]) < 12 {
                return Err(err(path, "GLB header declares fewer bytes than the header"));
            }
        }
        let raw = gltf::Gltf::from_slice_without_validation(&bytes).map_err(invalid)?;
        let root = raw.document.into_json();
        check_raw_indices(path, &root)?;
        let doc = gltf::Document::from_json(root).map_err(invalid)?;
        Ok(doc
            .nodes()
            .filter_map(|n| {
                let (mesh, skin) = (n.mesh()?, n.skin()?);
                Some(SkinnedMeshNode {
                    node: n.index(),
                    name: n
                        .name()
                        .or(mesh.name())
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("mesh{}", n.index())),
                    skin: skin.index(),
                    joints: skin.joints().map(|j| j.index()).collect(),
                })
            })
            .collect())
    })
    .unwrap_or_else(|_| Err(err(path, "the glTF library failed on this file; re-export it")))
}

/// [`read_gltf_character`] for the skinned mesh of node `node` (see [`list_skinned_meshes`])
/// instead of the first one, with LINEAR channels evaluated as `interpolation` says (see
/// [`read_gltf_character_with`]).
pub(crate) fn read_gltf_mesh_node(
    path: &Path,
    node: usize,
    animation: Option<usize>,
    fps: f64,
    interpolation: RigInterpolation,
) -> Result<GltfCharacter> {
    let bytes = read_checked(path, fps)?;
    parse_guarded(path, &bytes, animation, fps, Some(node), interpolation)
}

/// The skinned mesh node `pick` (the first node with both a mesh and a skin when `None`).
fn skinned_mesh_node<'a>(path: &Path, doc: &'a gltf::Document, pick: Option<usize>) -> Result<gltf::Node<'a>> {
    doc.nodes()
        .find(|n| n.mesh().is_some() && n.skin().is_some() && pick.is_none_or(|p| n.index() == p))
        .ok_or_else(|| match pick {
            None => err(path, "no node with both a mesh and a skin"),
            Some(p) => err(path, format!("node {p} is not a skinned mesh")),
        })
}

/// Checks the GLB header, parses the document without the crate's validation, checks the raw
/// indices ([`check_raw_indices`]) and reads every buffer's bytes (GLB BIN chunk or external
/// `.bin` beside `path`), in buffer order.
fn open_document(path: &Path, bytes: &[u8]) -> Result<(gltf::Document, Vec<Vec<u8>>)> {
    let invalid = |e: gltf::Error| err(path, format!("not a valid glTF: {e}"));
    if let Some(h) = bytes.strip_prefix(b"glTF").and_then(|h| h.get(4..8)) {
        // The crate subtracts the 12-byte header from this length unchecked.
        let length = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        if length < 12 {
            return Err(err(
                path,
                format!("GLB header declares {length} bytes, fewer than the 12-byte header"),
            ));
        }
    }
    let raw = gltf::Gltf::from_slice_without_validation(bytes).map_err(invalid)?;
    let blob = raw.blob;
    let root = raw.document.into_json();
    check_raw_indices(path, &root)?;
    let document = gltf::Document::from_json(root).map_err(invalid)?;
    let doc = &document;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in doc.buffers() {
        let data = match b.source() {
            gltf::buffer::Source::Bin => blob.clone().ok_or_else(|| err(path, "GLB has no BIN chunk"))?,
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                return Err(err(
                    path,
                    "embedded data: URIs are not supported; export as .glb or with a .bin file",
                ))
            }
            gltf::buffer::Source::Uri(uri) => read_external_buffer(&dir.join(uri), b.length())?,
        };
        if data.len() < b.length() {
            return Err(err(path, format!("buffer {} is shorter than declared", b.index())));
        }
        buffers.push(data);
    }
    Ok((document, buffers))
}

/// A skin's joints (node indices) and one inverse bind matrix per joint.
struct SkinBinding {
    joints: Vec<usize>,
    ibm: Vec<Matrix4<f64>>,
}

/// The skin of the skinned mesh node `node`: its joints (at least one) and their inverse bind
/// matrices (identity when the file has none).
fn skin_of_node(path: &Path, node: &gltf::Node, buffers: &[Vec<u8>]) -> Result<SkinBinding> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(|v| v.as_slice());
    let skin = node.skin().expect("checked");
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    let nj = joints.len();
    if nj == 0 {
        return Err(err(path, "the skin has no joints"));
    }
    if let Some(a) = skin.inverse_bind_matrices() {
        check_accessor(
            path,
            &a,
            "inverse bind matrices",
            &[DataType::F32],
            Dimensions::Mat4,
            buffers,
        )?;
    }
    let ibm: Vec<Matrix4<f64>> = match skin.reader(get).read_inverse_bind_matrices() {
        Some(it) => it.map(|m| Matrix4::from_fn(|r, c| m[c][r] as f64)).collect(),
        None => vec![Matrix4::identity(); nj],
    };
    if ibm.len() != nj {
        return Err(err(
            path,
            format!("{} inverse bind matrices for {nj} joints", ibm.len()),
        ));
    }
    Ok(SkinBinding { joints, ibm })
}

/// The mesh's vertices as stored in the file (all primitives, in order), before welding.
struct RawGeometry {
    /// Per original vertex, its position.
    positions: Vec<[f64; 3]>,
    /// Per original vertex, its normalised weight row over the `nj` joints.
    vweights: Vec<Vec<f64>>,
    /// Per original vertex, its T deltas (3 each).
    vdeltas: Vec<Vec<f64>>,
    /// Triangles over the original vertices, `t × 3`.
    tris: Vec<usize>,
    /// Number of morph targets T.
    n_targets: usize,
}

/// Positions, weights (rows over `nj` joints, normalised), morph deltas and triangles of every
/// primitive of `mesh`, each accessor checked before it is read.
fn read_primitives(path: &Path, mesh: &gltf::Mesh, nj: usize, buffers: &[Vec<u8>]) -> Result<RawGeometry> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(|v| v.as_slice());
    let mut positions: Vec<[f64; 3]> = Vec::new();
    let mut vweights: Vec<Vec<f64>> = Vec::new();
    // Per original vertex, its T deltas (3 each).
    let mut vdeltas: Vec<Vec<f64>> = Vec::new();
    let mut tris: Vec<usize> = Vec::new();
    let n_targets = mesh.primitives().next().map(|p| p.morph_targets().count()).unwrap_or(0);
    for prim in mesh.primitives() {
        if prim.morph_targets().count() != n_targets {
            return Err(err(
                path,
                format!(
                    "primitive {} has {} morph targets, the first has {n_targets}; glTF requires the same number in every primitive",
                    prim.index(),
                    prim.morph_targets().count()
                ),
            ));
        }
        if prim.mode() != gltf::mesh::Mode::Triangles {
            return Err(err(path, "only triangle primitives are supported"));
        }
        let checks: [(Option<gltf::Accessor>, &str, &[DataType], Dimensions); 4] = [
            (
                prim.get(&Semantic::Positions),
                "POSITION",
                &[DataType::F32],
                Dimensions::Vec3,
            ),
            (
                prim.get(&Semantic::Joints(0)),
                "JOINTS_0",
                &[DataType::U8, DataType::U16],
                Dimensions::Vec4,
            ),
            (
                prim.get(&Semantic::Weights(0)),
                "WEIGHTS_0",
                &[DataType::F32, DataType::U8, DataType::U16],
                Dimensions::Vec4,
            ),
            (
                prim.indices(),
                "indices",
                &[DataType::U8, DataType::U16, DataType::U32],
                Dimensions::Scalar,
            ),
        ];
        for (a, what, types, dims) in checks {
            if let Some(a) = a {
                check_accessor(path, &a, what, types, dims, buffers)?;
            }
        }
        let r = prim.reader(get);
        let base = positions.len();
        let pos: Vec<[f32; 3]> = r
            .read_positions()
            .ok_or_else(|| err(path, "a primitive has no POSITION"))?
            .collect();
        if (base + pos.len()).saturating_mul(nj) > MAX_WEIGHT_ENTRIES {
            return Err(err(
                path,
                format!(
                    "{} vertices x {nj} joints exceed the {MAX_WEIGHT_ENTRIES} weight entries this reader holds",
                    base + pos.len()
                ),
            ));
        }
        let js: Vec<[u16; 4]> = r
            .read_joints(0)
            .ok_or_else(|| err(path, "a primitive has no JOINTS_0"))?
            .into_u16()
            .collect();
        let ws: Vec<[f32; 4]> = r
            .read_weights(0)
            .ok_or_else(|| err(path, "a primitive has no WEIGHTS_0"))?
            .into_f32()
            .collect();
        if js.len() != pos.len() || ws.len() != pos.len() {
            return Err(err(path, "JOINTS_0/WEIGHTS_0 counts differ from POSITION"));
        }
        let mut prim_deltas = vec![vec![0.0; 3 * n_targets]; pos.len()];
        for (t, (dp, _, _)) in r.read_morph_targets().enumerate() {
            let Some(dp) = dp else { continue };
            let dp: Vec<[f32; 3]> = dp.collect();
            if dp.len() != pos.len() {
                return Err(err(
                    path,
                    format!(
                        "morph target {t} has {} position deltas for {} vertices",
                        dp.len(),
                        pos.len()
                    ),
                ));
            }
            for (v, x) in dp.iter().enumerate() {
                if x.iter().any(|c| !c.is_finite()) {
                    return Err(err(
                        path,
                        format!("morph target {t}: non-finite delta at vertex {}", positions.len() + v),
                    ));
                }
                prim_deltas[v][3 * t..3 * t + 3].copy_from_slice(&[x[0] as f64, x[1] as f64, x[2] as f64]);
            }
        }
        vdeltas.extend(prim_deltas);
        for ((p, j), w) in pos.iter().zip(&js).zip(&ws) {
            if p.iter().any(|x| !x.is_finite()) || w.iter().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(err(
                    path,
                    format!(
                        "vertex {} has a non-finite position or a negative weight",
                        positions.len()
                    ),
                ));
            }
            let mut row = vec![0.0; nj];
            for k in 0..4 {
                let ji = j[k] as usize;
                if w[k] > 0.0 {
                    if ji >= nj {
                        return Err(err(path, format!("joint index {ji} outside the skin's {nj} joints")));
                    }
                    row[ji] += w[k] as f64;
                }
            }
            let sum: f64 = row.iter().sum();
            if !(sum > 0.0) {
                return Err(err(path, format!("vertex {} has no skin weight", positions.len())));
            }
            row.iter_mut().for_each(|x| *x /= sum);
            positions.push([p[0] as f64, p[1] as f64, p[2] as f64]);
            vweights.push(row);
        }
        match r.read_indices() {
            Some(ix) => {
                for i in ix.into_u32() {
                    let i = i as usize;
                    if i >= pos.len() {
                        return Err(err(
                            path,
                            format!("index {i} outside the primitive's {} vertices", pos.len()),
                        ));
                    }
                    tris.push(base + i);
                }
            }
            None => tris.extend(base..base + pos.len()),
        }
    }
    if tris.len() % 3 != 0 || tris.is_empty() {
        return Err(err(path, "the mesh has no complete triangles"));
    }
    Ok(RawGeometry {
        positions,
        vweights,
        vdeltas,
        tris,
        n_targets,
    })
}

/// The surface after welding seam duplicates (same position, weights and morph deltas).
struct WeldedSurface {
    /// Welded positions, `n × 3` row-major.
    vertices: Vec<f64>,
    /// Weights, `n × nj` row-major.
    weights: Vec<f64>,
    /// Morph deltas, `T × n × 3` row-major.
    morph_deltas: Vec<f64>,
    /// The node's (else the mesh's) default morph weights, else zeros; T of them.
    default_morph: Vec<f64>,
    /// Per original vertex, its welded index.
    original_to_welded: Vec<usize>,
    /// Triangles over the welded vertices, `t × 3` (those collapsed by welding dropped).
    triangles: Vec<usize>,
}

/// Welds the seam duplicates of `raw` (rows over `nj` joints) and reads the default morph
/// weights of `node` (else of `mesh`).
fn weld(path: &Path, raw: &RawGeometry, nj: usize, node: &gltf::Node, mesh: &gltf::Mesh) -> Result<WeldedSurface> {
    let (positions, vweights, vdeltas, tris) = (&raw.positions, &raw.vweights, &raw.vdeltas, &raw.tris);
    let n_targets = raw.n_targets;
    let mut welded: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut original_to_welded = Vec::with_capacity(positions.len());
    let (mut vertices, mut weights, mut welded_deltas) =
        (Vec::new(), Vec::with_capacity(positions.len() * nj), Vec::new());
    for ((p, w), dl) in positions.iter().zip(vweights).zip(vdeltas) {
        let key: Vec<u64> = p.iter().chain(w.iter()).chain(dl.iter()).map(|x| x.to_bits()).collect();
        let next = vertices.len() / 3;
        let id = *welded.entry(key).or_insert_with(|| {
            vertices.extend_from_slice(p);
            weights.extend_from_slice(w);
            welded_deltas.push(dl.clone());
            next
        });
        original_to_welded.push(id);
    }
    let nw = vertices.len() / 3;
    let mut morph_deltas = vec![0.0; n_targets * nw * 3];
    for (v, dl) in welded_deltas.iter().enumerate() {
        for t in 0..n_targets {
            morph_deltas[(t * nw + v) * 3..(t * nw + v) * 3 + 3].copy_from_slice(&dl[3 * t..3 * t + 3]);
        }
    }
    let default_morph: Vec<f64> = match node.weights().or(mesh.weights()) {
        Some(w) if w.len() == n_targets => w.iter().map(|&x| x as f64).collect(),
        Some(w) => {
            return Err(err(
                path,
                format!("{} default morph weights for {n_targets} morph targets", w.len()),
            ))
        }
        None => vec![0.0; n_targets],
    };
    let mut triangles = Vec::with_capacity(tris.len());
    for t in tris.chunks_exact(3) {
        let w = [
            original_to_welded[t[0]],
            original_to_welded[t[1]],
            original_to_welded[t[2]],
        ];
        if w[0] != w[1] && w[1] != w[2] && w[0] != w[2] {
            triangles.extend(w);
        }
    }
    Ok(WeldedSurface {
        vertices,
        weights,
        morph_deltas,
        default_morph,
        original_to_welded,
        triangles,
    })
}

/// Per node, its parent (`None` for roots) and its rest local transform.
struct NodeHierarchy {
    parent: Vec<Option<usize>>,
    rest: Vec<Trs>,
}

/// The node hierarchy of `doc` and each node's rest TRS.
fn node_hierarchy(doc: &gltf::Document) -> NodeHierarchy {
    let n_nodes = doc.nodes().count();
    let mut parent = vec![None; n_nodes];
    for n in doc.nodes() {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    let rest: Vec<Trs> = doc
        .nodes()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            Trs {
                t: Vector3::new(t[0] as f64, t[1] as f64, t[2] as f64),
                r: UnitQuaternion::from_quaternion(Quaternion::new(r[3] as f64, r[0] as f64, r[1] as f64, r[2] as f64)),
                s: Vector3::new(s[0] as f64, s[1] as f64, s[2] as f64),
            }
        })
        .collect();
    NodeHierarchy { parent, rest }
}

/// The name and channels of animation `animation` (the first when `None`; "rest pose" and no
/// channels when the file has none), each accessor checked; `weights` channels count only on
/// `node` with its `n_targets` morph targets. LINEAR channels get Hermite tangents when
/// `rig_interpolation` is [`RigInterpolation::Smooth`].
fn animation_channels(
    path: &Path,
    doc: &gltf::Document,
    animation: Option<usize>,
    node: &gltf::Node,
    n_targets: usize,
    rig_interpolation: RigInterpolation,
    buffers: &[Vec<u8>],
) -> Result<(String, Vec<Channel>)> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(|v| v.as_slice());
    let anims: Vec<gltf::Animation> = doc.animations().collect();
    let (name, channels) = match (animation, anims.is_empty()) {
        (_, true) => ("rest pose".to_string(), Vec::new()),
        (idx, false) => {
            let a = anims.get(idx.unwrap_or(0)).ok_or_else(|| {
                OvertoneError::setting(
                    "animation",
                    idx.unwrap_or(0),
                    format!("the file has {} animations", anims.len()),
                )
            })?;
            let mut chans = Vec::new();
            for ch in a.channels() {
                let property = ch.target().property();
                let (input, output) = (ch.sampler().input(), ch.sampler().output());
                check_accessor(
                    path,
                    &input,
                    "animation key times",
                    &[DataType::F32],
                    Dimensions::Scalar,
                    buffers,
                )?;
                // Rotations and morph weights may be normalised integers (glTF 2.0 §3.11).
                let normalised_types = [DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16];
                let (types, dims): (&[DataType], _) = match property {
                    Property::Rotation => (&normalised_types, Dimensions::Vec4),
                    Property::MorphTargetWeights => (&normalised_types, Dimensions::Scalar),
                    _ => (&[DataType::F32], Dimensions::Vec3),
                };
                check_accessor(path, &output, "animation key values", types, dims, buffers)?;
                let r = ch.reader(get);
                let times: Vec<f64> = r
                    .read_inputs()
                    .ok_or_else(|| err(path, "a channel has no input times"))?
                    .map(|t| t as f64)
                    .collect();
                let values: Vec<Vec<f64>> =
                    match r.read_outputs().ok_or_else(|| err(path, "a channel has no outputs"))? {
                        ReadOutputs::Translations(it) => it.map(|v| v.iter().map(|x| *x as f64).collect()).collect(),
                        ReadOutputs::Scales(it) => it.map(|v| v.iter().map(|x| *x as f64).collect()).collect(),
                        ReadOutputs::Rotations(it) => {
                            it.into_f32().map(|v| v.iter().map(|x| *x as f64).collect()).collect()
                        }
                        ReadOutputs::MorphTargetWeights(it) => {
                            if ch.target().node().index() != node.index() || n_targets == 0 {
                                continue; // another mesh's morph weights
                            }
                            let flat: Vec<f64> = it.into_f32().map(|x| x as f64).collect();
                            if flat.len() % n_targets != 0 {
                                return Err(err(
                                    path,
                                    format!(
                                    "a weights channel has {} values, not a multiple of the {n_targets} morph targets",
                                    flat.len()
                                ),
                                ));
                            }
                            flat.chunks(n_targets).map(|c| c.to_vec()).collect()
                        }
                    };
                let interpolation = ch.sampler().interpolation();
                let per = if interpolation == Interpolation::CubicSpline {
                    3
                } else {
                    1
                };
                if times.is_empty() || values.len() != per * times.len() || times.windows(2).any(|w| w[1] < w[0]) {
                    return Err(err(path, "an animation channel's keyframes are inconsistent"));
                }
                if values.iter().flatten().any(|x| !x.is_finite()) || times.iter().any(|x| !x.is_finite()) {
                    return Err(err(path, "an animation channel holds non-finite numbers"));
                }
                let mut values = values;
                let tangents = (rig_interpolation == RigInterpolation::Smooth
                    && interpolation == Interpolation::Linear)
                    .then(|| {
                        let rotation = property == Property::Rotation;
                        if rotation {
                            key_curves::align_hemispheres(&mut values);
                        }
                        key_curves::key_tangents(&times, &values, rotation)
                    });
                chans.push(Channel {
                    node: ch.target().node().index(),
                    property: ch.target().property(),
                    interpolation,
                    times,
                    values,
                    tangents,
                });
            }
            (
                a.name()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("animation {}", idx.unwrap_or(0))),
                chans,
            )
        }
    };
    Ok((name, channels))
}

/// Samples `channels` at `fps` frames per second from their first to their last key (one
/// frame at the rest pose without channels): per frame the skin matrices `G_j · IBM_j` of the
/// skin's joints (`nj × 12`, `3 × 4` row-major each) and the T morph weights (`default_morph`
/// where no channel sets them). Refuses more than [`MAX_ANIMATION_WORK`] numbers.
fn sample_frames(
    path: &Path,
    channels: &[Channel],
    hierarchy: &NodeHierarchy,
    skin: &SkinBinding,
    default_morph: &[f64],
    fps: f64,
) -> Result<(Vec<Vec<f64>>, Vec<Vec<f64>>)> {
    let (parent, rest) = (&hierarchy.parent, &hierarchy.rest);
    let (joints, ibm) = (&skin.joints, &skin.ibm);
    let nj = joints.len();
    let n_nodes = parent.len();
    let (start, end) = channels.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| {
        (a.min(c.times[0]), b.max(*c.times.last().expect("non-empty")))
    });
    let (start, end) = if start.is_finite() { (start, end) } else { (0.0, 0.0) };
    // Compared as a float first: a span of 1e38 s must not wrap when converted.
    let span = ((end - start) * fps + 1e-9).floor();
    let n_frames = if span < 1e6 { span as usize + 1 } else { usize::MAX };
    if n_frames > 1_000_000 || n_frames.saturating_mul(12 * nj + n_nodes) > MAX_ANIMATION_WORK {
        return Err(err(
            path,
            format!(
                "the animation would need {} frames at {fps} fps for {nj} joints and {n_nodes} nodes \
                 (at most {MAX_ANIMATION_WORK} numbers); lower the frame rate or shorten the animation",
                span + 1.0
            ),
        ));
    }
    let mut frames = Vec::with_capacity(n_frames);
    let mut morph_weights = Vec::with_capacity(n_frames);
    for f in 0..n_frames {
        let t = start + f as f64 / fps;
        let mut local = rest.clone();
        let mut morph = default_morph.to_vec();
        for c in channels {
            let v = c.sample(t);
            let l = &mut local[c.node];
            match c.property {
                Property::Translation => l.t = Vector3::new(v[0], v[1], v[2]),
                Property::Scale => l.s = Vector3::new(v[0], v[1], v[2]),
                Property::Rotation => l.r = UnitQuaternion::from_quaternion(Quaternion::new(v[3], v[0], v[1], v[2])),
                Property::MorphTargetWeights => morph.copy_from_slice(&v),
            }
        }
        morph_weights.push(morph);
        let mut global: Vec<Option<Matrix4<f64>>> = vec![None; n_nodes];
        fn world(
            n: usize,
            parent: &[Option<usize>],
            local: &[Trs],
            g: &mut Vec<Option<Matrix4<f64>>>,
            depth: usize,
        ) -> Matrix4<f64> {
            if let Some(m) = g[n] {
                return m;
            }
            let m = match parent[n] {
                Some(p) if depth < 1000 => world(p, parent, local, g, depth + 1) * local[n].matrix(),
                _ => local[n].matrix(),
            };
            g[n] = Some(m);
            m
        }
        let mut out = Vec::with_capacity(nj * 12);
        for (k, &j) in joints.iter().enumerate() {
            let m = world(j, &parent, &local, &mut global, 0) * ibm[k];
            for r in 0..3 {
                for c in 0..4 {
                    out.push(m[(r, c)]);
                }
            }
        }
        if out.iter().any(|x| !x.is_finite()) {
            return Err(err(path, format!("frame {f}: a joint transform is not finite")));
        }
        frames.push(out);
    }
    Ok((frames, morph_weights))
}

/// Refuses a frame rate `fps` that is not finite and positive.
fn check_fps(fps: f64) -> Result<()> {
    if !(fps.is_finite() && fps > 0.0) {
        return Err(OvertoneError::setting("fps", fps, "frames per second must be > 0"));
    }
    Ok(())
}

/// The bytes of the file at `path`, once `fps` is checked ([`check_fps`]).
fn read_checked(path: &Path, fps: f64) -> Result<Vec<u8>> {
    check_fps(fps)?;
    let bytes = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    Ok(bytes)
}

/// [`parse_checked`] with a panic inside the gltf crate turned into a parse error.
fn parse_guarded(
    path: &Path,
    bytes: &[u8],
    animation: Option<usize>,
    fps: f64,
    pick: Option<usize>,
    interpolation: RigInterpolation,
) -> Result<GltfCharacter> {
    std::panic::catch_unwind(|| parse_checked(path, bytes, animation, fps, pick, interpolation)).unwrap_or_else(|_| {
        Err(err(
            path,
            "the glTF library failed on this file (malformed indices or sizes); re-export it",
        ))
    })
}

/// Parses a checked glTF document: the skinned mesh node `pick` (else the first), its skin,
/// welded surface and morph targets, and animation `animation` sampled at `fps`.
fn parse_checked(
    path: &Path,
    bytes: &[u8],
    animation: Option<usize>,
    fps: f64,
    pick: Option<usize>,
    rig_interpolation: RigInterpolation,
) -> Result<GltfCharacter> {
    let (document, buffers) = open_document(path, bytes)?;
    let doc = &document;
    let node = skinned_mesh_node(path, doc, pick)?;
    let mesh = node.mesh().expect("checked");
    let skin = skin_of_node(path, &node, &buffers)?;
    let nj = skin.joints.len();
    // Positions, weights, morph deltas and triangles of every primitive, then welding.
    let raw = read_primitives(path, &mesh, nj, &buffers)?;
    let n_targets = raw.n_targets;
    let surface = weld(path, &raw, nj, &node, &mesh)?;
    let hierarchy = node_hierarchy(doc);
    let (name, channels) = animation_channels(path, doc, animation, &node, n_targets, rig_interpolation, &buffers)?;
    let (frames, morph_weights) = sample_frames(path, &channels, &hierarchy, &skin, &surface.default_morph, fps)?;
    Ok(GltfCharacter {
        vertices: surface.vertices,
        triangles: surface.triangles,
        original_to_welded: surface.original_to_welded,
        file_triangles: raw.tris,
        weights: surface.weights,
        n_joints: nj,
        frames,
        morph_deltas: surface.morph_deltas,
        n_morph_targets: n_targets,
        morph_weights,
        fps,
        animation: name,
    })
}
