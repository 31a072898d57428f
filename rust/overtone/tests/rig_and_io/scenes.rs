//! Scene readers: reference-release files, Overtone's JSON, and refusals of bad input.

use std::path::{Path, PathBuf};

use overtone::dynamics::{Integrator, RestShape};
use overtone::io::{read_skeleton_anim, read_tgf};
use overtone::scene::{load_scene, metronome_beam, scene_to_json, MetronomeBeam, SceneDynamics};
use overtone::OvertoneError;

use crate::common::paths::{examples_data, reference_data, tmpdir};

/// The README of the data says frame 0 of every scene is the rest pose: all transforms are the
/// identity (to 1e-12), and the normalised mesh spans [-1, 1] on its longest axis.
#[test]
fn reference_scenes_start_at_rest_and_are_normalised() {
    for (name, n, m, bones, frames) in [
        ("sphere", 67, 181, 2, 30),
        ("frog", 1749, 5389, 1, 40),
        ("elephant", 494, 1502, 24, 457),
        ("fish", 6142, 21708, 2, 180),
    ] {
        let sc = load_scene(&reference_data(&format!("{name}/{name}.json"))).unwrap();
        assert_eq!(
            (sc.mesh.n_vertices(), sc.mesh.n_elements(), sc.n_bones, sc.frames.len()),
            (n, m, bones, frames),
            "{name}"
        );
        for (k, t) in sc.frames[0].iter().enumerate() {
            let want = if k % 4 == k / 4 % 3 { 1.0 } else { 0.0 };
            assert!((t - want).abs() < 1e-12, "{name}: frame 0 entry {k} = {t}");
        }
        let ext = sc.mesh.vertices().iter().fold(0.0f64, |a, x| a.max(x.abs()));
        assert!((ext - 1.0).abs() < 1e-12, "{name}: extent {ext}");
    }
}

/// Forward kinematics keeps the skeleton connected: at every frame each child bone's start joint,
/// moved by the child's transform, equals that joint moved by the parent's transform (1e-12),
/// and every transform's 3 × 3 part is a rotation.
#[test]
fn elephant_skeleton_stays_connected() {
    let tgf = read_tgf(&reference_data("elephant/elephant.tgf")).unwrap();
    let anim = read_skeleton_anim(
        &reference_data("elephant/elephant_anim.txt"),
        &tgf.joints,
        &tgf.bones,
        1.0,
    )
    .unwrap();
    assert_eq!(anim.parents.iter().filter(|p| p.is_none()).count(), 3);
    let apply = |t: &[f64], p: [f64; 3]| -> [f64; 3] {
        let mut y = [0.0; 3];
        for i in 0..3 {
            y[i] = t[i * 4] * p[0] + t[i * 4 + 1] * p[1] + t[i * 4 + 2] * p[2] + t[i * 4 + 3];
        }
        y
    };
    for frame in &anim.frames {
        for (b, parent) in anim.parents.iter().enumerate() {
            let tb = &frame[b * 12..(b + 1) * 12];
            for i in 0..3 {
                for j in 0..3 {
                    let dot: f64 = (0..3).map(|k| tb[k * 4 + i] * tb[k * 4 + j]).sum();
                    assert!((dot - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
                }
            }
            if let Some(p) = parent {
                let s = tgf.bones[b].0;
                let joint = [tgf.joints[3 * s], tgf.joints[3 * s + 1], tgf.joints[3 * s + 2]];
                let (a, c) = (apply(tb, joint), apply(&frame[p * 12..(p + 1) * 12], joint));
                let gap = (0..3).map(|i| (a[i] - c[i]).abs()).fold(0.0, f64::max);
                assert!(gap < 1e-9 * 64.0, "bone {b} detached by {gap}");
            }
        }
    }
}

#[test]
fn overtone_scene_round_trips() {
    let sc = metronome_beam(MetronomeBeam {
        steps: 5,
        ..Default::default()
    })
    .unwrap();
    let dir = tmpdir("roundtrip");
    let p = dir.join("beam.json");
    std::fs::write(&p, scene_to_json(&sc)).unwrap();
    let back = load_scene(&p).unwrap();
    assert!(back.mesh == sc.mesh, "mesh differs after the round trip");
    assert_eq!(back.frames, sc.frames);
    assert_eq!(back.weights, sc.weights);
    assert_eq!(back.material, sc.material);
}

fn write_variant(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let sc = metronome_beam(MetronomeBeam {
        w: 4,
        h: 3,
        steps: 3,
        ..Default::default()
    })
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&scene_to_json(&sc)).unwrap();
    edit(&mut v);
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

/// A reference-release scene is read with the release's conventions unless it says
/// `"conventions": "overtone"`: backward Euler once per frame, undamped, bind rest; ARAP weighted
/// by `λ/2` (the sphere's `YM` 5e4 at ν = 0.4 becomes Overtone's `E'` = 2e5, to 1e-12); the
/// Poisson-mask leak (zero on the 58 surface vertices only, largest value 1). Overtone's own conventions keep
/// `YM`, the default leak and the default dynamics. Any other value is refused by name.
#[test]
fn reference_scenes_read_with_the_release_conventions_unless_asked() {
    let dir = tmpdir("conventions");
    let src = reference_data("sphere/sphere.json");
    let mut base: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&src).unwrap()).unwrap();
    for k in ["mesh_file", "handle_file", "weight_file", "anim_file"] {
        let abs = reference_data("sphere").join(base[k].as_str().unwrap());
        base[k] = abs.to_string_lossy().into_owned().into();
    }
    let write = |name: &str, conventions: Option<&str>| {
        let mut v = base.clone();
        if let Some(c) = conventions {
            v["conventions"] = c.into();
        }
        let p = dir.join(format!("{name}.json"));
        std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
        p
    };
    let release = load_scene(&write("default", None)).unwrap();
    assert_eq!(release.dynamics.integrator, Integrator::BackwardEuler);
    assert_eq!(
        (release.dynamics.damping, release.dynamics.rest),
        (0.0, RestShape::Bind)
    );
    assert!(
        (release.material.youngs_modulus / 2e5 - 1.0).abs() < 1e-12,
        "{:?}",
        release.material
    );
    let d = release.momentum_weights.as_ref().expect("the Poisson leak");
    // The sphere has 58 boundary vertices of 67 (examples/data's README); the 9 inside are positive.
    assert_eq!(
        d.iter().filter(|&&x| x == 0.0).count(),
        58,
        "the leak is zero on the surface only"
    );
    assert_eq!(d.iter().cloned().fold(0.0, f64::max), 1.0);
    let explicit = load_scene(&write("release", Some("release"))).unwrap();
    assert_eq!(explicit.material, release.material);
    assert_eq!(explicit.momentum_weights, release.momentum_weights);
    let own = load_scene(&write("own", Some("overtone"))).unwrap();
    assert_eq!(own.material.youngs_modulus, 5e4);
    assert!(own.momentum_weights.is_none());
    assert_eq!(own.dynamics, SceneDynamics::default());
    let err = load_scene(&write("bogus", Some("maya")))
        .err()
        .expect("an unknown convention is refused");
    assert!(err.to_string().contains("conventions"), "{err}");
}

