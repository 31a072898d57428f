//! Full-order complementary dynamics with a hyperelastic energy, solved by Newton's method.

use faer::sparse::{SparseColMat, SparseColMatRef};
use faer::Mat;

use crate::dynamics::time_integration::{
    extrapolate_from, restore_fields, save_fields, Damping, FramePlan, FrameStepper, FullModes, SubstepSolver,
};
use crate::dynamics::{validate_solver_inputs, ConstraintRank, Material, RestShape, SolverParams, StepReport};
use crate::energy::{ElasticEnergy, EnergyModel};
use crate::error::{InputError, NumericalError, OvertoneError, Result};
use crate::fem::{lame_parameters, lumped_mass, DeformationJacobian};
use crate::mesh::{element_volumes, spatial_element_order, SimplexMesh};
use crate::rig::{LbsRig, RigConstraint};
use crate::solve::{newton_minimize, ConstrainedSolve, NewtonParams, NewtonProblem, NewtonReport};

/// Default Newton stopping tolerance on `‖t·Δu_c‖₂` (scene length units; the reference scenes
/// are normalised to span `[−1, 1]`).
pub(crate) const NEWTON_CD_TOLERANCE: f64 = 1e-6;

/// The controls of [`NewtonCdSolver`]: the hyperelastic energy it minimises and when Newton's
/// method stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonCdParams {
    /// The energy density. Default [`EnergyModel::NeoHookean`].
    pub model: EnergyModel,
    /// Most Newton iterations per solve, `≥ 1`. Default 30 (the simkit tutorial's); a step
    /// cut short keeps its last iterate, and on the reference frog 10 leave steps unconverged
    /// until a later Newton system is indefinite.
    pub max_iterations: usize,
    /// Stop once the accepted step `‖t·Δu_c‖₂` is below this (scene length units, `> 0`).
    /// Default [`NEWTON_CD_TOLERANCE`].
    pub tolerance: f64,
}

impl Default for NewtonCdParams {
    fn default() -> Self {
        Self {
            model: EnergyModel::NeoHookean,
            max_iterations: 30,
            tolerance: NEWTON_CD_TOLERANCE,
        }
    }
}

/// Complementary dynamics (Zhang et al. 2020) with a hyperelastic energy (stable neo-Hookean,
/// linear or co-rotational elasticity), solved exactly per step by Newton's method.
///
/// Each step minimises over the complementary displacement `u_c` (`n·d`, coordinate-major)
///
/// `E(u_c) = 1/(2h²) ‖x − y‖²_M + Ψ(x) − xᵀ M g`,  subject to `Jᵀ M D u_c = 0`,
///
/// with `x = J p_{t+1} + u_c` and `y = x_t + h v_t`. Starting from the previous (feasible)
/// `u_c`, each Newton iteration solves `H Δu = −∇E` subject to `(I_d ⊗ Â) Δu = 0`
/// (`Â = Ĵᵀ diag(m ⊙ d)`, the same rig-orthogonality constraint as the ARAP solver) with the
/// Schur-complement [`ConstrainedSolve`]: `H = M/h² + ∇²Ψ` (per-element SPD projection) is
/// refactored numerically with the symbolic analysis of the first step, and the small Schur
/// complement is rebuilt. A backtracking line search keeps every accepted step an energy
/// decrease; feasibility is preserved because every step lies in the constraint's null space,
/// and one final projection removes the round-off drift.
pub struct NewtonCdSolver {
    dim: usize,
    n: usize,
    energy: ElasticEnergy,
    /// Lumped mass per vertex.
    mass: Vec<f64>,
    rig: LbsRig,
    /// `Â` (`c × n`).
    constraint: RigConstraint,
    solve: ConstrainedSolve,
    /// Length `τ` of one backward-Euler solve.
    dt: f64,
    /// Mass-proportional damping `α` (1/s) of the complementary velocity.
    damping_mass: f64,
    /// The damping ratio `ζ` it was bound with (`params.damping`; fixed, see `set_damping`).
    zeta: f64,
    rest: RestShape,
    /// `∇Ψ(J p)` of the step in progress (rest = rig), subtracted from the energy's gradient.
    g_rig: Vec<f64>,
    frames: FrameStepper,
    /// Rig parameters of the current pose.
    p: Vec<f64>,
    /// Midpoint start `(u_n, v_n)` and the frame's saved `(x, v, u, J p, p)`.
    mid: Vec<f64>,
    saved: Vec<f64>,
    newton: NewtonParams,
    gravity: Vec<f64>,
    // state
    x: Vec<f64>,
    v: Vec<f64>,
    u: Vec<f64>,
    // per step
    jp: Vec<f64>,
    y: Vec<f64>,
    // workspace
    xw: Vec<f64>,
    h_values: Vec<f64>,
    au: Mat<f64>,
    last_report: Option<NewtonReport>,
}

