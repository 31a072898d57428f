//! Example-based shape matching (Koyama et al. 2013): the "Must show" facts.

use overtone::mesh::tet_grid;
use overtone::shape_matching::{
    momenta, rigid_residual, s_bend_pose, twist_pose, Body, ExampleGoal, ManifoldScope, ShapeMatchingParams,
    ShapeMatchingSolver,
};
use overtone::OvertoneError;

use crate::common::paths::reference_data;
use crate::common::random::lcg;

/// The seed's 225-particle cuboid: 9 × 5 × 5 particles over 1.0 × 0.5 × 0.5 (spacing 0.125).
fn cuboid() -> Body {
    Body::from_tet_mesh(&tet_grid(9, 5, 5, 1.0, 0.5, 0.5).unwrap(), 1000.0, 1).unwrap()
}

fn rows(x: &[f64]) -> Vec<[f64; 3]> {
    x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// A rigid motion (rotation about (1, 2, 3) by 0.8 rad, translation (0.3, 1, -0.2)) of `x`.
fn rigidly_moved(x: &[f64]) -> Vec<f64> {
    let r = nalgebra::Rotation3::from_axis_angle(
        &nalgebra::Unit::new_normalize(nalgebra::Vector3::new(1.0, 2.0, 3.0)),
        0.8,
    );
    x.chunks_exact(3)
        .flat_map(|p| {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
            [q[0] + 0.3, q[1] + 1.0, q[2] - 0.2]
        })
        .collect()
}

fn noisy(x: &[f64], amplitude: f64, seed: u64) -> Vec<f64> {
    let mut s = seed;
    x.iter().map(|v| v + amplitude * lcg(&mut s)).collect()
}

/// No examples: a body perturbed by noise of 0.3 particle spacings and moved rigidly returns to
/// its rest shape up to a rigid motion: the mass-weighted RMS distance to the best rigid fit of
/// the rest shape falls from about 4e-2 to below 1e-6 (body size 1) in 10 s.
#[test]
fn perturbed_body_returns_to_rest_shape() {
    let body = cuboid();
    let params = ShapeMatchingParams {
        damping: 0.05,
        ..ShapeMatchingParams::free()
    };
    let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params).unwrap();
    let start = rigidly_moved(&noisy(&body.rest, 0.3 * 0.125, 1));
    let v0 = noisy(&vec![0.0; start.len()], 0.2, 2);
    sm.set_state(&start, &v0).unwrap();
    let rest = rows(&body.rest);
    let before = rigid_residual(&rest, &rows(&start), &body.masses);
    for _ in 0..600 {
        sm.step().unwrap();
    }
    let after = rigid_residual(&rest, sm.positions(), &body.masses);
    assert!(before > 1e-2, "perturbation too small: {before:e}");
    assert!(after < 1e-6, "residual after 10 s: {after:e} (start {before:e})");
}

/// Without gravity, floor or damping the goal forces of every region sum to zero and have zero
/// torque (masses split over regions, rotation of A_pq): over 500 steps of a violently
/// perturbed, spinning body, linear momentum drifts less than 1e-12 and angular momentum less than 1e-10 (the rotations
/// are exact to 1e-10 rad) relative to
/// their scale. The momentum-preserving damping keeps that true.
#[test]
fn momentum_is_conserved_without_gravity_or_floor() {
    let body = cuboid();
    for damping in [0.0, 0.05] {
        let params = ShapeMatchingParams {
            damping,
            ..ShapeMatchingParams::free()
        };
        let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params).unwrap();
        let start = noisy(&body.rest, 0.4 * 0.125, 3);
        let v0 = noisy(&vec![0.0; start.len()], 1.0, 4);
        sm.set_state(&start, &v0).unwrap();
        let (p0, l0) = momenta(sm.positions(), sm.velocities(), &body.masses);
        let total: f64 = body.masses.iter().sum();
        // Scales: momentum of the largest velocity; angular momentum of it at the body's size.
        let p_scale = total * 1.0;
        let l_scale = total * 1.0 * 1.0;
        assert!(l0.iter().map(|x| x * x).sum::<f64>().sqrt() > 1e-3 * l_scale);
        let mut worst = (0.0f64, 0.0f64);
        for _ in 0..500 {
            sm.step().unwrap();
            let (p, l) = momenta(sm.positions(), sm.velocities(), &body.masses);
            let dp = (0..3).map(|k| (p[k] - p0[k]).powi(2)).sum::<f64>().sqrt() / p_scale;
            let dl = (0..3).map(|k| (l[k] - l0[k]).powi(2)).sum::<f64>().sqrt() / l_scale;
            worst = (worst.0.max(dp), worst.1.max(dl));
        }
        println!("damping {damping}: drift P {:.2e}, L {:.2e}", worst.0, worst.1);
        assert!(
            worst.0 < 1e-12,
            "damping {damping}: linear momentum drift {:e}",
            worst.0
        );
        assert!(
            worst.1 < 1e-10,
            "damping {damping}: angular momentum drift {:e}",
            worst.1
        );
    }
}

