//! `overtone`: the command-line front door (run a scene, the demo, the benchmark table).

mod bench;
mod report;
mod scenes;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "overtone",
    version,
    about = "Complementary-dynamics secondary motion for skinned characters"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Solver {
    /// Full-order complementary dynamics: ARAP local/global, or Newton for neo-Hookean scenes.
    Full,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene and write a PC2 cache (final positions of every frame) and a report.
    Run {
        /// Scene file (`overtone-scene/1` JSON or a reference-release scene JSON), or a built-in
        /// scene: `metronome` or `metronome:WxH`.
        scene: String,
        #[arg(long, value_enum, default_value = "full")]
        solver: Solver,
        /// PC2 output (positions of every frame, the first included).
        #[arg(long)]
        out: PathBuf,
        /// JSON report (per-frame residual and step time, and a summary).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Iterations per step: local/global (ARAP, default 10) or at most this many Newton
        /// iterations (neo-Hookean, default 30).
        #[arg(long)]
        iterations: Option<usize>,
        /// Stop iterating early: ARAP when the relative update falls below this; Newton when
        /// the step length falls below this (default 1e-6).
        #[arg(long)]
        tolerance: Option<f64>,
        /// Override the scene's material model (e.g. `arap` to run a neo-Hookean scene with ARAP).
        #[arg(long)]
        model: Option<String>,
        /// Leak field: a constant value of D everywhere (e.g. 1 for no momentum leak).
        #[arg(long)]
        leak_constant: Option<f64>,
    },
    /// Run the built-in 3D demo (the reference release's elephant) into a folder.
    Demo {
        /// Output folder.
        #[arg(long, default_value = "overtone-demo")]
        out_dir: PathBuf,
    },
    /// Print the ms/step table for the metronome beams and the 3D reference scenes.
    Bench {
        /// Also write the table (Markdown) here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Frames per 3D scene (the beams always run their 200 steps).
        #[arg(long, default_value_t = 60)]
        frames: usize,
        /// Runs per scene; the table reports the fastest run's median step.
        #[arg(long, default_value_t = 3)]
        repeats: usize,
    },
    /// Write a scene (file or built-in) as `overtone-scene/1` JSON.
    Export {
        scene: String,
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    match Cli::parse().command {
        Command::Run {
            scene,
            solver: Solver::Full,
            out,
            report,
            iterations,
            tolerance,
            model,
            leak_constant,
        } => {
            let mut sc = scenes::load(&scene)?;
            if let Some(m) = model {
                sc.model = overtone::scene::ElasticModel::parse(&m)?;
            }
            if let Some(c) = leak_constant {
                sc.momentum_weights = Some(vec![c; sc.mesh.n_vertices()]);
            }
            let iterations = iterations.unwrap_or(match sc.model {
                overtone::scene::ElasticModel::Arap => 10,
                overtone::scene::ElasticModel::NeoHookean => 30,
            });
            run(&sc, &out, report.as_deref(), iterations, tolerance)?;
            Ok(())
        }
        Command::Demo { out_dir } => demo(&out_dir),
        Command::Bench { out, frames, repeats } => bench::run(out.as_deref(), frames, repeats),
        Command::Export { scene, out } => {
            let sc = scenes::load(&scene)?;
            overtone::scene::write_overtone_scene(&out, &sc)?;
            println!("wrote {}", out.display());
            Ok(())
        }
    }
}

/// Checks that the folder an output goes into exists, before any work is done.
fn check_output(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    anyhow::ensure!(dir.is_dir(), "output folder {} does not exist", dir.display());
    Ok(())
}

fn run(
    scene: &overtone::scene::Scene,
    out: &Path,
    report_path: Option<&Path>,
    iterations: usize,
    tolerance: Option<f64>,
) -> Result<overtone::scene::Simulation> {
    check_output(out)?;
    if let Some(r) = report_path {
        check_output(r)?;
    }
    let sim = overtone::scene::simulate_full(scene, iterations, tolerance)
        .with_context(|| format!("simulating scene `{}`", scene.name))?;
    overtone::io::write_pc2(out, 1.0, 1.0, scene.mesh.n_vertices(), &sim.positions)?;
    let summary = report::summary(scene, &sim);
    if let Some(r) = report_path {
        overtone::io::write_atomically(r, serde_json::to_string_pretty(&report::full(scene, &sim))?.as_bytes())?;
    }
    println!(
        "{}: {} vertices, {} elements, {} frames | precompute {:.1} ms | median step {:.3} ms | max relative residual {:.2e}",
        scene.name,
        scene.mesh.n_vertices(),
        scene.mesh.n_elements(),
        scene.frames.len(),
        summary["precompute_ms"].as_f64().unwrap_or(0.0),
        summary["median_step_ms"].as_f64().unwrap_or(0.0),
        summary["max_relative_residual"].as_f64().unwrap_or(0.0),
    );
    Ok(sim)
}

fn demo(out_dir: &Path) -> Result<()> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let scene_path = scenes::example_path("complementary-dynamics-cpp/elephant/elephant.json");
    let scene = overtone::scene::load_scene(&scene_path)?;
    let pc2 = out_dir.join("elephant.pc2");
    let rep = out_dir.join("elephant_report.json");
    let mesh = out_dir.join("elephant_scene.json");
    run(&scene, &pc2, Some(&rep), 10, None)?;
    overtone::scene::write_overtone_scene(&mesh, &scene)?;
    println!("demo written to {}:", out_dir.display());
    for p in [&pc2, &rep, &mesh] {
        println!("  {}", p.display());
    }
    Ok(())
}
