//! Scenes of the Complementary Dynamics C++ release (Zhang, Bang, Levin, Jacobson 2020).
//!
//! A JSON file names a MEDIT tet mesh, a TGF handle file, a DMAT weight matrix and an animation,
//! with `dt`, `YM`, `pr` and `model`. As in the release's demo, positions are normalised:
//! `V ← (V − c)/s` with `c` the bounding-box centre of the tet vertices and `s` the largest
//! absolute coordinate after centring (the mesh spans `[−1, 1]` on its longest axis); handles
//! get the same map and animation translations are divided by `s`; the density is 1000. The
//! `scale` key is ignored, as the release does.
//!
//! The optional key `"conventions"` says how the rest is read:
//!
//! * `"release"` (default): as the release's demo simulates it, so its scenes reproduce its
//!   trajectories. One backward-Euler step per frame without damping, the bind shape as the
//!   elastic reference ([`SceneDynamics::seed`]); the leak field is the release's Poisson mask
//!   ([`poisson_momentum_weights`]); and the material is the Overtone material whose energy is
//!   the release's (see [`release_material`]: the release weighs ARAP by `λ/2` where Overtone
//!   weighs it by `μ/2`).
//! * `"overtone"`: Overtone's own conventions ([`SceneDynamics::default`], the default leak
//!   field, `YM` and `pr` as Overtone's Young's modulus and Poisson ratio).

use std::path::Path;

use crate::dynamics::Material;
use crate::error::{OvertoneError, Result};
use crate::fem::lame_parameters;
use crate::io::{parse_dmat, parse_medit, parse_point_handle_anim, parse_skeleton_anim, parse_tgf, read_text};
use crate::leak::poisson_momentum_weights;
use crate::mesh::SimplexMesh;
use crate::scene::{ElasticModel, Normalisation, Scene, SceneDynamics};

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
    let release = match json.get("conventions") {
        None => true,
        Some(v) => match v.as_str() {
            Some("release") => true,
            Some("overtone") => false,
            _ => {
                return Err(OvertoneError::parse(
                    path,
                    format!("`conventions` is {v}; known: \"release\" (the release's demo, default) or \"overtone\""),
                ))
            }
        },
    };
    let (youngs_modulus, poisson_ratio) = (key_f64("YM")?, key_f64("pr")?);
    let material = if release {
        release_material(model, youngs_modulus, poisson_ratio).map_err(|e| OvertoneError::parse(path, e.to_string()))?
    } else {
        Material {
            youngs_modulus,
            poisson_ratio,
            density: REFERENCE_DENSITY,
        }
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
    let momentum_weights = if release {
        Some(poisson_momentum_weights(&mesh)?)
    } else {
        None
    };
    let scene = Scene {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mesh,
        weights: w.data,
        n_bones,
        frames,
        momentum_weights,
        model,
        material,
        dt,
        gravity: vec![0.0; 3],
        examples: None,
        blendshapes: None,
        normalisation: Some(Normalisation::similarity(centre, s)),
        dynamics: if release {
            SceneDynamics::seed()
        } else {
            SceneDynamics::default()
        },
    };
    scene.validate()?;
    Ok(scene)
}