/// One twist example, β = 1, no gravity: started from the example disturbed by noise of 0.2
/// spacings, the body settles to the example's shape up to a rigid motion (RMS residual below
/// 10% of the disturbance, and below 1% of the example's distance from the rest shape), while
/// with β = 0 the same start goes back to the rest shape, far from the example. This holds
/// with the example-shape goals ([`ExampleGoal::Shape`]); the seed's stretch goals (eq. 3) are
/// exact only for region-wise affine examples, and a twist is not: their settled residual is
/// printed (on this coarse grid the twist unwinds to the rest shape).
#[test]
fn settles_to_a_beta_one_example() {
    let body = cuboid();
    let example = twist_pose(&body.rest, std::f64::consts::FRAC_PI_2);
    let ex_rows = rows(&example);
    let rest_rows = rows(&body.rest);
    let example_offset = rigid_residual(&rest_rows, &ex_rows, &body.masses);
    let start = noisy(&example, 0.2 * 0.125, 5);
    let initial = rigid_residual(&ex_rows, &rows(&start), &body.masses);
    let params = ShapeMatchingParams {
        damping: 0.05,
        ..ShapeMatchingParams::free()
    };
    for scope in [ManifoldScope::Global, ManifoldScope::PerUnit] {
        let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params.clone()).unwrap();
        sm.set_examples(&[example.clone()], scope.clone(), 1.0).unwrap();
        sm.set_state(&start, &vec![0.0; start.len()]).unwrap();
        for _ in 0..900 {
            sm.step().unwrap();
        }
        let stretch_goal = rigid_residual(&ex_rows, sm.positions(), &body.masses);
        println!(
            "{}: eq. (3) stretch goals, residual to the example {stretch_goal:.3e}",
            scope.name()
        );
        sm.set_example_goal(ExampleGoal::Shape);
        sm.set_state(&start, &vec![0.0; start.len()]).unwrap();
        for _ in 0..900 {
            sm.step().unwrap();
        }
        let settled = rigid_residual(&ex_rows, sm.positions(), &body.masses);
        println!(
            "{}: residual to the example {settled:.3e} (start {initial:.3e}, example-rest {example_offset:.3e})",
            scope.name()
        );
        assert!(
            settled < 0.1 * initial,
            "{}: {settled:e} vs start {initial:e}",
            scope.name()
        );
        assert!(settled < 0.01 * example_offset, "{}: {settled:e}", scope.name());
        // β = 0: plain shape matching, back to rest.
        sm.set_beta(0.0).unwrap();
        for _ in 0..900 {
            sm.step().unwrap();
        }
        let to_rest = rigid_residual(&rest_rows, sm.positions(), &body.masses);
        let to_example = rigid_residual(&ex_rows, sm.positions(), &body.masses);
        assert!(
            to_rest < 1e-3 && to_example > 0.99 * example_offset,
            "{to_rest:e} {to_example:e}"
        );
    }
}

