//! gmsh `.msh` 2.2 reader (ASCII and binary).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = overtone::io::parse_gmsh(Path::new("fuzz.msh"), data) {
        assert_eq!(m.vertices.len() % 3, 0);
        assert_eq!(m.tetrahedra.len() % 4, 0);
        let n = m.vertices.len() / 3;
        assert!(m.tetrahedra.iter().all(|&i| i < n));
        assert!(m.vertices.iter().all(|x| x.is_finite()));
    }
});
