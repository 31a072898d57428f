//! glTF morph targets: read from a two-target file this test writes (JSON + `.bin`), carried
//! to the lattice as blendshape rig columns, baked with frame 0 equal to glTF's morph-then-skin.

use std::path::{Path, PathBuf};

use overtone::dynamics::{FastParams, FastSolver, FullOrderSolver, SolverParams};
use overtone::io::read_gltf_character;
use overtone::leak::default_momentum_weights;
use overtone::scene::{bake_character, character_from_gltf, CharacterSettings, Scene, SolverKind};

use crate::common::paths::tmpdir;

/// Target deltas as functions of the bind position: a sag `(0, 0.2 x², 0)` and a wave
/// `(0, 0, 0.15 sin(πx/2)(y + 1))`; neither is affine, so a single bone cannot make them.
fn delta(t: usize, p: [f32; 3]) -> [f32; 3] {
    let (x, y) = (p[0] as f64, p[1] as f64);
    match t {
        0 => [0.0, (0.2 * x * x) as f32, 0.0],
        _ => [
            0.0,
            0.0,
            (0.15 * (std::f64::consts::PI * x / 2.0).sin() * (y + 1.0)) as f32,
        ],
    }
}

/// Morph weights at the five keys (t = 0, 0.25, …, 1 s).
const KEYS: [[f32; 2]; 5] = [[0.3, 0.1], [1.0, 0.0], [-0.5, 0.8], [0.6, -0.4], [0.0, 0.0]];

/// A closed box surface `[-1, 1] × [-0.4, 0.4]²`, each face a grid (seam vertices duplicated per
/// face, as exporters do), triangles facing outward.
fn box_surface() -> (Vec<[f32; 3]>, Vec<u32>) {
    let (mut pos, mut idx) = (Vec::new(), Vec::new());
    let ext = [1.0f32, 0.4, 0.4];
    let cells = [8usize, 3, 3];
    for axis in 0..3 {
        for side in [-1.0f32, 1.0] {
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = pos.len() as u32;
            for j in 0..=cells[b] {
                for i in 0..=cells[a] {
                    let mut p = [0.0f32; 3];
                    p[axis] = side * ext[axis];
                    p[a] = -ext[a] + 2.0 * ext[a] * i as f32 / cells[a] as f32;
                    p[b] = -ext[b] + 2.0 * ext[b] * j as f32 / cells[b] as f32;
                    pos.push(p);
                }
            }
            let row = cells[a] as u32 + 1;
            for j in 0..cells[b] as u32 {
                for i in 0..cells[a] as u32 {
                    let (v0, v1, v2, v3) = (
                        base + j * row + i,
                        base + j * row + i + 1,
                        base + (j + 1) * row + i + 1,
                        base + (j + 1) * row + i,
                    );
                    // (a, b, axis) is right-handed, so a-then-b winding faces +axis.
                    if side > 0.0 {
                        idx.extend([v0, v1, v2, v0, v2, v3]);
                    } else {
                        idx.extend([v0, v2, v1, v0, v3, v2]);
                    }
                }
            }
        }
    }
    (pos, idx)
}

