//! Skinned surface characters: embedded in a lattice, simulated, mapped back to their surface.

use std::path::Path;

use crate::dynamics::{FastParams, Material};
use crate::embed::{Embedding, DEFAULT_LATTICE_RESOLUTION};
use crate::error::{InputError, OvertoneError, Result};
use crate::io::{read_gltf_character_with, RigInterpolation};
use crate::rig::compose_affine;
use crate::scene::{
    extend_harmonic, prepare_lattice, simulate_streaming_output, ElasticModel, Embedded, LatticePreparation, Scene,
    Simulation, SolverKind,
};

/// Settings of a character bake; every field documents its default.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterSettings {
    /// Lattice cells along the longest side of the character; 0 (the default) chooses it from
    /// the geometry (see [`crate::embed::choose_lattice_resolution`]: thin limbs four cells
    /// across, at most 125k tetrahedra).
    pub lattice_resolution: usize,
    /// Material, in the normalised frame where the character's longest half-extent is 1.
    /// Default `E = 2.5·10⁴`, `ν = 0.4`, `ρ = 1000`: with the lattice's material shares (see
    /// [`crate::embed::Embedding::material_share`]) the lowest complementary mode is at 6-12 Hz
    /// on the characters measured (CesiumMan, Fox, the mannequin, the robot) and the peak
    /// secondary motion 0.27-1.5 % of the diagonal on their clips; `2·10⁵` (with whole cubes)
    /// gave 14-30 Hz and 0.05-0.26 %. The thin-limb test's limb still settles below 0.3 % of
    /// the diagonal 1 s after the rig stops (0.25 %).
    pub material: Material,
    /// Sampling rate of the animation, frames per second (default 24); `dt = 1/fps`.
    pub fps: f64,
    /// Which animation of the file (default the first).
    pub animation: Option<usize>,
    /// How densely keyed glTF LINEAR channels are sampled between keys (default
    /// [`RigInterpolation::Smooth`]: the C¹ curve through the keys, so a rig sampled finer than
    /// its keys has no acceleration impulse at every key; `Linear` is the glTF semantics).
    pub rig_interpolation: RigInterpolation,
    /// Sidecar holding the lattice preparation (the lattice, the surface's embedding, the
    /// weights carried into it; see [`crate::scene::prepare_lattice`]): read when it was made
    /// from the same surface, weights and resolution setting; otherwise built, and written by
    /// [`Character::save_preparation`]. Default none. The fast solver keeps its reduced model in
    /// the same file.
    pub sidecar: Option<std::path::PathBuf>,
}

impl Default for CharacterSettings {
    fn default() -> Self {
        Self {
            lattice_resolution: DEFAULT_LATTICE_RESOLUTION,
            material: Material {
                youngs_modulus: 2.5e4,
                poisson_ratio: 0.4,
                density: 1000.0,
            },
            fps: 24.0,
            animation: None,
            rig_interpolation: RigInterpolation::Smooth,
            sidecar: None,
        }
    }
}

/// A surface character ready to simulate.
#[derive(Clone, Debug)]
pub struct Character {
    /// The lattice scene (normalised coordinates) the physics runs on.
    pub scene: Scene,
    pub embedding: Embedding,
    /// Welded bind-space surface, `n_s × 3`, and its weights (`n_s × bones`).
    pub surface: Vec<f64>,
    pub surface_weights: Vec<f64>,
    /// The positive entries of `surface_weights` by vertex (made from it at construction; the
    /// per-frame skinning reads these).
    surface_influences: crate::rig::SparseWeights,
    /// Original vertex → welded vertex.
    pub original_to_welded: Vec<usize>,
    /// Triangles over the original vertices (`t × 3`): a cache's topology.
    pub file_triangles: Vec<usize>,
    /// Per frame, per bone, world-space skin transforms (`3 × 4`).
    pub world_frames: Vec<Vec<f64>>,
    /// The body frame the lattice scene is in: `x' = Rᵀ(x − centre)/scale` (see
    /// [`crate::scene::Normalisation`]; the same as `scene.normalisation`).
    pub frame: crate::scene::Normalisation,
    /// Things a TD should know about the input (e.g. an open surface), for the report.
    pub warnings: Vec<String>,
    /// Morph targets of the surface (bind space, the file's units), if any.
    pub morphs: Option<SurfaceMorphs>,
    /// The lattice resolution used, and the automatic choice behind it (if it was automatic).
    pub lattice_resolution: usize,
    pub resolution_choice: Option<crate::embed::ResolutionChoice>,
    /// Tetrahedra of the automatic lattice (also when another resolution was set; `usize::MAX`
    /// when the probe grid could not measure the surface): the body's size for the fast
    /// solver's automatic mode count ([`Character::fast_params`]).
    pub automatic_tets: usize,
    /// The host bone of each rig column of the lattice scene (`scene.n_bones` entries): the
    /// identity for one surface piece; with several pieces one column per (piece, bone) pair
    /// that has weight on the piece.
    pub bone_of_column: Vec<usize>,
    /// Where the lattice preparation came from (the sidecar's `lattice-preparation` record,
    /// see [`crate::scene::prepare_lattice`]).
    pub preparation_cache: crate::cache::CacheStatus,
    /// The preparation's record while it is built and not yet written
    /// ([`Character::save_preparation`]).
    pub pending_preparation: Option<crate::cache::PendingRecord>,
}

