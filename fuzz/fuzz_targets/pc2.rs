//! Point Cache 2 (`.pc2`) reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = overtone::io::parse_pc2(Path::new("fuzz.pc2"), data) {
        assert!(p.num_points > 0);
        assert_eq!(p.positions.len(), p.num_samples() * p.num_points * 3);
        assert_eq!(32 + 4 * p.positions.len(), data.len());
    }
});
