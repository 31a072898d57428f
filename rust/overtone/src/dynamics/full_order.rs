//! Full-order complementary dynamics with ARAP elasticity (local/global).

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;
use rayon::prelude::*;

use crate::dynamics::modal_damping::{ModalDamping, DAMPED_MODES};
use crate::dynamics::time_integration::{
    extrapolate_from, restore_fields, save_fields, Damping, FramePlan, FrameStepper, FullModes, SubstepSolver,
};
use crate::dynamics::{
    validate_solver_inputs, ConstraintRank, LocalGlobalParams, Material, RestShape, SolverParams, StepReport,
};
use crate::error::{check_finite, InputError, NumericalError, OvertoneError, Result};
use crate::fem::{
    lame_parameters, lumped_mass, scalar_stiffness, scalar_stiffness_triplets, DeformationJacobian,
    PARALLEL_MIN_ELEMENTS,
};
use crate::math::polar::{closest_rotation_2d, closest_rotation_3d};
use crate::mesh::{spatial_element_order, SimplexMesh};
use crate::rig::{LbsRig, RigConstraint};
use crate::shape_matching::stretch::{
    polar_stretch_2d, polar_stretch_3d, stretch_len, stretch_matrix_2d, stretch_matrix_3d,
};
use crate::shape_matching::{ExampleManifold, ManifoldScope};
use crate::solve::{BlendshapeProjection, ConstrainedSolve, PARALLEL_MIN_VERTICES};

/// Example poses offered to the local step (example-aware complementary dynamics): per element,
/// the target `R_e S*_e` with `S*_e` the projection of the element's stretch on the examples'
/// span (Koyama et al. 2013, eq. 7, over elements instead of shape-matching regions).
struct ElementExamples {
    manifold: ExampleManifold,
    /// Per element, the current stretch vector (`m × k`).
    stretch: Vec<f64>,
    /// Per element, the rotation `R_e` (`m × d²`).
    rot: Vec<f64>,
    /// Raw weights per group (`groups × N`).
    weights: Vec<f64>,
}

/// Accuracy (radians) of the per-element rotations in the local step: far below what ten
/// local/global iterations resolve, and it saves about one Newton iteration per element.
const LOCAL_STEP_ROTATION_ACCURACY: f64 = 1e-9;

/// Full-order complementary dynamics (Zhang et al. 2020) with ARAP elasticity.
///
/// Each step minimises, over the complementary displacement `u_c` (`n × d`, coordinate-major),
///
/// `E(u_c) = 1/(2h²) ‖x − y‖²_M + Σ_e (μ vol_e / 2)‖F_e(x) − R_e‖² − xᵀ M g`
/// subject to `Jᵀ M D u_c = 0`,
///
/// with `x = J p_{t+1} + u_c` the total position, `y = x_t + h v_t` the inertial prediction
/// (`v_t` the finite-difference velocity of the total position, zero at the first frame).
/// Block-coordinate descent alternates the local step (`R_e` = closest rotation to `F_e`, per
/// element, in parallel) and the global step, a linear solve with the constant matrix
/// `H = (L̂ + M̂/h²) ⊗ I_d`. Because `J = I_d ⊗ Ĵ` and `M`, `D` are diagonal per vertex, the
/// constraint is `Â u_i = 0` for each coordinate `i` with `Â = Ĵᵀ diag(m ⊙ d)`, so one scalar
/// `n × n` Cholesky factorization and one `c × c` Schur complement (`c = m_bones (d+1)`) serve
/// every coordinate ([`ConstrainedSolve`]).
///
/// A rig with blendshapes adds one coupled row `Δ_tᵀ M D u_c = 0` per target (the rest-space
/// delta columns of `J`, see [`LbsRig`]); a second, small Schur step enforces them after the
/// per-coordinate solve ([`BlendshapeProjection`]), so the result is the exact minimiser under
/// all rows. The rig pose `J p` is the morph-then-skin pose of [`LbsRig::apply`].
pub struct FullOrderSolver {
    dim: usize,
    n: usize,
    jac: DeformationJacobian,
    /// `μ·vol_e` per element.
    element_weights: Vec<f64>,
    /// Lumped mass per vertex.
    mass: Vec<f64>,
    rig: LbsRig,
    /// `Â` (`c × n`).
    constraint: RigConstraint,
    solve: ConstrainedSolve,
    /// The blendshape rows' Schur step (`None` without blendshapes).
    blend: Option<BlendshapeProjection>,
    params: SolverParams,
    local_global: LocalGlobalParams,
    gravity: Vec<f64>,
    /// Length `τ` of one backward-Euler solve.
    tau: f64,
    damping: Damping,
    /// Start each solve from the inertial prediction (substepped integrators).
    predict: bool,
    /// `L̂` (scalar ARAP stiffness), kept when the damping has a stiffness term.
    l_hat: Option<SparseColMat<usize, f64>>,
    /// Lowest angular frequency `ω₁` (rad/s) of the constrained body, when it was needed.
    omega1: Option<f64>,
    /// The modal part of the damping, over the lowest vibration modes when they were computed
    /// (see `modal_damping`).
    modal: Option<ModalDamping>,
    /// `J p` at the start of the step in progress (the rig's velocity over it, for the modal
    /// damping).
    jp_start: Vec<f64>,
    frames: FrameStepper,
    // state
    /// Rig parameters of the current pose.
    p: Vec<f64>,
    x: Vec<f64>,
    v: Vec<f64>,
    u: Vec<f64>,
    warm: Vec<[f64; 4]>,
    /// `J p` of the last accepted step.
    jp: Vec<f64>,
    // workspace
    /// `J p_next` of the step in progress (swapped with `jp` when the step succeeds).
    jp_next: Vec<f64>,
    /// `warm` at the start of the step in progress (restored when the step fails).
    warm_start: Vec<[f64; 4]>,
    inertia: Vec<f64>,
    rhs: Vec<f64>,
    u_prev: Vec<f64>,
    u_start: Vec<f64>,
    f_rig: Vec<f64>,
    /// The elastic reference of each element: `F_e(J p)` (bind rest) or its closest rotation
    /// (rig rest), with the rig rotations' warm starts.
    f_ref: Vec<f64>,
    warm_rig: Vec<[f64; 4]>,
    /// Midpoint start `(u_n, v_n)` and the frame's saved state `(x, v, u, J p, p)`.
    mid: Vec<f64>,
    saved: Vec<f64>,
    saved_warm: Vec<[f64; 4]>,
    /// Per element and local vertex, the force `μ vol_e (R_e − F_ref,e) g_a` (`m·(d+1)·d`; `F_ref`
    /// as in `f_ref`).
    slot_forces: Vec<f64>,
    au: Mat<f64>,
    examples: Option<ElementExamples>,
}

