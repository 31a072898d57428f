//! Skeleton animation of the reference release (`*_anim.txt` with a skeleton `.tgf`). The first
//! byte picks the skeleton: bits 0–2 the number of bones (0–7), bit 3 a chain or a star, bit 4
//! a cycle (a bone hierarchy the reader must refuse).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else { return };
    let nb = (k & 7) as usize;
    let chain = k & 8 != 0;
    let cycle = k & 16 != 0;
    let joints: Vec<f64> = (0..3 * (nb + 1)).map(|i| 0.1 * i as f64).collect();
    let mut bones: Vec<(usize, usize)> = (0..nb).map(|b| if chain { (b, b + 1) } else { (0, b + 1) }).collect();
    if cycle && nb > 1 {
        bones[0] = (nb, 1);
    }
    let text = String::from_utf8_lossy(rest);
    if let Ok(a) = overtone::io::parse_skeleton_anim(Path::new("fuzz_anim.txt"), &text, &joints, &bones, 2.0) {
        assert_eq!(a.parents.len(), nb);
        assert!(a.frames.iter().all(|f| f.len() == 12 * nb));
    }
});
