//! The art-direction controls of a scene's simulation (integrator, damping, rest shape,
//! stiffness, time scale, pre-roll, strength, cut detection) and their defaults.

use crate::dynamics::{Integrator, RestShape, SolverParams, DEFAULT_DAMPING};
use crate::error::{OvertoneError, Result};
use crate::settings::{SettingValue, Settings, Spec, Value, SETTINGS};

/// Default cut threshold: a rig jump between two frames larger than this fraction of the
/// body's bounding-box diagonal restarts the simulation there (a camera cut or a teleport,
/// not a motion: a sprint at 24 fps moves a body by about a tenth of its diagonal per frame).
pub(crate) const DEFAULT_CUT_DISTANCE: f64 = 0.5;

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
    pub(crate) fn for_integrator(integrator: Integrator) -> Self {
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

    /// Checks every range against the settings table (the scene rows, [`Spec::scene`]) and
    /// the per-vertex fields; `n_vertices` sizes them.
    pub fn validate(&self, n_vertices: usize) -> Result<()> {
        let mut s = Settings::default();
        self.write_settings(&mut s);
        for spec in scene_rows() {
            spec.check(&s.value(spec.name).expect("every row is a field of Settings"))?;
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
        self.solver_params(1.0, Vec::new()).validate(3)
    }

    /// The scene rows of settings `s` ([`Spec::scene`]), without per-vertex fields.
    pub(crate) fn from_settings(s: &Settings) -> Self {
        Self {
            integrator: s.integrator,
            substeps: s.substeps,
            damping: s.damping,
            frequency: s.frequency,
            rest: s.rest,
            stiffness: None,
            fill: None,
            time_scale: s.time_scale,
            preroll: s.preroll,
            strength: s.strength,
            cut_distance: s.cut_distance,
            max_displacement: s.max_displacement,
        }
    }

    /// Writes the scene rows into `s` (the inverse of [`from_settings`](Self::from_settings)).
    pub(crate) fn write_settings(&self, s: &mut Settings) {
        s.integrator = self.integrator;
        s.substeps = self.substeps;
        s.damping = self.damping;
        s.frequency = self.frequency;
        s.rest = self.rest;
        s.time_scale = self.time_scale;
        s.preroll = self.preroll;
        s.strength = self.strength;
        s.cut_distance = self.cut_distance;
        s.max_displacement = self.max_displacement;
    }

    /// The solver settings for frames of `dt` seconds (scaled by the time scale).
    pub(crate) fn solver_params(&self, dt: f64, gravity: Vec<f64>) -> SolverParams {
        SolverParams {
            dt: dt * self.time_scale,
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

/// The rows of the settings table a scene file holds as keys and `run`/`bake` take as flags
/// ([`Spec::scene`]).
pub fn scene_rows() -> impl Iterator<Item = &'static Spec> {
    SETTINGS.iter().filter(|s| s.scene)
}

/// Dynamics keys given by a scene file or on the command line: values of the settings table's
/// scene rows ([`scene_rows`]), by name, and the per-vertex fields. What is not given keeps
/// the base's value ([`apply`](Self::apply)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DynamicsKeys {
    /// `(row name, value)` of every given scene row, each name once, in the order given.
    pub values: Vec<(&'static str, Value)>,
    /// Per-vertex multiplier of Young's modulus.
    pub stiffness: Option<Vec<f64>>,
    /// Per-vertex material shares of an embedding lattice (written by `export` for characters).
    pub fill: Option<Vec<f64>>,
}

impl DynamicsKeys {
    /// Sets scene row `name` from its text form ([`Spec::parse`]: `0.3`, `implicit_midpoint`,
    /// `automatic`, `never`), checking its range. For the optional rows whose range excludes
    /// 0 (frequency, cut distance, max displacement), `0` also reads as unset: the spelling of
    /// earlier scene files and command lines. Refuses a name that is not a scene row.
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<()> {
        let spec = scene_rows().find(|s| s.name == name).ok_or_else(|| {
            OvertoneError::setting(
                name,
                text,
                format!(
                    "not a scene dynamics key; the keys are {}, stiffness and fill",
                    scene_rows().map(|s| s.name).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let legacy_off =
            spec.kind.optional && spec.min == Some(0.0) && spec.min_exclusive && text.trim().parse::<f64>() == Ok(0.0);
        let value = if legacy_off { Value::Unset } else { spec.parse(text)? };
        self.values.retain(|(n, _)| *n != spec.name);
        self.values.push((spec.name, value));
        Ok(())
    }

    /// The value given for scene row `name`, if any.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// Applies the given keys onto `base`. A given `integrator` first resets the settings that
    /// go with it ([`SceneDynamics::for_integrator`]: damping, rest, substeps, cut distance)
    /// and keeps the rest of `base`; every other given key then overrides.
    pub fn apply(&self, base: &SceneDynamics) -> Result<SceneDynamics> {
        let mut s = Settings::default();
        base.write_settings(&mut s);
        if let Some(integrator) = self.get("integrator").and_then(|v| Integrator::from_value(&v)) {
            let fresh = SceneDynamics::for_integrator(integrator);
            s.integrator = fresh.integrator;
            s.damping = fresh.damping;
            s.rest = fresh.rest;
            s.substeps = fresh.substeps;
            s.cut_distance = fresh.cut_distance;
        }
        for (name, v) in &self.values {
            s.set(name, v)?;
        }
        Ok(SceneDynamics {
            stiffness: self.stiffness.clone().or_else(|| base.stiffness.clone()),
            fill: self.fill.clone().or_else(|| base.fill.clone()),
            ..SceneDynamics::from_settings(&s)
        })
    }

    /// The keys that reproduce `dy` from the defaults (for writing scene files): every scene
    /// row, and the fields `dy` has.
    pub fn of(dy: &SceneDynamics) -> Self {
        let mut s = Settings::default();
        dy.write_settings(&mut s);
        Self {
            values: scene_rows()
                .map(|spec| (spec.name, s.value(spec.name).expect("every row is a field of Settings")))
                .collect(),
            stiffness: dy.stiffness.clone(),
            fill: dy.fill.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backward_euler_brings_the_seed_defaults_and_keys_override_them() {
        let mut keys = DynamicsKeys::default();
        keys.set_text("integrator", "backward-euler").unwrap();
        assert_eq!(keys.apply(&SceneDynamics::default()).unwrap(), SceneDynamics::seed());
        // Keys given after the integrator override its defaults, in any order.
        let mut keys = DynamicsKeys::default();
        keys.set_text("damping", "0.3").unwrap();
        keys.set_text("integrator", "backward_euler").unwrap();
        keys.set_text("cut_distance", "never").unwrap();
        let d = keys.apply(&SceneDynamics::default()).unwrap();
        assert_eq!((d.damping, d.rest, d.cut_distance), (0.3, RestShape::Bind, None));
        let mut bad = DynamicsKeys::default();
        assert!(bad.set_text("rest", "pose").is_err());
        assert!(bad.set_text("modes", "4").is_err(), "a setting that is not a scene key");
        assert!(bad.set_text("damping", "-0.1").is_err());
        assert_eq!(bad, DynamicsKeys::default(), "a refused key changes nothing");
        let round = DynamicsKeys::of(&d).apply(&SceneDynamics::default()).unwrap();
        assert_eq!(round, d);
    }

    /// `frequency` `none` (or the earlier spelling 0) switches a frequency off; a positive one
    /// sets it; a negative one is refused.
    #[test]
    fn frequency_zero_means_youngs_modulus_as_given() {
        let base = SceneDynamics {
            frequency: Some(6.0),
            ..SceneDynamics::default()
        };
        let with = |f: &str| {
            let mut k = DynamicsKeys::default();
            k.set_text("frequency", f)?;
            k.apply(&base)
        };
        assert_eq!(with("0").unwrap().frequency, None);
        assert_eq!(with("none").unwrap().frequency, None);
        assert_eq!(with("2.5").unwrap().frequency, Some(2.5));
        assert!(with("-1").is_err());
    }
}
