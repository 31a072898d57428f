//! Where the tests' input data are, and a fresh temporary folder per test.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// `examples/data/<rel>` of the repository.
pub fn examples_data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data")
        .join(rel)
}

/// A file of the Khronos glTF sample assets (`examples/data/khronos-gltf-sample-assets`).
pub fn khronos_asset(name: &str) -> PathBuf {
    examples_data("khronos-gltf-sample-assets").join(name)
}

/// `<rel>` in the reference release's data (`examples/data/complementary-dynamics-cpp`).
pub fn reference_data(rel: &str) -> PathBuf {
    examples_data("complementary-dynamics-cpp").join(rel)
}

/// The reference release's file `<name>/<name>.<ext>` (its scene with `ext = "json"`).
pub fn reference_file(name: &str, ext: &str) -> PathBuf {
    reference_data(name).join(format!("{name}.{ext}"))
}

/// An empty folder `overtone-test-<name>-<process id>` in the system's temporary folder (emptied
/// if a previous run left it). The tests of a binary run in one process, in parallel: each name
/// may be taken once per process, and a second request for it panics instead of sharing the
/// folder with another test.
pub fn tmpdir(name: &str) -> PathBuf {
    static TAKEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let fresh = TAKEN.lock().unwrap().insert(name.to_string());
    assert!(fresh, "tmpdir({name:?}) is taken by another test of this binary");
    let d = std::env::temp_dir().join(format!("overtone-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
