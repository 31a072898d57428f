//! The art-direction controls of a scene's simulation (integrator, damping, rest shape,
//! stiffness, time scale, pre-roll, strength, cut detection) and their defaults.

use crate::dynamics::{Integrator, RestShape, SolverParams, DEFAULT_DAMPING, MAX_SUBSTEPS};
use crate::error::{OvertoneError, Result};

/// Default cut threshold: a rig jump between two frames larger than this fraction of the
/// body's bounding-box diagonal restarts the simulation there (a camera cut or a teleport,
/// not a motion: a sprint at 24 fps moves a body by about a tenth of its diagonal per frame).
pub const DEFAULT_CUT_DISTANCE: f64 = 0.5;

/// How a scene is simulated; every field documents its default ([`Default`] is Overtone's
/// production scheme, [`SceneDynamics::seed`] the seed tutorials' scheme).
#[derive(Clone, Debug, PartialEq)]
pub struct SceneDynamics {
    /// Time integrator. Default implicit midpoint (scene key `"integrator"`).
    pub integrator: Integrator,
    /// Substeps per frame; `None` (default) chooses them from the frame length and the
    /// lowest mode ([`crate::dynamics::auto_substeps`]). Ignored by backward Euler.
    pub substeps: Option<usize>,
    /// Damping ratio `ζ` of the lowest mode (0 none, 1 critical). Default 0.1 (0 with
    /// backward Euler).
    pub damping: f64,
    /// Frequency (Hz) of the lowest mode; when set, Young's modulus is rescaled to it. Default
    /// none (the material as given).
    pub frequency: Option<f64>,
    /// Elastic reference: the rig pose (default) or the bind shape (default with backward Euler).
    pub rest: RestShape,
    /// Per-vertex multiplier of Young's modulus (`n` values > 0). Default uniform.
    pub stiffness: Option<Vec<f64>>,
    /// Per-vertex material share of an embedding lattice ([`SolverParams::fill`]: the mass and
    /// stiffness of the cubes the surface crosses scaled to the part inside the body), set by
    /// the character builder. `None` (default): the mesh is the body.
    pub fill: Option<Vec<f64>>,
    /// Physics seconds per animation second (> 0). Default 1; 2 makes the jiggle twice as fast.
    pub time_scale: f64,
    /// Seconds the rig is held at the first pose before the first frame (≥ 0), so the body
    /// settles (gravity, a bind-rest offset) before the shot starts. Default 0.
    pub preroll: f64,
    /// Multiplier of the output displacement (≥ 0). Default 1.
    pub strength: f64,
    /// A rig jump between two frames larger than this fraction of the body's bounding-box
    /// diagonal resets the simulation at the new pose; `None` never. Default 0.5 (`None` with
    /// backward Euler).
    pub cut_distance: Option<f64>,
    /// Largest displacement shown, as a fraction of the body's bounding-box diagonal: a frame
    /// whose largest vertex displacement exceeds it is scaled down as a whole
    /// ([`crate::rig::limit_displacement`]); the simulation is not changed. `None` (default): no
    /// limit.
    pub max_displacement: Option<f64>,
}

impl Default for SceneDynamics {
    fn default() -> Self {
        Self {
            integrator: Integrator::ImplicitMidpoint,
            substeps: None,
            damping: DEFAULT_DAMPING,
            frequency: None,
            rest: RestShape::Rig,
            stiffness: None,
            fill: None,
            time_scale: 1.0,
            preroll: 0.0,
            strength: 1.0,
            cut_distance: Some(DEFAULT_CUT_DISTANCE),
            max_displacement: None,
        }
    }
}

impl SceneDynamics {
    /// The seed tutorials' scheme: one backward-Euler step per frame, no damping, bind rest,
    /// no cut detection.
    pub fn seed() -> Self {
        Self::for_integrator(Integrator::BackwardEuler)
    }

    /// The defaults that go with an integrator (backward Euler: the seeds').
    pub fn for_integrator(integrator: Integrator) -> Self {
        match integrator {
            Integrator::BackwardEuler => Self {
                integrator,
                substeps: Some(1),
                damping: 0.0,
                rest: RestShape::Bind,
                cut_distance: None,
                ..Self::default()
            },
            Integrator::ImplicitMidpoint => Self::default(),
        }
    }

    /// Checks every range; `n_vertices` sizes the stiffness field.
    pub fn validate(&self, n_vertices: usize) -> Result<()> {
        let positive = |name: &str, v: f64| -> Result<()> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(OvertoneError::setting(name, v, "must be a finite number > 0"))
            }
        };
        let non_negative = |name: &str, v: f64| -> Result<()> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(OvertoneError::setting(name, v, "must be a finite number >= 0"))
            }
        };
        positive("time_scale", self.time_scale)?;
        non_negative("preroll", self.preroll)?;
        if self.preroll > 60.0 {
            return Err(OvertoneError::setting(
                "preroll",
                self.preroll,
                "must be at most 60 seconds",
            ));
        }
        non_negative("strength", self.strength)?;
        if let Some(c) = self.cut_distance {
            positive("cut_distance", c)?;
        }
        if let Some(c) = self.max_displacement {
            positive("max_displacement", c)?;
        }
        for (name, field) in [("fill", &self.fill), ("stiffness", &self.stiffness)] {
            if let Some(f) = field.as_ref().filter(|f| f.len() != n_vertices) {
                return Err(OvertoneError::size(
                    name,
                    format!("{n_vertices} values (one per vertex)"),
                    f.len(),
                ));
            }
        }
        if let Some(s) = self.substeps {
            if s == 0 || s > MAX_SUBSTEPS {
                return Err(OvertoneError::setting(
                    "substeps",
                    s,
                    format!("must be between 1 and {MAX_SUBSTEPS}"),
                ));
            }
        }
        self.solver_params(1.0, 1, None, Vec::new()).validate(3)
    }

    /// The solver settings for frames of `dt` seconds (scaled by the time scale).
    pub fn solver_params(&self, dt: f64, iterations: usize, tolerance: Option<f64>, gravity: Vec<f64>) -> SolverParams {
        SolverParams {
            dt: dt * self.time_scale,
            iterations,
            tolerance,
            gravity,
            integrator: self.integrator,
            substeps: match self.integrator {
                Integrator::BackwardEuler => Some(1),
                Integrator::ImplicitMidpoint => self.substeps,
            },
            damping: self.damping,
            frequency: self.frequency,
            rest: self.rest,
            stiffness: self.stiffness.clone().unwrap_or_default(),
            fill: self.fill.clone().unwrap_or_default(),
        }
    }
}

