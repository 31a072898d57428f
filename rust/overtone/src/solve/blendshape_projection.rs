//! The blendshape rows of the rig constraint in the full-order global step: a second, small
//! Schur complement on top of the per-coordinate bone-constrained solve.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par, Side};

use crate::error::{NumericalError, OvertoneError, Result};
use crate::solve::ConstrainedSolve;

/// Singular values (of the unit-normalised blendshape rows, after removing their component the
/// bone rows already impose) at or below this value mark a target the bones can already make or
/// one dependent on other targets; the direction is dropped. The constraint violation this
/// leaves is at most this fraction of `‖G_t‖ ‖u‖`.
pub(crate) const BLENDSHAPE_RANK_TOLERANCE: f64 = 1e-10;

/// Adds the coupled constraint `G u = 0` (`G`: `T × d·n`, row `t` = `Δ_tᵀ M D`, see
/// [`RigConstraint`](crate::rig::RigConstraint)) to a per-coordinate solve `S` that already
/// enforces `Â u_i = 0` ([`ConstrainedSolve`]; `S` is the symmetric map `b ↦ argmin ½uᵀĤu − bᵀu`
/// s.t. `Â u_i = 0`, applied per coordinate).
///
/// Block elimination: the solution with both constraints is `u = u₀ − S Gᵀ μ` with
/// `u₀ = S b` and `(G S Gᵀ) μ = G u₀`. It is evaluated on an orthonormal basis: the rows
/// `G_t` are normalised, their part in the bone rows' span (per coordinate, `U_r U_rᵀ`) removed —
/// on `{Â u_i = 0}` it vanishes anyway — and a thin SVD keeps an orthonormal basis `V`
/// (`d·n × r`) of the rest with singular values above [`BLENDSHAPE_RANK_TOLERANCE`] (rank
/// revelation: a target the bones can make, or one dependent on others, adds no row). With
/// `W = S V` and `N = Vᵀ W = Q Λ Qᵀ` (SPD), `u = u₀ − W' (V'ᵀ u₀)`, `u₀ = S b`,
/// `W' = W Q Λ^{-1/2}`, `V' = V Q Λ^{-1/2}`. Everything is precomputed; the per-step cost is
/// `2·r·d·n` multiply-adds and no allocation.
#[derive(Debug)]
pub struct BlendshapeProjection {
    /// `W'`, `r` columns of length `d·n`, concatenated.
    w: Vec<f64>,
    /// `V'`, same layout.
    v: Vec<f64>,
    tmp: Vec<f64>,
    rank: usize,
    n_targets: usize,
}

