//! Linear (small-strain) elasticity.
//!
//! `ψ(F) = μ ‖ε‖²_F + λ/2 tr(ε)²` with the infinitesimal strain `ε = (F + Fᵀ)/2 − I`. Quadratic
//! in `F`: its Hessian is constant and positive semi-definite (zero on infinitesimal rotations),
//! but finite rotations cost energy, which is why it is only valid for small deformations.

use crate::energy::invariants::{fill_nan, shape_ok};

/// `ψ(F)` per unit rest volume.
#[inline]
pub(crate) fn linear_elasticity_energy(d: usize, f: &[f64], mu: f64, lambda: f64) -> f64 {
    if !shape_ok(d, f.len(), 0, 0) {
        return f64::NAN;
    }
    let mut e2 = 0.0;
    let mut tr = 0.0;
    for i in 0..d {
        for j in 0..d {
            let eps = 0.5 * (f[i * d + j] + f[j * d + i]) - if i == j { 1.0 } else { 0.0 };
            e2 += eps * eps;
        }
        tr += f[i * d + i] - 1.0;
    }
    mu * e2 + 0.5 * lambda * tr * tr
}

/// `P = 2μ ε + λ tr(ε) I` into `p`.
#[inline]
pub(crate) fn linear_elasticity_gradient(d: usize, f: &[f64], mu: f64, lambda: f64, p: &mut [f64]) {
    if !shape_ok(d, f.len(), p.len(), d * d) {
        return fill_nan(p);
    }
    let tr: f64 = (0..d).map(|i| f[i * d + i] - 1.0).sum();
    for i in 0..d {
        for j in 0..d {
            let eps = 0.5 * (f[i * d + j] + f[j * d + i]) - if i == j { 1.0 } else { 0.0 };
            p[i * d + j] = 2.0 * mu * eps + if i == j { lambda * tr } else { 0.0 };
        }
    }
}

/// `∂P_ij/∂F_kl = μ (δ_ik δ_jl + δ_il δ_jk) + λ δ_ij δ_kl` into `h` (independent of `F`).
#[inline]
pub(crate) fn linear_elasticity_hessian(d: usize, f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) {
    if !shape_ok(d, f.len(), h.len(), d * d * d * d) {
        return fill_nan(h);
    }
    let dd = d * d;
    let delta = |a: usize, b: usize| if a == b { 1.0 } else { 0.0 };
    for i in 0..d {
        for j in 0..d {
            for k in 0..d {
                for l in 0..d {
                    h[(i * d + j) * dd + k * d + l] = mu * (delta(i, k) * delta(j, l) + delta(i, l) * delta(j, k))
                        + lambda * delta(i, j) * delta(k, l);
                }
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
        let (mu, lambda) = (1.0, 1.0);
        for d in [2, 3] {
            for f in fd::samples(d) {
                let mut p = vec![0.0; d * d];
                linear_elasticity_gradient(d, &f, mu, lambda, &mut p);
                let pf = fd::gradient(d, &f, &|x| linear_elasticity_energy(d, x, mu, lambda));
                assert!(fd::rel_err(&p, &pf) < fd::FD_TOLERANCE);
                let mut h = vec![0.0; d * d * d * d];
                linear_elasticity_hessian(d, &f, mu, lambda, &mut h);
                let hf = fd::hessian(d, &f, &|x, out| linear_elasticity_gradient(d, x, mu, lambda, out));
                assert!(fd::rel_err(&h, &hf) < fd::FD_TOLERANCE);
            }
        }
    }
}
