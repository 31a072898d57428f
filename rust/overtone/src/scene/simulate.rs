//! Running a scene through the full-order solver.

use std::time::Instant;

use crate::dynamics::{
    FastParams, FastPrecompute, FastSolver, FullOrderSolver, Integrator, NewtonCdSolver, StepReport,
};
use crate::energy::EnergyModel;
use crate::error::{OvertoneError, Result};
use crate::leak::default_momentum_weights;
use crate::rig::{LbsRig, RigJump};
use crate::scene::{ElasticModel, Scene};

/// The result of simulating every frame of a scene.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Per frame, final positions `J p + u_c`, `n × 3` row-major (z = 0 for 2D scenes); frame 0
    /// is the rig's first pose.
    pub positions: Vec<Vec<f64>>,
    /// Per step (frames 1..), what the step did; frame 0 has no step.
    pub steps: Vec<StepReport>,
    /// Per step, wall-clock milliseconds.
    pub step_ms: Vec<f64>,
    /// Wall-clock milliseconds of the precompute (operators, leak field, factorizations).
    pub precompute_ms: f64,
    /// Independent constraints kept per coordinate, and given.
    pub constraint_rank: (usize, usize),
    /// Per frame, `max_v ‖u_c,v‖` (the size of the secondary motion).
    pub max_displacement: Vec<f64>,
    /// The fast solver's precompute (eigenvalues, clusters, structural orthogonality, stages).
    pub fast: Option<FastPrecompute>,
    /// Per step, `‖G u_c‖/(‖G‖‖u_c‖)` against the blendshape columns alone (empty without
    /// blendshapes).
    pub blendshape_relative_residual: Vec<f64>,
    /// Frames at which a rig jump beyond the cut distance restarted the simulation.
    pub cuts: Vec<usize>,
}

/// Which solver runs a scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverKind {
    /// Full-order ARAP local/global.
    Full,
    /// Fast (reduced) solver with the given subspace size.
    Fast(FastParams),
}

/// Simulates every frame of `scene` with the full-order solver of its material: frame 0 at
/// rest, one step per following frame. ARAP runs the local/global solver ([`FullOrderSolver`],
/// `iterations` local/global iterations); neo-Hookean runs Newton's method
/// ([`NewtonCdSolver`], at most `iterations` Newton iterations, `tolerance` on the last step's
/// length, default [`crate::dynamics::NEWTON_CD_TOLERANCE`]).
pub fn simulate_full(scene: &Scene, iterations: usize, tolerance: Option<f64>) -> Result<Simulation> {
    simulate(scene, SolverKind::Full, iterations, tolerance)
}

/// Simulates every frame of `scene` with the chosen solver (see [`simulate_full`]); the time
/// step and gravity come from the scene.
pub fn simulate(scene: &Scene, kind: SolverKind, iterations: usize, tolerance: Option<f64>) -> Result<Simulation> {
    simulate_with_sidecar(scene, kind, iterations, tolerance, None)
}

/// As [`simulate`], with the fast solver's eigenmodes and clusters loaded from (or saved to) a
/// sidecar file; the full solver ignores it.
pub fn simulate_with_sidecar(
    scene: &Scene,
    kind: SolverKind,
    iterations: usize,
    tolerance: Option<f64>,
    sidecar: Option<&std::path::Path>,
) -> Result<Simulation> {
    let (mut solver, precompute_ms) = build_solver(scene, kind, iterations, tolerance, sidecar)?;
    let mut positions = Vec::with_capacity(scene.frames.len());
    let mut collect = |_: usize, frame: &[f64], _: &[f64]| -> Result<()> {
        positions.push(frame.to_vec());
        Ok(())
    };
    let run = run_frames(scene, solver.as_mut(), &mut collect)?;
    Ok(Simulation {
        positions,
        steps: run.steps,
        step_ms: run.step_ms,
        precompute_ms,
        constraint_rank: solver.constraint_rank(),
        max_displacement: run.max_displacement,
        fast: solver.fast_precompute(),
        blendshape_relative_residual: run.blendshape_residual,
        cuts: run.cuts,
    })
}

struct FrameRun {
    steps: Vec<StepReport>,
    step_ms: Vec<f64>,
    max_displacement: Vec<f64>,
    blendshape_residual: Vec<f64>,
    cuts: Vec<usize>,
}

