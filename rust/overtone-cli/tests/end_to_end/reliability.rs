//! Outputs are atomic: an interrupted bake leaves the previous cache intact, and two processes
//! baking the same character to the same sidecar never corrupt it.

use std::process::Command;
use std::time::Duration;

use crate::bin;
use crate::paths::{khronos_asset, tmpdir};

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
    let glb = khronos_asset("RiggedFigure.glb");
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

/// Ten bakes interrupted at pseudo-random moments (SIGTERM and SIGINT alternately, spread over
/// the precompute, the simulation and the writing of the five outputs, some after the end): each either stopped
/// (non-zero exit, "interrupted" on stderr) with every previous output byte-identical, or had
/// finished (every output the new one); never a mix, and never a temporary file left behind.
#[test]
fn interrupted_bakes_leave_every_previous_output_intact() {
    let dir = tmpdir("interrupt");
    let glb = khronos_asset("RiggedFigure.glb");
    let names = ["c.pc2", "c.mdd", "c.json", "c.png", "c.ovt"];
    let flags = ["--out", "--mdd", "--report", "--preview", "--sidecar"];
    let bake = |resolution: &str| {
        let mut c = bin();
        c.arg("bake").arg(&glb).args(["--lattice-resolution", resolution]);
        for (f, n) in flags.iter().zip(names) {
            c.arg(f).arg(dir.join(n));
        }
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        c
    };
    let read_all = || -> Vec<Vec<u8>> { names.iter().map(|n| std::fs::read(dir.join(n)).unwrap()).collect() };
    // The new bake, timed, gives the new outputs; the previous outputs are another resolution's.
    // (fastest of three runs: the other tests of this file may load the machine at first).
    let mut duration = Duration::MAX;
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        assert!(bake("28").status().unwrap().success());
        duration = duration.min(t0.elapsed());
    }
    let new = read_all();
    assert!(bake("24").status().unwrap().success());
    let old = read_all();
    assert!(
        old[0] != new[0] && old[4] != new[4],
        "old and new caches must differ for the test to mean anything"
    );
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut stopped = 0;
    for trial in 0..10 {
        for (n, bytes) in names.iter().zip(&old) {
            std::fs::write(dir.join(n), bytes).unwrap();
        }
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Seven moments inside the bake, three around its end (timing varies with the load).
        let u = (seed >> 33) as f64 / (1u64 << 31) as f64;
        let fraction = if trial % 3 == 2 { 0.9 + 0.4 * u } else { 0.05 + 0.65 * u };
        let signal = if trial % 2 == 0 { "TERM" } else { "INT" };
        let child = bake("28").spawn().unwrap();
        std::thread::sleep(duration.mul_f64(fraction));
        let _ = Command::new("kill")
            .args(["-s", signal])
            .arg(child.id().to_string())
            .status();
        let out = child.wait_with_output().unwrap();
        let now = read_all();
        let stray: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !names.contains(&n.as_str()))
            .collect();
        assert!(
            stray.is_empty(),
            "trial {trial} (SIG{signal} at {fraction:.2}): stray files {stray:?}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if now == old {
            assert!(!out.status.success(), "trial {trial}: exit 0 but nothing was written");
            // Killed before the handler was installed, a process has no message to print.
            assert!(
                out.status.code().is_none() || stderr.contains("interrupted by"),
                "trial {trial}: {stderr}"
            );
            stopped += 1;
        } else {
            // Finished before the signal: every output is the new one (the report has timings).
            assert!(
                now[0] == new[0] && now[1] == new[1] && now[3] == new[3] && now[4] == new[4],
                "trial {trial} (SIG{signal} at {fraction:.2}): a mix of old and new outputs"
            );
            assert!(now[2] != old[2], "trial {trial}: report not renewed");
        }
        eprintln!(
            "trial {trial}: SIG{signal} at {:.0}% of a bake: exit {:?}, {}",
            100.0 * fraction,
            out.status.code(),
            if now == old {
                "stopped, previous outputs byte-identical"
            } else {
                "had finished, every output new"
            }
        );
    }
    assert!(
        stopped >= 5,
        "only {stopped} of 10 bakes were interrupted: the test did not exercise interrupts"
    );
}
