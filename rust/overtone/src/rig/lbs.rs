//! Linear blend skinning (LBS) and its Jacobian.

use faer::{Mat, MatRef};

use crate::error::{check_finite, InputError, OvertoneError, Result};

/// Largest accepted `|Σ_b w_vb − 1|`; rows within it are renormalised to sum to one exactly.
pub(crate) const WEIGHT_SUM_TOLERANCE: f64 = 1e-5;
/// Most negative weight accepted (and clamped to zero): bounded-biharmonic and other
/// optimised weights carry negatives of this size from their solvers' tolerances.
pub(crate) const NEGATIVE_WEIGHT_TOLERANCE: f64 = 1e-6;

/// An LBS rig over `n` rest positions with `m` bones in `d` dimensions.
///
/// Each bone `b` carries an affine transform `T_b` (`d × (d+1)`, mapping rest to posed
/// positions), and vertex `v` moves to `x_v = Σ_b w_vb T_b [X_v; 1]`. This is linear in the rig
/// parameters `p`, `x = J p`. Parameters are stored coordinate-major to match the fields:
/// `p[i·c + b·(d+1) + j] = (T_b)_ij` with `c = m(d+1)`, so that `J = I_d ⊗ Ĵ` where the scalar
/// Jacobian `Ĵ` (`n × c`) has entries `Ĵ_{v, b(d+1)+j} = w_vb [X_v; 1]_j`.
///
/// **Blendshapes** ([`with_blendshapes`](Self::with_blendshapes)): `T` morph targets, each a
/// rest-space offset field `Δ_t` (`n × d`, length units). They are applied before skinning, as
/// glTF does: `x_v = Σ_b w_vb T_b [X_v + Σ_t β_t Δ_tv; 1]`. The target weights `β` (dimensionless)
/// join the parameters: `p = [p_lbs (d·c), β (T)]`. The rig pose is then bilinear in
/// `(p_lbs, β)`; per coordinate it is `x_i = Ĵ p_i + Σ_t β_t Ĵ_t p_i` with the skinned-delta
/// Jacobians `Ĵ_t` (`n × c`, `(Ĵ_t)_{v, b(d+1)+j} = w_vb Δ_tvj` for `j < d`, 0 for the
/// translation column) — see [`extended_params_into`](Self::extended_params_into).
///
/// The rig-orthogonality constraint uses the paper's constant Jacobian
/// `J = [I_d ⊗ Ĵ, Δ]`: one extra column per target, the rest-space delta `Δ_t` (a `d·n` vector
/// that couples the coordinates). For a blendshape-only rig (bones at rest) this is exactly
/// `∂x/∂β_t`; with posed bones the true derivative is the skinned delta
/// `Σ_b w_vb A_b Δ_tv`, which the constant column approximates (exact where the bones driving
/// the morphed region do not rotate or scale).
#[derive(Clone, Debug)]
pub struct LbsRig {
    dim: usize,
    n_bones: usize,
    /// `n × m`, row-major, rows summing to one.
    weights: Vec<f64>,
    /// `n × d`, row-major.
    rest: Vec<f64>,
    /// Blendshape deltas `Δ`, `T × n × d` row-major (empty without blendshapes).
    deltas: Vec<f64>,
    n_targets: usize,
}