/// Morph targets (blendshapes) of a skinned surface: applied in bind space before skinning, as
/// glTF does.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceMorphs {
    /// Position deltas, `T × n_s × 3` row-major (bind space, the surface's units).
    pub deltas: Vec<f64>,
    /// Number of targets `T`.
    pub n_targets: usize,
    /// Per frame, the `T` target weights.
    pub weights: Vec<Vec<f64>>,
}

/// Reads a glTF character and builds its lattice scene (see [`Character::from_surface`]).
pub fn character_from_gltf(
    path: &Path,
    settings: &CharacterSettings,
    momentum_weights_surface: Option<&[f64]>,
) -> Result<Character> {
    let ch = read_gltf_character_with(path, settings.animation, settings.fps, settings.rig_interpolation)?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Targets without any position delta (empty shape keys, normal-only targets) move nothing:
    // they are dropped with a warning (exact: their column of J would be zero).
    let ns = ch.vertices.len() / 3;
    let nt = ch.n_morph_targets;
    let moving: Vec<usize> = (0..nt)
        .filter(|&t| ch.morph_deltas[t * ns * 3..(t + 1) * ns * 3].iter().any(|&x| x != 0.0))
        .collect();
    let mut dropped = Vec::new();
    if moving.len() < nt {
        dropped.push(format!(
            "{} of {nt} morph targets have no position deltas and were ignored (targets {:?})",
            nt - moving.len(),
            (0..nt).filter(|t| !moving.contains(t)).collect::<Vec<_>>()
        ));
    }
    let morphs = (!moving.is_empty()).then(|| SurfaceMorphs {
        deltas: moving
            .iter()
            .flat_map(|&t| ch.morph_deltas[t * ns * 3..(t + 1) * ns * 3].iter().copied())
            .collect(),
        n_targets: moving.len(),
        weights: ch
            .morph_weights
            .iter()
            .map(|w| moving.iter().map(|&t| w[t]).collect())
            .collect(),
    });
    let mut c = Character::from_surface_with_morphs(
        &name,
        &ch.vertices,
        &ch.triangles,
        &ch.weights,
        ch.n_joints,
        ch.frames,
        morphs,
        settings,
        momentum_weights_surface,
    )?;
    c.original_to_welded = ch.original_to_welded;
    c.file_triangles = ch.file_triangles;
    c.warnings.extend(dropped);
    Ok(c)
}

/// One glTF mesh of a multi-mesh character: its node name and its vertices in the bake's
/// output (the file's own vertex order, meshes one after the other).
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterMesh {
    pub name: String,
    pub node: usize,
    pub vertices: std::ops::Range<usize>,
}

