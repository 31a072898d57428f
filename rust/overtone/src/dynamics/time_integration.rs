//! Frame stepping shared by the three complementary-dynamics solvers: substeps, the
//! integrator, the rig pose between frames and the damping coefficients.
//!
//! Each solver implements one primitive, a backward-Euler solve of its own fixed length `τ`
//! toward a rig pose ([`SubstepSolver::substep`]); [`FrameStepper::advance`] builds the frame
//! from it:
//!
//! * **Backward Euler** (the seeds'): one solve with `τ = h` to the frame's pose.
//! * **Implicit midpoint** on `S` substeps of length `Δ = h/S`: with `x_m` the backward-Euler
//!   solution of length `τ = Δ/2` from `(x_n, v_n)` toward the rig at `t + Δ/2`, the midpoint
//!   rule `x_{n+1} = x_n + Δ(v_n + v_{n+1})/2`, `M(v_{n+1} − v_n) = Δ f(x_m)` gives
//!   `u_{n+1} = 2u_m − u_n` and `v_{n+1} = 2v_m − v_n` with `v_m = (x_m − x_n)/τ`
//!   ([`SubstepSolver::finish_midpoint`]). The complementary displacement is extrapolated (not
//!   the total position), so `Jᵀ M D u_c = 0` — linear in `u_c` — holds at every substep. On a
//!   linear system the scheme keeps the energy exactly; its period error is `(ωΔ)²/12`. The
//!   solve is off-centred to `τ = θΔ` with [`THETA`] = 0.52 and the extrapolation is by `1/θ`,
//!   so unresolved stiff modes decay instead of ringing forever. Each solve starts from the
//!   inertial prediction (the solvers' `predict`), so the fixed local/global iteration count
//!   lands close to the exact substep: with ten iterations from the previous state instead, the
//!   beam lost 23% of its amplitude per second to the unconverged solves.
//!
//! The rig between frames follows [`PoseInterpolator`] (rotations by slerp).

use crate::dynamics::{Integrator, SolverParams, MAX_SUBSTEPS};
use crate::error::{NumericalError, Result};
use crate::rig::{LbsRig, PoseInterpolator};

/// Off-centring `θ` of the midpoint rule: each substep solves backward Euler over `θΔ` and
/// extrapolates by `1/θ`. `θ = ½` is the implicit midpoint rule (no numerical dissipation on a
/// linear system); a little above ½ resolved modes see a numerical damping ratio of about
/// `(θ − ½)ωΔ` (0.002 for a 2 Hz mode at 120 steps/s) while unresolved stiff modes lose
/// `1 − (1−θ)/θ` (8%) of their amplitude per substep, which keeps inexact nonlinear solves (ten
/// local/global iterations, clustered rotations) from pumping energy into them: undamped, at
/// one substep, on the stress test's stiff beam, `θ = ½` gained 500× the rig's largest kinetic
/// energy, `θ = 0.52` stays below 3×.
pub(crate) const THETA: f64 = 0.52;

/// Longest internal step (seconds of physics time) the automatic substep rule allows.
pub(crate) const MAX_INTERNAL_STEP: f64 = 1.0 / 120.0;

/// Largest `ω₁Δ` the automatic rule allows: the midpoint rule's period error `(ω₁Δ)²/12`
/// stays ≤ 2% (the fast solver corrects it on its lowest mode, see
/// [`period_corrected_inertia`]).
///
/// The full-order solvers keep it; the fast solver, whose period correction is per solve and
/// whose iterations converge in a few steps on characters, allows [`FAST_MAX_OMEGA_STEP`].
pub(crate) const MAX_OMEGA_STEP: f64 = 0.5;

