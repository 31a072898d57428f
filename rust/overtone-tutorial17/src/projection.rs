//! Mass-weighted projection into a subspace.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use crate::Subspace;
use overtone::error::{NumericalError, OvertoneError, Result};

/// `z = argmin ‖B z + q − y‖_M = (BᵀMB)⁻¹ BᵀM (y − q)` for a diagonal mass `M`.
///
/// Solved as a least-squares problem without forming the normal equations (whose condition
/// number is the square of `B`'s): with the thin SVD `M^{½} B = U Σ Vᵀ`, the projector is
/// `P = V Σ⁻¹ Uᵀ M^{½}` (`r × N`), precomputed once. Singular values below
/// [`PROJECTION_RANK_TOLERANCE`] `· σ_max` are dropped (a pseudo-inverse), so a nearly
/// dependent basis still projects stably.
#[derive(Debug)]
pub struct MassProjection {
    /// `P`, `r × N`.
    projector: Mat<f64>,
    offset: Vec<f64>,
    full: bool,
}

/// Relative singular value below which a direction of `M^{½}B` is treated as dependent.
pub const PROJECTION_RANK_TOLERANCE: f64 = 1e-13;

impl MassProjection {
    /// `mass` is the diagonal of `M` over all `N` unknowns (length `N`, `> 0`).
    pub fn new(subspace: &Subspace, mass: &[f64]) -> Result<Self> {
        let n = subspace.n_dofs();
        if mass.len() != n {
            return Err(OvertoneError::size("mass diagonal", n, mass.len()));
        }
        if let Some(i) = mass.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(OvertoneError::setting(
                "mass",
                mass[i],
                format!("entry {i} must be finite and > 0"),
            ));
        }
        let Some(b) = subspace.basis() else {
            return Ok(Self {
                projector: Mat::zeros(0, 0),
                offset: vec![0.0; n],
                full: true,
            });
        };
        let r = b.ncols();
        let sqrt_m: Vec<f64> = mass.iter().map(|m| m.sqrt()).collect();
        let a = Mat::from_fn(n, r, |i, k| sqrt_m[i] * b[(i, k)]);
        let svd = a.thin_svd().map_err(|e| NumericalError::Factorization {
            matrix: "subspace basis SVD".into(),
            reason: format!("{e:?}"),
        })?;
        let smax = (0..r).map(|k| svd.S()[k]).fold(0.0, f64::max);
        // V Σ⁻¹ (kept directions only), r × r
        let mut vs = Mat::<f64>::zeros(r, r);
        for k in 0..r {
            let s = svd.S()[k];
            if s > PROJECTION_RANK_TOLERANCE * smax {
                for i in 0..r {
                    vs[(i, k)] = svd.V()[(i, k)] / s;
                }
            }
        }
        let ut = Mat::from_fn(r, n, |k, i| svd.U()[(i, k)] * sqrt_m[i]);
        let mut projector = Mat::<f64>::zeros(r, n);
        matmul(
            projector.as_mut(),
            Accum::Replace,
            vs.as_ref(),
            ut.as_ref(),
            1.0,
            Par::Seq,
        );
        Ok(Self {
            projector,
            offset: subspace.offset().to_vec(),
            full: false,
        })
    }

    /// Subspace coordinates of `y` (length `N`); `z` has length `r`.
    pub fn project(&self, y: &[f64], z: &mut [f64]) -> Result<()> {
        let n = self.offset.len();
        if y.len() != n {
            return Err(OvertoneError::size("positions to project", n, y.len()));
        }
        if self.full {
            z.copy_from_slice(y);
            return Ok(());
        }
        let r = self.projector.nrows();
        if z.len() != r {
            return Err(OvertoneError::size("subspace coordinates", r, z.len()));
        }
        let d: Vec<f64> = y.iter().zip(&self.offset).map(|(a, b)| a - b).collect();
        let mut out = Mat::<f64>::zeros(r, 1);
        matmul(
            out.as_mut(),
            Accum::Replace,
            self.projector.as_ref(),
            MatRef::from_column_major_slice(&d, n, 1),
            1.0,
            Par::Seq,
        );
        for k in 0..r {
            z[k] = out[(k, 0)];
        }
        Ok(())
    }
}
