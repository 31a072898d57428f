//! Blendshape (morph target) rigs: the target deltas are extra columns of `J`, and both solvers
//! keep the complementary displacement orthogonal to them (and to the bones) in `M D`.

use overtone::dynamics::fast::fast_precompute_key;
use overtone::dynamics::fast::{skinning_eigenmodes, SkinningBasis};
use overtone::dynamics::{FastParams, FastSolver, FullOrderSolver, Material, SolverParams};
use overtone::fem::lumped_mass;
use overtone::mesh::{element_volumes, tet_grid};
use overtone::rig::{LbsRig, RigConstraint};
use overtone::scene::{load_scene, scene_to_json, simulate, ElasticModel, Scene, SceneBlendshapes, SolverKind};
use overtone::OvertoneError;

use crate::common::paths::tmpdir;

const DT: f64 = 1.0 / 60.0;
const FRAMES: usize = 40;

/// A 2 × 0.5 × 0.5 box of tets; one bone at rest (blendshape-only) or two bones bending about
/// the middle (mixed rig); two smooth, non-affine targets (a sag in y growing with (x−1)², a
/// z-wave) animated with weights `β_0 = 0.8 sin(4πt)`, `β_1 = 0.5(1 − cos(6πt))`.
fn box_scene(two_bones: bool) -> Scene {
    let mesh = tet_grid(9, 3, 3, 2.0, 0.5, 0.5).unwrap();
    let n = mesh.n_vertices();
    let x = mesh.vertices().to_vec();
    let (n_bones, weights): (usize, Vec<f64>) = if two_bones {
        let w: Vec<f64> = (0..n)
            .flat_map(|v| {
                let s = (x[3 * v] / 2.0).clamp(0.0, 1.0);
                let w1 = s * s * (3.0 - 2.0 * s);
                [1.0 - w1, w1]
            })
            .collect();
        (2, w)
    } else {
        (1, vec![1.0; n])
    };
    let mut deltas = vec![0.0; 2 * n * 3];
    for v in 0..n {
        let (px, py) = (x[3 * v], x[3 * v + 1]);
        deltas[v * 3 + 1] = 0.15 * (px - 1.0) * (px - 1.0);
        deltas[(n + v) * 3 + 2] = 0.1 * (std::f64::consts::PI * px / 2.0).sin() * (py + 0.5);
    }
    let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let mut frames = Vec::new();
    let mut bw = Vec::new();
    for k in 0..FRAMES {
        let t = k as f64 * DT;
        let mut fr = identity.to_vec();
        if two_bones {
            // Bone 1 rotates about the z axis through (1, 0.25, 0.25).
            let a = 0.4 * (2.0 * std::f64::consts::PI * 1.5 * t).sin();
            let (c, s) = (a.cos(), a.sin());
            let (cx, cy) = (1.0, 0.25);
            fr.extend([
                c,
                -s,
                0.0,
                cx - c * cx + s * cy,
                s,
                c,
                0.0,
                cy - s * cx - c * cy,
                0.0,
                0.0,
                1.0,
                0.0,
            ]);
        }
        frames.push(fr);
        bw.push(vec![
            0.8 * (4.0 * std::f64::consts::PI * t).sin(),
            0.5 * (1.0 - (6.0 * std::f64::consts::PI * t).cos()),
        ]);
    }
    let scene = Scene {
        name: "blend box".into(),
        mesh,
        weights,
        n_bones,
        frames,
        momentum_weights: Some(vec![1.0; n]),
        model: ElasticModel::Arap,
        material: Material {
            youngs_modulus: 5e4,
            poisson_ratio: 0.4,
            density: 1000.0,
        },
        dt: DT,
        gravity: vec![0.0; 3],
        examples: None,
        blendshapes: Some(SceneBlendshapes {
            deltas,
            n_targets: 2,
            weights: bw,
        }),
        normalisation: None,
        dynamics: overtone::scene::SceneDynamics::seed(),
    };
    scene.validate().unwrap();
    scene
}

fn params() -> SolverParams {
    SolverParams {
        dt: DT,
        gravity: vec![0.0; 3],
        ..Default::default()
    }
}

