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

use crate::energy::invariants::{add_determinant_hessian, cofactor, determinant, fill_nan, shape_ok};

/// `ψ(F)` per unit rest volume.
#[inline]
pub(crate) fn neohookean_energy(d: usize, f: &[f64], mu: f64, lambda: f64) -> f64 {
    if !shape_ok(d, f.len(), 0, 0) {
        return f64::NAN;
    }
    let j = determinant(d, f);
    let ic: f64 = f[..d * d].iter().map(|x| x * x).sum();
    0.5 * mu * (ic - d as f64) - mu * (j - 1.0) + 0.5 * lambda * (j - 1.0) * (j - 1.0)
}

/// `P = μ F + (λ (J − 1) − μ) cof F` into `p`.
#[inline]
pub(crate) fn neohookean_gradient(d: usize, f: &[f64], mu: f64, lambda: f64, p: &mut [f64]) {
    if !shape_ok(d, f.len(), p.len(), d * d) {
        return fill_nan(p);
    }
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
pub(crate) fn neohookean_hessian(d: usize, f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) {
    if !shape_ok(d, f.len(), h.len(), d * d * d * d) {
        return fill_nan(h);
    }
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

/// 2D only: the Hessian projected to positive semi-definite, in closed form; returns whether an
/// eigenvalue was clamped (same result as [`crate::energy::project_spd`] on
/// [`neohookean_hessian`], without an iterative eigensolver).
///
/// `∂²J/∂F²` is constant in 2D with eigenvalues `+1` on `span{q₁ = (I)/√2, q₂ = (e₀₁ − e₁₀)/√2}`
/// and `−1` on `span{q₃ = (e₀₀ − e₁₁)/√2, q₄ = (e₀₁ + e₁₀)/√2}`, so in that basis the Hessian is
/// `diag(μ+s, μ+s, μ−s, μ−s) + λ c′c′ᵀ` (`s = λ(J−1) − μ`, `c′ = Qᵀ vec(cof F)`): two
/// eigenpairs `(μ ± s)` orthogonal to `c′` within each block, and a 2 × 2 problem on the
/// normalised projections of `c′` onto the two blocks.
pub(crate) fn neohookean_hessian_projected_2d(f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) -> bool {
    if !shape_ok(2, f.len(), h.len(), 16) {
        fill_nan(h);
        return false;
    }
    let r = std::f64::consts::FRAC_1_SQRT_2;
    let q = [[r, 0.0, 0.0, r], [0.0, r, -r, 0.0], [r, 0.0, 0.0, -r], [0.0, r, r, 0.0]];
    let j = determinant(2, f);
    let s = lambda * (j - 1.0) - mu;
    let (a, b) = (mu + s, mu - s);
    let c = [f[3], -f[2], -f[1], f[0]];
    let cp: Vec<f64> = q.iter().map(|qk| qk.iter().zip(&c).map(|(x, y)| x * y).sum()).collect();
    let (alpha, beta) = (
        (cp[0] * cp[0] + cp[1] * cp[1]).sqrt(),
        (cp[2] * cp[2] + cp[3] * cp[3]).sqrt(),
    );
    // Unit directions of c′ in each block and their in-block complements (Q coordinates).
    let (ua, wa) = if alpha > 0.0 {
        ([cp[0] / alpha, cp[1] / alpha], [-cp[1] / alpha, cp[0] / alpha])
    } else {
        ([1.0, 0.0], [0.0, 1.0])
    };
    let (ub, wb) = if beta > 0.0 {
        ([cp[2] / beta, cp[3] / beta], [-cp[3] / beta, cp[2] / beta])
    } else {
        ([1.0, 0.0], [0.0, 1.0])
    };
    // 2 × 2 block on (u_A, u_B).
    let (m11, m12, m22) = (
        a + lambda * alpha * alpha,
        lambda * alpha * beta,
        b + lambda * beta * beta,
    );
    let mean = 0.5 * (m11 + m22);
    let rad = (0.25 * (m11 - m22).powi(2) + m12 * m12).sqrt();
    let (l1, l2) = (mean + rad, mean - rad);
    // Eigenvector of l1: (m12, l1 − m11) or (l1 − m22, m12), whichever is better conditioned.
    let (v1, v2) = {
        let (x1, y1) = (m12, l1 - m11);
        let (x2, y2) = (l1 - m22, m12);
        let (x, y) = if x1 * x1 + y1 * y1 >= x2 * x2 + y2 * y2 {
            (x1, y1)
        } else {
            (x2, y2)
        };
        let nrm = (x * x + y * y).sqrt();
        if nrm > 0.0 {
            ([x / nrm, y / nrm], [-y / nrm, x / nrm])
        } else {
            ([1.0, 0.0], [0.0, 1.0])
        }
    };
    if a >= 0.0 && b >= 0.0 && l2 >= 0.0 {
        neohookean_hessian(2, f, mu, lambda, h);
        return false;
    }
    // Eigenvectors in F coordinates.
    let to_f = |qa: [f64; 2], qb: [f64; 2]| -> [f64; 4] {
        let mut e = [0.0; 4];
        for k in 0..4 {
            e[k] = qa[0] * q[0][k] + qa[1] * q[1][k] + qb[0] * q[2][k] + qb[1] * q[3][k];
        }
        e
    };
    let comb = |v: [f64; 2]| to_f([v[0] * ua[0], v[0] * ua[1]], [v[1] * ub[0], v[1] * ub[1]]);
    let pairs = [
        (a, to_f(wa, [0.0, 0.0])),
        (b, to_f([0.0, 0.0], wb)),
        (l1, comb(v1)),
        (l2, comb(v2)),
    ];
    h[..16].fill(0.0);
    for (l, e) in pairs {
        let l = l.max(crate::energy::SPD_EIGENVALUE_FLOOR);
        if l > 0.0 {
            for i in 0..4 {
                for k in 0..4 {
                    h[i * 4 + k] += l * e[i] * e[k];
                }
            }
        }
    }
    true
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
    fn closed_form_2d_projection_matches_the_eigensolver() {
        for f in fd::samples(2)
            .into_iter()
            .chain([vec![0.2, -0.1, 0.05, 0.3], vec![1.0, 0.0, 0.0, 1.0]])
        {
            let mut want = vec![0.0; 16];
            neohookean_hessian(2, &f, MU, LAMBDA, &mut want);
            crate::energy::project_spd(4, &mut want);
            let mut got = vec![0.0; 16];
            let clamped = neohookean_hessian_projected_2d(&f, MU, LAMBDA, &mut got);
            if f[0] * f[3] - f[1] * f[2] < 0.0 {
                assert!(clamped, "an inverted element's Hessian is indefinite");
            }
            let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(
                got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-10 * scale),
                "{f:?}\n{got:?}\n{want:?}"
            );
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
