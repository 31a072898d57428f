//! `overtone bench`: ms/step of the full-order solver on the seed's beams and the 3D scenes.

use std::path::Path;

use anyhow::Result;
use overtone::scene::{metronome_beam, simulate_full, ElasticModel, MetronomeBeam};

use crate::report::median as median_ms;
use crate::scenes::example_path;

/// The seed's five beam resolutions (grid vertices along × across).
const BEAMS: [(usize, usize); 5] = [(40, 5), (70, 7), (100, 8), (140, 9), (180, 10)];
const SCENES_3D: [&str; 4] = ["sphere", "elephant", "fish", "frog"];

pub fn run(out: Option<&Path>, frames: usize) -> Result<()> {
    let mut rows = vec![
        "| scene | vertices | elements | precompute ms | full ms/step (median) | max relative residual |".to_string(),
        "|---|---:|---:|---:|---:|---:|".to_string(),
    ];
    let mut push = |name: String, sc: &overtone::scene::Scene| -> Result<()> {
        let sim = simulate_full(sc, 10, None)?;
        let row = format!(
            "| {name} | {} | {} | {:.1} | {:.3} | {:.1e} |",
            sc.mesh.n_vertices(),
            sc.mesh.n_elements(),
            sim.precompute_ms,
            median_ms(&sim.step_ms),
            sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max)
        );
        println!("{row}");
        rows.push(row);
        Ok(())
    };
    println!(
        "{}\n{}",
        "| scene | vertices | elements | precompute ms | full ms/step (median) | max relative residual |",
        "|---|---:|---:|---:|---:|---:|"
    );
    for (w, h) in BEAMS {
        let sc = metronome_beam(MetronomeBeam {
            w,
            h,
            ..Default::default()
        })?;
        push(format!("metronome {w}x{h}"), &sc)?;
    }
    for name in SCENES_3D {
        let mut sc =
            overtone::scene::load_scene(&example_path(&format!("complementary-dynamics-cpp/{name}/{name}.json")))?;
        let label = if sc.model != ElasticModel::Arap {
            sc.model = ElasticModel::Arap;
            format!("{name} (ARAP in place of {})", "neohookean")
        } else {
            name.to_string()
        };
        sc.frames.truncate(frames.max(2));
        push(label, &sc)?;
    }
    if let Some(p) = out {
        overtone::io::write_atomically(p, (rows.join("\n") + "\n").as_bytes())?;
    }
    Ok(())
}
