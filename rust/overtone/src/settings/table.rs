//! The settings table: every setting a host or the command line can give, declared once.
//!
//! Each row declares a field of [`Settings`] (name, Rust type, default, doc comment) and its
//! [`Spec`] (label, unit, range, group, whether it changes the precompute, whether a host may
//! animate it). Everything else is derived from it: the struct, [`SETTINGS`], validation, the
//! command-line flags and scene keys (by name), and, by `overtone-ffi`'s generator, the cxx, C,
//! C++, Python, Blender and Maya mirrors and the docs' settings page. Adding a setting is one row
//! here plus its physics.

use serde::{Deserialize, Serialize};

use super::spec::{Group, SettingValue, Solver, Spec, Value};
use crate::dynamics::{Integrator, RestShape};
use crate::error::{OvertoneError, Result};

macro_rules! settings_table {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident : $ty:ty = $default:expr, Spec { $($key:ident : $val:expr),* $(,)? };
    )*) => {
        /// Every setting of a deformer, as hosts and the command line give them (units, ranges
        /// and defaults in [`SETTINGS`]; `None` is the "automatic"/"none" a row's `unset` states).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct Settings {
            $( $(#[doc = $doc])+ pub $name: $ty, )*
        }

        impl Default for Settings {
            fn default() -> Self {
                Self { $( $name: $default, )* }
            }
        }

        /// The table, in the order of [`Settings`]' fields (the order of every mirror).
        pub static SETTINGS: &[Spec] = &[
            $( Spec {
                name: stringify!($name),
                rust_type: stringify!($ty),
                doc: concat!($($doc),+),
                kind: <$ty as SettingValue>::KIND,
                $($key: $val,)*
                ..Spec::BASE
            }, )*
        ];

        impl Settings {
            /// The value of setting `name` (`None` for a name not in the table).
            pub fn value(&self, name: &str) -> Option<Value> {
                match name {
                    $( stringify!($name) => Some(self.$name.to_value()), )*
                    _ => None,
                }
            }

            /// Sets setting `name` to `v` after checking its type and range; on error nothing
            /// changes.
            pub fn set(&mut self, name: &str, v: &Value) -> Result<()> {
                let spec = spec(name)?;
                spec.check(v)?;
                match name {
                    $( stringify!($name) => {
                        self.$name = <$ty as SettingValue>::from_value(v).ok_or_else(|| {
                            OvertoneError::setting(name, spec.format(v), "this value is of another type")
                        })?;
                    } )*
                    _ => unreachable!("spec() found the name"),
                }
                Ok(())
            }
        }
    };
}

