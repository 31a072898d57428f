//! Hyperelastic energies of linear simplices: per-element density, first Piola-Kirchhoff stress
//! and Hessian in the deformation gradient `F`, the per-element SPD projection of Hessians, and
//! their assembly over a mesh.
//!
//! Conventions of the per-element functions (`<energy>_{energy,gradient,hessian}`): `d` is the
//! dimension (2 or 3); `f` is `F` as a `d × d` row-major slice (`F_ij` at `i·d + j`); the
//! gradient `P = ∂ψ/∂F` is written the same way; the Hessian `∂²ψ/∂F∂F` is a `d² × d²`
//! row-major matrix whose row and column index is the flattened index of `F`. Densities are
//! energy per unit rest volume (Pa when `μ`, `λ` are in Pa); the assembled energy multiplies
//! by the element's rest volume.

mod assembly;
mod corotational;
mod invariants;
mod linear_elasticity;
mod neohookean;
mod spd;

pub use assembly::ElasticEnergy;
pub(crate) use corotational::{corotational_energy, corotational_gradient, corotational_hessian};
pub(crate) use linear_elasticity::{linear_elasticity_energy, linear_elasticity_gradient, linear_elasticity_hessian};
pub(crate) use neohookean::{
    neohookean_energy, neohookean_gradient, neohookean_hessian, neohookean_hessian_projected_2d,
};
pub(crate) use spd::{project_spd, SPD_EIGENVALUE_FLOOR};

use crate::error::{OvertoneError, Result};

/// The elastic energy density of a material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnergyModel {
    /// Stable neo-Hookean (Smith, de Goes, Kim 2018; the form of Macklin & Müller 2021 and of
    /// simkit): `ψ = μ/2 (‖F‖² − d) − μ (J − 1) + λ/2 (J − 1)²`, `J = det F`. Polynomial in `F`,
    /// so it is finite and smooth through inversion (`J ≤ 0`), and it is stress-free at rest.
    NeoHookean,
    /// Linear elasticity: `ψ = μ ‖ε‖² + λ/2 tr(ε)²`, `ε = (F + Fᵀ)/2 − I`.
    LinearElasticity,
    /// Co-rotational linear elasticity: `ψ = μ ‖F − R‖² + λ/2 (tr(RᵀF) − d)²`, `R` the rotation
    /// closest to `F` (polar decomposition, reflection-safe).
    Corotational,
}

impl EnergyModel {
    /// Parses `neohookean`, `linear` (or `linear_elasticity`), `corotational`.
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().replace('-', "_").as_str() {
            "neohookean" | "neo_hookean" | "stable_neohookean" => Ok(Self::NeoHookean),
            "linear" | "linear_elasticity" => Ok(Self::LinearElasticity),
            "corotational" | "co_rotational" | "corotated" => Ok(Self::Corotational),
            other => Err(OvertoneError::setting(
                "energy",
                other,
                "known energies: neohookean, linear, corotational",
            )),
        }
    }

    /// Energy density `ψ(F)`.
    #[inline]
    pub fn energy(&self, d: usize, f: &[f64], mu: f64, lambda: f64) -> f64 {
        match self {
            Self::NeoHookean => neohookean_energy(d, f, mu, lambda),
            Self::LinearElasticity => linear_elasticity_energy(d, f, mu, lambda),
            Self::Corotational => corotational_energy(d, f, mu, lambda),
        }
    }

    /// Stress `P = ∂ψ/∂F` into `p` (`d × d`).
    #[inline]
    pub fn gradient(&self, d: usize, f: &[f64], mu: f64, lambda: f64, p: &mut [f64]) {
        match self {
            Self::NeoHookean => neohookean_gradient(d, f, mu, lambda, p),
            Self::LinearElasticity => linear_elasticity_gradient(d, f, mu, lambda, p),
            Self::Corotational => corotational_gradient(d, f, mu, lambda, p),
        }
    }

    /// Hessian `∂²ψ/∂F²` into `h` (`d² × d²`), not projected.
    #[inline]
    pub fn hessian(&self, d: usize, f: &[f64], mu: f64, lambda: f64, h: &mut [f64]) {
        match self {
            Self::NeoHookean => neohookean_hessian(d, f, mu, lambda, h),
            Self::LinearElasticity => linear_elasticity_hessian(d, f, mu, lambda, h),
            Self::Corotational => corotational_hessian(d, f, mu, lambda, h),
        }
    }
}

