//! Characters of the `fast_cody` release (Benchekroun et al. 2023): a gmsh tet mesh, a rig JSON
//! with weights on the surface only, and an animation JSON of per-frame bone world transforms.

use std::path::{Path, PathBuf};

use crate::dynamics::Material;
use crate::error::{InputError, OvertoneError, Result};
use crate::io::{parse_gmsh, read_text};
use crate::mesh::{boundary_vertices, SimplexMesh};
use crate::rig::{compose_affine, invert_affine};
use crate::scene::{extend_weights_inward, ElasticModel, Scene};

/// Material and time step used for `fast_cody` characters: those of the reference release's
/// fish (the same geometry at a coarser resolution), in the same normalised frame.
const MATERIAL: Material = Material {
    youngs_modulus: 7e5,
    poisson_ratio: 0.4,
    density: 1000.0,
};
const DT: f64 = 0.01;

fn json(path: &Path, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| OvertoneError::parse(path, format!("not valid JSON: {e}")))
}

fn matrix_rows(path: &Path, v: &serde_json::Value, what: &str, cols: usize) -> Result<Vec<f64>> {
    let rows = v
        .as_array()
        .ok_or_else(|| OvertoneError::parse(path, format!("`{what}` is not an array")))?;
    let mut out = Vec::with_capacity(rows.len() * cols);
    for (i, r) in rows.iter().enumerate() {
        let r = r
            .as_array()
            .filter(|r| r.len() == cols)
            .ok_or_else(|| OvertoneError::parse(path, format!("`{what}[{i}]` is not a row of {cols} numbers")))?;
        for x in r {
            out.push(
                x.as_f64()
                    .ok_or_else(|| OvertoneError::parse(path, format!("`{what}[{i}]` holds a non-number")))?,
            );
        }
    }
    Ok(out)
}

/// Finds the files of a `fast_cody` character from its rig file `NAME_rig.json`: the mesh
/// `NAME.msh` and the first (sorted) animation `NAME_rig_anim__*.json` beside it.
pub fn fast_cody_files(rig: &Path) -> Result<(PathBuf, PathBuf)> {
    let dir = rig.parent().unwrap_or(Path::new("."));
    let stem = rig
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = stem.strip_suffix("_rig").ok_or_else(|| {
        OvertoneError::parse(
            rig,
            "a fast_cody rig file must be named NAME_rig.json (next to NAME.msh)",
        )
    })?;
    let mesh = dir.join(format!("{base}.msh"));
    let prefix = format!("{stem}_anim__");
    let mut anims: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| OvertoneError::io(dir, format!("cannot list: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().starts_with(&prefix))
                .unwrap_or(false)
                && p.extension().map(|e| e == "json").unwrap_or(false)
        })
        .collect();
    anims.sort();
    let anim = anims
        .into_iter()
        .next()
        .ok_or_else(|| OvertoneError::parse(rig, format!("no animation {prefix}*.json beside the rig")))?;
    Ok((mesh, anim))
}

/// Reads a `fast_cody` character (mesh, rig, animation) into a scene.
///
/// * Positions are normalised as for the reference release (bounding-box centre, largest
///   half-extent 1); bone transforms are conjugated into that frame.
/// * The rig's weights live on its surface copy `V`; each boundary vertex of the tet mesh takes
///   the weights of the nearest `V` vertex, rows renormalised (the file's rows sum to
///   0.975–1.0), then the interior is filled by [`extend_weights_inward`].
/// * The LBS transform of bone `b` at frame `f` is `P[f,b] · p0[b]⁻¹` (world transforms).
/// * Material and time step: those of the reference release's fish (`E = 7e5`, `ν = 0.4`,
///   `ρ = 1000`, `h = 0.01`).
pub(crate) fn read_fast_cody_scene(mesh_path: &Path, rig_path: &Path, anim_path: &Path) -> Result<Scene> {
    let mesh = std::fs::read(mesh_path).map_err(|e| OvertoneError::io(mesh_path, format!("cannot read: {e}")))?;
    let (rig, anim) = (read_text(rig_path)?, read_text(anim_path)?);
    parse_fast_cody_scene(mesh_path, &mesh, rig_path, &rig, anim_path, &anim)
}

