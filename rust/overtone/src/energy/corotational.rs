//! Co-rotational linear elasticity.
//!
//! `ψ(F) = μ ‖F − R‖²_F + λ/2 (tr S − d)²` with the polar decomposition `F = R S` (`R` the
//! rotation closest to `F`, reflection-safe for inverted elements, see [`crate::math::polar`]).
//! Because `R` maximises `tr(RᵀF)`, `∂ tr S/∂F = R` and `P = 2μ (F − R) + λ (tr S − d) R`.
//! The Hessian needs `dR = R Ω` with `Ω` skew: from `F = RS`,
//! `RᵀdF − dFᵀR = ΩS + SΩ`, i.e. `ω = (tr S · I − S)⁻¹ axial(RᵀdF − dFᵀR)` in 3D and
//! `ω = ((RᵀdF)₁₀ − (RᵀdF)₀₁) / tr S` in 2D. Where `tr S · I − S` is singular (the fold of the
//! polar decomposition, reachable only through inversion) the rotation term is dropped
//! (`dR = 0`), which keeps the Hessian finite.

use crate::energy::invariants::{fill_nan, shape_ok};
use crate::math::polar::{closest_rotation_2d, closest_rotation_3d, ROTATION_ACCURACY};

/// Relative size of `det(tr S · I − S)` (vs `tr(S)³`) below which `dR` is taken as zero.
pub(crate) const POLAR_FOLD_TOLERANCE: f64 = 1e-12;

#[inline]
fn rotation(d: usize, f: &[f64], r: &mut [f64]) {
    if d == 2 {
        closest_rotation_2d(f, r);
    } else {
        let mut q = [1.0, 0.0, 0.0, 0.0];
        closest_rotation_3d(f, &mut q, r, ROTATION_ACCURACY);
    }
}

/// `S = RᵀF` (`d × d`).
#[inline]
fn stretch(d: usize, r: &[f64], f: &[f64], s: &mut [f64]) {
    for i in 0..d {
        for j in 0..d {
            s[i * d + j] = (0..d).map(|k| r[k * d + i] * f[k * d + j]).sum();
        }
    }
}

/// `ψ(F)` per unit rest volume.
#[inline]
pub(crate) fn corotational_energy(d: usize, f: &[f64], mu: f64, lambda: f64) -> f64 {
    if !shape_ok(d, f.len(), 0, 0) {
        return f64::NAN;
    }
    let mut r = [0.0; 9];
    rotation(d, f, &mut r);
    let dist2: f64 = (0..d * d).map(|k| (f[k] - r[k]).powi(2)).sum();
    let tr_s: f64 = (0..d * d).map(|k| r[k] * f[k]).sum();
    mu * dist2 + 0.5 * lambda * (tr_s - d as f64).powi(2)
}

/// `P = 2μ (F − R) + λ (tr S − d) R` into `p`.
#[inline]
pub(crate) fn corotational_gradient(d: usize, f: &[f64], mu: f64, lambda: f64, p: &mut [f64]) {
    if !shape_ok(d, f.len(), p.len(), d * d) {
        return fill_nan(p);
    }
    let mut r = [0.0; 9];
    rotation(d, f, &mut r);
    let tr_s: f64 = (0..d * d).map(|k| r[k] * f[k]).sum();
    for k in 0..d * d {
        p[k] = 2.0 * mu * (f[k] - r[k]) + lambda * (tr_s - d as f64) * r[k];
    }
}

/// `∂²ψ/∂F²` into `h`, column by column: `dP = 2μ (dF − dR) + λ tr(RᵀdF) R + λ (tr S − d) dR`.
pub(crate) fn corotational_hessian(d: usize, f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) {
    if !shape_ok(d, f.len(), h.len(), d * d * d * d) {
        return fill_nan(h);
    }
    let dd = d * d;
    let mut r = [0.0; 9];
    rotation(d, f, &mut r);
    let mut s = [0.0; 9];
    stretch(d, &r, f, &mut s);
    let tr_s: f64 = (0..d).map(|i| s[i * d + i]).sum();
    // (tr S · I − sym S)⁻¹ for 3D, or 1 / tr S for 2D; None at the fold.
    let inv3 = if d == 3 {
        let a =
            nalgebra::Matrix3::from_fn(|i, j| (if i == j { tr_s } else { 0.0 }) - 0.5 * (s[i * 3 + j] + s[j * 3 + i]));
        if a.determinant().abs() > POLAR_FOLD_TOLERANCE * tr_s.abs().powi(3).max(f64::MIN_POSITIVE) {
            a.try_inverse()
        } else {
            None
        }
    } else {
        None
    };
    let fold_2d = tr_s.abs() <= POLAR_FOLD_TOLERANCE;
    for col in 0..dd {
        let (k, l) = (col / d, col % d);
        // M = Rᵀ dF with dF = e_k e_lᵀ: M_ij = R_ki δ_jl.
        let m = |i: usize, j: usize| if j == l { r[k * d + i] } else { 0.0 };
        let mut omega = [[0.0; 3]; 3];
        if d == 2 {
            if !fold_2d {
                let w = (m(1, 0) - m(0, 1)) / tr_s;
                omega[0][1] = -w;
                omega[1][0] = w;
            }
        } else if let Some(inv) = inv3 {
            let axial = nalgebra::Vector3::new(m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1));
            let w = inv * axial;
            omega = [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]];
        }
        let tr_m: f64 = (0..d).map(|i| m(i, i)).sum();
        for i in 0..d {
            for j in 0..d {
                let dr: f64 = (0..d).map(|q| r[i * d + q] * omega[q][j]).sum();
                let df = if i == k && j == l { 1.0 } else { 0.0 };
                h[(i * d + j) * dd + col] =
                    2.0 * mu * (df - dr) + lambda * tr_m * r[i * d + j] + lambda * (tr_s - d as f64) * dr;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::fd;

    #[test]
    fn gradient_and_hessian_match_finite_differences() {
        let (mu, lambda) = (2.0, 3.0);
        for d in [2, 3] {
            for f in fd::samples(d) {
                let mut p = vec![0.0; d * d];
                corotational_gradient(d, &f, mu, lambda, &mut p);
                let pf = fd::gradient(d, &f, &|x| corotational_energy(d, x, mu, lambda));
                assert!(fd::rel_err(&p, &pf) < fd::FD_TOLERANCE, "gradient d={d} f={f:?}");
                let mut h = vec![0.0; d * d * d * d];
                corotational_hessian(d, &f, mu, lambda, &mut h);
                let hf = fd::hessian(d, &f, &|x, out| corotational_gradient(d, x, mu, lambda, out));
                assert!(
                    fd::rel_err(&h, &hf) < fd::FD_TOLERANCE,
                    "hessian d={d} f={f:?} {h:?} {hf:?}"
                );
            }
        }
    }

    #[test]
    fn rotations_are_free() {
        let (c, s) = (1.2f64.cos(), 1.2f64.sin());
        assert!(corotational_energy(2, &[c, -s, s, c], 2.0, 3.0).abs() < 1e-12);
    }
}
