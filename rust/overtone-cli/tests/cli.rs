//! End-to-end checks of the `overtone` binary.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_overtone"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("overtone-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

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
    let glb = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data/khronos-gltf-sample-assets/RiggedSimple.glb");
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
        let sidecar = report["sidecar"].as_str().unwrap();
        if round == 0 {
            assert!(sidecar.starts_with("rebuilt"), "{sidecar}");
        } else {
            assert_eq!(sidecar, "loaded from sidecar");
        }
    }
}
