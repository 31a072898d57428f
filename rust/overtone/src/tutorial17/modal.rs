//! Linear modal analysis: the lowest vibration modes `K u = ω² M u`.

use faer::{Mat, Side};

use crate::energy::{ElasticEnergy, EnergyModel};
use crate::error::{OvertoneError, Result};
use crate::fem::lumped_mass;
use crate::mesh::{element_volumes, SimplexMesh};

/// Largest matrix the dense eigensolvers here accept (`O(N³)` time, `O(N²)` memory: about
/// 20 s and 0.5 GB at this size on the project's machine).
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
        .map_err(|e| OvertoneError::Factorization {
            what: "modal eigenproblem".into(),
            reason: format!("{e:?}"),
        })?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&p, &q| eig.S()[p].total_cmp(&eig.S()[q]));
    let eigenvalues = order[..k].iter().map(|&c| eig.S()[c]).collect();
    let basis = Mat::from_fn(n, k, |i, c| eig.U()[(i, order[c])] * s[i]);
    Ok(Modes { eigenvalues, basis })
}

/// The `k` lowest vibration modes of linear elasticity with `μ = λ = 1` on every element and
/// the lumped mass with `ρ = 1` (the material only scales the eigenvalues of a homogeneous
/// body, not the modes). `N = n·d` coordinate-major rows. In 2D the first three modes are the
/// rigid motions (eigenvalue 0), in 3D the first six.
pub fn linear_modal_analysis(mesh: &SimplexMesh, k: usize) -> Result<Modes> {
    let mut energy = ElasticEnergy::new(mesh, EnergyModel::LinearElasticity, 1.0, 1.0)?;
    let (n, d) = (mesh.n_vertices(), mesh.dim());
    if n * d > DENSE_EIGEN_MAX_SIZE {
        return Err(OvertoneError::Unsupported(format!(
            "linear modal analysis is dense, limited to {DENSE_EIGEN_MAX_SIZE} unknowns; the mesh has {}",
            n * d
        )));
    }
    let mut rest = vec![0.0; n * d];
    for v in 0..n {
        for i in 0..d {
            rest[i * n + v] = mesh.vertex(v)[i];
        }
    }
    energy.hessian(&rest, false)?;
    let kd = energy.hessian_ref().to_dense();
    let m = lumped_mass(mesh, &element_volumes(mesh), 1.0);
    let mass: Vec<f64> = (0..d).flat_map(|_| m.iter().cloned()).collect();
    dense_generalized_eigen(&kd, &mass, k)
}
