//! No output ever destroys an input: every output flag of `run`, `bake` and `export`, pointed at
//! the input directly, through `sub/../`, through a symlink or a hard link, at an existing
//! folder, at another output of the same command, or at a foreign file without `--force`, is
//! refused before any work with a message naming both paths; the input and every file in the
//! folder stay byte-identical and nothing new appears.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bin;
use crate::paths::{examples_data, tmpdir};

/// Every regular file under `dir` (symlinks as their target text) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p.clone());
                out.insert(p, b"<dir>".to_vec());
            } else if t.is_symlink() {
                out.insert(
                    p.clone(),
                    std::fs::read_link(&p)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes(),
                );
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn checksum(bytes: &[u8]) -> String {
    overtone::cache::payload_checksum(bytes)[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Case {
    label: String,
    args: Vec<String>,
    needle: &'static str,
}

/// Runs every case in `dir` (whose `input` is the command's input): each must exit non-zero
/// with a message containing its needle and both paths' names, leaving the folder unchanged.
fn refuse_all(dir: &Path, command: &str, input: &Path, cases: &[Case]) {
    for c in cases {
        let before = snapshot(dir);
        let sum = checksum(&std::fs::read(input).unwrap());
        let out = bin().current_dir(dir).args(&c.args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let after = snapshot(dir);
        let sum_after = checksum(&std::fs::read(input).unwrap());
        eprintln!(
            "| {command} | {} | {:?} | {sum} | {sum_after} | {} |",
            c.label,
            out.status.code(),
            err.trim().lines().last().unwrap_or("")
        );
        assert!(!out.status.success(), "{command} {}: accepted", c.label);
        assert!(
            err.contains(c.needle),
            "{command} {}: message lacks {:?}: {err}",
            c.label,
            c.needle
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(before == after, "{command} {}: the folder changed", c.label);
    }
}

/// The clashing-path cases for one output flag: the input itself, `sub/../input`, a symlink and
/// a hard link to it, an existing folder, and a foreign file (an OBJ) without `--force`.
fn flag_cases(base: &[&str], flag: &str, input_name: &str) -> Vec<Case> {
    let with = |label: &str, value: &str, needle: &'static str| {
        let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        // `base` already names the flag with a harmless value; replace it.
        match args.iter().position(|a| a == flag) {
            Some(k) => args[k + 1] = value.to_string(),
            None => args.extend([flag.to_string(), value.to_string()]),
        }
        Case {
            label: format!("{flag} {label}"),
            args,
            needle,
        }
    };
    vec![
        with("= input", input_name, "is the same file as the"),
        with(
            "= sub/../input",
            &format!("sub/../{input_name}"),
            "is the same file as the",
        ),
        with("= symlink to input", "link.out", "is the same file as the"),
        with("= hard link to input", "hard.out", "is the same file as the"),
        with("= existing folder", "sub", "is an existing folder"),
        with("= foreign file (OBJ), no --force", "foreign.obj", "pass --force"),
    ]
}

fn prepare(dir: &Path, input_name: &str, source: &Path) {
    std::fs::copy(source, dir.join(input_name)).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(input_name, dir.join("link.out")).unwrap();
    std::fs::hard_link(dir.join(input_name), dir.join("hard.out")).unwrap();
    std::fs::write(
        dir.join("foreign.obj"),
        "# a mesh\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    )
    .unwrap();
}

#[test]
fn bake_refuses_every_clashing_output() {
    let dir = tmpdir("safety-bake");
    prepare(
        &dir,
        "c.glb",
        &examples_data("khronos-gltf-sample-assets/RiggedSimple.glb"),
    );
    let base = ["bake", "c.glb", "--out", "ok.pc2"];
    let mut cases = Vec::new();
    for flag in ["--out", "--mdd", "--report", "--preview", "--sidecar"] {
        // `bake --out` may name a folder: it then holds one `<mesh>.pc2` per skinned mesh
        // (several meshes bound to one skeleton bake as one body), so an existing folder is a
        // valid `--out` there; every other output flag refuses it.
        cases.extend(
            flag_cases(&base, flag, "c.glb")
                .into_iter()
                .filter(|c| !(flag == "--out" && c.label.ends_with("existing folder"))),
        );
    }
    for other in ["--mdd", "--report", "--preview", "--sidecar"] {
        cases.push(Case {
            label: format!("--out x.pc2 {other} x.pc2"),
            args: ["bake", "c.glb", "--out", "x.pc2", other, "x.pc2"]
                .map(String::from)
                .to_vec(),
            needle: "name the same file",
        });
    }
    std::fs::write(dir.join("leak.json"), "[1.0]").unwrap();
    cases.push(Case {
        label: "--out = --leak input".into(),
        args: ["bake", "c.glb", "--out", "leak.json", "--leak", "./leak.json"]
            .map(String::from)
            .to_vec(),
        needle: "is the same file as the --leak input",
    });
    refuse_all(&dir, "bake", &dir.join("c.glb"), &cases);
    // A re-bake over the previous cache of the same kind is silent; --force replaces a foreign
    // file; the input is still the original.
    let ok = bin()
        .current_dir(&dir)
        .args(["bake", "c.glb", "--out", "ok.pc2"])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let again = bin()
        .current_dir(&dir)
        .args(["bake", "c.glb", "--out", "ok.pc2"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let forced = bin()
        .current_dir(&dir)
        .args(["bake", "c.glb", "--out", "ok.pc2", "--report", "foreign.obj", "--force"])
        .output()
        .unwrap();
    // (The report: `--out`'s extension must name a cache format, so `.obj` is no cache path.)
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert_eq!(std::fs::read(dir.join("foreign.obj")).unwrap()[0], b'{');
    assert!(
        std::fs::read(dir.join("c.glb")).unwrap()
            == std::fs::read(examples_data("khronos-gltf-sample-assets/RiggedSimple.glb")).unwrap()
    );
    // --force never lets an output replace an input.
    let out = bin()
        .current_dir(&dir)
        .args(["bake", "c.glb", "--out", "c.glb", "--force"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn run_and_export_refuse_every_clashing_output() {
    let dir = tmpdir("safety-run");
    let scene = dir.join("scene-src.json");
    let exported = bin()
        .args(["export", "metronome:12x3:5", "--out"])
        .arg(&scene)
        .output()
        .unwrap();
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let src = std::fs::read(&scene).unwrap();
    std::fs::remove_file(&scene).unwrap();
    std::fs::write(dir.join("s.json.src"), &src).unwrap();
    prepare(&dir, "s.json", &dir.join("s.json.src"));
    std::fs::remove_file(dir.join("s.json.src")).unwrap();
    let base = ["run", "s.json", "--out", "ok.pc2"];
    let mut cases = Vec::new();
    for flag in ["--out", "--report", "--sidecar"] {
        cases.extend(flag_cases(&base, flag, "s.json"));
    }
    cases.push(Case {
        label: "--out x.pc2 --report x.pc2".into(),
        args: ["run", "s.json", "--out", "x.pc2", "--report", "x.pc2"]
            .map(String::from)
            .to_vec(),
        needle: "name the same file",
    });
    refuse_all(&dir, "run", &dir.join("s.json"), &cases);
    let cases = flag_cases(&["export", "s.json", "--out", "ok.json"], "--out", "s.json");
    refuse_all(&dir, "export", &dir.join("s.json"), &cases);
    // Re-exporting over an earlier export is silent.
    for _ in 0..2 {
        let out = bin()
            .current_dir(&dir)
            .args(["export", "s.json", "--out", "e.json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(std::fs::read(dir.join("s.json")).unwrap() == src);
}

/// A reference-release scene's own files (its `.mesh`, weights, animation) are inputs too.
#[test]
fn outputs_onto_files_a_scene_refers_to_are_refused() {
    let elephant = examples_data("complementary-dynamics-cpp/elephant/elephant.json");
    let text = std::fs::read_to_string(&elephant).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mesh = elephant.parent().unwrap().join(v["mesh_file"].as_str().unwrap());
    let before = std::fs::read(&mesh).unwrap();
    let out = bin()
        .arg("run")
        .arg(&elephant)
        .arg("--out")
        .arg(&mesh)
        .arg("--force")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("the mesh_file of the input"),
        "{err}"
    );
    assert!(std::fs::read(&mesh).unwrap() == before);
}
