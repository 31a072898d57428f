//! Fast complementary dynamics: the weight-space constraint, the constrained eigenproblem, the
//! structural rig-orthogonality of the subspace, convergence to the full solver, bad settings.

use faer::{Mat, Side};
use overtone::dynamics::fast::{skinning_eigenmodes, skinning_eigenmodes_of_material, weight_space_constraint};
use overtone::dynamics::{FastParams, FastSolver, SolverParams};
use overtone::fem::{lumped_mass, scalar_stiffness, DeformationJacobian};
use overtone::leak::default_momentum_weights;
use overtone::mesh::{element_volumes, triangle_grid, SimplexMesh};
use overtone::rig::{lbs_basis, LbsRig};
use overtone::scene::{load_scene, metronome_beam, simulate, MetronomeBeam, Scene, SolverKind};
use overtone::solve::orthonormal_constraint_basis;
use overtone::OvertoneError;

use crate::common::paths::reference_file;
use crate::common::random::noise;

/// `Â = Ĵᵀ diag(m ⊙ d)` of a scene (default leak, the scene's density).
fn scalar_constraint(sc: &Scene) -> Mat<f64> {
    let (n, d) = (sc.mesh.n_vertices(), sc.mesh.dim());
    let rig = LbsRig::new(d, sc.mesh.vertices(), &sc.weights, sc.n_bones).unwrap();
    let mass = lumped_mass(&sc.mesh, &element_volumes(&sc.mesh), sc.material.density);
    let dw = default_momentum_weights(&sc.mesh).unwrap();
    let jh = rig.scalar_jacobian();
    Mat::from_fn(jh.ncols(), n, |k, v| jh[(v, k)] * mass[v] * dw[v])
}

fn spectral_norm(m: &Mat<f64>) -> f64 {
    let g = m * m.transpose();
    g.self_adjoint_eigenvalues(Side::Lower)
        .unwrap()
        .into_iter()
        .fold(0.0, f64::max)
        .sqrt()
}

/// `C w = 0` implies `JᵀMD · lbs_jacobian(X, w) = 0` for random `w` (to 1e-12 relative), and
/// the rank revelation keeps every independent functional: 6 for the seed's one-handle beam
/// (the moments 1, x, y, x², xy, y² of the leak-weighted mass).
#[test]
fn weight_space_constraint_implies_rig_orthogonality() {
    for (sc, expected_rank) in [
        (metronome_beam(MetronomeBeam::default()).unwrap(), Some(6)),
        (load_scene(&reference_file("elephant", "json")).unwrap(), None),
    ] {
        let (n, d) = (sc.mesh.n_vertices(), sc.mesh.dim());
        let a = scalar_constraint(&sc);
        let rows = weight_space_constraint(&a, sc.mesh.vertices(), d);
        let u = orthonormal_constraint_basis(&rows, n, rows.len() / n, "test").unwrap();
        if let Some(r) = expected_rank {
            assert_eq!(u.ncols(), r);
        }
        let a_norm = spectral_norm(&a);
        for seed in 0..5 {
            let mut w = noise(seed, n);
            // w ← w − U Uᵀ w: now C w = 0.
            let coef: Vec<f64> = (0..u.ncols()).map(|k| (0..n).map(|v| u[(v, k)] * w[v]).sum()).collect();
            for v in 0..n {
                w[v] -= (0..u.ncols()).map(|k| u[(v, k)] * coef[k]).sum::<f64>();
            }
            let b = lbs_basis(d, sc.mesh.vertices(), 1, |v, _| w[v]);
            let ab = &a * &b;
            let rel = spectral_norm(&ab) / (a_norm * spectral_norm(&b.transpose().to_owned()));
            assert!(rel < 1e-12, "{}: relative ‖Â B(w)‖ = {rel:e}", sc.name);
        }
    }
}