settings_table! {
    /// Young's modulus: lower is jigglier. In the body's normalised frame (longest half-extent
    /// 1), so the same value means the same material on a body of any size and unit. Used as
    /// given only without a frequency; with one it is rescaled so the lowest mode rings at it.
    youngs_modulus: f64 = 2.5e4, Spec {
        label: "Young's Modulus", short: "ym", unit: "Pa", min: Some(0.0), min_exclusive: true,
        soft_min: Some(1e2), soft_max: Some(1e8), precompute: true,
    };
    /// Poisson ratio: volume preservation (ARAP uses only the shear modulus E/(2(1+ν))).
    poisson_ratio: f64 = 0.4, Spec {
        label: "Poisson Ratio", short: "pr", min: Some(-1.0), min_exclusive: true, max: Some(0.5),
        max_exclusive: true, soft_min: Some(0.0), soft_max: Some(0.49), precompute: true,
    };
    /// Mass density in the normalised frame.
    density: f64 = 1000.0, Spec {
        label: "Density", short: "den", unit: "kg/m³", min: Some(0.0), min_exclusive: true,
        soft_max: Some(1e4), precompute: true,
    };
    /// Jiggle frequency of the lowest mode: Young's modulus is rescaled to it at bind, so the
    /// same value gives a comparable jiggle on any character and with either solver.
    frequency: Option<f64> = Some(crate::dynamics::DEFAULT_FREQUENCY), Spec {
        label: "Frequency", short: "frq", unit: "Hz", min: Some(0.0), min_exclusive: true,
        soft_max: Some(20.0), unset_value: crate::dynamics::DEFAULT_FREQUENCY,
        unset: "none: Young's modulus as given", scene: true,
    };
    /// Damping ratio of the low jiggle modes: 0 rings on, 0.1 decays over a few swings, 1
    /// settles without swinging.
    damping: f64 = crate::dynamics::DEFAULT_DAMPING, Spec {
        label: "Damping", short: "dmp", min: Some(0.0), max: Some(10.0), soft_max: Some(1.0),
        animatable: true, scene: true,
    };
    /// Multiplier of the secondary motion (0 none, 2 twice).
    strength: f64 = 1.0, Spec {
        label: "Strength", short: "str", min: Some(0.0), soft_max: Some(3.0), animatable: true, scene: true,
    };
    /// Physics seconds per animation second: 2 jiggles twice as fast.
    time_scale: f64 = 1.0, Spec {
        label: "Time Scale", short: "tsc", min: Some(0.0), min_exclusive: true, soft_min: Some(0.1),
        soft_max: Some(4.0), scene: true,
    };
    /// Seconds the rig is held at the first pose before the first frame, so the body settles
    /// (gravity) before the shot starts.
    preroll: f64 = 0.0, Spec {
        label: "Pre-roll", short: "prl", unit: "s", min: Some(0.0), max: Some(60.0), scene: true,
    };
    /// A rig jump between two frames larger than this fraction of the body's bounding-box
    /// diagonal restarts the simulation there (a camera cut, a teleport).
    cut_distance: Option<f64> = Some(crate::scene::DEFAULT_CUT_DISTANCE), Spec {
        label: "Cut Distance", short: "cut", unit: "fraction of the body's diagonal", min: Some(0.0),
        min_exclusive: true, soft_max: Some(2.0), unset_value: 0.5, unset: "never", scene: true,
    };
    /// Largest displacement any vertex is shown with: a frame whose secondary motion exceeds it
    /// is scaled down as a whole (its shape kept) so a teleport or a violent move cannot fling
    /// the surface away. The simulation itself is not changed.
    max_displacement: Option<f64> = None, Spec {
        label: "Max Displacement", short: "mxd", unit: "fraction of the body's diagonal", min: Some(0.0),
        min_exclusive: true, soft_max: Some(0.5), unset_value: 0.1, unset: "none: no limit", scene: true,
    };
    /// The elastic reference shape.
    rest: RestShape = RestShape::Rig, Spec {
        label: "Rest Shape", short: "rst", scene: true,
    };
    /// Gravity in the host's world frame (0, 0, -9.81 in a Z-up scene in metres).
    gravity: [f64; 3] = [0.0; 3], Spec {
        label: "Gravity", short: "grv", unit: "world length units/s²", group: Group::Host,
    };
    /// Frames per second of the host's timeline: a frame advances 1/fps seconds. The default
    /// integrator steps on a fixed 240 Hz clock whatever the rate, so a host changes it without
    /// a new bind; backward Euler steps once per frame and binds anew.
    fps: f64 = 24.0, Spec {
        label: "Frame Rate", short: "fps", unit: "1/s", min: Some(0.0), min_exclusive: true,
        group: Group::Host,
    };
    /// The solver.
    solver: Solver = Solver::Fast, Spec {
        label: "Solver", short: "sol", group: Group::Solver, precompute: true,
    };
    /// Skinning eigenmodes of the fast solver.
    modes: Option<usize> = None, Spec {
        label: "Modes", short: "mod", min: Some(1.0), soft_max: Some(64.0), group: Group::Solver,
        precompute: true, unset_value: 16.0, unset: "automatic: 64 on a small body such as a prop or a tail, 16 otherwise",
    };
    /// Rotation clusters of the fast solver (at most the lattice's element count).
    clusters: usize = 100, Spec {
        label: "Clusters", short: "cls", min: Some(1.0), soft_max: Some(1000.0), group: Group::Solver,
        precompute: true,
    };
    /// Cells of the tetrahedral lattice along the body's longest side.
    lattice_resolution: Option<usize> = None, Spec {
        label: "Lattice Resolution", short: "lat", min: Some(2.0), soft_max: Some(128.0),
        group: Group::Solver, precompute: true,
        unset_value: 48.0, unset: "automatic: from the mesh, so thin limbs are four cells across",
    };
    /// The time integrator.
    integrator: Integrator = Integrator::ImplicitMidpoint, Spec {
        label: "Integrator", short: "int", group: Group::Solver, scene: true,
    };
    /// Solver steps per frame (implicit midpoint).
    substeps: Option<usize> = None, Spec {
        label: "Substeps", short: "sub", min: Some(1.0), max: Some(crate::dynamics::MAX_SUBSTEPS as f64),
        group: Group::Solver, unset_value: 8.0, unset: "automatic: from the frame rate and the stiffness (at most 1/120 s each)", scene: true,
    };
}

