//! libigl `.tgf` reader.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(t) = overtone::io::parse_tgf(Path::new("fuzz.tgf"), &text) {
        assert_eq!(t.joints.len() % 3, 0);
        let k = t.joints.len() / 3;
        assert!(t.bones.iter().all(|&(a, b)| a < k && b < k));
        assert!(t.joints.iter().all(|x| x.is_finite()));
    }
});