/// The `k` lowest eigenvalues of `K w = λ M w` with `C w = 0` by a dense null-space solve:
/// `K = Σ_e s_e ∇φᵀ∇φ` over `stiffness_weights`, `M` the unit-density lumped mass of
/// `volumes`, `C` the weight-space constraint of `a` (rank `rank`).
fn dense_constrained_eigenvalues(
    mesh: &SimplexMesh,
    a: &Mat<f64>,
    stiffness_weights: &[f64],
    volumes: &[f64],
    rank: usize,
    k: usize,
) -> Vec<f64> {
    let n = mesh.n_vertices();
    let mass = lumped_mass(mesh, volumes, 1.0);
    let kmat = scalar_stiffness(&DeformationJacobian::new(mesh), stiffness_weights)
        .unwrap()
        .to_dense();
    let rows = weight_space_constraint(a, mesh.vertices(), mesh.dim());
    let c = Mat::from_fn(rows.len() / n, n, |i, v| rows[i * n + v]);
    let svd = c.svd().unwrap();
    let null = svd.V().subcols(rank, n - rank).to_owned();
    // Whitened reduced problem: M^{1/2}-scaled null basis, orthonormalised.
    let mn = Mat::from_fn(n, n - rank, |v, j| mass[v].sqrt() * null[(v, j)]);
    let qr = mn.qr();
    let q = qr.compute_thin_Q();
    let y = Mat::from_fn(n, n - rank, |v, j| q[(v, j)] / mass[v].sqrt());
    let red = y.transpose() * &kmat * &y;
    let ev = red.self_adjoint_eigenvalues(Side::Lower).unwrap();
    (0..k).map(|i| ev[i]).collect()
}

/// Eigenvalues to 1e-9 relative, fields `M`-orthonormal to 1e-10 under the lumped mass of
/// `volumes` and inside the constraint (`‖C w‖ ≤ 1e-10 ‖C‖ ‖w‖`).
fn check_constrained_modes(
    mesh: &SimplexMesh,
    a: &Mat<f64>,
    modes: &overtone::dynamics::fast::SkinningEigenmodes,
    stiffness_weights: &[f64],
    volumes: &[f64],
) {
    let n = mesh.n_vertices();
    let k = modes.values.len();
    let ev = dense_constrained_eigenvalues(mesh, a, stiffness_weights, volumes, modes.constraint_rank, k);
    for i in 0..k {
        let rel = (modes.values[i] - ev[i]).abs() / ev[i].abs();
        assert!(rel < 1e-9, "eigenvalue {i}: {} vs dense {}", modes.values[i], ev[i]);
    }
    let mass = lumped_mass(mesh, volumes, 1.0);
    for i in 0..k {
        for j in 0..k {
            let g: f64 = (0..n)
                .map(|v| modes.weights[(v, i)] * mass[v] * modes.weights[(v, j)])
                .sum();
            assert!((g - if i == j { 1.0 } else { 0.0 }).abs() < 1e-10);
        }
    }
    let rows = weight_space_constraint(a, mesh.vertices(), mesh.dim());
    let c_norm = rows.iter().map(|x| x * x).sum::<f64>().sqrt();
    for i in 0..k {
        let w_norm = (0..n).map(|v| modes.weights[(v, i)].powi(2)).sum::<f64>().sqrt();
        let worst = rows
            .chunks_exact(n)
            .map(|row| (0..n).map(|v| row[v] * modes.weights[(v, i)]).sum::<f64>().abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-10 * c_norm * w_norm, "mode {i}: |C w| {worst:e}");
    }
}

/// The 16 × 4 metronome beam the dense eigenpair checks run on (small enough for a dense
/// null-space solve, large enough for the Krylov–Schur path).
fn small_beam() -> Scene {
    metronome_beam(MetronomeBeam {
        w: 16,
        h: 4,
        ..Default::default()
    })
    .unwrap()
}

/// The Krylov–Schur eigenpairs equal those of a dense null-space solve on a small mesh
/// (eigenvalues to 1e-9 relative).
#[test]
fn constrained_eigenpairs_match_a_dense_null_space_solve() {
    let sc = small_beam();
    let a = scalar_constraint(&sc);
    let modes = skinning_eigenmodes(&sc.mesh, Some(&a), 6).unwrap();
    let vols = element_volumes(&sc.mesh);
    check_constrained_modes(&sc.mesh, &a, &modes, &vols, &vols);
}