/// A pose in the examples' span is projected to itself: an example's own region stretches
/// project onto themselves with weights (0, 1, 0) (to 1e-12), and a combination
/// 0.4 S¹ + 0.6 S² of two examples' stretch vectors is a fixed point with weights (0.4, 0.6).
#[test]
fn pose_in_span_projects_to_itself() {
    let body = cuboid();
    let mut sm = ShapeMatchingSolver::new(
        &body.rest,
        &body.masses,
        body.regions.clone(),
        ShapeMatchingParams::free(),
    )
    .unwrap();
    let twist = twist_pose(&body.rest, 1.2);
    let bend = s_bend_pose(&body.rest, 0.5);
    sm.set_examples(&[twist.clone(), bend.clone()], ManifoldScope::Global, 1.0)
        .unwrap();
    let m = sm.manifold().unwrap();
    let s1 = sm.region_stretches(&twist).unwrap();
    let s2 = sm.region_stretches(&bend).unwrap();
    let (p, w) = m.project(&s2).unwrap();
    assert!(w[0].abs() < 1e-12 && (w[1] - 1.0).abs() < 1e-12, "{w:?}");
    assert!(p.iter().zip(&s2).all(|(a, b)| (a - b).abs() < 1e-12));
    let mix: Vec<f64> = s1.iter().zip(&s2).map(|(a, b)| 0.4 * a + 0.6 * b).collect();
    let (p, w) = m.project(&mix).unwrap();
    assert!((w[0] - 0.4).abs() < 1e-12 && (w[1] - 0.6).abs() < 1e-12, "{w:?}");
    let err = p.iter().zip(&mix).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(err < 1e-12, "{err:e}");
    let bw = m.blended_weights(&w);
    assert!((bw.iter().sum::<f64>() - 1.0).abs() < 1e-14);
    // Started at an example with zero velocity, the body stays there (an equilibrium).
    sm.set_example_goal(ExampleGoal::Shape);
    sm.set_state(&bend, &vec![0.0; bend.len()]).unwrap();
    for _ in 0..60 {
        sm.step().unwrap();
    }
    let drift = rigid_residual(&rows(&bend), sm.positions(), &body.masses);
    assert!(drift < 1e-9, "{drift:e}");
}

/// Bad examples give errors that name the example and what is wrong.
#[test]
fn bad_examples_are_refused() {
    let body = cuboid();
    let mut sm = ShapeMatchingSolver::new(
        &body.rest,
        &body.masses,
        body.regions.clone(),
        ShapeMatchingParams::free(),
    )
    .unwrap();
    let twist = twist_pose(&body.rest, 1.0);
    let expect = |r: Result<(), OvertoneError>, example: usize, needle: &str| match r {
        Err(e @ OvertoneError::Input(overtone::InputError::Example { .. })) => {
            let msg = e.to_string();
            assert!(msg.contains(&format!("example pose {example}")), "{msg}");
            assert!(msg.contains(needle), "`{msg}` lacks `{needle}`");
        }
        other => panic!("expected an example error, got {other:?}"),
    };
    // Wrong vertex count.
    expect(
        sm.set_examples(&[twist[..twist.len() - 3].to_vec()], ManifoldScope::Global, 1.0),
        0,
        "225 vertices",
    );
    // NaN.
    let mut nan = twist.clone();
    nan[3 * 17 + 1] = f64::NAN;
    expect(
        sm.set_examples(&[twist.clone(), nan], ManifoldScope::Global, 1.0),
        1,
        "row 17",
    );
    // A flattened example collapses its regions.
    let flat: Vec<f64> = body.rest.chunks_exact(3).flat_map(|p| [p[0], 0.0, p[2]]).collect();
    expect(sm.set_examples(&[flat], ManifoldScope::Global, 1.0), 0, "collapses");
    // A mirrored example inverts them.
    let mirrored: Vec<f64> = body.rest.chunks_exact(3).flat_map(|p| [-p[0], p[1], p[2]]).collect();
    expect(sm.set_examples(&[mirrored], ManifoldScope::Global, 1.0), 0, "inverts");
    // The rest shape moved rigidly is no example.
    expect(
        sm.set_examples(&[rigidly_moved(&body.rest)], ManifoldScope::Global, 1.0),
        0,
        "rest",
    );
    // The same example twice: linearly dependent.
    expect(
        sm.set_examples(&[twist.clone(), twist.clone()], ManifoldScope::Global, 1.0),
        1,
        "linearly dependent",
    );
    assert!(matches!(
        sm.set_examples(&[twist.clone()], ManifoldScope::Global, 1.5),
        Err(OvertoneError::Setting(_))
    ));
    // Degenerate regions: a flat sheet of particles (every 1-ring lies in a plane).
    let sheet = overtone::mesh::triangle_grid(4, 4, 1.0, 1.0).unwrap();
    let v3: Vec<f64> = sheet
        .vertices()
        .chunks_exact(2)
        .flat_map(|p| [p[0], p[1], 0.0])
        .collect();
    let flat_body = Body::from_surface(&v3, sheet.elements(), 1.0, 1).unwrap();
    let r = ShapeMatchingSolver::new(
        &flat_body.rest,
        &flat_body.masses,
        flat_body.regions,
        ShapeMatchingParams::free(),
    );
    match r {
        Err(e @ OvertoneError::Input(overtone::InputError::DegenerateRegion { .. })) => {
            assert!(e.to_string().contains("plane"), "{e}")
        }
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("a flat sheet was accepted"),
    }
}