/// `frame += (s − 1)·u` (`n × 3` positions, `n × d` displacement) and `u ← s·u`: the output of
/// a strength `s`.
fn apply_strength(s: f64, frame: &mut [f64], disp: &mut [f64], d: usize) {
    if s == 1.0 {
        return;
    }
    for (v, u) in disp.chunks_exact_mut(d).enumerate() {
        for i in 0..d {
            frame[v * 3 + i] += (s - 1.0) * u[i];
            u[i] *= s;
        }
    }
}

/// Steps through every frame of the scene, handing each frame's final positions (`n × 3`) and
/// complementary displacement (`n × d`) to `on_frame` (frame 0 included).
///
/// The scene's [`SceneDynamics`](crate::scene::SceneDynamics) apply here: `preroll` seconds of
/// steps at the first pose before frame 0, a restart (`reset`) at a frame whose rig jump
/// exceeds `cut_distance` × the body's diagonal, and `strength` on every output displacement.
fn run_frames(scene: &Scene, solver: &mut dyn Stepper, on_frame: &mut FrameCallback) -> Result<FrameRun> {
    let (n, d) = (scene.mesh.n_vertices(), scene.mesh.dim());
    let dyn_ = &scene.dynamics;
    let mut frame = vec![0.0; n * 3];
    let mut disp = vec![0.0; n * d];
    let mut p = vec![0.0; solver.rig().n_params()];
    let mut p_prev = vec![0.0; solver.rig().n_params()];
    let mut p_next = vec![0.0; solver.rig().n_params()];
    scene.frame_params_into(solver.rig(), 0, &mut p_prev)?;
    for _ in 0..(dyn_.preroll / scene.dt).round() as usize {
        solver.advance(&p_prev)?;
    }
    // The clip starts (or restarts after a cut) with the body moving with its rig, not at rest;
    // the seeds' scheme starts at rest, as the seeds do.
    let moving_start = dyn_.integrator != Integrator::BackwardEuler;
    let frame_length = scene.dt * dyn_.time_scale;
    if moving_start && scene.frames.len() > 1 {
        scene.frame_params_into(solver.rig(), 1, &mut p)?;
        solver.match_rig_velocity(&p, frame_length)?;
    }
    let md = solver.write_frame(&mut frame, &mut disp);
    apply_strength(dyn_.strength, &mut frame, &mut disp, d);
    on_frame(0, &frame, &disp)?;
    let mut run = FrameRun {
        steps: Vec::with_capacity(scene.frames.len()),
        step_ms: Vec::with_capacity(scene.frames.len()),
        max_displacement: vec![md * dyn_.strength],
        blendshape_residual: Vec::new(),
        cuts: Vec::new(),
    };
    let jump = dyn_.cut_distance.map(|c| (RigJump::new(solver.rig()), c));
    let has_blendshapes = solver.rig().n_targets() > 0;
    for k in 1..scene.frames.len() {
        scene.frame_params_into(solver.rig(), k, &mut p)?;
        let t = Instant::now();
        let cut = jump
            .as_ref()
            .is_some_and(|(j, c)| j.jump(&p_prev, &p) > c * j.diagonal());
        let iterations = if cut {
            run.cuts.push(k);
            solver.reset(&p)?;
            if moving_start && k + 1 < scene.frames.len() {
                scene.frame_params_into(solver.rig(), k + 1, &mut p_next)?;
                solver.match_rig_velocity(&p_next, frame_length)?;
            }
            0
        } else {
            solver.advance(&p)?
        };
        p_prev.copy_from_slice(&p);
        run.step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let (residual, relative_residual) = solver.residual();
        run.steps.push(StepReport {
            iterations,
            residual,
            relative_residual,
        });
        if has_blendshapes {
            run.blendshape_residual.push(solver.blendshape_residual().1);
        }
        let md = solver.write_frame(&mut frame, &mut disp);
        apply_strength(dyn_.strength, &mut frame, &mut disp, d);
        run.max_displacement.push(md * dyn_.strength);
        on_frame(k, &frame, &disp)?;
    }
    Ok(run)
}