/// Largest `ω₁Δ` the fast solver's automatic rule allows. Its lowest mode rings at its exact
/// period at any `ω₁Δ ≤ 2` ([`period_corrected_inertia`]); what limits the step is the rest:
///
/// * The correction's inertia scale `m` makes a kick from the rig move the body `1/√m` times as
///   much as it should (the kick's velocity `I/m` against the stiffness `K` of the modified
///   energy `m v²/2 + K x²/2`: amplitude `I/√(mK)`; 1.02 at `ω₁Δ = 0.5`, 1.05 at 0.75, 1.09 at 1,
///   1.29 at 1.6; CesiumMan at 100x peaked 23% high at one substep, `ω₁Δ` = 1.6), while a
///   slow, quasi-static load is unchanged; and the modes above the lowest keep the midpoint
///   rule's period error.
/// * On a slender body the iterations converge more slowly over a longer step (at the rate of
///   the per-element stiffness against the inertia rather than of the lowest mode).
///
/// Measured at one substep of 1/240 s (`a_stiff_body_rings_at_its_frequency_with_the_default_iterations`):
/// the seed beam made stiff through `frequency` needs ~10 accelerated iterations a solve and,
/// with the default ten, rings 0.2% slow at `ω₁Δ = 0.5`, 1.0% slow at 0.75 (peak 2.8% above
/// eight substeps') and 5.2% slow at 1 (peak 10% high). On CesiumMan (surface points, 48
/// frames, against eight substeps per step, `scripts/compare_stiffness.py`): at 10x the default
/// modulus one substep (`ω₁Δ` = 0.51) peaks within 2.2% of eight and is 4.4% of its peak away
/// from them (4.1% with the two substeps of `ω₁Δ ≤ 0.5`); at 100x three (`ω₁Δ` = 0.54) peak 6%
/// high and are 19.6% away (four: 1.5% and 25.8%); one would peak 23% high.
pub(crate) const FAST_MAX_OMEGA_STEP: f64 = 0.75;

/// Substeps per frame of length `dt` (seconds): enough that the internal step is at most
/// [`MAX_INTERNAL_STEP`] and, when the lowest angular frequency `ω₁` (rad/s) is known,
/// `ω₁Δ ≤ omega_step` ([`MAX_OMEGA_STEP`] or [`FAST_MAX_OMEGA_STEP`]); at most
/// [`MAX_SUBSTEPS`].
pub(crate) fn auto_substeps(dt: f64, omega1: Option<f64>, omega_step: f64) -> usize {
    let by_step = (dt / MAX_INTERNAL_STEP - 1e-9).ceil();
    let by_mode = omega1.map_or(1.0, |w| (w * dt / omega_step - 1e-9).ceil());
    (by_step.max(by_mode).max(1.0) as usize).min(MAX_SUBSTEPS)
}

/// Largest `ωΔ` the period correction follows (a mode beyond it keeps this one's).
const MAX_PERIOD_CORRECTION_STEP: f64 = 2.0;

/// Scale `m` of the inertia term that makes the midpoint rule ring a mode of angular frequency
/// `omega` (rad/s) at its exact period with substeps of `delta` seconds: the rule rings a
/// mode of frequency `ω/√m` at `(2/Δ) atan(ωΔ/(2√m))`, which is `ω` for
/// `m = ((ωΔ/2) / tan(ωΔ/2))²` (`ωΔ` capped at 2; 1 at `ω = 0`).
/// Only the inertia of the solve is scaled (`m M (x − x̃)/τ²`): the forces (gravity, the rig's
/// inertia, the elasticity) are not, so a quasi-static response is unchanged.
pub(crate) fn period_corrected_inertia(omega: f64, delta: f64) -> f64 {
    let half = 0.5 * (omega * delta).min(MAX_PERIOD_CORRECTION_STEP);
    if half > 0.0 {
        (half / half.tan()).powi(2)
    } else {
        1.0
    }
}

/// The smallest eigenvalue of a stiffness spectrum that belongs to a vibrating mode: above
/// `10⁻⁹` of the largest (zero-energy drift modes, which a leak field that vanishes everywhere
/// leaves in the rig-orthogonal space, do not vibrate). `None` if there is none.
pub(crate) fn lowest_vibrating(values: impl Iterator<Item = f64> + Clone) -> Option<f64> {
    let top = values.clone().fold(0.0, f64::max);
    values
        .filter(|&l| l.is_finite() && l > 1e-9 * top && l > 0.0)
        .fold(None, |a: Option<f64>, l| Some(a.map_or(l, |a| a.min(l))))
}