impl LbsRig {
    /// Validates and stores the rig. `weights` is `n × m` row-major, `rest` is `n × d` row-major.
    ///
    /// Refuses non-finite or negative weights (below −[`NEGATIVE_WEIGHT_TOLERANCE`]; smaller negatives are solver round-off and are clamped to zero) and rows whose sum differs from one
    /// by more than [`WEIGHT_SUM_TOLERANCE`]; rows within it are renormalised.
    pub fn new(dim: usize, rest: &[f64], weights: &[f64], n_bones: usize) -> Result<Self> {
        if dim != 2 && dim != 3 {
            return Err(OvertoneError::setting("dimension", dim, "rigs are 2D or 3D"));
        }
        if rest.len() % dim != 0 {
            return Err(OvertoneError::size(
                "rest positions",
                format!("a multiple of {dim} numbers"),
                rest.len(),
            ));
        }
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
                return Err(InputError::Weights {
                    vertex: v,
                    reason: format!(
                        "weight of bone {b} is negative ({:e}); LBS weights must be >= 0",
                        row[b]
                    ),
                }
                .into());
            }
            row.iter_mut().for_each(|x| *x = x.max(0.0));
            let sum: f64 = row.iter().sum();
            if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                return Err(InputError::Weights {
                    vertex: v,
                    reason: format!("they sum to {sum} instead of 1; normalise the weights in the host"),
                }
                .into());
            }
            row.iter_mut().for_each(|x| *x /= sum);
        }
        Ok(Self {
            dim,
            n_bones,
            weights: w,
            rest: rest.to_vec(),
            deltas: Vec::new(),
            n_targets: 0,
        })
    }

    /// Adds `n_targets` blendshapes (morph targets): `deltas` is `T × n × d` row-major, the
    /// rest-space offset of every vertex for each target (length units). The parameter vector
    /// grows by `T` target weights (see the type docs).
    ///
    /// Refuses a wrong length, NaN/Inf, and a target whose deltas are all zero (an exporter
    /// fault: it would add a column of zeros to `J`). Linearly dependent targets, or targets the
    /// bones can already make (a uniform offset), are accepted: the solvers keep only the
    /// independent constraint directions (rank revelation).
    pub fn with_blendshapes(mut self, deltas: &[f64], n_targets: usize) -> Result<Self> {
        let (n, d) = (self.n_vertices(), self.dim);
        if deltas.len() != n_targets * n * d {
            return Err(OvertoneError::size(
                "blendshape deltas",
                format!(
                    "{n_targets} targets x {n} vertices x {d} = {} numbers",
                    n_targets * n * d
                ),
                format!("{} numbers", deltas.len()),
            ));
        }
        for (t, field) in deltas.chunks_exact((n * d).max(1)).enumerate() {
            if let Some(i) = field.iter().position(|x| !x.is_finite()) {
                return Err(InputError::Blendshape {
                    target: t,
                    reason: format!("non-finite delta at vertex {}, coordinate {}", i / d, i % d),
                }
                .into());
            }
            if field.iter().all(|&x| x == 0.0) {
                return Err(InputError::Blendshape {
                    target: t,
                    reason: "every delta is zero; remove the target or re-export it".into(),
                }
                .into());
            }
        }
        self.deltas = deltas.to_vec();
        self.n_targets = n_targets;
        Ok(self)
    }

    /// Checks a rig parameter vector: [`n_params`](Self::n_params) finite numbers.
    pub(crate) fn check_params(&self, p: &[f64]) -> Result<()> {
        if p.len() != self.n_params() {
            return Err(OvertoneError::size("rig parameters", self.n_params(), p.len()));
        }
        check_finite("rig parameters", p, 1)
    }

    /// Number of blendshapes `T`.
    pub fn n_targets(&self) -> usize {
        self.n_targets
    }
    /// Blendshape deltas, `T × n × d` row-major.
    pub fn deltas(&self) -> &[f64] {
        &self.deltas
    }
    /// Rest positions, `n × d` row-major.
    pub fn rest(&self) -> &[f64] {
        &self.rest
    }
    /// Length of the bone part of the parameter vector, `d·m(d+1)`.
    pub(crate) fn n_bone_params(&self) -> usize {
        self.dim * self.n_scalar_params()
    }

    /// The skinned-delta Jacobian `Ĵ_t` of target `t` (`n × m(d+1)`, see the type docs).
    pub(crate) fn skinned_delta_jacobian(&self, t: usize) -> Mat<f64> {
        let (d, m, n) = (self.dim, self.n_bones, self.n_vertices());
        let delta = &self.deltas[t * n * d..(t + 1) * n * d];
        Mat::from_fn(n, m * (d + 1), |v, col| {
            let (b, j) = (col / (d + 1), col % (d + 1));
            if j < d {
                self.weights[v * m + b] * delta[v * d + j]
            } else {
                0.0
            }
        })
    }

    /// The extended scalar Jacobian `J̃ = [Ĵ, Ĵ_1, …, Ĵ_T]` (`n × c(1+T)`): with the extended
    /// parameters of [`extended_params_into`](Self::extended_params_into), the rig pose is the
    /// linear map `x_i = J̃ p̃_i` per coordinate.
    pub fn extended_jacobian(&self) -> Mat<f64> {
        let c = self.n_scalar_params();
        let mut out = Mat::<f64>::zeros(self.n_vertices(), c * (1 + self.n_targets));
        out.as_mut()
            .submatrix_mut(0, 0, self.n_vertices(), c)
            .copy_from(self.scalar_jacobian());
        for t in 0..self.n_targets {
            out.as_mut()
                .submatrix_mut(0, c * (1 + t), self.n_vertices(), c)
                .copy_from(self.skinned_delta_jacobian(t));
        }
        out
    }

    /// Columns of [`extended_jacobian`](Self::extended_jacobian), `c̃ = c(1+T)`.
    pub fn n_extended_scalar_params(&self) -> usize {
        self.n_scalar_params() * (1 + self.n_targets)
    }

    /// Extended parameters `p̃` (`d × c(1+T)`, coordinate-major) from `p = [p_lbs, β]`:
    /// `p̃_i = [p_i, β_1 p_i, …, β_T p_i]`, so that `x_i = J̃ p̃_i` equals the morph-then-skin
    /// pose. `p` must have [`n_params`](Self::n_params) values (not checked here; the solvers
    /// check it). Does not allocate.
    pub fn extended_params_into(&self, p: &[f64], out: &mut [f64]) {
        let (d, c, nt) = (self.dim, self.n_scalar_params(), self.n_targets);
        let ce = c * (1 + nt);
        let beta = &p[d * c..];
        for i in 0..d {
            let pi = &p[i * c..(i + 1) * c];
            let oi = &mut out[i * ce..(i + 1) * ce];
            oi[..c].copy_from_slice(pi);
            for t in 0..nt {
                for (o, x) in oi[c * (1 + t)..c * (2 + t)].iter_mut().zip(pi) {
                    *o = beta[t] * x;
                }
            }
        }
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
    pub(crate) fn n_scalar_params(&self) -> usize {
        self.n_bones * (self.dim + 1)
    }
    /// Length of the full parameter vector, `d·m(d+1) + T` (bones, then target weights).
    pub fn n_params(&self) -> usize {
        self.dim * self.n_scalar_params() + self.n_targets
    }
    /// Normalised weights, `n × m` row-major.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The scalar Jacobian `Ĵ` (`n × m(d+1)`), see the type docs: [`lbs_basis`] of the rest
    /// positions and the bone weights.
    pub fn scalar_jacobian(&self) -> Mat<f64> {
        let m = self.n_bones;
        lbs_basis(self.dim, &self.rest, m, |v, b| self.weights[v * m + b])
    }

    /// Rig parameters `p` from per-bone transforms (`m × d × (d+1)`, each row-major), for a
    /// rig without blendshapes (use [`params_from_pose`](Self::params_from_pose) otherwise).
    pub fn params_from_transforms(&self, transforms: &[f64]) -> Result<Vec<f64>> {
        let mut p = vec![0.0; self.n_params()];
        self.params_from_transforms_into(transforms, &mut p)?;
        Ok(p)
    }

    /// Rig parameters from per-bone transforms and the `T` blendshape weights.
    pub fn params_from_pose(&self, transforms: &[f64], target_weights: &[f64]) -> Result<Vec<f64>> {
        let mut p = vec![0.0; self.n_params()];
        self.params_from_pose_into(transforms, target_weights, &mut p)?;
        Ok(p)
    }

    /// [`params_from_pose`](Self::params_from_pose) into a caller's buffer (no allocation;
    /// `out` is untouched on error).
    pub(crate) fn params_from_pose_into(
        &self,
        transforms: &[f64],
        target_weights: &[f64],
        out: &mut [f64],
    ) -> Result<()> {
        if target_weights.len() != self.n_targets {
            return Err(OvertoneError::size(
                "blendshape weights",
                format!("{} (one per target)", self.n_targets),
                target_weights.len(),
            ));
        }
        check_finite("blendshape weights", target_weights, 1)?;
        if out.len() != self.n_params() {
            return Err(OvertoneError::size("rig parameter buffer", self.n_params(), out.len()));
        }
        let nb = self.n_bone_params();
        self.bone_params_into(transforms, &mut out[..nb])?;
        out[nb..].copy_from_slice(target_weights);
        Ok(())
    }

    /// [`params_from_transforms`](Self::params_from_transforms) into a caller's buffer of
    /// [`n_params`](Self::n_params) values (no allocation; `out` is untouched on error). Refuses
    /// a rig with blendshapes (their weights would be missing).
    pub(crate) fn params_from_transforms_into(&self, transforms: &[f64], out: &mut [f64]) -> Result<()> {
        if self.n_targets > 0 {
            return Err(OvertoneError::size(
                "blendshape weights",
                format!("{} (one per target; use params_from_pose)", self.n_targets),
                0,
            ));
        }
        if out.len() != self.n_params() {
            return Err(OvertoneError::size("rig parameter buffer", self.n_params(), out.len()));
        }
        self.bone_params_into(transforms, out)
    }

    fn bone_params_into(&self, transforms: &[f64], out: &mut [f64]) -> Result<()> {
        let (d, m) = (self.dim, self.n_bones);
        let per = d * (d + 1);
        if transforms.len() != m * per {
            return Err(OvertoneError::size(
                "bone transforms",
                format!("{m} bones x {d}x{} affine matrices = {} numbers", d + 1, m * per),
                transforms.len(),
            ));
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

    /// The rig pose, written coordinate-major into `out` (`n·d`): `x_i = Ĵ p_i` without
    /// blendshapes; with them the morph-then-skin pose
    /// `x_v = Σ_b w_vb T_b [X_v + Σ_t β_t Δ_tv; 1]`. Does not allocate.
    pub fn apply(&self, p: &[f64], out: &mut [f64]) {
        let (d, m, n) = (self.dim, self.n_bones, self.n_vertices());
        let c = m * (d + 1);
        let beta = &p[d * c..];
        for i in 0..d {
            let pi = &p[i * c..(i + 1) * c];
            for v in 0..n {
                let mut xm = [0.0; 3];
                xm[..d].copy_from_slice(&self.rest[v * d..(v + 1) * d]);
                for (t, bt) in beta.iter().enumerate() {
                    if *bt != 0.0 {
                        let dv = &self.deltas[(t * n + v) * d..(t * n + v + 1) * d];
                        for j in 0..d {
                            xm[j] += bt * dv[j];
                        }
                    }
                }
                let xv = &xm[..d];
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

/// The scalar LBS basis `B̂` (`n × k(d+1)`) of `k` weight fields over rest positions `X`
/// (`rest`, `n × d` row-major, `n = rest.len() / d`): with `X̂ = [X, 1]`,
///
/// `B̂[v, l(d+1) + j] = weight(v, l) · X̂_j(v)`,
///
/// one product per entry (`weight(v, l)` itself for the translation column `j = d`). It is the
/// rig's scalar Jacobian `Ĵ` for bone weights, and the skinning subspace's `B̂` for weight
/// fields; the `d`-coordinate form is [`lbs_jacobian`] `= I_d ⊗ B̂`.
pub fn lbs_basis(dim: usize, rest: &[f64], n_fields: usize, weight: impl Fn(usize, usize) -> f64) -> Mat<f64> {
    let d = dim;
    let n = rest.len() / d.max(1);
    Mat::from_fn(n, n_fields * (d + 1), |v, col| {
        let (l, j) = (col / (d + 1), col % (d + 1));
        let xh = if j < d { rest[v * d + j] } else { 1.0 };
        weight(v, l) * xh
    })
}

/// The LBS Jacobian `∂x/∂p` of `x_v = Σ_b W_vb T_b [X_v; 1]` for per-field affine maps `T_b`
/// (`d × (d+1)`): `J = I_d ⊗ B̂` with `B̂ = `[`lbs_basis`]`(d, X, W)`, `n·d × k·d(d+1)`,
/// coordinate-major rows (`i·n + v`). Column `(i·k + b)·(d+1) + j` moves coordinate `i` by
/// `W_vb [X_v; 1]_j`. `rest` is `n × d` row-major, `weights` is `n × k`.
pub fn lbs_jacobian(dim: usize, rest: &[f64], weights: MatRef<'_, f64>) -> Result<Mat<f64>> {
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
    let bhat = lbs_basis(dim, rest, k, |v, b| weights[(v, b)]);
    let mut out = Mat::<f64>::zeros(n * dim, dim * k * c);
    for i in 0..dim {
        out.as_mut().submatrix_mut(i * n, i * k * c, n, k * c).copy_from(&bhat);
    }
    Ok(out)
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

    /// `lbs_jacobian = I_d ⊗ lbs_basis` and the scalar Jacobian equal, bit for bit, the
    /// entry-wise products `w_vb · X̂_j(v)` they are defined by.
    #[test]
    fn lbs_basis_and_jacobian_are_the_entrywise_products() {
        let rest = vec![0.0, 0.0, 0.0, 1.0, 0.2, 0.0, 0.3, 1.0, 0.1, -0.5, 0.4, 0.9];
        let weights = vec![1.0, 0.0, 0.25, 0.75, 0.5, 0.5, 0.1, 0.9];
        let rig = LbsRig::new(3, &rest, &weights, 2).unwrap();
        let (n, d, k, c) = (4, 3, 2, 4);
        let xh = |v: usize, j: usize| if j < d { rest[v * d + j] } else { 1.0 };
        let jh = rig.scalar_jacobian();
        let w = Mat::from_fn(n, k, |v, b| rig.weights()[v * k + b]);
        let jac = lbs_jacobian(d, &rest, w.as_ref()).unwrap();
        assert_eq!((jac.nrows(), jac.ncols()), (n * d, d * k * c));
        for v in 0..n {
            for col in 0..k * c {
                assert_eq!(jh[(v, col)].to_bits(), (w[(v, col / c)] * xh(v, col % c)).to_bits());
            }
            for i in 0..d {
                for col in 0..d * k * c {
                    let want = if col / (k * c) == i {
                        jh[(v, col % (k * c))]
                    } else {
                        0.0
                    };
                    assert_eq!(jac[(i * n + v, col)].to_bits(), want.to_bits());
                }
            }
        }
        assert!(lbs_jacobian(d, &rest[..10], w.as_ref()).is_err());
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
