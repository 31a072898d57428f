//! The supernodal Cholesky of Newton's full-space solve: accurate on 2D and 3D elasticity
//! Hessians, equal to faer's factorization, reusable across refactorizations, deterministic,
//! and refusing indefinite matrices, foreign patterns and wrong right-hand sides.

use faer::sparse::{SparseColMat, SparseColMatRef};
use overtone::energy::{ElasticEnergy, EnergyModel};
use overtone::error::OvertoneError;
use overtone::mesh::{centered_triangle_grid, tet_grid, SimplexMesh};
use overtone::solve::SparseCholesky;
use overtone_tutorial17::SupernodalLlt;

/// `K(x) + m I` (elastic Hessian projected to PSD plus a mass-like shift `m`), owned.
fn newton_matrix(mesh: &SimplexMesh, x: &[f64], m: f64) -> SparseColMat<usize, f64> {
    let mut energy = ElasticEnergy::new(mesh, EnergyModel::NeoHookean, 1071.0, 4285.0).unwrap();
    energy.hessian(x, true).unwrap();
    let mut vals = energy.values().to_vec();
    let pat = energy.pattern().to_owned().unwrap();
    let n = pat.nrows();
    for c in 0..n {
        for q in pat.col_ptr()[c]..pat.col_ptr()[c + 1] {
            if pat.row_idx()[q] == c {
                vals[q] += m;
            }
        }
    }
    SparseColMat::new(pat, vals)
}

/// A deterministic perturbation of the rest positions (coordinate-major).
fn perturbed(mesh: &SimplexMesh, amplitude: f64, seed: f64) -> Vec<f64> {
    let (n, d) = (mesh.n_vertices(), mesh.dim());
    (0..n * d)
        .map(|k| mesh.vertex(k % n)[k / n] + amplitude * ((k as f64 + 1.0) * seed).sin())
        .collect()
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum::<f64>().sqrt()
}

/// `‖A x − b‖ / ‖b‖` with `A` stored in both triangles.
fn relative_residual(a: SparseColMatRef<'_, usize, f64>, x: &[f64], b: &[f64]) -> f64 {
    let mut r: Vec<f64> = b.iter().map(|v| -v).collect();
    for c in 0..a.ncols() {
        for (row, v) in a.row_idx_of_col(c).zip(a.val_of_col(c)) {
            r[row] += v * x[c];
        }
    }
    norm(&r) / norm(b)
}

fn rhs(n: usize) -> Vec<f64> {
    (0..n).map(|i| (0.37 * i as f64).sin() + 0.1).collect()
}

#[test]
fn solves_the_beam_and_block_hessians_like_faer() {
    let beam = centered_triangle_grid(120, 30, 4.0, 1.0).unwrap();
    let block = tet_grid(8, 6, 5, 1.0, 0.8, 0.6).unwrap();
    for (name, mesh, shift) in [
        ("2D beam", &beam, 1.0 / 0.02f64.powi(2) * 1e-3),
        ("3D block", &block, 1e2),
    ] {
        // Large perturbation: many inverted elements, so the projection matters.
        let a = newton_matrix(mesh, &perturbed(mesh, 0.02, 0.91), shift);
        let n = a.nrows();
        let b = rhs(n);
        let mut llt = SupernodalLlt::new(a.as_ref(), name).unwrap();
        let mut x = b.clone();
        llt.solve_in_place(&mut x).unwrap();
        let res = relative_residual(a.as_ref(), &x, &b);
        assert!(res < 1e-12, "{name}: relative residual {res:e}");
        let mut faer_chol = SparseCholesky::new_supernodal(a.as_ref(), 1, name).unwrap();
        let mut y = b.clone();
        faer_chol.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut y, n, 1));
        let diff: Vec<f64> = x.iter().zip(&y).map(|(p, q)| p - q).collect();
        assert!(
            norm(&diff) <= 1e-10 * norm(&y),
            "{name}: differs from faer by {:e}",
            norm(&diff) / norm(&y)
        );
    }
}

