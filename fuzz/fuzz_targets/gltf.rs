//! glTF 2.0 skinned-character reader (`.glb`, or `.gltf` JSON; external buffers resolve
//! beside a path that does not exist, so they are refused).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/nonexistent-overtone-fuzz/fuzz.glb");
    if let Ok(c) = overtone::io::parse_gltf_character(path, data, None, 24.0) {
        let n = c.vertices.len() / 3;
        assert_eq!(c.weights.len(), n * c.n_joints);
        assert!(c.triangles.iter().all(|&i| i < n));
        assert!(c
            .frames
            .iter()
            .all(|f| f.len() == 12 * c.n_joints && f.iter().all(|x| x.is_finite())));
    }
});
