//! Fast complementary dynamics (Benchekroun et al. 2023): ARAP local/global in a rig-orthogonal
//! skinning-eigenmode subspace with clustered rotations. The solver holds its [`ReducedModel`]
//! (scaled by the shear modulus), the factored system ([`FastSystem`]), the state
//! ([`FastState`]) and the per-step buffers ([`FastWorkspace`]).

use std::time::Instant;

use faer::Mat;

use crate::dynamics::fast::kernels::{
    chunk_rows_times_coordinates3, rotations_into, rows_times_coordinates, subtract_transposed_product, ClusterSpace,
    DenseCholesky, NonzeroChunks,
};
use crate::dynamics::fast::model::{FastOperators, FastParams, FastPrecompute, ReducedModel};
use crate::dynamics::modal_damping::ModalDamping;
use crate::dynamics::time_integration::{
    extrapolate_from, restore_fields, save_fields, Damping, FramePlan, FrameStepper, SubstepSolver,
};
use crate::dynamics::{validate_solver_inputs, Material, RestShape, SolverParams, StepReport};
use crate::error::{NumericalError, OvertoneError, Result};
use crate::math::kernels::{add_transposed_product3, dot, dot3};
use crate::mesh::SimplexMesh;
use crate::rig::LbsRig;
use crate::solve::anderson::Anderson;

/// Early exit of the fast solver's local/global iterations with the substepped integrators:
/// the largest change of a cluster's deformation gradient between two iterations, relative to
/// the largest complementary part of one (`K̂ z`, what the secondary motion does to the
/// clusters). Relative, so that it means the same for a small motion as for a large one: an
/// absolute bound on the rotations is met at once by a motion small enough, converged or not.
pub(crate) const ITERATION_TOLERANCE: f64 = 1e-4;

/// Differences remembered by the Anderson acceleration of the iterations with a tolerance.
pub(crate) const ANDERSON_DEPTH: usize = 5;

/// `max_i |a_i − b_i|`.
fn max_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// Fast complementary dynamics: `u_c = B z` with `B` the M-orthonormalised rig-orthogonal
/// skinning basis ([`SkinningBasis`](crate::dynamics::fast::SkinningBasis)), so
/// `Jᵀ M D u_c = 0` holds structurally and the global step is unconstrained.
///
/// Each step minimises, over `z` (coordinate-major, `d × r̂`), the backward-Euler objective of
/// the full solver restricted to `x = J p_{t+1} + B z`:
/// `‖x − x̃‖²_M/(2h²) + Σ_e (μ vol_e/2) ‖F_e(x) − R_{c(e)}‖² − xᵀ M g`, `x̃ = x_t + h v_t`,
/// with one rotation `R_c` per cluster. With `BᵀMB = I`, setting the gradient to zero gives,
/// per coordinate `i`,
///
/// `(B̂ᵀL̂B̂ + I/h²) z_i = y_i/h² − B̂ᵀM̂Ĵ q_i/h² − B̂ᵀL̂Ĵ p_i + Σ_c K̂_cᵀ R_c[i,:] + B̂ᵀM̂1 g_i`
///
/// where `y = z_t + h ż_t`, `q = p_{t+1} − p_t − h ṗ_t` (finite-difference velocities), and
/// `K̂_c = Σ_{e∈c} μ vol_e Ĝ_e B̂` (`d × r̂`). The local step takes `R_c` closest to
/// `F_c = Σ_{e∈c} μ vol_e F_e = K̂_c z_i + K̂ᴶ_c p_i` (rows `i`), the mass-weighted cluster
/// average up to a positive factor. With the rig pose as the rest ([`RestShape::Rig`]) the
/// clusters' reference is the rig pose's cluster rotation `R_c(J p)`: the elastic energy is
/// `Σ_e (μ vol_e/2) ‖Ĝ_e B̂ z + R_c(J p) − R_c‖²` (`c = c(e)`), zero at `z = 0`; the
/// right-hand side's `−B̂ᵀL̂Ĵ p_i` becomes `−Σ_c K̂_cᵀ R_c(J p)[i,:]` and the local step fits
/// `K̂_c z_i + W_c R_c(J p)[i,:]` (`W_c = Σ_{e∈c} μ vol_e`). With the midpoint rule the
/// inertia terms of `z` (`I/h²` and `y_i/h²`) are scaled by `m = ((ω₁Δ/2)/tan(ω₁Δ/2))²`, so the lowest mode rings at its
/// exact period; the rig's terms and gravity are not. The `r̂ × r̂` matrix is factored once
/// (dense Cholesky) and the step does not allocate. Per-step cost depends on `k`, the cluster
/// count and the iterations taken (with the midpoint rule they are Anderson-accelerated, on
/// the cluster gradients `F = G(F)` or on `z = G(z)`, and stop once converged, see
/// [`ITERATION_TOLERANCE`] and [`Anderson`]).
///
/// **Blendshapes.** The rig pose is the morph-then-skin pose, linear per coordinate in the
/// extended parameters `p̃_i = [p_i, β_1 p_i, …]` with `J̃ = [Ĵ, Ĵ_1, …]`
/// ([`LbsRig::extended_params_into`]), so every rig term above uses `J̃`, `p̃` in place of `Ĵ`,
/// `p`. The constraint gains the coupled rows `Δ_tᵀ M D`. A weight field `w` spans the
/// displacements `u_i = Σ_j a_ij w X̂_j` for every `d × (d+1)` matrix `a`; `Δ_tᵀ M D u =
/// Σ_ij a_ij (m ⊙ d ⊙ Δ_t,i ⊙ X̂_j)ᵀ w` vanishes for every `a` iff `(m ⊙ d ⊙ Δ_t,i ⊙ X̂_j)ᵀ w = 0`
/// for all `i, j`: the scalar rows `G_{t,i} = m ⊙ d ⊙ Δ_t,i` join `Â`
/// ([`RigConstraint::per_coordinate_rows`](crate::rig::RigConstraint::per_coordinate_rows))
/// before the weight-space rows are formed, and `Jᵀ M D B = 0` holds structurally for the
/// blendshape columns too.
pub struct FastSolver {
    rig: LbsRig,
    /// The reduced model, scaled by the shear modulus `μ` in use.
    model: ReducedModel,
    system: FastSystem,
    state: FastState,
    work: FastWorkspace,
    frames: FrameStepper,
    info: FastPrecompute,
    /// Field products of the points prepared by [`FastSolver::prepare_embedded`] (`m × k(d+1)`).
    embedded: Vec<f64>,
}