/// The row of setting `name`, or a setting error naming the known ones.
pub fn spec(name: &str) -> Result<&'static Spec> {
    SETTINGS.iter().find(|s| s.name == name).ok_or_else(|| {
        OvertoneError::setting(
            name,
            "?",
            format!(
                "no such setting; the settings are {}",
                SETTINGS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

impl Settings {
    /// Checks every setting against its row of the table.
    pub fn validate(&self) -> Result<()> {
        for s in SETTINGS {
            s.check(&self.value(s.name).expect("every row is a field"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row is a field, the defaults pass their own ranges, names (and Maya short names)
    /// are unique, and an optional row says what unset means.
    #[test]
    fn the_table_describes_every_field_once_and_the_defaults_are_valid() {
        let d = Settings::default();
        d.validate().unwrap();
        let mut names: Vec<_> = SETTINGS.iter().map(|s| s.name).collect();
        let mut shorts: Vec<_> = SETTINGS.iter().map(|s| s.short).collect();
        names.sort_unstable();
        shorts.sort_unstable();
        names.dedup();
        shorts.dedup();
        assert_eq!((names.len(), shorts.len()), (SETTINGS.len(), SETTINGS.len()));
        for s in SETTINGS {
            assert!(d.value(s.name).is_some(), "{}", s.name);
            assert_eq!(s.kind.optional, !s.unset.is_empty(), "{}", s.name);
            assert!(!s.label.is_empty() && !s.doc.trim().is_empty(), "{}", s.name);
        }
        // The serialised struct has exactly the table's fields.
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json.as_object().unwrap().len(), SETTINGS.len());
    }

    /// The text form reads back (numbers, choices with `-` or `_`, vectors, `auto` for an
    /// optional setting) and values outside a range or of another kind are refused by name.
    #[test]
    fn values_parse_format_and_are_checked_against_the_table() {
        let mut s = Settings::default();
        for (name, text) in [
            ("damping", "0.3"),
            ("integrator", "backward-euler"),
            ("substeps", "8"),
            ("substeps", "auto"),
            ("gravity", "0,-9.81,0"),
            ("max_displacement", "0.05"),
        ] {
            let spec = spec(name).unwrap();
            let v = spec.parse(text).unwrap();
            assert_eq!(spec.parse(&spec.format(&v)).unwrap(), v, "{name} {text}");
            s.set(name, &v).unwrap();
        }
        assert_eq!(s.damping, 0.3);
        assert_eq!(s.integrator, Integrator::BackwardEuler);
        assert_eq!(s.substeps, None);
        assert_eq!(s.gravity, [0.0, -9.81, 0.0]);
        assert_eq!(s.max_displacement, Some(0.05));
        for (name, text) in [
            ("damping", "-0.1"),
            ("poisson_ratio", "0.5"),
            ("substeps", "65"),
            ("integrator", "rk4"),
            ("damping", "auto"),
            ("gravity", "1,2"),
        ] {
            let e = spec(name).unwrap().parse(text).unwrap_err();
            assert!(e.to_string().contains(name), "{name} {text}: {e}");
        }
        let before = s.clone();
        assert!(s.set("damping", &Value::Choice(0)).is_err());
        assert!(s.set("integrator", &Value::Choice(9)).is_err());
        assert!(s.set("no_such_setting", &Value::F64(1.0)).is_err());
        assert_eq!(s, before, "a refused value changes nothing");
    }
}
