//! What the settings table says about one setting: its type, unit, range, default, the hosts'
//! label and whether changing it changes the precompute or may be animated.

use crate::dynamics::{Integrator, RestShape};
use crate::error::{OvertoneError, Result};

/// The value type of a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// A finite `f64`.
    F64,
    /// A count (`usize`).
    Count,
    /// A switch.
    Bool,
    /// Three finite `f64` (a vector in the host's world frame).
    Vec3,
    /// One of a fixed list of named choices.
    Choice(&'static [ChoiceSpec]),
}

/// A setting's type: its [`Base`], and whether it may be unset ("automatic" or "none", said by
/// [`Spec::unset`]). An optional setting crosses the C ABI as a `use_<name>` flag beside the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    pub base: Base,
    pub optional: bool,
}

/// One named choice of a [`Base::Choice`] setting; `value` is its code across the C ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChoiceSpec {
    /// The scene-file / CLI name (`implicit_midpoint`).
    pub name: &'static str,
    /// The hosts' label (`Implicit Midpoint`).
    pub label: &'static str,
    /// One line for a tooltip.
    pub doc: &'static str,
}

/// Where a setting sits in a host's panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The art-direction controls (material, damping, strength, timing).
    Motion,
    /// Solver internals (solver, modes, clusters, lattice, integrator, substeps).
    Solver,
    /// Filled by the host from its own scene (frame rate, gravity), not a user property.
    Host,
}

/// A value of any setting (what the CLI parses, the scene file holds and the docs print).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    F64(f64),
    Count(usize),
    Bool(bool),
    Vec3([f64; 3]),
    /// The index into the setting's choices.
    Choice(usize),
    /// An optional setting left unset (automatic / none).
    Unset,
}

/// One row of the settings table ([`super::SETTINGS`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// The field name: the Rust field, the C/C++/Python field, the scene-file key, the Blender
    /// property and the Maya attribute long name; the CLI flag is it with `-` for `_`.
    pub name: &'static str,
    /// The hosts' label (`Young's Modulus`).
    pub label: &'static str,
    /// The Rust type as written in the table (`f64`, `Option<usize>`, `Integrator`): a choice
    /// setting's mirrors take its name.
    pub rust_type: &'static str,
    /// The Maya attribute's short name (unique across the table).
    pub short: &'static str,
    /// The doc line (from the field's doc comment): what the setting does, for a tooltip.
    pub doc: &'static str,
    /// The unit of the value (`Pa`, `Hz`, `s`, `fraction of the body's diagonal`, or empty).
    pub unit: &'static str,
    pub kind: Kind,
    /// Inclusive lower bound, or exclusive where `min_exclusive`.
    pub min: Option<f64>,
    pub min_exclusive: bool,
    /// Inclusive upper bound, or exclusive where `max_exclusive`.
    pub max: Option<f64>,
    pub max_exclusive: bool,
    /// The range a host's slider spans (a value beyond it may still be typed in).
    pub soft_min: Option<f64>,
    pub soft_max: Option<f64>,
    /// What an unset optional setting means ("automatic: ..."), empty for a required one.
    pub unset: &'static str,
    /// The number a host shows beside an optional setting that is unset (its "use" switch
    /// off): where a user starts from when switching it on.
    pub unset_value: f64,
    pub group: Group,
    /// Changing it changes the precompute (a new bind; the sidecar key covers it).
    pub precompute: bool,
    /// A host may animate it: the deformer applies it per frame without a rebind
    /// ([`crate::deformer::SurfaceDeformer::set_controls`]).
    pub animatable: bool,
    /// A scene row: a key of a scene file (`"damping": 0.3`) and a flag of the command line's
    /// `run` and `bake` (`--damping 0.3`), held by [`crate::scene::SceneDynamics`].
    pub scene: bool,
}

impl Spec {
    /// The fields every row starts from (the table overrides what differs).
    pub(crate) const BASE: Spec = Spec {
        name: "",
        label: "",
        rust_type: "",
        short: "",
        doc: "",
        unit: "",
        kind: Kind {
            base: Base::F64,
            optional: false,
        },
        min: None,
        min_exclusive: false,
        max: None,
        max_exclusive: false,
        soft_min: None,
        soft_max: None,
        unset: "",
        unset_value: 0.0,
        group: Group::Motion,
        precompute: false,
        animatable: false,
        scene: false,
    };

