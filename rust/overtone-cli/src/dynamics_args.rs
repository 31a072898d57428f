//! The dynamics flags shared by `run` and `bake` (the scene keys of the same names).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use overtone::scene::{scene_rows, DynamicsKeys, Scene};
use overtone::settings::Spec;

/// The dynamics flags: one per scene row of the settings table (`--damping`, `--cut-distance`,
/// ...; built from [`overtone::scene::scene_rows`], help text, range and default included),
/// plus the per-vertex stiffness field and gravity.
#[derive(Args, Clone, Debug, Default)]
pub struct DynamicsArgs {
    #[command(flatten)]
    pub table: TableFlags,
    /// Per-vertex multiplier of Young's modulus: a JSON array or a one-column .dmat (one value
    /// per vertex of the input mesh).
    #[arg(long)]
    pub stiffness: Option<PathBuf>,
    /// Gravity `x,y,z` in the input's world units/s² (glTF: +Y up, e.g. `0,-9.81,0`).
    #[arg(long, allow_hyphen_values = true)]
    pub gravity: Option<String>,
}

/// The flags of the settings table's scene rows, as given (text, parsed by the table when
/// applied).
#[derive(Clone, Debug, Default)]
pub struct TableFlags {
    /// `(row name, text)` of every flag given.
    pub given: Vec<(&'static str, String)>,
}

/// The help line of a scene row: its doc line, range, unit, unset meaning and default.
fn help(spec: &'static Spec) -> String {
    let mut h = spec.doc.trim().to_string();
    let range = spec.range_text();
    if !range.is_empty() || !spec.unit.is_empty() {
        h += &format!(
            " [{}{}{}]",
            range,
            if range.is_empty() || spec.unit.is_empty() {
                ""
            } else {
                " "
            },
            spec.unit
        );
    }
    if !spec.choices().is_empty() {
        h += &format!(
            " One of: {}.",
            spec.choices().iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
        );
    }
    if spec.kind.optional {
        let (word, meaning) = spec.unset.split_once(':').unwrap_or((spec.unset, ""));
        h += &match meaning.trim() {
            "" => format!(" `{}` switches it off.", word.trim()),
            m => format!(" `{}`: {m}.", word.trim()),
        };
    }
    h + &format!(" Default: {}.", spec.format(&spec.default_value()))
}

impl clap::FromArgMatches for TableFlags {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self::default();
        flags.update_from_arg_matches(m)?;
        Ok(flags)
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for spec in scene_rows() {
            if let Some(text) = m.get_one::<String>(spec.name) {
                self.given.retain(|(n, _)| *n != spec.name);
                self.given.push((spec.name, text.clone()));
            }
        }
        Ok(())
    }
}

impl clap::Args for TableFlags {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for spec in scene_rows() {
            // A handful of flag names, made once per process.
            let long: &'static str = Box::leak(spec.flag().into_boxed_str());
            cmd = cmd.arg(
                clap::Arg::new(spec.name)
                    .long(long)
                    .value_name("VALUE")
                    .allow_hyphen_values(true)
                    .help(help(spec)),
            );
        }
        cmd
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
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
    /// The keys given on the command line, parsed and range-checked by the settings table (the
    /// stiffness field is handled by the caller, per vertex of its mesh).
    pub fn keys(&self) -> Result<DynamicsKeys> {
        let mut keys = DynamicsKeys::default();
        for (name, text) in &self.table.given {
            keys.set_text(name, text)
                .with_context(|| format!("--{} {text}", name.replace('_', "-")))?;
        }
        Ok(keys)
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
    /// dynamics keys, a stiffness field per scene vertex, and gravity (into the scene's
    /// normalised frame when its positions were moved from the file's).
    pub fn apply_to_scene(&self, sc: &mut Scene) -> Result<()> {
        sc.dynamics = self.keys()?.apply(&sc.dynamics)?;
        if let Some(p) = &self.stiffness {
            sc.dynamics.stiffness = Some(read_field(p, "stiffness")?);
        }
        if let Some(g) = self.gravity(sc.mesh.dim())? {
            sc.gravity = match &sc.normalisation {
                Some(n) => n.vector_to_scene(&g),
                None => g,
            };
        }
        sc.validate()?;
        Ok(())
    }
}