impl FullOrderSolver {
    /// Precomputes operators and factorizations and puts the body at rest in pose `p0`.
    ///
    /// * `mesh`: rest mesh (`n` vertices, dimension `d`).
    /// * `rig`: LBS rig over the same `n` rest positions.
    /// * `momentum_weights`: the diagonal `d` of `D` (length `n`, `≥ 0`).
    /// * `params`: time stepping, damping and material fields; `local_global`: the iterations
    ///   per solve.
    /// * `p0`: rig parameters of the first frame (see [`LbsRig::params_from_transforms`]).
    pub fn new(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        local_global: LocalGlobalParams,
        p0: &[f64],
    ) -> Result<Self> {
        validate_solver_inputs(mesh, &rig, momentum_weights, material, params)?;
        local_global.validate()?;
        let (dim, n) = (mesh.dim(), mesh.n_vertices());
        let lame = lame_parameters(material.youngs_modulus, material.poisson_ratio)?;
        // Elements in a spatial order for memory locality; outputs are per vertex, so the
        // element order is internal.
        let mesh = &mesh.with_element_order(&spatial_element_order(mesh));
        let vols = params.effective_volumes(mesh)?;
        let mass = lumped_mass(mesh, &vols, material.density);
        let mut element_weights: Vec<f64> = match params.element_stiffness(mesh)? {
            None => vols.iter().map(|v| lame.mu * v).collect(),
            Some(s) => vols.iter().zip(&s).map(|(v, s)| lame.mu * v * s).collect(),
        };
        let jac = DeformationJacobian::new(mesh);
        let rc = RigConstraint::new(&rig, &mass, momentum_weights)?;

        // The lowest mode (when the plan or the damping needs it), of the linearised ARAP
        // stiffness under the constraint (see `lowest_angular_frequency_full`). `frequency`
        // rescales μ so that ω₁ = 2πf.
        let modes = if FramePlan::needs_frequency(params) {
            let mut modes = FullModes::new(mesh, &jac, &element_weights, &mass, &rc, DAMPED_MODES)?;
            if let Some(f) = params.frequency {
                let scale = (std::f64::consts::TAU * f / modes.omega1()).powi(2);
                for w in &mut element_weights {
                    *w *= scale;
                }
                modes.scale_stiffness(scale);
            }
            Some(modes)
        } else {
            None
        };
        let omega1 = modes.as_ref().map(FullModes::omega1);
        let plan = FramePlan::new(params, omega1);
        let tau = plan.solve_step();
        // Damping: every computed mode at the asked ratio (Rayleigh part in the step matrix,
        // modal part on the velocity after each step).
        let (modal, damping) = match modes {
            Some(FullModes { modes, shapes }) => {
                let weighted = shapes.iter().enumerate().map(|(q, phi)| mass[q % n] * phi).collect();
                let (modal, damping) = ModalDamping::new(dim * n, shapes, weighted, modes, params.damping);
                (Some(modal), damping)
            }
            None => (None, Damping::default()),
        };

        let (solve, blend, l_hat) = global_system(&jac, &element_weights, &mass, &rc, dim, tau, damping)?;
        let constraint = rc;
        let c = constraint.scalar.nrows();

        let m = mesh.n_elements();
        let gravity = if params.gravity.is_empty() {
            vec![0.0; dim]
        } else {
            params.gravity.clone()
        };
        let mut solver = Self {
            dim,
            n,
            jac,
            element_weights,
            mass,
            rig,
            constraint,
            solve,
            blend,
            params: params.clone(),
            local_global,
            gravity,
            tau,
            damping,
            predict: plan.integrator != crate::dynamics::Integrator::BackwardEuler,
            l_hat,
            omega1,
            modal,
            jp_start: vec![0.0; n * dim],
            frames: FrameStepper::new(plan),
            p: p0.to_vec(),
            x: vec![0.0; n * dim],
            v: vec![0.0; n * dim],
            u: vec![0.0; n * dim],
            warm: vec![[1.0, 0.0, 0.0, 0.0]; m],
            jp: vec![0.0; n * dim],
            jp_next: vec![0.0; n * dim],
            warm_start: vec![[1.0, 0.0, 0.0, 0.0]; m],
            inertia: vec![0.0; n * dim],
            rhs: vec![0.0; n * dim],
            u_prev: vec![0.0; n * dim],
            u_start: vec![0.0; n * dim],
            f_rig: vec![0.0; m * dim * dim],
            f_ref: vec![0.0; m * dim * dim],
            warm_rig: vec![[1.0, 0.0, 0.0, 0.0]; m],
            mid: vec![0.0; 2 * n * dim],
            saved: vec![0.0; 4 * n * dim + p0.len()],
            saved_warm: vec![[1.0, 0.0, 0.0, 0.0]; 3 * m],
            slot_forces: vec![0.0; m * (dim + 1) * dim],
            au: Mat::zeros(c, dim),
            examples: None,
        };
        solver.reset(p0)?;
        Ok(solver)
    }

