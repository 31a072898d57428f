//! Skinning eigenmodes (Benchekroun et al. 2023), unconstrained: Laplacian eigenvectors used
//! as linear-blend-skinning weights.

use faer::Mat;

use crate::error::{OvertoneError, Result};
use crate::fem::{lumped_mass, scalar_stiffness, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::tutorial17::modal::{dense_generalized_eigen, DENSE_EIGEN_MAX_SIZE};

/// Weights and the LBS subspace they span.
#[derive(Clone, Debug)]
pub struct SkinningModes {
    /// `n × k` weight fields (`M`-orthonormal), the first one constant.
    pub weights: Mat<f64>,
    /// Their eigenvalues, ascending (the first is 0).
    pub eigenvalues: Vec<f64>,
    /// `lbs_jacobian(X, W)`: `n·d × k·d(d+1)`.
    pub basis: Mat<f64>,
}

/// The `k` lowest eigenpairs of `L w = λ M w` (`L` the cotangent Laplacian `Ĝᵀ diag(vol) Ĝ`,
/// `M` the lumped mass with `ρ = 1`), the constant field included as the first weight: that is
/// what lets the subspace reproduce rigid motions (and every affine map) exactly. Dense, for
/// meshes up to [`DENSE_EIGEN_MAX_SIZE`] vertices.
pub fn skinning_eigenmodes(mesh: &SimplexMesh, k: usize) -> Result<SkinningModes> {
    let n = mesh.n_vertices();
    if n > DENSE_EIGEN_MAX_SIZE {
        return Err(OvertoneError::Unsupported(format!(
            "skinning eigenmodes are computed densely, limited to {DENSE_EIGEN_MAX_SIZE} vertices; the mesh has {n}"
        )));
    }
    let jac = DeformationJacobian::new(mesh);
    let vols = element_volumes(mesh);
    let l = scalar_stiffness(&jac, &vols)?.to_dense();
    let m = lumped_mass(mesh, &vols, 1.0);
    let modes = dense_generalized_eigen(&l, &m, k)?;
    let basis = lbs_jacobian(mesh.dim(), mesh.vertices(), modes.basis.as_ref())?;
    Ok(SkinningModes {
        weights: modes.basis,
        eigenvalues: modes.eigenvalues,
        basis,
    })
}

/// The LBS Jacobian `∂x/∂p` of `x_v = Σ_b W_vb T_b [X_v; 1]` for per-field affine maps `T_b`
/// (`d × (d+1)`): `n·d × k·d(d+1)`, coordinate-major rows. Column `(i·k + b)·(d+1) + j` moves
/// coordinate `i` by `W_vb [X_v; 1]_j`. `rest` is `n × d` row-major, `weights` is `n × k`.
pub fn lbs_jacobian(dim: usize, rest: &[f64], weights: faer::MatRef<'_, f64>) -> Result<Mat<f64>> {
    let n = rest.len() / dim.max(1);
    if rest.len() != n * dim || weights.nrows() != n {
        return Err(OvertoneError::size(
            "weights",
            format!("{n} rows (one per vertex)"),
            weights.nrows(),
        ));
    }
    let k = weights.ncols();
    let c = dim + 1;
    Ok(Mat::from_fn(n * dim, dim * k * c, |row, col| {
        let (i, v) = (row / n, row % n);
        let (ci, rem) = (col / (k * c), col % (k * c));
        if ci != i {
            return 0.0;
        }
        let (b, j) = (rem / c, rem % c);
        weights[(v, b)] * if j < dim { rest[v * dim + j] } else { 1.0 }
    }))
}