/// Builds a `fast_cody` character from the bytes of its gmsh mesh and the texts of its rig and
/// animation JSON (the paths only name them in errors); see [`read_fast_cody_scene`].
pub fn parse_fast_cody_scene(
    mesh_path: &Path,
    mesh_bytes: &[u8],
    rig_path: &Path,
    rig_text: &str,
    anim_path: &Path,
    anim_text: &str,
) -> Result<Scene> {
    let gm = parse_gmsh(mesh_path, mesh_bytes)?;
    if gm.tetrahedra.is_empty() {
        return Err(OvertoneError::parse(mesh_path, "no tetrahedra"));
    }
    let rig = json(rig_path, rig_text)?;
    let sv = matrix_rows(rig_path, &rig["V"], "V", 3)?;
    let ns = sv.len() / 3;
    let n_bones = rig["W"].get(0).and_then(|r| r.as_array()).map(|r| r.len()).unwrap_or(0);
    if n_bones == 0 {
        return Err(OvertoneError::parse(rig_path, "`W` is empty"));
    }
    let sw = matrix_rows(rig_path, &rig["W"], "W", n_bones)?;
    if sw.len() / n_bones != ns {
        return Err(OvertoneError::parse(
            rig_path,
            format!("`W` has {} rows for {ns} surface vertices", sw.len() / n_bones),
        ));
    }
    let p0 = matrix_rows(
        rig_path,
        &rig["p0"]
            .as_array()
            .map(|a| {
                serde_json::Value::Array(
                    a.iter()
                        .flat_map(|m| m.as_array().cloned().unwrap_or_default())
                        .collect(),
                )
            })
            .unwrap_or_default(),
        "p0",
        4,
    )?;
    if p0.len() != n_bones * 12 {
        return Err(OvertoneError::parse(
            rig_path,
            format!("`p0` holds {} numbers, expected {n_bones} 3x4 matrices", p0.len()),
        ));
    }
    let anim = json(anim_path, anim_text)?;
    let frames_json = anim["P"]
        .as_array()
        .ok_or_else(|| OvertoneError::parse(anim_path, "`P` is not an array"))?;

    // Normalisation x' = (x − c)/s.
    let mut v = gm.vertices;
    let n = v.len() / 3;
    let mut c = [0.0; 3];
    for i in 0..3 {
        let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), k| {
            (a.min(v[3 * k + i]), b.max(v[3 * k + i]))
        });
        c[i] = 0.5 * (lo + hi);
    }
    let s = (0..n)
        .flat_map(|k| (0..3).map(move |i| (k, i)))
        .fold(0.0f64, |a, (k, i)| a.max((v[3 * k + i] - c[i]).abs()));
    if !(s > 0.0) {
        return Err(OvertoneError::parse(mesh_path, "the mesh has zero extent"));
    }
    let raw = v.clone();
    for k in 0..n {
        for i in 0..3 {
            v[3 * k + i] = (v[3 * k + i] - c[i]) / s;
        }
    }
    let mesh = SimplexMesh::new(3, v, gm.tetrahedra)?;

    // Surface weights onto the tet boundary (nearest rig-surface vertex, raw coordinates).
    let boundary = boundary_vertices(&mesh);
    let mut known = Vec::with_capacity(boundary.len() * n_bones);
    for &b in &boundary {
        let p = &raw[3 * b..3 * b + 3];
        let nearest = (0..ns)
            .min_by(|&x, &y| {
                let dx: f64 = (0..3).map(|i| (sv[3 * x + i] - p[i]).powi(2)).sum();
                let dy: f64 = (0..3).map(|i| (sv[3 * y + i] - p[i]).powi(2)).sum();
                dx.total_cmp(&dy)
            })
            .expect("non-empty surface");
        let row = &sw[nearest * n_bones..(nearest + 1) * n_bones];
        let sum: f64 = row.iter().map(|w| w.max(0.0)).sum();
        if !(sum > 0.0) {
            return Err(InputError::Weights {
                vertex: nearest,
                reason: "the rig's surface weights of this vertex are all zero".into(),
            }
            .into());
        }
        known.extend(row.iter().map(|w| w.max(0.0) / sum));
    }
    let weights = extend_weights_inward(&mesh, &boundary, &known, n_bones)?;

    // Per-frame LBS transforms in the normalised frame: T' = N (P p0⁻¹) N⁻¹.
    let inv0: Vec<[f64; 12]> = (0..n_bones)
        .map(|b| {
            invert_affine(&p0[b * 12..(b + 1) * 12])
                .ok_or_else(|| OvertoneError::parse(rig_path, format!("p0 of bone {b} is singular")))
        })
        .collect::<Result<_>>()?;
    let (n_to, n_from) = crate::scene::Normalisation::similarity(c, s).affine_pair();
    let mut frames = Vec::with_capacity(frames_json.len());
    for (f, fr) in frames_json.iter().enumerate() {
        let flat = serde_json::Value::Array(
            fr.as_array()
                .ok_or_else(|| OvertoneError::parse(anim_path, format!("P[{f}] is not an array")))?
                .iter()
                .flat_map(|m| m.as_array().cloned().unwrap_or_default())
                .collect(),
        );
        let pf = matrix_rows(anim_path, &flat, &format!("P[{f}]"), 4)?;
        if pf.len() != n_bones * 12 {
            return Err(OvertoneError::parse(
                anim_path,
                format!("P[{f}] holds {} numbers, expected {n_bones} 3x4 matrices", pf.len()),
            ));
        }
        let mut out = Vec::with_capacity(n_bones * 12);
        for b in 0..n_bones {
            let t = compose_affine(&pf[b * 12..(b + 1) * 12], &inv0[b]);
            out.extend(compose_affine(&n_to, &compose_affine(&t, &n_from)));
        }
        frames.push(out);
    }
    let name = rig_path
        .file_stem()
        .map(|s| s.to_string_lossy().trim_end_matches("_rig").to_string())
        .unwrap_or_default();
    let scene = Scene {
        name,
        mesh,
        weights,
        n_bones,
        frames,
        momentum_weights: None,
        examples: None,
        blendshapes: None,
        normalisation: Some(crate::scene::Normalisation::similarity(c, s)),
        dynamics: crate::scene::SceneDynamics::default(),
        model: ElasticModel::Arap,
        material: MATERIAL,
        dt: DT,
        gravity: vec![0.0; 3],
    };
    scene.validate()?;
    Ok(scene)
}