    /// Changes the damping ratio `ζ` (≥ 0, dimensionless) of the lowest vibration modes from
    /// the next step on, keeping the state: recalibrates the modal rates and refactors the
    /// global step matrix `(1 + β/τ) L̂ + M̂/τ²` with the new Rayleigh part `β` (one sparse
    /// factorization per change; nothing when `β` is unchanged). Needs the modes, which are
    /// computed at construction unless the body was built with damping 0, fixed substeps and no
    /// frequency; such a body can only be set to `ζ = 0`. On error the solver is unchanged.
    pub fn set_damping(&mut self, zeta: f64) -> Result<()> {
        if !(zeta.is_finite() && zeta >= 0.0) {
            return Err(OvertoneError::setting("damping", zeta, "must be a finite number >= 0"));
        }
        let damping = match &self.modal {
            Some(modal) => modal.rayleigh_for(zeta),
            None if zeta == 0.0 => Damping::default(),
            None => {
                return Err(OvertoneError::setting(
                    "damping",
                    zeta,
                    "this full-order body was bound with damping 0, fixed substeps and no frequency, \
                     so its vibration modes are unknown; bind it with damping > 0 or automatic substeps",
                ))
            }
        };
        if damping != self.damping {
            let (solve, blend, l_hat) = global_system(
                &self.jac,
                &self.element_weights,
                &self.mass,
                &self.constraint,
                self.dim,
                self.tau,
                damping,
            )?;
            self.solve = solve;
            self.blend = blend;
            self.l_hat = l_hat;
            self.damping = damping;
        }
        if let Some(modal) = &mut self.modal {
            modal.set_ratio(zeta);
        }
        Ok(())
    }

    /// The modal damping (`None` when the modes were not computed).
    #[cfg(test)]
    pub(crate) fn modal_damping(&self) -> Option<&ModalDamping> {
        self.modal.as_ref()
    }

    /// Test hook: `u_c = a φ_k` (damped mode `k`) at the current pose, at rest.
    #[cfg(test)]
    pub(crate) fn excite_mode(&mut self, k: usize, a: f64) {
        let phi = self.modal.as_ref().expect("modes").shape(k);
        for q in 0..self.u.len() {
            self.u[q] = a * phi[q];
            self.x[q] = self.jp[q] + self.u[q];
        }
        self.v.fill(0.0);
    }

    /// Test hook: the complementary displacement `u_c` (`n·d`, coordinate-major).
    #[cfg(test)]
    pub(crate) fn complementary(&self) -> &[f64] {
        &self.u
    }

    /// Puts the body at rest in pose `p0`: `u_c = 0`, zero velocity.
    pub fn reset(&mut self, p0: &[f64]) -> Result<()> {
        self.rig.check_params(p0)?;
        self.rig.apply(p0, &mut self.x);
        self.jp.copy_from_slice(&self.x);
        self.p.copy_from_slice(p0);
        self.v.fill(0.0);
        self.u.fill(0.0);
        self.warm.fill([1.0, 0.0, 0.0, 0.0]);
        self.warm_rig.fill([1.0, 0.0, 0.0, 0.0]);
        if let Some(modal) = &mut self.modal {
            modal.reset_state();
        }
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
        // `jp_next` is workspace here: every step overwrites it with `J p_next` first.
        self.rig.apply(p_next, &mut self.jp_next);
        for ((v, &a), &b) in self.v.iter_mut().zip(&self.jp_next).zip(&self.jp) {
            *v = (a - b) / dt;
        }
        Ok(())
    }

