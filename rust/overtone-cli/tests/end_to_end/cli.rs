//! End-to-end checks of the `overtone` binary.

use crate::bin;
use crate::paths::{examples_data, reference_data, reference_file, tmpdir};

/// `overtone run` writes a PC2 with every frame (the first included) and a report whose every
/// frame meets the constraint bound; two runs give byte-identical caches.
#[test]
fn run_writes_deterministic_cache_and_report() {
    let dir = tmpdir("run");
    let mut caches = Vec::new();
    for k in 0..2 {
        let pc2 = dir.join(format!("beam{k}.pc2"));
        let rep = dir.join(format!("beam{k}.json"));
        let out = bin()
            .args(["run", "metronome", "--solver", "full", "--out"])
            .arg(&pc2)
            .arg("--report")
            .arg(&rep)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let bytes = std::fs::read(&pc2).unwrap();
        assert_eq!(&bytes[..12], b"POINTCACHE2\0");
        let points = i32::from_le_bytes(bytes[16..20].try_into().unwrap());
        let samples = i32::from_le_bytes(bytes[28..32].try_into().unwrap());
        assert_eq!((points, samples), (200, 201));
        assert_eq!(bytes.len(), 32 + 200 * 201 * 12);
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        let frames = report["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 201);
        for f in frames {
            assert!(f["relative_residual"].as_f64().unwrap() <= 1e-10);
        }
        assert_eq!(report["summary"]["vertices"], 200);
        assert_plain_json(&report, "run", "report");
        caches.push(bytes);
    }
    assert!(caches[0] == caches[1], "two runs differ");
}

/// A broken scene exits non-zero with a message and leaves no output file behind.
#[test]
fn bad_scene_fails_cleanly() {
    let dir = tmpdir("bad");
    let scene = dir.join("broken.json");
    std::fs::write(&scene, r#"{"format": "overtone-scene/1", "dim": 2, "vertices": [[0,0],[1,0],[0,1]], "elements": [[0,2,1]], "weights": [[1],[1],[1]], "frames": [[[1,0,0,0,1,0]]], "material": {"model": "arap", "youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 1000}, "dt": 0.01}"#).unwrap();
    let pc2 = dir.join("out.pc2");
    let out = bin().arg("run").arg(&scene).arg("--out").arg(&pc2).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("inverted"), "{err}");
    assert!(!err.contains("panicked"));
    assert!(!pc2.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "stray files left behind");

    let out = bin()
        .args(["run", "metronome", "--out"])
        .arg(dir.join("no/such/dir/x.pc2"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}

/// A scene with `"examples"` runs example-aware complementary dynamics: the report says so,
/// every frame keeps the relative constraint residual ≤ 1e-8, and the motion differs from the
/// same scene without examples. An example of the wrong size is refused with its index named.
#[test]
fn scene_examples_drive_example_aware_cd() {
    let dir = tmpdir("examples");
    let plain = dir.join("plain.json");
    let out = bin()
        .args(["export", "metronome:20x4", "--out"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut scene: serde_json::Value = serde_json::from_slice(&std::fs::read(&plain).unwrap()).unwrap();
    // A bent beam: x += 0.05 y² (the beam stands along y, centred at the origin).
    let bent: Vec<serde_json::Value> = scene["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let (x, y) = (v[0].as_f64().unwrap(), v[1].as_f64().unwrap());
            serde_json::json!([x + 0.05 * y * y, y])
        })
        .collect();
    scene["examples"] = serde_json::json!([bent]);
    scene["example_beta"] = serde_json::json!(0.9);
    scene["example_manifold"] = serde_json::json!("per-element");
    let with = dir.join("with.json");
    std::fs::write(&with, serde_json::to_vec(&scene).unwrap()).unwrap();
    let mut maxima = Vec::new();
    for (name, path) in [("plain", &plain), ("with", &with)] {
        let rep = dir.join(format!("{name}-report.json"));
        let out = bin()
            .arg("run")
            .arg(path)
            .arg("--out")
            .arg(dir.join(format!("{name}.pc2")))
            .arg("--report")
            .arg(&rep)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        let s = &report["summary"];
        assert!(s["max_relative_residual"].as_f64().unwrap() <= 1e-8, "{name}: {s}");
        assert_eq!(s["examples"], if name == "with" { 1 } else { 0 });
        maxima.push(s["max_displacement"].as_f64().unwrap());
    }
    assert!((maxima[0] - maxima[1]).abs() > 1e-6 * maxima[0], "{maxima:?}");
    scene["examples"] = serde_json::json!([[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]]);
    std::fs::write(&with, serde_json::to_vec(&scene).unwrap()).unwrap();
    let out = bin()
        .arg("run")
        .arg(&with)
        .arg("--out")
        .arg(dir.join("bad.pc2"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("examples[0] has 3 vertices"), "{err}");
}

/// `overtone bake` on a glTF character writes a PC2 with the file's own vertex count and one
/// sample per frame, an MDD with the same data, a preview PNG, a report, and a sidecar that a
/// second bake loads.
#[test]
fn bake_gltf_writes_caches_preview_and_reuses_the_sidecar() {
    let dir = tmpdir("bake");
    let glb = examples_data("khronos-gltf-sample-assets/RiggedSimple.glb");
    let (pc2, mdd, png, rep, ovt) = (
        dir.join("s.pc2"),
        dir.join("s.mdd"),
        dir.join("s.png"),
        dir.join("s.json"),
        dir.join("s.ovt"),
    );
    for round in 0..2 {
        let out = bin()
            .arg("bake")
            .arg(&glb)
            .arg("--out")
            .arg(&pc2)
            .arg("--mdd")
            .arg(&mdd)
            .arg("--preview")
            .arg(&png)
            .arg("--report")
            .arg(&rep)
            .arg("--sidecar")
            .arg(&ovt)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let bytes = std::fs::read(&pc2).unwrap();
        let points = i32::from_le_bytes(bytes[16..20].try_into().unwrap());
        let samples = i32::from_le_bytes(bytes[28..32].try_into().unwrap());
        assert_eq!(points, 160);
        assert_eq!(bytes.len(), 32 + 12 * points as usize * samples as usize);
        let m = std::fs::read(&mdd).unwrap();
        assert_eq!(i32::from_be_bytes(m[..4].try_into().unwrap()), samples);
        assert_eq!(i32::from_be_bytes(m[4..8].try_into().unwrap()), points);
        assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        assert!(report["max_relative_residual"].as_f64().unwrap() <= 1e-8);
        assert_eq!(report["dynamics"]["rig_interpolation"], "smooth");
        assert_plain_json(&report, "bake", "report");
        let sidecar = report["sidecar"].as_str().unwrap();
        if round == 0 {
            assert!(sidecar.starts_with("rebuilt"), "{sidecar}");
        } else {
            assert_eq!(sidecar, "loaded from sidecar");
        }
    }
}

/// `--rig-interpolation linear` is taken and reported; an unknown value is refused before any
/// work, naming the accepted values.
#[test]
fn bake_takes_the_rig_interpolation_flag_and_refuses_unknown_values() {
    let dir = tmpdir("riginterp");
    let glb = examples_data("khronos-gltf-sample-assets/RiggedSimple.glb");
    let (pc2, rep) = (dir.join("s.pc2"), dir.join("s.json"));
    let out = bin()
        .arg("bake")
        .arg(&glb)
        .args(["--frames", "0..3", "--rig-interpolation", "linear", "--out"])
        .arg(&pc2)
        .arg("--report")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(report["dynamics"]["rig_interpolation"], "linear");
    let out = bin()
        .arg("bake")
        .arg(&glb)
        .args(["--rig-interpolation", "cubic", "--out"])
        .arg(dir.join("t.pc2"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("linear") && err.contains("smooth"), "{err}");
    assert!(!dir.join("t.pc2").exists());
}

/// `bake SCENE --surface FILE.obj` on the reference elephant: the cache has one point per `.obj`
/// vertex (635), and its frame 0 (the rig pose of frame 100, where the bake starts at rest) equals
/// the rig pose of the tet vertices (a bake without `--surface`) carried to each display vertex
/// inside a tet by barycentric coordinates the test finds by brute force, in the `.obj`'s units
/// (normalisation recomputed from the `.mesh`), to f32 precision (2e-6 of the model size). A
/// surface moved far from the mesh is refused without writing a cache.
#[test]
fn bake_scene_onto_its_display_surface() {
    let dir = tmpdir("surface");
    let base = reference_data("elephant");
    let (scene, obj) = (base.join("elephant.json"), base.join("elephant.obj"));
    let (with, without, report) = (dir.join("surface.pc2"), dir.join("tets.pc2"), dir.join("r.json"));
    for (out, surface) in [(&with, true), (&without, false)] {
        let mut cmd = bin();
        cmd.args([
            "bake",
            scene.to_str().unwrap(),
            "--frames",
            "100..103",
            "--solver",
            "full",
            "--out",
        ])
        .arg(out);
        if surface {
            cmd.arg("--surface").arg(&obj).arg("--report").arg(&report);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let obj_text = std::fs::read_to_string(&obj).unwrap();
    let obj_v: Vec<[f64; 3]> = obj_text
        .lines()
        .filter(|l| l.starts_with("v "))
        .map(|l| {
            let x: Vec<f64> = l.split_whitespace().skip(1).map(|t| t.parse().unwrap()).collect();
            [x[0], x[1], x[2]]
        })
        .collect();
    let pc = overtone::io::read_pc2(&with).unwrap();
    let tets = overtone::io::read_pc2(&without).unwrap();
    assert_eq!((pc.num_points, pc.num_samples()), (obj_v.len(), 4));
    assert_eq!(pc.num_points, 635);
    // The reference normalisation, from the .mesh itself.
    let mesh = overtone::io::read_medit(&base.join("elephant.mesh")).unwrap();
    let nv = mesh.vertices.len() / 3;
    let mut centre = [0.0; 3];
    for i in 0..3 {
        let c = (0..nv).map(|v| mesh.vertices[3 * v + i]);
        centre[i] = 0.5 * (c.clone().fold(f64::NEG_INFINITY, f64::max) + c.fold(f64::INFINITY, f64::min));
    }
    let scale = (0..3 * nv)
        .map(|k| (mesh.vertices[k] - centre[k % 3]).abs())
        .fold(0.0, f64::max);
    let rest = |v: usize| -> [f64; 3] { std::array::from_fn(|i| (mesh.vertices[3 * v + i] - centre[i]) / scale) };
    let mut checked = 0;
    for (s, x) in obj_v.iter().enumerate() {
        let p: [f64; 3] = std::array::from_fn(|i| (x[i] - centre[i]) / scale);
        let found = mesh.tetrahedra.chunks_exact(4).find_map(|t| {
            let [a, b, c, d] = [rest(t[0]), rest(t[1]), rest(t[2]), rest(t[3])];
            let m = [
                [b[0] - a[0], c[0] - a[0], d[0] - a[0]],
                [b[1] - a[1], c[1] - a[1], d[1] - a[1]],
                [b[2] - a[2], c[2] - a[2], d[2] - a[2]],
            ];
            let r = [p[0] - a[0], p[1] - a[1], p[2] - a[2]];
            let det = |m: [[f64; 3]; 3]| {
                m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                    + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
            };
            let l: Vec<f64> = (0..3)
                .map(|col| {
                    let mut mc = m;
                    for row in 0..3 {
                        mc[row][col] = r[row];
                    }
                    det(mc) / det(m)
                })
                .collect();
            let bc = [1.0 - l[0] - l[1] - l[2], l[0], l[1], l[2]];
            bc.iter().all(|&w| w >= -1e-10).then(|| (t.to_vec(), bc))
        });
        let Some((t, bc)) = found else { continue };
        checked += 1;
        for i in 0..3 {
            let posed: f64 = (0..4).map(|k| bc[k] * tets.positions[3 * t[k] + i] as f64).sum();
            let expected = centre[i] + scale * posed;
            let got = pc.positions[3 * s + i] as f64;
            assert!(
                (got - expected).abs() <= 2e-6 * scale,
                "vertex {s}: {got} vs {expected}"
            );
        }
    }
    assert!(checked >= 350, "only {checked} display vertices inside a tet");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["display_surface"]["vertices"], 635);
    assert_eq!(
        r["display_surface"]["outside_tet_mesh"].as_u64().unwrap() as usize + checked,
        635
    );

    // Far away: refused, nothing written.
    let far = dir.join("far.obj");
    let shifted: String = obj_text
        .lines()
        .map(|l| {
            if let Some(rest) = l.strip_prefix("v ") {
                let x: Vec<f64> = rest.split_whitespace().map(|t| t.parse().unwrap()).collect();
                format!("v {} {} {}\n", x[0] + 500.0, x[1], x[2])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&far, shifted).unwrap();
    let out = dir.join("far.pc2");
    let o = bin()
        .args(["bake", scene.to_str().unwrap(), "--frames", "0..2", "--out"])
        .arg(&out)
        .arg("--surface")
        .arg(&far)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("from the tet mesh"), "{err}");
    assert!(!out.exists());
    // A glTF character always writes its own mesh: --surface is refused.
    let glb = examples_data("khronos-gltf-sample-assets/RiggedSimple.glb");
    let o = bin()
        .arg("bake")
        .arg(&glb)
        .arg("--out")
        .arg(&out)
        .arg("--surface")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--surface"));
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A bake report's largest surface displacement per frame (after the first).
fn max_surface_displacements(report: &serde_json::Value) -> Vec<f64> {
    report["per_frame"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["max_surface_displacement"].as_f64().unwrap())
        .collect()
}

/// A report starts with `schema_version` 1 and `kind`, and no string in it is a Rust `Debug`
/// rendering (`Name { … }`, `Some(…)`, `None`): reports are JSON all the way down.
fn assert_plain_json(report: &serde_json::Value, kind: &str, at: &str) {
    assert_eq!(report["schema_version"], 1, "{at}: schema_version");
    assert_eq!(report["kind"], kind, "{at}: kind");
    fn walk(v: &serde_json::Value, at: &str) {
        match v {
            serde_json::Value::String(s) => {
                let debug_struct = s.split_once(" { ").is_some_and(|(name, _)| {
                    !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric())
                        && name.starts_with(char::is_uppercase)
                });
                assert!(
                    !(debug_struct || s.starts_with("Some(") || s == "None"),
                    "{at}: a Debug string {s:?}"
                );
            }
            serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| walk(x, &format!("{at}[{i}]"))),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| walk(x, &format!("{at}.{k}"))),
            _ => {}
        }
    }
    walk(report, at);
}

fn read_pc2(path: &std::path::Path) -> (usize, usize, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let points = i32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let samples = i32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
    let data = bytes[32..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (points, samples, data)
}

/// The two-mesh robot (Body: 20 capsules, Joints: 25 spheres, one skin): by default both meshes
/// bake as one body into `<node name>.pc2` in the `--out` folder (created), the vertex counts
/// add up to the file's, every piece has its own lattice copy (45 pieces), the contract holds,
/// and frame 0 of each cache is its mesh at rest in the rig's first pose (no jump; the same
/// positions a one-mesh `--mesh Joints` bake starts from). An unknown `--mesh` name stops with
/// the available names and writes nothing.
#[test]
fn bake_every_skinned_mesh_into_a_folder() {
    let dir = tmpdir("meshes");
    let glb = examples_data("characters/robot.glb");
    let folder = dir.join("caches");
    let rep = dir.join("r.json");
    // `overtone bake` of the robot at a coarse lattice, for 13 frames, of `--mesh` (all meshes
    // when `None`) into `out`.
    let bake = |mesh: Option<&str>, out: &std::path::Path| {
        let mut cmd = bin();
        cmd.arg("bake").arg(&glb);
        if let Some(m) = mesh {
            cmd.arg("--mesh").arg(m);
        }
        cmd.arg("--out")
            .arg(out)
            .args(["--lattice-resolution", "24", "--frames", "0..12"]);
        cmd
    };
    let out = bake(None, &folder).arg("--report").arg(&rep).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (nb, sb, body) = read_pc2(&folder.join("Body.pc2"));
    let (nj, sj, joints) = read_pc2(&folder.join("Joints.pc2"));
    assert_eq!((sb, sj), (13, 13));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(report["points"].as_u64().unwrap() as usize, nb + nj);
    assert_eq!(report["lattice"]["surface_pieces"].as_u64().unwrap(), 45);
    assert!(report["max_relative_residual"].as_f64().unwrap() <= 1e-8);
    let caches = report["caches"].as_array().unwrap();
    assert_eq!(caches[0]["file"], "Body.pc2");
    assert_eq!(caches[1]["first_vertex"].as_u64().unwrap() as usize, nb);
    // The one-mesh bake of Joints starts from the same rig pose.
    let single = dir.join("joints.pc2");
    let out = bake(Some("Joints"), &single).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (n1, _, alone) = read_pc2(&single);
    assert_eq!(n1, nj);
    let diag = 2.0; // the robot is about 2 m tall
    for (a, b) in alone[..3 * nj].iter().zip(&joints[..3 * nj]) {
        assert!((a - b).abs() <= 1e-6 * diag, "frame 0 differs: {a} vs {b}");
    }
    assert!(body.iter().all(|x| x.is_finite()));
    // `--out` without an extension names a folder (created) even for one mesh: it holds
    // `Joints.pc2`, the same bytes as the one-file bake.
    let named = dir.join("joints_only");
    let out = bake(Some("Joints"), &named).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        std::fs::read(named.join("Joints.pc2")).unwrap() == std::fs::read(&single).unwrap(),
        "the folder's Joints.pc2 differs from the one-file bake"
    );
    // A scene bakes one mesh: a folder `--out` is refused before anything is computed.
    let scene = reference_file("elephant", "json");
    let scene_folder = dir.join("scene_caches");
    let out = bin()
        .arg("bake")
        .arg(&scene)
        .arg("--out")
        .arg(&scene_folder)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("names a folder") && msg.contains("nothing was computed"),
        "{msg}"
    );
    assert!(!scene_folder.exists());
    // Unknown mesh.
    let bad = dir.join("bad.pc2");
    let out = bake(Some("Nope"), &bad).output().unwrap();
    assert!(!out.status.success());
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("Body, Joints"), "{msg}");
    assert!(!bad.exists());
}

/// `--max-displacement` reaches the bake: with a limit below the unlimited peak, every frame's
/// largest displacement is the unlimited one's or the limit, whichever is smaller (one limit for
/// the whole bake, to round-off), so the peak is the limit; the rig and the residual are untouched.
#[test]
fn bake_limits_the_displacement_to_max_displacement() {
    let dir = tmpdir("bake-max-displacement");
    let glb = examples_data("khronos-gltf-sample-assets/RiggedSimple.glb");
    let per_frame = |extra: &[&str], name: &str| -> Vec<f64> {
        let rep = dir.join(format!("{name}.json"));
        let out = bin()
            .arg("bake")
            .arg(&glb)
            .arg("--out")
            .arg(dir.join(format!("{name}.pc2")))
            .arg("--report")
            .arg(&rep)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        assert!(report["max_relative_residual"].as_f64().unwrap() <= 1e-8);
        max_surface_displacements(&report)
    };
    let free = per_frame(&[], "free");
    let peak = free.iter().cloned().fold(0.0, f64::max);
    assert!(peak > 0.0);
    // A limit of 1e-4 of the diagonal: far below this clip's peak.
    let limited = per_frame(&["--max-displacement", "1e-4"], "limited");
    let limit = limited.iter().cloned().fold(0.0, f64::max);
    assert!(
        limit < 0.5 * peak,
        "the limit {limit:.3e} must bite (free peak {peak:.3e})"
    );
    for (k, (a, b)) in free.iter().zip(&limited).enumerate() {
        let want = a.min(limit);
        assert!(
            (b - want).abs() <= 1e-9 * peak,
            "frame {k}: {b:.6e}, want min({a:.6e}, {limit:.6e})"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The dynamics flags of `run` and `bake` are the settings table's scene rows: every row is a
/// flag of both commands, with its range and default in the help; a value outside the range
/// is refused naming the setting before anything is simulated; a solver the scene's material
/// does not run is refused naming both.
#[test]
fn dynamics_flags_come_from_the_settings_table() {
    let rows: Vec<&overtone::settings::Spec> = overtone::scene::scene_rows().collect();
    assert!(rows.len() >= 10, "{} scene rows", rows.len());
    for command in ["run", "bake"] {
        let out = bin().args([command, "--help"]).output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        for spec in &rows {
            let flag = format!("--{} <VALUE>", spec.flag());
            assert!(help.contains(&flag), "{command} --help lacks {flag}");
            let default = format!("Default: {}.", spec.format(&spec.default_value()));
            assert!(
                help.contains(&default),
                "{command} --help lacks `{default}` for {}",
                spec.name
            );
        }
    }
    let dir = tmpdir("table-flags");
    let out_path = dir.join("beam.pc2");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "metronome:20x3", "--out", out_path.to_str().unwrap(), "--force"];
        args.extend_from_slice(extra);
        bin().args(&args).output().unwrap()
    };
    let bad = run(&["--damping", "-0.5"]);
    assert!(!bad.status.success());
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.contains("damping") && msg.contains("0 to 10"), "{msg}");
    assert!(!out_path.exists(), "a refused flag must not write the cache");
    let bad = run(&["--solver", "newton"]);
    assert!(!bad.status.success());
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.contains("arap") && msg.contains("newton"), "{msg}");
    let ok = run(&[
        "--damping",
        "0.3",
        "--cut-distance",
        "never",
        "--solver",
        "local-global",
    ]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

/// `overtone bench --bind` times every stage of a cold bind and of a warm one from the sidecar
/// the cold one wrote: the warm bind loads the reduced model instead of computing eigenmodes.
#[test]
fn bench_bind_table_reuses_the_cold_binds_sidecar() {
    let glb = examples_data("khronos-gltf-sample-assets/RiggedSimple.glb");
    let out = bin()
        .args(["bench", "--repeats", "1", "--bind"])
        .arg(&glb)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("(warm: loaded from sidecar)"), "{table}");
    let row = |stage: &str| -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| {stage} |")))
            .unwrap_or_else(|| panic!("no {stage} row in\n{table}"));
        line.split('|')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    // Cold computes the eigenmodes; warm does not (it has no such stage).
    let eig = row("precompute: skinning eigenmodes and clusters");
    assert!(eig[1].parse::<f64>().unwrap() > 0.0 && eig[2] == "—", "{eig:?}");
    assert_eq!(row("precompute: reduced model (sidecar)")[1], "—");
}

/// `--strength` scales a character bake's secondary motion (the surface read at its embedded
/// points): twice the strength, twice the displacement of every frame (to round-off, with the
/// `max_displacement` limit off). On a coarse lattice (fewer lattice vertices than surface
/// points, so the surface is interpolated from the lattice's reconstruction; this panicked
/// when the strength scaled positions the run does not have).
#[test]
fn strength_scales_a_character_bakes_motion() {
    let dir = tmpdir("strength");
    let glb = examples_data("khronos-gltf-sample-assets/CesiumMan.glb");
    let motion = |strength: &str| -> Vec<f64> {
        let rep = dir.join(format!("s{strength}.json"));
        let out = bin()
            .arg("bake")
            .arg(&glb)
            .args([
                "--frames",
                "0..12",
                "--max-displacement",
                "none",
                "--strength",
                strength,
                "--out",
            ])
            .arg(dir.join(format!("s{strength}.pc2")))
            .arg("--report")
            .arg(&rep)
            .arg("--sidecar")
            .arg(dir.join("s.ovt"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        max_surface_displacements(&report)
    };
    let (one, two) = (motion("1"), motion("2"));
    let peak = one.iter().cloned().fold(0.0, f64::max);
    assert!(peak > 0.0, "the character must move");
    for (a, b) in one.iter().zip(&two) {
        assert!((b - 2.0 * a).abs() <= 1e-9 * peak, "strength 2: {b} against 2 × {a}");
    }
}
