//! `fast_cody` characters: the input is the gmsh mesh, the rig JSON and the animation JSON,
//! separated by the bytes `\n%%\n` (the mesh may be binary).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fn split<'a>(data: &'a [u8], sep: &[u8]) -> (&'a [u8], &'a [u8]) {
    match data.windows(sep.len()).position(|w| w == sep) {
        Some(i) => (&data[..i], &data[i + sep.len()..]),
        None => (data, &[]),
    }
}

fuzz_target!(|data: &[u8]| {
    let sep = b"\n%%\n";
    let (mesh, rest) = split(data, sep);
    let (rig, anim) = split(rest, sep);
    let (rig, anim) = (String::from_utf8_lossy(rig), String::from_utf8_lossy(anim));
    if let Ok(s) = overtone::scene::parse_fast_cody_scene(
        Path::new("fuzz.msh"),
        mesh,
        Path::new("fuzz_rig.json"),
        &rig,
        Path::new("fuzz_rig_anim__x.json"),
        &anim,
    ) {
        s.validate().expect("a scene the reader returns is valid");
    }
});