/// Reads the skinned meshes of a glTF file bound to one skeleton and builds one lattice scene
/// for all of them (one body: clothes follow the body; separate pieces are not glued, see
/// [`crate::embed::embed_surface`]).
///
/// `names` picks meshes by node (or mesh) name; empty picks every mesh bound to the first
/// skinned mesh's skin. Meshes bound to another skin are skipped with a warning (in
/// `Character::warnings`); a named mesh that does not exist, or named meshes with different
/// skins, are refused. Morph targets of the meshes are kept side by side (a mesh's targets move
/// only its vertices). The painted leak field, if any, is per welded vertex of the meshes in
/// order.
pub fn character_from_gltf_meshes(
    path: &Path,
    settings: &CharacterSettings,
    momentum_weights_surface: Option<&[f64]>,
    names: &[String],
) -> Result<(Character, Vec<CharacterMesh>)> {
    let all = crate::io::list_skinned_meshes(path)?;
    if all.is_empty() {
        return Err(OvertoneError::parse(path, "no node with both a mesh and a skin"));
    }
    let available = || all.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ");
    let mut warnings = Vec::new();
    let picked: Vec<&crate::io::SkinnedMeshNode> = if names.is_empty() {
        let skin = all[0].skin;
        for m in all.iter().filter(|m| m.skin != skin) {
            warnings.push(format!(
                "mesh `{}` is bound to another skeleton (skin {}) than `{}` (skin {skin}); it was ignored (pick it with --mesh to bake it alone)",
                m.name, m.skin, all[0].name
            ));
        }
        all.iter().filter(|m| m.skin == skin).collect()
    } else {
        let mut out: Vec<&crate::io::SkinnedMeshNode> = Vec::new();
        for n in names {
            let m = all.iter().find(|m| &m.name == n).ok_or_else(|| {
                OvertoneError::setting(
                    "mesh",
                    n,
                    format!("no skinned mesh of that name; the file has: {}", available()),
                )
            })?;
            if out.iter().any(|o| o.node == m.node) {
                continue;
            }
            if let Some(first) = out.first() {
                if first.skin != m.skin {
                    return Err(OvertoneError::setting(
                        "mesh",
                        n,
                        format!(
                            "is bound to skin {} but `{}` to skin {}; meshes baked together must share one skeleton",
                            m.skin, first.name, first.skin
                        ),
                    ));
                }
            }
            out.push(m);
        }
        out
    };
    if picked.len() == 1 && names.is_empty() && all.len() == 1 {
        let c = character_from_gltf(path, settings, momentum_weights_surface)?;
        let n = c.original_to_welded.len();
        return Ok((
            c,
            vec![CharacterMesh {
                name: picked[0].name.clone(),
                node: picked[0].node,
                vertices: 0..n,
            }],
        ));
    }
    let mut parts = Vec::with_capacity(picked.len());
    for m in &picked {
        crate::progress::check()?;
        parts.push(crate::io::read_gltf_mesh_node(
            path,
            m.node,
            settings.animation,
            settings.fps,
            settings.rig_interpolation,
        )?);
    }
    let nj = parts[0].n_joints;
    let n_frames = parts[0].frames.len();
    let (mut vertices, mut triangles, mut weights, mut o2w) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut meshes = Vec::with_capacity(parts.len());
    // Targets without position deltas are dropped (their rig column would be zero).
    let moving: Vec<Vec<usize>> = parts
        .iter()
        .map(|p| {
            let nw = p.vertices.len() / 3;
            (0..p.n_morph_targets)
                .filter(|&t| p.morph_deltas[t * nw * 3..(t + 1) * nw * 3].iter().any(|&x| x != 0.0))
                .collect()
        })
        .collect();
    let total_targets: usize = moving.iter().map(|m| m.len()).sum();
    let total_welded: usize = parts.iter().map(|p| p.vertices.len() / 3).sum();
    let mut deltas = vec![0.0; total_targets * total_welded * 3];
    let mut morph_weights = vec![Vec::with_capacity(total_targets); n_frames];
    let (mut t0, mut original) = (0usize, 0usize);
    for ((m, p), mv) in picked.iter().zip(&parts).zip(&moving) {
        let base = vertices.len() / 3;
        let nw = p.vertices.len() / 3;
        vertices.extend_from_slice(&p.vertices);
        triangles.extend(p.triangles.iter().map(|&i| i + base));
        weights.extend_from_slice(&p.weights);
        o2w.extend(p.original_to_welded.iter().map(|&i| i + base));
        for (k, &t) in mv.iter().enumerate() {
            for v in 0..nw {
                for i in 0..3 {
                    deltas[((t0 + k) * total_welded + base + v) * 3 + i] = p.morph_deltas[(t * nw + v) * 3 + i];
                }
            }
        }
        for (f, w) in morph_weights.iter_mut().enumerate() {
            w.extend(mv.iter().map(|&t| p.morph_weights[f][t]));
        }
        t0 += mv.len();
        meshes.push(CharacterMesh {
            name: m.name.clone(),
            node: m.node,
            vertices: original..original + p.original_to_welded.len(),
        });
        original += p.original_to_welded.len();
        debug_assert_eq!(p.n_joints, nj);
    }
    let morphs = (total_targets > 0).then(|| SurfaceMorphs {
        deltas,
        n_targets: total_targets,
        weights: morph_weights,
    });
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut c = Character::from_surface_with_morphs(
        &name,
        &vertices,
        &triangles,
        &weights,
        nj,
        parts[0].frames.clone(),
        morphs,
        settings,
        momentum_weights_surface,
    )?;
    c.original_to_welded = o2w;
    c.warnings.extend(warnings);
    Ok((c, meshes))
}

/// A painted leak field carried to the lattice: every vertex painted (`Full`), or some
/// (`Partial`: the harmonic extension of the painted mask and of the masked values, blended
/// into the default field by [`crate::leak::blend_painted`]).
enum PaintedLeak {
    Full(Vec<f64>),
    Partial { mask: Vec<f64>, values: Vec<f64> },
}

impl Character {
    /// Builds the lattice scene of a skinned surface given as arrays (what a host hands over):
    ///
    /// * `vertices`: bind-space positions `n × 3`; `triangles`: `t × 3` indices;
    /// * `weights`: `n × bones`, rows summing to one; `frames`: per frame, per bone, the skin
    ///   transform (`3 × 4`, bind space to posed world space), at least one frame.
    ///
    /// Bind space must have the posed world's metric: the host gives the rest surface in world
    /// space at bind (`Mo_bind · X` for a mesh whose object matrix is `Mo`) and transforms
    /// `W_b · Mo_bind⁻¹`, never object-space rest with world-space transforms (an object scale
    /// of 0.01 would then shrink the body 100× between rest and pose).
    ///
    /// The surface is normalised (bounding-box centre, longest half-extent 1), embedded in a
    /// lattice, the lattice vertices of cubes touching the surface take the weights of the
    /// nearest surface vertex and the others are filled harmonically (rows stay normalised);
    /// skin transforms are conjugated into the normalised frame; `momentum_weights_surface` (a
    /// painted leak field per surface vertex, if any) is carried to the lattice the same way.
    /// Its value `-1` ([`crate::leak::UNPAINTED`]) marks an unpainted vertex: the lattice field
    /// is then the default field an unpainted body gets (skeleton-derived, see
    /// [`crate::scene::apply_skeleton_defaults`]) blended with the painted values by the
    /// extended painted mask ([`crate::leak::blend_painted`]), so painting adjusts the default
    /// only where painted.
    ///
    /// Run inside [`crate::progress::scoped`] it reports its stages and stops with
    /// [`OvertoneError::Cancelled`] when the host cancels.
    #[allow(clippy::too_many_arguments)]
    pub fn from_surface(
        name: &str,
        vertices: &[f64],
        triangles: &[usize],
        weights: &[f64],
        n_bones: usize,
        world_frames: Vec<Vec<f64>>,
        settings: &CharacterSettings,
        momentum_weights_surface: Option<&[f64]>,
    ) -> Result<Character> {
        Self::from_surface_with_morphs(
            name,
            vertices,
            triangles,
            weights,
            n_bones,
            world_frames,
            None,
            settings,
            momentum_weights_surface,
        )
    }