    /// Advances one time step to rig pose `p_next`.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf (refused before anything changes);
    /// [`NumericalError::StepFailed`] when the solve produces a non-finite displacement. On every
    /// error the state (positions, velocities, displacement, rig positions, the rotation warm
    /// starts) is bit-identical to before the call.
    pub fn step(&mut self, p_next: &[f64]) -> Result<StepReport> {
        // `advance` then `constraint_residual` (the trait's provided method).
        crate::dynamics::CdSolver::step(self, p_next)
    }

    /// The step without the residual diagnostic; returns the iterations taken.
    pub(crate) fn advance(&mut self, p_next: &[f64]) -> Result<usize> {
        self.rig.check_params(p_next)?;
        let mut frames = std::mem::take(&mut self.frames);
        let result = if self.n >= PARALLEL_MIN_VERTICES || self.warm.len() >= PARALLEL_MIN_ELEMENTS {
            // Run the whole step on a pool thread: the thirty parallel loops of ten iterations
            // then fork and join inside the pool instead of each handing work over from the
            // caller's thread (two context switches each).
            rayon::scope(|_| frames.advance(self, p_next))
        } else {
            frames.advance(self, p_next)
        };
        self.frames = frames;
        result
    }

    fn step_unchecked(&mut self, p_next: &[f64]) -> Result<usize> {
        let (d, n, h) = (self.dim, self.n, self.tau);
        self.rig.apply(p_next, &mut self.jp_next);
        // Constant part of the global right-hand side: M (y − J p)/τ² + M g, plus the Rayleigh
        // damping of the complementary velocity, (α M + β L̂) u_n / τ.
        for i in 0..d {
            for v in 0..n {
                let k = i * n + v;
                let y = self.x[k] + h * self.v[k];
                self.inertia[k] = self.mass[v]
                    * ((y - self.jp_next[k]) / (h * h) + self.gravity[i] + self.damping.mass / h * self.u[k]);
            }
        }
        if let Some(l) = &self.l_hat {
            let beta = self.damping.stiffness / h;
            for i in 0..d {
                add_scaled_product(
                    l,
                    &self.u[i * n..(i + 1) * n],
                    beta,
                    &mut self.inertia[i * n..(i + 1) * n],
                );
            }
        }
        // F_e(J p), fixed during the iterations, and the elastic reference.
        let dd = d * d;
        for e in 0..self.jac.n_elements() {
            self.jac
                .deformation_gradient(e, &self.jp_next, &mut self.f_rig[e * dd..(e + 1) * dd]);
        }
        let m = self.warm.len();
        self.saved_warm[m..2 * m].copy_from_slice(&self.warm_rig);
        if self.params.rest == RestShape::Rig {
            // The rig pose's rotation of each element is its reference (see `RestShape::Rig`):
            // the local step fits R_e to F_e(u) + R_e(Jp) and pulls toward R_e − R_e(Jp), so
            // u_c = 0 is the minimum of every held pose. (With examples the stretch is still
            // read from F_e(Jp + u).)
            let accuracy = LOCAL_STEP_ROTATION_ACCURACY;
            let (f_rig, warm_rig) = (&self.f_rig, &mut self.warm_rig);
            let polar = |e: usize, out: &mut [f64], q: &mut [f64; 4]| {
                let f = &f_rig[e * dd..(e + 1) * dd];
                if d == 2 {
                    closest_rotation_2d(f, out);
                } else {
                    closest_rotation_3d(f, q, out, accuracy);
                }
            };
            if warm_rig.len() >= PARALLEL_MIN_ELEMENTS {
                self.f_ref
                    .par_chunks_mut(dd)
                    .zip(warm_rig.par_iter_mut())
                    .enumerate()
                    .for_each(|(e, (out, q))| polar(e, out, q));
            } else {
                for (e, (out, q)) in self.f_ref.chunks_mut(dd).zip(warm_rig.iter_mut()).enumerate() {
                    polar(e, out, q);
                }
            }
        } else {
            self.f_ref.copy_from_slice(&self.f_rig);
        }

        self.u_start.copy_from_slice(&self.u);
        self.warm_start.copy_from_slice(&self.warm);
        if self.predict {
            // Start the iterations from the inertial prediction y − J p_next = u + τ(v − v_rig)
            // (substeps are short, so the fixed iteration count lands nearer the solution).
            for k in 0..n * d {
                self.u[k] = self.x[k] + h * self.v[k] - self.jp_next[k];
            }
        }
        let mut iterations = 0;
        for _ in 0..self.local_global.iterations {
            iterations += 1;
            self.u_prev.copy_from_slice(&self.u);
            self.local_step();
            // Global: H u = inertia + Gᵀ(μ vol (R − F(J p))), subject to Â u_i = 0.
            self.rhs.copy_from_slice(&self.inertia);
            self.jac.gather_slot_vectors(&self.slot_forces, &mut self.rhs);
            self.solve.solve_field_in_place(&mut self.rhs);
            if let Some(b) = &mut self.blend {
                b.project_in_place(&mut self.rhs);
            }
            std::mem::swap(&mut self.u, &mut self.rhs);
            if let Some(tol) = self.local_global.tolerance {
                let du = self
                    .u
                    .iter()
                    .zip(&self.u_prev)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                let un = self.u.iter().map(|a| a.abs()).fold(0.0, f64::max);
                if du <= tol * un.max(1e-12) {
                    break;
                }
            }
        }
        // One refinement of the projection: the constraint then holds to round-off relative
        // to ‖u_c‖ itself, also when u_c is tiny (a rig motion the physics fully absorbs).
        self.solve.project_field_in_place(&mut self.u);
        if let Some(b) = &mut self.blend {
            b.project_in_place(&mut self.u);
        }
        if let Some(k) = self.u.iter().position(|x| !x.is_finite()) {
            self.u.copy_from_slice(&self.u_start);
            self.warm.copy_from_slice(&self.warm_start);
            let m = self.warm.len();
            self.warm_rig.copy_from_slice(&self.saved_warm[m..2 * m]);
            return Err(NumericalError::StepFailed {
                step: "ARAP step of complementary dynamics".into(),
                reason: format!(
                    "the solve produced a non-finite displacement at vertex {} (the rig pose jumps too far)",
                    k % n
                ),
            }
            .into());
        }
        std::mem::swap(&mut self.jp, &mut self.jp_next);
        for k in 0..n * d {
            let x_new = self.jp[k] + self.u[k];
            self.v[k] = (x_new - self.x[k]) / h;
            self.x[k] = x_new;
        }
        Ok(iterations)
    }

