//! Linear blend skinning (LBS) and its Jacobian.

use faer::Mat;

use crate::error::{check_finite, OvertoneError, Result};

/// Largest accepted `|Σ_b w_vb − 1|`; rows within it are renormalised to sum to one exactly.
pub const WEIGHT_SUM_TOLERANCE: f64 = 1e-5;
/// Most negative weight accepted (and clamped to zero): bounded-biharmonic and other
/// optimised weights carry negatives of this size from their solvers' tolerances.
pub const NEGATIVE_WEIGHT_TOLERANCE: f64 = 1e-6;

/// An LBS rig over `n` rest positions with `m` bones in `d` dimensions.
///
/// Each bone `b` carries an affine transform `T_b` (`d × (d+1)`, mapping rest to posed
/// positions), and vertex `v` moves to `x_v = Σ_b w_vb T_b [X_v; 1]`. This is linear in the rig
/// parameters `p`, `x = J p`. Parameters are stored coordinate-major to match the fields:
/// `p[i·c + b·(d+1) + j] = (T_b)_ij` with `c = m(d+1)`, so that `J = I_d ⊗ Ĵ` where the scalar
/// Jacobian `Ĵ` (`n × c`) has entries `Ĵ_{v, b(d+1)+j} = w_vb [X_v; 1]_j`.
#[derive(Clone, Debug)]
pub struct LbsRig {
    dim: usize,
    n_bones: usize,
    /// `n × m`, row-major, rows summing to one.
    weights: Vec<f64>,
    /// `n × d`, row-major.
    rest: Vec<f64>,
}