    /// [`from_surface`](Self::from_surface) with morph targets: their deltas are carried to the
    /// lattice like the weights (nearest surface vertex on cubes touching the surface, harmonic
    /// inside, each component), scaled into the normalised frame, and become the lattice
    /// scene's blendshapes (extra rig columns, see [`crate::rig::LbsRig::with_blendshapes`]).
    /// `morphs.weights` needs one row of `T` weights per frame.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_surface_with_morphs(
        name: &str,
        vertices: &[f64],
        triangles: &[usize],
        weights: &[f64],
        n_bones: usize,
        world_frames: Vec<Vec<f64>>,
        morphs: Option<SurfaceMorphs>,
        settings: &CharacterSettings,
        momentum_weights_surface: Option<&[f64]>,
    ) -> Result<Character> {
        let ns = vertices.len() / 3;
        let m = n_bones;
        check_surface_input(vertices, triangles, weights, m, &world_frames, morphs.as_ref())?;
        let (frame, normalised) = crate::scene::body_frame(name, vertices)?;
        crate::progress::check()?;
        let (prepared, preparation_cache, pending_preparation) = prepare_lattice(
            settings.sidecar.as_deref(),
            &normalised,
            triangles,
            weights,
            m,
            settings.lattice_resolution,
        )?;
        let LatticePreparation {
            embedding,
            lattice_resolution,
            resolution_choice,
            automatic_tets,
            near,
            host_weights,
        } = prepared;
        let lat = &embedding.lattice;
        let fixed = &embedding.surface_lattice_vertices;
        crate::progress::check()?;
        crate::progress::report(0.75, "rig columns, leak field and morphs on the lattice");
        let (bone_of_column, lattice_weights) = rig_columns_per_piece(&embedding, host_weights, m);
        let columns = bone_of_column.len();
        let bone_of_column: Vec<usize> = bone_of_column.iter().map(|&pb| pb % m).collect();
        let painted_leak = painted_leak_on_lattice(momentum_weights_surface, ns, &near, lat, fixed)?;
        let frames = normalised_frames(&world_frames, m, &frame, &bone_of_column)?;
        let blendshapes = lattice_blendshapes(morphs.as_ref(), ns, &frame, &near, lat, fixed)?;
        let mut scene = Scene {
            name: name.to_string(),
            mesh: lat.clone(),
            weights: lattice_weights,
            n_bones: columns,
            frames,
            momentum_weights: None,
            examples: None,
            blendshapes,
            normalisation: Some(frame),
            // The cubes the surface crosses carry only the part of the body inside them; the
            // stiffness is the default frequency's (a host's default too).
            dynamics: crate::scene::SceneDynamics {
                fill: Some(embedding.material_share.clone()),
                frequency: Some(crate::dynamics::DEFAULT_FREQUENCY),
                ..crate::scene::SceneDynamics::default()
            },
            model: ElasticModel::Arap,
            material: settings.material,
            dt: 1.0 / settings.fps,
            gravity: vec![0.0; 3],
        };
        scene.momentum_weights = Some(lattice_leak(
            name,
            &mut scene,
            &embedding,
            &normalised,
            &near,
            painted_leak,
        )?);
        scene.validate()?;
        crate::progress::report(1.0, "lattice scene ready");
        Ok(Character {
            warnings: surface_warnings(triangles, &embedding),
            scene,
            embedding,
            surface: vertices.to_vec(),
            surface_weights: weights.to_vec(),
            surface_influences: crate::rig::SparseWeights::from_dense(weights, weights.len() / ns.max(1)),
            original_to_welded: (0..ns).collect(),
            file_triangles: triangles.to_vec(),
            world_frames,
            frame,
            morphs,
            lattice_resolution,
            resolution_choice,
            automatic_tets,
            bone_of_column,
            preparation_cache,
            pending_preparation,
        })
    }

    /// Writes the lattice preparation's sidecar record if this character built it (call once
    /// the bind has completed: a cancelled bind leaves the sidecar as it was); updates
    /// [`Character::preparation_cache`] with the outcome. Nothing to do when it was loaded or
    /// no sidecar was given.
    pub fn save_preparation(&mut self) {
        if let Some(pending) = self.pending_preparation.take() {
            self.preparation_cache = pending.save();
        }
    }

    /// The fast solver's size for this body: `requested` with an automatic mode count
    /// ([`crate::dynamics::AUTO_MODES`]) resolved from the automatic lattice's size
    /// ([`FastParams::resolved`]).
    pub fn fast_params(&self, requested: FastParams) -> FastParams {
        requested.resolved(self.automatic_tets)
    }

    /// Bones of the host's rig (the surface weights' columns).
    pub(crate) fn n_surface_bones(&self) -> usize {
        self.surface_weights.len() / (self.surface.len() / 3).max(1)
    }

    /// Keeps frames `a..=b` only (lattice scene, world transforms, morph weights).
    pub fn select_frames(&mut self, a: usize, b: usize) -> Result<()> {
        self.scene.select_frames(a, b)?;
        self.world_frames = self.world_frames[a..=b].to_vec();
        if let Some(mo) = &mut self.morphs {
            mo.weights = mo.weights[a..=b].to_vec();
        }
        Ok(())
    }

    /// The skinned surface of frame `k` (bind space → world, morphs applied first), `n_s × 3`
    /// row-major, welded vertex order: the file's own skinning, exact glTF LBS
    /// (`x_s = Σ_b w_sb (A_b X_s + t_b)`, bones in increasing order). Allocates its result; see
    /// [`skinned_surface_into`](Self::skinned_surface_into).
    ///
    /// Errors: `k` is not one of the character's frames.
    pub fn skinned_surface(&self, k: usize) -> Result<Vec<f64>> {
        let mut out = vec![0.0; self.surface.len()];
        self.skinned_surface_into(k, &mut out)?;
        Ok(out)
    }

    /// [`skinned_surface`](Self::skinned_surface) written to `out` (`n_s × 3`, overwritten).
    /// Reads each vertex's positive weights only (a few of the rig's bones). Parallel over
    /// vertices (each independent: the result does not depend on the thread count).
    ///
    /// Errors: `out` is not `n_s × 3`, or `k` is not one of the character's frames (`out` is
    /// untouched).
    pub fn skinned_surface_into(&self, k: usize, out: &mut [f64]) -> Result<()> {
        use rayon::prelude::*;
        let ns = self.surface.len() / 3;
        if out.len() != 3 * ns {
            return Err(crate::OvertoneError::size(
                "skinned surface buffer",
                format!("{ns} surface vertices x 3 = {} numbers", 3 * ns),
                out.len(),
            ));
        }
        let Some(t) = self.world_frames.get(k) else {
            return Err(crate::OvertoneError::size(
                "skinned surface frame",
                format!("a frame index below {}", self.world_frames.len()),
                k,
            ));
        };
        out.par_chunks_mut(3).enumerate().with_min_len(1024).for_each(|(s, o)| {
            let mut x = [self.surface[3 * s], self.surface[3 * s + 1], self.surface[3 * s + 2]];
            if let Some(mo) = &self.morphs {
                for (tg, beta) in mo.weights[k].iter().enumerate() {
                    for i in 0..3 {
                        x[i] += beta * mo.deltas[(tg * ns + s) * 3 + i];
                    }
                }
            }
            let mut y = [0.0; 3];
            let (bones, weights) = self.surface_influences.row(s);
            for (&b, &w) in bones.iter().zip(weights) {
                let tb = &t[b as usize * 12..b as usize * 12 + 12];
                for i in 0..3 {
                    y[i] += w * (tb[i * 4] * x[0] + tb[i * 4 + 1] * x[1] + tb[i * 4 + 2] * x[2] + tb[i * 4 + 3]);
                }
            }
            o.copy_from_slice(&y);
        });
        Ok(())
    }
}