fn frame_params(sc: &Scene, rig: &LbsRig, k: usize) -> Vec<f64> {
    let mut p = vec![0.0; rig.n_params()];
    sc.frame_params_into(rig, k, &mut p).unwrap();
    p
}

fn masses(sc: &Scene) -> Vec<f64> {
    lumped_mass(&sc.mesh, &element_volumes(&sc.mesh), sc.material.density)
}

/// Row-major `n × 3` to coordinate-major.
fn coordinate_major(u: &[f64]) -> Vec<f64> {
    let n = u.len() / 3;
    (0..3 * n).map(|k| u[(k % n) * 3 + k / n]).collect()
}

/// Full-order solver on the blendshape-only and the mixed rig: every step keeps
/// `‖G u_c‖/(‖G‖‖u_c‖) ≤ 1e-8` (blendshape columns) and `‖(I⊗Â)u_c‖/(‖Â‖‖u_c‖) ≤ 1e-8`
/// (bone columns), and the secondary motion is not zero (largest displacement > 1 mm on a
/// 2 m box whose targets move vertices by up to 15 cm).
#[test]
fn full_solver_keeps_blendshape_and_bone_residuals_at_roundoff() {
    for two_bones in [false, true] {
        let sc = box_scene(two_bones);
        let rig = sc.rig().unwrap();
        let dw = sc.momentum_weights.clone().unwrap();
        let p0 = frame_params(&sc, &rig, 0);
        let mut s = FullOrderSolver::new(
            &sc.mesh,
            rig.clone(),
            &dw,
            &sc.material,
            &params(),
            Default::default(),
            &p0,
        )
        .unwrap();
        assert_eq!(s.blendshape_rank(), (2, 2));
        let mut largest: f64 = 0.0;
        for k in 1..FRAMES {
            let rep = s.step(&frame_params(&sc, &rig, k)).unwrap();
            let (_, blend_rel) = s.blendshape_residual();
            let (_, bone_rel) = s.bone_residual();
            assert!(
                blend_rel <= 1e-8,
                "frame {k} (two bones: {two_bones}): blendshape residual {blend_rel:e}"
            );
            assert!(
                bone_rel <= 1e-8,
                "frame {k} (two bones: {two_bones}): bone residual {bone_rel:e}"
            );
            assert!(rep.relative_residual <= 1e-8);
            let u = s.displacement();
            let n = s.n_vertices();
            largest = largest.max(
                (0..n)
                    .map(|v| (0..3).map(|i| u[i * n + v].powi(2)).sum::<f64>().sqrt())
                    .fold(0.0, f64::max),
            );
        }
        assert!(
            largest > 1e-3,
            "no secondary motion (two bones: {two_bones}): {largest:e}"
        );
        eprintln!("full, two bones: {two_bones}: largest |u_c| {largest:.3e}");
    }
}

/// The rig pose of the solver is the morph-then-skin pose: `x_v = Σ_b w_vb T_b (X_v + Σ_t β_t
/// Δ_tv)`, checked against a direct evaluation (1e-12) on the mixed rig at a posed frame; and
/// the extended linear form `x_i = J̃ p̃_i` agrees with it (1e-12).
#[test]
fn rig_pose_is_morph_then_skin() {
    let sc = box_scene(true);
    let rig = sc.rig().unwrap();
    let (n, k) = (sc.mesh.n_vertices(), 7);
    let p = frame_params(&sc, &rig, k);
    let mut x = vec![0.0; 3 * n];
    rig.apply(&p, &mut x);
    let bs = sc.blendshapes.as_ref().unwrap();
    let jt = rig.extended_jacobian();
    let ce = rig.n_extended_scalar_params();
    let mut pe = vec![0.0; 3 * ce];
    rig.extended_params_into(&p, &mut pe);
    for v in 0..n {
        let xm: Vec<f64> = (0..3)
            .map(|j| {
                sc.mesh.vertices()[3 * v + j]
                    + (0..2)
                        .map(|t| bs.weights[k][t] * bs.deltas[(t * n + v) * 3 + j])
                        .sum::<f64>()
            })
            .collect();
        for i in 0..3 {
            let direct: f64 = (0..2)
                .map(|b| {
                    let tb = &sc.frames[k][b * 12..(b + 1) * 12];
                    sc.weights[v * 2 + b] * ((0..3).map(|j| tb[i * 4 + j] * xm[j]).sum::<f64>() + tb[i * 4 + 3])
                })
                .sum();
            assert!((x[i * n + v] - direct).abs() < 1e-12);
            let linear: f64 = (0..ce).map(|c| jt[(v, c)] * pe[i * ce + c]).sum();
            assert!((linear - direct).abs() < 1e-12);
        }
    }
}