/// How a solver advances one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FramePlan {
    pub integrator: Integrator,
    /// Substeps per frame (1 for backward Euler).
    pub substeps: usize,
    /// Frame length `h` (seconds of physics time).
    pub dt: f64,
}

impl FramePlan {
    /// The plan of `params` for a body whose lowest angular frequency is `omega1` (needed only
    /// for automatic substeps; `None` uses the step-length rule alone).
    pub fn new(params: &SolverParams, omega1: Option<f64>) -> Self {
        Self::with_omega_step(params, omega1, MAX_OMEGA_STEP)
    }

    /// As [`new`](Self::new), with automatic substeps that keep `ω₁Δ ≤ omega_step`.
    pub(crate) fn with_omega_step(params: &SolverParams, omega1: Option<f64>, omega_step: f64) -> Self {
        let substeps = match params.integrator {
            Integrator::BackwardEuler => 1,
            Integrator::ImplicitMidpoint => params
                .substeps
                .unwrap_or_else(|| auto_substeps(params.dt, omega1, omega_step)),
        };
        Self {
            integrator: params.integrator,
            substeps,
            dt: params.dt,
        }
    }

    /// Length `τ` of one backward-Euler solve: `h` (backward Euler) or `θh/S` (midpoint).
    pub(crate) fn solve_step(&self) -> f64 {
        match self.integrator {
            Integrator::BackwardEuler => self.dt,
            Integrator::ImplicitMidpoint => THETA * self.dt / self.substeps as f64,
        }
    }

    /// Whether the vibration modes are computed at bind: for the damping and the `frequency` of
    /// `params`, and with automatic substeps (the production setting), so that a damping set
    /// later on a body bound undamped can be calibrated.
    pub(crate) fn needs_frequency(params: &SolverParams) -> bool {
        params.damping > 0.0
            || params.frequency.is_some()
            || (params.integrator == Integrator::ImplicitMidpoint && params.substeps.is_none())
    }
}

/// Rayleigh damping of the complementary velocity, `C = α M + β L̂` (`L̂` the solver's
/// Laplacian stiffness at rest): `α` in 1/s, `β` in s. The modal solvers combine it with
/// per-mode rates (see `modal_damping`); Newton's method uses its mass term alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Damping {
    pub mass: f64,
    pub stiffness: f64,
}

impl Damping {
    /// Mass-proportional damping only, `α = 2ζω₁` (mode `ω` gets `ζω₁/ω`).
    pub(crate) fn mass_proportional(zeta: f64, omega1: f64) -> Self {
        Self {
            mass: 2.0 * zeta * omega1,
            stiffness: 0.0,
        }
    }
}

/// The per-solver primitive of [`FrameStepper`].
pub(crate) trait SubstepSolver {
    /// The rig.
    fn substep_rig(&self) -> &LbsRig;
    /// The current rig parameters (the last pose stepped to).
    fn current_params(&self) -> &[f64];
    /// One backward-Euler solve of the solver's length `τ` toward rig parameters `p`
    /// (checked by the caller); returns the iterations taken. On error the solver's state is
    /// as before the call.
    fn substep(&mut self, p: &[f64]) -> Result<usize>;
    /// Remembers the state `(u_n, v_n, rig velocity)` the midpoint extrapolates from.
    fn begin_midpoint(&mut self);
    /// `u ← u_n + (u_θ − u_n)/θ`, `v ← v_n + (v_θ − v_n)/θ` ([`THETA`]; `2u_θ − u_n` at
    /// `θ = ½`), rig at `p_end`.
    fn finish_midpoint(&mut self, p_end: &[f64]);
    /// Saves the whole dynamic state (start of a frame).
    fn save_frame(&mut self);
    /// Restores what [`save_frame`](Self::save_frame) saved (a substep failed).
    fn restore_frame(&mut self);
    /// Remembers what [`damp_modes`](Self::damp_modes) needs from the start of a step (the
    /// rig's position, for its velocity over the step).
    fn mark_step_start(&mut self);
    /// Applies the modal part of the damping over a completed step of `length` seconds (see
    /// `ModalDamping::apply`).
    fn damp_modes(&mut self, length: f64);
}