/// Dropped from 1 m onto the floor under gravity (h = 1/240 s), the cuboid lands and lies on
/// it: after 6 s no particle is below the floor, the lowest touches it (within 1 mm), the centre
/// of mass is at the rigid half-height 0.25 m to 1.5 cm, the shape is its rest shape to 1e-2 (RMS,
/// up to a rigid motion) and the centre of mass moves slower than 0.15 m/s. (With friction the
/// body keeps rocking slowly on the floor, ~0.1 m/s, decaying over seconds: see the report.)
#[test]
fn dropped_cuboid_comes_to_rest_on_the_floor() {
    let body = cuboid();
    let params = ShapeMatchingParams::default();
    let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params).unwrap();
    let start: Vec<f64> = body
        .rest
        .chunks_exact(3)
        .flat_map(|p| {
            let (c, s) = (0.3f64.cos(), 0.3f64.sin());
            [c * p[0] - s * p[1], s * p[0] + c * p[1] + 1.0, p[2]]
        })
        .collect();
    sm.set_state(&start, &vec![0.0; start.len()]).unwrap();
    let mut touched = false;
    for _ in 0..1440 {
        sm.step().unwrap();
        touched |= sm.contacts() > 0;
    }
    assert!(touched);
    let lowest = sm.positions().iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    let (p, _) = momenta(sm.positions(), sm.velocities(), &body.masses);
    let total: f64 = body.masses.iter().sum();
    let vcm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt() / total;
    assert!((0.0..1e-3).contains(&lowest), "lowest particle at {lowest}");
    assert!(vcm < 0.15, "centre of mass still moving at {vcm} m/s");
    let cy = sm
        .positions()
        .iter()
        .zip(&body.masses)
        .map(|(p, m)| p[1] * m)
        .sum::<f64>()
        / total;
    assert!((cy - 0.25).abs() < 0.015, "centre height {cy}");
    let shape = rigid_residual(&rows(&body.rest), sm.positions(), &body.masses);
    println!("resting: v_cm {vcm:.3e} m/s, shape residual {shape:.3e}, centre height {cy:.3} m");
    assert!(shape < 1e-2, "{shape:e}");
}

