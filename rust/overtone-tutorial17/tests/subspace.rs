//! Subspace bases and the mass-weighted projection.

use overtone::dynamics::fast::skinning_eigenmodes;
use overtone::fem::lumped_mass;
use overtone::mesh::{centered_triangle_grid, element_volumes};
use overtone::rig::lbs_jacobian;
use overtone_tutorial17::{linear_modal_analysis, MassProjection, Subspace};

/// Round-off tolerance of the dense eigensolvers on these small meshes (relative).
const EIGEN_TOLERANCE: f64 = 1e-9;

fn mesh() -> overtone::mesh::SimplexMesh {
    centered_triangle_grid(12, 4, 2.0, 0.5).unwrap()
}

fn mass_dofs(m: &overtone::mesh::SimplexMesh) -> Vec<f64> {
    let mv = lumped_mass(m, &element_volumes(m), 1.0);
    (0..2).flat_map(|_| mv.iter().cloned()).collect()
}

#[test]
fn lma_has_three_rigid_modes_and_m_orthonormal_columns() {
    let m = mesh();
    let modes = linear_modal_analysis(&m, 6).unwrap();
    let l = &modes.eigenvalues;
    assert!(l.windows(2).all(|w| w[0] <= w[1]));
    for k in 0..3 {
        assert!(l[k].abs() < EIGEN_TOLERANCE * l[3], "rigid mode {k}: {}", l[k]);
    }
    assert!(l[3] > 0.0);
    let mass = mass_dofs(&m);
    let b = &modes.basis;
    for i in 0..6 {
        for j in 0..6 {
            let dot: f64 = (0..b.nrows()).map(|r| b[(r, i)] * mass[r] * b[(r, j)]).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((dot - want).abs() < EIGEN_TOLERANCE, "BᵀMB[{i},{j}] = {dot}");
        }
    }
}

#[test]
fn skinning_modes_start_constant_and_reproduce_affine_maps_exactly() {
    let m = mesh();
    let n = m.n_vertices();
    let modes = skinning_eigenmodes(&m, None, 3).unwrap();
    assert_eq!((modes.constraint_rank, modes.constraint_rows), (0, 0));
    assert!(modes.values.windows(2).all(|w| w[0] <= w[1]));
    let basis = lbs_jacobian(2, m.vertices(), modes.weights.as_ref()).unwrap();
    assert_eq!(basis.ncols(), 3 * 6);
    let w0: Vec<f64> = (0..n).map(|v| modes.weights[(v, 0)]).collect();
    let mean = w0.iter().sum::<f64>() / n as f64;
    assert!(w0.iter().all(|w| (w - mean).abs() < EIGEN_TOLERANCE * mean.abs()));
    let sub = Subspace::reduced(basis, vec![0.0; 2 * n]).unwrap();
    let proj = MassProjection::new(&sub, &mass_dofs(&m)).unwrap();
    // An arbitrary affine map of the rest shape lies in the subspace.
    let a = [[0.3, -1.2, 0.5], [0.9, 0.4, -0.2]];
    let mut y = vec![0.0; 2 * n];
    for v in 0..n {
        let p = m.vertex(v);
        for i in 0..2 {
            y[i * n + v] = a[i][0] * p[0] + a[i][1] * p[1] + a[i][2];
        }
    }
    let mut z = vec![0.0; sub.dim()];
    proj.project(&y, &mut z).unwrap();
    let mut x = vec![0.0; 2 * n];
    sub.lift(&z, &mut x);
    let err = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    assert!(err < 1e-10, "affine reconstruction error {err}");
}

#[test]
fn projection_recovers_coordinates_and_refuses_bad_input() {
    let m = mesh();
    let n = m.n_vertices();
    let modes = linear_modal_analysis(&m, 5).unwrap();
    let q: Vec<f64> = (0..2 * n).map(|k| (k as f64 * 0.37).sin()).collect();
    let sub = Subspace::reduced(modes.basis, q.clone()).unwrap();
    let mass = mass_dofs(&m);
    let proj = MassProjection::new(&sub, &mass).unwrap();
    let z0 = [0.4, -1.0, 2.0, 0.1, -0.3];
    let mut y = vec![0.0; 2 * n];
    sub.lift(&z0, &mut y);
    let mut z = vec![0.0; 5];
    proj.project(&y, &mut z).unwrap();
    assert!(z.iter().zip(&z0).all(|(a, b)| (a - b).abs() < 1e-10), "{z:?}");
    assert!(proj.project(&y[1..], &mut z).is_err());
    assert!(MassProjection::new(&sub, &mass[1..]).is_err());
    let mut bad = mass.clone();
    bad[0] = -1.0;
    assert!(MassProjection::new(&sub, &bad).is_err());
}
