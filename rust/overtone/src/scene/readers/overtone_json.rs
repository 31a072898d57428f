//! Overtone's own scene format, `overtone-scene/1` (JSON).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::dynamics::Material;
use crate::error::{OvertoneError, Result};
use crate::io::write_atomically;
use crate::mesh::SimplexMesh;
use crate::scene::{DynamicsKeys, ElasticModel, Scene, SceneBlendshapes, SceneDynamics, SceneExamples};
use crate::settings::Value;
use crate::shape_matching::ManifoldScope;

/// The value of the `format` key.
pub const SCENE_FORMAT: &str = "overtone-scene/1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaterialFile {
    model: String,
    youngs_modulus: f64,
    poisson_ratio: f64,
    density: f64,
}

/// `"blendshapes"`: morph targets as extra rig columns.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlendshapesFile {
    /// Per target, per vertex, the rest-space offset (`T × n × d`).
    deltas: Vec<Vec<Vec<f64>>>,
    /// Per frame, the `T` target weights.
    weights: Vec<Vec<f64>>,
}

#[derive(Serialize, Deserialize)]
struct SceneFile {
    format: String,
    dim: usize,
    vertices: Vec<Vec<f64>>,
    elements: Vec<Vec<usize>>,
    weights: Vec<Vec<f64>>,
    frames: Vec<Vec<Vec<f64>>>,
    #[serde(rename = "D", default, skip_serializing_if = "Option::is_none")]
    d: Option<Vec<f64>>,
    material: MaterialFile,
    dt: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gravity: Option<Vec<f64>>,
    /// Example poses (examples × n × d) for example-aware complementary dynamics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    examples: Option<Vec<Vec<Vec<f64>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    example_beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    example_manifold: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blendshapes: Option<BlendshapesFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stiffness: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fill: Option<Vec<f64>>,
    /// Every other key: the settings table's scene rows by name (see [`dynamics_keys`]); any
    /// other name is refused there.
    #[serde(flatten)]
    dynamics: serde_json::Map<String, serde_json::Value>,
}

fn flatten<T: Copy>(path: &Path, what: &str, rows: Vec<Vec<T>>, width: usize) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(rows.len() * width);
    for (i, r) in rows.into_iter().enumerate() {
        if r.len() != width {
            return Err(OvertoneError::parse(
                path,
                format!("{what}[{i}] has {} entries, expected {width}", r.len()),
            ));
        }
        out.extend(r);
    }
    Ok(out)
}