/// Example-aware complementary dynamics: a 1.0 × 0.25 × 0.25 bar (9 × 3 × 3 vertices) on one
/// affine bone held still, `D = I`, no gravity. The example is a twist (1 rad end to end) made
/// reachable by the secondary motion: rest + the twist displacement projected onto
/// `Jᵀ M D u = 0` (an example whose displacement has a rig component cannot be reached by
/// `u_c`; offered anyway, it pushes the body along the example manifold). Started from the
/// example disturbed by noise (3 mm, projected), plain ARAP CD swings back through the rest
/// shape, while with the example (β = 1, global and per-element manifolds) the secondary shape
/// moves toward the example: its distance to it (up to a rigid motion) at least halves and ends
/// below a tenth of plain CD's. `‖Jᵀ M D u_c‖` relative stays ≤ 1e-8 at every step in all runs.
#[test]
fn example_aware_cd_keeps_the_contract_and_moves_toward_the_example() {
    use overtone::dynamics::{FullOrderSolver, Material, SolverParams};
    use overtone::rig::LbsRig;
    let mesh = tet_grid(9, 3, 3, 1.0, 0.25, 0.25).unwrap();
    let n = mesh.n_vertices();
    let rest = mesh.vertices().to_vec();
    let twist = twist_pose(&rest, 1.0);
    let rig = LbsRig::new(3, &rest, &vec![1.0; n], 1).unwrap();
    let p0 = rig
        .params_from_transforms(&[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
        .unwrap();
    let field = |pose: &[f64]| {
        let mut u = vec![0.0; 3 * n];
        for v in 0..n {
            for i in 0..3 {
                u[i * n + v] = pose[3 * v + i] - rest[3 * v + i];
            }
        }
        u
    };
    let new_solver = || {
        FullOrderSolver::new(
            &mesh,
            rig.clone(),
            &vec![1.0; n],
            &Material::default(),
            &SolverParams::default(),
            Default::default(),
            &p0,
        )
        .unwrap()
    };
    // The reachable example: rest + the projected twist displacement.
    let mut s = new_solver();
    s.set_displacement(&field(&twist)).unwrap();
    let pe = s.displacement().to_vec();
    let example: Vec<f64> = (0..n)
        .flat_map(|v| {
            [
                rest[3 * v] + pe[v],
                rest[3 * v + 1] + pe[n + v],
                rest[3 * v + 2] + pe[2 * n + v],
            ]
        })
        .collect();
    let u0 = field(&noisy(&example, 0.003, 9));
    let masses = overtone::fem::lumped_mass(&mesh, &overtone::mesh::element_volumes(&mesh), 1000.0);
    let ex_rows = rows(&example);
    let to_rows = |x: &[f64]| (0..n).map(|v| [x[v], x[n + v], x[2 * n + v]]).collect::<Vec<_>>();
    let run = |examples: Option<ManifoldScope>| {
        let mut s = new_solver();
        if let Some(scope) = examples {
            s.set_examples(&[example.clone()], scope, 1.0).unwrap();
        }
        s.set_displacement(&u0).unwrap();
        let start = rigid_residual(&ex_rows, &to_rows(s.positions()), &masses);
        let mut worst = 0.0f64;
        for _ in 0..150 {
            let rep = s.step(&p0).unwrap();
            worst = worst.max(rep.relative_residual);
        }
        (start, rigid_residual(&ex_rows, &to_rows(s.positions()), &masses), worst)
    };
    let offset = rigid_residual(&rows(&rest), &ex_rows, &masses);
    let (start, plain, worst) = run(None);
    println!("plain CD: distance to the example {start:.3e} -> {plain:.3e} (rest is {offset:.3e} away); residual {worst:.1e}");
    assert!(worst <= 1e-8, "{worst:e}");
    assert!(
        plain > 0.3 * offset,
        "plain CD should swing away from the example: {plain:e}"
    );
    for scope in [ManifoldScope::Global, ManifoldScope::PerUnit] {
        let (start, with, worst) = run(Some(scope.clone()));
        println!(
            "{} examples: distance to the example {start:.3e} -> {with:.3e}; residual {worst:.1e}",
            scope.name()
        );
        assert!(worst <= 1e-8, "{worst:e}");
        assert!(with < 0.5 * start, "{}: {with:e} vs start {start:e}", scope.name());
        assert!(with < 0.1 * plain, "{}: {with:e} vs plain {plain:e}", scope.name());
    }
    let mut s = new_solver();
    // Bad examples are refused with the example named.
    let short = example[..3 * n - 3].to_vec();
    let err = s
        .set_examples(&[short], ManifoldScope::Global, 1.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("example pose 0") && err.contains("81 vertices"), "{err}");
    let mut nan = example.clone();
    nan[5] = f64::NAN;
    let err = s
        .set_examples(&[example.clone(), nan], ManifoldScope::Global, 1.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("example pose 1") && err.contains("non-finite"), "{err}");
    let flat: Vec<f64> = rest.chunks_exact(3).flat_map(|p| [p[0], p[1], 0.0]).collect();
    let err = s
        .set_examples(&[flat], ManifoldScope::Global, 1.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("collapses"), "{err}");
}

/// Users bring their own bodies: the reference release's elephant as a MEDIT tet mesh (494
/// particles, masses summing to density × volume to 1e-12 relative) and as an OBJ surface. On
/// the surface the 1-rings of flat patches are refused with a clear error; 2-ring regions work,
/// and a perturbed surface body returns to its shape like the tet body.
#[test]
fn mesh_and_obj_bodies_load_and_return_to_their_shape() {
    let dir = reference_data("elephant");
    let tet = Body::load(&dir.join("elephant.mesh"), 2.0, 1).unwrap();
    assert_eq!(tet.n_particles(), 494);
    let m = overtone::io::read_medit(&dir.join("elephant.mesh")).unwrap();
    let mesh = overtone::mesh::SimplexMesh::new(3, m.vertices, m.tetrahedra).unwrap();
    let volume: f64 = overtone::mesh::element_volumes(&mesh).iter().sum();
    let total: f64 = tet.masses.iter().sum();
    assert!((total - 2.0 * volume).abs() < 1e-12 * total);
    match Body::load(&dir.join("elephant.obj"), 1.0, 1)
        .and_then(|b| ShapeMatchingSolver::new(&b.rest, &b.masses, b.regions, ShapeMatchingParams::free()))
    {
        Err(e @ OvertoneError::Input(overtone::InputError::DegenerateRegion { .. })) => {
            assert!(e.to_string().contains("more rings"), "{e}")
        }
        other => panic!("expected a degenerate region, got {:?}", other.err()),
    }
    let surf = Body::load(&dir.join("elephant.obj"), 1.0, 2).unwrap();
    let params = ShapeMatchingParams {
        damping: 0.05,
        ..ShapeMatchingParams::free()
    };
    for body in [tet, surf] {
        let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params.clone()).unwrap();
        let size = body.rest.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            - body.rest.iter().cloned().fold(f64::INFINITY, f64::min);
        let start = noisy(&body.rest, 0.01 * size, 11);
        sm.set_state(&start, &vec![0.0; start.len()]).unwrap();
        let before = rigid_residual(&rows(&body.rest), &rows(&start), &body.masses);
        for _ in 0..600 {
            sm.step().unwrap();
        }
        let after = rigid_residual(&rows(&body.rest), sm.positions(), &body.masses);
        assert!(
            after < 1e-3 * before,
            "{} particles: {after:e} vs {before:e}",
            body.n_particles()
        );
    }
    assert!(matches!(
        Body::load(&dir.join("elephant.tgf"), 1.0, 1),
        Err(OvertoneError::File(overtone::FileError::Parse { .. }))
    ));
}

/// Held particles stay exactly where `set_state` put them while the rest of the body sags, and
/// a clamp naming a particle the body does not have is refused before anything changes.
#[test]
fn held_particles_stay_put_and_bad_clamps_are_refused() {
    let body = cuboid();
    let params = ShapeMatchingParams {
        floor: None,
        ..ShapeMatchingParams::default()
    };
    let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params).unwrap();
    let held: Vec<usize> = (0..body.n_particles()).filter(|&i| body.rest[3 * i] == 0.0).collect();
    assert_eq!(held.len(), 25);
    let err = sm.set_held(&[0, body.n_particles()]).unwrap_err().to_string();
    assert!(err.contains("held particle index") && err.contains("225"), "{err}");
    assert!(sm.held().is_empty(), "a refused clamp holds nothing");
    sm.set_held(&held).unwrap();
    for _ in 0..240 {
        sm.step().unwrap();
    }
    for &i in &held {
        assert_eq!(
            sm.positions()[i],
            [body.rest[3 * i], body.rest[3 * i + 1], body.rest[3 * i + 2]]
        );
    }
    let tip = (0..body.n_particles()).filter(|&i| body.rest[3 * i] == 1.0);
    let sag = tip
        .map(|i| body.rest[3 * i + 1] - sm.positions()[i][1])
        .fold(f64::INFINITY, f64::min);
    assert!(sag > 0.05, "the free end sags under gravity: {sag}");
}

