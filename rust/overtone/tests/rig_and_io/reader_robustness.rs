//! Regressions from fuzzing every reader (`scripts/fuzz.sh`), and a check that the fuzz corpus's
//! synthetic seeds are valid inputs (so the fuzzers start from files the readers accept).
//!
//! Each regression builds the smallest input that made a reader panic, hang or allocate without
//! bound before its fix, and asserts the typed error and what its message names.

use std::path::{Path, PathBuf};

use overtone::cache::{decode_sidecar, read_sidecar_header, record_checksum, CacheState, CacheStatus};
use overtone::dynamics::FastParams;
use overtone::dynamics::ReducedModel;
use overtone::io::{parse_gltf_character, parse_gmsh, parse_medit, parse_pc2, read_gltf_character};
use overtone::scene::{
    metronome_beam, parse_fast_cody_scene, parse_reference_scene, read_overtone_scene, simulate_with_sidecar,
    MetronomeBeam, NamedText, ReferenceSceneTexts, SolverKind,
};
use overtone::OvertoneError;
use serde_json::{json, Value};

use crate::common::paths::tmpdir;

fn corpus(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
        .join(name)
}

/// The JSON chunk and the BIN chunk of a GLB.
fn split_glb(b: &[u8]) -> (Value, Vec<u8>) {
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u32_at(12);
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bl = u32_at(20 + jl);
    (json, b[28 + jl..28 + jl + bl].to_vec())
}