/// Writes `morph_box.gltf` + `morph_box.bin` into `dir`: one joint, one skinned mesh with two
/// morph targets, default mesh weights [0, 0], and two animations over 1 s: 0 animates only the
/// morph weights (a blendshape-only rig), 1 also moves the joint (translation along y and a
/// rotation about z: a mixed rig).
fn write_morph_box(dir: &Path) -> PathBuf {
    let (pos, idx) = box_surface();
    let nv = pos.len();
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut push = |bytes: Vec<u8>, bin: &mut Vec<u8>| -> usize {
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        views.push(serde_json::json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend(bytes);
        views.len() - 1
    };
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let minmax = |v: &[[f32; 3]]| {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for p in v {
            for i in 0..3 {
                lo[i] = lo[i].min(p[i]);
                hi[i] = hi[i].max(p[i]);
            }
        }
        (lo.to_vec(), hi.to_vec())
    };
    let v_pos = push(f32s(&pos.concat()), &mut bin);
    let v_joints = push(
        (0..nv)
            .flat_map(|_| [0u16, 0, 0, 0])
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        &mut bin,
    );
    let v_weights = push(
        f32s(&(0..nv).flat_map(|_| [1.0f32, 0.0, 0.0, 0.0]).collect::<Vec<_>>()),
        &mut bin,
    );
    let v_idx = push(idx.iter().flat_map(|x| x.to_le_bytes()).collect(), &mut bin);
    let targets: Vec<Vec<[f32; 3]>> = (0..2).map(|t| pos.iter().map(|&p| delta(t, p)).collect()).collect();
    let v_t0 = push(f32s(&targets[0].concat()), &mut bin);
    let v_t1 = push(f32s(&targets[1].concat()), &mut bin);
    let ident: Vec<f32> = (0..16).map(|k| if k % 5 == 0 { 1.0 } else { 0.0 }).collect();
    let v_ibm = push(f32s(&ident), &mut bin);
    let times = [0.0f32, 0.25, 0.5, 0.75, 1.0];
    let v_times = push(f32s(&times), &mut bin);
    let v_mw = push(f32s(&KEYS.concat()), &mut bin);
    let trans: Vec<f32> = [0.0f32, 0.15, -0.1, 0.2, 0.0]
        .iter()
        .flat_map(|&y| [0.0, y, 0.0])
        .collect();
    let v_tr = push(f32s(&trans), &mut bin);
    let rot: Vec<f32> = [0.0f64, 0.3, -0.2, 0.25, 0.0]
        .iter()
        .flat_map(|&a| [0.0, 0.0, (a / 2.0).sin() as f32, (a / 2.0).cos() as f32])
        .collect();
    let v_rot = push(f32s(&rot), &mut bin);
    let (plo, phi) = minmax(&pos);
    let (t0lo, t0hi) = minmax(&targets[0]);
    let (t1lo, t1hi) = minmax(&targets[1]);
    let acc = |view: usize, count: usize, ctype: u32, ty: &str| serde_json::json!({"bufferView": view, "componentType": ctype, "count": count, "type": ty});
    let mut accessors = vec![
        acc(v_pos, nv, 5126, "VEC3"),
        acc(v_joints, nv, 5123, "VEC4"),
        acc(v_weights, nv, 5126, "VEC4"),
        acc(v_idx, idx.len(), 5125, "SCALAR"),
        acc(v_t0, nv, 5126, "VEC3"),
        acc(v_t1, nv, 5126, "VEC3"),
        acc(v_ibm, 1, 5126, "MAT4"),
        acc(v_times, 5, 5126, "SCALAR"),
        acc(v_mw, 10, 5126, "SCALAR"),
        acc(v_tr, 5, 5126, "VEC3"),
        acc(v_rot, 5, 5126, "VEC4"),
    ];
    accessors[0]["min"] = serde_json::json!(plo);
    accessors[0]["max"] = serde_json::json!(phi);
    accessors[4]["min"] = serde_json::json!(t0lo);
    accessors[4]["max"] = serde_json::json!(t0hi);
    accessors[5]["min"] = serde_json::json!(t1lo);
    accessors[5]["max"] = serde_json::json!(t1hi);
    accessors[7]["min"] = serde_json::json!([0.0]);
    accessors[7]["max"] = serde_json::json!([1.0]);
    let sampler = |output: usize| serde_json::json!({"input": 7, "output": output, "interpolation": "LINEAR"});
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "buffers": [{"uri": "morph_box.bin", "byteLength": bin.len()}],
        "bufferViews": views,
        "accessors": accessors,
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}, "indices": 3,
                     "targets": [{"POSITION": 4}, {"POSITION": 5}]}], "weights": [0.0, 0.0]}],
        "skins": [{"joints": [0], "inverseBindMatrices": 6}],
        "nodes": [{"name": "root"}, {"name": "box", "mesh": 0, "skin": 0}],
        "scenes": [{"nodes": [0, 1]}],
        "scene": 0,
        "animations": [
            {"name": "morph only", "samplers": [sampler(8)],
             "channels": [{"sampler": 0, "target": {"node": 1, "path": "weights"}}]},
            {"name": "morph and joint", "samplers": [sampler(8), sampler(9), sampler(10)],
             "channels": [{"sampler": 0, "target": {"node": 1, "path": "weights"}},
                          {"sampler": 1, "target": {"node": 0, "path": "translation"}},
                          {"sampler": 2, "target": {"node": 0, "path": "rotation"}}]}
        ]
    });
    std::fs::write(dir.join("morph_box.bin"), &bin).unwrap();
    let path = dir.join("morph_box.gltf");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// The reader finds both targets, welds the per-face seam duplicates (their deltas agree), and