/// Dynamics settings given explicitly (scene-file keys or command-line flags); absent ones
/// keep their value. Names are the scene keys.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamicsKeys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substeps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<Vec<f64>>,
    /// Per-vertex material shares of an embedding lattice (written by `export` for characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preroll: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
    /// A number (fraction of the body's diagonal) or 0 to switch cut detection off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_distance: Option<f64>,
    /// A number (fraction of the body's diagonal) or 0 for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_displacement: Option<f64>,
}

impl DynamicsKeys {
    /// Applies the given keys onto `base`. A given `integrator` first resets the settings that
    /// go with it ([`SceneDynamics::for_integrator`]: damping, rest, substeps, cut distance)
    /// and keeps the rest of `base`; every other given key then overrides.
    pub fn apply(&self, base: &SceneDynamics) -> Result<SceneDynamics> {
        let mut out = base.clone();
        if let Some(name) = &self.integrator {
            let fresh = SceneDynamics::for_integrator(Integrator::parse(name)?);
            out.integrator = fresh.integrator;
            out.damping = fresh.damping;
            out.rest = fresh.rest;
            out.substeps = fresh.substeps;
            out.cut_distance = fresh.cut_distance;
        }
        if let Some(s) = self.substeps {
            out.substeps = Some(s);
        }
        if let Some(z) = self.damping {
            out.damping = z;
        }
        if let Some(f) = self.frequency {
            // 0 switches the rescaling off: Young's modulus as given.
            out.frequency = (f != 0.0).then_some(f);
        }
        if let Some(r) = &self.rest {
            out.rest = RestShape::parse(r)?;
        }
        if let Some(s) = &self.stiffness {
            out.stiffness = Some(s.clone());
        }
        if let Some(f) = &self.fill {
            out.fill = Some(f.clone());
        }
        if let Some(t) = self.time_scale {
            out.time_scale = t;
        }
        if let Some(p) = self.preroll {
            out.preroll = p;
        }
        if let Some(s) = self.strength {
            out.strength = s;
        }
        if let Some(c) = self.cut_distance {
            out.cut_distance = (c != 0.0).then_some(c);
        }
        if let Some(c) = self.max_displacement {
            out.max_displacement = (c != 0.0).then_some(c);
        }
        Ok(out)
    }

    /// The keys that reproduce `dy` from the defaults (for writing scene files).
    pub fn of(dy: &SceneDynamics) -> Self {
        Self {
            integrator: Some(dy.integrator.name().into()),
            substeps: dy.substeps,
            damping: Some(dy.damping),
            frequency: dy.frequency,
            rest: Some(dy.rest.name().into()),
            stiffness: dy.stiffness.clone(),
            fill: dy.fill.clone(),
            time_scale: Some(dy.time_scale),
            preroll: Some(dy.preroll),
            strength: Some(dy.strength),
            cut_distance: Some(dy.cut_distance.unwrap_or(0.0)),
            max_displacement: dy.max_displacement,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backward_euler_brings_the_seed_defaults_and_keys_override_them() {
        let keys = DynamicsKeys {
            integrator: Some("backward-euler".into()),
            ..Default::default()
        };
        assert_eq!(keys.apply(&SceneDynamics::default()).unwrap(), SceneDynamics::seed());
        let keys = DynamicsKeys {
            integrator: Some("backward_euler".into()),
            damping: Some(0.3),
            cut_distance: Some(0.0),
            ..Default::default()
        };
        let d = keys.apply(&SceneDynamics::default()).unwrap();
        assert_eq!((d.damping, d.rest, d.cut_distance), (0.3, RestShape::Bind, None));
        let bad = DynamicsKeys {
            rest: Some("pose".into()),
            ..Default::default()
        };
        assert!(bad.apply(&SceneDynamics::default()).is_err());
        let round = DynamicsKeys::of(&d).apply(&SceneDynamics::default()).unwrap();
        assert_eq!(round, d);
    }

    /// `frequency` 0 (the hosts' "none") switches a frequency off; a positive one sets it; a
    /// negative one is applied and then refused by validation.
    #[test]
    fn frequency_zero_means_youngs_modulus_as_given() {
        let base = SceneDynamics {
            frequency: Some(6.0),
            ..SceneDynamics::default()
        };
        let with = |f: f64| {
            DynamicsKeys {
                frequency: Some(f),
                ..Default::default()
            }
            .apply(&base)
            .unwrap()
        };
        assert_eq!(with(0.0).frequency, None);
        assert_eq!(with(2.5).frequency, Some(2.5));
        assert!(with(-1.0).validate(1).is_err());
    }
}