#[test]
fn refactorization_tracks_new_values_and_is_deterministic() {
    let mesh = centered_triangle_grid(40, 12, 4.0, 1.0).unwrap();
    let a1 = newton_matrix(&mesh, &perturbed(&mesh, 0.01, 0.3), 2.5);
    let a2 = newton_matrix(&mesh, &perturbed(&mesh, 0.03, 1.7), 0.5);
    let b = rhs(a1.nrows());
    let mut llt = SupernodalLlt::new(a1.as_ref(), "beam").unwrap();
    llt.refactor(a2.as_ref()).unwrap();
    let mut x2 = b.clone();
    llt.solve_in_place(&mut x2).unwrap();
    let res = relative_residual(a2.as_ref(), &x2, &b);
    assert!(res < 1e-12, "after refactor: relative residual {res:e}");
    // Back to the first matrix, twice: bitwise identical results.
    llt.refactor(a1.as_ref()).unwrap();
    let mut x1 = b.clone();
    llt.solve_in_place(&mut x1).unwrap();
    llt.refactor(a1.as_ref()).unwrap();
    let mut x1b = b.clone();
    llt.solve_in_place(&mut x1b).unwrap();
    assert!(x1.iter().zip(&x1b).all(|(p, q)| p.to_bits() == q.to_bits()));
    assert!(relative_residual(a1.as_ref(), &x1, &b) < 1e-12);
    // The solution of the first system does not solve the second: the refactor changed the factor.
    assert!(relative_residual(a2.as_ref(), &x1, &b) > 1e-3);
}

#[test]
fn refuses_indefinite_matrices_foreign_patterns_and_bad_right_hand_sides() {
    let mesh = centered_triangle_grid(20, 6, 4.0, 1.0).unwrap();
    let good = newton_matrix(&mesh, &perturbed(&mesh, 0.01, 0.5), 1.0);
    let mut llt = SupernodalLlt::new(good.as_ref(), "Newton system").unwrap();
    let n = good.nrows();
    // One negative diagonal entry: not positive definite.
    let mut bad_vals = good.val().to_vec();
    let c = n / 2;
    let q = (good.col_ptr()[c]..good.col_ptr()[c + 1])
        .find(|&q| good.row_idx()[q] == c)
        .unwrap();
    bad_vals[q] = -1e6;
    let bad = SparseColMatRef::new(good.symbolic(), &bad_vals);
    let err = llt.refactor(bad).unwrap_err();
    assert!(
        matches!(&err, OvertoneError::Numerical(overtone::NumericalError::Factorization { reason, .. }) if reason.contains("not positive definite")),
        "{err}"
    );
    let mut x = rhs(n);
    assert!(matches!(
        llt.solve_in_place(&mut x),
        Err(OvertoneError::Numerical(overtone::NumericalError::Factorization { .. }))
    ));
    // NaN is refused the same way.
    bad_vals[q] = f64::NAN;
    assert!(llt.refactor(SparseColMatRef::new(good.symbolic(), &bad_vals)).is_err());
    // Another mesh's matrix, and the same size with one more stored entry: other patterns.
    let other = newton_matrix(
        &centered_triangle_grid(20, 7, 4.0, 1.0).unwrap(),
        &perturbed(&centered_triangle_grid(20, 7, 4.0, 1.0).unwrap(), 0.0, 1.0),
        1.0,
    );
    let mut triplets = Vec::new();
    for c in 0..n {
        for q in good.col_ptr()[c]..good.col_ptr()[c + 1] {
            triplets.push(faer::sparse::Triplet::new(good.row_idx()[q], c, good.val()[q]));
        }
    }
    triplets.push(faer::sparse::Triplet::new(n - 1, 0, 0.0));
    triplets.push(faer::sparse::Triplet::new(0, n - 1, 0.0));
    let wider = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &triplets).unwrap();
    for foreign in [other.as_ref(), wider.as_ref()] {
        let err = llt.refactor(foreign).unwrap_err();
        assert!(
            matches!(&err, OvertoneError::Numerical(overtone::NumericalError::Factorization { reason, .. }) if reason.contains("pattern")),
            "{err}"
        );
    }
    // The factor recovers on good values.
    llt.refactor(good.as_ref()).unwrap();
    let mut short = vec![1.0; n - 1];
    assert!(matches!(
        llt.solve_in_place(&mut short),
        Err(OvertoneError::Input(overtone::InputError::Size { .. }))
    ));
    let b = rhs(n);
    let mut x = b.clone();
    llt.solve_in_place(&mut x).unwrap();
    assert!(relative_residual(good.as_ref(), &x, &b) < 1e-12);
}
