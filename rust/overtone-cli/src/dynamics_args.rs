//! The dynamics flags shared by `run` and `bake` (the scene keys of the same names).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use overtone::scene::{DynamicsKeys, Scene};

#[derive(Args, Clone, Debug, Default)]
pub struct DynamicsArgs {
    /// Time integrator: `implicit-midpoint` (default; substeps, no numerical damping) or
    /// `backward-euler` (one step per frame, the seeds' scheme: no damping, bind rest).
    #[arg(long)]
    pub integrator: Option<String>,
    /// Substeps per frame (default: automatic, internal step ≤ 1/120 s and ω₁Δ ≤ 0.5). glTF bakes
    /// otherwise step the physics at 240 Hz whatever the frame rate (automatic substeps inside
    /// each step); with --substeps they step once per output frame.
    #[arg(long)]
    pub substeps: Option<usize>,
    /// Damping ratio of the low vibration modes (0 none, 1 critical; default 0.1).
    #[arg(long)]
    pub damping: Option<f64>,
    /// Frequency (Hz) of the lowest vibration mode: rescales Young's modulus to it (default
    /// none; 0: Young's modulus as given).
    #[arg(long)]
    pub frequency: Option<f64>,
    /// Elastic reference: `rig` (default: a held pose shows no secondary motion) or `bind`.
    #[arg(long)]
    pub rest: Option<String>,
    /// Per-vertex multiplier of Young's modulus: a JSON array or a one-column .dmat (one value
    /// per vertex of the input mesh).
    #[arg(long)]
    pub stiffness: Option<PathBuf>,
    /// Physics seconds per animation second (default 1).
    #[arg(long)]
    pub time_scale: Option<f64>,
    /// Seconds the rig is held at the first pose before the first frame (default 0).
    #[arg(long)]
    pub preroll: Option<f64>,
    /// Multiplier of the output displacement (default 1).
    #[arg(long)]
    pub strength: Option<f64>,
    /// Restart the simulation where the rig jumps more than this fraction of the body's
    /// diagonal in one frame (default 0.5; 0 = never).
    #[arg(long)]
    pub cut_distance: Option<f64>,
    /// Largest displacement shown, a fraction of the body's diagonal: a frame whose secondary
    /// motion exceeds it is scaled down as a whole (default none; 0: none).
    #[arg(long)]
    pub max_displacement: Option<f64>,
    /// Gravity `x,y,z` in the input's world units/s² (glTF: +Y up, e.g. `0,-9.81,0`).
    #[arg(long, allow_hyphen_values = true)]
    pub gravity: Option<String>,
}

/// A per-vertex field: a JSON array of numbers or a one-column `.dmat`.
pub fn read_field(path: &Path, what: &str) -> Result<Vec<f64>> {
    if path.extension().map(|e| e == "dmat").unwrap_or(false) {
        let m = overtone::io::read_dmat(path)?;
        if m.cols != 1 {
            bail!("{}: a {what} field has one column, this has {}", path.display(), m.cols);
        }
        return Ok(m.data);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: expected a JSON array of numbers", path.display()))
}

impl DynamicsArgs {
    /// The keys given on the command line (the stiffness field is handled by the caller, per
    /// vertex of its mesh).
    pub fn keys(&self) -> DynamicsKeys {
        DynamicsKeys {
            integrator: self.integrator.clone(),
            substeps: self.substeps,
            damping: self.damping,
            frequency: self.frequency,
            rest: self.rest.clone(),
            stiffness: None,
            fill: None,
            time_scale: self.time_scale,
            preroll: self.preroll,
            strength: self.strength,
            cut_distance: self.cut_distance,
            max_displacement: self.max_displacement,
        }
    }

    /// Gravity in world units/s², `dim` components.
    pub fn gravity(&self, dim: usize) -> Result<Option<Vec<f64>>> {
        let Some(g) = &self.gravity else { return Ok(None) };
        let v: Vec<f64> = g
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .with_context(|| format!("--gravity {g}: expected {dim} comma-separated numbers"))?;
        if v.len() != dim || v.iter().any(|x| !x.is_finite()) {
            bail!("--gravity {g}: expected {dim} finite comma-separated numbers");
        }
        Ok(Some(v))
    }

    /// Applies the flags to a scene whose vertices are the input's (`run`, tet-mesh bakes):
    /// dynamics keys, a stiffness field per scene vertex, and gravity (divided by the scene's
    /// normalisation scale when its positions were rescaled from the file's).
    pub fn apply_to_scene(&self, sc: &mut Scene) -> Result<()> {
        sc.dynamics = self.keys().apply(&sc.dynamics)?;
        if let Some(p) = &self.stiffness {
            sc.dynamics.stiffness = Some(read_field(p, "stiffness")?);
        }
        if let Some(g) = self.gravity(sc.mesh.dim())? {
            let s = sc.normalisation.map_or(1.0, |n| n.scale);
            sc.gravity = g.iter().map(|x| x / s).collect();
        }
        sc.validate()?;
        Ok(())
    }
}