/// Advances a [`SubstepSolver`] by one frame following a [`FramePlan`]. Holds the pose
/// workspace; does not allocate after the first frame.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameStepper {
    pub plan: Option<FramePlan>,
    interpolator: PoseInterpolator,
    pose: Vec<f64>,
}

impl FrameStepper {
    pub fn new(plan: FramePlan) -> Self {
        Self {
            plan: Some(plan),
            ..Self::default()
        }
    }

    /// Steps `solver` from its current pose to `p_next` (checked by the caller); returns the
    /// iterations of every solve, summed. On error the solver is as before the call.
    pub(crate) fn advance<S: SubstepSolver>(&mut self, solver: &mut S, p_next: &[f64]) -> Result<usize> {
        let plan = self.plan.expect("a frame stepper has a plan");
        if plan.integrator == Integrator::BackwardEuler {
            solver.mark_step_start();
            let it = solver.substep(p_next)?;
            solver.damp_modes(plan.dt);
            return Ok(it);
        }
        self.interpolator
            .prepare(solver.substep_rig(), solver.current_params(), p_next);
        self.pose.resize(p_next.len(), 0.0);
        solver.save_frame();
        let s = plan.substeps as f64;
        let mut iterations = 0;
        for k in 0..plan.substeps {
            self.interpolator.pose_at((k as f64 + THETA) / s, &mut self.pose);
            solver.mark_step_start();
            solver.begin_midpoint();
            match solver.substep(&self.pose) {
                Ok(it) => iterations += it,
                Err(e) => {
                    solver.restore_frame();
                    return Err(e);
                }
            }
            self.interpolator.pose_at((k + 1) as f64 / s, &mut self.pose);
            solver.finish_midpoint(&self.pose);
            solver.damp_modes(plan.dt / s);
        }
        Ok(iterations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_substeps_follow_the_step_and_the_mode() {
        // 24 fps: 1/24 s needs 5 steps of at most 1/120 s; 120 fps needs one.
        assert_eq!(auto_substeps(1.0 / 24.0, None, MAX_OMEGA_STEP), 5);
        assert_eq!(auto_substeps(1.0 / 120.0, None, MAX_OMEGA_STEP), 1);
        // A stiff body, ω₁ = 200 rad/s at 24 fps: 200/24/0.5 = 16.7 → 17; the fast solver's
        // rule, 200/24/0.75 = 11.1 → 12.
        assert_eq!(auto_substeps(1.0 / 24.0, Some(200.0), MAX_OMEGA_STEP), 17);
        assert_eq!(auto_substeps(1.0 / 24.0, Some(200.0), FAST_MAX_OMEGA_STEP), 12);
        assert_eq!(auto_substeps(1.0, Some(1e9), MAX_OMEGA_STEP), MAX_SUBSTEPS);
    }

    /// The solvers' substep on one undamped mode `ẍ = −ω²x` with the inertia scaled by `m`:
    /// backward Euler over `τ = θΔ`, then extrapolation by `1/θ`. Returns the mean period
    /// (seconds) from the upward zero crossings of `steps` substeps from `x = 1, v = 0`.
    fn rung_period(omega: f64, delta: f64, m: f64, steps: usize) -> f64 {
        let tau = THETA * delta;
        let (mut x, mut v) = (1.0f64, 0.0f64);
        let mut ups = Vec::new();
        for n in 0..steps {
            let xm = m * (x + tau * v) / (m + omega * omega * tau * tau);
            let vm = (xm - x) / tau;
            let (xn, vn) = (x + (xm - x) / THETA, v + (vm - v) / THETA);
            if x < 0.0 && xn >= 0.0 {
                ups.push((n as f64 + x / (x - xn)) * delta);
            }
            (x, v) = (xn, vn);
        }
        (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f64
    }

    #[test]
    fn the_corrected_inertia_rings_a_mode_at_its_period() {
        // Substeps of 1/240 s up to the automatic rule's ω₁Δ = 0.5: with the correction the
        // off-centred midpoint rings within 0.02% of 2π/ω (1e-4 measured at ωΔ = 0.5); without it
        // up to 2% slow.
        let delta = 1.0 / 240.0;
        for omega in [10.0, 60.0, 120.0] {
            let exact = std::f64::consts::TAU / omega;
            let corrected = rung_period(omega, delta, period_corrected_inertia(omega, delta), 20_000);
            let plain = rung_period(omega, delta, 1.0, 20_000);
            assert!(
                (corrected / exact - 1.0).abs() < 2e-3,
                "ω = {omega}: {corrected} s against {exact} s"
            );
            if omega * delta >= 0.25 {
                assert!(
                    plain / exact - 1.0 > 4e-3,
                    "ω = {omega}: uncorrected {plain} s against {exact} s"
                );
            }
        }
        // Capped at ωΔ = 2; no correction at rest.
        assert_eq!(
            period_corrected_inertia(1e4, delta),
            period_corrected_inertia(480.0, delta)
        );
        assert_eq!(period_corrected_inertia(0.0, delta), 1.0);
    }

    #[test]
    fn mass_proportional_damping_gives_the_lowest_mode_its_ratio() {
        let (zeta, w1) = (0.1, 20.0);
        let m = Damping::mass_proportional(zeta, w1);
        assert!((m.mass / (2.0 * w1) - zeta).abs() < 1e-15);
        assert_eq!(m.stiffness, 0.0);
    }
}

/// The lowest vibrating eigenvalue `ω₁²` (rad²/s²) of the linearised ARAP stiffness
/// ([`arap_rest_stiffness_product`](crate::fem::arap_rest_stiffness_product), element weights
/// `w`) against the lumped mass, by Rayleigh–Ritz on the columns of `basis` (`n·d × r`
/// coordinate-major fields, each admissible: `Jᵀ M D u = 0`): an upper bound of the constrained
/// body's `ω₁²`, exact when the basis spans the lowest mode, with the Ritz vector's
/// coefficients on the columns (`r`, unit mass norm). The columns are first
/// `M`-orthonormalised through the eigen-decomposition of their Gram matrix (directions with
/// Gram eigenvalues below `10⁻¹⁰` of the largest are dropped).
pub fn lowest_mode_in_subspace(
    jac: &crate::fem::DeformationJacobian,
    w: &[f64],
    mass: &[f64],
    basis: &faer::Mat<f64>,
) -> Result<(f64, Vec<f64>)> {
    use faer::Mat;
    let (nd, r) = (basis.nrows(), basis.ncols());
    let n = mass.len();
    let mut kb = Mat::<f64>::zeros(nd, r);
    let mut col = vec![0.0; nd];
    let mut out = vec![0.0; nd];
    for c in 0..r {
        for k in 0..nd {
            col[k] = basis[(k, c)];
        }
        out.fill(0.0);
        crate::fem::arap_rest_stiffness_product(jac, w, &col, &mut out);
        for k in 0..nd {
            kb[(k, c)] = out[k];
        }
    }
    let mb = Mat::from_fn(nd, r, |k, c| mass[k % n] * basis[(k, c)]);
    let gram = basis.transpose() * &mb;
    let kbt = basis.transpose() * &kb;
    lowest_ritz_pair(&gram, &kbt)
}

/// The lowest vibrating eigenpair of `K c = λ G c` (see [`lowest_ritz_pairs`]).
pub(crate) fn lowest_ritz_pair(gram: &faer::Mat<f64>, k: &faer::Mat<f64>) -> Result<(f64, Vec<f64>)> {
    let mut pairs = lowest_ritz_pairs(gram, k, 1)?;
    Ok(pairs.swap_remove(0))
}

/// The lowest `count` (at least one, fewer when the subspace has fewer) vibrating eigenpairs
/// of `K c = λ G c` for a small dense stiffness `K` and Gram (mass) matrix `G` (`r × r`,
/// symmetrised here), ascending: `G` is first diagonalised and directions with eigenvalues
/// below `10⁻¹⁰` of its largest are dropped, then `K` is solved in the `G`-orthonormal
/// coordinates. The first pair is the lowest vibrating one (the smallest eigenvalue above
/// `10⁻⁹` of the largest, see [`lowest_vibrating`]); each pair is `λ` and the eigenvector `c`
/// (`r`, `cᵀ G c = 1`).
pub(crate) fn lowest_ritz_pairs(
    gram: &faer::Mat<f64>,
    k: &faer::Mat<f64>,
    count: usize,
) -> Result<Vec<(f64, Vec<f64>)>> {
    use faer::{Mat, Side};
    let r = gram.nrows();
    let kr = Mat::from_fn(r, r, |a, b| 0.5 * (k[(a, b)] + k[(b, a)]));
    let gram = Mat::from_fn(r, r, |a, b| 0.5 * (gram[(a, b)] + gram[(b, a)]));
    let fail = |what: &str, e: String| NumericalError::Factorization {
        matrix: what.into(),
        reason: e,
    };
    let ge = gram
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| fail("subspace mass matrix", format!("{e:?}")))?;
    let (gs, gu) = (ge.S(), ge.U());
    let top = (0..r).map(|i| gs[i]).fold(0.0, f64::max);
    let keep: Vec<usize> = (0..r).filter(|&i| gs[i] > 1e-10 * top).collect();
    // Y = U_keep Σ^{-1/2}: Yᵀ Gram Y = I.
    let y = Mat::from_fn(r, keep.len(), |a, j| gu[(a, keep[j])] / gs[keep[j]].sqrt());
    let red = y.transpose() * &kr * &y;
    let red = Mat::from_fn(red.nrows(), red.ncols(), |a, b| 0.5 * (red[(a, b)] + red[(b, a)]));
    let eig = red
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| fail("subspace stiffness eigenvalues", format!("{e:?}")))?;
    let vals: Vec<f64> = (0..red.nrows()).map(|i| eig.S()[i]).collect();
    let lambda = lowest_vibrating(vals.iter().cloned()).ok_or_else(|| NumericalError::Eigensolve {
        problem: "lowest vibration mode".into(),
        reason: "the subspace has no positive-energy mode".into(),
    })?;
    let mut order: Vec<usize> = (0..vals.len()).filter(|&j| vals[j] >= lambda).collect();
    order.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
    // Coefficients of the Ritz vectors on the basis columns (unit mass norm).
    Ok(order
        .into_iter()
        .take(count.max(1))
        .map(|j| {
            let coeff = (0..r)
                .map(|a| (0..keep.len()).map(|q| y[(a, q)] * eig.U()[(q, j)]).sum())
                .collect();
            (vals[j], coeff)
        })
        .collect())
}

/// The lowest vibration modes of a full-order body: eigenpairs of the linearised ARAP
/// stiffness ([`crate::fem::arap_rest_stiffness_matrix`], `w_e = μ vol_e s_e`) against the
/// lumped mass, under the bone rows `Â u_i = 0` of every coordinate, by shift-invert
/// thick-restart block Lanczos on the `n·d` vector problem ([`crate::solve::lowest_constrained_eigenpairs`]).
/// The lowest `d(d+1)/2 + count` eigenpairs are computed, so that the rigid drift a vanishing
/// leak field leaves unconstrained (zero energy) is skipped and `count` vibrating modes are
/// covered. The blendshape rows are left out.
#[derive(Clone, Debug)]
pub(crate) struct FullModes {
    /// `(ω_k, ρ_k)` of the vibrating modes, ascending: angular frequency (rad/s) and Laplacian
    /// energy `ρ_k = φ_kᵀ(L̂ ⊗ I)φ_k` of the unit-mass mode (1/s²).
    pub modes: Vec<(f64, f64)>,
    /// The mode shapes `φ_k` (`K × n·d`, coordinate-major, `φ_kᵀ M φ_k = 1`).
    pub shapes: Vec<f64>,
}

impl FullModes {
    /// The lowest `count` (at least one) vibrating modes of the body.
    pub(crate) fn new(
        mesh: &crate::mesh::SimplexMesh,
        jac: &crate::fem::DeformationJacobian,
        w: &[f64],
        mass: &[f64],
        rc: &crate::rig::RigConstraint,
        count: usize,
    ) -> Result<Self> {
        let (n, d) = (mesh.n_vertices(), mesh.dim());
        let k = crate::fem::arap_rest_stiffness_matrix(jac, w)?;
        let c = rc.scalar.nrows();
        let scalar = rc.rows();
        let mut rows = vec![0.0; d * c * d * n];
        for i in 0..d {
            for r in 0..c {
                let dst = (i * c + r) * d * n + i * n;
                rows[dst..dst + n].copy_from_slice(&scalar[r * n..(r + 1) * n]);
            }
        }
        let mass_d: Vec<f64> = (0..d * n).map(|q| mass[q % n]).collect();
        let rigid = d * (d + 1) / 2;
        let want = (rigid + count.max(1)).min(d * n - 1).max(1);
        let eig = crate::solve::lowest_constrained_eigenpairs(&k, &mass_d, &rows, want)?;
        let lambda = lowest_vibrating(eig.values.iter().cloned()).ok_or_else(|| NumericalError::Eigensolve {
            problem: "lowest vibration mode".into(),
            reason: "the constrained stiffness has no positive eigenvalue".into(),
        })?;
        let first = eig.values.iter().position(|&v| v == lambda).unwrap_or(0);
        let l = crate::fem::scalar_stiffness(jac, w)?;
        let last = eig.values.len().min(first + count.max(1));
        let mut shapes = Vec::with_capacity((last - first) * d * n);
        let modes = (first..last)
            .map(|j| {
                let mut rho = 0.0;
                for i in 0..d {
                    let ui = faer::Mat::from_fn(n, 1, |v, _| eig.vectors[(i * n + v, j)]);
                    let lu = &l * &ui;
                    rho += (0..n).map(|v| ui[(v, 0)] * lu[(v, 0)]).sum::<f64>();
                }
                shapes.extend((0..d * n).map(|q| eig.vectors[(q, j)]));
                (eig.values[j].max(0.0).sqrt(), rho)
            })
            .collect();
        Ok(Self { modes, shapes })
    }

