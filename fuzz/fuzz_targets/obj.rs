//! Wavefront `.obj` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = overtone::io::parse_obj(Path::new("fuzz.obj"), &text) {
        assert_eq!(m.vertices.len() % 3, 0);
        assert_eq!(m.triangles.len() % 3, 0);
        let n = m.vertices.len() / 3;
        assert!(m.triangles.iter().all(|&i| i < n));
    }
});