fn make_glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut js = serde_json::to_vec(json).unwrap();
    while js.len() % 4 != 0 {
        js.push(b' ');
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + js.len() + 8 + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(js.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&js);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

fn tiny_glb() -> (Value, Vec<u8>) {
    split_glb(&std::fs::read(corpus("gltf", "tiny_skinned.glb")).unwrap())
}

/// Parses a modified tiny GLB and returns the parse error's message.
fn glb_error(edit: impl FnOnce(&mut Value, &mut Vec<u8>)) -> String {
    let (mut json, mut bin) = tiny_glb();
    edit(&mut json, &mut bin);
    let e = parse_gltf_character(Path::new("edited.glb"), &make_glb(&json, &bin), None, 24.0).unwrap_err();
    assert!(
        matches!(e, OvertoneError::File(overtone::FileError::Parse { .. })),
        "{e:?}"
    );
    e.to_string()
}

#[test]
fn malformed_gltf_accessors_and_indices_are_refused_not_panicked_on() {
    // The unedited seed reads: one triangle, two joints, 1 s of animation at 24 fps.
    let (json, bin) = tiny_glb();
    let c = parse_gltf_character(Path::new("tiny.glb"), &make_glb(&json, &bin), None, 24.0).unwrap();
    assert_eq!(
        (c.vertices.len(), c.triangles.len(), c.n_joints, c.frames.len()),
        (9, 3, 2, 25)
    );

    let ibm = json["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    let ibm_view = json["accessors"][ibm]["bufferView"].as_u64().unwrap() as usize;
    // Fuzz finding 1: a stride smaller than a 64-byte matrix (the gltf crate asserted).
    let m = glb_error(|j, _| j["bufferViews"][ibm_view]["byteStride"] = json!(16));
    assert!(
        m.contains("inverse bind matrices") && m.contains("byte stride 16"),
        "{m}"
    );
    // More elements than the view holds, a sparse accessor, a wrong element type.
    let m = glb_error(|j, _| j["accessors"][ibm]["count"] = json!(1000));
    assert!(m.contains("1000 elements") && m.contains("overrun"), "{m}");
    let m = glb_error(|j, _| {
        j["accessors"][ibm]["sparse"] =
            json!({"count": 1, "indices": {"bufferView": 0, "componentType": 5125}, "values": {"bufferView": 0}})
    });
    assert!(m.contains("sparse"), "{m}");
    let m = glb_error(|j, _| j["accessors"][ibm]["type"] = json!("VEC4"));
    assert!(m.contains("expected Mat4"), "{m}");
    // Fuzz finding 2: a channel targeting a node that does not exist (the crate unwrapped it).
    let m = glb_error(|j, _| j["animations"][0]["channels"][0]["target"]["node"] = json!(99));
    assert!(m.contains("targets node 99"), "{m}");
    let m = glb_error(|j, _| j["animations"][0]["channels"][0]["target"]["path"] = json!("spin"));
    assert!(m.contains("unknown property"), "{m}");
    // Fuzz finding 3: POSITION naming a missing accessor (the crate's validation indexed it).
    let m = glb_error(|j, _| j["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99));
    assert!(m.contains("uses accessor 99"), "{m}");
    // Key times spanning 1e30 s: the frame count used to wrap to 0 on conversion; now refused
    // with what to change.
    let times = j_accessor_offset(&json, 5);
    let m = glb_error(|_, b| b[times + 8..times + 12].copy_from_slice(&1e30f32.to_le_bytes()));
    assert!(m.contains("lower the frame rate"), "{m}");

    // Fuzz finding 4: a GLB header shorter than itself (the crate subtracted with overflow).
    let mut glb = make_glb(&json, &bin);
    glb[8..12].copy_from_slice(&4u32.to_le_bytes());
    let e = parse_gltf_character(Path::new("short.glb"), &glb, None, 24.0).unwrap_err();
    assert!(e.to_string().contains("fewer than the 12-byte header"), "{e}");
}

/// Byte offset in the BIN chunk of accessor `k` (the tiny seed's key times are accessor 5).
fn j_accessor_offset(json: &Value, k: usize) -> usize {
    let a = &json["accessors"][k];
    assert_eq!(a["type"], "SCALAR");
    let v = a["bufferView"].as_u64().unwrap() as usize;
    json["bufferViews"][v]["byteOffset"].as_u64().unwrap() as usize + a["byteOffset"].as_u64().unwrap_or(0) as usize
}

#[test]
fn a_gltf_buffer_naming_a_device_is_refused_instead_of_read_forever() {
    // Before: `std::fs::read` on the URI, so `/dev/zero` never returned.
    let (mut json, _) = tiny_glb();
    json["buffers"][0] = json!({"uri": "/dev/zero", "byteLength": 1000});
    let dir = tmpdir("devzero");
    let p = dir.join("device.gltf");
    std::fs::write(&p, serde_json::to_vec(&json).unwrap()).unwrap();
    let e = read_gltf_character(&p, None, 24.0).unwrap_err();
    assert!(
        matches!(e, OvertoneError::File(overtone::FileError::Io { .. })) && e.to_string().contains("regular file"),
        "{e}"
    );
    // A buffer file shorter than declared is refused before reading.
    std::fs::write(dir.join("short.bin"), [0u8; 10]).unwrap();
    json["buffers"][0] = json!({"uri": "short.bin", "byteLength": 1000});
    std::fs::write(&p, serde_json::to_vec(&json).unwrap()).unwrap();
    let e = read_gltf_character(&p, None, 24.0).unwrap_err();
    assert!(e.to_string().contains("holds 10 bytes"), "{e}");
}

#[test]
fn a_sidecar_with_a_valid_checksum_but_impossible_shapes_is_rebuilt() {
    // Before: the loader divided by the basis dimension stored in the payload, so a crafted
    // file (dimension 0, checksum recomputed) panicked. The checksum catches corruption, not a
    // file written to pass it.
    let dir = tmpdir("sidecar-shapes");
    let path = dir.join("beam.ovt");
    let sc = metronome_beam(MetronomeBeam {
        steps: 5,
        ..Default::default()
    })
    .unwrap();
    let kind = SolverKind::Fast(FastParams::default_for(2));
    let built = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let h = read_sidecar_header(&bytes).unwrap();
    // bincode's standard configuration: the payload starts with the basis dimension as a
    // one-byte varint.
    assert_eq!(bytes[h.header_len], 2);
    bytes[h.header_len] = 0;
    let sum = record_checksum(&h.kind, &h.key, &bytes[h.header_len..]);
    bytes[h.header_len - 32..h.header_len].copy_from_slice(&sum);
    std::fs::write(&path, &bytes).unwrap();
    let again = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    let status = again.fast.as_ref().unwrap().cache.to_string();
    assert_eq!(
        again.fast.as_ref().unwrap().cache.state(),
        CacheState::Unusable,
        "{status}"
    );
    assert!(
        status.starts_with("rebuilt (payload does not fit this body") && status.contains("skinning basis"),
        "{status}"
    );
    assert!(
        again.positions == built.positions,
        "the rebuilt model must give the same motion"
    );
    let loaded = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    assert_eq!(loaded.fast.unwrap().cache, CacheStatus::Loaded);
}

#[test]
fn the_synthetic_fuzz_seeds_are_valid_inputs() {
    let read = |t: &str, n: &str| std::fs::read(corpus(t, n)).unwrap();
    let text = |t: &str, n: &str| String::from_utf8(read(t, n)).unwrap();
    // The unit cube of five tetrahedra, in MEDIT and in both gmsh encodings.
    let m = parse_medit(Path::new("cube.mesh"), &text("medit", "cube.mesh")).unwrap();
    assert_eq!((m.vertices.len(), m.tetrahedra.len(), m.triangles.len()), (24, 20, 6));
    let a = parse_gmsh(Path::new("a.msh"), &read("gmsh", "cube_ascii.msh")).unwrap();
    let b = parse_gmsh(Path::new("b.msh"), &read("gmsh", "cube_binary.msh")).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.vertices, m.vertices);
    assert_eq!(a.tetrahedra, m.tetrahedra);
    let pc2 = parse_pc2(Path::new("p.pc2"), &read("pc2", "two_points.pc2")).unwrap();
    assert_eq!((pc2.num_points, pc2.num_samples()), (2, 2));
    // Scene bundles, split as the fuzz targets split them.
    for name in ["cube_handles.txt", "cube_skeleton.txt"] {
        let t = text("scene_reference", name);
        let parts: Vec<&str> = t.split("\n%%\n").collect();
        let json: Value = serde_json::from_str(parts[0]).unwrap();
        let named = |i: usize, p: &'static str| NamedText {
            path: Path::new(p),
            text: parts[i],
        };
        let files = ReferenceSceneTexts {
            mesh: named(1, "m.mesh"),
            handles: named(2, "h.tgf"),
            weights: named(3, "w.dmat"),
            anim: named(4, "a.txt"),
        };
        let s = parse_reference_scene(Path::new("s.json"), &json, &files).unwrap();
        assert_eq!((s.mesh.n_vertices(), s.frames.len()), (8, 2), "{name}");
    }
    for name in ["cube_ascii.txt", "cube_binary.txt"] {
        let b = read("scene_fast_cody", name);
        let sep = b"\n%%\n";
        let i = b.windows(4).position(|w| w == sep).unwrap();
        let rest = &b[i + 4..];
        let k = rest.windows(4).position(|w| w == sep).unwrap();
        let (rig, anim) = (
            std::str::from_utf8(&rest[..k]).unwrap(),
            std::str::from_utf8(&rest[k + 4..]).unwrap(),
        );
        let s = parse_fast_cody_scene(
            Path::new("c.msh"),
            &b[..i],
            Path::new("c_rig.json"),
            rig,
            Path::new("a.json"),
            anim,
        )
        .unwrap();
        assert_eq!((s.mesh.n_vertices(), s.n_bones, s.frames.len()), (8, 2, 2), "{name}");
    }
    // The sidecar seeds decode to a reduced model that fits the 8-vertex beam (one bone: 3 rig
    // columns per coordinate): the stored file with its own key, and the payload the harness
    // wraps in a fresh header.
    let file = read("sidecar", "beam_file.ovt");
    let key = read_sidecar_header(&file[1..]).unwrap().key;
    let m: ReducedModel = decode_sidecar(&file[1..], overtone::dynamics::FAST_PRECOMPUTE_KIND, &key).unwrap();
    m.check_shapes(2, 8, 3, 3, 0).unwrap();
    assert!(m.check_shapes(3, 8, 3, 3, 0).is_err() && m.check_shapes(2, 9, 3, 3, 0).is_err());
    let payload = read("sidecar", "beam_payload.bin");
    let h = read_sidecar_header(&file[1..]).unwrap();
    assert_eq!(&payload[1..], &file[1 + h.header_len..]);
    for name in ["beam.json", "beam_examples.json"] {
        let s = read_overtone_scene(Path::new(name), &text("scene_overtone_json", name)).unwrap();
        assert_eq!(s.mesh.n_vertices(), 8, "{name}");
    }
}

#[test]
fn repeated_mesh_blocks_are_refused_instead_of_read_into_a_wrong_mesh() {
    // Found reviewing the fuzz targets' invariants: a `Dimension` after `Vertices` re-read the
    // 24 coordinates of the cube as 12 2D vertices, a second `Vertices` block appended to the
    // first while indices were checked against the second's count, and a second gmsh `$Nodes`
    // section mapped its ids onto the first section's coordinates. All three are refused.
    let cube = std::fs::read_to_string(corpus("medit", "cube.mesh")).unwrap();
    let late_dim = cube.replace("Tetrahedra", "Dimension 2\nTetrahedra");
    let e = parse_medit(Path::new("late.mesh"), &late_dim).unwrap_err();
    assert!(e.to_string().contains("`Dimension` after `Vertices`"), "{e}");
    let block = &cube[cube.find("Vertices").unwrap()..cube.find("Tetrahedra").unwrap()];
    let twice = cube.replace("Tetrahedra", &format!("{block}Tetrahedra"));
    let e = parse_medit(Path::new("twice.mesh"), &twice).unwrap_err();
    assert!(e.to_string().contains("a second `Vertices` block"), "{e}");

    let msh = std::fs::read_to_string(corpus("gmsh", "cube_ascii.msh")).unwrap();
    let nodes = &msh[msh.find("$Nodes").unwrap()..msh.find("$Elements").unwrap()];
    let twice = msh.replace("$Elements", &format!("{nodes}$Elements"));
    let e = parse_gmsh(Path::new("twice.msh"), twice.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("a second $Nodes section"), "{e}");
    let elements = &msh[msh.find("$Elements").unwrap()..];
    let e = parse_gmsh(Path::new("twice.msh"), format!("{msh}{elements}").as_bytes()).unwrap_err();
    assert!(e.to_string().contains("a second $Elements section"), "{e}");
}

#[test]
fn animation_parsers_validate_the_rig_they_are_given() {
    use overtone::io::{parse_point_handle_anim, parse_skeleton_anim};
    // Before: a bone naming a missing joint indexed out of bounds (a panic), and a zero scale
    // divided the translations into NaN transforms.
    let text = "1 1\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n";
    let joints = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let p = Path::new("a.txt");
    let ok = parse_skeleton_anim(p, text, &joints, &[(0, 1)], 1.0).unwrap();
    assert_eq!(ok.frames.len(), 1);
    let e = parse_skeleton_anim(p, text, &joints, &[(0, 5)], 1.0).unwrap_err();
    assert!(e.to_string().contains("bone 0 = (0, 5)"), "{e}");
    let e = parse_skeleton_anim(p, text, &joints, &[(0, 1)], 0.0).unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
    let e = parse_point_handle_anim(p, "1 1\n0 0 0 0 0 0\n0 0 0 0 0 0\n", &[0.0, 1.0], 1.0).unwrap_err();
    assert!(
        matches!(e, OvertoneError::Input(overtone::InputError::Size { .. })),
        "{e:?}"
    );
    let e = parse_point_handle_anim(p, "1 1\n0 0 0 0 0 0\n0 0 0 0 0 0\n", &[0.0, 1.0, 0.0], f64::NAN).unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
}
