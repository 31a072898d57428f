//! Running a scene through a complementary-dynamics solver ([`CdSolver`]).

use std::time::Instant;

use crate::dynamics::{
    CdSolver, ConstraintRank, FastParams, FastPrecompute, FastSolver, FullOrderSolver, Integrator, LocalGlobalParams,
    NewtonCdParams, NewtonCdSolver, SolverParams, StepReport,
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
    /// Rig-orthogonality constraints per coordinate: independent ones kept, and given.
    pub constraint_rank: ConstraintRank,
    /// Per frame handed out (every frame, unless a streaming caller skipped some),
    /// `max_v ‖u_c,v‖` (the size of the secondary motion).
    pub max_displacement: Vec<f64>,
    /// The fast solver's precompute (eigenvalues, clusters, structural orthogonality, stages).
    pub fast: Option<FastPrecompute>,
    /// The lowest vibration frequency (Hz) the solver computed (see
    /// [`CdSolver::lowest_frequency_hz`]).
    pub lowest_frequency_hz: Option<f64>,
    /// Per step, `‖G u_c‖/(‖G‖‖u_c‖)` against the blendshape columns alone (empty without
    /// blendshapes).
    pub blendshape_relative_residual: Vec<f64>,
    /// Frames at which a rig jump beyond the cut distance restarted the simulation.
    pub cuts: Vec<usize>,
}

/// Which solver runs a scene, with its own controls. The algorithm is chosen here, not by the
/// scene's material: local/global and the fast solver run ARAP, Newton's method runs a
/// hyperelastic model, and a pairing the scene's model does not allow is refused
/// ([`simulate`]). [`SolverKind::full_order`] names the full-order algorithm of a model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SolverKind {
    /// Full-order ARAP local/global ([`FullOrderSolver`]): ARAP scenes, example poses.
    LocalGlobal(LocalGlobalParams),
    /// Full-order Newton's method ([`NewtonCdSolver`]) on the scene's hyperelastic model:
    /// at most `max_iterations` per step, stopping once the step is shorter than `tolerance`
    /// (scene length units; see [`NewtonCdParams`]).
    Newton {
        /// Most Newton iterations per step, `≥ 1`.
        max_iterations: usize,
        /// Stop once `‖t·Δu_c‖₂` is below this, `> 0`.
        tolerance: f64,
    },
    /// The fast (reduced) solver ([`FastSolver`]): ARAP scenes.
    Fast(FastParams),
}

impl SolverKind {
    /// The full-order solver of material `model` at its default controls: local/global for ARAP
    /// ([`LocalGlobalParams::default`]), Newton's method for neo-Hookean
    /// ([`NewtonCdParams::default`]).
    pub fn full_order(model: ElasticModel) -> Self {
        match model {
            ElasticModel::Arap => SolverKind::LocalGlobal(LocalGlobalParams::default()),
            ElasticModel::NeoHookean => Self::newton(),
        }
    }

    /// The full-order solver of `scene`: [`full_order`](Self::full_order) of its material,
    /// with local/global iterated to convergence ([`LocalGlobalParams::converged`]) when the
    /// scene is stepped by backward Euler (one large step per frame, as the seeds and the
    /// reference release step).
    pub fn full_order_for(scene: &Scene) -> Self {
        match Self::full_order(scene.model) {
            SolverKind::LocalGlobal(_) if scene.dynamics.integrator == Integrator::BackwardEuler => {
                SolverKind::LocalGlobal(LocalGlobalParams::converged())
            }
            kind => kind,
        }
    }

    /// Newton's method at its default controls ([`NewtonCdParams::default`]).
    pub fn newton() -> Self {
        let d = NewtonCdParams::default();
        SolverKind::Newton {
            max_iterations: d.max_iterations,
            tolerance: d.tolerance,
        }
    }

    /// The name a user gives the solver (`local-global`, `newton`, `fast`).
    pub fn name(&self) -> &'static str {
        match self {
            SolverKind::LocalGlobal(_) => "local-global",
            SolverKind::Newton { .. } => "newton",
            SolverKind::Fast(_) => "fast",
        }
    }
}

/// Simulates every frame of `scene` with its full-order solver at its default controls
/// ([`SolverKind::full_order_for`]): frame 0 at rest, one step per following frame.
pub fn simulate_full(scene: &Scene) -> Result<Simulation> {
    simulate(scene, SolverKind::full_order_for(scene))
}