/// The eigenmodes of a material (an embedding lattice's effective volumes, a painted
/// stiffness) solve the weighted problem `Σ s_e ∇φᵀ∇φ w = λ M(vol') w`, `C w = 0`: the same
/// dense check with element shares between 0.05 and 1 and stiffness multipliers 0.5-2; scaling
/// every stiffness weight by 3 scales the eigenvalues by 3 (1e-9) and keeps the fields (1e-8);
/// wrong lengths, non-positive and non-finite entries are typed errors.
#[test]
fn material_eigenmodes_solve_the_weighted_problem() {
    let sc = small_beam();
    let a = scalar_constraint(&sc);
    let vols = element_volumes(&sc.mesh);
    let m = vols.len();
    let shares: Vec<f64> = (0..m).map(|e| 0.05 + 0.95 * ((e as f64) * 0.618_034).fract()).collect();
    let volumes: Vec<f64> = vols.iter().zip(&shares).map(|(v, s)| v * s).collect();
    let weights: Vec<f64> = volumes
        .iter()
        .enumerate()
        .map(|(e, v)| v * 2f64.powf(((e as f64) * 0.414_214).fract() * 2.0 - 1.0))
        .collect();
    let k = 6;
    let modes = skinning_eigenmodes_of_material(&sc.mesh, &a, k, &weights, &volumes).unwrap();
    check_constrained_modes(&sc.mesh, &a, &modes, &weights, &volumes);
    let plain = skinning_eigenmodes(&sc.mesh, Some(&a), k).unwrap();
    let moved = (0..k).any(|i| (modes.values[i] / plain.values[i] - 1.0).abs() > 1e-3);
    assert!(
        moved,
        "the material changes the spectrum: {:?} vs {:?}",
        modes.values, plain.values
    );

    let tripled: Vec<f64> = weights.iter().map(|w| 3.0 * w).collect();
    let stiffer = skinning_eigenmodes_of_material(&sc.mesh, &a, k, &tripled, &volumes).unwrap();
    for i in 0..k {
        assert!((stiffer.values[i] / (3.0 * modes.values[i]) - 1.0).abs() < 1e-9);
        let n = sc.mesh.n_vertices();
        let dot: f64 = (0..n).map(|v| stiffer.weights[(v, i)] * modes.weights[(v, i)]).sum();
        let norm = |w: &Mat<f64>| (0..n).map(|v| w[(v, i)].powi(2)).sum::<f64>().sqrt();
        assert!((dot.abs() / (norm(&stiffer.weights) * norm(&modes.weights)) - 1.0).abs() < 1e-8);
    }

    let short = &weights[..m - 1];
    assert!(matches!(
        skinning_eigenmodes_of_material(&sc.mesh, &a, k, short, &volumes),
        Err(OvertoneError::Input(overtone::InputError::Size { .. }))
    ));
    let mut holed = volumes.clone();
    holed[3] = 0.0;
    assert!(matches!(
        skinning_eigenmodes_of_material(&sc.mesh, &a, k, &weights, &holed),
        Err(OvertoneError::Setting(_))
    ));
    let mut nan = weights.clone();
    nan[5] = f64::NAN;
    assert!(matches!(
        skinning_eigenmodes_of_material(&sc.mesh, &a, k, &nan, &volumes),
        Err(OvertoneError::Input(overtone::InputError::NonFinite { .. }))
    ));
}

fn fast_solver(sc: &Scene, fp: FastParams) -> Result<FastSolver, OvertoneError> {
    let d = sc.mesh.dim();
    let rig = LbsRig::new(d, sc.mesh.vertices(), &sc.weights, sc.n_bones)?;
    let p0 = rig.params_from_transforms(&sc.frames[0])?;
    let dw = default_momentum_weights(&sc.mesh)?;
    let params = SolverParams {
        dt: sc.dt,
        gravity: sc.gravity.clone(),
        ..Default::default()
    };
    FastSolver::new(&sc.mesh, rig, &dw, &sc.material, &params, fp, &p0)
}

/// Structural orthogonality ‖(JᵀMD)B‖/(‖JᵀMD‖‖B‖) ≤ 1e-10 at all five resolutions of the
/// seed's sweep and on the 3D scenes; the per-step residual stays ≤ 1e-8 relative.
#[test]
fn subspace_is_structurally_rig_orthogonal_on_every_scene() {
    let mut scenes: Vec<Scene> = [(40, 5), (70, 7), (100, 8), (140, 9), (180, 10)]
        .iter()
        .map(|&(w, h)| {
            metronome_beam(MetronomeBeam {
                w,
                h,
                ..Default::default()
            })
            .unwrap()
        })
        .collect();
    for name in ["sphere", "elephant", "fish", "frog"] {
        let mut sc = load_scene(&reference_file(name, "json")).unwrap();
        sc.model = overtone::scene::ElasticModel::Arap;
        sc.frames.truncate(25);
        scenes.push(sc);
    }
    for sc in &scenes {
        let fp = FastParams::default_for(sc.mesh.dim());
        let solver = fast_solver(sc, fp).unwrap();
        let orth = solver.precompute().structural_orthogonality;
        assert!(orth <= 1e-10, "{}: structural orthogonality {orth:e}", sc.name);
        let sim = simulate(sc, SolverKind::Fast(fp)).unwrap();
        let worst = sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max);
        assert!(worst <= 1e-8, "{}: residual {worst:e}", sc.name);
    }
}