impl NewtonCdSolver {
    /// Precomputes operators and the first factorization, and puts the body at rest in pose
    /// `p0`. `controls` name the energy and Newton's stopping rule (see [`NewtonCdParams`]).
    /// The Lamé parameters of `material` are passed to the energy unchanged.
    pub fn new(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        controls: &NewtonCdParams,
        p0: &[f64],
    ) -> Result<Self> {
        validate_solver_inputs(mesh, &rig, momentum_weights, material, params)?;
        let (dim, n) = (mesh.dim(), mesh.n_vertices());
        let model = controls.model;
        let newton = NewtonParams {
            tolerance: controls.tolerance,
            max_iterations: controls.max_iterations,
            ..Default::default()
        };
        newton.validate()?;
        let lame = lame_parameters(material.youngs_modulus, material.poisson_ratio)?;
        let mesh = &mesh.with_element_order(&spatial_element_order(mesh));
        if !params.fill.is_empty() {
            return Err(OvertoneError::Unsupported(
                "an embedding lattice's material shares (fill) are supported by the ARAP solvers (--solver full or fast); Newton's method (neo-Hookean) runs on a tet mesh that is the body".into(),
            ));
        }
        if !params.stiffness.is_empty() {
            return Err(OvertoneError::Unsupported(
                "a painted stiffness field is supported by the ARAP solvers (--solver full or fast, material model arap); Newton's method (neo-Hookean) takes a uniform material".into(),
            ));
        }
        let vols = element_volumes(mesh);
        let mass = lumped_mass(mesh, &vols, material.density);
        // The lowest mode, estimated from the shear stiffness: the neo-Hookean Hessian at rest
        // is linear elasticity with (μ, λ), and the linearised ARAP energy with weight 2μ·vol is
        // its shear part (the volumetric λ term barely moves the lowest, bending-like mode).
        // `frequency` rescales the Lamé parameters so that ω₁ = 2πf.
        let (omega1, lame_scale) = if FramePlan::needs_frequency(params) {
            let jac = DeformationJacobian::new(mesh);
            let w: Vec<f64> = vols.iter().map(|v| 2.0 * lame.mu * v).collect();
            let rc = RigConstraint::new(&rig, &mass, momentum_weights)?;
            let w1 = FullModes::new(mesh, &jac, &w, &mass, &rc, 1)?.omega1();
            match params.frequency {
                Some(f) => {
                    let target = std::f64::consts::TAU * f;
                    (Some(target), (target / w1).powi(2))
                }
                None => (Some(w1), 1.0),
            }
        } else {
            (None, 1.0)
        };
        let plan = FramePlan::new(params, omega1);
        let tau = plan.solve_step();
        let damping = omega1.map_or(Damping::default(), |w| Damping::mass_proportional(params.damping, w));
        let energy = ElasticEnergy::new(mesh, model, lame.mu * lame_scale, lame.lambda * lame_scale)?;

        // Â = Ĵᵀ diag(m ⊙ d), and the constraint on all n·d unknowns: I_d ⊗ Â.
        if rig.n_targets() > 0 {
            return Err(OvertoneError::Unsupported(format!(
                "the rig has {} blendshapes; Newton's method (neo-Hookean) runs bone rigs only: use the ARAP solvers (--solver full or fast, material model arap)",
                rig.n_targets()
            )));
        }
        let rc = RigConstraint::new(&rig, &mass, momentum_weights)?;
        let c = rc.scalar.nrows();
        let nd = n * dim;
        let mut rows = vec![0.0; c * dim * nd];
        for i in 0..dim {
            for k in 0..c {
                for v in 0..n {
                    rows[(i * c + k) * nd + i * n + v] = rc.scalar[(k, v)];
                }
            }
        }
        let constraint = rc;

        // First factorization at the rest pose (fixes the symbolic analysis).
        let mut x0 = vec![0.0; nd];
        rig.apply(p0, &mut x0);
        let mut energy = energy;
        energy.hessian(&x0, true)?;
        let mut h_values = energy.values().to_vec();
        let (h2, dm) = (tau * tau, damping.mass / tau);
        for (k, &pos) in energy.diagonal_positions().iter().enumerate() {
            h_values[pos] += mass[k % n] / h2 + mass[k % n] * dm;
        }
        let h0 = SparseColMat::new(energy.pattern().clone(), h_values.clone());
        let solve = ConstrainedSolve::new_supernodal(&h0, &rows, 1, "Newton system M/h^2 + K")?;
        let gravity = if params.gravity.is_empty() {
            vec![0.0; dim]
        } else {
            params.gravity.clone()
        };
        let mut solver = Self {
            dim,
            n,
            energy,
            mass,
            rig,
            constraint,
            solve,
            dt: tau,
            damping_mass: damping.mass,
            zeta: params.damping,
            rest: params.rest,
            g_rig: vec![0.0; nd],
            frames: FrameStepper::new(plan),
            p: p0.to_vec(),
            mid: vec![0.0; 2 * nd],
            saved: vec![0.0; 4 * nd + p0.len()],
            newton,
            gravity,
            x: vec![0.0; nd],
            v: vec![0.0; nd],
            u: vec![0.0; nd],
            jp: vec![0.0; nd],
            y: vec![0.0; nd],
            xw: vec![0.0; nd],
            h_values,
            au: Mat::zeros(c, dim),
            last_report: None,
        };
        solver.reset(p0)?;
        Ok(solver)
    }

