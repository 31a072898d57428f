//! Skinning eigenmodes (Benchekroun et al. 2023): the lowest eigenvectors of the P1 stiffness
//! (the negated cotangent Laplacian), used as linear-blend-skinning weight fields; rig-orthogonal
//! when a rig constraint is given, plain Laplacian eigenvectors otherwise.

use faer::Mat;

use crate::dynamics::fast::weight_space_constraint;
use crate::error::{check_finite, OvertoneError, Result};
use crate::fem::{lumped_mass, scalar_stiffness, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::solve::{dense_generalized_eigen, lowest_constrained_eigenpairs, DENSE_EIGEN_MAX_SIZE};

/// Skinning weight fields and their eigenvalues.
#[derive(Clone, Debug)]
pub struct SkinningEigenmodes {
    /// `n × k`, columns `M`-orthonormal under the unit-density lumped mass.
    pub weights: Mat<f64>,
    /// Eigenvalues `λ` of `K w = λ M w` (units: 1/length²), ascending.
    pub values: Vec<f64>,
    /// Independent rows of the weight-space constraint (0 without a constraint).
    pub constraint_rank: usize,
    /// Rows of the weight-space constraint before reduction (0 without a constraint).
    pub constraint_rows: usize,
}

/// The `k` lowest weight fields `w` (`n × k`) of `K w = λ M w`, where `K` (`n × n`) is the P1
/// stiffness `Σ_e vol_e ∇φᵀ∇φ` (the negated cotangent Laplacian `Ĝᵀ diag(vol) Ĝ`) and `M` the
/// unit-density lumped mass (`n`), both over the mesh's element volumes: as
/// [`skinning_eigenmodes_of_material`] with `stiffness_weights = volumes = vol_e`. The
/// subspace of a field is spanned by the columns of
/// [`lbs_jacobian`](crate::rig::lbs_jacobian)`(d, X, w)`.
///
/// * `constraint = Some(Â)`: subject to `C w = 0`, where `C` is the
///   [weight-space form](weight_space_constraint) of the rig constraint `Â = Ĵᵀ diag(m ⊙ d)`
///   (`c × n`). Every displacement `lbs_jacobian(X, w)·t` of such a field is rig-orthogonal:
///   `Jᵀ M D B = 0` by construction. Sparse (thick-restart Lanczos), any mesh size.
/// * `constraint = None`: unconstrained. The constant field comes first (`λ = 0`): that is what
///   lets the subspace reproduce rigid motions (and every affine map) exactly. Dense
///   ([`dense_generalized_eigen`]), for meshes up to [`DENSE_EIGEN_MAX_SIZE`] vertices;
///   `constraint_rank = constraint_rows = 0`.
pub fn skinning_eigenmodes(mesh: &SimplexMesh, constraint: Option<&Mat<f64>>, k: usize) -> Result<SkinningEigenmodes> {
    let Some(a_hat) = constraint else {
        return unconstrained_skinning_eigenmodes(mesh, k);
    };
    let vols = element_volumes(mesh);
    skinning_eigenmodes_of_material(mesh, a_hat, k, &vols, &vols)
}

/// The `k` lowest rig-orthogonal weight fields of the body's material rather than of the
/// mesh's elements: `K w = λ M w` subject to `C w = 0` (as [`skinning_eigenmodes`]), with
/// `K = Σ_e s_e ∇φᵀ∇φ` weighted by `stiffness_weights` (`s_e`, one per element, > 0: the
/// effective volume times the stiffness multiplier) and `M` the unit-density lumped mass of
/// `volumes` (one per element, > 0: the effective volumes).
///
/// On an embedding lattice the effective volumes are the elements' volumes scaled by the
/// material shares ([`crate::dynamics::SolverParams::effective_volumes`]): the fields then
/// follow the body, not the cubes that happen to cover it, and change less with the lattice
/// (a thin limb's partly filled cubes no longer count as solid).
pub fn skinning_eigenmodes_of_material(
    mesh: &SimplexMesh,
    constraint: &Mat<f64>,
    k: usize,
    stiffness_weights: &[f64],
    volumes: &[f64],
) -> Result<SkinningEigenmodes> {
    for (what, values) in [("stiffness weights", stiffness_weights), ("element volumes", volumes)] {
        if values.len() != mesh.n_elements() {
            return Err(OvertoneError::size(
                format!("skinning eigenmodes: {what}"),
                mesh.n_elements(),
                values.len(),
            ));
        }
        check_finite(&format!("skinning eigenmodes: {what}"), values, 1)?;
        if let Some(e) = values.iter().position(|x| !(*x > 0.0)) {
            return Err(OvertoneError::setting(
                &format!("skinning eigenmodes: {what}"),
                values[e],
                format!("element {e}: every value must be > 0 (a degenerate or empty element)"),
            ));
        }
    }
    crate::progress::report(
        0.0,
        "skinning eigenmodes (Laplacian and the rig constraint on weight fields)",
    );
    let mass = lumped_mass(mesh, volumes, 1.0);
    let g = DeformationJacobian::new(mesh);
    let stiffness = scalar_stiffness(&g, stiffness_weights)?;
    let rows = weight_space_constraint(constraint, mesh.vertices(), mesh.dim());
    let pairs = lowest_constrained_eigenpairs(&stiffness, &mass, &rows, k)?;
    Ok(SkinningEigenmodes {
        weights: pairs.vectors,
        values: pairs.values,
        constraint_rank: pairs.constraint_rank,
        constraint_rows: rows.len() / mesh.n_vertices(),
    })
}

/// [`skinning_eigenmodes`] without a constraint: dense, `n ≤` [`DENSE_EIGEN_MAX_SIZE`].
fn unconstrained_skinning_eigenmodes(mesh: &SimplexMesh, k: usize) -> Result<SkinningEigenmodes> {
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
    Ok(SkinningEigenmodes {
        weights: modes.basis,
        values: modes.eigenvalues,
        constraint_rank: 0,
        constraint_rows: 0,
    })
}