/// Receives `(frame index, final positions n × 3, complementary displacement n × d)`.
pub type FrameCallback<'a> = dyn FnMut(usize, &[f64], &[f64]) -> Result<()> + 'a;

/// As [`simulate_with_sidecar`], but instead of collecting positions hands every frame to
/// `on_frame` as it is computed (for bakes that map the result onto another mesh). The returned
/// simulation has no positions.
pub fn simulate_streaming(
    scene: &Scene,
    kind: SolverKind,
    iterations: usize,
    tolerance: Option<f64>,
    sidecar: Option<&std::path::Path>,
    on_frame: &mut FrameCallback,
) -> Result<Simulation> {
    let (mut solver, precompute_ms) = build_solver(scene, kind, iterations, tolerance, sidecar)?;
    let run = run_frames(scene, solver.as_mut(), on_frame)?;
    Ok(Simulation {
        positions: Vec::new(),
        steps: run.steps,
        step_ms: run.step_ms,
        precompute_ms,
        constraint_rank: solver.constraint_rank(),
        max_displacement: run.max_displacement,
        fast: solver.fast_precompute(),
        blendshape_relative_residual: run.blendshape_residual,
        cuts: run.cuts,
    })
}

/// Validates the scene and builds its solver; returns it with the precompute time (ms).
fn build_solver(
    scene: &Scene,
    kind: SolverKind,
    iterations: usize,
    tolerance: Option<f64>,
    sidecar: Option<&std::path::Path>,
) -> Result<(Box<dyn Stepper>, f64)> {
    scene.validate()?;
    if scene.model != ElasticModel::Arap && kind != SolverKind::Full {
        return Err(OvertoneError::Unsupported(format!(
            "scene `{}` asks for the `{}` material; the fast solver implements `arap` only (use --solver full, or override the model with --model arap)",
            scene.name,
            scene.model.name()
        )));
    }
    if scene.examples.is_some() && (kind != SolverKind::Full || scene.model != ElasticModel::Arap) {
        return Err(OvertoneError::Unsupported(format!(
            "scene `{}` has example poses; example-aware dynamics runs with the full ARAP solver only (use --solver full)",
            scene.name
        )));
    }
    let t0 = Instant::now();
    let rig = scene.rig()?;
    let mut p0 = vec![0.0; rig.n_params()];
    scene.frame_params_into(&rig, 0, &mut p0)?;
    let dw = match &scene.momentum_weights {
        Some(dw) => dw.clone(),
        None => default_momentum_weights(&scene.mesh)?,
    };
    let params = scene
        .dynamics
        .solver_params(scene.dt, iterations, tolerance, scene.gravity.clone());
    let solver: Box<dyn Stepper> = match kind {
        SolverKind::Full if scene.model == ElasticModel::NeoHookean => Box::new(NewtonCdSolver::new(
            &scene.mesh,
            rig,
            &dw,
            EnergyModel::NeoHookean,
            &scene.material,
            &params,
            &p0,
        )?),
        SolverKind::Full => {
            let mut solver = FullOrderSolver::new(&scene.mesh, rig, &dw, &scene.material, &params, &p0)?;
            if let Some(ex) = &scene.examples {
                solver.set_examples(&ex.poses, ex.manifold.clone(), ex.beta)?;
            }
            Box::new(solver)
        }
        SolverKind::Fast(fp) => Box::new(FastSolver::with_sidecar(
            &scene.mesh,
            rig,
            &dw,
            &scene.material,
            &params,
            fp,
            &p0,
            sidecar,
        )?),
    };
    let precompute_ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok((solver, precompute_ms))
}

