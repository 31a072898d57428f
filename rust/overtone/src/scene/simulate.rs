//! Running a scene through the full-order solver.

use std::time::Instant;

use crate::dynamics::{FullOrderSolver, SolverParams, StepReport};
use crate::error::{OvertoneError, Result};
use crate::leak::default_momentum_weights;
use crate::rig::LbsRig;
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
}

fn to_rows3(x: &[f64], n: usize, d: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * 3];
    for v in 0..n {
        for i in 0..d {
            out[v * 3 + i] = x[i * n + v];
        }
    }
    out
}

/// Simulates every frame of `scene` with the full-order ARAP solver: frame 0 at rest, one step
/// per following frame. `params.dt` and `params.gravity` are taken from the scene.
pub fn simulate_full(scene: &Scene, iterations: usize, tolerance: Option<f64>) -> Result<Simulation> {
    scene.validate()?;
    if scene.model != ElasticModel::Arap {
        return Err(OvertoneError::Unsupported(format!(
            "scene `{}` asks for the `{}` material; this solver implements `arap` only (override the model to run it with ARAP)",
            scene.name,
            scene.model.name()
        )));
    }
    let (n, d) = (scene.mesh.n_vertices(), scene.mesh.dim());
    let t0 = Instant::now();
    let rig = LbsRig::new(d, scene.mesh.vertices(), &scene.weights, scene.n_bones)?;
    let p0 = rig.params_from_transforms(&scene.frames[0])?;
    let dw = match &scene.momentum_weights {
        Some(dw) => dw.clone(),
        None => default_momentum_weights(&scene.mesh)?,
    };
    let params = SolverParams {
        dt: scene.dt,
        iterations,
        tolerance,
        gravity: scene.gravity.clone(),
    };
    let mut solver = FullOrderSolver::new(&scene.mesh, rig, &dw, &scene.material, &params, &p0)?;
    if let Some(ex) = &scene.examples {
        solver.set_examples(&ex.poses, ex.manifold.clone(), ex.beta)?;
    }
    let precompute_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut positions = vec![to_rows3(solver.positions(), n, d)];
    let mut max_displacement = vec![0.0];
    let mut steps = Vec::with_capacity(scene.frames.len());
    let mut step_ms = Vec::with_capacity(scene.frames.len());
    for frame in &scene.frames[1..] {
        let p = solver.rig().params_from_transforms(frame)?;
        let t = Instant::now();
        let report = solver.step(&p)?;
        step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        steps.push(report);
        positions.push(to_rows3(solver.positions(), n, d));
        let u = solver.displacement();
        max_displacement.push(
            (0..n)
                .map(|v| (0..d).map(|i| u[i * n + v].powi(2)).sum::<f64>().sqrt())
                .fold(0.0, f64::max),
        );
    }
    Ok(Simulation {
        positions,
        steps,
        step_ms,
        precompute_ms,
        constraint_rank: solver.constraint_rank(),
        max_displacement,
    })
}
