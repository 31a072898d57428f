//! The rig-orthogonality constraint `Jᵀ M D u_c = 0` in scalar form.

use faer::{Mat, Side};

use crate::error::{NumericalError, Result};
use crate::rig::LbsRig;

/// The rows of `Jᵀ M D` for `J = [I_d ⊗ Ĵ, Δ]` (bones, then one column per blendshape).
///
/// Bones: `Â = Ĵᵀ diag(m ⊙ d)` (`c × n`, `c = bones·(d+1)`): because the bone part of `J` is
/// `I_d ⊗ Ĵ` and `M`, `D` act per vertex, it contributes `I_d ⊗ Â`. Blendshapes: row `t` is
/// `Δ_tᵀ M D`, the `d·n` vector `G_t[i·n + v] = m_v d_v Δ_tvi` (coordinate-major, coupling the
/// coordinates). Units: mass × length (bones), mass × length (blendshapes: `Δ` is a length).
#[derive(Clone, Debug)]
pub struct RigConstraint {
    /// `Â`, `c × n`.
    pub scalar: Mat<f64>,
    /// `G`, `T × d·n` (no rows without blendshapes).
    pub blend: Mat<f64>,
    /// `‖Jᵀ M D‖₂` of the whole stacked matrix `[I_d ⊗ Â; G]`.
    pub norm: f64,
    /// `‖Â‖₂`.
    pub bone_norm: f64,
    /// `‖G‖₂` (0 without blendshapes).
    pub blend_norm: f64,
}

impl RigConstraint {
    /// Builds `Â` (and `G` when the rig has blendshapes) from the rig, the lumped masses and the
    /// momentum weights (the diagonal of `D`).
    pub fn new(rig: &LbsRig, mass: &[f64], momentum_weights: &[f64]) -> Result<Self> {
        let jh = rig.scalar_jacobian();
        let scalar = Mat::from_fn(jh.ncols(), jh.nrows(), |k, v| {
            jh[(v, k)] * mass[v] * momentum_weights[v]
        });
        let bone_norm = spectral_norm(&scalar)?;
        let (n, d, nt) = (rig.n_vertices(), rig.dim(), rig.n_targets());
        let deltas = rig.deltas();
        let blend = Mat::from_fn(nt, d * n, |t, k| {
            let (i, v) = (k / n, k % n);
            mass[v] * momentum_weights[v] * deltas[(t * n + v) * d + i]
        });
        let (norm, blend_norm) = if nt == 0 {
            (bone_norm, 0.0)
        } else {
            (stacked_norm(&scalar, &blend, d)?, spectral_norm(&blend)?)
        };
        Ok(Self {
            scalar,
            blend,
            norm,
            bone_norm,
            blend_norm,
        })
    }

    /// Number of blendshape rows `T`.
    pub fn n_targets(&self) -> usize {
        self.blend.nrows()
    }

    /// The per-coordinate rows that make a field orthogonal to every blendshape column in every
    /// coordinate arrangement: `[Â; G_{t,i}]` (`(c + T·d) × n`), with `G_{t,i} = m ⊙ d ⊙ Δ_t,i`
    /// (row `c + t·d + i`). A per-coordinate field family `u = I_d ⊗ B̂` (any coefficients in
    /// each coordinate) is orthogonal to `Δ_t` iff `G_{t,i} B̂ = 0` for every `i`, so these are
    /// the rows the fast solver's subspace must satisfy.
    pub fn per_coordinate_rows(&self) -> Mat<f64> {
        let (c, n) = (self.scalar.nrows(), self.scalar.ncols());
        // `G` has `d·n` columns.
        let (nt, d) = (self.n_targets(), self.blend.ncols() / n.max(1));
        Mat::from_fn(c + nt * d, n, |r, v| {
            if r < c {
                self.scalar[(r, v)]
            } else {
                let (t, i) = ((r - c) / d, (r - c) % d);
                self.blend[(t, i * n + v)]
            }
        })
    }