/// Validates a dimension and the length of an `F` slice for the per-element functions' callers.
pub(crate) fn check_dim(d: usize) -> Result<()> {
    if d == 2 || d == 3 {
        Ok(())
    } else {
        Err(OvertoneError::setting("dim", d, "must be 2 or 3"))
    }
}

#[cfg(test)]
pub(crate) mod fd {
    //! Central finite differences for the derivative tests.

    /// Relative step of the central differences (error O(step²) for smooth densities).
    pub const FD_STEP: f64 = 1e-6;
    /// Accepted `‖analytic − FD‖ / max(‖analytic‖, 1)` for gradients and Hessians.
    pub const FD_TOLERANCE: f64 = 1e-6;

    pub fn gradient(d: usize, f: &[f64], psi: &dyn Fn(&[f64]) -> f64) -> Vec<f64> {
        let mut out = vec![0.0; d * d];
        for k in 0..d * d {
            let mut a = f[..d * d].to_vec();
            let mut b = a.clone();
            a[k] += FD_STEP;
            b[k] -= FD_STEP;
            out[k] = (psi(&a) - psi(&b)) / (2.0 * FD_STEP);
        }
        out
    }

    pub fn hessian(d: usize, f: &[f64], grad: &dyn Fn(&[f64], &mut [f64])) -> Vec<f64> {
        let dd = d * d;
        let mut out = vec![0.0; dd * dd];
        let (mut pa, mut pb) = (vec![0.0; dd], vec![0.0; dd]);
        for k in 0..dd {
            let mut a = f[..dd].to_vec();
            let mut b = a.clone();
            a[k] += FD_STEP;
            b[k] -= FD_STEP;
            grad(&a, &mut pa);
            grad(&b, &mut pb);
            for r in 0..dd {
                out[r * dd + k] = (pa[r] - pb[r]) / (2.0 * FD_STEP);
            }
        }
        out
    }

    pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
        let diff = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
        let norm = a.iter().map(|x| x * x).sum::<f64>().sqrt();
        diff / norm.max(1.0)
    }

    /// Deformation gradients to test at: near rest, stretched and sheared, and inverted.
    pub fn samples(d: usize) -> Vec<Vec<f64>> {
        if d == 2 {
            vec![
                vec![1.01, 0.02, -0.03, 0.98],
                vec![1.4, 0.3, -0.2, 0.7],
                vec![0.6, 0.5, 0.4, -0.3], // inverted (det < 0)
                vec![-0.9, 0.1, 0.2, 0.8], // inverted
            ]
        } else {
            vec![
                vec![1.01, 0.02, -0.03, 0.01, 0.98, 0.02, -0.01, 0.03, 1.02],
                vec![1.3, 0.2, -0.1, 0.1, 0.8, 0.3, -0.2, 0.1, 1.1],
                vec![0.7, 0.3, 0.1, 0.2, -0.6, 0.4, 0.1, 0.3, 0.9], // inverted
            ]
        }
    }
}

#[cfg(test)]
mod malformed_input_tests {
    use super::*;

    #[test]
    fn malformed_input_answers_nan_instead_of_panicking() {
        for model in [
            EnergyModel::NeoHookean,
            EnergyModel::LinearElasticity,
            EnergyModel::Corotational,
        ] {
            assert!(model.energy(4, &[1.0; 16], 1.0, 1.0).is_nan());
            assert!(model.energy(3, &[1.0; 4], 1.0, 1.0).is_nan());
            let mut p = [0.0; 4];
            model.gradient(3, &[1.0; 9], 1.0, 1.0, &mut p);
            assert!(p.iter().all(|v| v.is_nan()));
            let mut h = [0.0; 16];
            model.hessian(2, &[1.0; 3], 1.0, 1.0, &mut h);
            assert!(h.iter().all(|v| v.is_nan()));
        }
        assert!(!project_spd(4, &mut [1.0; 3]));
    }
}