    /// Puts the body at rest in pose `p0`: `u_c = 0`, zero velocity.
    pub fn reset(&mut self, p0: &[f64]) -> Result<()> {
        self.rig.check_params(p0)?;
        self.rig.apply(p0, &mut self.x);
        self.jp.copy_from_slice(&self.x);
        self.p.copy_from_slice(p0);
        self.v.fill(0.0);
        self.u.fill(0.0);
        Ok(())
    }

    /// Gives the body its rig's velocity toward pose `p_next`, `dt` seconds of physics time
    /// later: `v = (J p_next − J p) / dt` with no complementary velocity (`u̇_c = 0`);
    /// positions and `u_c` are unchanged. The state of a body that was moving with its rig
    /// (not at rest) when the clip starts or after a cut, so a rig already in motion at its
    /// first frame does not kick the body: at rest, the first step would see the jump from zero
    /// to the rig's velocity as an impulse of acceleration.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf, or `dt` not finite and > 0 (nothing
    /// changes).
    pub(crate) fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        self.rig.check_params(p_next)?;
        crate::dynamics::time_integration::check_frame_length(dt)?;
        // `y` is workspace here: every step overwrites it with the inertial prediction first.
        self.rig.apply(p_next, &mut self.y);
        for ((v, &a), &b) in self.v.iter_mut().zip(&self.y).zip(&self.jp) {
            *v = (a - b) / dt;
        }
        Ok(())
    }

    /// Advances one time step to rig pose `p_next`.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf (refused before anything changes);
    /// [`NumericalError::StepFailed`] when the energy is not finite at the start of the step, a
    /// Newton system cannot be factored or the result is not finite. On every error the state
    /// (positions, velocities, displacement) is bit-identical to before the call. A line search
    /// that finds no decrease, or `iterations` used up, is not an error: the step keeps the last
    /// accepted (energy-decreasing, feasible) iterate and [`Self::last_newton_report`] says so.
    pub fn step(&mut self, p_next: &[f64]) -> Result<StepReport> {
        // `advance` then `constraint_residual` (the trait's provided method).
        crate::dynamics::CdSolver::step(self, p_next)
    }

    /// The step without the residual diagnostic; returns the Newton iterations taken (errors as
    /// [`step`](Self::step); on error the state is unchanged).
    pub(crate) fn advance(&mut self, p_next: &[f64]) -> Result<usize> {
        self.rig.check_params(p_next)?;
        let mut frames = std::mem::take(&mut self.frames);
        let result = frames.advance(self, p_next);
        self.frames = frames;
        result
    }

    /// The damping ratio `ζ` the body was bound with (`params.damping`). Newton's damping is
    /// mass-proportional, `α = 2ζω₁`, folded into the first factorization, so it is fixed at
    /// construction: `Ok(())` when `zeta` equals the bound value, otherwise an
    /// [`OvertoneError::Setting`] naming `damping` (rebind to change it). The solver never
    /// changes.
    pub fn set_damping(&mut self, zeta: f64) -> Result<()> {
        if !(zeta.is_finite() && zeta >= 0.0) {
            return Err(OvertoneError::setting("damping", zeta, "must be a finite number >= 0"));
        }
        if zeta == self.zeta {
            return Ok(());
        }
        Err(OvertoneError::setting(
            "damping",
            zeta,
            format!(
                "the Newton (neo-Hookean) solver's damping is fixed when it is bound (damping {}); rebind to change it",
                self.zeta
            ),
        ))
    }

    /// One backward-Euler solve of length `τ` toward `p_next` (checked by the caller); returns
    /// the Newton iterations. On error the state is unchanged.
    fn solve_substep(&mut self, p_next: &[f64]) -> Result<usize> {
        let (d, n, h) = (self.dim, self.n, self.dt);
        let jp_start = self.jp.clone();
        self.rig.apply(p_next, &mut self.jp);
        if self.rest == RestShape::Rig {
            let mut g = std::mem::take(&mut self.g_rig);
            let r = self.energy.gradient(&self.jp, &mut g);
            self.g_rig = g;
            if let Err(e) = r {
                self.jp.copy_from_slice(&jp_start);
                return Err(NumericalError::StepFailed {
                    step: "Newton step of complementary dynamics".into(),
                    reason: format!("the elastic force at the rig pose: {e}"),
                }
                .into());
            }
        }
        for k in 0..n * d {
            self.y[k] = self.x[k] + h * self.v[k];
        }
        let mut u = self.u.clone();
        let params = self.newton;
        let what = || "Newton step of complementary dynamics".to_string();
        let report = newton_minimize(self, &mut u, &params);
        if report.is_err() {
            self.jp.copy_from_slice(&jp_start);
        }
        let report = report.map_err(|e| match e {
            OvertoneError::Numerical(NumericalError::StepFailed { reason, .. }) => NumericalError::StepFailed {
                step: what(),
                reason: format!("{reason} (the energy at the new rig pose overflows: the pose jumps too far)"),
            },
            other => NumericalError::StepFailed {
                step: what(),
                reason: other.to_string(),
            },
        })?;
        self.solve.project_field_in_place(&mut u);
        if let Some(k) = u.iter().position(|x| !x.is_finite()) {
            self.jp.copy_from_slice(&jp_start);
            return Err(NumericalError::StepFailed {
                step: what(),
                reason: format!("non-finite displacement at vertex {}", k % n),
            }
            .into());
        }
        self.u = u;
        for k in 0..n * d {
            let x_new = self.jp[k] + self.u[k];
            self.v[k] = (x_new - self.x[k]) / h;
            self.x[k] = x_new;
        }
        let iterations = report.iterations.len();
        self.last_report = Some(report);
        Ok(iterations)
    }

    /// `(‖Jᵀ M D u_c‖₂, relative)` for the current state.
    pub(crate) fn constraint_residual(&mut self) -> (f64, f64) {
        self.constraint.residual(&self.u, &mut self.au)
    }

    /// The Newton iterations of the last step.
    pub fn last_newton_report(&self) -> Option<&NewtonReport> {
        self.last_report.as_ref()
    }
    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.n
    }
    /// Total positions `x = J p + u_c`, coordinate-major `n·d`.
    pub fn positions(&self) -> &[f64] {
        &self.x
    }
    /// Complementary displacement `u_c`, coordinate-major `n·d`.
    pub fn displacement(&self) -> &[f64] {
        &self.u
    }
    /// Velocities `v = (x_{t} − x_{t−1})/h` of the total positions, coordinate-major `n·d`.
    pub fn velocities(&self) -> &[f64] {
        &self.v
    }
    /// Lumped vertex masses.
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }
    /// Rig-orthogonality constraints per coordinate: independent ones kept, and given.
    pub fn constraint_rank(&self) -> ConstraintRank {
        ConstraintRank {
            kept: self.solve.rank() / self.dim,
            given: self.solve.n_constraints() / self.dim,
        }
    }
    /// The rig.
    pub fn rig(&self) -> &LbsRig {
        &self.rig
    }
}