    /// `(‖G u‖₂, ‖G u‖₂ / (‖G‖₂ ‖u‖₂))`: the residual against the blendshape columns alone
    /// (0 and 0 without blendshapes or when `u = 0`). Units: mass × length².
    pub fn blendshape_residual(&self, u: &[f64]) -> (f64, f64) {
        let abs = (0..self.blend.nrows())
            .map(|t| {
                let s: f64 = (0..u.len()).map(|k| self.blend[(t, k)] * u[k]).sum();
                s * s
            })
            .sum::<f64>()
            .sqrt();
        let un = u.iter().map(|x| x * x).sum::<f64>().sqrt();
        let rel = if un > 0.0 && self.blend_norm > 0.0 {
            abs / (self.blend_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// `(‖(I_d ⊗ Â) u‖₂, relative to ‖Â‖₂ ‖u‖₂)`: the residual against the bone columns alone.
    /// `work` is `c × d` scratch.
    pub fn bone_residual(&self, u: &[f64], work: &mut Mat<f64>) -> (f64, f64) {
        let abs = self.bone_product_norm(u, work);
        let un = u.iter().map(|x| x * x).sum::<f64>().sqrt();
        let rel = if un > 0.0 && self.bone_norm > 0.0 {
            abs / (self.bone_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    fn bone_product_norm(&self, u: &[f64], work: &mut Mat<f64>) -> f64 {
        let n = self.scalar.ncols();
        faer::linalg::matmul::matmul(
            work.as_mut(),
            faer::Accum::Replace,
            self.scalar.as_ref(),
            faer::MatRef::from_column_major_slice(u, n, u.len() / n),
            1.0,
            faer::Par::Seq,
        );
        work.norm_l2()
    }

    /// `(‖Jᵀ M D u‖₂, ‖Jᵀ M D u‖₂ / (‖Jᵀ M D‖₂ ‖u‖₂))` for a coordinate-major field `u`
    /// (`n·d`), bone and blendshape rows together; the relative value is 0 when `u = 0`.
    /// `work` is `c × d` scratch. Does not allocate.
    pub fn residual(&self, u: &[f64], work: &mut Mat<f64>) -> (f64, f64) {
        let bones = self.bone_product_norm(u, work);
        let blend = self.blendshape_residual(u).0;
        let abs = (bones * bones + blend * blend).sqrt();
        let un = u.iter().map(|x| x * x).sum::<f64>().sqrt();
        let rel = if un > 0.0 && self.norm > 0.0 {
            abs / (self.norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }
}

/// `‖[I_d ⊗ Â; G]‖₂` from the `(d·c + T)²` Gram matrix (blocks `ÂÂᵀ` per coordinate,
/// `Â G_{·,i}ᵀ` coupling them to the blendshape rows, `GGᵀ`).
fn stacked_norm(a: &Mat<f64>, g: &Mat<f64>, d: usize) -> Result<f64> {
    let (c, n, nt) = (a.nrows(), a.ncols(), g.nrows());
    let aat = a * a.transpose();
    let ggt = g * g.transpose();
    let size = d * c + nt;
    let mut gram = Mat::<f64>::zeros(size, size);
    for i in 0..d {
        gram.as_mut().submatrix_mut(i * c, i * c, c, c).copy_from(&aat);
        let gi = g.as_ref().submatrix(0, i * n, nt, n);
        let x = a * gi.transpose();
        for k in 0..c {
            for t in 0..nt {
                gram[(i * c + k, d * c + t)] = x[(k, t)];
                gram[(d * c + t, i * c + k)] = x[(k, t)];
            }
        }
    }
    gram.as_mut().submatrix_mut(d * c, d * c, nt, nt).copy_from(&ggt);
    sqrt_largest_eigenvalue(&gram, "spectral norm of the rig constraint")
}

/// `√λ_max` of a symmetric positive semi-definite Gram matrix `G = MᵀM` (or `MMᵀ`): the largest
/// singular value of `M`.
fn sqrt_largest_eigenvalue(gram: &Mat<f64>, what: &str) -> Result<f64> {
    Ok(gram
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| NumericalError::Factorization {
            matrix: what.into(),
            reason: format!("{e:?}"),
        })?
        .into_iter()
        .fold(0.0, f64::max)
        .max(0.0)
        .sqrt())
}

impl RigConstraint {
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
    sqrt_largest_eigenvalue(&g, "spectral norm")
}
