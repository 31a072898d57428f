//! Newton's method with a backtracking (Armijo) line search.

use crate::error::{NumericalError, OvertoneError, Result};

/// Settings of [`newton_minimize`]; the defaults are simkit's `newton_solver`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonParams {
    /// Stop once the accepted step `‖t·Δz‖₂` is below this (units of `z`). Default `1e-6`.
    pub tolerance: f64,
    /// Most Newton iterations. Default 30 (the tutorial's).
    pub max_iterations: usize,
    /// Armijo constant `c`: accept `t` when `f(z + tΔz) ≤ f(z) + c·t·gᵀΔz`. Default `0.01`.
    pub armijo: f64,
    /// Most step halvings per line search. Default 60 (`t ≥ 2⁻⁶⁰`).
    pub max_halvings: usize,
}

impl Default for NewtonParams {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 30,
            armijo: 0.01,
            max_halvings: 60,
        }
    }
}

impl NewtonParams {
    /// Checks ranges: tolerance finite and `≥ 0`, at least one iteration, `0 < c < 1`.
    pub fn validate(&self) -> Result<()> {
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(OvertoneError::setting(
                "tolerance",
                self.tolerance,
                "must be finite and >= 0",
            ));
        }
        if self.max_iterations == 0 {
            return Err(OvertoneError::setting(
                "max_iterations",
                0,
                "at least one Newton iteration",
            ));
        }
        if !(self.armijo > 0.0 && self.armijo < 1.0) {
            return Err(OvertoneError::setting("armijo", self.armijo, "must lie in (0, 1)"));
        }
        Ok(())
    }
}

/// A smooth objective for [`newton_minimize`].
pub trait NewtonProblem {
    /// `f(z)`; may return a non-finite value where the objective is undefined (the line search
    /// then rejects the step).
    fn energy(&mut self, z: &[f64]) -> Result<f64>;
    /// `g = ∇f(z)` (overwritten).
    fn gradient(&mut self, z: &[f64], g: &mut [f64]) -> Result<()>;
    /// The Newton direction `Δz = −H(z)⁻¹ g` for a symmetric positive definite approximation
    /// `H` of the Hessian at `z` (e.g. with per-element SPD projection).
    fn direction(&mut self, z: &[f64], g: &[f64], dz: &mut [f64]) -> Result<()>;
}

/// One Newton iteration as it happened.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct NewtonIteration {
    /// `f(z)` before the step.
    pub energy: f64,
    /// `‖∇f(z)‖₂` before the step.
    pub gradient_norm: f64,
    /// Accepted step length `t` (0 when the line search failed).
    pub step_length: f64,
    /// `‖t·Δz‖₂`.
    pub step_norm: f64,
    /// `f(z + tΔz)` (equal to `energy` when the line search failed).
    pub new_energy: f64,
}

/// How a minimisation ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NewtonReport {
    pub iterations: Vec<NewtonIteration>,
    /// `‖t·Δz‖₂` fell below the tolerance.
    pub converged: bool,
    /// The line search found no decrease (the iterate is stationary to round-off, or the
    /// direction is not a descent direction); the last iterate is kept.
    pub line_search_failed: bool,
}

/// Minimises `problem` from `z` (updated in place) by Newton's method with backtracking.
///
/// Each iteration evaluates `g`, the direction `Δz`, then halves `t` from 1 until the Armijo
/// condition `f(z + tΔz) ≤ f(z) + c·t·gᵀΔz` holds (a non-finite `f` fails it). Since
/// `gᵀΔz < 0`, an accepted step never increases the energy. Stops when `‖tΔz‖ < tolerance`,
/// after `max_iterations`, or when the line search fails (reported, not an error).
///
/// Errors: [`NumericalError::StepFailed`] when `f` is not finite at the starting point; any
/// error of the problem's `energy`, `gradient` or `direction` (e.g. a factorization that
/// fails) is passed on. On every error `z` is restored to its starting value, bit for bit.
pub fn newton_minimize<P: NewtonProblem + ?Sized>(
    problem: &mut P,
    z: &mut [f64],
    params: &NewtonParams,
) -> Result<NewtonReport> {
    params.validate()?;
    let start = z.to_vec();
    let result = minimize_in_place(problem, z, params);
    if result.is_err() {
        z.copy_from_slice(&start);
    }
    result
}