/// Simulates every frame of `scene` with the chosen solver; the time step and gravity come
/// from the scene. Refuses a solver the scene's material model does not run on (ARAP:
/// local/global or fast; neo-Hookean: Newton), and example poses with any solver but
/// local/global.
pub fn simulate(scene: &Scene, kind: SolverKind) -> Result<Simulation> {
    simulate_with_sidecar(scene, kind, None)
}

/// As [`simulate`], with the fast solver's eigenmodes and clusters loaded from (or saved to) a
/// sidecar file; the full-order solvers ignore it.
pub fn simulate_with_sidecar(scene: &Scene, kind: SolverKind, sidecar: Option<&std::path::Path>) -> Result<Simulation> {
    let mut positions = Vec::with_capacity(scene.frames.len());
    let mut collect = |_: usize, frame: &[f64], _: &[f64]| -> Result<()> {
        positions.push(frame.to_vec());
        Ok(())
    };
    let mut sim = simulate_streaming(scene, kind, sidecar, &mut collect)?;
    sim.positions = positions;
    Ok(sim)
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

/// Steps through every frame of the scene, handing the final positions (`n × 3`) and
/// complementary displacement (`n × d`; with `embedded`, the `m` points' `m × d` and no
/// positions) of each frame that is `wanted` to `on_frame` (frame 0 included when wanted). Frames not wanted are stepped but not carried out of the solver's
/// own coordinates (the fast solver's reduced state is not reconstructed on the mesh), and
/// have no entry in `max_displacement`.
///
/// The scene's [`SceneDynamics`](crate::scene::SceneDynamics) apply here: `preroll` seconds of
/// steps at the first pose before frame 0, a restart (`reset`) at a frame whose rig jump
/// exceeds `cut_distance` × the body's diagonal, and `strength` on every output displacement.
fn run_frames(
    scene: &Scene,
    solver: &mut dyn CdSolver,
    positions: bool,
    wanted: &dyn Fn(usize) -> bool,
    embedded: Option<Embedded>,
    on_frame: &mut FrameCallback,
) -> Result<FrameRun> {
    let (n, d) = (scene.mesh.n_vertices(), scene.mesh.dim());
    let mut out = Output::new(solver, embedded, n, d)?;
    // The precompute is done (a progress observer sees where its stages end).
    crate::progress::report(1.0, "stepping the frames");
    let dyn_ = &scene.dynamics;
    // Without positions only the displacement is written (`frame` then holds no positions).
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
    let mut run = FrameRun {
        steps: Vec::with_capacity(scene.frames.len()),
        step_ms: Vec::with_capacity(scene.frames.len()),
        max_displacement: Vec::new(),
        blendshape_residual: Vec::new(),
        cuts: Vec::new(),
    };
    if wanted(0) {
        run.max_displacement
            .push(out.write(solver, positions, dyn_.strength, &mut frame, &mut disp));
        on_frame(0, &frame, out.displacement(&mut disp))?;
    }
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
        let (residual, relative_residual) = solver.constraint_residual();
        run.steps.push(StepReport {
            iterations,
            residual,
            relative_residual,
        });
        if has_blendshapes {
            run.blendshape_residual.push(solver.blendshape_residual().1);
        }
        if wanted(k) {
            run.max_displacement
                .push(out.write(solver, positions, dyn_.strength, &mut frame, &mut disp));
            on_frame(k, &frame, out.displacement(&mut disp))?;
        }
    }
    Ok(run)
}

/// Points embedded in the scene's mesh whose displacement a run hands out instead of the mesh's:
/// per point its four mesh vertices and barycentric weights.
#[derive(Clone, Copy)]
pub(crate) struct Embedded<'a> {
    pub corners: &'a [[usize; 4]],
    pub barycentric: &'a [[f64; 4]],
}

/// What a run writes per frame: the mesh's displacement, or the embedded points' (read from the
/// solver at those points when it can, else interpolated from the mesh's).
struct Output<'a> {
    embedded: Option<Embedded<'a>>,
    /// Whether the solver reads the embedded points itself.
    direct: bool,
    /// The embedded points' displacement (`m × d`).
    points: Vec<f64>,
}

impl<'a> Output<'a> {
    fn new(solver: &mut dyn CdSolver, embedded: Option<Embedded<'a>>, n: usize, d: usize) -> Result<Self> {
        let direct = match embedded {
            Some(e) => {
                if let Some(c) = e.corners.iter().flatten().find(|&&c| c >= n) {
                    return Err(OvertoneError::size(
                        "an embedded point's corner (a mesh vertex)",
                        format!("< {n}"),
                        c,
                    ));
                }
                solver.prepare_embedded(e.corners, e.barycentric)?
            }
            None => false,
        };
        let m = embedded.map_or(0, |e| e.corners.len());
        Ok(Self {
            embedded,
            direct,
            points: vec![0.0; m * d],
        })
    }