/// Parses an `overtone-scene/1` document (`text`, read from `path`) into a validated scene.
///
/// Keys: `format`, `dim` (2|3), `vertices` (n × d), `elements` (m × (d+1), 0-based),
/// `weights` (n × bones), `frames` (frames × bones × d(d+1), row-major `d × (d+1)` affine maps
/// rest → posed), optional `D` (n), `material` {`model`, `youngs_modulus`, `poisson_ratio`,
/// `density`}, `dt`, optional `gravity` (d), optional `examples` (examples × n × d example poses
/// for example-aware complementary dynamics) with optional `example_beta` (default 1) and
/// `example_manifold` (`global`, default, or `per-element`), optional `blendshapes`
/// {`deltas` (targets × n × d rest-space offsets), `weights` (frames × targets)}: morph targets
/// applied before skinning, one extra rig column each; optional `stiffness` (n multipliers of
/// Young's modulus). Optional dynamics keys (absent = the production default,
/// [`SceneDynamics`]): the settings table's scene rows by name ([`crate::scene::scene_rows`];
/// the docs' settings page lists them), a given `integrator` bringing its own defaults
/// (`backward_euler`: the seeds', no damping, bind rest, no cut detection). Unknown keys are
/// refused.
pub fn read_overtone_scene(path: &Path, text: &str) -> Result<Scene> {
    let f: SceneFile = serde_json::from_str(text).map_err(|e| OvertoneError::parse(path, format!("{e}")))?;
    if f.format != SCENE_FORMAT {
        return Err(OvertoneError::parse(
            path,
            format!("format is `{}`, this build reads `{SCENE_FORMAT}`", f.format),
        ));
    }
    let d = f.dim;
    if d != 2 && d != 3 {
        return Err(OvertoneError::parse(path, format!("dim is {d}; must be 2 or 3")));
    }
    let n = f.vertices.len();
    let vertices = flatten(path, "vertices", f.vertices, d)?;
    let elements = flatten(path, "elements", f.elements, d + 1)?;
    if f.weights.len() != n {
        return Err(OvertoneError::parse(
            path,
            format!("weights has {} rows, expected one per vertex ({n})", f.weights.len()),
        ));
    }
    let n_bones = f.weights.first().map(|r| r.len()).unwrap_or(0);
    let weights = flatten(path, "weights", f.weights, n_bones)?;
    let mut frames = Vec::with_capacity(f.frames.len());
    for (k, fr) in f.frames.into_iter().enumerate() {
        if fr.len() != n_bones {
            return Err(OvertoneError::parse(
                path,
                format!(
                    "frames[{k}] has {} transforms, expected one per bone ({n_bones})",
                    fr.len()
                ),
            ));
        }
        frames.push(flatten(path, &format!("frames[{k}]"), fr, d * (d + 1))?);
    }
    let examples = match f.examples {
        None => {
            if f.example_beta.is_some() || f.example_manifold.is_some() {
                return Err(OvertoneError::parse(
                    path,
                    "example_beta / example_manifold given without \"examples\"",
                ));
            }
            None
        }
        Some(list) => {
            let mut poses = Vec::with_capacity(list.len());
            for (j, pose) in list.into_iter().enumerate() {
                if pose.len() != n {
                    return Err(OvertoneError::parse(
                        path,
                        format!("examples[{j}] has {} vertices, expected {n} (the mesh's)", pose.len()),
                    ));
                }
                poses.push(flatten(path, &format!("examples[{j}]"), pose, d)?);
            }
            Some(SceneExamples {
                poses,
                beta: f.example_beta.unwrap_or(1.0),
                manifold: match &f.example_manifold {
                    Some(name) => ManifoldScope::parse(name)?,
                    None => ManifoldScope::Global,
                },
            })
        }
    };
    let blendshapes = match f.blendshapes {
        None => None,
        Some(b) => {
            let n_targets = b.deltas.len();
            if n_targets == 0 {
                return Err(OvertoneError::parse(
                    path,
                    "blendshapes.deltas is empty; remove the key or give targets",
                ));
            }
            let mut deltas = Vec::with_capacity(n_targets * n * d);
            for (t, target) in b.deltas.into_iter().enumerate() {
                if target.len() != n {
                    return Err(OvertoneError::parse(
                        path,
                        format!(
                            "blendshapes.deltas[{t}] has {} vertices, expected {n} (the mesh's)",
                            target.len()
                        ),
                    ));
                }
                deltas.extend(flatten(path, &format!("blendshapes.deltas[{t}]"), target, d)?);
            }
            Some(SceneBlendshapes {
                deltas,
                n_targets,
                weights: b.weights,
            })
        }
    };
    let mesh = SimplexMesh::new(d, vertices, elements)?;
    let scene = Scene {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mesh,
        weights,
        n_bones,
        frames,
        momentum_weights: f.d,
        model: ElasticModel::parse(&f.material.model)?,
        material: Material {
            youngs_modulus: f.material.youngs_modulus,
            poisson_ratio: f.material.poisson_ratio,
            density: f.material.density,
        },
        dt: f.dt,
        gravity: f.gravity.unwrap_or_else(|| vec![0.0; d]),
        examples,
        blendshapes,
        normalisation: None,
        dynamics: dynamics_keys(path, f.dynamics, f.stiffness, f.fill)?
            .apply(&SceneDynamics::default())
            .map_err(|e| OvertoneError::parse(path, e.to_string()))?,
    };
    scene.validate()?;
    Ok(scene)
}

