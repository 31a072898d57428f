//! Scenes: a rest mesh, a rig with its animation, a material and time-stepping settings.

mod character;
mod display_surface;
mod extend_weights;
mod metronome;
mod readers;
mod scene_dynamics;
mod simulate;
mod skeleton_defaults;
mod surface_field;

pub(crate) use character::lattice_advice;
pub use character::{
    bake_character, character_from_gltf, character_from_gltf_meshes, Character, CharacterBake, CharacterMesh,
    CharacterSettings, SurfaceMorphs,
};
pub use display_surface::DisplaySurface;
pub(crate) use extend_weights::{extend_harmonic, extend_weights_inward};
pub use metronome::{metronome_beam, MetronomeBeam};
pub use readers::{
    fast_cody_files, load_scene, parse_fast_cody_scene, parse_reference_scene, read_overtone_scene, scene_to_json,
    write_overtone_scene, NamedText, ReferenceSceneTexts, SCENE_FORMAT,
};
pub(crate) use scene_dynamics::DEFAULT_CUT_DISTANCE;
pub use scene_dynamics::{scene_rows, DynamicsKeys, SceneDynamics};
pub(crate) use simulate::{new_solver, rig_start};
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

/// A normalisation `x_scene = (x_file − centre)/scale` (readers that centre and rescale, as the
/// reference release's demo does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalisation {
    /// Bounding-box centre, file units.
    pub centre: [f64; 3],
    /// File units per scene unit (> 0).
    pub scale: f64,
}

impl Normalisation {
    /// File position → scene position (`d` components).
    pub(crate) fn to_scene(&self, x: &[f64], out: &mut [f64]) {
        for (i, (o, v)) in out.iter_mut().zip(x).enumerate() {
            *o = (v - self.centre[i]) / self.scale;
        }
    }
    /// Scene position → file position (`d` components).
    pub(crate) fn to_file(&self, x: &[f64], out: &mut [f64]) {
        for (i, (o, v)) in out.iter_mut().zip(x).enumerate() {
            *o = self.centre[i] + self.scale * v;
        }
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
