//! Dense generalized symmetric eigenproblems `K u = λ M u` with a diagonal `M` (faer's
//! self-adjoint eigendecomposition; `O(N³)`, for small problems only).

use faer::{Mat, Side};

use crate::error::{NumericalError, OvertoneError, Result};

/// Largest `N` the dense eigensolves accept ([`dense_generalized_eigen`] and its callers:
/// `O(N³)` time, `O(N²)` memory, about 20 s and 0.5 GB at this size on the project's machine).
pub const DENSE_EIGEN_MAX_SIZE: usize = 8000;

/// Eigenpairs in ascending order of eigenvalue.
#[derive(Clone, Debug)]
pub struct Modes {
    /// `k` eigenvalues, ascending.
    pub eigenvalues: Vec<f64>,
    /// `N × k`, `M`-orthonormal columns.
    pub basis: Mat<f64>,
}

/// The `k` smallest eigenpairs of `K u = λ M u` for a symmetric `K` (dense `N × N`) and a
/// diagonal `M > 0`, via the symmetric matrix `M^{-½} K M^{-½}`; eigenvectors are
/// `M`-orthonormal. Dense: for `N ≤` [`DENSE_EIGEN_MAX_SIZE`].
pub fn dense_generalized_eigen(k_mat: &Mat<f64>, mass: &[f64], k: usize) -> Result<Modes> {
    let n = mass.len();
    if k_mat.nrows() != n || k_mat.ncols() != n {
        return Err(OvertoneError::size(
            "stiffness matrix",
            format!("{n} x {n}"),
            format!("{} x {}", k_mat.nrows(), k_mat.ncols()),
        ));
    }
    if n > DENSE_EIGEN_MAX_SIZE {
        return Err(OvertoneError::Unsupported(format!(
            "dense eigensolver limited to {DENSE_EIGEN_MAX_SIZE} unknowns, got {n}; use a coarser mesh"
        )));
    }
    if k == 0 || k > n {
        return Err(OvertoneError::setting("modes", k, format!("must lie in 1..={n}")));
    }
    if let Some(i) = mass.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(OvertoneError::setting(
            "mass",
            mass[i],
            format!("entry {i} must be finite and > 0"),
        ));
    }
    let s: Vec<f64> = mass.iter().map(|m| 1.0 / m.sqrt()).collect();
    let a = Mat::from_fn(n, n, |i, j| 0.5 * (k_mat[(i, j)] + k_mat[(j, i)]) * s[i] * s[j]);
    let eig = a
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| NumericalError::Factorization {
            matrix: "modal eigenproblem".into(),
            reason: format!("{e:?}"),
        })?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&p, &q| eig.S()[p].total_cmp(&eig.S()[q]));
    let eigenvalues = order[..k].iter().map(|&c| eig.S()[c]).collect();
    let basis = Mat::from_fn(n, k, |i, c| eig.U()[(i, order[c])] * s[i]);
    Ok(Modes { eigenvalues, basis })
}