/// Checks the surface given to [`Character::from_surface_with_morphs`]: vertex and triangle
/// counts, finite positions, indices in range, the weights (sizes, signs, normalisation; through
/// [`crate::rig::LbsRig::new`]), at least one pose, and the morph deltas and weights.
fn check_surface_input(
    vertices: &[f64],
    triangles: &[usize],
    weights: &[f64],
    m: usize,
    world_frames: &[Vec<f64>],
    morphs: Option<&SurfaceMorphs>,
) -> Result<()> {
    let ns = vertices.len() / 3;
    if vertices.is_empty() || vertices.len() % 3 != 0 {
        return Err(OvertoneError::size(
            "surface vertices",
            "a non-empty multiple of 3 numbers",
            vertices.len(),
        ));
    }
    crate::error::check_finite("surface vertices", vertices, 3)?;
    if triangles.len() % 3 != 0 || triangles.is_empty() {
        return Err(OvertoneError::size(
            "triangles",
            "a non-empty multiple of 3 indices",
            triangles.len(),
        ));
    }
    if let Some(&bad) = triangles.iter().find(|&&i| i >= ns) {
        return Err(InputError::IndexOutOfRange {
            element: triangles.iter().position(|&i| i == bad).unwrap_or(0) / 3,
            vertex: bad,
            n_vertices: ns,
        }
        .into());
    }
    // Validates sizes, signs and normalisation of the weights (and the morph deltas).
    let surface_rig = crate::rig::LbsRig::new(3, vertices, weights, m)?;
    if world_frames.is_empty() {
        return Err(OvertoneError::setting("frames", 0, "at least one pose is needed"));
    }
    if let Some(mo) = morphs {
        surface_rig.with_blendshapes(&mo.deltas, mo.n_targets)?;
        if mo.weights.len() != world_frames.len() || mo.weights.iter().any(|w| w.len() != mo.n_targets) {
            return Err(OvertoneError::size(
                "morph target weights",
                format!("{} frames x {} targets", world_frames.len(), mo.n_targets),
                format!("{} rows", mo.weights.len()),
            ));
        }
    }
    Ok(())
}