impl NewtonProblem for NewtonCdSolver {
    fn energy(&mut self, u: &[f64]) -> Result<f64> {
        let (n, h2) = (self.n, self.dt * self.dt);
        let mut e = 0.0;
        for k in 0..u.len() {
            let x = self.jp[k] + u[k];
            self.xw[k] = x;
            let m = self.mass[k % n];
            e += 0.5 * m * (x - self.y[k]).powi(2) / h2 - m * self.gravity[k / n] * x
                + 0.5 * self.damping_mass / self.dt * m * (u[k] - self.u[k]).powi(2);
            if self.rest == RestShape::Rig {
                e -= self.g_rig[k] * u[k];
            }
        }
        match self.energy.energy(&self.xw) {
            Ok(psi) => Ok(psi + e),
            Err(OvertoneError::Input(InputError::NonFinite { .. })) => Ok(f64::NAN),
            Err(other) => Err(other),
        }
    }

    fn gradient(&mut self, u: &[f64], g: &mut [f64]) -> Result<()> {
        let (n, h2) = (self.n, self.dt * self.dt);
        for k in 0..u.len() {
            self.xw[k] = self.jp[k] + u[k];
        }
        let xw = std::mem::take(&mut self.xw);
        let r = self.energy.gradient(&xw, g);
        self.xw = xw;
        r?;
        for k in 0..u.len() {
            let m = self.mass[k % n];
            g[k] += m * (self.xw[k] - self.y[k]) / h2 - m * self.gravity[k / n]
                + self.damping_mass / self.dt * m * (u[k] - self.u[k]);
            if self.rest == RestShape::Rig {
                g[k] -= self.g_rig[k];
            }
        }
        Ok(())
    }