/// Fast solver on both rigs: the subspace is structurally orthogonal to bones and blendshapes
/// (`‖JᵀMD B‖/(‖JᵀMD‖‖B‖) ≤ 1e-10`), and every step's reconstructed `u_c = B z`, checked with
/// an independently built `RigConstraint`, has blendshape and bone residuals ≤ 1e-8; the
/// solver's own blendshape residual agrees; the secondary motion is not zero (> 1e-4).
#[test]
fn fast_solver_subspace_is_orthogonal_to_blendshapes() {
    for two_bones in [false, true] {
        let sc = box_scene(two_bones);
        let rig = sc.rig().unwrap();
        let dw = sc.momentum_weights.clone().unwrap();
        let p0 = frame_params(&sc, &rig, 0);
        let fp = FastParams {
            modes: 8,
            clusters: 24,
            iterations: 10,
        };
        let mut s = FastSolver::new(&sc.mesh, rig.clone(), &dw, &sc.material, &params(), fp, &p0).unwrap();
        let orth = s.precompute().structural_orthogonality;
        assert!(
            orth <= 1e-10,
            "structural orthogonality {orth:e} (two bones: {two_bones})"
        );
        let rc = RigConstraint::new(&rig, &masses(&sc), &dw).unwrap();
        let mut work = faer::Mat::zeros(rc.scalar.nrows(), 3);
        let n = sc.mesh.n_vertices();
        let mut largest: f64 = 0.0;
        for k in 1..FRAMES {
            s.step(&frame_params(&sc, &rig, k)).unwrap();
            let mut u = vec![0.0; 3 * n];
            s.add_displacement(&mut u);
            let uc = coordinate_major(&u);
            let (_, blend_rel) = rc.blendshape_residual(&uc);
            let (_, bone_rel) = rc.bone_residual(&uc, &mut work);
            assert!(blend_rel <= 1e-8, "frame {k}: blendshape residual {blend_rel:e}");
            assert!(bone_rel <= 1e-8, "frame {k}: bone residual {bone_rel:e}");
            let (_, own) = s.blendshape_residual();
            assert!(own <= 1e-8, "frame {k}: solver's blendshape residual {own:e}");
            largest = largest.max(u.iter().fold(0.0, |a: f64, b| a.max(b.abs())));
        }
        assert!(
            largest > 1e-4,
            "no secondary motion (two bones: {two_bones}): {largest:e}"
        );
        eprintln!("fast, two bones: {two_bones}: structural orthogonality {orth:.1e}, largest |u_c| {largest:.3e}");
    }
}