impl BlendshapeProjection {
    /// Precomputes the projection for blendshape rows `g` (`T × d·n`, coordinate-major columns)
    /// over the bone-constrained solve `solve` (built with at least `d` right-hand sides).
    pub fn new(solve: &mut ConstrainedSolve, g: &Mat<f64>, what: &str) -> Result<Self> {
        let (nt, dn) = (g.nrows(), g.ncols());
        let basis = solve.basis().clone();
        let n = basis.nrows();
        if n == 0 || dn % n != 0 {
            return Err(OvertoneError::size(
                "blendshape constraint rows",
                format!("a multiple of {n} columns"),
                dn,
            ));
        }
        let d = dn / n;
        // Normalised rows with their bone-row component removed, as columns of a d·n × T' matrix.
        let mut cols: Vec<Vec<f64>> = Vec::with_capacity(nt);
        for t in 0..nt {
            let norm = (0..dn).map(|k| g[(t, k)] * g[(t, k)]).sum::<f64>().sqrt();
            if !(norm > 0.0) {
                continue; // the target moves only vertices without momentum weight: no row
            }
            let mut col: Vec<f64> = (0..dn).map(|k| g[(t, k)] / norm).collect();
            for i in 0..d {
                let gi = &mut col[i * n..(i + 1) * n];
                for k in 0..basis.ncols() {
                    let s: f64 = (0..n).map(|v| basis[(v, k)] * gi[v]).sum();
                    for (v, x) in gi.iter_mut().enumerate() {
                        *x -= s * basis[(v, k)];
                    }
                }
            }
            cols.push(col);
        }
        let kept = if cols.is_empty() {
            Mat::<f64>::zeros(dn, 0)
        } else {
            let m = Mat::from_fn(dn, cols.len(), |k, j| cols[j][k]);
            let svd = m.thin_svd().map_err(|e| NumericalError::Factorization {
                matrix: format!("{what}: blendshape rank revelation"),
                reason: format!("{e:?}"),
            })?;
            let keep: Vec<usize> = (0..cols.len().min(dn))
                .filter(|&i| svd.S()[i] > BLENDSHAPE_RANK_TOLERANCE)
                .collect();
            Mat::from_fn(dn, keep.len(), |k, j| svd.U()[(k, keep[j])])
        };
        let r = kept.ncols();
        // W = S V, one d-column field per basis vector.
        let mut w = kept.clone();
        for j in 0..r {
            let col = w
                .col_mut(j)
                .try_as_col_major_mut()
                .expect("owned matrix columns are contiguous");
            solve.solve_field_in_place(col.as_slice_mut());
        }
        let mut nmat = Mat::<f64>::zeros(r, r);
        matmul(
            nmat.as_mut(),
            Accum::Replace,
            kept.transpose(),
            w.as_ref(),
            1.0,
            Par::Seq,
        );
        for i in 0..r {
            for j in 0..i {
                let s = 0.5 * (nmat[(i, j)] + nmat[(j, i)]);
                nmat[(i, j)] = s;
                nmat[(j, i)] = s;
            }
        }
        let mut scale = Mat::<f64>::zeros(r, r);
        if r > 0 {
            let eig = nmat
                .self_adjoint_eigen(Side::Lower)
                .map_err(|e| NumericalError::Factorization {
                    matrix: format!("{what}: blendshape Schur complement"),
                    reason: format!("{e:?}"),
                })?;
            for col in 0..r {
                let lam = eig.S()[col];
                if !(lam > 0.0) {
                    return Err(NumericalError::Factorization {
                        matrix: format!("{what}: blendshape Schur complement"),
                        reason: format!("eigenvalue {lam:e} is not positive"),
                    }
                    .into());
                }
                for row in 0..r {
                    scale[(row, col)] = eig.U()[(row, col)] / lam.sqrt();
                }
            }
        }
        let wp = &w * &scale;
        let vp = &kept * &scale;
        let flat = |m: &Mat<f64>| -> Vec<f64> {
            (0..r)
                .flat_map(|j| (0..dn).map(move |k| (k, j)))
                .map(|(k, j)| m[(k, j)])
                .collect()
        };
        Ok(Self {
            w: flat(&wp),
            v: flat(&vp),
            tmp: vec![0.0; r],
            rank: r,
            n_targets: nt,
        })
    }

    /// Independent blendshape constraint directions kept.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Blendshape rows given.
    pub fn n_targets(&self) -> usize {
        self.n_targets
    }

    /// `u ← u − W' (V'ᵀ u)` for a coordinate-major field `u` (`d·n`) that already satisfies the
    /// bone rows: the result also satisfies `G u = 0`. Does not allocate.
    pub(crate) fn project_in_place(&mut self, u: &mut [f64]) {
        let dn = u.len();
        for k in 0..self.rank {
            self.tmp[k] = crate::math::kernels::dot(&self.v[k * dn..(k + 1) * dn], u);
        }
        for k in 0..self.rank {
            let (tk, wk) = (self.tmp[k], &self.w[k * dn..(k + 1) * dn]);
            for (x, y) in u.iter_mut().zip(wk) {
                *x -= y * tk;
            }
        }
    }
}