/// The iterations of [`newton_minimize`]; `z` holds the last accepted iterate, also on error.
fn minimize_in_place<P: NewtonProblem + ?Sized>(
    problem: &mut P,
    z: &mut [f64],
    params: &NewtonParams,
) -> Result<NewtonReport> {
    let n = z.len();
    let mut g = vec![0.0; n];
    let mut dz = vec![0.0; n];
    let mut trial = vec![0.0; n];
    let mut report = NewtonReport {
        iterations: Vec::new(),
        converged: false,
        line_search_failed: false,
    };
    let mut f = problem.energy(z)?;
    if !f.is_finite() {
        return Err(NumericalError::StepFailed {
            step: "Newton minimisation".into(),
            reason: format!("the objective is {f} at the starting point"),
        }
        .into());
    }
    for _ in 0..params.max_iterations {
        problem.gradient(z, &mut g)?;
        let gnorm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        problem.direction(z, &g, &mut dz)?;
        let slope: f64 = g.iter().zip(&dz).map(|(a, b)| a * b).sum();
        let mut it = NewtonIteration {
            energy: f,
            gradient_norm: gnorm,
            step_length: 0.0,
            step_norm: 0.0,
            new_energy: f,
        };
        if !(slope < 0.0) {
            // Zero gradient (already at the minimum) or a non-descent direction.
            report.line_search_failed = gnorm > 0.0;
            report.converged = gnorm == 0.0;
            report.iterations.push(it);
            break;
        }
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..=params.max_halvings {
            for k in 0..n {
                trial[k] = z[k] + t * dz[k];
            }
            let ft = problem.energy(&trial)?;
            if ft.is_finite() && ft <= f + params.armijo * t * slope {
                accepted = true;
                it.new_energy = ft;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            report.line_search_failed = true;
            report.iterations.push(it);
            break;
        }
        z.copy_from_slice(&trial);
        f = it.new_energy;
        it.step_length = t;
        it.step_norm = t * dz.iter().map(|v| v * v).sum::<f64>().sqrt();
        report.iterations.push(it);
        if it.step_norm < params.tolerance {
            report.converged = true;
            break;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(z) = Σ (e^{z_i} − 2 z_i) + ½ zᵀ A z`, `A = [1 ½; ½ 1]`: smooth, strictly convex, with a
    /// non-zero third derivative at the minimum (so convergence is quadratic, not faster).
    struct Convex;
    impl NewtonProblem for Convex {
        fn energy(&mut self, z: &[f64]) -> Result<f64> {
            Ok(z.iter().map(|v| v.exp() - 2.0 * v).sum::<f64>() + 0.5 * (z[0] * z[0] + z[0] * z[1] + z[1] * z[1]))
        }
        fn gradient(&mut self, z: &[f64], g: &mut [f64]) -> Result<()> {
            g[0] = z[0].exp() - 2.0 + z[0] + 0.5 * z[1];
            g[1] = z[1].exp() - 2.0 + z[1] + 0.5 * z[0];
            Ok(())
        }
        fn direction(&mut self, z: &[f64], g: &[f64], dz: &mut [f64]) -> Result<()> {
            let (a, b, c) = (z[0].exp() + 1.0, 0.5, z[1].exp() + 1.0);
            let det = a * c - b * b;
            dz[0] = -(c * g[0] - b * g[1]) / det;
            dz[1] = -(a * g[1] - b * g[0]) / det;
            Ok(())
        }
    }

    #[test]
    fn converges_quadratically_and_never_increases_the_energy() {
        let mut z = [4.0, -3.0];
        let params = NewtonParams {
            tolerance: 1e-10,
            ..Default::default()
        };
        let rep = newton_minimize(&mut Convex, &mut z, &params).unwrap();
        let mut g = [0.0; 2];
        Convex.gradient(&z, &mut g).unwrap();
        assert!(rep.converged && g.iter().all(|v| v.abs() < 1e-9), "{z:?} {g:?}");
        for it in &rep.iterations {
            assert!(it.new_energy <= it.energy);
        }
        // Quadratic convergence: once close, ‖g_{k+1}‖ ≤ C ‖g_k‖² with a modest C.
        let gn: Vec<f64> = rep.iterations.iter().map(|i| i.gradient_norm).collect();
        let close: Vec<(f64, f64)> = gn
            .windows(2)
            .map(|w| (w[0], w[1]))
            .filter(|&(a, b)| a < 1e-1 && b > 1e-12)
            .collect();
        assert!(close.len() >= 2, "too few iterations near the solution: {gn:?}");
        for (a, b) in close {
            assert!(b <= 1.0 * a * a, "‖g‖ went {a:e} -> {b:e}");
        }
    }

    /// `f(z) = ½‖z − c‖²` with an exact Newton direction, made to fail on demand: the
    /// direction errors on iteration `fail_at` (as a refused Cholesky would), or the energy is
    /// NaN everywhere but at the start (no step can be accepted), or the direction is damped
    /// by `damping` (so the iteration cap is reached before convergence).
    struct Faulty {
        calls: usize,
        fail_at: Option<usize>,
        nan_after_start: bool,
        damping: f64,
    }
    const CENTRE: [f64; 3] = [1.0, -2.0, 0.5];
    impl NewtonProblem for Faulty {
        fn energy(&mut self, z: &[f64]) -> Result<f64> {
            if self.nan_after_start && z[0] != 0.0 {
                return Ok(f64::NAN);
            }
            Ok(0.5 * z.iter().zip(CENTRE).map(|(a, c)| (a - c).powi(2)).sum::<f64>())
        }
        fn gradient(&mut self, z: &[f64], g: &mut [f64]) -> Result<()> {
            for k in 0..3 {
                g[k] = z[k] - CENTRE[k];
            }
            Ok(())
        }
        fn direction(&mut self, _z: &[f64], g: &[f64], dz: &mut [f64]) -> Result<()> {
            self.calls += 1;
            if Some(self.calls) == self.fail_at {
                return Err(NumericalError::Factorization {
                    matrix: "test Hessian".into(),
                    reason: "not positive definite".into(),
                }
                .into());
            }
            for k in 0..3 {
                dz[k] = -self.damping * g[k];
            }
            Ok(())
        }
    }

    #[test]
    fn a_failed_direction_restores_the_starting_point_bit_for_bit() {
        // Damped steps, so z moves on iterations 1 and 2 before the third direction fails.
        let mut p = Faulty {
            calls: 0,
            fail_at: Some(3),
            nan_after_start: false,
            damping: 0.5,
        };
        let start = [0.3, 0.1f64, -0.7];
        let mut z = start;
        let e = newton_minimize(&mut p, &mut z, &NewtonParams::default()).unwrap_err();
        assert!(
            matches!(e, OvertoneError::Numerical(NumericalError::Factorization { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("test Hessian"), "{e}");
        assert_eq!(p.calls, 3);
        assert_eq!(z.map(f64::to_bits), start.map(f64::to_bits));
    }

    #[test]
    fn a_non_finite_start_is_a_step_failure_and_z_is_untouched() {
        let mut p = Faulty {
            calls: 0,
            fail_at: None,
            nan_after_start: false,
            damping: 1.0,
        };
        let mut z = [f64::MAX, 0.0, 0.0];
        let e = newton_minimize(&mut p, &mut z, &NewtonParams::default()).unwrap_err();
        assert!(
            matches!(e, OvertoneError::Numerical(NumericalError::StepFailed { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("starting point"), "{e}");
        assert_eq!(z, [f64::MAX, 0.0, 0.0]);
        assert_eq!(p.calls, 0);
    }

    #[test]
    fn a_line_search_without_decrease_and_the_iteration_cap_are_reported() {
        // NaN energy off the start: 61 halvings all rejected; z stays where it was.
        let mut p = Faulty {
            calls: 0,
            fail_at: None,
            nan_after_start: true,
            damping: 1.0,
        };
        let mut z = [0.0; 3];
        let rep = newton_minimize(&mut p, &mut z, &NewtonParams::default()).unwrap();
        assert!(rep.line_search_failed && !rep.converged);
        assert_eq!(rep.iterations.len(), 1);
        assert_eq!(rep.iterations[0].step_length, 0.0);
        assert_eq!(z, [0.0; 3]);
        // Steps of 1/1000 of Newton's: after 5 iterations z has covered 1 − 0.999⁵ ≈ 0.5% of
        // the way; the report says not converged, and every accepted step lowered f.
        let mut p = Faulty {
            calls: 0,
            fail_at: None,
            nan_after_start: false,
            damping: 1e-3,
        };
        let mut z = [0.0; 3];
        let params = NewtonParams {
            max_iterations: 5,
            ..Default::default()
        };
        let rep = newton_minimize(&mut p, &mut z, &params).unwrap();
        assert!(!rep.converged && !rep.line_search_failed);
        assert_eq!(rep.iterations.len(), 5);
        assert!(rep.iterations.iter().all(|i| i.new_energy < i.energy));
        let covered = 1.0 - 0.999f64.powi(5);
        for k in 0..3 {
            assert!((z[k] - covered * CENTRE[k]).abs() < 1e-12, "{z:?}");
        }
    }
}
