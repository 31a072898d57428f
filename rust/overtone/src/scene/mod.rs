//! Scenes: a rest mesh, a rig with its animation, a material and time-stepping settings.

mod body_frame;
mod character;
mod display_surface;
mod extend_weights;
mod lattice_preparation;
mod metronome;
mod readers;
mod scene_dynamics;
mod simulate;
mod skeleton_defaults;
mod surface_field;

pub(crate) use body_frame::body_frame;
pub(crate) use character::lattice_advice;
pub use character::{
    bake_character, bake_character_motion, character_from_gltf, character_from_gltf_meshes, stream_character_motion,
    Character, CharacterBake, CharacterMesh, CharacterSettings, SurfaceMorphs,
};
pub use display_surface::DisplaySurface;
pub(crate) use extend_weights::{extend_harmonic, extend_weights_inward};
pub use lattice_preparation::{prepare_lattice, LatticePreparation, LATTICE_PREPARATION_KIND};
pub use metronome::{metronome_beam, MetronomeBeam};
pub use readers::{
    fast_cody_files, load_scene, parse_fast_cody_scene, parse_reference_scene, read_overtone_scene, scene_to_json,
    write_overtone_scene, NamedText, ReferenceSceneTexts, SCENE_FORMAT,
};
pub(crate) use scene_dynamics::DEFAULT_CUT_DISTANCE;
pub use scene_dynamics::{scene_rows, DynamicsKeys, SceneDynamics};
pub(crate) use simulate::{new_solver, rig_start, simulate_streaming_output, Embedded};
pub use simulate::{
    simulate, simulate_full, simulate_streaming, simulate_with_sidecar, FrameCallback, Simulation, SolverKind,
};
pub use skeleton_defaults::{apply_skeleton_defaults, SkeletonDefaults};
pub use surface_field::lattice_field_from_surface;

use crate::dynamics::Material;
use crate::error::{check_finite, InputError, OvertoneError, Result};
use crate::mesh::SimplexMesh;

/// The elastic energy a scene asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElasticModel {
    /// As-rigid-as-possible: `Σ_e (μ vol_e/2)‖F_e − R_e‖²`.
    Arap,
    /// Stable neo-Hookean (asked for by the reference release's frog).
    NeoHookean,
}

impl ElasticModel {
    /// Parses the names used in scene files (`arap`, `neohookean`).
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "arap" => Ok(Self::Arap),
            "neohookean" | "neo-hookean" | "neo_hookean" => Ok(Self::NeoHookean),
            other => Err(OvertoneError::setting(
                "material.model",
                other,
                "known models: arap, neohookean",
            )),
        }
    }
    /// The scene-file name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Arap => "arap",
            Self::NeoHookean => "neohookean",
        }
    }
}

/// A complete, validated simulation input.
#[derive(Clone, Debug)]
pub struct Scene {
    /// A short name for reports.
    pub name: String,
    pub mesh: SimplexMesh,
    /// LBS weights, `n × n_bones` row-major.
    pub weights: Vec<f64>,
    pub n_bones: usize,
    /// Per frame, per bone, a `d × (d+1)` row-major affine transform (rest → posed).
    pub frames: Vec<Vec<f64>>,
    /// The diagonal of `D` per vertex; `None` means the default diffusion field.
    pub momentum_weights: Option<Vec<f64>>,
    pub model: ElasticModel,
    pub material: Material,
    /// Time step (s), one step per frame.
    pub dt: f64,
    /// Gravity (length/s²), `d` components.
    pub gravity: Vec<f64>,
    /// Example poses for example-aware complementary dynamics (`None`: plain ARAP).
    pub examples: Option<SceneExamples>,
    /// Blendshapes (morph targets) and their weight per frame (`None`: a bone rig).
    pub blendshapes: Option<SceneBlendshapes>,
    /// How the scene's positions were normalised from the files they came from (`None`: the
    /// positions are the file's own).
    pub normalisation: Option<Normalisation>,
    /// Integrator, damping, rest shape, stiffness and the other art-direction controls.
    pub dynamics: SceneDynamics,
}

/// A similarity normalisation `x_scene = Rᵀ(x_file − centre)/scale`: readers that centre and
/// rescale (as the reference release's demo does) use `R = I`; a character's lattice scene uses
/// its body frame ([`body_frame`]), so a body moved or turned anywhere in the world gets the
/// same lattice and moves the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalisation {
    /// Centre, file units.
    pub centre: [f64; 3],
    /// File units per scene unit (> 0).
    pub scale: f64,
    /// `R` (`3 × 3` row-major, a rotation): its columns are the scene axes in file coordinates.
    /// 2D scenes use the identity.
    pub rotation: [f64; 9],
}

