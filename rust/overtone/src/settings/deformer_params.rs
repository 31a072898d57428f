//! [`Settings`] translated into what the character builder and the solvers take.

use super::{Settings, Solver};
use crate::dynamics::{FastParams, Material, AUTO_MODES};
use crate::embed::AUTO_LATTICE_RESOLUTION;
use crate::error::Result;
use crate::scene::{CharacterSettings, SceneDynamics};

/// A deformer's settings as the core's parameter structs (after [`Settings::validate`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DeformerParams {
    /// Material, lattice resolution and frame rate (`dt = 1/fps`).
    pub character: CharacterSettings,
    /// `Some`: the fast solver with this subspace; `None`: the full-order solver.
    pub fast: Option<FastParams>,
    /// Integrator, damping, rest shape and the other controls (no painted fields: the body
    /// brings those).
    pub dynamics: SceneDynamics,
    /// Gravity in the host's world frame, world length units/s².
    pub gravity: [f64; 3],
}

impl DeformerParams {
    /// Checks `s` against the table and translates it.
    pub fn new(s: &Settings) -> Result<Self> {
        s.validate()?;
        Ok(Self {
            character: CharacterSettings {
                lattice_resolution: s.lattice_resolution.unwrap_or(AUTO_LATTICE_RESOLUTION),
                material: Material {
                    youngs_modulus: s.youngs_modulus,
                    poisson_ratio: s.poisson_ratio,
                    density: s.density,
                },
                fps: s.fps,
                ..CharacterSettings::default()
            },
            fast: match s.solver {
                Solver::Fast => Some(FastParams {
                    modes: s.modes.unwrap_or(AUTO_MODES),
                    clusters: s.clusters,
                    ..FastParams::default_for(3)
                }),
                Solver::Full => None,
            },
            dynamics: SceneDynamics::from_settings(s),
            gravity: s.gravity,
        })
    }
}