/// Each kind of bad input is refused with its own typed error, never a panic.
#[test]
fn bad_scenes_are_refused_with_a_reason() {
    let dir = tmpdir("bad");
    let cases: Vec<(&str, Box<dyn FnOnce(&mut serde_json::Value)>, &str)> = vec![
        (
            "missing_key",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("dt");
            }),
            "missing field `dt`",
        ),
        (
            "unknown_key",
            Box::new(|v| {
                v["typo"] = 1.into();
            }),
            "unknown key `typo`",
        ),
        (
            "short_vertex",
            Box::new(|v| {
                v["vertices"][2] = serde_json::json!([0.0]);
            }),
            "vertices[2]",
        ),
        (
            "bad_index",
            Box::new(|v| {
                v["elements"][0][1] = 999.into();
            }),
            "vertex 999",
        ),
        (
            "inverted",
            Box::new(|v| {
                let e = v["elements"][0].clone();
                v["elements"][0] = serde_json::json!([e[0], e[2], e[1]]);
            }),
            "inverted",
        ),
        (
            "degenerate",
            Box::new(|v| {
                v["vertices"][1] = v["vertices"][0].clone();
            }),
            "degenerate",
        ),
        (
            "weights_sum",
            Box::new(|v| {
                v["weights"][3][0] = 0.5.into();
            }),
            "sum to 0.5",
        ),
        (
            "weights_rows",
            Box::new(|v| {
                v["weights"].as_array_mut().unwrap().pop();
            }),
            "one per vertex",
        ),
        (
            "frame_size",
            Box::new(|v| {
                v["frames"][1][0] = serde_json::json!([1.0, 0.0]);
            }),
            "frames[1]",
        ),
        (
            "negative_dt",
            Box::new(|v| {
                v["dt"] = (-0.01).into();
            }),
            "dt",
        ),
        (
            "zero_E",
            Box::new(|v| {
                v["material"]["youngs_modulus"] = 0.0.into();
            }),
            "youngs_modulus",
        ),
        (
            "nu_half",
            Box::new(|v| {
                v["material"]["poisson_ratio"] = 0.5.into();
            }),
            "poisson_ratio",
        ),
        (
            "leak_len",
            Box::new(|v| {
                v["D"] = serde_json::json!([1.0, 1.0]);
            }),
            "leak field D",
        ),
        (
            "leak_negative",
            Box::new(|v| {
                let n = v["vertices"].as_array().unwrap().len();
                v["D"] = serde_json::json!(vec![-1.0; n]);
            }),
            ">= 0",
        ),
        (
            "wrong_format",
            Box::new(|v| {
                v["format"] = "overtone-scene/9".into();
            }),
            "overtone-scene/9",
        ),
        (
            "bad_model",
            Box::new(|v| {
                v["material"]["model"] = "rubber".into();
            }),
            "known models",
        ),
    ];
    for (name, edit, needle) in cases {
        let p = write_variant(&dir, name, edit);
        let err = load_scene(&p).err().unwrap_or_else(|| panic!("{name} was accepted"));
        let msg = err.to_string();
        assert!(msg.contains(needle), "{name}: message `{msg}` lacks `{needle}`");
    }
    // Numbers beyond f64 (JSON has no NaN/Inf literals; 1e999 is how they sneak in).
    let p = write_variant(&dir, "overflow", |_| {});
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replacen("\"dt\":0.01", "\"dt\":1e999", 1);
    std::fs::write(&p, text).unwrap();
    assert!(matches!(
        load_scene(&p),
        Err(OvertoneError::File(overtone::FileError::Parse { .. }))
    ));
    // A JSON file that is not a scene, and a missing file.
    let p = dir.join("other.json");
    std::fs::write(&p, "{\"hello\": 1}").unwrap();
    assert!(matches!(
        load_scene(&p),
        Err(OvertoneError::File(overtone::FileError::Parse { .. }))
    ));
    assert!(matches!(
        load_scene(&dir.join("missing.json")),
        Err(OvertoneError::File(overtone::FileError::Io { .. }))
    ));
}