/// The Overtone material (density 1000) whose energy is the one the release's demo builds from
/// `YM = E` and `pr = ν` (Lamé `λ`, `μ` of `E`, `ν`; the demo passes the pair `(λ/2, μ)` to its
/// energies).
///
/// * ARAP: the release's density is `(λ/2)‖F − R‖²`, Overtone's `(μ'/2)‖F − R‖²`, so the
///   returned material has `μ' = λ`: `E' = 2(1 + ν)λ` and `ν` kept (ARAP has no volume term).
///   At `ν = 0.4`, `λ = 4μ`: the release's ARAP is four times as stiff as `YM` reads in
///   Overtone.
/// * Neo-Hookean: the release's density `(λ/2)(J^{−2/3} tr FᵀF − 3) + μ(J − 1)²` has shear
///   modulus `λ` and bulk modulus `2μ` at rest; Overtone's stable neo-Hookean with Lamé pair
///   `(μ', λ')` has shear `μ'` and bulk `λ' − μ' + 2μ'/3`, so `μ' = λ`, `λ' = 2μ + λ/3`, and
///   `E' = μ'(3λ' + 2μ')/(λ' + μ')`, `ν' = λ'/(2(λ' + μ'))`. The two energies agree to second
///   order at rest (small strains); they differ beyond.
///
/// Errors: `E ≤ 0`, `ν` outside `(−1, 0.5)`.
pub fn release_material(model: ElasticModel, youngs_modulus: f64, poisson_ratio: f64) -> Result<Material> {
    let lame = lame_parameters(youngs_modulus, poisson_ratio)?;
    let (youngs_modulus, poisson_ratio) = match model {
        ElasticModel::Arap => (2.0 * (1.0 + poisson_ratio) * lame.lambda, poisson_ratio),
        ElasticModel::NeoHookean => {
            let mu = lame.lambda;
            let lambda = 2.0 * lame.mu + lame.lambda / 3.0;
            (
                mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu),
                lambda / (2.0 * (lambda + mu)),
            )
        }
    };
    Ok(Material {
        youngs_modulus,
        poisson_ratio,
        density: REFERENCE_DENSITY,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::neohookean_energy;

    /// Second derivatives `∂²ψ/∂F_a∂F_b` at `F = I` by central differences (step 1e-4).
    fn hessian_at_rest(psi: &dyn Fn(&[f64]) -> f64) -> Vec<f64> {
        let h = 1e-4;
        let mut out = vec![0.0; 81];
        for a in 0..9 {
            for b in 0..9 {
                let at = |sa: f64, sb: f64| {
                    let mut f = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
                    f[a] += sa * h;
                    f[b] += sb * h;
                    psi(&f)
                };
                out[a * 9 + b] = (at(1.0, 1.0) - at(1.0, -1.0) - at(-1.0, 1.0) + at(-1.0, -1.0)) / (4.0 * h * h);
            }
        }
        out
    }

    /// The release's ARAP weight `λ/2` becomes Overtone's `μ'/2`: the returned material's shear
    /// modulus is the given material's `λ` (to round-off), its Poisson ratio unchanged.
    #[test]
    fn release_arap_is_weighted_by_lambda() {
        for (e, nu) in [(3e5, 0.4), (5e4, 0.4), (1e6, 0.25)] {
            let m = release_material(ElasticModel::Arap, e, nu).unwrap();
            let got = lame_parameters(m.youngs_modulus, m.poisson_ratio).unwrap().mu;
            let want = lame_parameters(e, nu).unwrap().lambda;
            assert!((got / want - 1.0).abs() < 1e-12, "E {e}, ν {nu}: μ' {got}, λ {want}");
            assert_eq!((m.poisson_ratio, m.density), (nu, 1000.0));
        }
    }

    /// The release's neo-Hookean `(λ/2)(J^{-2/3} tr FᵀF − 3) + μ(J − 1)²` and Overtone's stable
    /// neo-Hookean with the returned material have the same second derivatives at rest (every
    /// entry within 1e-5 of the largest: finite-difference error), so small motions agree.
    #[test]
    fn release_neo_hookean_has_the_same_moduli_at_rest() {
        for (e, nu) in [(8e5, 0.4), (1e5, 0.3)] {
            let lame = lame_parameters(e, nu).unwrap();
            let release = |f: &[f64]| {
                let j = f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6])
                    + f[2] * (f[3] * f[7] - f[4] * f[6]);
                let i1: f64 = f.iter().map(|x| x * x).sum();
                0.5 * lame.lambda * (j.powf(-2.0 / 3.0) * i1 - 3.0) + lame.mu * (j - 1.0).powi(2)
            };
            let m = release_material(ElasticModel::NeoHookean, e, nu).unwrap();
            let ours = lame_parameters(m.youngs_modulus, m.poisson_ratio).unwrap();
            let overtone = |f: &[f64]| neohookean_energy(3, f, ours.mu, ours.lambda);
            let (a, b) = (hessian_at_rest(&release), hessian_at_rest(&overtone));
            let scale = a.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            for k in 0..81 {
                assert!(
                    (a[k] - b[k]).abs() < 1e-5 * scale,
                    "entry {k}: release {} vs {}",
                    a[k],
                    b[k]
                );
            }
        }
    }
}
