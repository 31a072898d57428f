//! The rig-orthogonality constraint `Jᵀ M D u_c = 0` in scalar form.

use faer::{Mat, Side};

use crate::dynamics::{Material, SolverParams};
use crate::error::{OvertoneError, Result};
use crate::leak::validate_momentum_weights;
use crate::mesh::SimplexMesh;
use crate::rig::LbsRig;

/// `Â = Ĵᵀ diag(m ⊙ d)` (`c × n`, `c = bones·(d+1)`): because `J = I_d ⊗ Ĵ` and `M`, `D` act
/// per vertex, `Jᵀ M D = I_d ⊗ Â`, and `‖Jᵀ M D‖₂ = ‖Â‖₂`. Units: mass × length.
#[derive(Clone, Debug)]
pub struct RigConstraint {
    /// `Â`, `c × n`.
    pub scalar: Mat<f64>,
    /// `‖Â‖₂`.
    pub norm: f64,
}

impl RigConstraint {
    /// Builds `Â` from the rig, the lumped masses and the momentum weights (the diagonal of `D`).
    pub fn new(rig: &LbsRig, mass: &[f64], momentum_weights: &[f64]) -> Result<Self> {
        let jh = rig.scalar_jacobian();
        let scalar = Mat::from_fn(jh.ncols(), jh.nrows(), |k, v| {
            jh[(v, k)] * mass[v] * momentum_weights[v]
        });
        let norm = spectral_norm(&scalar)?;
        Ok(Self { scalar, norm })
    }

    /// `(‖Jᵀ M D u‖₂, ‖Jᵀ M D u‖₂ / (‖Jᵀ M D‖₂ ‖u‖₂))` for a coordinate-major field `u`
    /// (`n·d`); the relative value is 0 when `u = 0`. `work` is `c × d` scratch.
    pub fn residual(&self, u: &[f64], work: &mut Mat<f64>) -> (f64, f64) {
        let n = self.scalar.ncols();
        faer::linalg::matmul::matmul(
            work.as_mut(),
            faer::Accum::Replace,
            self.scalar.as_ref(),
            faer::MatRef::from_column_major_slice(u, n, u.len() / n),
            1.0,
            faer::Par::Seq,
        );
        let abs = work.norm_l2();
        let un = u.iter().map(|x| x * x).sum::<f64>().sqrt();
        let rel = if un > 0.0 && self.norm > 0.0 {
            abs / (self.norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// `Â` row-major (`c × n`).
    pub fn rows(&self) -> Vec<f64> {
        let (c, n) = (self.scalar.nrows(), self.scalar.ncols());
        (0..c * n).map(|i| self.scalar[(i / n, i % n)]).collect()
    }
}

/// The largest singular value of a dense matrix (from the smaller Gram matrix).
pub fn spectral_norm(m: &Mat<f64>) -> Result<f64> {
    let g = if m.nrows() <= m.ncols() {
        m * m.transpose()
    } else {
        m.transpose() * m
    };
    Ok(g.self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| OvertoneError::Factorization {
            what: "spectral norm".into(),
            reason: format!("{e:?}"),
        })?
        .into_iter()
        .fold(0.0, f64::max)
        .max(0.0)
        .sqrt())
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