    /// Lowest angular frequency `ω₁` (rad/s) of the constrained body, when the time plan or
    /// the damping needed it.
    pub fn lowest_angular_frequency(&self) -> Option<f64> {
        self.omega1
    }

    /// Substeps per frame.
    pub fn substeps(&self) -> usize {
        self.frames.plan.map_or(1, |p| p.substeps)
    }

    /// Gives the solver example poses (each `n × d` row-major, rest vertex order): the local
    /// step's per-element target becomes `R_e S*_e` instead of `R_e`, with `S*_e` the projection
    /// of the element's current stretch `S_e = R_eᵀ F_e` on the span of the examples' element
    /// stretches (weights summing to 1, least squares, eq. 7 of Koyama et al. 2013), blended
    /// toward the rest by `beta`. `scope`: one weight vector for the body (`Global`) or one per
    /// element (`PerUnit`). The global step and the constraint `Jᵀ M D u_c = 0` are unchanged,
    /// so the rig contract holds as before.
    ///
    /// Errors name the example: wrong vertex count, NaN/Inf, an element collapsed or inverted by
    /// the example, an example equal to the rest shape, linearly dependent examples (global).
    pub fn set_examples(&mut self, examples: &[Vec<f64>], scope: ManifoldScope, beta: f64) -> Result<()> {
        let (d, n, m) = (self.dim, self.n, self.jac.n_elements());
        let k = stretch_len(d);
        if examples.is_empty() {
            return Err(OvertoneError::setting("examples", 0, "give at least one example pose"));
        }
        let mut stretches = Vec::with_capacity(examples.len());
        let mut field = vec![0.0; n * d];
        for (j, ex) in examples.iter().enumerate() {
            if ex.len() != n * d {
                return Err(InputError::Example {
                    example: j,
                    reason: format!(
                        "expected {n} vertices x {d} (the mesh's), got {} numbers ({} vertices)",
                        ex.len(),
                        ex.len() / d
                    ),
                }
                .into());
            }
            if let Some(i) = ex.iter().position(|x| !x.is_finite()) {
                return Err(InputError::Example {
                    example: j,
                    reason: format!("non-finite coordinate at row {}, column {}", i / d, i % d),
                }
                .into());
            }
            for v in 0..n {
                for i in 0..d {
                    field[i * n + v] = ex[v * d + i];
                }
            }
            let mut st = vec![0.0; m * k];
            let mut f = [0.0; 9];
            for e in 0..m {
                self.jac.deformation_gradient(e, &field, &mut f[..d * d]);
                let (det, frob) = if d == 2 {
                    (
                        f[0] * f[3] - f[1] * f[2],
                        f[..4].iter().map(|x| x * x).sum::<f64>().sqrt(),
                    )
                } else {
                    let a: [f64; 9] = f;
                    (
                        crate::shape_matching::stretch::det3(&a),
                        a.iter().map(|x| x * x).sum::<f64>().sqrt(),
                    )
                };
                let rel = det / (frob / (d as f64).sqrt()).powi(d as i32);
                if !(rel >= crate::shape_matching::EXAMPLE_VOLUME_LIMIT) {
                    return Err(InputError::Example {
                        example: j,
                        reason: format!(
                            "it {} an element (vertices {:?}, relative volume {rel:.2e})",
                            if rel < 0.0 { "inverts" } else { "collapses" },
                            self.jac.element(e)
                        ),
                    }
                    .into());
                }
                if d == 2 {
                    let mut r = [0.0; 4];
                    st[e * k..(e + 1) * k].copy_from_slice(&polar_stretch_2d(&[f[0], f[1], f[2], f[3]], &mut r));
                } else {
                    let (mut q, mut r) = ([1.0, 0.0, 0.0, 0.0], [0.0; 9]);
                    st[e * k..(e + 1) * k].copy_from_slice(&polar_stretch_3d(&f, &mut q, &mut r, 1e-14));
                }
            }
            stretches.push(st);
        }
        let rest: Vec<f64> = (0..m)
            .flat_map(|_| crate::shape_matching::stretch::identity_stretch(d))
            .collect();
        let manifold = ExampleManifold::new(rest, &stretches, k, scope, beta)?;
        self.examples = Some(ElementExamples {
            weights: vec![0.0; manifold.n_groups() * manifold.n_examples()],
            manifold,
            stretch: vec![0.0; m * k],
            rot: vec![0.0; m * d * d],
        });
        Ok(())
    }