    /// The solver's displacement into `disp` (the mesh's; the embedded points' go to
    /// `points`) and its final positions into `frame` when `positions`, times the strength `s`
    /// (see `apply_strength`; the embedded points' displacement alone is scaled, as there are
    /// no positions then); returns the largest displacement handed out, `s · max ‖u‖`.
    fn write(
        &mut self,
        solver: &mut dyn CdSolver,
        positions: bool,
        s: f64,
        frame: &mut [f64],
        disp: &mut [f64],
    ) -> f64 {
        let d = solver.dim();
        let largest = match self.embedded {
            Some(e) => {
                if !(self.direct && solver.write_embedded_displacement(&mut self.points)) {
                    solver.write_displacement(disp);
                    self.points.fill(0.0);
                    crate::embed::add_embedded(e.corners, e.barycentric, d, disp, &mut self.points);
                }
                if s != 1.0 {
                    self.points.iter_mut().for_each(|u| *u *= s);
                }
                return s * crate::dynamics::max_norm(&self.points, d);
            }
            None if positions => solver.write_frame(frame, disp),
            None => {
                solver.write_displacement(disp);
                crate::dynamics::max_norm(disp, d)
            }
        };
        apply_strength(s, frame, disp, d);
        s * largest
    }

    /// The displacement handed out: the embedded points' or the mesh's (`disp`).
    fn displacement<'b>(&'b mut self, disp: &'b mut [f64]) -> &'b mut [f64] {
        if self.embedded.is_some() {
            &mut self.points
        } else {
            disp
        }
    }
}

/// Receives `(frame index, final positions n × 3, complementary displacement n × d)`.
pub type FrameCallback<'a> = dyn FnMut(usize, &[f64], &[f64]) -> Result<()> + 'a;

/// As [`simulate_with_sidecar`], but instead of collecting positions hands every frame to
/// `on_frame` as it is computed (for bakes that map the result onto another mesh). The returned
/// simulation has no positions.
pub fn simulate_streaming(
    scene: &Scene,
    kind: SolverKind,
    sidecar: Option<&std::path::Path>,
    on_frame: &mut FrameCallback,
) -> Result<Simulation> {
    simulate_streaming_output(scene, kind, sidecar, true, &|_| true, None, on_frame)
}

/// [`simulate_streaming`] with the final positions written only when `positions` (without, the
/// positions `on_frame` gets are meaningless: for bakes that need the displacement alone, which
/// skips skinning the whole mesh every frame), and only the frames that are `wanted` handed
/// to `on_frame` (see `run_frames`). With `embedded`, `on_frame` gets the displacement of
/// those points (`m × d`) instead of the mesh's, and no positions.
pub(crate) fn simulate_streaming_output(
    scene: &Scene,
    kind: SolverKind,
    sidecar: Option<&std::path::Path>,
    positions: bool,
    wanted: &dyn Fn(usize) -> bool,
    embedded: Option<Embedded>,
    on_frame: &mut FrameCallback,
) -> Result<Simulation> {
    let (mut solver, precompute_ms) = build_solver(scene, kind, sidecar)?;
    let run = run_frames(scene, solver.as_mut(), positions, wanted, embedded, on_frame)?;
    Ok(Simulation {
        positions: Vec::new(),
        steps: run.steps,
        step_ms: run.step_ms,
        precompute_ms,
        constraint_rank: solver.constraint_rank(),
        max_displacement: run.max_displacement,
        fast: solver.fast_precompute().cloned(),
        lowest_frequency_hz: solver.lowest_frequency_hz(),
        blendshape_relative_residual: run.blendshape_residual,
        cuts: run.cuts,
    })
}

/// Validates the scene and builds its solver; returns it with the precompute time (ms).
fn build_solver(
    scene: &Scene,
    kind: SolverKind,
    sidecar: Option<&std::path::Path>,
) -> Result<(Box<dyn CdSolver>, f64)> {
    scene.validate()?;
    check_pairing(scene, &kind)?;
    let t0 = Instant::now();
    let (rig, p0, dw) = rig_start(scene)?;
    let params = scene.dynamics.solver_params(scene.dt, scene.gravity.clone());
    let solver = new_solver(scene, rig, &params, kind, &p0, &dw, sidecar)
        .map_err(|e| e.with_advice(mesh_advice(matches!(kind, SolverKind::Fast(_)))))?;
    let precompute_ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok((solver, precompute_ms))
}

