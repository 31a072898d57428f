//! MEDIT `.mesh` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = overtone::io::parse_medit(Path::new("fuzz.mesh"), &text) {
        let n = m.vertices.len() / m.dim;
        assert_eq!(m.vertices.len() % m.dim, 0);
        assert!(m.tetrahedra.iter().chain(&m.triangles).all(|&i| i < n));
        assert!(m.vertices.iter().all(|x| x.is_finite()));
    }
});