    /// The example manifold and the raw weights of the last local step, if examples are set.
    pub fn example_weights(&self) -> Option<(&ExampleManifold, &[f64])> {
        self.examples.as_ref().map(|e| (&e.manifold, e.weights.as_slice()))
    }

    /// Replaces the complementary displacement by `u` (coordinate-major `n·d`) projected onto
    /// `Jᵀ M D u = 0`, keeping the rig pose, with zero velocity: a start state for relaxation
    /// experiments.
    pub fn set_displacement(&mut self, u: &[f64]) -> Result<()> {
        if u.len() != self.n * self.dim {
            return Err(OvertoneError::size("displacement", self.n * self.dim, u.len()));
        }
        check_finite("displacement", u, 1)?;
        let mut proj = u.to_vec();
        self.solve.project_field_in_place(&mut proj);
        if let Some(b) = &mut self.blend {
            b.project_in_place(&mut proj);
        }
        for k in 0..proj.len() {
            self.x[k] += proj[k] - self.u[k];
        }
        self.u = proj;
        self.v.fill(0.0);
        Ok(())
    }

    /// Local step: `R_e` closest to `F_e(J p + u)`, and the element's share of the global
    /// right-hand side, `μ vol_e (R_e − F_e(J p)) g_a` for each local vertex `a` (with
    /// examples: `μ vol_e (R_e S*_e − F_e(J p)) g_a`).
    fn local_step(&mut self) {
        if self.examples.is_some() {
            if self.dim == 2 {
                self.local_step_examples_d::<2>()
            } else {
                self.local_step_examples_d::<3>()
            }
        } else if self.dim == 2 {
            self.local_step_d::<2>()
        } else {
            self.local_step_d::<3>()
        }
    }

    /// The local step without examples: per element `R_e` closest to `F_e(u) + F_ref,e` and
    /// the force `μ vol_e (R_e − F_ref,e) g_a`, with `F_ref,e = F_e(J p)` (bind rest: the
    /// rotation closest to `F_e(J p + u)`) or `R_e(J p)` (rig rest, see [`RestShape::Rig`]).
    fn local_step_d<const D: usize>(&mut self) {
        let (jac, u, f_ref, w) = (&self.jac, &self.u, &self.f_ref, &self.element_weights);
        let work = |e: usize, out: &mut [f64], q: &mut [f64; 4]| {
            let fu = jac.deformation_gradient_fixed::<D>(e, u);
            let fref = &f_ref[e * D * D..(e + 1) * D * D];
            let we = w[e];
            let mut f = [0.0; 9];
            for i in 0..D {
                for j in 0..D {
                    f[i * D + j] = fu[i][j] + fref[i * D + j];
                }
            }
            let mut r = [0.0; 9];
            if D == 2 {
                closest_rotation_2d(&f[..4], &mut r[..4]);
            } else {
                closest_rotation_3d(&f, q, &mut r, LOCAL_STEP_ROTATION_ACCURACY);
            }
            let mut p = [[0.0; D]; D];
            for i in 0..D {
                for j in 0..D {
                    p[i][j] = we * (r[i * D + j] - fref[i * D + j]);
                }
            }
            jac.element_slot_vectors::<D>(e, &p, out);
        };
        let per = (D + 1) * D;
        if self.warm.len() >= PARALLEL_MIN_ELEMENTS {
            self.slot_forces
                .par_chunks_mut(per)
                .zip(self.warm.par_iter_mut())
                .enumerate()
                .for_each(|(e, (s, q))| work(e, s, q));
        } else {
            for (e, q) in self.warm.iter_mut().enumerate() {
                work(e, &mut self.slot_forces[e * per..(e + 1) * per], q);
            }
        }
    }

