//! Scenes of the Complementary Dynamics C++ release (Zhang, Bang, Levin, Jacobson 2020).
//!
//! A JSON file names a MEDIT tet mesh, a TGF handle file, a DMAT weight matrix and an animation,
//! with `dt`, `YM`, `pr` and `model`. As in the release's demo, positions are normalised:
//! `V ← (V − c)/s` with `c` the bounding-box centre of the tet vertices and `s` the largest
//! absolute coordinate after centring (the mesh spans `[−1, 1]` on its longest axis); handles
//! get the same map and animation translations are divided by `s`; the density is 1000. The
//! `scale` key is ignored, as the release does.

use std::path::Path;

use crate::dynamics::Material;
use crate::error::{OvertoneError, Result};
use crate::io::{read_dmat, read_medit, read_point_handle_anim, read_skeleton_anim, read_tgf};
use crate::mesh::SimplexMesh;
use crate::scene::{ElasticModel, Normalisation, Scene};

/// Density of the release's lumped mass (its mass matrix is scaled by 1000).
const REFERENCE_DENSITY: f64 = 1000.0;

/// Reads a reference-release scene; `json` is the parsed scene file at `path`.
pub fn read_reference_scene(path: &Path, json: &serde_json::Value) -> Result<Scene> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let key_str = |k: &str| -> Result<String> {
        json.get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| OvertoneError::parse(path, format!("missing string key `{k}`")))
    };
    let key_f64 = |k: &str| -> Result<f64> {
        json.get(k)
            .and_then(|v| v.as_f64())
            .ok_or_else(|| OvertoneError::parse(path, format!("missing numeric key `{k}`")))
    };
    let medit = read_medit(&dir.join(key_str("mesh_file")?))?;
    let tgf = read_tgf(&dir.join(key_str("handle_file")?))?;
    let w = read_dmat(&dir.join(key_str("weight_file")?))?;
    let anim_path = dir.join(key_str("anim_file")?);
    let model = ElasticModel::parse(&key_str("model")?)?;
    let material = Material {
        youngs_modulus: key_f64("YM")?,
        poisson_ratio: key_f64("pr")?,
        density: REFERENCE_DENSITY,
    };
    let dt = key_f64("dt")?;

    if medit.dim != 3 || medit.tetrahedra.is_empty() {
        return Err(OvertoneError::parse(path, "the mesh file holds no tetrahedra"));
    }
    let mut v = medit.vertices;
    let n = v.len() / 3;
    let mut centre = [0.0; 3];
    for i in 0..3 {
        let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), k| {
            (a.min(v[3 * k + i]), b.max(v[3 * k + i]))
        });
        centre[i] = 0.5 * (lo + hi);
    }
    for k in 0..n {
        for i in 0..3 {
            v[3 * k + i] -= centre[i];
        }
    }
    let s = v.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    if !(s > 0.0) {
        return Err(OvertoneError::parse(path, "the mesh has zero extent"));
    }
    v.iter_mut().for_each(|x| *x /= s);
    let mut joints = tgf.joints.clone();
    for (k, x) in joints.iter_mut().enumerate() {
        *x = (*x - centre[k % 3]) / s;
    }
    let n_bones = if tgf.bones.is_empty() {
        joints.len() / 3
    } else {
        tgf.bones.len()
    };
    if w.rows != n || w.cols != n_bones {
        return Err(OvertoneError::parse(
            path,
            format!(
                "weight matrix is {} x {}, expected {n} tet vertices x {n_bones} {}",
                w.rows,
                w.cols,
                if tgf.bones.is_empty() { "handles" } else { "bones" }
            ),
        ));
    }
    let frames = if tgf.bones.is_empty() {
        read_point_handle_anim(&anim_path, &joints, s)?
    } else {
        read_skeleton_anim(&anim_path, &joints, &tgf.bones, s)?.frames
    };
    let mesh = SimplexMesh::new(3, v, medit.tetrahedra)?;
    let scene = Scene {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mesh,
        weights: w.data,
        n_bones,
        frames,
        momentum_weights: None,
        model,
        material,
        dt,
        gravity: vec![0.0; 3],
        examples: None,
        blendshapes: None,
        normalisation: Some(Normalisation { centre, scale: s }),
    };
    scene.validate()?;
    Ok(scene)
}