/// gmsh 2.2: the binary cd_fish mesh has 10,000 nodes and 42,205 tets (the data README's counts),
/// and an ASCII file with the same content reads back identically.
#[test]
fn gmsh_binary_and_ascii_agree() {
    let fish = examples_data("fast-complementary-dynamics/cd_fish/cd_fish.msh");
    let m = overtone::io::read_gmsh(&fish).unwrap();
    assert_eq!((m.vertices.len() / 3, m.tetrahedra.len() / 4), (10_000, 42_205));
    let dir = tmpdir("gmsh");
    let mut text = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    let keep = 50;
    let tets: Vec<&[usize]> = m.tetrahedra.chunks(4).filter(|t| t.iter().all(|&v| v < keep)).collect();
    text += &format!("{keep}\n");
    for v in 0..keep {
        text += &format!(
            "{} {:?} {:?} {:?}\n",
            v + 1,
            m.vertices[3 * v],
            m.vertices[3 * v + 1],
            m.vertices[3 * v + 2]
        );
    }
    text += &format!("$EndNodes\n$Elements\n{}\n", tets.len() + 1);
    text += "1 15 2 0 1 1\n";
    for (k, t) in tets.iter().enumerate() {
        text += &format!(
            "{} 4 2 0 1 {} {} {} {}\n",
            k + 2,
            t[0] + 1,
            t[1] + 1,
            t[2] + 1,
            t[3] + 1
        );
    }
    text += "$EndElements\n";
    let p = dir.join("small.msh");
    std::fs::write(&p, &text).unwrap();
    let a = overtone::io::read_gmsh(&p).unwrap();
    assert_eq!(a.vertices, m.vertices[..3 * keep].to_vec());
    assert_eq!(a.tetrahedra, tets.concat());
    // Truncated binary data is refused, not a panic.
    let bytes = std::fs::read(&fish).unwrap();
    let cut = dir.join("cut.msh");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        overtone::io::read_gmsh(&cut),
        Err(OvertoneError::File(overtone::FileError::Parse { .. }))
    ));
}

/// The fast_cody fish: weights given on the surface only are extended to all 10,000 tet
/// vertices, non-negative with rows summing to one; frame 0 is the rest pose.
#[test]
fn cd_fish_weights_are_extended_inward() {
    let rig = examples_data("fast-complementary-dynamics/cd_fish/cd_fish_rig.json");
    let sc = load_scene(&rig).unwrap();
    assert_eq!((sc.mesh.n_vertices(), sc.n_bones, sc.frames.len()), (10_000, 2, 241));
    for row in sc.weights.chunks(2) {
        assert!(row.iter().all(|&w| w >= 0.0));
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    for (k, t) in sc.frames[0].iter().enumerate() {
        let want = if k % 4 == k / 4 % 3 { 1.0 } else { 0.0 };
        assert!((t - want).abs() < 1e-6, "frame 0 entry {k} = {t}");
    }
}
