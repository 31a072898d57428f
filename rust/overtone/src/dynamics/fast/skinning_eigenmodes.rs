//! Rig-orthogonal skinning eigenmodes.

use faer::Mat;

use crate::dynamics::fast::weight_space_constraint;
use crate::error::Result;
use crate::fem::{lumped_mass, scalar_stiffness, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::solve::lowest_constrained_eigenpairs;

/// Skinning weight fields whose subspaces are rig-orthogonal.
#[derive(Clone, Debug)]
pub struct SkinningEigenmodes {
    /// `n × k`, columns `M`-orthonormal under the unit-density lumped mass.
    pub weights: Mat<f64>,
    /// Eigenvalues `λ` of `K w = λ M w` (units: 1/length²), ascending.
    pub values: Vec<f64>,
    /// Independent rows of the weight-space constraint.
    pub constraint_rank: usize,
    /// Rows of the weight-space constraint before reduction.
    pub constraint_rows: usize,
}

/// The `k` lowest weight fields of `K w = λ M w` subject to `C w = 0`, where `K` is the P1
/// stiffness (`Σ_e vol_e ∇φᵀ∇φ`, the negated cotangent Laplacian), `M` the unit-density lumped
/// mass and `C` the [weight-space form](weight_space_constraint) of the rig constraint
/// `Â = Ĵᵀ diag(m ⊙ d)` (`c × n`). Every displacement `lbs_jacobian(X, w)·t` of such a field is
/// rig-orthogonal: `Jᵀ M D B = 0` by construction.
pub fn skinning_eigenmodes(mesh: &SimplexMesh, a_hat: &Mat<f64>, k: usize) -> Result<SkinningEigenmodes> {
    let vols = element_volumes(mesh);
    let mass = lumped_mass(mesh, &vols, 1.0);
    let g = DeformationJacobian::new(mesh);
    let stiffness = scalar_stiffness(&g, &vols)?;
    let rows = weight_space_constraint(a_hat, mesh.vertices(), mesh.dim());
    let pairs = lowest_constrained_eigenpairs(&stiffness, &mass, &rows, k)?;
    Ok(SkinningEigenmodes {
        weights: pairs.vectors,
        values: pairs.values,
        constraint_rank: pairs.constraint_rank,
        constraint_rows: rows.len() / mesh.n_vertices(),
    })
}