/// What the time plan and the damping make of the model: the step, the forces, and the
/// factored reduced system (what [`FastSolver::set_damping`] changes).
struct FastSystem {
    /// Length `τ` of one backward-Euler solve (see [`FramePlan::solve_step`]).
    h: f64,
    iterations: usize,
    gravity: Vec<f64>,
    rest: RestShape,
    damping: Damping,
    /// Start each solve from the inertial prediction (substepped integrators).
    predict: bool,
    /// Stop the local/global iterations once the cluster gradients move by less than this
    /// share of their complementary part between two iterations ([`ITERATION_TOLERANCE`]
    /// when `predict`; `None`: always `iterations`, the seeds' fixed count).
    tolerance: Option<f64>,
    /// The modal part of the damping over the model's lowest modes (see `modal_damping`).
    modal: ModalDamping,
    /// Lowest angular frequency `ω₁` of the subspace (rad/s).
    omega1: f64,
    /// Scale `m ≤ 1` of the inertia term of each solve (see
    /// [`period_corrected_inertia`](crate::dynamics::time_integration::period_corrected_inertia)).
    inertia: f64,
    /// Cholesky factor of `(1 + β/τ) μB̂ᵀL̂B̂ + (m/τ² + α/τ) I` (`r̂ × r̂`, `m` = `inertia`).
    chol: DenseCholesky,
    /// Iterating in cluster space, when cheaper (see [`ClusterSpace`]).
    cluster_space: Option<ClusterSpace>,
    /// The non-zero chunks of the rig gradients `K̂ᴶ` in 3D, when sparse enough to pay.
    k_rig_chunks: Option<NonzeroChunks>,
    /// `W_c = Σ_{e∈c} μ vol_e s_e` per cluster ([`ReducedModel::cluster_weights`]): with rest =
    /// rig the local step fits `R_c` to `K̂_c z + W_c R_c(J p)`.
    cluster_weight: Vec<f64>,
}

/// The body's state.
struct FastState {
    z: Vec<f64>,
    zdot: Vec<f64>,
    /// Extended parameters `p̃` (`d·c̃`) and their finite-difference velocity.
    p: Vec<f64>,
    pdot: Vec<f64>,
    /// The rig parameters `p` as given (`n_params`).
    p_full: Vec<f64>,
    /// Warm starts of the cluster rotations.
    warm: Vec<[f64; 4]>,
    /// Warm starts of the rig pose's cluster rotations (rest = rig).
    warm_rig: Vec<[f64; 4]>,
}

/// Buffers of the step, allocated once.
struct FastWorkspace {
    /// `p̃` of the next pose.
    p_ext: Vec<f64>,
    /// `warm` and `warm_rig` at the start of the step in progress (restored when the step fails).
    warm_start: Vec<[f64; 4]>,
    warm_rig_start: Vec<[f64; 4]>,
    /// The rig pose's cluster rotations `R_c(J p)` (rest = rig), layout of `rvec`.
    r_rig: Vec<f64>,
    /// `rvec − r_rig`, for the global solves iterating on `z` (rest = rig).
    r_delta: Vec<f64>,
    /// Midpoint start `(z_n, ż_n, ṗ_n)` and the frame's saved state.
    mid: Vec<f64>,
    saved: Vec<f64>,
    saved_warm: Vec<[f64; 4]>,
    base: Vec<f64>,
    /// The rig's part of the clusters' gradients the local step fits (`rvec` layout): `F_c(J p)`,
    /// or with rest = rig `W_c R_c(J p)`.
    f_rig: Vec<f64>,
    f0: Vec<f64>,
    fvec: Vec<f64>,
    rvec: Vec<f64>,
    /// The previous iteration's cluster gradients (`fvec` layout), for the early exit.
    fvec_prev: Vec<f64>,
    /// The iterate `z_k` whose image the global solve computes (`z` layout).
    z_iter: Vec<f64>,
    /// The rig's velocity residual `q = p_{n+1} − p_n − τṗ_n` (`d·c̃`), and the right-hand
    /// side's products `B̂ᵀM̂Ĵ q`, `B̂ᵀL̂Ĵ p_{n+1}` and `B̂ᵀL̂B̂ z_n` (`z` layout).
    rig_q: Vec<f64>,
    rig_inertia: Vec<f64>,
    rig_elastic: Vec<f64>,
    lz: Vec<f64>,
    /// Anderson acceleration of the iterations with a tolerance: of the cluster gradients
    /// (cluster space) or of the reduced coordinates.
    accel_f: Anderson,
    accel_z: Anderson,
    coeff: Vec<f64>,
    z_prev: Vec<f64>,
    /// The skinned positions `J p` (coordinate-major `n·d`) of a written frame.
    skinned: Vec<f64>,
}

