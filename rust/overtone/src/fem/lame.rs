//! Lamé parameters from engineering constants.

use crate::error::{OvertoneError, Result};

/// Lamé parameters (units of stress, Pa when lengths are metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lame {
    /// First Lamé parameter λ = Eν / ((1 + ν)(1 − 2ν)).
    pub lambda: f64,
    /// Shear modulus μ = E / (2(1 + ν)).
    pub mu: f64,
}

/// Lamé parameters from Young's modulus `E > 0` and Poisson ratio `−1 < ν < 0.5`.
pub fn lame_parameters(youngs_modulus: f64, poisson_ratio: f64) -> Result<Lame> {
    if !(youngs_modulus.is_finite() && youngs_modulus > 0.0) {
        return Err(OvertoneError::setting(
            "youngs_modulus",
            youngs_modulus,
            "must be a finite number > 0 (stiffness in Pa)",
        ));
    }
    if !(poisson_ratio.is_finite() && poisson_ratio > -1.0 && poisson_ratio < 0.5) {
        return Err(OvertoneError::setting(
            "poisson_ratio",
            poisson_ratio,
            "must lie in (-1, 0.5); 0.5 is incompressible and has no finite λ",
        ));
    }
    let (e, nu) = (youngs_modulus, poisson_ratio);
    Ok(Lame {
        lambda: e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        mu: e / (2.0 * (1.0 + nu)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values_and_refusals() {
        let l = lame_parameters(1e5, 0.0).unwrap();
        assert_eq!((l.lambda, l.mu), (0.0, 5e4));
        let l = lame_parameters(3e5, 0.4).unwrap();
        assert!((l.mu - 3e5 / 2.8).abs() < 1e-9 && (l.lambda - 3e5 * 0.4 / (1.4 * 0.2)).abs() < 1e-6);
        assert!(lame_parameters(0.0, 0.3).is_err());
        assert!(lame_parameters(1e5, 0.5).is_err());
        assert!(lame_parameters(f64::NAN, 0.3).is_err());
    }
}