fn trajectory_error(a: &overtone::scene::Simulation, b: &overtone::scene::Simulation) -> f64 {
    let scale = b.max_displacement.iter().cloned().fold(0.0, f64::max);
    let diff = a
        .positions
        .iter()
        .zip(&b.positions)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f64::max);
    diff / scale
}

/// With one cluster per element and more modes, the fast trajectory approaches the full one;
/// with the seed's defaults it reproduces the whip (same size of secondary motion within 35%).
#[test]
fn fast_converges_to_full_and_reproduces_the_whip() {
    let mut sc = metronome_beam(MetronomeBeam {
        steps: 80,
        ..Default::default()
    })
    .unwrap();
    // The seeds' scheme: both solvers take the same backward-Euler step (the production
    // scheme gives each its own lowest mode, hence its own substeps and damping).
    sc.dynamics = overtone::scene::SceneDynamics::seed();
    let full = simulate(&sc, SolverKind::LocalGlobal(Default::default())).unwrap();
    let m = sc.mesh.n_elements();
    let errors: Vec<f64> = [3, 10, 30]
        .iter()
        .map(|&modes| {
            let fast = simulate(
                &sc,
                SolverKind::Fast(FastParams {
                    modes,
                    clusters: m,
                    ..FastParams::default_for(2)
                }),
            )
            .unwrap();
            trajectory_error(&fast, &full)
        })
        .collect();
    eprintln!("fast vs full relative trajectory error for 3, 10, 30 modes: {errors:?}");
    assert!(errors[0] > errors[1] && errors[1] > errors[2], "errors {errors:?}");
    assert!(
        errors[2] < 0.1,
        "30 modes, per-element rotations: relative error {}",
        errors[2]
    );

    let fast = simulate(&sc, SolverKind::Fast(FastParams::default_for(2))).unwrap();
    let (mf, mu) = (
        fast.max_displacement.iter().cloned().fold(0.0, f64::max),
        full.max_displacement.iter().cloned().fold(0.0, f64::max),
    );
    assert!((mf - mu).abs() < 0.35 * mu, "whip: fast {mf} vs full {mu}");
}

/// Two runs of the fast solver give bit-identical trajectories.
#[test]
fn fast_is_deterministic() {
    let mut sc = load_scene(&reference_file("elephant", "json")).unwrap();
    sc.frames.truncate(10);
    let fp = FastParams::default_for(3);
    let a = simulate(&sc, SolverKind::Fast(fp)).unwrap();
    let b = simulate(&sc, SolverKind::Fast(fp)).unwrap();
    assert!(a.positions == b.positions);
}

/// Zero modes, zero or too many clusters, and a rig whose constraint leaves no free weight
/// field are refused with a typed error.
#[test]
fn bad_settings_are_refused() {
    let sc = metronome_beam(MetronomeBeam {
        w: 6,
        h: 3,
        steps: 2,
        ..Default::default()
    })
    .unwrap();
    let m = sc.mesh.n_elements();
    for (fp, needle) in [
        (
            FastParams {
                modes: 0,
                clusters: 4,
                iterations: 10,
            },
            "modes",
        ),
        (
            FastParams {
                modes: 2,
                clusters: 0,
                iterations: 10,
            },
            "clusters",
        ),
        (
            FastParams {
                modes: 2,
                clusters: m + 1,
                iterations: 10,
            },
            "clusters",
        ),
    ] {
        let err = fast_solver(&sc, fp).err().expect("accepted a bad setting");
        assert!(err.to_string().contains(needle), "{err}");
    }
    // Nine vertices, one bone per vertex: the constraint fixes every weight-field DOF.
    let mesh: SimplexMesh = triangle_grid(3, 3, 1.0, 1.0).unwrap();
    let n = mesh.n_vertices();
    let weights: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { 1.0 } else { 0.0 }).collect();
    let rig = LbsRig::new(2, mesh.vertices(), &weights, n).unwrap();
    let identity: Vec<f64> = (0..n).flat_map(|_| [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]).collect();
    let p0 = rig.params_from_transforms(&identity).unwrap();
    let err = FastSolver::new(
        &mesh,
        rig,
        &vec![1.0; n],
        &Default::default(),
        &SolverParams::default(),
        FastParams {
            modes: 2,
            clusters: 2,
            iterations: 10,
        },
        &p0,
    )
    .err()
    .expect("a fully constrained rig was accepted");
    assert!(err.to_string().contains("free"), "{err}");
}