/// The `3 × 3` identity, row-major.
pub(crate) const IDENTITY3: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

impl Normalisation {
    /// `x_scene = (x_file − centre)/scale` (no rotation).
    pub fn similarity(centre: [f64; 3], scale: f64) -> Self {
        Self {
            centre,
            scale,
            rotation: IDENTITY3,
        }
    }
    /// File position → scene position (`d` components): `Rᵀ(x − c)/s`.
    pub fn to_scene(&self, x: &[f64], out: &mut [f64]) {
        let d = x.len().min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(d) {
            *o = (0..d)
                .map(|j| self.rotation[j * 3 + i] * (x[j] - self.centre[j]))
                .sum::<f64>()
                / self.scale;
        }
    }
    /// Scene position → file position (`d` components): `c + s R x`.
    pub fn to_file(&self, x: &[f64], out: &mut [f64]) {
        let d = x.len().min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(d) {
            *o = self.centre[i] + self.scale * (0..d).map(|j| self.rotation[i * 3 + j] * x[j]).sum::<f64>();
        }
    }
    /// A scene-frame vector (a displacement, `d` components) in file units and axes: `s R u`.
    pub fn vector_to_file(&self, u: &[f64], out: &mut [f64]) {
        let d = u.len().min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(d) {
            *o = self.scale * (0..d).map(|j| self.rotation[i * 3 + j] * u[j]).sum::<f64>();
        }
    }
    /// A file-frame vector (a displacement, gravity; `d` components) in the scene frame:
    /// `Rᵀ u / s`.
    pub fn vector_to_scene(&self, u: &[f64]) -> Vec<f64> {
        let d = u.len();
        (0..d)
            .map(|i| (0..d).map(|j| self.rotation[j * 3 + i] * u[j]).sum::<f64>() / self.scale)
            .collect()
    }
    /// The normalisation and its inverse as 3D affine maps (`3 × 4` row-major):
    /// `[Rᵀ/s | −Rᵀc/s]` and `[sR | c]`.
    pub(crate) fn affine_pair(&self) -> ([f64; 12], [f64; 12]) {
        let (r, c, s) = (&self.rotation, &self.centre, self.scale);
        let to = std::array::from_fn(|k| {
            let (i, j) = (k / 4, k % 4);
            if j == 3 {
                -(0..3).map(|l| r[l * 3 + i] * c[l]).sum::<f64>() / s
            } else {
                r[j * 3 + i] / s
            }
        });
        let from = std::array::from_fn(|k| {
            let (i, j) = (k / 4, k % 4);
            if j == 3 {
                c[i]
            } else {
                s * r[i * 3 + j]
            }
        });
        (to, from)
    }
}

/// Blendshapes of a scene: extra rig columns (see [`crate::rig::LbsRig::with_blendshapes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SceneBlendshapes {
    /// Rest-space offsets, `T × n × d` row-major (length units of the mesh).
    pub deltas: Vec<f64>,
    /// Number of targets `T`.
    pub n_targets: usize,
    /// Per frame, the `T` target weights (dimensionless; the rig pose is morph-then-skin).
    pub weights: Vec<Vec<f64>>,
}

/// Example poses offered to the complementary-dynamics local step
/// ([`crate::dynamics::FullOrderSolver::set_examples`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SceneExamples {
    /// Each pose `n × d` row-major, in the rest mesh's vertex order.
    pub poses: Vec<Vec<f64>>,
    /// Blend `β ∈ [0, 1]` toward the examples. Default 1.
    pub beta: f64,
    /// One weight vector for the body, or one per element.
    pub manifold: crate::shape_matching::ManifoldScope,
}

impl Scene {
    /// The scene's rig: LBS over the rest mesh, plus its blendshapes if any.
    pub fn rig(&self) -> Result<crate::rig::LbsRig> {
        let rig = crate::rig::LbsRig::new(self.mesh.dim(), self.mesh.vertices(), &self.weights, self.n_bones)?;
        match &self.blendshapes {
            None => Ok(rig),
            Some(b) => rig.with_blendshapes(&b.deltas, b.n_targets),
        }
    }

