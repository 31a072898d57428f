//! libigl ASCII `.dmat` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = overtone::io::parse_dmat(Path::new("fuzz.dmat"), &text) {
        assert_eq!(m.data.len(), m.rows * m.cols);
        assert!(m.data.iter().all(|x| x.is_finite()));
    }
});
