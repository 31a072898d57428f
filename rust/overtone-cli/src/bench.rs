//! `overtone bench`: ms/step of the full-order solver on the seed's beams and the 3D scenes.
//!
//! Each scene is simulated `repeats` times; the table gives the smallest of the per-run
//! median step times (the machine is shared, and the minimum of medians is the figure least
//! disturbed by other load), and the precompute time of that run.

use std::path::Path;

use anyhow::Result;
use overtone::scene::{metronome_beam, simulate_full, ElasticModel, MetronomeBeam, Scene};

use crate::report::median;
use crate::scenes::example_path;

/// The seed's five beam resolutions (grid vertices along × across) and the full-order ms/step
/// the seed printed for them (simkit, Python, another machine: context, not a same-run ratio).
const BEAMS: [((usize, usize), f64); 5] = [
    ((40, 5), 5.0),
    ((70, 7), 12.7),
    ((100, 8), 20.3),
    ((140, 9), 32.2),
    ((180, 10), 46.3),
];
const SCENES_3D: [&str; 4] = ["sphere", "elephant", "fish", "frog"];

fn measure(sc: &Scene, repeats: usize) -> Result<(f64, f64, f64)> {
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for _ in 0..repeats.max(1) {
        let sim = simulate_full(sc, 10, None)?;
        // Skip the first two steps (caches and thread pool warming up).
        let m = median(&sim.step_ms[sim.step_ms.len().min(2)..]);
        let worst = sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max);
        if m < best.0 {
            best = (m, sim.precompute_ms, worst);
        }
    }
    Ok(best)
}

pub fn run(out: Option<&Path>, frames: usize, repeats: usize) -> Result<()> {
    let header = [
        "| scene | vertices | elements | precompute ms | full ms/step | seed's simkit ms/step (published) | max relative residual |".to_string(),
        "|---|---:|---:|---:|---:|---:|---:|".to_string(),
    ];
    println!("{}\n{}", header[0], header[1]);
    let mut rows = header.to_vec();
    let mut emit = |row: String| {
        println!("{row}");
        rows.push(row);
    };
    for ((w, h), published) in BEAMS {
        let sc = metronome_beam(MetronomeBeam {
            w,
            h,
            ..Default::default()
        })?;
        let (ms, pre, res) = measure(&sc, repeats)?;
        emit(format!(
            "| metronome {w}x{h} | {} | {} | {pre:.1} | {ms:.3} | {published} | {res:.1e} |",
            sc.mesh.n_vertices(),
            sc.mesh.n_elements()
        ));
    }
    for name in SCENES_3D {
        let mut sc =
            overtone::scene::load_scene(&example_path(&format!("complementary-dynamics-cpp/{name}/{name}.json")))?;
        let label = if sc.model != ElasticModel::Arap {
            let asked = sc.model.name();
            sc.model = ElasticModel::Arap;
            format!("{name} (ARAP in place of {asked})")
        } else {
            name.to_string()
        };
        sc.frames.truncate(frames.max(4));
        let (ms, pre, res) = measure(&sc, repeats)?;
        emit(format!(
            "| {label} | {} | {} | {pre:.1} | {ms:.3} | – | {res:.1e} |",
            sc.mesh.n_vertices(),
            sc.mesh.n_elements()
        ));
    }
    if let Some(p) = out {
        overtone::io::write_atomically(p, (rows.join("\n") + "\n").as_bytes())?;
    }
    Ok(())
}
