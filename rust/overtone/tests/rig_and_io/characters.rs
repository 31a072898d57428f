//! glTF characters: reading, welding, skinning, embedding and baking.

use overtone::dynamics::FastParams;
use overtone::io::read_gltf_character;
use overtone::scene::{bake_character, character_from_gltf, CharacterSettings, SolverKind};

use crate::common::paths::{khronos_asset, tmpdir};

/// Vertex counts before and after welding and joint counts are those of the data README.
#[test]
fn gltf_vertex_and_joint_counts_match_the_data_readme() {
    for (name, verts, welded, joints) in [
        ("RiggedSimple.glb", 160, 96, 2),
        ("RiggedFigure.glb", 370, 130, 19),
        ("CesiumMan.glb", 3273, 2338, 19),
        ("Fox.glb", 1728, 290, 24),
    ] {
        let c = read_gltf_character(&khronos_asset(name), None, 24.0).unwrap();
        assert_eq!(
            (c.original_to_welded.len(), c.vertices.len() / 3, c.n_joints),
            (verts, welded, joints),
            "{name}"
        );
        for row in c.weights.chunks(joints) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
}

/// RiggedSimple's clip starts at the bind pose, where every skin matrix `G_j IBM_j`
/// is the same rigid transform: the skinned mesh is the bind mesh moved rigidly (distances kept
/// to 1e-5 relative, f32 data).
#[test]
fn bind_pose_skinning_is_rigid() {
    let c = read_gltf_character(&khronos_asset("RiggedSimple.glb"), None, 24.0).unwrap();
    let n = c.vertices.len() / 3;
    for frame in [&c.frames[0]] {
        let pos: Vec<[f64; 3]> = (0..n)
            .map(|v| {
                let x = &c.vertices[3 * v..3 * v + 3];
                let mut p = [0.0; 3];
                for j in 0..c.n_joints {
                    let w = c.weights[v * c.n_joints + j];
                    let t = &frame[12 * j..12 * j + 12];
                    for i in 0..3 {
                        p[i] += w * (t[4 * i] * x[0] + t[4 * i + 1] * x[1] + t[4 * i + 2] * x[2] + t[4 * i + 3]);
                    }
                }
                p
            })
            .collect();
        let d = |a: &[f64], b: &[f64]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        for (a, b) in [(0, n - 1), (1, n / 2), (3, n / 3)] {
            let rest = d(&c.vertices[3 * a..3 * a + 3], &c.vertices[3 * b..3 * b + 3]);
            let posed = d(&pos[a], &pos[b]);
            assert!((rest - posed).abs() <= 1e-5 * rest.max(1e-3), "{rest} vs {posed}");
        }
    }
}

/// A bake writes one sample per frame for every original vertex; frame 0 is exactly the glTF
/// skinning (no secondary motion at rest); the rig contract holds at every step; the motion is
/// bounded.
#[test]
fn bake_maps_back_to_the_original_vertices() {
    let settings = CharacterSettings::default();
    let ch = character_from_gltf(&khronos_asset("RiggedFigure.glb"), &settings, None).unwrap();
    let n = ch.original_to_welded.len();
    let baked = bake_character(&ch, SolverKind::Fast(FastParams::default_for(3)), None, &mut |_, _| {}).unwrap();
    assert_eq!(baked.frames.len(), ch.scene.frames.len());
    assert!(baked.frames.iter().all(|f| f.len() == 3 * n));
    let m = ch.scene.n_bones;
    for (o, &s) in ch.original_to_welded.iter().enumerate() {
        let x = &ch.surface[3 * s..3 * s + 3];
        for i in 0..3 {
            let skinned: f64 = (0..m)
                .map(|b| {
                    let t = &ch.world_frames[0][12 * b..12 * b + 12];
                    ch.surface_weights[s * m + b]
                        * (t[4 * i] * x[0] + t[4 * i + 1] * x[1] + t[4 * i + 2] * x[2] + t[4 * i + 3])
                })
                .sum();
            assert!((baked.frames[0][3 * o + i] - skinned).abs() < 1e-12);
        }
    }
    let worst = baked
        .simulation
        .steps
        .iter()
        .map(|s| s.relative_residual)
        .fold(0.0, f64::max);
    assert!(worst <= 1e-8, "residual {worst:e}");
    let md = baked.simulation.max_displacement.iter().cloned().fold(0.0, f64::max);
    assert!(md > 0.0 && md < 0.5, "max secondary displacement (normalised) {md}");
}

/// A painted leak field must have one value per surface vertex.
#[test]
fn painted_leak_must_have_one_value_per_surface_vertex() {
    let settings = CharacterSettings::default();
    let err = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, Some(&[1.0; 5]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("leak field D"), "{err}");
    let ok = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, Some(&vec![0.5; 96])).unwrap();
    let d = ok.scene.momentum_weights.unwrap();
    assert!(
        d.iter().all(|&x| (x - 0.5).abs() < 1e-9),
        "a constant field stays constant"
    );
}