/// The rig columns of the lattice scene and their weights (`nl × columns`, row-major), from the
/// extended host weights (`nl × m`). Returns `(piece·m + bone per column, weights)`.
fn rig_columns_per_piece(embedding: &Embedding, host_weights: Vec<f64>, m: usize) -> (Vec<usize>, Vec<f64>) {
    let lat = &embedding.lattice;
    // Separate pieces get their own rig columns: column (piece, bone) carries the bone's
    // weights on that piece only and the bone's transform. The skinned pose is unchanged,
    // but the complementary displacement is then rig-orthogonal on every piece, so a piece
    // (held by no elastic tissue to the others) cannot drift or spin off its bones.
    let nl = lat.n_vertices();
    let bone_of_column: Vec<usize> = if embedding.pieces > 1 {
        let mut used = vec![false; embedding.pieces * m];
        for v in 0..nl {
            let p = embedding.lattice_piece[v];
            for b in 0..m {
                if host_weights[v * m + b] > 0.0 {
                    used[p * m + b] = true;
                }
            }
        }
        (0..embedding.pieces * m).filter(|&c| used[c]).collect()
    } else {
        (0..m).collect()
    };
    let columns = bone_of_column.len();
    let lattice_weights: Vec<f64> = if embedding.pieces > 1 {
        let mut col = vec![usize::MAX; embedding.pieces * m];
        for (c, &pb) in bone_of_column.iter().enumerate() {
            col[pb] = c;
        }
        let mut w = vec![0.0; nl * columns];
        for v in 0..nl {
            let p = embedding.lattice_piece[v];
            for b in 0..m {
                let x = host_weights[v * m + b];
                if x > 0.0 {
                    w[v * columns + col[p * m + b]] = x;
                }
            }
        }
        w
    } else {
        host_weights
    };
    (bone_of_column, lattice_weights)
}

/// A painted leak field (per surface vertex, [`crate::leak::UNPAINTED`] where unpainted) carried
/// to the lattice: values at the surface cubes from the nearest surface vertex, harmonic inside.
fn painted_leak_on_lattice(
    momentum_weights_surface: Option<&[f64]>,
    ns: usize,
    near: &[usize],
    lat: &crate::mesh::SimplexMesh,
    fixed: &[usize],
) -> Result<Option<PaintedLeak>> {
    Ok(match momentum_weights_surface {
        None => None,
        Some(d) => {
            if crate::leak::validate_painted_leak(d, ns)? {
                // Painted where d >= 0, the default field elsewhere (blended below, once
                // the skeleton-derived default is known).
                let painted = |s: usize| d[s] != crate::leak::UNPAINTED;
                let mask: Vec<f64> = near.iter().map(|&s| if painted(s) { 1.0 } else { 0.0 }).collect();
                let values: Vec<f64> = near.iter().map(|&s| if painted(s) { d[s] } else { 0.0 }).collect();
                Some(PaintedLeak::Partial {
                    mask: extend_harmonic(lat, fixed, &mask, 1, "painted leak mask")?,
                    values: extend_harmonic(lat, fixed, &values, 1, "painted leak")?,
                })
            } else {
                let known: Vec<f64> = near.iter().map(|&s| d[s]).collect();
                Some(PaintedLeak::Full(extend_harmonic(
                    lat,
                    fixed,
                    &known,
                    1,
                    "painted leak",
                )?))
            }
        }
    })
}

/// The world skin transforms of every frame (`m × 12` per frame) conjugated into the normalised
/// frame, one per rig column.
fn normalised_frames(
    world_frames: &[Vec<f64>],
    m: usize,
    frame: &crate::scene::Normalisation,
    bone_of_column: &[usize],
) -> Result<Vec<Vec<f64>>> {
    let (n_to, n_from) = frame.affine_pair();
    let mut frames = Vec::with_capacity(world_frames.len());
    for (f, fr) in world_frames.iter().enumerate() {
        if fr.len() != 12 * m {
            return Err(OvertoneError::size(
                format!("pose {f}"),
                format!("{m} bones x 12 numbers"),
                fr.len(),
            ));
        }
        crate::error::check_finite(&format!("pose {f}"), fr, 12)?;
        let per_bone: Vec<[f64; 12]> = fr
            .chunks_exact(12)
            .map(|t| compose_affine(&n_to, &compose_affine(t, &n_from)))
            .collect();
        frames.push(bone_of_column.iter().flat_map(|&b| per_bone[b]).collect());
    }
    Ok(frames)
}