    /// The local step with examples: first every element's rotation and stretch, then the
    /// manifold weights (in element order: deterministic), then the targets `R_e S*_e`.
    fn local_step_examples_d<const D: usize>(&mut self) {
        let k = stretch_len(D);
        let ex = self.examples.as_mut().expect("called with examples");
        let (jac, u, f_rig) = (&self.jac, &self.u, &self.f_rig);
        let parallel = self.warm.len() >= PARALLEL_MIN_ELEMENTS;
        let polar = |e: usize, st: &mut [f64], rot: &mut [f64], q: &mut [f64; 4]| {
            let fu = jac.deformation_gradient_fixed::<D>(e, u);
            let fr = &f_rig[e * D * D..(e + 1) * D * D];
            let mut f = [0.0; 9];
            for i in 0..D {
                for j in 0..D {
                    f[i * D + j] = fu[i][j] + fr[i * D + j];
                }
            }
            if D == 2 {
                let mut r = [0.0; 4];
                st.copy_from_slice(&polar_stretch_2d(&[f[0], f[1], f[2], f[3]], &mut r));
                rot.copy_from_slice(&r);
            } else {
                let mut r = [0.0; 9];
                st.copy_from_slice(&polar_stretch_3d(&f, q, &mut r, LOCAL_STEP_ROTATION_ACCURACY));
                rot.copy_from_slice(&r);
            }
        };
        if parallel {
            ex.stretch
                .par_chunks_mut(k)
                .zip(ex.rot.par_chunks_mut(D * D))
                .zip(self.warm.par_iter_mut())
                .enumerate()
                .for_each(|(e, ((st, rot), q))| polar(e, st, rot, q));
        } else {
            for (e, ((st, rot), q)) in ex
                .stretch
                .chunks_mut(k)
                .zip(ex.rot.chunks_mut(D * D))
                .zip(self.warm.iter_mut())
                .enumerate()
            {
                polar(e, st, rot, q);
            }
        }
        ex.manifold.weights(&ex.stretch, &mut ex.weights);
        let (man, weights, rots, w) = (&ex.manifold, &ex.weights, &ex.rot, &self.element_weights);
        let f_rig = &self.f_ref;
        let ne = man.n_examples();
        let target = |e: usize, out: &mut [f64]| {
            let g = man.group_of(e);
            let mut s = [0.0; 6];
            man.target(e, &weights[g * ne..(g + 1) * ne], &mut s[..k]);
            let sm: [f64; 9] = if D == 2 {
                let m2 = stretch_matrix_2d(&s);
                [m2[0], m2[1], m2[2], m2[3], 0.0, 0.0, 0.0, 0.0, 0.0]
            } else {
                stretch_matrix_3d(&s)
            };
            let r = &rots[e * D * D..(e + 1) * D * D];
            let fr = &f_rig[e * D * D..(e + 1) * D * D];
            let mut p = [[0.0; D]; D];
            for i in 0..D {
                for j in 0..D {
                    let rs: f64 = (0..D).map(|l| r[i * D + l] * sm[l * D + j]).sum();
                    p[i][j] = w[e] * (rs - fr[i * D + j]);
                }
            }
            jac.element_slot_vectors::<D>(e, &p, out);
        };
        let per = (D + 1) * D;
        if parallel {
            self.slot_forces
                .par_chunks_mut(per)
                .enumerate()
                .for_each(|(e, out)| target(e, out));
        } else {
            for (e, out) in self.slot_forces.chunks_mut(per).enumerate() {
                target(e, out);
            }
        }
    }

    /// `(‖Jᵀ M D u_c‖₂, relative)` for the current state (bone and blendshape rows together).
    pub(crate) fn constraint_residual(&mut self) -> (f64, f64) {
        self.constraint.residual(&self.u, &mut self.au)
    }

    /// `(‖G u_c‖₂, ‖G u_c‖₂/(‖G‖₂‖u_c‖₂))` against the blendshape columns alone (zeros without
    /// blendshapes).
    pub fn blendshape_residual(&self) -> (f64, f64) {
        self.constraint.blendshape_residual(&self.u)
    }

    /// `(‖(I ⊗ Â) u_c‖₂, relative to ‖Â‖₂‖u_c‖₂)` against the bone columns alone.
    pub fn bone_residual(&mut self) -> (f64, f64) {
        self.constraint.bone_residual(&self.u, &mut self.au)
    }

