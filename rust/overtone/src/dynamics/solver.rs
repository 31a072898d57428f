//! What every complementary-dynamics solver shares: the report of a step, the rank of the
//! rig-orthogonality constraint, and the checks made on the inputs.

use crate::dynamics::{Material, SolverParams};
use crate::error::{OvertoneError, Result};
use crate::leak::validate_momentum_weights;
use crate::mesh::SimplexMesh;
use crate::rig::LbsRig;

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Local/global iterations taken.
    pub iterations: usize,
    /// `‖Jᵀ M D u_c‖₂` after the step (units: mass × length²).
    pub residual: f64,
    /// `‖Jᵀ M D u_c‖₂ / (‖Jᵀ M D‖₂ ‖u_c‖₂)` (0 when `u_c = 0`); dimensionless.
    pub relative_residual: f64,
}

/// The rig-orthogonality rows per coordinate: how many are independent (kept) out of how many
/// the rig gives (bone rows `bones·(d+1)` plus blendshape rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConstraintRank {
    /// Independent rows kept.
    pub kept: usize,
    /// Rows given.
    pub given: usize,
}

/// The checks every complementary-dynamics solver makes on its inputs: the rig matches the
/// mesh (vertex count and dimension), the leak field has one value `≥ 0` per vertex, and the
/// material and step settings are in range.
pub fn validate_solver_inputs(
    mesh: &SimplexMesh,
    rig: &LbsRig,
    momentum_weights: &[f64],
    material: &Material,
    params: &SolverParams,
) -> Result<()> {
    let (d, n) = (mesh.dim(), mesh.n_vertices());
    if rig.dim() != d || rig.n_vertices() != n {
        return Err(OvertoneError::size(
            "rig",
            format!("{n} vertices in {d}D (the mesh's)"),
            format!("{} vertices in {}D", rig.n_vertices(), rig.dim()),
        ));
    }
    validate_momentum_weights(momentum_weights, n)?;
    material.validate()?;
    params.validate(d)
}
