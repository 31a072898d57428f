//! The JSON reports: the run report (`overtone run --report`) and the helpers the bake and
//! figure reports share. Every report is plain JSON (numbers, strings, arrays, objects; `null`
//! for a value that does not apply) and starts with `schema_version` and `kind`; the fields are
//! described in `docs/reference/reports.md`.

use overtone::scene::{Scene, Simulation};
use serde_json::{json, Value};

/// The reports' schema version: raised when a field is removed, renamed or changes meaning or
/// unit (fields may be added without a change).
pub const SCHEMA_VERSION: u32 = 1;

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let k = s.len() / 2;
    if s.len() % 2 == 1 {
        s[k]
    } else {
        0.5 * (s[k - 1] + s[k])
    }
}

/// Summary: sizes, timings, worst residuals.
pub fn summary(scene: &Scene, sim: &Simulation) -> Value {
    let d = scene.mesh.dim();
    let mut v = json!({
        "scene": scene.name,
        "solver": if sim.fast.is_some() { "fast" } else { "full" },
        "dim": d,
        "vertices": scene.mesh.n_vertices(),
        "elements": scene.mesh.n_elements(),
        "dofs": scene.mesh.n_vertices() * d,
        "bones": scene.n_bones,
        "frames": scene.frames.len(),
        "constraints": sim.constraint_rank.given * d,
        "independent_constraints": sim.constraint_rank.kept * d,
        "precompute_ms": sim.precompute_ms,
        "median_step_ms": median(&sim.step_ms),
        "max_residual": sim.steps.iter().map(|s| s.residual).fold(0.0, f64::max),
        "max_relative_residual": sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max),
        "max_displacement": sim.max_displacement.iter().cloned().fold(0.0, f64::max),
        "examples": scene.examples.as_ref().map_or(0, |e| e.poses.len()),
        "example_beta": scene.examples.as_ref().map(|e| e.beta),
        "example_manifold": scene.examples.as_ref().map(|e| e.manifold.name()),
        "blendshapes": scene.blendshapes.as_ref().map_or(0, |b| b.n_targets),
        "max_blendshape_relative_residual": sim.blendshape_relative_residual.iter().cloned().fold(0.0, f64::max),
    });
    if let Some(f) = &sim.fast {
        v["fast"] = json!({
            "modes": f.eigenvalues.len(),
            "reduced_dofs": f.reduced_dofs,
            "eigenvalues": f.eigenvalues,
            "clusters": f.cluster_sizes.len(),
            "cluster_sizes": f.cluster_sizes,
            "structural_orthogonality": f.structural_orthogonality,
            "weight_space_constraint_rows": f.constraint_rows.given,
            "weight_space_constraint_rank": f.constraint_rows.kept,
            "precompute_stage_ms": f.stage_ms.iter().map(|(k, ms)| json!({"stage": k, "ms": ms})).collect::<Vec<_>>(),
        });
    }
    v
}

/// Summary plus one entry per frame.
pub fn full(scene: &Scene, sim: &Simulation) -> Value {
    let mut frames = vec![
        json!({"frame": 0, "residual": 0.0, "relative_residual": 0.0, "step_ms": 0.0, "iterations": 0, "max_displacement": 0.0}),
    ];
    for (k, s) in sim.steps.iter().enumerate() {
        frames.push(json!({
            "frame": k + 1,
            "residual": s.residual,
            "relative_residual": s.relative_residual,
            "step_ms": sim.step_ms[k],
            "iterations": s.iterations,
            "max_displacement": sim.max_displacement[k + 1],
        }));
    }
    json!({"schema_version": SCHEMA_VERSION, "kind": "run", "summary": summary(scene, sim), "frames": frames})
}
