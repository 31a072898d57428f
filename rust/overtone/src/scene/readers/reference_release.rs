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
use crate::io::{parse_dmat, parse_medit, parse_point_handle_anim, parse_skeleton_anim, parse_tgf, read_text};
use crate::mesh::SimplexMesh;
use crate::scene::{ElasticModel, Normalisation, Scene};

/// Density of the release's lumped mass (its mass matrix is scaled by 1000).
const REFERENCE_DENSITY: f64 = 1000.0;

/// One file named by a reference-release scene: where it is (for error messages) and its text.
#[derive(Clone, Copy, Debug)]
pub struct NamedText<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

/// The four files a reference-release scene names.
#[derive(Clone, Copy, Debug)]
pub struct ReferenceSceneTexts<'a> {
    /// MEDIT tet mesh (`mesh_file`).
    pub mesh: NamedText<'a>,
    /// TGF handles or skeleton (`handle_file`).
    pub handles: NamedText<'a>,
    /// DMAT weights (`weight_file`).
    pub weights: NamedText<'a>,
    /// Animation (`anim_file`).
    pub anim: NamedText<'a>,
}

/// Reads a reference-release scene; `json` is the parsed scene file at `path`; the files it
/// names are read relative to its folder.
pub(crate) fn read_reference_scene(path: &Path, json: &serde_json::Value) -> Result<Scene> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file = |k: &str| -> Result<(std::path::PathBuf, String)> {
        let name = json
            .get(k)
            .and_then(|v| v.as_str())
            .ok_or_else(|| OvertoneError::parse(path, format!("missing string key `{k}`")))?;
        let p = dir.join(name);
        let text = read_text(&p)?;
        Ok((p, text))
    };
    let (mesh, handles, weights, anim) = (
        file("mesh_file")?,
        file("handle_file")?,
        file("weight_file")?,
        file("anim_file")?,
    );
    fn named(f: &(std::path::PathBuf, String)) -> NamedText<'_> {
        NamedText {
            path: f.0.as_path(),
            text: f.1.as_str(),
        }
    }
    parse_reference_scene(
        path,
        json,
        &ReferenceSceneTexts {
            mesh: named(&mesh),
            handles: named(&handles),
            weights: named(&weights),
            anim: named(&anim),
        },
    )
}

/// Builds a reference-release scene from its parsed scene JSON (at `path`) and the texts of the
/// four files it names; see [`read_reference_scene`].
pub fn parse_reference_scene(path: &Path, json: &serde_json::Value, files: &ReferenceSceneTexts) -> Result<Scene> {
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
    let medit = parse_medit(files.mesh.path, files.mesh.text)?;
    let tgf = parse_tgf(files.handles.path, files.handles.text)?;
    let w = parse_dmat(files.weights.path, files.weights.text)?;
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
        parse_point_handle_anim(files.anim.path, files.anim.text, &joints, s)?
    } else {
        parse_skeleton_anim(files.anim.path, files.anim.text, &joints, &tgf.bones, s)?.frames
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
        normalisation: Some(Normalisation::similarity(centre, s)),
        dynamics: crate::scene::SceneDynamics::default(),
    };
    scene.validate()?;
    Ok(scene)
}