/// A displacement equal to a blendshape delta is removed: its `M D` component along `Δ_t`
/// (the relative blendshape residual) is O(1) before and ≤ 1e-10 after the full solver's
/// projection; and with `D = 1` the mass-orthogonal projection of `Δ_t` on the fast subspace
/// (`BᵀMΔ_t`, `BᵀMB = I`) is zero to 1e-10 of `‖Δ_t‖_M`.
#[test]
fn blendshape_delta_is_projected_out() {
    let sc = box_scene(false);
    let rig = sc.rig().unwrap();
    let dw = sc.momentum_weights.clone().unwrap();
    let n = sc.mesh.n_vertices();
    let mass = masses(&sc);
    let rc = RigConstraint::new(&rig, &mass, &dw).unwrap();
    let p0 = frame_params(&sc, &rig, 0);
    let mut s = FullOrderSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw,
        &sc.material,
        &params(),
        Default::default(),
        &p0,
    )
    .unwrap();
    let bs = sc.blendshapes.as_ref().unwrap();
    for t in 0..2 {
        let delta = coordinate_major(&bs.deltas[t * n * 3..(t + 1) * n * 3]);
        let before = rc.blendshape_residual(&delta).1;
        assert!(before > 0.1, "target {t}: {before}");
        s.set_displacement(&delta).unwrap();
        let after = s.blendshape_residual().1;
        assert!(after <= 1e-10, "target {t}: residual after projection {after:e}");
    }
    // Fast subspace: the solver's weight-space rows, its eigenmodes, its M-orthonormal basis.
    let modes = skinning_eigenmodes(&sc.mesh, Some(&rc.per_coordinate_rows()), 8).unwrap();
    let basis = SkinningBasis::new(&modes.weights, sc.mesh.vertices(), 3, &mass).unwrap();
    let b = basis.dense();
    for t in 0..2 {
        let delta = &bs.deltas[t * n * 3..(t + 1) * n * 3];
        let norm_m: f64 = (0..n)
            .map(|v| mass[v] * (0..3).map(|i| delta[v * 3 + i].powi(2)).sum::<f64>())
            .sum::<f64>()
            .sqrt();
        let mut coeff_sq = 0.0;
        for i in 0..3 {
            for a in 0..b.ncols() {
                let c: f64 = (0..n).map(|v| b[(v, a)] * mass[v] * delta[v * 3 + i]).sum();
                coeff_sq += c * c;
            }
        }
        assert!(
            coeff_sq.sqrt() <= 1e-10 * norm_m,
            "target {t}: {:e}",
            coeff_sq.sqrt() / norm_m
        );
    }
}

/// Refusals: wrong delta length, NaN, an all-zero target, per-frame weights of the wrong
/// length or count, bone-only parameters for a blendshape rig, Newton's method with blendshapes. Dependent targets are handled by rank revelation: a target equal to twice
/// another and a target the bone can make (a uniform offset) add no constraint direction, and
/// the run still keeps the residual ≤ 1e-8.
#[test]
fn bad_blendshapes_are_refused_or_rank_revealed() {
    let sc = box_scene(false);
    let n = sc.mesh.n_vertices();
    let base = LbsRig::new(3, sc.mesh.vertices(), &sc.weights, 1).unwrap();
    let d0 = sc.blendshapes.as_ref().unwrap().deltas[..3 * n].to_vec();
    assert!(matches!(
        base.clone().with_blendshapes(&d0[..3 * n - 1], 1),
        Err(OvertoneError::Input(overtone::InputError::Size { .. }))
    ));
    let mut nan = d0.clone();
    nan[17] = f64::NAN;
    let e = base.clone().with_blendshapes(&nan, 1).unwrap_err();
    assert!(
        matches!(
            e,
            OvertoneError::Input(overtone::InputError::Blendshape { target: 0, .. })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("vertex 5"), "{e}");
    let mut zero = d0.clone();
    zero.extend(vec![0.0; 3 * n]);
    let e = base.clone().with_blendshapes(&zero, 2).unwrap_err();
    assert!(
        matches!(
            e,
            OvertoneError::Input(overtone::InputError::Blendshape { target: 1, .. })
        ),
        "{e}"
    );
    let mut bad = sc.clone();
    bad.blendshapes.as_mut().unwrap().weights[3].pop();
    assert!(matches!(
        bad.validate(),
        Err(OvertoneError::Input(overtone::InputError::Size { .. }))
    ));
    let mut bad = sc.clone();
    bad.blendshapes.as_mut().unwrap().weights.pop();
    assert!(matches!(
        bad.validate(),
        Err(OvertoneError::Input(overtone::InputError::Size { .. }))
    ));
    let rig = base.clone().with_blendshapes(&d0, 1).unwrap();
    assert!(rig.params_from_transforms(&sc.frames[0]).is_err());
    // Newton's method (neo-Hookean) runs bone rigs only.
    let p0 = rig.params_from_pose(&sc.frames[0], &[0.0]).unwrap();
    let dw1 = vec![1.0; n];
    let e = overtone::dynamics::NewtonCdSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw1,
        &sc.material,
        &params(),
        &overtone::dynamics::NewtonCdParams::default(),
        &p0,
    )
    .err()
    .unwrap();
    assert!(matches!(e, OvertoneError::Unsupported(_)), "{e}");

    // Dependent: Δ_1 = 2 Δ_0, Δ_2 = uniform offset (a rig motion of the single bone).
    let mut dep = d0.clone();
    dep.extend(d0.iter().map(|x| 2.0 * x));
    dep.extend((0..n).flat_map(|_| [0.05, 0.0, -0.02]));
    let rig = base.with_blendshapes(&dep, 3).unwrap();
    let dw = vec![1.0; n];
    let p = |k: usize| {
        let t = k as f64 * DT;
        rig.params_from_pose(&sc.frames[0], &[(9.0 * t).sin(), 0.3 * (5.0 * t).sin(), t])
            .unwrap()
    };
    let mut s = FullOrderSolver::new(
        &sc.mesh,
        rig.clone(),
        &dw,
        &sc.material,
        &params(),
        Default::default(),
        &p(0),
    )
    .unwrap();
    assert_eq!(s.blendshape_rank(), (1, 3));
    for k in 1..20 {
        let rep = s.step(&p(k)).unwrap();
        assert!(rep.relative_residual <= 1e-8, "frame {k}: {:e}", rep.relative_residual);
        assert!(s.blendshape_residual().1 <= 1e-8);
    }
}