/// The displacement read at points embedded in the mesh straight from the reduced coordinates
/// (what hosts and bakes show on a surface) equals the mesh's reconstruction interpolated
/// barycentrically, to 1e-12 of the motion; a wrong output size writes nothing and a corner out
/// of range is refused.
#[test]
fn embedded_points_read_the_reconstructed_motion() {
    let mut sc = load_scene(&reference_file("elephant", "json")).unwrap();
    sc.frames.truncate(6);
    let mut solver = fast_solver(&sc, FastParams::default_for(3)).unwrap();
    let rig = LbsRig::new(3, sc.mesh.vertices(), &sc.weights, sc.n_bones).unwrap();
    for f in &sc.frames[1..] {
        solver.step(&rig.params_from_transforms(f).unwrap()).unwrap();
    }
    // One point inside each of the first tets (weights from the noise, normalised), and the
    // vertices themselves.
    let tets: Vec<[usize; 4]> = sc
        .mesh
        .elements()
        .chunks_exact(4)
        .take(500)
        .map(|t| [t[0], t[1], t[2], t[3]])
        .collect();
    let r = noise(7, 4 * tets.len());
    let mut bary: Vec<[f64; 4]> = r
        .chunks_exact(4)
        .map(|w| {
            let w: Vec<f64> = w.iter().map(|x| x.abs() + 0.05).collect();
            let s: f64 = w.iter().sum();
            [w[0] / s, w[1] / s, w[2] / s, w[3] / s]
        })
        .collect();
    let mut corners = tets.clone();
    corners.push([3, 0, 0, 0]);
    bary.push([1.0, 0.0, 0.0, 0.0]);
    assert!(
        solver.prepare_embedded(&corners, &bary).unwrap(),
        "fewer points than vertices: the cheaper path"
    );
    let mut fast = vec![0.0; 3 * corners.len()];
    assert!(solver.write_embedded_displacement(&mut fast));
    let n = sc.mesh.n_vertices();
    let mut mesh_u = vec![0.0; 3 * n];
    solver.add_displacement(&mut mesh_u);
    let size = mesh_u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(
        size > 1e-6,
        "the elephant must move for the test to mean anything ({size:e})"
    );
    let mut worst = 0.0f64;
    for (p, (c, b)) in corners.iter().zip(&bary).enumerate() {
        for i in 0..3 {
            let want: f64 = (0..4).map(|k| b[k] * mesh_u[3 * c[k] + i]).sum();
            worst = worst.max((fast[3 * p + i] - want).abs());
        }
    }
    assert!(
        worst <= 1e-12 * size,
        "embedded readout differs by {worst:e} (motion {size:e})"
    );
    let mut short = vec![7.0; 3 * corners.len() - 3];
    assert!(!solver.write_embedded_displacement(&mut short) && short.iter().all(|&x| x == 7.0));
    // More points than the mesh has vertices: reconstructing the mesh is cheaper, nothing kept.
    let many = vec![[0, 1, 2, 3]; 2 * n];
    assert!(!solver.prepare_embedded(&many, &vec![[0.25; 4]; 2 * n]).unwrap());
    assert!(!solver.write_embedded_displacement(&mut vec![0.0; 6 * n]));
    let e = solver.prepare_embedded(&[[0, 1, 2, n]], &[[0.25; 4]]).unwrap_err();
    assert!(matches!(e, OvertoneError::Input(_)), "{e}");
    assert!(solver
        .prepare_embedded(&[[0, 1, 2, 3]], &[[f64::NAN, 0.0, 0.0, 1.0]])
        .is_err());
}
