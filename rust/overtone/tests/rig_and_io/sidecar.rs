//! The precompute sidecar: loaded only when it matches every input, rebuilt otherwise, never
//! trusted when corrupt, and loading gives the same simulation as building.

use std::path::PathBuf;

use overtone::cache::{read_sidecar_header, CacheState, CacheStatus, FORMAT_VERSION};
use overtone::dynamics::FastParams;
use overtone::scene::{metronome_beam, simulate, simulate_with_sidecar, MetronomeBeam, SolverKind};

use crate::common::paths::tmpdir;

fn status(sim: &overtone::scene::Simulation) -> String {
    sim.fast.as_ref().unwrap().cache.to_string()
}

#[test]
fn sidecar_is_reused_only_for_identical_inputs() {
    let dir = tmpdir("reuse");
    let path = dir.join("beam.ovt");
    let sc = metronome_beam(MetronomeBeam {
        steps: 20,
        ..Default::default()
    })
    .unwrap();
    let fp = FastParams::default_for(2);
    let kind = SolverKind::Fast(fp);

    let built = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    assert!(
        status(&built).starts_with("rebuilt (no sidecar yet)"),
        "{}",
        status(&built)
    );
    assert_eq!(built.fast.as_ref().unwrap().cache.state(), CacheState::Built);
    let bytes = std::fs::read(&path).unwrap();
    let h = read_sidecar_header(&bytes).unwrap();
    assert_eq!(h.format_version, FORMAT_VERSION);
    assert_eq!(h.payload_len as usize, bytes.len() - h.header_len);

    let loaded = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    assert_eq!(status(&loaded), CacheStatus::Loaded.to_string());
    assert!(loaded.positions == built.positions, "loading changed the result");
    let plain = simulate(&sc, kind).unwrap();
    assert!(plain.positions == built.positions);

    // Any input the precompute depends on invalidates it: modes, leak field, material, time
    // step, mesh.
    let more_modes = SolverKind::Fast(FastParams { modes: 8, ..fp });
    let s = simulate_with_sidecar(&sc, more_modes, Some(&path)).unwrap();
    assert!(status(&s).contains("different inputs"), "{}", status(&s));
    let mut leak = sc.clone();
    leak.momentum_weights = Some(vec![1.0; sc.mesh.n_vertices()]);
    let s = simulate_with_sidecar(&leak, kind, Some(&path)).unwrap();
    assert!(status(&s).contains("different inputs"), "{}", status(&s));
    let other = metronome_beam(MetronomeBeam {
        w: 41,
        steps: 20,
        ..Default::default()
    })
    .unwrap();
    let s = simulate_with_sidecar(&other, kind, Some(&path)).unwrap();
    assert!(status(&s).contains("different inputs"), "{}", status(&s));
}

/// Truncated, bit-flipped, foreign and empty files are rebuilt, and the run gives the same
/// trajectory as a clean build.
#[test]
fn corrupt_sidecars_are_rebuilt() {
    let dir = tmpdir("corrupt");
    let path = dir.join("beam.ovt");
    let sc = metronome_beam(MetronomeBeam {
        steps: 10,
        ..Default::default()
    })
    .unwrap();
    let kind = SolverKind::Fast(FastParams::default_for(2));
    let clean = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
    let good = std::fs::read(&path).unwrap();
    let h = read_sidecar_header(&good).unwrap();
    let mut flipped = good.clone();
    let mid = h.header_len + (good.len() - h.header_len) / 2;
    flipped[mid] ^= 0xff;
    let mut wrong_version = good.clone();
    wrong_version[8] = 99;
    let variants: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() - 7].to_vec()),
        ("header only", good[..h.header_len].to_vec()),
        ("empty", Vec::new()),
        ("foreign", b"POINTCACHE2\0 not a sidecar at all".to_vec()),
        ("format version", wrong_version),
        ("bit flip", flipped),
    ];
    for (name, bytes) in variants {
        std::fs::write(&path, &bytes).unwrap();
        let sim = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
        let st = status(&sim);
        assert!(st.starts_with("rebuilt"), "{name}: {st}");
        assert!(sim.positions == clean.positions, "{name}: rebuilt result differs");
        // After the run the sidecar is valid again.
        let again = simulate_with_sidecar(&sc, kind, Some(&path)).unwrap();
        assert!(
            status(&again) == CacheStatus::Loaded.to_string(),
            "{name}: {}",
            status(&again)
        );
    }
}

/// An unwritable sidecar path does not stop the run; the status says why nothing was saved.
#[test]
fn unwritable_sidecar_is_reported() {
    let sc = metronome_beam(MetronomeBeam {
        steps: 3,
        ..Default::default()
    })
    .unwrap();
    let path = PathBuf::from("/nonexistent-overtone-dir/beam.ovt");
    let sim = simulate_with_sidecar(&sc, SolverKind::Fast(FastParams::default_for(2)), Some(&path)).unwrap();
    assert!(
        status(&sim).starts_with("built; sidecar not written"),
        "{}",
        status(&sim)
    );
}

/// A character's lattice preparation (lattice, embedding, weights carried in) is the sidecar's
/// second record: a second bind with the same surface reads it instead of embedding again and
/// bakes bit-identically; the solver's record beside it loads too; a different lattice
/// resolution setting is a different preparation. (RiggedSimple, a glTF sample: 2 bones.)
#[test]
fn a_characters_lattice_preparation_is_kept_beside_the_solver_model() {
    use overtone::scene::{bake_character, character_from_gltf, CharacterSettings, LATTICE_PREPARATION_KIND};
    let dir = tmpdir("preparation");
    let path = dir.join("simple.ovt");
    let settings = CharacterSettings {
        sidecar: Some(path.clone()),
        ..Default::default()
    };
    let asset = crate::common::paths::khronos_asset("RiggedSimple.glb");
    let kind = SolverKind::Fast(FastParams::default_for(3));
    let bind = |settings: &CharacterSettings| {
        let mut ch = character_from_gltf(&asset, settings, None).unwrap();
        ch.select_frames(0, 8).unwrap();
        ch.save_preparation();
        let bake = bake_character(&ch, kind, Some(&path), &mut |_, _| {}).unwrap();
        (ch, bake)
    };
    let (first, first_bake) = bind(&settings);
    assert_eq!(
        first.preparation_cache.state(),
        CacheState::Built,
        "{}",
        first.preparation_cache
    );
    let bytes = std::fs::read(&path).unwrap();
    let kinds: Vec<String> = overtone::cache::sidecar_records(&bytes)
        .into_iter()
        .map(|(h, _)| h.kind)
        .collect();
    assert_eq!(
        kinds,
        [LATTICE_PREPARATION_KIND, overtone::dynamics::FAST_PRECOMPUTE_KIND]
    );
    let (second, second_bake) = bind(&settings);
    assert_eq!(second.preparation_cache, CacheStatus::Loaded);
    assert_eq!(second_bake.simulation.fast.as_ref().unwrap().cache, CacheStatus::Loaded);
    assert!(second.scene.mesh == first.scene.mesh && second.scene.weights == first.scene.weights);
    assert!(second.embedding.barycentric == first.embedding.barycentric);
    assert!(
        second_bake.frames == first_bake.frames,
        "the loaded preparation changed the bake"
    );
    let coarser = CharacterSettings {
        lattice_resolution: 12,
        ..settings.clone()
    };
    let (third, _) = bind(&coarser);
    assert_eq!(
        third.preparation_cache.state(),
        CacheState::Built,
        "{}",
        third.preparation_cache
    );
    assert_ne!(third.scene.mesh.n_vertices(), first.scene.mesh.n_vertices());
}
