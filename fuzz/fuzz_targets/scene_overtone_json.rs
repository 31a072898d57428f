//! Overtone's own scene format (`overtone-scene/1` JSON).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(s) = overtone::scene::read_overtone_scene(Path::new("fuzz.json"), text) {
        s.validate().expect("a scene the reader returns is valid");
        let again = overtone::scene::scene_to_json(&s);
        overtone::scene::read_overtone_scene(Path::new("again.json"), &again).expect("a written scene reads back");
    }
});