/// `"blendshapes"` in an `overtone-scene/1` file round-trips (and its simulation reports a
/// blendshape residual ≤ 1e-8 for every step of both solvers), and a file with a target of the
/// wrong vertex count is refused with the target named; the fast precompute's sidecar key
/// changes when a single delta changes.
#[test]
fn scene_json_and_sidecar_key_cover_blendshapes() {
    let sc = box_scene(true);
    let dir = tmpdir("blendshapes-scene");
    let path = dir.join("box.json");
    std::fs::write(&path, scene_to_json(&sc)).unwrap();
    let back = load_scene(&path).unwrap();
    assert_eq!(back.blendshapes, sc.blendshapes);
    // The simulation loop reports the blendshape residual of every step, for both solvers.
    for kind in [
        SolverKind::LocalGlobal(Default::default()),
        SolverKind::Fast(FastParams {
            modes: 8,
            clusters: 24,
            iterations: 10,
        }),
    ] {
        let sim = simulate(&back, kind).unwrap();
        assert_eq!(sim.blendshape_relative_residual.len(), FRAMES - 1);
        let worst = sim.blendshape_relative_residual.iter().cloned().fold(0.0, f64::max);
        assert!(worst <= 1e-8, "{kind:?}: {worst:e}");
    }
    let mut json: serde_json::Value = serde_json::from_str(&scene_to_json(&sc)).unwrap();
    json["blendshapes"]["deltas"][1].as_array_mut().unwrap().pop();
    std::fs::write(&path, json.to_string()).unwrap();
    let e = load_scene(&path).unwrap_err();
    assert!(e.to_string().contains("blendshapes.deltas[1]"), "{e}");
    std::fs::remove_dir_all(&dir).ok();

    let rig = sc.rig().unwrap();
    let dw = vec![1.0; sc.mesh.n_vertices()];
    let fp = FastParams {
        modes: 8,
        clusters: 24,
        iterations: 10,
    };
    let mass = masses(&sc);
    let momentum_mass: Vec<f64> = mass.iter().zip(&dw).map(|(m, d)| m * d).collect();
    let k1 = fast_precompute_key(&sc.mesh, &rig, &mass, &momentum_mass, fp, &[], &[]);
    let mut deltas = rig.deltas().to_vec();
    deltas[5] += 1e-9;
    let moved = LbsRig::new(3, rig.rest(), rig.weights(), rig.n_bones())
        .unwrap()
        .with_blendshapes(&deltas, rig.n_targets())
        .unwrap();
    let k2 = fast_precompute_key(&sc.mesh, &moved, &mass, &momentum_mass, fp, &[], &[]);
    assert_ne!(k1, k2);
    assert_eq!(
        k1,
        fast_precompute_key(&sc.mesh, &rig, &mass, &momentum_mass, fp, &[], &[])
    );
}