    /// Independent blendshape constraint directions kept, and targets given (`(0, 0)` without
    /// blendshapes).
    pub fn blendshape_rank(&self) -> (usize, usize) {
        self.blend.as_ref().map(|b| (b.rank(), b.n_targets())).unwrap_or((0, 0))
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
    /// Skinned positions `J p` of the last step (of the rest pose after `reset`),
    /// coordinate-major `n·d`.
    pub fn rig_positions(&self) -> &[f64] {
        &self.jp
    }
    /// Lumped vertex masses.
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }
    /// Rig-orthogonality constraints per coordinate: independent ones kept (after dropping
    /// redundant ones), and given.
    pub fn constraint_rank(&self) -> ConstraintRank {
        ConstraintRank {
            kept: self.solve.rank(),
            given: self.solve.n_constraints(),
        }
    }
    /// The rig.
    pub fn rig(&self) -> &LbsRig {
        &self.rig
    }
}

/// `y += s · A x` for a sparse column-major `A` (`n × n`). Does not allocate.
/// The global step's constrained solve for frames of `τ` seconds with `damping`:
/// `Ĥ = (1 + β/τ) L̂ + (1/τ² + α/τ) M̂` factored under the bone rows (and the blendshape
/// projection), with `L̂` kept when the damping has a stiffness term.
#[allow(clippy::type_complexity)]
fn global_system(
    jac: &DeformationJacobian,
    element_weights: &[f64],
    mass: &[f64],
    rc: &RigConstraint,
    dim: usize,
    tau: f64,
    damping: Damping,
) -> Result<(
    ConstrainedSolve,
    Option<BlendshapeProjection>,
    Option<SparseColMat<usize, f64>>,
)> {
    let n = mass.len();
    let ks = 1.0 + damping.stiffness / tau;
    let mut trip = scalar_stiffness_triplets(jac, element_weights);
    if ks != 1.0 {
        for t in &mut trip {
            *t = Triplet::new(t.row, t.col, t.val * ks);
        }
    }
    let h2 = tau * tau;
    let dm = damping.mass / tau;
    trip.extend((0..n).map(|v| Triplet::new(v, v, mass[v] / h2 + mass[v] * dm)));
    let h_mat = SparseColMat::try_new_from_triplets(n, n, &trip).map_err(|e| NumericalError::Factorization {
        matrix: "global step matrix".into(),
        reason: format!("{e:?}"),
    })?;
    let l_hat = if damping.stiffness != 0.0 {
        Some(scalar_stiffness(jac, element_weights)?)
    } else {
        None
    };
    let mut solve = ConstrainedSolve::new(&h_mat, &rc.rows(), dim, "global step matrix L + M/h^2")?;
    let blend = if rc.n_targets() > 0 {
        Some(BlendshapeProjection::new(
            &mut solve,
            &rc.blend,
            "global step matrix L + M/h^2",
        )?)
    } else {
        None
    };
    Ok((solve, blend, l_hat))
}

fn add_scaled_product(a: &SparseColMat<usize, f64>, x: &[f64], s: f64, y: &mut [f64]) {
    let (ptr, rows, vals) = (a.symbolic().col_ptr(), a.symbolic().row_idx(), a.val());
    for (j, &xj) in x.iter().enumerate() {
        let sx = s * xj;
        if sx == 0.0 {
            continue;
        }
        for k in ptr[j]..ptr[j + 1] {
            y[rows[k]] += vals[k] * sx;
        }
    }
}

impl SubstepSolver for FullOrderSolver {
    fn substep_rig(&self) -> &LbsRig {
        &self.rig
    }
    fn current_params(&self) -> &[f64] {
        &self.p
    }
    fn substep(&mut self, p: &[f64]) -> Result<usize> {
        let it = self.step_unchecked(p)?;
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
        if let Some(b) = &mut self.blend {
            b.project_in_place(&mut self.u);
        }
        for k in 0..nd {
            self.x[k] = self.jp[k] + self.u[k];
        }
        self.p.copy_from_slice(p_end);
    }
    fn save_frame(&mut self) {
        save_fields(&mut self.saved, &[&self.x, &self.v, &self.u, &self.jp, &self.p]);
        let m = self.warm.len();
        self.saved_warm[..m].copy_from_slice(&self.warm);
        self.saved_warm[2 * m..].copy_from_slice(&self.warm_rig);
        if let Some(modal) = &mut self.modal {
            modal.save_state();
        }
    }
    fn restore_frame(&mut self) {
        restore_fields(
            &self.saved,
            &mut [&mut self.x, &mut self.v, &mut self.u, &mut self.jp, &mut self.p],
        );
        let m = self.warm.len();
        self.warm.copy_from_slice(&self.saved_warm[..m]);
        self.warm_rig.copy_from_slice(&self.saved_warm[2 * m..]);
        if let Some(modal) = &mut self.modal {
            modal.restore_state();
        }
    }
    fn mark_step_start(&mut self) {
        if self.modal.is_some() {
            self.jp_start.copy_from_slice(&self.jp);
        }
    }
    fn damp_modes(&mut self, length: f64) {
        if let Some(modal) = &mut self.modal {
            modal.apply(&mut self.v, &self.u, Some((&self.jp, &self.jp_start)), length);
        }
    }
}