/// Issue 35, the Fig. 12 set-up: the held lattice cuboid sags the same way with and without
/// the twist example, but only the goal built from the example's region shapes twists it while
/// loaded: ≥ 15° (86° measured at 4 s, in the example's direction) against |twist| ≤ 0.5°
/// without examples (0.0° measured: the lattice regions are mirror-symmetric) and ≤ 2° with
/// the seed's eq. (3) goal (0.3°). Loaded and twisted, it sits nearer the example than the rest
/// shape (0.019 against 0.091 measured).
#[test]
fn the_held_cuboid_twists_only_with_the_example_shapes() {
    use overtone::figures::{run_body, shape_matching_setup, PaperFigure};
    let setup = shape_matching_setup(PaperFigure::HeldTwist).unwrap();
    let runs: Vec<_> = setup.bodies.iter().map(|b| run_body(&setup, b).unwrap()).collect();
    let last = |k: usize| *runs[k].angles.last().unwrap();
    let (plain, seed, shapes) = (last(0), last(1), last(2));
    println!("final twist: plain {plain:?}, seed's goal {seed:?}, example shapes {shapes:?}");
    assert!(plain.twist.to_degrees().abs() <= 0.5, "{plain:?}");
    assert!(seed.twist.to_degrees().abs() <= 2.0, "{seed:?}");
    assert!(shapes.twist.to_degrees() >= 15.0, "{shapes:?}");
    for a in [plain, seed, shapes] {
        assert!(a.bend.to_degrees() < -5.0, "every body sags: {a:?}");
    }
    let r = &runs[2];
    let (to_rest, to_example) = (
        *r.distance_to_rest.last().unwrap(),
        r.distance_to_examples.last().unwrap()[0],
    );
    assert!(to_example < 0.5 * to_rest, "{to_example} vs {to_rest}");
}

