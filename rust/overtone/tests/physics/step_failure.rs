//! A time step that fails leaves every solver exactly as it was, so a host can retry.
//!
//! For the full-order ARAP solver, the Newton (neo-Hookean) solver and the fast solver, a twin
//! pair is stepped through the sphere scene of the reference release; one twin is also given
//! (a) a pose with a NaN, refused before anything changes, and (b) a finite pose scaled by
//! 1e300, which makes the step itself fail (the inertia term, or the Newton energy, overflows).
//! The tests assert the typed error and its message, that the state (positions, velocities,
//! displacement; reduced state for the fast solver) is bit-identical to before the call, and
//! that the following steps of both twins agree bit for bit (so nothing hidden, such as the
//! rotation warm starts or the skinned positions, was left half-updated).
//!
//! The shape-matching solver has no rig pose; its step is made to fail by a time step of 1e300 s
//! (gravity then overflows the positions), and the twins are compared the same way after the
//! sane time step is put back.

use overtone::dynamics::{FastParams, FastSolver, FullOrderSolver, NewtonCdParams, NewtonCdSolver, SolverParams};
use overtone::energy::EnergyModel;
use overtone::leak::default_momentum_weights;
use overtone::mesh::tet_grid;
use overtone::rig::LbsRig;
use overtone::scene::{load_scene, Scene};
use overtone::shape_matching::{twist_pose, Body, ManifoldScope, ShapeMatchingParams, ShapeMatchingSolver};
use overtone::OvertoneError;

use crate::common::paths::reference_file;

fn sphere() -> Scene {
    load_scene(&reference_file("sphere", "json")).unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Rig parameters of frame `f`.
fn pose(scene: &Scene, rig: &LbsRig, f: usize) -> Vec<f64> {
    rig.params_from_transforms(&scene.frames[f]).unwrap()
}

/// The two poses every solver must survive: one with a NaN (refused up front) and one whose
/// step overflows (every parameter times 1e300).
fn bad_poses(p: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut nan = p.to_vec();
    nan[1] = f64::NAN;
    let huge = p.iter().map(|x| if *x == 0.0 { 1e300 } else { x * 1e300 }).collect();
    (nan, huge)
}

fn assert_step_failed(e: &OvertoneError, solver: &str) {
    assert!(
        matches!(e, OvertoneError::Numerical(overtone::NumericalError::StepFailed { .. })),
        "{solver}: {e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("failed") && msg.contains("state is unchanged") && msg.contains("smaller time step"),
        "{solver}: {msg}"
    );
}

fn params(scene: &Scene) -> SolverParams {
    SolverParams {
        dt: scene.dt,
        gravity: vec![0.0; 3],
        ..Default::default()
    }
}

#[test]
fn full_order_step_failure_leaves_the_state_bit_identical() {
    let scene = sphere();
    let rig = LbsRig::new(3, scene.mesh.vertices(), &scene.weights, scene.n_bones).unwrap();
    let dw = default_momentum_weights(&scene.mesh).unwrap();
    let pr = params(&scene);
    let p0 = pose(&scene, &rig, 0);
    let mut a = FullOrderSolver::new(
        &scene.mesh,
        rig.clone(),
        &dw,
        &scene.material,
        &pr,
        Default::default(),
        &p0,
    )
    .unwrap();
    let mut b = FullOrderSolver::new(
        &scene.mesh,
        rig.clone(),
        &dw,
        &scene.material,
        &pr,
        Default::default(),
        &p0,
    )
    .unwrap();
    for f in 1..6 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
    }
    let snapshot = |s: &FullOrderSolver| [s.positions(), s.velocities(), s.displacement(), s.rig_positions()].map(bits);
    let before = snapshot(&a);
    assert!(
        a.displacement().iter().any(|x| x.abs() > 1e-6),
        "the body must be moving"
    );
    let (nan, huge) = bad_poses(&pose(&scene, &rig, 6));
    let e = a.step(&nan).unwrap_err();
    assert!(
        matches!(e, OvertoneError::Input(overtone::InputError::NonFinite { .. })),
        "{e:?}"
    );
    assert_eq!(snapshot(&a), before);
    let e = a.step(&huge).unwrap_err();
    assert_step_failed(&e, "full order");
    assert!(e.to_string().contains("ARAP step"), "{e}");
    assert_eq!(snapshot(&a), before, "a failed ARAP step changed the state");
    for f in 6..12 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
        assert_eq!(
            snapshot(&a),
            snapshot(&b),
            "frame {f}: the twins differ after the failed step"
        );
    }
}

#[test]
fn newton_step_failure_leaves_the_state_bit_identical() {
    let scene = sphere();
    let rig = LbsRig::new(3, scene.mesh.vertices(), &scene.weights, scene.n_bones).unwrap();
    let dw = default_momentum_weights(&scene.mesh).unwrap();
    let pr = params(&scene);
    let newton = NewtonCdParams {
        model: EnergyModel::NeoHookean,
        max_iterations: 20,
        tolerance: 1e-8,
    };
    let p0 = pose(&scene, &rig, 0);
    let new = || NewtonCdSolver::new(&scene.mesh, rig.clone(), &dw, &scene.material, &pr, &newton, &p0).unwrap();
    let (mut a, mut b) = (new(), new());
    for f in 1..6 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
    }
    let snapshot = |s: &NewtonCdSolver| [s.positions(), s.velocities(), s.displacement()].map(bits);
    let before = snapshot(&a);
    let report_before = a.last_newton_report().cloned();
    assert!(
        a.displacement().iter().any(|x| x.abs() > 1e-6),
        "the body must be moving"
    );
    let (nan, huge) = bad_poses(&pose(&scene, &rig, 6));
    let e = a.step(&nan).unwrap_err();
    assert!(
        matches!(e, OvertoneError::Input(overtone::InputError::NonFinite { .. })),
        "{e:?}"
    );
    assert_eq!(snapshot(&a), before);
    let e = a.step(&huge).unwrap_err();
    assert_step_failed(&e, "Newton");
    let msg = e.to_string();
    assert!(
        msg.contains("Newton step") && msg.contains("starting point") && msg.contains("overflows"),
        "{msg}"
    );
    assert_eq!(snapshot(&a), before, "a failed Newton step changed the state");
    assert_eq!(a.last_newton_report().cloned(), report_before);
    for f in 6..10 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
        assert_eq!(
            snapshot(&a),
            snapshot(&b),
            "frame {f}: the twins differ after the failed step"
        );
    }
}