    /// Lowest angular frequency `ω₁` (rad/s).
    pub(crate) fn omega1(&self) -> f64 {
        self.modes[0].0
    }

    /// Scales the stiffness by `s`: `ω_k → √s ω_k`, `ρ_k → s ρ_k` (shapes unchanged).
    pub(crate) fn scale_stiffness(&mut self, s: f64) {
        for (w, rho) in &mut self.modes {
            *w *= s.sqrt();
            *rho *= s;
        }
    }
}

/// Refuses a frame length that is not a finite number > 0 (seconds).
pub(crate) fn check_frame_length(dt: f64) -> crate::error::Result<()> {
    if dt.is_finite() && dt > 0.0 {
        Ok(())
    } else {
        Err(crate::error::OvertoneError::setting(
            "dt",
            dt,
            "must be a finite number of seconds > 0",
        ))
    }
}

/// Copies the given state fields, in order, into one contiguous buffer (the frame backup of a
/// [`SubstepSolver`]); `saved` holds exactly their total length. Does not allocate.
pub(crate) fn save_fields(saved: &mut [f64], fields: &[&[f64]]) {
    let mut at = 0;
    for f in fields {
        saved[at..at + f.len()].copy_from_slice(f);
        at += f.len();
    }
}

/// The inverse of [`save_fields`]: writes the buffer back into the fields, in order.
pub(crate) fn restore_fields(saved: &[f64], fields: &mut [&mut [f64]]) {
    let mut at = 0;
    for f in fields.iter_mut() {
        let n = f.len();
        f.copy_from_slice(&saved[at..at + n]);
        at += n;
    }
}

/// `x ← start + (x − start)/θ` ([`THETA`]): the midpoint extrapolation of one state field from
/// the start of the substep.
pub(crate) fn extrapolate_from(start: &[f64], x: &mut [f64]) {
    for (x, s) in x.iter_mut().zip(start) {
        *x = s + (*x - s) / THETA;
    }
}