/// Morph targets carried to the lattice: each delta component from the nearest surface vertex
/// on the surface cubes, harmonic inside, scaled into the normalised frame (`T × nl × 3`).
fn lattice_blendshapes(
    morphs: Option<&SurfaceMorphs>,
    ns: usize,
    frame: &crate::scene::Normalisation,
    near: &[usize],
    lat: &crate::mesh::SimplexMesh,
    fixed: &[usize],
) -> Result<Option<crate::scene::SceneBlendshapes>> {
    Ok(match morphs {
        None => None,
        Some(mo) => {
            let nt = mo.n_targets;
            // Known values per fixed lattice vertex: 3T components (target-major).
            let known: Vec<f64> = near
                .iter()
                .flat_map(|&sv| (0..nt).map(move |t| (t, sv)))
                .flat_map(|(t, sv)| frame.vector_to_scene(&mo.deltas[(t * ns + sv) * 3..(t * ns + sv + 1) * 3]))
                .collect();
            let ext = extend_harmonic(lat, fixed, &known, 3 * nt, "morph deltas")?;
            let nl = lat.n_vertices();
            let mut deltas = vec![0.0; nt * nl * 3];
            for v in 0..nl {
                for t in 0..nt {
                    for i in 0..3 {
                        deltas[(t * nl + v) * 3 + i] = ext[v * 3 * nt + 3 * t + i];
                    }
                }
            }
            Some(crate::scene::SceneBlendshapes {
                deltas,
                n_targets: nt,
                weights: mo.weights.clone(),
            })
        }
    })
}

/// The lattice's leak field: the skeleton-derived default (which also sets the scene's default
/// stiffness), with pieces that no bone reaches filled, and a painted field blended in.
fn lattice_leak(
    name: &str,
    scene: &mut Scene,
    embedding: &Embedding,
    normalised: &[f64],
    near: &[usize],
    painted_leak: Option<PaintedLeak>,
) -> Result<Vec<f64>> {
    let lat = &embedding.lattice;
    let fixed = &embedding.surface_lattice_vertices;
    // The skeleton's core is measured on the body, not on the lattice: a lattice vertex of a
    // cube the surface crosses may lie up to a cell outside it, and stands for the material
    // of its nearest surface vertex (see `skeleton_defaults_on_body`).
    let mut body_points = lat.vertices().to_vec();
    for (&v, &s) in fixed.iter().zip(near) {
        body_points[3 * v..3 * v + 3].copy_from_slice(&normalised[3 * s..3 * s + 3]);
    }
    // The default leak (the skeleton-derived field, the depth field inside the body where no
    // bone core is near) and stiffness; a painted leak replaces the default where painted.
    crate::scene::apply_skeleton_defaults(scene, &body_points, &embedding.outside_surface)?;
    let mut default = scene
        .momentum_weights
        .take()
        .ok_or_else(|| OvertoneError::setting("leak", name, "the skeleton-derived default leak field is missing"))?;
    // A separate piece whose default leak is zero everywhere (a small part far from every
    // bone axis, with no lattice vertex below its surface) would have no rig constraint at
    // all and drift freely (its rigid motions cost no elastic energy): such pieces take
    // d = 1 (momentum kept, like interior material). Applied to the default field, before a
    // painted leak is blended in, so every piece keeps the same default whether or not one
    // piece is filled.
    if embedding.pieces > 1 {
        let mut peak = vec![0.0f64; embedding.pieces];
        for (v, &x) in default.iter().enumerate() {
            let p = embedding.lattice_piece[v];
            peak[p] = peak[p].max(x);
        }
        for (v, x) in default.iter_mut().enumerate() {
            if peak[embedding.lattice_piece[v]] <= 1e-9 {
                *x = 1.0;
            }
        }
    }
    Ok(match painted_leak {
        None => default,
        Some(PaintedLeak::Full(known)) => known,
        Some(PaintedLeak::Partial { mask, values }) => crate::leak::blend_painted(&default, &mask, &values),
    })
}

/// Warnings about the surface a TD should see: an open or non-manifold surface among the
/// pieces that have a lattice of their own (layered pieces riding in a body's lattice, see
/// [`Embedding::passenger_of`], are open by nature and are not counted).
fn surface_warnings(triangles: &[usize], embedding: &Embedding) -> Vec<String> {
    let (piece, _) = crate::embed::surface_pieces(triangles.iter().max().map_or(0, |&m| m + 1), triangles);
    let own: Vec<usize> = triangles
        .chunks_exact(3)
        .filter(|t| embedding.passenger_of.get(piece[t[0]]).is_none_or(|h| h.is_none()))
        .flatten()
        .copied()
        .collect();
    let (open, nonmanifold) = crate::mesh::surface_defects(&own);
    let mut warnings = Vec::new();
    if open > 0 || nonmanifold > 0 {
        warnings.push(format!(
            "the surface is not closed and manifold ({open} boundary edges, {nonmanifold} edges shared by more than two triangles); it was embedded by generalized winding number, check the lattice covers the body"
        ));
    }
    warnings
}