/// Issue 35, the Fig. 8 and Fig. 9 set-ups: dropped bodies deform in the style of their
/// examples. Largest twist of the twist-example cuboid on the slope ≥ 2x the plain cuboid's
/// (58° against 15.5° measured), largest S-bend of the S-example cuboid ≥ 3x (17.4° against
/// 2.3°); the cylinders with the twist example twist ≥ 2x the plain one (131° against 49°)
/// and the S example bends ≥ 2x (27.6° against 8.1°).
#[test]
fn dropped_bodies_deform_in_the_style_of_their_examples() {
    use overtone::figures::{run_body, shape_matching_setup, PaperFigure};
    use overtone::shape_matching::BarAngles;
    let largest = |runs: &[overtone::figures::FigureRun], k: usize, g: fn(&BarAngles) -> f64| {
        runs[k]
            .angles
            .iter()
            .map(|a| g(a).abs().to_degrees())
            .fold(0.0, f64::max)
    };
    let twist = |a: &BarAngles| a.twist;
    let s = |a: &BarAngles| a.s_bend;
    let slope = shape_matching_setup(PaperFigure::Slope).unwrap();
    let runs: Vec<_> = slope.bodies.iter().map(|b| run_body(&slope, b).unwrap()).collect();
    let (t0, t1) = (largest(&runs, 0, twist), largest(&runs, 1, twist));
    let (s0, s2) = (largest(&runs, 0, s), largest(&runs, 2, s));
    println!("slope: twist {t0:.1} -> {t1:.1}, S-bend {s0:.1} -> {s2:.1}");
    assert!(t1 >= 2.0 * t0 && s2 >= 3.0 * s0);
    let cyl = shape_matching_setup(PaperFigure::Cylinders).unwrap();
    let runs: Vec<_> = cyl.bodies.iter().map(|b| run_body(&cyl, b).unwrap()).collect();
    let (t0, t1) = (largest(&runs, 0, twist), largest(&runs, 1, twist));
    let (s0, s2) = (largest(&runs, 0, s), largest(&runs, 2, s));
    println!("cylinders: twist {t0:.1} -> {t1:.1}, S-bend {s0:.1} -> {s2:.1}");
    assert!(t1 >= 2.0 * t0 && s2 >= 2.0 * s0);
}

/// Issue 35, delivery 4: example-aware complementary dynamics changes the look of a swing. The
/// bar swung by its rig for 1 s bends in an S with the S example (largest S-bend 39° measured)
/// against 10° without (bound: ≥ 3x); every body comes back to rest once the rig holds (|S-bend|
/// and |twist| ≤ 1° at 3 s, 0.2° measured).
#[test]
fn a_swung_bar_takes_the_s_shape_of_its_example() {
    use overtone::figures::{run_figure, PaperFigure};
    let outcome = run_figure(PaperFigure::CdSwing).unwrap();
    let largest_s = |k: usize| {
        outcome.bodies[k]
            .run
            .angles
            .iter()
            .map(|a| a.s_bend.abs().to_degrees())
            .fold(0.0, f64::max)
    };
    let (plain, with_s) = (largest_s(0), largest_s(1));
    println!("largest S-bend: plain {plain:.1}°, S example {with_s:.1}°");
    assert_eq!(outcome.bodies[1].name, "S example");
    assert!(with_s >= 3.0 * plain, "{with_s} vs {plain}");
    for b in &outcome.bodies {
        let last = b.run.angles.last().unwrap();
        assert!(
            last.s_bend.abs().to_degrees() <= 1.0 && last.twist.abs().to_degrees() <= 1.0,
            "{}: {last:?}",
            b.name
        );
    }
}