    /// The rig parameters of frame `k` (bone transforms, then blendshape weights) into `out`
    /// (`rig.n_params()` values; no allocation).
    pub fn frame_params_into(&self, rig: &crate::rig::LbsRig, k: usize, out: &mut [f64]) -> Result<()> {
        let frame = self
            .frames
            .get(k)
            .ok_or_else(|| OvertoneError::setting("frame", k, format!("the scene has {} frames", self.frames.len())))?;
        match &self.blendshapes {
            None => rig.params_from_transforms_into(frame, out),
            Some(b) => rig.params_from_pose_into(frame, &b.weights[k], out),
        }
    }

    /// Keeps frames `a..=b` only (their transforms and blendshape weights).
    pub fn select_frames(&mut self, a: usize, b: usize) -> Result<()> {
        if !(a <= b && b < self.frames.len()) {
            return Err(OvertoneError::setting(
                "frames",
                format!("{a}..{b}"),
                format!("the animation has frames 0..{}", self.frames.len().saturating_sub(1)),
            ));
        }
        self.frames = self.frames[a..=b].to_vec();
        if let Some(bs) = &mut self.blendshapes {
            bs.weights = bs.weights[a..=b].to_vec();
        }
        Ok(())
    }

    /// Checks that every array matches the mesh: weights `n × m`, each frame `m·d(d+1)` finite
    /// numbers, `D` of length `n`, gravity of length `d`, material and `dt` in range.
    pub fn validate(&self) -> Result<()> {
        let (n, d, m) = (self.mesh.n_vertices(), self.mesh.dim(), self.n_bones);
        self.rig()?;
        self.dynamics.validate(n)?;
        if let Some(b) = &self.blendshapes {
            if b.weights.len() != self.frames.len() {
                return Err(OvertoneError::size(
                    "blendshape weights",
                    format!("one row per frame ({})", self.frames.len()),
                    format!("{} rows", b.weights.len()),
                ));
            }
            for (f, row) in b.weights.iter().enumerate() {
                if row.len() != b.n_targets {
                    return Err(OvertoneError::size(
                        format!("blendshape weights of frame {f}"),
                        format!("{} (one per target)", b.n_targets),
                        row.len(),
                    ));
                }
                check_finite(&format!("blendshape weights of frame {f}"), row, 1)?;
            }
            if b.n_targets == 0 {
                return Err(OvertoneError::setting(
                    "blendshapes",
                    0,
                    "no targets; remove them or give at least one",
                ));
            }
        }
        if self.frames.is_empty() {
            return Err(OvertoneError::setting(
                "frames",
                0,
                "the animation needs at least one frame",
            ));
        }
        for (f, fr) in self.frames.iter().enumerate() {
            if fr.len() != m * d * (d + 1) {
                return Err(OvertoneError::size(
                    format!("frame {f}"),
                    format!("{m} bones x {d}x{} affine matrices", d + 1),
                    format!("{} numbers", fr.len()),
                ));
            }
            check_finite(&format!("frame {f}"), fr, d * (d + 1))?;
        }
        if let Some(dw) = &self.momentum_weights {
            crate::leak::validate_momentum_weights(dw, n)?;
        }
        self.material.validate()?;
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(OvertoneError::setting(
                "dt",
                self.dt,
                "the time step must be a finite number of seconds > 0",
            ));
        }
        if self.gravity.len() != d {
            return Err(OvertoneError::size(
                "gravity",
                format!("{d} components"),
                self.gravity.len(),
            ));
        }
        check_finite("gravity", &self.gravity, 1)?;
        if let Some(ex) = &self.examples {
            if ex.poses.is_empty() {
                return Err(OvertoneError::setting(
                    "examples",
                    0,
                    "an empty list; remove the key or give poses",
                ));
            }
            for (j, pose) in ex.poses.iter().enumerate() {
                if pose.len() != n * d {
                    return Err(InputError::Example {
                        example: j,
                        reason: format!("expected {n} vertices x {d} (the mesh's), got {} numbers", pose.len()),
                    }
                    .into());
                }
                if let Some(i) = pose.iter().position(|x| !x.is_finite()) {
                    return Err(InputError::Example {
                        example: j,
                        reason: format!("non-finite coordinate at row {}, column {}", i / d, i % d),
                    }
                    .into());
                }
            }
            if !(ex.beta.is_finite() && (0.0..=1.0).contains(&ex.beta)) {
                return Err(OvertoneError::setting("example_beta", ex.beta, "must be in [0, 1]"));
            }
        }
        Ok(())
    }
}