/// A leak field painted on part of the surface (`-1` elsewhere) keeps the default field far from
/// the paint and takes the painted value where the paint covers the surface; all `-1` is the
/// default field itself (the skeleton-derived one an unpainted body gets, not the depth-only
/// field); other negatives are refused.
#[test]
fn partly_painted_leak_adjusts_the_default_only_where_painted() {
    let settings = CharacterSettings::default();
    let default = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, None).unwrap();
    let dd = default.scene.momentum_weights.clone().unwrap();
    let depth =
        overtone::leak::default_momentum_weights_in_body(&default.scene.mesh, &default.embedding.outside_surface)
            .unwrap();
    let core = dd.iter().zip(&depth).map(|(a, b)| a - b).fold(0.0, f64::max);
    assert!(
        core > 0.1,
        "the skeleton default does not differ from the depth field ({core}): the test would not tell them apart"
    );
    let unpainted = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, Some(&vec![-1.0; 96])).unwrap();
    let du = unpainted.scene.momentum_weights.unwrap();
    let same = dd.iter().zip(&du).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(same < 1e-12, "all unpainted differs from the default by {same:e}");
    // Paint 1 on the surface vertices with y above the middle (the upper half of the tube).
    let ys: Vec<f64> = default.surface.chunks(3).map(|p| p[1]).collect();
    let y0 = ys.iter().cloned().fold(f64::INFINITY, f64::min);
    let y1 = ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let at = |t: f64| y0 + t * (y1 - y0);
    let painted: Vec<f64> = ys.iter().map(|&y| if y > at(0.5) { 1.0 } else { -1.0 }).collect();
    let ch = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, Some(&painted)).unwrap();
    let d = ch.scene.momentum_weights.unwrap();
    let mesh = &ch.scene.mesh;
    let mut far_below = 0.0f64;
    let mut on_paint = 1.0f64;
    for v in 0..mesh.n_vertices() {
        let mut world = [0.0; 3];
        ch.frame.to_file(mesh.vertex(v), &mut world);
        let y = world[1];
        if y < at(0.25) {
            far_below = far_below.max((d[v] - dd[v]).abs());
        }
        if ch.embedding.surface_lattice_vertices.contains(&v) && y > at(0.75) {
            on_paint = on_paint.min(d[v]);
        }
    }
    assert!(far_below < 0.05, "far from the paint the field moved by {far_below}");
    assert!(
        on_paint > 0.95,
        "on the painted surface the field is {on_paint}, not about 1"
    );
    let mut bad = painted.clone();
    bad[0] = -0.5;
    let err = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &settings, Some(&bad))
        .err()
        .unwrap();
    assert!(err.to_string().contains("-1 for an unpainted vertex"), "{err}");
}

/// An open surface (a tube without caps) is still embedded and simulated; the character says
/// the surface is open. A closed one carries no warning.
#[test]
fn open_surfaces_are_embedded_with_a_warning() {
    let closed = character_from_gltf(&khronos_asset("RiggedSimple.glb"), &CharacterSettings::default(), None).unwrap();
    assert!(closed.warnings.is_empty(), "{:?}", closed.warnings);
    let c = read_gltf_character(&khronos_asset("RiggedSimple.glb"), None, 24.0).unwrap();
    // Drop every triangle touching the topmost vertex: a hole.
    let top = (0..c.vertices.len() / 3)
        .max_by(|&a, &b| c.vertices[3 * a + 1].total_cmp(&c.vertices[3 * b + 1]))
        .unwrap();
    let open: Vec<usize> = c
        .triangles
        .chunks(3)
        .filter(|t| !t.contains(&top))
        .flatten()
        .copied()
        .collect();
    assert!(open.len() < c.triangles.len());
    let ch = overtone::scene::Character::from_surface(
        "open",
        &c.vertices,
        &open,
        &c.weights,
        c.n_joints,
        c.frames.clone(),
        &CharacterSettings::default(),
        None,
    )
    .unwrap();
    assert_eq!(ch.warnings.len(), 1);
    assert!(ch.warnings[0].contains("boundary edges"));
    let baked = bake_character(&ch, SolverKind::Fast(FastParams::default_for(3)), None, &mut |_, _| {}).unwrap();
    assert!(baked.frames.iter().flatten().all(|x| x.is_finite()));
}

/// Broken files are refused with an error that names the file, never a panic.
#[test]
fn broken_gltf_files_are_refused() {
    let dir = tmpdir("broken-gltf");
    let good = std::fs::read(khronos_asset("CesiumMan.glb")).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.glb", good[..good.len() / 2].to_vec()),
        ("header-only.glb", good[..20].to_vec()),
        ("empty.glb", Vec::new()),
        ("text.glb", b"not a gltf at all".to_vec()),
    ];
    for (name, bytes) in cases {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let err = read_gltf_character(&p, None, 24.0)
            .err()
            .unwrap_or_else(|| panic!("{name} accepted"));
        assert!(err.to_string().contains(name), "{name}: {err}");
    }
    let missing = read_gltf_character(&dir.join("missing.glb"), None, 24.0).err().unwrap();
    assert!(missing.to_string().contains("missing.glb"));
    assert!(read_gltf_character(&khronos_asset("RiggedSimple.glb"), Some(7), 24.0).is_err());
    assert!(read_gltf_character(&khronos_asset("RiggedSimple.glb"), None, 0.0).is_err());
}