/// samples the weights channel: the keys at t = 0 and t = 0.25, the linear midpoint at
/// t = 0.125 (f32 data: 1e-6).
#[test]
fn reads_morph_targets_and_samples_their_weights() {
    let dir = tmpdir("morph-read");
    let path = write_morph_box(&dir);
    let c = read_gltf_character(&path, Some(0), 8.0).unwrap();
    assert_eq!(c.n_morph_targets, 2);
    let n = c.vertices.len() / 3;
    assert!(
        n < c.original_to_welded.len(),
        "seams welded: {n} of {}",
        c.original_to_welded.len()
    );
    assert_eq!(c.morph_deltas.len(), 2 * n * 3);
    for v in 0..n {
        let p = [
            c.vertices[3 * v] as f32,
            c.vertices[3 * v + 1] as f32,
            c.vertices[3 * v + 2] as f32,
        ];
        for t in 0..2 {
            let e = delta(t, p);
            for i in 0..3 {
                assert!((c.morph_deltas[(t * n + v) * 3 + i] - e[i] as f64).abs() < 1e-6);
            }
        }
    }
    assert_eq!(c.morph_weights.len(), 9);
    let close = |a: &[f64], b: [f64; 2]| (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6;
    assert!(close(&c.morph_weights[0], [0.3, 0.1]), "{:?}", c.morph_weights[0]);
    assert!(close(&c.morph_weights[1], [0.65, 0.05]), "{:?}", c.morph_weights[1]);
    assert!(close(&c.morph_weights[2], [1.0, 0.0]), "{:?}", c.morph_weights[2]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs the lattice scene with both solvers; returns the largest blendshape and bone relative
/// residuals over all steps and the largest displacement (normalised units).
fn lattice_residuals(sc: &Scene) -> [(f64, f64, f64); 2] {
    let rig = sc.rig().unwrap();
    let dw = default_momentum_weights(&sc.mesh).unwrap();
    let params = SolverParams {
        dt: sc.dt,
        gravity: vec![0.0; 3],
        ..Default::default()
    };
    let p = |k: usize| {
        let mut p = vec![0.0; rig.n_params()];
        sc.frame_params_into(&rig, k, &mut p).unwrap();
        p
    };
    let mut full = FullOrderSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw,
        &sc.material,
        &params,
        Default::default(),
        &p(0),
    )
    .unwrap();
    let mut fast = FastSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw,
        &sc.material,
        &params,
        FastParams::default_for(3),
        &p(0),
    )
    .unwrap();
    let (mut a, mut b) = ((0.0f64, 0.0f64, 0.0f64), (0.0f64, 0.0f64, 0.0f64));
    let n = sc.mesh.n_vertices();
    for k in 1..sc.frames.len() {
        full.step(&p(k)).unwrap();
        a.0 = a.0.max(full.blendshape_residual().1);
        a.1 = a.1.max(full.bone_residual().1);
        a.2 =
            a.2.max(full.displacement().iter().fold(0.0, |m: f64, x| m.max(x.abs())));
        let rep = fast.step(&p(k)).unwrap();
        b.0 = b.0.max(fast.blendshape_residual().1);
        b.1 = b.1.max(rep.relative_residual);
        let mut u = vec![0.0; 3 * n];
        fast.add_displacement(&mut u);
        b.2 = b.2.max(u.iter().fold(0.0, |m: f64, x| m.max(x.abs())));
    }
    [a, b]
}

/// The lattice scene of the two-target box (animation 0: blendshape-only; 1: the joint moves
/// too) keeps `‖G u_c‖/(‖G‖‖u_c‖) ≤ 1e-8` and the bone residual ≤ 1e-8 with the full and the
/// fast solver, with non-zero secondary motion (> 1e-4 of the normalised size 1).
#[test]
fn lattice_blendshape_residual_at_roundoff_for_both_solvers() {
    let dir = tmpdir("morph-lattice");
    let path = write_morph_box(&dir);
    for anim in [0, 1] {
        let settings = CharacterSettings {
            lattice_resolution: 12,
            animation: Some(anim),
            ..CharacterSettings::default()
        };
        let ch = character_from_gltf(&path, &settings, None).unwrap();
        assert_eq!(ch.scene.blendshapes.as_ref().unwrap().n_targets, 2);
        let [full, fast] = lattice_residuals(&ch.scene);
        eprintln!("animation {anim}: full (blend, bone, max u) {full:?}; fast (blend, total, max u) {fast:?}");
        for (name, r) in [("full", full), ("fast", fast)] {
            assert!(r.0 <= 1e-8, "animation {anim}, {name}: blendshape residual {:e}", r.0);
            assert!(r.1 <= 1e-8, "animation {anim}, {name}: bone residual {:e}", r.1);
            assert!(r.2 > 1e-4, "animation {anim}, {name}: no secondary motion ({:e})", r.2);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The bake's frame 0 is glTF skinning with the morphs: bind position + Σ β_t(0) Δ_t for every
/// original vertex (the joint is at rest at t = 0; 1e-6), and the secondary motion of later
/// frames is not zero (> 1e-3 file units on a 2-unit box).
#[test]
fn bake_frame_zero_equals_morph_then_skin() {
    let dir = tmpdir("morph-bake");
    let path = write_morph_box(&dir);
    let settings = CharacterSettings {
        lattice_resolution: 12,
        animation: Some(1),
        ..CharacterSettings::default()
    };
    let ch = character_from_gltf(&path, &settings, None).unwrap();
    let baked = bake_character(&ch, SolverKind::LocalGlobal(Default::default()), None, &mut |_, _| {}).unwrap();
    let (pos, _) = box_surface();
    assert_eq!(baked.frames[0].len(), pos.len() * 3);
    for (v, p) in pos.iter().enumerate() {
        let (d0, d1) = (delta(0, *p), delta(1, *p));
        for i in 0..3 {
            let expected = p[i] as f64 + KEYS[0][0] as f64 * d0[i] as f64 + KEYS[0][1] as f64 * d1[i] as f64;
            assert!((baked.frames[0][3 * v + i] - expected).abs() < 1e-6, "vertex {v}");
        }
    }
    let largest = baked
        .displacements
        .iter()
        .flatten()
        .fold(0.0, |m: f64, x| m.max(x.abs()));
    assert!(largest > 1e-3, "largest secondary displacement {largest:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Broken morph data is refused with the file named: default weights of the wrong count, a
/// weights channel whose value count is not a multiple of the target count, primitives with
/// different target counts.
#[test]
fn broken_morph_data_is_refused() {
    let dir = tmpdir("morph-broken");
    let path = write_morph_box(&dir);
    let good: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut cases: Vec<(&str, serde_json::Value, &str)> = Vec::new();
    let mut w3 = good.clone();
    w3["meshes"][0]["weights"] = serde_json::json!([0.0, 0.0, 0.0]);
    cases.push(("weights3.gltf", w3, "default morph weights"));
    let mut odd = good.clone();
    odd["accessors"][8]["count"] = serde_json::json!(9);
    cases.push(("odd.gltf", odd, "not a multiple"));
    let mut two = good.clone();
    let mut second = two["meshes"][0]["primitives"][0].clone();
    second.as_object_mut().unwrap().remove("targets");
    two["meshes"][0]["primitives"].as_array_mut().unwrap().push(second);
    cases.push(("primitives.gltf", two, "morph targets"));
    for (name, doc, needle) in cases {
        let p = dir.join(name);
        std::fs::write(&p, doc.to_string()).unwrap();
        let e = read_gltf_character(&p, Some(0), 8.0)
            .err()
            .unwrap_or_else(|| panic!("{name} accepted"));
        let msg = e.to_string();
        assert!(msg.contains(name) && msg.contains(needle), "{name}: {msg}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A target without position deltas is dropped with a warning (its column of `J` would be
/// zero); a target duplicating another is kept and the full solver's rank revelation keeps one
/// constraint direction for the pair, with the residual still ≤ 1e-8.
#[test]
fn empty_morph_targets_are_dropped_and_duplicates_keep_one_direction() {
    let dir = tmpdir("morph-dup");
    let path = write_morph_box(&dir);
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let nv = doc["accessors"][0]["count"].as_u64().unwrap() as usize;
    let mut bin = std::fs::read(dir.join("morph_box.bin")).unwrap();
    let offset = bin.len();
    bin.extend(vec![0u8; nv * 12]);
    std::fs::write(dir.join("morph_box.bin"), &bin).unwrap();
    doc["buffers"][0]["byteLength"] = serde_json::json!(bin.len());
    doc["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"buffer": 0, "byteOffset": offset, "byteLength": nv * 12}));
    let view = doc["bufferViews"].as_array().unwrap().len() - 1;
    doc["accessors"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"bufferView": view,
        "componentType": 5126, "count": nv, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]}));
    let zero = doc["accessors"].as_array().unwrap().len() - 1;
    let settings = CharacterSettings {
        lattice_resolution: 10,
        animation: Some(0),
        ..CharacterSettings::default()
    };
    let mut empty = doc.clone();
    empty["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = serde_json::json!(zero);
    let p = dir.join("empty.gltf");
    std::fs::write(&p, empty.to_string()).unwrap();
    let ch = character_from_gltf(&p, &settings, None).unwrap();
    assert_eq!(ch.scene.blendshapes.as_ref().unwrap().n_targets, 1);
    assert!(
        ch.warnings.iter().any(|w| w.contains("no position deltas")),
        "{:?}",
        ch.warnings
    );

    let mut dup = doc.clone();
    dup["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = serde_json::json!(4);
    let p = dir.join("dup.gltf");
    std::fs::write(&p, dup.to_string()).unwrap();
    let ch = character_from_gltf(&p, &settings, None).unwrap();
    let sc = &ch.scene;
    assert_eq!(sc.blendshapes.as_ref().unwrap().n_targets, 2);
    let rig = sc.rig().unwrap();
    let dw = default_momentum_weights(&sc.mesh).unwrap();
    let params = SolverParams {
        dt: sc.dt,
        gravity: vec![0.0; 3],
        ..Default::default()
    };
    let p = |k: usize| {
        let mut p = vec![0.0; rig.n_params()];
        sc.frame_params_into(&rig, k, &mut p).unwrap();
        p
    };
    let mut full = FullOrderSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw,
        &sc.material,
        &params,
        Default::default(),
        &p(0),
    )
    .unwrap();
    assert_eq!(full.blendshape_rank(), (1, 2));
    for k in 1..sc.frames.len() {
        full.step(&p(k)).unwrap();
        assert!(full.blendshape_residual().1 <= 1e-8);
    }
    std::fs::remove_dir_all(&dir).ok();
}