/// Refuses a solver that does not run the scene's material model (ARAP: local/global or fast;
/// neo-Hookean: Newton) or its example poses (local/global only).
fn check_pairing(scene: &Scene, kind: &SolverKind) -> Result<()> {
    let runs = match kind {
        SolverKind::LocalGlobal(_) | SolverKind::Fast(_) => scene.model == ElasticModel::Arap,
        SolverKind::Newton { .. } => scene.model == ElasticModel::NeoHookean,
    };
    if !runs {
        let (fits, override_model) = match scene.model {
            ElasticModel::Arap => ("local-global or fast", "neohookean"),
            ElasticModel::NeoHookean => ("newton", "arap"),
        };
        return Err(OvertoneError::Unsupported(format!(
            "scene `{}` asks for the `{}` material, which the `{}` solver does not run (use --solver {fits}, or override the model with --model {override_model})",
            scene.name,
            scene.model.name(),
            kind.name()
        )));
    }
    if scene.examples.is_some() && !matches!(kind, SolverKind::LocalGlobal(_)) {
        return Err(OvertoneError::Unsupported(format!(
            "scene `{}` has example poses; example-aware dynamics runs with the local/global solver only (use --solver local-global)",
            scene.name
        )));
    }
    Ok(())
}

/// The advice the precompute of a scene's own mesh attaches when it does not converge (see
/// [`OvertoneError::with_advice`]): a coarser mesh and, for the fast solver (`fast`), fewer
/// modes. A character's bake replaces it with its lattice's
/// ([`lattice_advice`](crate::scene::lattice_advice)).
fn mesh_advice(fast: bool) -> &'static str {
    if fast {
        "try a coarser mesh or fewer modes"
    } else {
        "try a coarser mesh"
    }
}

/// What every solver of `scene` starts from: its rig, the rig parameters of frame 0 and the
/// momentum weights (the scene's, or [`default_momentum_weights`]; one `≥ 0` per vertex).
pub(crate) fn rig_start(scene: &Scene) -> Result<(LbsRig, Vec<f64>, Vec<f64>)> {
    let rig = scene.rig()?;
    let mut p0 = vec![0.0; rig.n_params()];
    scene.frame_params_into(&rig, 0, &mut p0)?;
    let dw = match &scene.momentum_weights {
        Some(dw) => dw.clone(),
        None => default_momentum_weights(&scene.mesh)?,
    };
    Ok((rig, p0, dw))
}

/// The solver of `kind` for `scene`'s mesh and material, at rest in pose `p0`: Newton's method
/// ([`NewtonCdSolver`]) on the neo-Hookean energy, ARAP local/global ([`FullOrderSolver`], with
/// the scene's example poses), or [`FastSolver`], its eigenmodes and clusters loaded from (or
/// saved to) `sidecar`.
///
/// * `rig`: the scene's rig ([`Scene::rig`]); `p0`: its parameters of the first frame.
/// * `dw`: the momentum weights (the diagonal of `D`, one `≥ 0` per vertex).
///
/// The caller validates the scene and the model/kind pairing (see `build_solver`).
pub(crate) fn new_solver(
    scene: &Scene,
    rig: LbsRig,
    params: &SolverParams,
    kind: SolverKind,
    p0: &[f64],
    dw: &[f64],
    sidecar: Option<&std::path::Path>,
) -> Result<Box<dyn CdSolver>> {
    Ok(match kind {
        SolverKind::Newton {
            max_iterations,
            tolerance,
        } => Box::new(NewtonCdSolver::new(
            &scene.mesh,
            rig,
            dw,
            &scene.material,
            params,
            &NewtonCdParams {
                model: EnergyModel::NeoHookean,
                max_iterations,
                tolerance,
            },
            p0,
        )?),
        SolverKind::LocalGlobal(lg) => {
            let mut solver = FullOrderSolver::new(&scene.mesh, rig, dw, &scene.material, params, lg, p0)?;
            if let Some(ex) = &scene.examples {
                solver.set_examples(&ex.poses, ex.manifold.clone(), ex.beta)?;
            }
            Box::new(solver)
        }
        SolverKind::Fast(fp) => Box::new(FastSolver::with_sidecar(
            &scene.mesh,
            rig,
            dw,
            &scene.material,
            params,
            fp,
            p0,
            sidecar,
        )?),
    })
}