impl FastSystem {
    /// The system of `model` (scaled by `mu`, lowest angular frequency `omega1`, a rig of
    /// `n_bones` bones) for the time plan `plan` and the solver settings `params`.
    fn new(
        model: &ReducedModel,
        params: &SolverParams,
        iterations: usize,
        plan: &FramePlan,
        mu: f64,
        omega1: f64,
        n_bones: usize,
    ) -> Result<Self> {
        let d = model.dim();
        let tau = plan.solve_step();
        let (modal, damping) = Self::modal_damping(model, mu, params.damping);
        let inertia = match plan.integrator {
            crate::dynamics::Integrator::BackwardEuler => 1.0,
            crate::dynamics::Integrator::ImplicitMidpoint => {
                crate::dynamics::time_integration::period_corrected_inertia(omega1, plan.dt / plan.substeps as f64)
            }
        };
        let (chol, cluster_space) = Self::factor(model, damping, tau, inertia)?;
        let gravity = if params.gravity.is_empty() {
            vec![0.0; d]
        } else {
            params.gravity.clone()
        };
        Ok(Self {
            h: tau,
            iterations,
            gravity,
            rest: params.rest,
            damping,
            predict: plan.integrator != crate::dynamics::Integrator::BackwardEuler,
            tolerance: (plan.integrator != crate::dynamics::Integrator::BackwardEuler).then_some(ITERATION_TOLERANCE),
            modal,
            omega1,
            inertia,
            chol,
            cluster_space,
            k_rig_chunks: (d == 3)
                .then(|| {
                    NonzeroChunks::of(
                        &model.k_rig,
                        model.n_clusters * d,
                        model.k_rig.len() / (model.n_clusters * d).max(1),
                    )
                })
                .flatten(),
            cluster_weight: model.cluster_weights(n_bones),
        })
    }

    /// The modal damping of `model`'s vibration modes at shear modulus `mu` (`ω_k = √(μλ_k)`,
    /// energies `μρ_k`) for ratio `zeta`, and its Rayleigh part. The modes' mass products are
    /// `(I_d ⊗ B̂ᵀM̂B̂) φ_k`.
    fn modal_damping(model: &ReducedModel, mu: f64, zeta: f64) -> (ModalDamping, Damping) {
        let (d, rr) = (model.dim(), model.rr);
        let len = d * rr;
        let modes = model
            .mode_lambda
            .iter()
            .zip(&model.mode_rho)
            .map(|(l, rho)| ((mu * l).sqrt(), mu * rho))
            .collect();
        let weighted = model
            .mode_shapes
            .chunks(len)
            .flat_map(|phi| {
                (0..len).map(move |q| {
                    let (i, a) = (q / rr, q % rr);
                    dot(&model.bmb[a * rr..(a + 1) * rr], &phi[i * rr..(i + 1) * rr])
                })
            })
            .collect();
        ModalDamping::new(len, model.mode_shapes.clone(), weighted, modes, zeta)
    }

    /// Factors `(1 + β/τ) μB̂ᵀL̂B̂ + (m/τ² + α/τ) B̂ᵀM̂B̂` for the Rayleigh pair of `damping`
    /// and the inertia scale `m` = `inertia`, and the cluster-space operators when they are
    /// cheaper.
    fn factor(
        model: &ReducedModel,
        damping: Damping,
        tau: f64,
        inertia: f64,
    ) -> Result<(DenseCholesky, Option<ClusterSpace>)> {
        let (d, rr) = (model.dim(), model.rr);
        let (ks, h2, dm) = (1.0 + damping.stiffness / tau, tau * tau / inertia, damping.mass / tau);
        let (btlb, bmb) = (&model.btlb, &model.bmb);
        let sys = Mat::from_fn(rr, rr, |a, b| {
            ks * btlb[a * rr + b] + bmb[a * rr + b] / h2 + dm * bmb[a * rr + b]
        });
        let chol = DenseCholesky::new(&sys)?;
        let cluster_space = ClusterSpace::new_if_cheaper(&model.k_basis, model.n_clusters * d, rr, &chol);
        Ok((chol, cluster_space))
    }
}

impl FastState {
    /// Zero state (`d` coordinates, `r̂ = rr`, `c̃ = c`) with identity warm starts.
    fn at_rest(d: usize, rr: usize, c: usize, n_params: usize, n_clusters: usize) -> Self {
        Self {
            z: vec![0.0; d * rr],
            zdot: vec![0.0; d * rr],
            p: vec![0.0; d * c],
            pdot: vec![0.0; d * c],
            p_full: vec![0.0; n_params],
            warm: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            warm_rig: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
        }
    }
}

impl FastWorkspace {
    /// Buffers for `d` coordinates, `n` vertices, `r̂ = rr`, `c̃ = c`, `n_params` rig parameters,
    /// `n_clusters` clusters and `modes` weight fields.
    fn new(d: usize, n: usize, rr: usize, c: usize, n_params: usize, n_clusters: usize, modes: usize) -> Self {
        Self {
            p_ext: vec![0.0; d * c],
            warm_start: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            warm_rig_start: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            r_rig: vec![0.0; n_clusters * d * d],
            r_delta: vec![0.0; n_clusters * d * d],
            mid: vec![0.0; 3 * d * rr + d * c],
            saved: vec![0.0; 2 * d * rr + 2 * d * c + n_params],
            saved_warm: vec![[1.0, 0.0, 0.0, 0.0]; 2 * n_clusters],
            base: vec![0.0; d * rr],
            f_rig: vec![0.0; n_clusters * d * d],
            f0: vec![0.0; n_clusters * d * d],
            fvec: vec![0.0; n_clusters * d * d],
            rvec: vec![0.0; n_clusters * d * d],
            fvec_prev: vec![0.0; n_clusters * d * d],
            z_iter: vec![0.0; d * rr],
            rig_q: vec![0.0; d * c],
            rig_inertia: vec![0.0; d * rr],
            rig_elastic: vec![0.0; d * rr],
            lz: vec![0.0; d * rr],
            accel_f: Anderson::new(n_clusters * d * d, ANDERSON_DEPTH),
            accel_z: Anderson::new(d * rr, ANDERSON_DEPTH),
            coeff: vec![0.0; d * modes * (d + 1)],
            z_prev: vec![0.0; d * rr],
            skinned: vec![0.0; n * d],
        }
    }
}

