//! Stable neo-Hookean energy (Smith, de Goes, Kim 2018, without the `log(I_C + 1)` term; the
//! form of Macklin & Müller 2021 and of simkit's default material).
//!
//! `ψ(F) = μ/2 (‖F‖²_F − d) − μ (J − 1) + λ/2 (J − 1)²`, `J = det F`.
//!
//! Up to a constant this is Smith et al.'s `μ/2 (I_C − d) + λ/2 (J − α)²` with `α = 1 + μ/λ`,
//! the choice that makes the rest shape stress-free. It has no `log J`, so it is finite and
//! smooth for inverted elements (`J ≤ 0`) and pushes them back towards positive volume. Its
//! small-strain limit is linear elasticity with Lamé parameters `(μ, λ − μ)`; like simkit (and
//! the tutorial whose numbers Overtone reproduces) we pass the engineering `μ`, `λ` unchanged.

use crate::energy::invariants::{add_determinant_hessian, cofactor, determinant};

/// `ψ(F)` per unit rest volume.
#[inline]
pub fn neohookean_energy(d: usize, f: &[f64], mu: f64, lambda: f64) -> f64 {
    let j = determinant(d, f);
    let ic: f64 = f[..d * d].iter().map(|x| x * x).sum();
    0.5 * mu * (ic - d as f64) - mu * (j - 1.0) + 0.5 * lambda * (j - 1.0) * (j - 1.0)
}

/// `P = μ F + (λ (J − 1) − μ) cof F` into `p`.
#[inline]
pub fn neohookean_gradient(d: usize, f: &[f64], mu: f64, lambda: f64, p: &mut [f64]) {
    let j = determinant(d, f);
    let mut c = [0.0; 9];
    cofactor(d, f, &mut c);
    let s = lambda * (j - 1.0) - mu;
    for k in 0..d * d {
        p[k] = mu * f[k] + s * c[k];
    }
}

/// `∂²ψ/∂F² = μ I + λ vec(cof F) vec(cof F)ᵀ + (λ (J − 1) − μ) ∂²J/∂F²` into `h`.
#[inline]
pub fn neohookean_hessian(d: usize, f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) {
    let dd = d * d;
    let j = determinant(d, f);
    let mut c = [0.0; 9];
    cofactor(d, f, &mut c);
    for a in 0..dd {
        for b in 0..dd {
            h[a * dd + b] = lambda * c[a] * c[b] + if a == b { mu } else { 0.0 };
        }
    }
    add_determinant_hessian(d, f, lambda * (j - 1.0) - mu, h);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::fd;

    const MU: f64 = 1071.4;
    const LAMBDA: f64 = 4285.7;

    #[test]
    fn gradient_and_hessian_match_finite_differences_including_inverted() {
        for d in [2, 3] {
            for f in fd::samples(d) {
                let mut p = vec![0.0; d * d];
                neohookean_gradient(d, &f, MU, LAMBDA, &mut p);
                let pf = fd::gradient(d, &f, &|x| neohookean_energy(d, x, MU, LAMBDA));
                assert!(fd::rel_err(&p, &pf) < fd::FD_TOLERANCE, "gradient d={d} f={f:?}");
                let mut h = vec![0.0; d * d * d * d];
                neohookean_hessian(d, &f, MU, LAMBDA, &mut h);
                let hf = fd::hessian(d, &f, &|x, out| neohookean_gradient(d, x, MU, LAMBDA, out));
                assert!(fd::rel_err(&h, &hf) < fd::FD_TOLERANCE, "hessian d={d} f={f:?}");
                assert!(h.iter().chain(&p).all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn rest_is_stress_free_and_rotations_cost_nothing() {
        for d in [2, 3] {
            let mut id = vec![0.0; d * d];
            for i in 0..d {
                id[i * d + i] = 1.0;
            }
            let mut p = vec![1.0; d * d];
            neohookean_gradient(d, &id, MU, LAMBDA, &mut p);
            assert!(p.iter().all(|v| v.abs() < 1e-12));
            assert!(neohookean_energy(d, &id, MU, LAMBDA).abs() < 1e-12);
        }
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        assert!(neohookean_energy(2, &[c, -s, s, c], MU, LAMBDA).abs() < 1e-9);
        // An inverted element has finite, positive energy.
        let e = neohookean_energy(2, &[-1.0, 0.0, 0.0, 1.0], MU, LAMBDA);
        assert!(e.is_finite() && e > 0.0);
    }
}