/// The common stepping interface of the two solvers, as the simulation loop uses it.
trait Stepper {
    /// One step without diagnostics (what the step timings measure); returns iterations.
    fn advance(&mut self, p: &[f64]) -> Result<usize>;
    /// Puts the body at rest in pose `p` (a cut).
    fn reset(&mut self, p: &[f64]) -> Result<()>;
    /// Gives the body its rig's velocity toward `p_next`, `dt` physics seconds later, with no
    /// complementary velocity (see [`FullOrderSolver::match_rig_velocity`]).
    fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()>;
    /// `(‖JᵀMD u_c‖, relative)` of the current state.
    fn residual(&mut self) -> (f64, f64);
    fn rig(&self) -> &LbsRig;
    /// Writes the final positions (`n × 3`, row-major, z = 0 in 2D) into `frame`, using `disp`
    /// (`n × d`) as workspace; returns `max_v ‖u_c,v‖`.
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64;
    fn constraint_rank(&self) -> (usize, usize);
    fn fast_precompute(&self) -> Option<FastPrecompute> {
        None
    }
    /// `(‖G u_c‖, relative)` against the blendshape columns (zeros without blendshapes).
    fn blendshape_residual(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// Frame output of the full-order solvers, whose state is coordinate-major: positions to
/// `n × 3` rows, displacement to `n × d` rows; returns the largest displacement.
fn write_full_frame(x: &[f64], u: &[f64], frame: &mut [f64], disp: &mut [f64]) -> f64 {
    let n = frame.len() / 3;
    let d = u.len() / n;
    for v in 0..n {
        for i in 0..3 {
            frame[v * 3 + i] = if i < d { x[i * n + v] } else { 0.0 };
        }
        for i in 0..d {
            disp[v * d + i] = u[i * n + v];
        }
    }
    max_norm(disp, d)
}

fn max_norm(u: &[f64], d: usize) -> f64 {
    u.chunks_exact(d)
        .map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
}

impl Stepper for FullOrderSolver {
    fn advance(&mut self, p: &[f64]) -> Result<usize> {
        FullOrderSolver::advance(self, p)
    }
    fn reset(&mut self, p: &[f64]) -> Result<()> {
        FullOrderSolver::reset(self, p)
    }
    fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        FullOrderSolver::match_rig_velocity(self, p_next, dt)
    }
    fn residual(&mut self) -> (f64, f64) {
        self.constraint_residual()
    }
    fn rig(&self) -> &LbsRig {
        FullOrderSolver::rig(self)
    }
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
        write_full_frame(self.positions(), self.displacement(), frame, disp)
    }
    fn constraint_rank(&self) -> (usize, usize) {
        FullOrderSolver::constraint_rank(self)
    }
    fn blendshape_residual(&self) -> (f64, f64) {
        FullOrderSolver::blendshape_residual(self)
    }
}

impl Stepper for NewtonCdSolver {
    fn advance(&mut self, p: &[f64]) -> Result<usize> {
        Ok(NewtonCdSolver::step(self, p)?.iterations)
    }
    fn reset(&mut self, p: &[f64]) -> Result<()> {
        NewtonCdSolver::reset(self, p)
    }
    fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        NewtonCdSolver::match_rig_velocity(self, p_next, dt)
    }
    fn residual(&mut self) -> (f64, f64) {
        self.constraint_residual()
    }
    fn rig(&self) -> &LbsRig {
        NewtonCdSolver::rig(self)
    }
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
        write_full_frame(self.positions(), self.displacement(), frame, disp)
    }
    fn constraint_rank(&self) -> (usize, usize) {
        NewtonCdSolver::constraint_rank(self)
    }
}

impl Stepper for FastSolver {
    fn advance(&mut self, p: &[f64]) -> Result<usize> {
        FastSolver::advance(self, p)
    }
    fn reset(&mut self, p: &[f64]) -> Result<()> {
        FastSolver::reset(self, p)
    }
    fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        FastSolver::match_rig_velocity(self, p_next, dt)
    }
    fn residual(&mut self) -> (f64, f64) {
        self.constraint_residual()
    }
    fn rig(&self) -> &LbsRig {
        FastSolver::rig(self)
    }
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
        let (n, d) = (self.n_vertices(), self.dim());
        let mut skinned = vec![0.0; n * d];
        self.rig().apply(self.rig_params(), &mut skinned);
        disp.fill(0.0);
        self.add_displacement(disp);
        for v in 0..n {
            for i in 0..d {
                frame[v * 3 + i] = skinned[i * n + v] + disp[v * d + i];
            }
        }
        max_norm(disp, d)
    }
    fn constraint_rank(&self) -> (usize, usize) {
        let r = self.precompute().constraint_rows;
        (r.kept, r.given)
    }
    fn fast_precompute(&self) -> Option<FastPrecompute> {
        Some(self.precompute().clone())
    }
    fn blendshape_residual(&self) -> (f64, f64) {
        FastSolver::blendshape_residual(self)
    }
}