impl FastSolver {
    /// Precomputes the subspace, clusters and reduced matrices, and puts the body at rest in
    /// pose `p0`. Same inputs as [`FullOrderSolver::new`](crate::dynamics::FullOrderSolver::new)
    /// plus the subspace size.
    pub fn new(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        fast: FastParams,
        p0: &[f64],
    ) -> Result<Self> {
        Self::with_sidecar(mesh, rig, momentum_weights, material, params, fast, p0, None)
    }

    /// As [`new`](Self::new), loading the eigenmodes and clusters from the sidecar file when it
    /// was built from exactly these inputs, and (re)writing it otherwise.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_sidecar(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        fast: FastParams,
        p0: &[f64],
        sidecar: Option<&std::path::Path>,
    ) -> Result<Self> {
        // Checks.
        validate_solver_inputs(mesh, &rig, momentum_weights, material, params)?;
        fast.check(mesh)?;
        let mut stage_ms = Vec::new();
        let mut clock = Instant::now();
        let mut stage = |name: &str| {
            stage_ms.push((name.to_string(), clock.elapsed().as_secs_f64() * 1e3));
            clock = Instant::now();
        };

        // Operators.
        let ops = FastOperators::new(mesh, material, params, momentum_weights)?;
        stage("operators");

        // The model per unit shear modulus, from the sidecar or built (each stage timed).
        let (mut model, cache_status) =
            ReducedModel::load_or_build(mesh, &rig, &ops, params, fast, sidecar, &mut stage)?;

        // The precompute report.
        let mut info = FastPrecompute::from_model(&model, cache_status, stage_ms);

        // The lowest mode: ω₁² = μ λ₁ (λ₁ of the linearised ARAP stiffness per unit μ, stored
        // in the model); `frequency` rescales μ so that ω₁ = 2πf.
        let lambda_unit = model.arap_lambda;
        let mu = match params.frequency {
            Some(f) => (std::f64::consts::TAU * f).powi(2) / lambda_unit,
            None => ops.lame.mu,
        };
        let omega1 = (mu * lambda_unit).sqrt();
        model.scale_by_shear_modulus(mu);

        // The system.
        let plan = FramePlan::with_omega_step(
            params,
            Some(omega1),
            crate::dynamics::time_integration::FAST_MAX_OMEGA_STEP,
        );
        let system = FastSystem::new(&model, params, fast.iterations, &plan, mu, omega1, rig.n_bones())?;
        info.substeps = plan.substeps;
        info.lowest_frequency_hz = omega1 / std::f64::consts::TAU;

        // State and workspace.
        let (d, rr, c, n_params) = (model.dim(), model.rr, rig.n_extended_scalar_params(), rig.n_params());
        let state = FastState::at_rest(d, rr, c, n_params, model.n_clusters);
        let work = FastWorkspace::new(d, model.n_vertices(), rr, c, n_params, model.n_clusters, model.modes);
        let mut solver = Self {
            rig,
            model,
            system,
            state,
            work,
            frames: FrameStepper::new(plan),
            info,
            embedded: Vec::new(),
        };
        solver.reset(p0)?;
        Ok(solver)
    }

    /// Changes the damping ratio `ζ` (≥ 0, dimensionless) of the lowest vibration modes from the
    /// next step on, keeping the state: recalibrates the modal rates and refactors the
    /// `r̂ × r̂` system `(1 + β/τ) μB̂ᵀL̂B̂ + B̂ᵀM̂B̂/τ²` with the new Rayleigh part `β` (and the
    /// cluster-space operators when they are used); nothing is refactored when `β` is
    /// unchanged. On error the solver is unchanged.
    pub fn set_damping(&mut self, zeta: f64) -> Result<()> {
        if !(zeta.is_finite() && zeta >= 0.0) {
            return Err(OvertoneError::setting("damping", zeta, "must be a finite number >= 0"));
        }
        let damping = self.system.modal.rayleigh_for(zeta);
        if damping != self.system.damping {
            let (chol, cluster_space) = FastSystem::factor(&self.model, damping, self.system.h, self.system.inertia)?;
            self.system.cluster_space = cluster_space;
            self.system.chol = chol;
            self.system.damping = damping;
        }
        self.system.modal.set_ratio(zeta);
        Ok(())
    }

    /// Gives the body its rig's velocity toward pose `p_next`, `dt` seconds of physics time
    /// later: `ṗ = (p_next − p) / dt` (extended rig parameters) with `ż = 0` (no complementary velocity);
    /// `p` and `z` are unchanged. The state of a body that was moving with its rig
    /// (not at rest) when the clip starts or after a cut, so a rig already in motion at its
    /// first frame does not kick the body: at rest, the first step would see the jump from zero
    /// to the rig's velocity as an impulse of acceleration.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf, or `dt` not finite and > 0 (nothing
    /// changes).
    pub(crate) fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        self.rig.check_params(p_next)?;
        crate::dynamics::time_integration::check_frame_length(dt)?;
        self.rig.extended_params_into(p_next, &mut self.state.pdot);
        for (v, &p) in self.state.pdot.iter_mut().zip(&self.state.p) {
            *v = (*v - p) / dt;
        }
        self.state.zdot.fill(0.0);
        Ok(())
    }

    /// The modal damping.
    #[cfg(test)]
    pub(crate) fn modal_damping(&self) -> &ModalDamping {
        &self.system.modal
    }

    /// Test hook: `z = a φ_k` (damped mode `k`, reduced coordinates), at rest.
    #[cfg(test)]
    pub(crate) fn excite_mode(&mut self, k: usize, a: f64) {
        let phi = self.system.modal.shape(k);
        for (z, p) in self.state.z.iter_mut().zip(phi) {
            *z = a * p;
        }
        self.state.zdot.fill(0.0);
    }

    /// Test hook: the reduced coordinates `z` (`d·r̂`, coordinate-major).
    #[cfg(test)]
    pub(crate) fn reduced(&self) -> &[f64] {
        &self.state.z
    }

    /// Puts the body at rest in pose `p0`.
    pub fn reset(&mut self, p0: &[f64]) -> Result<()> {
        self.rig.check_params(p0)?;
        self.rig.extended_params_into(p0, &mut self.state.p);
        self.state.p_full.copy_from_slice(p0);
        self.state.pdot.fill(0.0);
        self.state.z.fill(0.0);
        self.state.zdot.fill(0.0);
        self.state.warm.fill([1.0, 0.0, 0.0, 0.0]);
        self.state.warm_rig.fill([1.0, 0.0, 0.0, 0.0]);
        self.system.modal.reset_state();
        Ok(())
    }

    /// Advances one step to rig pose `p_next`. Does not allocate.
    pub fn step(&mut self, p_next: &[f64]) -> Result<StepReport> {
        // `advance` then `constraint_residual` (the trait's provided method).
        crate::dynamics::CdSolver::step(self, p_next)
    }

    /// The step without the residual diagnostic; returns the iterations taken. Does not
    /// allocate.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf (refused before anything changes);
    /// [`NumericalError::StepFailed`] when the solve produces a non-finite state. On every error
    /// the state (`z`, `ż`, rig parameters and their velocity, rotation warm starts) is
    /// bit-identical to before the call.
    pub(crate) fn advance(&mut self, p_given: &[f64]) -> Result<usize> {
        self.rig.check_params(p_given)?;
        let mut frames = std::mem::take(&mut self.frames);
        let result = frames.advance(self, p_given);
        self.frames = frames;
        result
    }

    /// One backward-Euler solve of length `τ` toward `p_given` (checked by the caller).
    fn solve_substep(&mut self, p_given: &[f64]) -> Result<usize> {
        // The extended parameters p̃ (equal to p without blendshapes); taken out of `self` for
        // the step (no allocation) and put back at the end.
        let mut p_ext = std::mem::take(&mut self.work.p_ext);
        self.rig.extended_params_into(p_given, &mut p_ext);
        let result = self.advance_extended(&p_ext);
        if result.is_ok() {
            self.state.p_full.copy_from_slice(p_given);
        }
        self.work.p_ext = p_ext;
        result
    }

    fn advance_extended(&mut self, p_next: &[f64]) -> Result<usize> {
        let (m, sys, st, w) = (&self.model, &self.system, &mut self.state, &mut self.work);
        let (d, rr, c, h) = (m.dim(), m.rr, self.rig.n_extended_scalar_params(), sys.h);
        let h2 = h * h;
        // Rig part of each cluster's deformation gradient, `f_rig[i][cl·d + j]` = F_c(Jp).
        let nq = m.n_clusters * d;
        match &sys.k_rig_chunks {
            Some(nz) => chunk_rows_times_coordinates3(&m.k_rig, nz, nq, c, p_next, &mut w.f_rig),
            None => rows_times_coordinates(d, &m.k_rig, nq, c, p_next, None, &mut w.f_rig),
        }
        let rest_rig = sys.rest == RestShape::Rig;
        w.warm_rig_start.copy_from_slice(&st.warm_rig);
        if rest_rig {
            // The rig pose's cluster rotations are the clusters' reference (`RestShape::Rig`):
            // the energy Σ_e (μ vol_e/2)‖Ĝ_e B̂ z + R_c(Jp) − R_c‖² has the rig term
            // −Σ_c K̂_cᵀ R_c(Jp) on the right-hand side instead of −B̂ᵀL̂Ĵ p, and the local
            // step fits the rotations to K̂_c z + W_c R_c(Jp): `f_rig` becomes W_c R_c(Jp).
            rotations_into(d, m.n_clusters, &w.f_rig, &mut st.warm_rig, &mut w.r_rig);
            for i in 0..d {
                let (f, r) = (&mut w.f_rig[i * nq..(i + 1) * nq], &w.r_rig[i * nq..(i + 1) * nq]);
                for (q, (x, y)) in f.iter_mut().zip(r).enumerate() {
                    *x = sys.cluster_weight[q / d] * y;
                }
            }
        }
        let (dm, ds) = (sys.damping.mass / h, sys.damping.stiffness / h);
        // The rig's inertia term B̂ᵀM̂Ĵ q (q = p_{n+1} − p_n − τṗ_n), without the rig's rest
        // shape its elasticity B̂ᵀL̂Ĵ p_{n+1}, and with stiffness damping B̂ᵀL̂B̂ z_n: one
        // matrix-vector product per term, the coordinates sharing each row read.
        for (k, q) in w.rig_q.iter_mut().enumerate() {
            *q = p_next[k] - st.p[k] - h * st.pdot[k];
        }
        rows_times_coordinates(d, &m.bmj, rr, c, &w.rig_q, None, &mut w.rig_inertia);
        if !rest_rig {
            rows_times_coordinates(d, &m.blj, rr, c, p_next, None, &mut w.rig_elastic);
        }
        if ds != 0.0 {
            rows_times_coordinates(d, &m.btlb, rr, rr, &st.z, None, &mut w.lz);
        }
        // Constant part of the right-hand side.
        for k in 0..d * rr {
            let i = k / rr;
            let a = k % rr;
            let mut s = sys.inertia * (st.z[k] + h * st.zdot[k]) / h2 + m.bm1[a] * sys.gravity[i];
            if ds != 0.0 || dm != 0.0 {
                // Rayleigh part of the damping of ż: + (α B̂ᵀM̂B̂ + β μB̂ᵀL̂B̂) z_n / τ (B̂ᵀM̂B̂ = I).
                s += dm * st.z[k] + if ds != 0.0 { ds * w.lz[k] } else { 0.0 };
            }
            s -= w.rig_inertia[k] / h2;
            if !rest_rig {
                s -= w.rig_elastic[k];
            }
            w.base[k] = s;
        }
        // With rest = rig the right-hand side holds −Σ_c K̂_cᵀ R_c(Jp). Iterating on `z`, each
        // global solve adds Σ_c K̂_cᵀ R_c, so it adds the difference K̂ᵀ(R − R(Jp)) instead
        // (one transposed product a solve rather than one more a step); in cluster space it
        // goes into the right-hand side.
        let fold_rig = rest_rig && sys.cluster_space.is_none();
        if rest_rig && !fold_rig {
            subtract_transposed_product(d, &m.k_basis, nq, rr, &w.r_rig, &mut w.base);
        }
        w.z_prev.copy_from_slice(&st.z);
        w.warm_start.copy_from_slice(&st.warm);
        if sys.predict {
            // Start the iterations from the inertial prediction z + τż (substeps are short, so
            // it is close to the solution and the fixed iteration count lands nearer to it).
            for k in 0..d * rr {
                st.z[k] += h * st.zdot[k];
            }
        }
        // Cluster gradients of the warm start: F_i = F_rig,i + K̂ z_i.
        rows_times_coordinates(d, &m.k_basis, nq, rr, &st.z, Some(&w.f_rig), &mut w.fvec);
        let mut taken = 0;
        match &sys.cluster_space {
            Some(cs) => {
                // f0_i = K̂ H⁻¹ base_i, then F_i = F_rig,i + f0_i + P R_i between rotations: the
                // fixed point F = G(F) of the cluster gradients, accelerated with a tolerance.
                rows_times_coordinates(d, &cs.kh, nq, rr, &w.base, Some(&w.f_rig), &mut w.f0);
                w.accel_f.reset();
                while taken < sys.iterations {
                    Self::local_step(m, st, w);
                    taken += 1;
                    if taken == sys.iterations {
                        break;
                    }
                    let Some(tol) = sys.tolerance else {
                        rows_times_coordinates(d, &cs.p, nq, nq, &w.rvec, Some(&w.f0), &mut w.fvec);
                        continue;
                    };
                    w.fvec_prev.copy_from_slice(&w.fvec);
                    rows_times_coordinates(d, &cs.p, nq, nq, &w.rvec, Some(&w.f0), &mut w.fvec);
                    let size = max_difference(&w.fvec, &w.f_rig);
                    let moved = w.accel_f.step(&w.fvec_prev, &mut w.fvec);
                    if taken >= 2 && moved <= tol * size {
                        // The rotations of the gradients just computed.
                        Self::local_step(m, st, w);
                        taken += 1;
                        break;
                    }
                }
                Self::global_solve(m, sys, st, w, false);
            }
            None => {
                // The fixed point z = G(z) of the reduced coordinates, accelerated with a
                // tolerance.
                w.accel_z.reset();
                while taken < sys.iterations {
                    Self::local_step(m, st, w);
                    if sys.tolerance.is_some() {
                        w.z_iter.copy_from_slice(&st.z);
                    }
                    Self::global_solve(m, sys, st, w, fold_rig);
                    taken += 1;
                    if taken == sys.iterations {
                        break;
                    }
                    if sys.tolerance.is_some() {
                        w.accel_z.step(&w.z_iter, &mut st.z);
                    }
                    rows_times_coordinates(d, &m.k_basis, nq, rr, &st.z, Some(&w.f_rig), &mut w.fvec);
                    if Self::converged(sys, w, taken) {
                        break;
                    }
                }
            }
        }
        if st.z.iter().any(|x| !x.is_finite()) {
            st.z.copy_from_slice(&w.z_prev);
            st.warm.copy_from_slice(&w.warm_start);
            st.warm_rig.copy_from_slice(&w.warm_rig_start);
            return Err(NumericalError::StepFailed {
                step: "reduced (fast) step of complementary dynamics".into(),
                reason: "the solve produced a non-finite state (the rig pose jumps too far)".into(),
            }
            .into());
        }
        for k in 0..d * rr {
            st.zdot[k] = (st.z[k] - w.z_prev[k]) / h;
        }
        for k in 0..d * c {
            st.pdot[k] = (p_next[k] - st.p[k]) / h;
            st.p[k] = p_next[k];
        }
        Ok(taken)
    }

    /// Whether the iterations may stop after `taken` of them (the new cluster gradients in
    /// `fvec`, the previous ones in `fvec_prev`): with a tolerance, from the second on, when
    /// `max |F − F_prev| ≤ tol · max |F − F_rig|`. Keeps `fvec` in `fvec_prev`.
    fn converged(sys: &FastSystem, w: &mut FastWorkspace, taken: usize) -> bool {
        let Some(tol) = sys.tolerance else {
            return false;
        };
        let (mut moved, mut size) = (0.0f64, 0.0f64);
        for ((f, p), r) in w.fvec.iter().zip(&w.fvec_prev).zip(&w.f_rig) {
            moved = moved.max((f - p).abs());
            size = size.max((f - r).abs());
        }
        w.fvec_prev.copy_from_slice(&w.fvec);
        taken >= 2 && moved <= tol * size
    }

    /// One rotation per cluster, closest to the cluster gradient in `fvec` (`fvec[i][c·d + j]`),
    /// written to `rvec` in the same layout.
    fn local_step(m: &ReducedModel, st: &mut FastState, w: &mut FastWorkspace) {
        rotations_into(m.dim(), m.n_clusters, &w.fvec, &mut st.warm, &mut w.rvec);
    }

    /// Global step: `z_i = H⁻¹ (base_i + K̂ᵀ R_i)` for each coordinate, or with `relative`
    /// `z_i = H⁻¹ (base_i + K̂ᵀ (R_i − R(Jp)_i))` (the rig pose's rotations `r_rig` not in
    /// `base`). In 3D the three coordinates share each read of a row of `K̂` and of `L` (the
    /// same arithmetic per coordinate, in the same order, as one coordinate at a time).
    fn global_solve(m: &ReducedModel, sys: &FastSystem, st: &mut FastState, w: &mut FastWorkspace, relative: bool) {
        let (d, rr) = (m.dim(), m.rr);
        let nq = m.n_clusters * d;
        st.z.copy_from_slice(&w.base);
        let rvec = if relative {
            for ((x, r), g) in w.r_delta.iter_mut().zip(&w.rvec).zip(&w.r_rig) {
                *x = r - g;
            }
            &w.r_delta
        } else {
            &w.rvec
        };
        if d == 3 {
            let (z0, rest) = st.z.split_at_mut(rr);
            let (z1, z2) = rest.split_at_mut(rr);
            let (r0, r1, r2) = (&rvec[..nq], &rvec[nq..2 * nq], &rvec[2 * nq..3 * nq]);
            add_transposed_product3(&m.k_basis, nq, rr, 1.0, [r0, r1, r2], [z0, z1, &mut z2[..rr]]);
            sys.chol.solve3_in_place(z0, z1, z2);
            return;
        }
        for i in 0..d {
            let zi = &mut st.z[i * rr..(i + 1) * rr];
            for q in 0..nq {
                let r = rvec[i * nq + q];
                for (x, k) in zi.iter_mut().zip(&m.k_basis[q * rr..(q + 1) * rr]) {
                    *x += r * k;
                }
            }
        }
        if d == 2 {
            let (z0, z1) = st.z.split_at_mut(rr);
            sys.chol.solve2_in_place(z0, &mut z1[..rr]);
        } else {
            for i in 0..d {
                sys.chol.solve_in_place(&mut st.z[i * rr..(i + 1) * rr]);
            }
        }
    }

    /// `‖G B z‖₂²` (blendshape rows) from the precomputed `G_{t,i} B̂`.
    fn blendshape_product_sq(&self) -> f64 {
        let (d, rr) = (self.model.dim(), self.model.rr);
        let nt = self.model.g_b.len() / (d * rr).max(1);
        (0..nt)
            .map(|t| {
                let s: f64 = (0..d)
                    .map(|i| {
                        dot(
                            &self.model.g_b[(t * d + i) * rr..(t * d + i + 1) * rr],
                            &self.state.z[i * rr..(i + 1) * rr],
                        )
                    })
                    .sum();
                s * s
            })
            .sum()
    }

    /// `‖B z‖_2²` from the precomputed `B̂ᵀB̂`.
    fn displacement_norm_sq(&self) -> f64 {
        let (d, rr) = (self.model.dim(), self.model.rr);
        let mut den = 0.0;
        for i in 0..d {
            let zi = &self.state.z[i * rr..(i + 1) * rr];
            for a in 0..rr {
                den += zi[a] * dot(&self.model.b_b[a * rr..(a + 1) * rr], zi);
            }
        }
        den
    }

    /// `(‖G B z‖₂, relative to ‖G‖₂ ‖B z‖₂)`: the residual against the blendshape columns alone
    /// (zeros without blendshapes). Does not allocate.
    pub fn blendshape_residual(&self) -> (f64, f64) {
        let abs = self.blendshape_product_sq().sqrt();
        let un = self.displacement_norm_sq().max(0.0).sqrt();
        let rel = if un > 0.0 && self.model.blend_norm > 0.0 {
            abs / (self.model.blend_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// `(‖Jᵀ M D B z‖₂, relative to ‖Jᵀ M D‖₂ ‖B z‖₂)` from the precomputed `ÂB̂`, `G_{t,i}B̂`
    /// and `B̂ᵀB̂` (bone and blendshape rows together).
    pub(crate) fn constraint_residual(&self) -> (f64, f64) {
        let (d, rr) = (self.model.dim(), self.model.rr);
        let c = self.model.a_b.len() / rr.max(1);
        let (mut num, mut den) = (self.blendshape_product_sq(), 0.0);
        let z = &self.state.z;
        if d == 3 {
            // The three coordinates share each row read (the sums in another order than one
            // coordinate at a time: a diagnostic, not part of the motion).
            let (z0, z1, z2) = (&z[..rr], &z[rr..2 * rr], &z[2 * rr..3 * rr]);
            for k in 0..c {
                let s = dot3(&self.model.a_b[k * rr..(k + 1) * rr], z0, z1, z2);
                num += s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
            }
            for a in 0..rr {
                let s = dot3(&self.model.b_b[a * rr..(a + 1) * rr], z0, z1, z2);
                den += z0[a] * s[0] + z1[a] * s[1] + z2[a] * s[2];
            }
        } else {
            for i in 0..d {
                let zi = &z[i * rr..(i + 1) * rr];
                for k in 0..c {
                    let s = dot(&self.model.a_b[k * rr..(k + 1) * rr], zi);
                    num += s * s;
                }
                for a in 0..rr {
                    let s = dot(&self.model.b_b[a * rr..(a + 1) * rr], zi);
                    den += zi[a] * s;
                }
            }
        }
        let (abs, un) = (num.sqrt(), den.max(0.0).sqrt());
        let rel = if un > 0.0 && self.model.constraint_norm > 0.0 {
            abs / (self.model.constraint_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// Prepares [`write_embedded_displacement`](Self::write_embedded_displacement) for points
    /// embedded in the mesh: per point its four vertices `corners` and barycentric weights
    /// (the field products `Σ_c b_c [w_l X̂_j](corner_c)`, `k(d+1)` a point, are kept). Returns
    /// whether reading the points that way is the cheaper path: `k(d+1)·d` multiply-adds a point
    /// against about `k(d+1)·(d+1)` a mesh vertex for reconstructing the mesh, so it is when
    /// `m·d < n·(d+1)` (a surface no denser than its lattice); otherwise nothing is kept and
    /// the caller reconstructs the mesh.
    ///
    /// Errors: a corner index `≥ n`, a non-finite weight, or mismatched lengths (nothing
    /// changes).
    pub fn prepare_embedded(&mut self, corners: &[[usize; 4]], barycentric: &[[f64; 4]]) -> Result<bool> {
        let (m, n, d) = (corners.len(), self.n_vertices(), self.dim());
        if m * d >= n * (d + 1) {
            // Checked all the same (the caller interpolates the mesh at these points).
            self.model.basis.check_embedded(corners, barycentric)?;
            self.embedded = Vec::new();
            return Ok(false);
        }
        self.embedded = self.model.basis.embedded_products(corners, barycentric)?;
        Ok(true)
    }

    /// `u_c` at the points prepared by [`prepare_embedded`](Self::prepare_embedded),
    /// `Σ_c b_c (B z)(corner_c)`, into `out` (`m × d`, row-major, overwritten) straight from the
    /// reduced coordinates, without reconstructing the mesh (`k(d+1)·d` multiply-adds a
    /// point). Returns `false`, writing nothing, when `out` is not `m × d` for the prepared
    /// points. Does not allocate.
    pub fn write_embedded_displacement(&mut self, out: &mut [f64]) -> bool {
        let (d, cols) = (self.dim(), self.model.basis.n_fields() * (self.dim() + 1));
        if self.embedded.is_empty() || out.len() * cols != self.embedded.len() * d {
            return false;
        }
        self.model.basis.field_coefficients(&self.state.z, &mut self.work.coeff);
        self.model
            .basis
            .embedded_reconstruction(&self.embedded, &self.work.coeff, out);
        true
    }

    /// Complementary displacement `u_c = B z` added into `out` (`n × d`, row-major).
    pub fn add_displacement(&mut self, out: &mut [f64]) {
        self.model.basis.field_coefficients(&self.state.z, &mut self.work.coeff);
        self.model.basis.add_reconstruction(&self.work.coeff, out);
    }

    /// The final positions `J p + u_c` into `frame` (`n × 3`, row-major; z = 0 in 2D) and `u_c`
    /// into `disp` (`n × d`, row-major); returns `max_v ‖u_c,v‖₂`. Does not allocate.
    pub fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
        let (n, d) = (self.n_vertices(), self.dim());
        self.rig.apply(&self.state.p_full, &mut self.work.skinned);
        disp.fill(0.0);
        self.add_displacement(disp);
        let skinned = &self.work.skinned;
        for v in 0..n {
            for i in 0..d {
                frame[v * 3 + i] = skinned[i * n + v] + disp[v * d + i];
            }
            if d == 2 {
                frame[v * 3 + 2] = 0.0;
            }
        }
        crate::dynamics::solver::max_norm(disp, d)
    }

    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.model.n_vertices()
    }
    /// Reduced coordinates `z` (coordinate-major, `d × r̂`).
    pub fn reduced_state(&self) -> &[f64] {
        &self.state.z
    }
    /// Reduced velocities `ż = (z_t − z_{t−1})/h` (coordinate-major, `d × r̂`).
    pub fn reduced_velocity(&self) -> &[f64] {
        &self.state.zdot
    }
    /// The rig.
    pub fn rig(&self) -> &LbsRig {
        &self.rig
    }
    /// The current rig parameters `p` (bones, then blendshape weights).
    pub fn rig_params(&self) -> &[f64] {
        &self.state.p_full
    }
    /// Lowest angular frequency `ω₁` of the subspace (rad/s), with the stiffness used.
    pub fn lowest_angular_frequency(&self) -> f64 {
        self.system.omega1
    }
    /// What the precompute produced.
    pub fn precompute(&self) -> &FastPrecompute {
        &self.info
    }
}

impl SubstepSolver for FastSolver {
    fn substep_rig(&self) -> &LbsRig {
        &self.rig
    }
    fn current_params(&self) -> &[f64] {
        &self.state.p_full
    }
    fn substep(&mut self, p: &[f64]) -> Result<usize> {
        self.solve_substep(p)
    }
    fn begin_midpoint(&mut self) {
        let n = 2 * self.state.z.len() + self.state.pdot.len();
        save_fields(
            &mut self.work.mid[..n],
            &[&self.state.z, &self.state.zdot, &self.state.pdot],
        );
    }
    fn finish_midpoint(&mut self, p_end: &[f64]) {
        let (zn, pn) = (self.state.z.len(), self.state.pdot.len());
        extrapolate_from(&self.work.mid[..zn], &mut self.state.z);
        extrapolate_from(&self.work.mid[zn..2 * zn], &mut self.state.zdot);
        extrapolate_from(&self.work.mid[2 * zn..2 * zn + pn], &mut self.state.pdot);
        self.rig.extended_params_into(p_end, &mut self.state.p);
        self.state.p_full.copy_from_slice(p_end);
    }
    fn save_frame(&mut self) {
        save_fields(
            &mut self.work.saved,
            &[
                &self.state.z,
                &self.state.zdot,
                &self.state.p,
                &self.state.pdot,
                &self.state.p_full,
            ],
        );
        let nc = self.model.n_clusters;
        self.work.saved_warm[..nc].copy_from_slice(&self.state.warm);
        self.work.saved_warm[nc..].copy_from_slice(&self.state.warm_rig);
        self.system.modal.save_state();
    }
    fn restore_frame(&mut self) {
        restore_fields(
            &self.work.saved,
            &mut [
                &mut self.state.z,
                &mut self.state.zdot,
                &mut self.state.p,
                &mut self.state.pdot,
                &mut self.state.p_full,
            ],
        );
        let nc = self.model.n_clusters;
        self.state.warm.copy_from_slice(&self.work.saved_warm[..nc]);
        self.state.warm_rig.copy_from_slice(&self.work.saved_warm[nc..]);
        self.system.modal.restore_state();
    }
    // `ż` is the complementary velocity itself: nothing to remember of the rig.
    fn mark_step_start(&mut self) {}
    fn damp_modes(&mut self, length: f64) {
        self.system
            .modal
            .apply(&mut self.state.zdot, &self.state.z, None, length);
    }
}
