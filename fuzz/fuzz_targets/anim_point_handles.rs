//! Point-handle animation of the reference release (`*_anim.txt` with a point-handle `.tgf`).
//! The first byte picks the number of handles (0–7) the animation must match.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else { return };
    let k = (k % 8) as usize;
    let handles: Vec<f64> = (0..3 * k).map(|i| 0.25 * i as f64 - 0.5).collect();
    let text = String::from_utf8_lossy(rest);
    if let Ok(frames) = overtone::io::parse_point_handle_anim(Path::new("fuzz_anim.txt"), &text, &handles, 0.5) {
        assert!(frames.iter().all(|f| f.len() == 12 * k));
    }
});