/// The advice a character's bind or bake attaches to a precompute that does not converge
/// (see [`OvertoneError::with_advice`]): what a TD can change there is the lattice resolution
/// and, for the fast solver (`fast`), the mode count.
pub(crate) fn lattice_advice(fast: bool) -> &'static str {
    if fast {
        "try a coarser lattice resolution or fewer modes"
    } else {
        "try a coarser lattice resolution"
    }
}

/// The result of a character bake.
pub struct CharacterBake {
    /// Per frame, final positions of the file's own vertices in their order, `n × 3`.
    pub frames: Vec<Vec<f64>>,
    /// Per frame, the complementary displacement of the same vertices (world units), `n × 3`.
    pub displacements: Vec<Vec<f64>>,
    pub simulation: Simulation,
}

/// Simulates the character and returns, per frame, the skinned surface (the file's own skin,
/// exact glTF LBS, morph targets applied before skinning) plus the complementary displacement carried from the lattice by the
/// barycentric embedding and scaled back to world units, for every original vertex.
/// `progress(frame, total)` is called after each frame.
pub fn bake_character(
    ch: &Character,
    kind: SolverKind,
    sidecar: Option<&Path>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<CharacterBake> {
    let (displacements, simulation) = bake_character_motion(ch, kind, sidecar, progress)?;
    let ns = ch.surface.len() / 3;
    let frames = displacements
        .iter()
        .enumerate()
        .map(|(k, u)| {
            let skinned = ch.skinned_surface(k)?;
            Ok(ch
                .original_to_welded
                .iter()
                .enumerate()
                .flat_map(|(o, &s)| (0..3).map(move |i| (o, s, i)))
                .map(|(o, s, i)| {
                    debug_assert!(s < ns);
                    skinned[3 * s + i] + u[3 * o + i]
                })
                .collect())
        })
        .collect::<Result<Vec<Vec<f64>>>>()?;
    Ok(CharacterBake {
        frames,
        displacements,
        simulation,
    })
}

/// The secondary motion of [`bake_character`] alone: per frame, the complementary
/// displacement of every original vertex (world units and axes, `n × 3`), and the simulation.
/// Neither the lattice nor the surface is skinned (a caller that places the motion on its own
/// pose, as the command line's bake does at its output rate, needs only this).
pub fn bake_character_motion(
    ch: &Character,
    kind: SolverKind,
    sidecar: Option<&Path>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<Vec<f64>>, Simulation)> {
    let mut displacements = Vec::with_capacity(ch.scene.frames.len());
    let simulation = stream_character_motion(ch, kind, sidecar, &|_| true, progress, &mut |_, u| {
        displacements.push(u.to_vec());
        Ok(())
    })?;
    Ok((displacements, simulation))
}

/// [`bake_character_motion`] without keeping the frames: `sink(k, u)` receives the
/// displacement `u` (`n × 3`, world units and axes, the file's vertex order) of each frame `k`
/// that is `wanted`, in order, as it is computed. Frames not wanted are stepped but their motion
/// is not carried to the surface (for a fast body, not reconstructed at all), so a caller that
/// needs only some physics samples (the command line's bake: those next to an output instant)
/// pays for those alone, and memory stays flat in the frame count. `progress(k + 1, total)` is
/// called after each wanted frame; an error from `sink` stops the run and is returned.
pub fn stream_character_motion(
    ch: &Character,
    kind: SolverKind,
    sidecar: Option<&Path>,
    wanted: &dyn Fn(usize) -> bool,
    progress: &mut dyn FnMut(usize, usize),
    sink: &mut dyn FnMut(usize, &[f64]) -> Result<()>,
) -> Result<Simulation> {
    let ns = ch.surface.len() / 3;
    let total = ch.scene.frames.len();
    let mut surface_u = vec![0.0; ns * 3];
    let mut original_u = vec![0.0; ch.original_to_welded.len() * 3];
    // The run hands out the surface's displacement (embedded in the lattice).
    let embedded = Embedded {
        corners: &ch.embedding.corners,
        barycentric: &ch.embedding.barycentric,
    };
    let mut on_frame = |k: usize, _: &[f64], disp: &[f64]| -> Result<()> {
        // The lattice frame's displacement in world units and axes.
        for (u, local) in surface_u.chunks_exact_mut(3).zip(disp.chunks_exact(3)) {
            ch.frame.vector_to_file(&[local[0], local[1], local[2]], u);
        }
        for (o, &s) in ch.original_to_welded.iter().enumerate() {
            original_u[3 * o..3 * o + 3].copy_from_slice(&surface_u[3 * s..3 * s + 3]);
        }
        sink(k, &original_u)?;
        progress(k + 1, total);
        Ok(())
    };
    let kind = match kind {
        SolverKind::Fast(fp) => SolverKind::Fast(ch.fast_params(fp)),
        other => other,
    };
    simulate_streaming_output(&ch.scene, kind, sidecar, false, wanted, Some(embedded), &mut on_frame)
        .map_err(|e| e.with_advice(lattice_advice(matches!(kind, SolverKind::Fast(_)))))
}