/// Serialises a scene as an `overtone-scene/1` document.
pub fn scene_to_json(scene: &Scene) -> String {
    let d = scene.mesh.dim();
    let rows = |v: &[f64], w: usize| v.chunks(w).map(|r| r.to_vec()).collect::<Vec<_>>();
    let dk = DynamicsKeys::of(&scene.dynamics);
    let f = SceneFile {
        format: SCENE_FORMAT.into(),
        dim: d,
        vertices: rows(scene.mesh.vertices(), d),
        elements: scene.mesh.elements().chunks(d + 1).map(|r| r.to_vec()).collect(),
        weights: rows(&scene.weights, scene.n_bones),
        frames: scene.frames.iter().map(|fr| rows(fr, d * (d + 1))).collect(),
        d: scene.momentum_weights.clone(),
        material: MaterialFile {
            model: scene.model.name().into(),
            youngs_modulus: scene.material.youngs_modulus,
            poisson_ratio: scene.material.poisson_ratio,
            density: scene.material.density,
        },
        dt: scene.dt,
        gravity: Some(scene.gravity.clone()),
        examples: scene
            .examples
            .as_ref()
            .map(|ex| ex.poses.iter().map(|p| rows(p, d)).collect()),
        example_beta: scene.examples.as_ref().map(|ex| ex.beta),
        example_manifold: scene.examples.as_ref().map(|ex| ex.manifold.name().to_string()),
        blendshapes: scene.blendshapes.as_ref().map(|b| BlendshapesFile {
            deltas: b
                .deltas
                .chunks(scene.mesh.n_vertices() * d)
                .map(|t| rows(t, d))
                .collect(),
            weights: b.weights.clone(),
        }),
        stiffness: dk.stiffness.clone(),
        fill: dk.fill.clone(),
        dynamics: dk
            .values
            .iter()
            .map(|(name, v)| (name.to_string(), json_of(name, v)))
            .collect(),
    };
    serde_json::to_string(&f).expect("scene serialisation cannot fail")
}

/// The dynamics keys of a scene file: `keys` (every key that is not one of the scene's own)
/// must be scene rows of the settings table ([`crate::scene::scene_rows`]), each a number, a
/// choice's name or the unset word (`"never"`, `"automatic"`, or `null`).
fn dynamics_keys(
    path: &Path,
    keys: serde_json::Map<String, serde_json::Value>,
    stiffness: Option<Vec<f64>>,
    fill: Option<Vec<f64>>,
) -> Result<DynamicsKeys> {
    let mut out = DynamicsKeys {
        stiffness,
        fill,
        ..DynamicsKeys::default()
    };
    for (name, value) in keys {
        if !crate::scene::scene_rows().any(|s| s.name == name) {
            return Err(OvertoneError::parse(
                path,
                format!(
                    "unknown key `{name}`; a scene file has format, dim, vertices, elements, weights, frames, D, material, dt, gravity, examples, example_beta, example_manifold, blendshapes, stiffness, fill and the dynamics keys {}",
                    crate::scene::scene_rows().map(|s| s.name).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let text = match &value {
            serde_json::Value::String(t) => t.clone(),
            serde_json::Value::Null => "none".into(),
            other => other.to_string(),
        };
        out.set_text(&name, &text)
            .map_err(|e| OvertoneError::parse(path, e.to_string()))?;
    }
    Ok(out)
}

/// The JSON form of scene row `name`'s value: a number, a choice's name, or the unset word.
fn json_of(name: &str, v: &Value) -> serde_json::Value {
    match *v {
        Value::F64(x) => serde_json::json!(x),
        Value::Count(n) => serde_json::json!(n),
        Value::Bool(b) => serde_json::json!(b),
        Value::Vec3(g) => serde_json::json!(g),
        Value::Choice(_) | Value::Unset => {
            serde_json::json!(crate::settings::spec(name).map_or_else(|_| String::new(), |s| s.format(v)))
        }
    }
}

/// Writes a scene as `overtone-scene/1` JSON, atomically.
pub fn write_overtone_scene(path: &Path, scene: &Scene) -> Result<()> {
    write_atomically(path, scene_to_json(scene).as_bytes())
}
