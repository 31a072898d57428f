//! Reference-release scenes: the input is the scene JSON, the MEDIT mesh, the TGF, the DMAT
//! weights and the animation, separated by lines `%%` (missing parts are empty files).
#![no_main]
use libfuzzer_sys::fuzz_target;
use overtone::scene::{NamedText, ReferenceSceneTexts};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split("\n%%\n");
    let mut next = || parts.next().unwrap_or("");
    let (json, mesh, tgf, dmat, anim) = (next(), next(), next(), next(), next());
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return;
    };
    let files = ReferenceSceneTexts {
        mesh: NamedText {
            path: Path::new("fuzz.mesh"),
            text: mesh,
        },
        handles: NamedText {
            path: Path::new("fuzz.tgf"),
            text: tgf,
        },
        weights: NamedText {
            path: Path::new("fuzz.dmat"),
            text: dmat,
        },
        anim: NamedText {
            path: Path::new("fuzz_anim.txt"),
            text: anim,
        },
    };
    if let Ok(s) = overtone::scene::parse_reference_scene(Path::new("fuzz.json"), &value, &files) {
        s.validate().expect("a scene the reader returns is valid");
    }
});