    /// The command-line flag (`--time-scale`), without the dashes.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// The default value (from [`super::Settings::default`]).
    pub fn default_value(&self) -> Value {
        super::Settings::default()
            .value(self.name)
            .expect("every row of the table is a field of Settings")
    }

    /// The choices of a choice setting (empty otherwise).
    pub fn choices(&self) -> &'static [ChoiceSpec] {
        match self.kind.base {
            Base::Choice(c) => c,
            _ => &[],
        }
    }

    /// The range as text for a TD (`> 0`, `0 to 60`, `in (-1, 0.5)`), empty when unbounded.
    pub fn range_text(&self) -> String {
        let num = |x: f64| format_number(x);
        match (self.min, self.max) {
            (Some(a), Some(b)) if !self.min_exclusive && !self.max_exclusive => format!("{} to {}", num(a), num(b)),
            (Some(a), Some(b)) => format!(
                "in {}{}, {}{}",
                if self.min_exclusive { "(" } else { "[" },
                num(a),
                num(b),
                if self.max_exclusive { ")" } else { "]" }
            ),
            (Some(a), None) => format!("{} {}", if self.min_exclusive { ">" } else { ">=" }, num(a)),
            (None, Some(b)) => format!("{} {}", if self.max_exclusive { "<" } else { "<=" }, num(b)),
            (None, None) => String::new(),
        }
    }

    /// Checks a number against the range (and finiteness); the error names the setting.
    pub(crate) fn check_number(&self, x: f64) -> Result<()> {
        let ok = x.is_finite()
            && self.min.is_none_or(|a| if self.min_exclusive { x > a } else { x >= a })
            && self.max.is_none_or(|b| if self.max_exclusive { x < b } else { x <= b });
        if ok {
            return Ok(());
        }
        let range = self.range_text();
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.unit)
        };
        Err(OvertoneError::setting(
            self.name,
            x,
            if range.is_empty() {
                format!("must be a finite number{unit}")
            } else {
                format!("must be a finite number {range}{unit}")
            },
        ))
    }

    /// Checks a value of this setting's kind against the range.
    pub fn check(&self, v: &Value) -> Result<()> {
        match *v {
            Value::F64(x) => self.check_number(x),
            Value::Count(n) => self.check_number(n as f64),
            Value::Vec3(g) => match g.iter().find(|x| !x.is_finite()) {
                None => Ok(()),
                Some(x) => Err(OvertoneError::setting(self.name, x, "every component must be finite")),
            },
            Value::Bool(_) => Ok(()),
            Value::Choice(i) if i < self.choices().len() => Ok(()),
            Value::Choice(i) => Err(OvertoneError::setting(
                self.name,
                i,
                format!(
                    "choose one of {}",
                    self.choices()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| format!("{i} ({})", c.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            Value::Unset if self.kind.optional => Ok(()),
            Value::Unset => Err(OvertoneError::setting(self.name, "unset", "this setting needs a value")),
        }
    }

    /// The value as text (`0.1`, `automatic`, `implicit_midpoint`, `0,0,-9.81`), as the CLI
    /// takes it and the docs print it.
    pub fn format(&self, v: &Value) -> String {
        match *v {
            Value::F64(x) => format_number(x),
            Value::Count(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Vec3(g) => g.iter().map(|x| format_number(*x)).collect::<Vec<_>>().join(","),
            Value::Choice(i) => self.choices().get(i).map_or("?", |c| c.name).to_string(),
            Value::Unset => self.unset.split(':').next().unwrap_or("unset").trim().to_string(),
        }
    }

    /// Parses the text form ([`format`](Self::format)); `auto`/`automatic`/`none` (or the
    /// first word of [`unset`](Self::unset)) leave an optional setting unset. Checks the range.
    pub fn parse(&self, text: &str) -> Result<Value> {
        let t = text.trim();
        let bad = |why: String| OvertoneError::setting(self.name, t, why);
        if self.kind.optional && (["auto", "automatic", "none", "off"].contains(&t) || t == self.format(&Value::Unset))
        {
            return Ok(Value::Unset);
        }
        let v = match self.kind.base {
            Base::F64 => Value::F64(t.parse().map_err(|_| bad("expected a number".into()))?),
            Base::Count => Value::Count(t.parse().map_err(|_| bad("expected a whole number >= 0".into()))?),
            Base::Bool => Value::Bool(t.parse().map_err(|_| bad("expected true or false".into()))?),
            Base::Vec3 => {
                let v: Vec<f64> = t
                    .split(',')
                    .map(|s| s.trim().parse::<f64>())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| bad("expected three comma-separated numbers".into()))?;
                let g: [f64; 3] = v
                    .try_into()
                    .map_err(|_| bad("expected three comma-separated numbers".into()))?;
                Value::Vec3(g)
            }
            Base::Choice(c) => {
                let key = t.replace('-', "_");
                Value::Choice(c.iter().position(|c| c.name == key).ok_or_else(|| {
                    bad(format!(
                        "choose {}",
                        c.iter().map(|c| c.name).collect::<Vec<_>>().join(" or ")
                    ))
                })?)
            }
        };
        self.check(&v)?;
        Ok(v)
    }
}

/// Shortest text that reads back as `x` (`0.1`, `25000`, `1e-12`).
pub(crate) fn format_number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A Rust type a setting can have.
pub trait SettingValue: Sized {
    const KIND: Kind;
    fn to_value(&self) -> Value;
    /// `None` when `v` is not of this type.
    fn from_value(v: &Value) -> Option<Self>;
}

const fn required(base: Base) -> Kind {
    Kind { base, optional: false }
}

impl SettingValue for f64 {
    const KIND: Kind = required(Base::F64);
    fn to_value(&self) -> Value {
        Value::F64(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match *v {
            Value::F64(x) => Some(x),
            Value::Count(n) => Some(n as f64),
            _ => None,
        }
    }
}

impl SettingValue for usize {
    const KIND: Kind = required(Base::Count);
    fn to_value(&self) -> Value {
        Value::Count(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match *v {
            Value::Count(n) => Some(n),
            _ => None,
        }
    }
}

impl SettingValue for bool {
    const KIND: Kind = required(Base::Bool);
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match *v {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

impl SettingValue for [f64; 3] {
    const KIND: Kind = required(Base::Vec3);
    fn to_value(&self) -> Value {
        Value::Vec3(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match *v {
            Value::Vec3(g) => Some(g),
            _ => None,
        }
    }
}

impl<T: SettingValue> SettingValue for Option<T> {
    const KIND: Kind = Kind {
        base: T::KIND.base,
        optional: true,
    };
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Unset, T::to_value)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Unset => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// A choice setting's Rust enum: its variants in [`SettingValue::KIND`]'s choice order.
macro_rules! choice_setting {
    ($ty:ty { $($variant:path => $name:literal, $label:literal, $doc:literal;)* }) => {
        impl SettingValue for $ty {
            const KIND: Kind = required(Base::Choice(&[$(ChoiceSpec { name: $name, label: $label, doc: $doc }),*]));
            fn to_value(&self) -> Value {
                let all = [$($variant),*];
                Value::Choice(all.iter().position(|x| x == self).expect("every variant is listed"))
            }
            fn from_value(v: &Value) -> Option<Self> {
                match *v {
                    Value::Choice(i) => [$($variant),*].get(i).copied(),
                    _ => None,
                }
            }
        }
    };
}

choice_setting!(Integrator {
    Integrator::ImplicitMidpoint => "implicit_midpoint", "Implicit Midpoint",
        "Substepped, second order, no numerical damping: the look does not depend on the frame rate";
    Integrator::BackwardEuler => "backward_euler", "Backward Euler",
        "One step per frame (the seeds' scheme): damps the motion more at low frame rates";
});

choice_setting!(RestShape {
    RestShape::Rig => "rig", "Rig Pose", "The skinned pose is the elastic reference: a held pose shows no jiggle";
    RestShape::Bind => "bind", "Bind Shape",
        "The bind shape is the reference (the paper's): physics may reshape a bad pose and keep an offset";
});

/// Which solver runs the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Solver {
    /// The reduced solver (skinning eigenmodes and rotation clusters): real time.
    Fast,
    /// The full-order solver on every lattice vertex: slower, the reference.
    Full,
}

choice_setting!(Solver {
    Solver::Fast => "fast", "Fast", "Reduced solver (skinning eigenmodes and rotation clusters): real time";
    Solver::Full => "full", "Full", "Full-order solver on every lattice vertex: slower, the reference";
});