    fn direction(&mut self, u: &[f64], g: &[f64], du: &mut [f64]) -> Result<()> {
        for k in 0..u.len() {
            self.xw[k] = self.jp[k] + u[k];
        }
        // The exact Hessian first (quadratic convergence); M/h² usually keeps it definite even
        // where elements are indefinite. If the factorization fails or the direction is not a
        // descent direction, fall back to the per-element SPD projection.
        for project in [false, true] {
            if self.assemble_and_factor(project).is_err() {
                continue;
            }
            for k in 0..g.len() {
                du[k] = -g[k];
            }
            self.solve.solve_field_in_place(du);
            let slope: f64 = g.iter().zip(du.iter()).map(|(a, b)| a * b).sum();
            if slope < 0.0 && du.iter().all(|v| v.is_finite()) {
                return Ok(());
            }
        }
        self.assemble_and_factor(true)?;
        for k in 0..g.len() {
            du[k] = -g[k];
        }
        self.solve.solve_field_in_place(du);
        Ok(())
    }
}

impl NewtonCdSolver {
    /// `H = M/h² + ∇²Ψ(x)` at `self.xw` (elements projected to PSD if `project`), refactored.
    fn assemble_and_factor(&mut self, project: bool) -> Result<()> {
        let (n, h2) = (self.n, self.dt * self.dt);
        self.energy.hessian(&self.xw, project)?;
        self.h_values.copy_from_slice(self.energy.values());
        let dm = self.damping_mass / self.dt;
        for (k, &pos) in self.energy.diagonal_positions().iter().enumerate() {
            self.h_values[pos] += self.mass[k % n] / h2 + self.mass[k % n] * dm;
        }
        self.solve
            .refactor(SparseColMatRef::new(self.energy.pattern().as_ref(), &self.h_values))
    }
}

impl SubstepSolver for NewtonCdSolver {
    fn substep_rig(&self) -> &LbsRig {
        &self.rig
    }
    fn current_params(&self) -> &[f64] {
        &self.p
    }
    fn substep(&mut self, p: &[f64]) -> Result<usize> {
        let it = self.solve_substep(p)?;
        self.p.copy_from_slice(p);
        Ok(it)
    }
    fn begin_midpoint(&mut self) {
        save_fields(&mut self.mid, &[&self.u, &self.v]);
    }
    fn finish_midpoint(&mut self, p_end: &[f64]) {
        let nd = self.u.len();
        self.rig.apply(p_end, &mut self.jp);
        extrapolate_from(&self.mid[..nd], &mut self.u);
        extrapolate_from(&self.mid[nd..], &mut self.v);
        // The extrapolation is a difference of two admissible fields; one projection keeps the
        // constraint at round-off relative to ‖u‖ when the motion has decayed to a small
        // difference of large terms.
        self.solve.project_field_in_place(&mut self.u);
        for k in 0..nd {
            self.x[k] = self.jp[k] + self.u[k];
        }
        self.p.copy_from_slice(p_end);
    }
    fn save_frame(&mut self) {
        save_fields(&mut self.saved, &[&self.x, &self.v, &self.u, &self.jp, &self.p]);
    }
    fn restore_frame(&mut self) {
        restore_fields(
            &self.saved,
            &mut [&mut self.x, &mut self.v, &mut self.u, &mut self.jp, &mut self.p],
        );
    }
    // Newton's damping is mass-proportional, in its step matrix: nothing modal.
    fn mark_step_start(&mut self) {}
    fn damp_modes(&mut self, _length: f64) {}
}
