//! Skinned characters from glTF 2.0 (`.glb`, or `.gltf` with external `.bin` buffers).

use std::collections::HashMap;
use std::path::Path;

use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};
use nalgebra::{Matrix4, Quaternion, UnitQuaternion, Vector3};

use crate::error::{OvertoneError, Result};

/// A skinned surface with its animation sampled at a fixed rate.
#[derive(Clone, Debug)]
pub struct GltfCharacter {
    /// Welded bind-space positions, `n × 3` row-major (seam duplicates merged).
    pub vertices: Vec<f64>,
    /// Triangles over the welded vertices, `t × 3`.
    pub triangles: Vec<usize>,
    /// For each vertex of the file's mesh (all primitives, in order), its welded index.
    pub original_to_welded: Vec<usize>,
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
    /// `[in, value, out]` triples).
    values: Vec<Vec<f64>>,
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
                let (u2, u3) = (u * u, u * u * u);
                let (h00, h10, h01, h11) = (
                    2.0 * u3 - 3.0 * u2 + 1.0,
                    u3 - 2.0 * u2 + u,
                    -2.0 * u3 + 3.0 * u2,
                    u3 - u2,
                );
                (0..a.len())
                    .map(|i| h00 * a[i] + h10 * dt * out_a[i] + h01 * b[i] + h11 * dt * in_b[i])
                    .collect()
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
/// the first when `None`) at `fps` frames per second from its first to its last keyframe.
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
    if !(fps.is_finite() && fps > 0.0) {
        return Err(OvertoneError::setting("fps", fps, "frames per second must be > 0"));
    }
    let bytes = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    let gltf = gltf::Gltf::from_slice(&bytes).map_err(|e| err(path, format!("not a valid glTF: {e}")))?;
    let doc = &gltf.document;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in doc.buffers() {
        let data = match b.source() {
            gltf::buffer::Source::Bin => gltf.blob.clone().ok_or_else(|| err(path, "GLB has no BIN chunk"))?,
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                return Err(err(
                    path,
                    "embedded data: URIs are not supported; export as .glb or with a .bin file",
                ))
            }
            gltf::buffer::Source::Uri(uri) => {
                let p = dir.join(uri);
                std::fs::read(&p).map_err(|e| OvertoneError::io(&p, format!("cannot read buffer: {e}")))?
            }
        };
        if data.len() < b.length() {
            return Err(err(path, format!("buffer {} is shorter than declared", b.index())));
        }
        buffers.push(data);
    }
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(|v| v.as_slice());

    let node = doc
        .nodes()
        .find(|n| n.mesh().is_some() && n.skin().is_some())
        .ok_or_else(|| err(path, "no node with both a mesh and a skin"))?;
    let (mesh, skin) = (node.mesh().expect("checked"), node.skin().expect("checked"));
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    let nj = joints.len();
    if nj == 0 {
        return Err(err(path, "the skin has no joints"));
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

    // Positions, weights, morph deltas and triangles of every primitive, then welding.
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
        let r = prim.reader(get);
        let base = positions.len();
        let pos: Vec<[f32; 3]> = r
            .read_positions()
            .ok_or_else(|| err(path, "a primitive has no POSITION"))?
            .collect();
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
    let mut welded: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut original_to_welded = Vec::with_capacity(positions.len());
    let (mut vertices, mut weights, mut welded_deltas) = (Vec::new(), Vec::new(), Vec::new());
    for ((p, w), dl) in positions.iter().zip(&vweights).zip(&vdeltas) {
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

    // Node hierarchy and rest TRS.
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

    // Animation channels.
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
                chans.push(Channel {
                    node: ch.target().node().index(),
                    property: ch.target().property(),
                    interpolation,
                    times,
                    values,
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
    let (start, end) = channels.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| {
        (a.min(c.times[0]), b.max(*c.times.last().expect("non-empty")))
    });
    let (start, end) = if start.is_finite() { (start, end) } else { (0.0, 0.0) };
    let n_frames = ((end - start) * fps + 1e-9).floor() as usize + 1;
    if n_frames > 1_000_000 {
        return Err(err(
            path,
            format!("the animation would need {n_frames} frames at {fps} fps"),
        ));
    }
    let mut frames = Vec::with_capacity(n_frames);
    let mut morph_weights = Vec::with_capacity(n_frames);
    for f in 0..n_frames {
        let t = start + f as f64 / fps;
        let mut local = rest.clone();
        let mut morph = default_morph.clone();
        for c in &channels {
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
    Ok(GltfCharacter {
        vertices,
        triangles,
        original_to_welded,
        weights,
        n_joints: nj,
        frames,
        morph_deltas,
        n_morph_targets: n_targets,
        morph_weights,
        fps,
        animation: name,
    })
}
