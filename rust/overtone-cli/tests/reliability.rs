//! Outputs are atomic: an interrupted bake leaves the previous cache intact, and two processes
//! baking the same character to the same sidecar never corrupt it.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_overtone"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("overtone-rel-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn killed_bake_leaves_the_previous_cache_intact() {
    let dir = tmpdir("kill");
    let out = dir.join("beam.pc2");
    let ok = bin()
        .args(["run", "metronome:40x5:50", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(ok.status.success());
    let before = std::fs::read(&out).unwrap();
    // A long run to the same file, killed while it simulates.
    let mut child = bin()
        .args(["run", "metronome:180x10:100000", "--out"])
        .arg(&out)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(std::fs::read(&out).unwrap() == before, "the previous cache was damaged");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "stray files: {leftovers:?}");
}

#[test]
fn concurrent_bakes_share_a_sidecar_safely() {
    let dir = tmpdir("concurrent");
    let glb = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data/khronos-gltf-sample-assets/RiggedFigure.glb");
    let sidecar = dir.join("shared.ovt");
    let spawn = |k: usize| {
        bin()
            .arg("bake")
            .arg(&glb)
            .arg("--out")
            .arg(dir.join(format!("out{k}.pc2")))
            .arg("--sidecar")
            .arg(&sidecar)
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn(0), spawn(1));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    // The sidecar both wrote is complete and valid: a third bake loads it.
    let rep = dir.join("third.json");
    let third = bin()
        .arg("bake")
        .arg(&glb)
        .arg("--out")
        .arg(dir.join("out2.pc2"))
        .arg("--sidecar")
        .arg(&sidecar)
        .arg("--report")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(report["sidecar"], "loaded from sidecar");
    // All three caches are identical (same inputs, deterministic).
    let c0 = std::fs::read(dir.join("out0.pc2")).unwrap();
    assert!(c0 == std::fs::read(dir.join("out1.pc2")).unwrap());
    assert!(c0 == std::fs::read(dir.join("out2.pc2")).unwrap());
    let tmp: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left behind");
}