impl LbsRig {
    /// Validates and stores the rig. `weights` is `n × m` row-major, `rest` is `n × d` row-major.
    ///
    /// Refuses non-finite or negative weights (below −[`NEGATIVE_WEIGHT_TOLERANCE`]; smaller negatives are solver round-off and are clamped to zero) and rows whose sum differs from one
    /// by more than [`WEIGHT_SUM_TOLERANCE`]; rows within it are renormalised.
    pub fn new(dim: usize, rest: &[f64], weights: &[f64], n_bones: usize) -> Result<Self> {
        let n = rest.len() / dim;
        if n_bones == 0 {
            return Err(OvertoneError::setting(
                "bones",
                0,
                "a rig needs at least one bone (weights with at least one column)",
            ));
        }
        if weights.len() != n * n_bones {
            return Err(OvertoneError::size(
                "weights",
                format!("{n} x {n_bones} (one row per vertex, one column per bone)"),
                format!("{} values", weights.len()),
            ));
        }
        check_finite("weights", weights, n_bones)?;
        let mut w = weights.to_vec();
        for (v, row) in w.chunks_exact_mut(n_bones).enumerate() {
            if let Some(b) = row.iter().position(|&x| x < -NEGATIVE_WEIGHT_TOLERANCE) {
                return Err(OvertoneError::Weights {
                    vertex: v,
                    reason: format!(
                        "weight of bone {b} is negative ({:e}); LBS weights must be >= 0",
                        row[b]
                    ),
                });
            }
            row.iter_mut().for_each(|x| *x = x.max(0.0));
            let sum: f64 = row.iter().sum();
            if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                return Err(OvertoneError::Weights {
                    vertex: v,
                    reason: format!("they sum to {sum} instead of 1; normalise the weights in the host"),
                });
            }
            row.iter_mut().for_each(|x| *x /= sum);
        }
        Ok(Self {
            dim,
            n_bones,
            weights: w,
            rest: rest.to_vec(),
        })
    }

    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of bones `m`.
    pub fn n_bones(&self) -> usize {
        self.n_bones
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.rest.len() / self.dim
    }
    /// Columns of the scalar Jacobian, `c = m(d+1)`.
    pub fn n_scalar_params(&self) -> usize {
        self.n_bones * (self.dim + 1)
    }
    /// Length of the full parameter vector, `d·m(d+1)`.
    pub fn n_params(&self) -> usize {
        self.dim * self.n_scalar_params()
    }
    /// Normalised weights, `n × m` row-major.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The scalar Jacobian `Ĵ` (`n × m(d+1)`), see the type docs.
    pub fn scalar_jacobian(&self) -> Mat<f64> {
        let (d, m) = (self.dim, self.n_bones);
        Mat::from_fn(self.n_vertices(), m * (d + 1), |v, col| {
            let (b, j) = (col / (d + 1), col % (d + 1));
            let xh = if j < d { self.rest[v * d + j] } else { 1.0 };
            self.weights[v * m + b] * xh
        })
    }

    /// Rig parameters `p` from per-bone transforms (`m × d × (d+1)`, each row-major).
    pub fn params_from_transforms(&self, transforms: &[f64]) -> Result<Vec<f64>> {
        let mut p = vec![0.0; self.n_params()];
        self.params_from_transforms_into(transforms, &mut p)?;
        Ok(p)
    }

    /// [`params_from_transforms`](Self::params_from_transforms) into a caller's buffer of
    /// [`n_params`](Self::n_params) values (no allocation; `out` is untouched on error).
    pub fn params_from_transforms_into(&self, transforms: &[f64], out: &mut [f64]) -> Result<()> {
        let (d, m) = (self.dim, self.n_bones);
        let per = d * (d + 1);
        if transforms.len() != m * per {
            return Err(OvertoneError::size(
                "bone transforms",
                format!("{m} bones x {d}x{} affine matrices = {} numbers", d + 1, m * per),
                transforms.len(),
            ));
        }
        if out.len() != self.n_params() {
            return Err(OvertoneError::size("rig parameter buffer", self.n_params(), out.len()));
        }
        check_finite("bone transforms", transforms, per)?;
        let c = m * (d + 1);
        for b in 0..m {
            for i in 0..d {
                for j in 0..=d {
                    out[i * c + b * (d + 1) + j] = transforms[b * per + i * (d + 1) + j];
                }
            }
        }
        Ok(())
    }

    /// `x = J p`, written coordinate-major into `out` (`n·d`): `x_i = Ĵ p_i`.
    pub fn apply(&self, p: &[f64], out: &mut [f64]) {
        let (d, m, n) = (self.dim, self.n_bones, self.n_vertices());
        let c = m * (d + 1);
        for i in 0..d {
            let pi = &p[i * c..(i + 1) * c];
            for v in 0..n {
                let xv = &self.rest[v * d..(v + 1) * d];
                let mut s = 0.0;
                for b in 0..m {
                    let w = self.weights[v * m + b];
                    if w != 0.0 {
                        let t = &pi[b * (d + 1)..(b + 1) * (d + 1)];
                        let mut tx = t[d];
                        for j in 0..d {
                            tx += t[j] * xv[j];
                        }
                        s += w * tx;
                    }
                }
                out[i * n + v] = s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `J p` built from the explicit Jacobian matrix equals the direct LBS sum
    /// `Σ_b w_vb T_b [X_v; 1]` to round-off.
    #[test]
    fn jacobian_reproduces_lbs() {
        let rest = vec![0.0, 0.0, 0.0, 1.0, 0.2, 0.0, 0.3, 1.0, 0.1, -0.5, 0.4, 0.9];
        let weights = vec![1.0, 0.0, 0.25, 0.75, 0.5, 0.5, 0.1, 0.9];
        let rig = LbsRig::new(3, &rest, &weights, 2).unwrap();
        let t: Vec<f64> = (0..24).map(|k| ((k * 7 % 11) as f64) * 0.1 - 0.4).collect();
        let p = rig.params_from_transforms(&t).unwrap();
        let mut x = vec![0.0; 12];
        rig.apply(&p, &mut x);
        let jh = rig.scalar_jacobian();
        for v in 0..4 {
            for i in 0..3 {
                let direct: f64 = (0..2)
                    .map(|b| {
                        let tb = &t[b * 12..(b + 1) * 12];
                        let tx = (0..3).map(|j| tb[i * 4 + j] * rest[v * 3 + j]).sum::<f64>() + tb[i * 4 + 3];
                        weights[v * 2 + b] * tx
                    })
                    .sum();
                let via_matrix: f64 = (0..8).map(|k| jh[(v, k)] * p[i * 8 + k]).sum();
                assert!((x[i * 4 + v] - direct).abs() < 1e-14);
                assert!((via_matrix - direct).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn refuses_bad_weights() {
        let rest = vec![0.0, 0.0, 1.0, 0.0];
        assert!(LbsRig::new(2, &rest, &[1.0, 0.0, 0.6, 0.6], 2).is_err());
        assert!(LbsRig::new(2, &rest, &[1.1, -0.1, 0.5, 0.5], 2).is_err());
        assert!(LbsRig::new(2, &rest, &[1.0, 0.0, 0.5], 2).is_err());
        assert!(LbsRig::new(2, &rest, &[1.0, 0.0, f64::NAN, 0.5], 2).is_err());
    }
}