#[test]
fn fast_step_failure_leaves_the_state_bit_identical() {
    let scene = sphere();
    let rig = LbsRig::new(3, scene.mesh.vertices(), &scene.weights, scene.n_bones).unwrap();
    let dw = default_momentum_weights(&scene.mesh).unwrap();
    let pr = params(&scene);
    let p0 = pose(&scene, &rig, 0);
    let fast = FastParams {
        modes: 6,
        clusters: 20,
        iterations: 10,
    };
    let new = || FastSolver::new(&scene.mesh, rig.clone(), &dw, &scene.material, &pr, fast, &p0).unwrap();
    let (mut a, mut b) = (new(), new());
    for f in 1..6 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
    }
    let snapshot = |s: &FastSolver| [s.reduced_state(), s.reduced_velocity(), s.rig_params()].map(bits);
    let before = snapshot(&a);
    assert!(
        a.reduced_state().iter().any(|x| x.abs() > 1e-9),
        "the body must be moving"
    );
    let (nan, huge) = bad_poses(&pose(&scene, &rig, 6));
    let e = a.step(&nan).unwrap_err();
    assert!(
        matches!(e, OvertoneError::Input(overtone::InputError::NonFinite { .. })),
        "{e:?}"
    );
    assert_eq!(snapshot(&a), before);
    let e = a.step(&huge).unwrap_err();
    assert_step_failed(&e, "fast");
    assert_eq!(snapshot(&a), before, "a failed fast step changed the state");
    let n = scene.mesh.n_vertices();
    for f in 6..12 {
        let p = pose(&scene, &rig, f);
        a.step(&p).unwrap();
        b.step(&p).unwrap();
        assert_eq!(
            snapshot(&a),
            snapshot(&b),
            "frame {f}: the twins differ after the failed step"
        );
        let (mut ua, mut ub) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        a.add_displacement(&mut ua);
        b.add_displacement(&mut ub);
        assert_eq!(bits(&ua), bits(&ub));
    }
}

#[test]
fn shape_matching_step_failure_leaves_the_state_bit_identical() {
    // The 225-particle cuboid of the `shape_matching` tests, twisted and spinning, with a twisted
    // example pose (global manifold, so the weights and goal maps are recomputed every step).
    let body = Body::from_tet_mesh(&tet_grid(9, 5, 5, 1.0, 0.5, 0.5).unwrap(), 1000.0, 1).unwrap();
    let sane = ShapeMatchingParams {
        gravity: [0.0, -9.8, 0.0],
        floor: None,
        ..ShapeMatchingParams::free()
    };
    let start = twist_pose(&body.rest, 0.6);
    let spin: Vec<f64> = start
        .chunks_exact(3)
        .flat_map(|p| [-2.0 * p[2], 0.5, 2.0 * p[0]])
        .collect();
    let new = || {
        let mut s = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), sane.clone()).unwrap();
        s.set_examples(&[twist_pose(&body.rest, 1.0)], ManifoldScope::Global, 0.5)
            .unwrap();
        s.set_state(&start, &spin).unwrap();
        s
    };
    let (mut a, mut b) = (new(), new());
    for _ in 0..20 {
        a.step().unwrap();
        b.step().unwrap();
    }
    let flat = |x: &[[f64; 3]]| x.iter().flatten().copied().collect::<Vec<f64>>();
    let snapshot = |s: &ShapeMatchingSolver| {
        let stretch: Vec<f64> = (0..s.regions().n_regions()).flat_map(|r| s.region_stretch(r)).collect();
        [
            flat(s.positions()),
            flat(s.velocities()),
            stretch,
            s.example_weights().to_vec(),
        ]
        .map(|v| bits(&v))
    };
    let before = snapshot(&a);
    let contacts = a.contacts();
    a.set_params(ShapeMatchingParams {
        dt: 1e300,
        ..sane.clone()
    })
    .unwrap();
    let e = a.step().unwrap_err();
    assert_step_failed(&e, "shape matching");
    let msg = e.to_string();
    assert!(
        msg.contains("shape-matching step") && msg.contains("non-finite") && msg.contains("reduce dt or alpha"),
        "{msg}"
    );
    assert_eq!(snapshot(&a), before, "a failed shape-matching step changed the state");
    assert_eq!(a.contacts(), contacts);
    a.set_params(sane.clone()).unwrap();
    for f in 0..20 {
        a.step().unwrap();
        b.step().unwrap();
        assert_eq!(
            snapshot(&a),
            snapshot(&b),
            "step {f}: the twins differ after the failed step"
        );
    }
}
