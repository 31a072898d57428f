//! Seed tutorial 17 as a runnable experiment: a neo-Hookean cantilever in the full space, an LMA
//! subspace and a skinning-eigenmode subspace, the rotation test, and the timing of one
//! full-space gradient+Hessian evaluation and one full linear solve on the 120 × 30 beam.
//!
//! `cargo run --release -p overtone-tutorial17 --example cantilever -- --json OUT.json [--plots DIR]`
//!
//! The plots use DejaVu Sans (`rust/overtone/examples/assets/DejaVuSans.ttf`, the copy the CLI's
//! previews also embed; Bitstream Vera licence in `rust/overtone/examples/assets/DejaVuSans-LICENSE.txt`),
//! rendered by plotters without system libraries.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use overtone::solve::SparseCholesky;
use overtone_tutorial17::cantilever::{run_experiment, Beam, CantileverConfig, SpaceKind};
use serde_json::json;

#[derive(Parser)]
struct Args {
    /// Where to write the numbers (JSON).
    #[arg(long)]
    json: PathBuf,
    /// Folder for PNG plots of the curves (created if missing).
    #[arg(long)]
    plots: Option<PathBuf>,
    /// Timing repetitions (the minimum is reported).
    #[arg(long, default_value_t = 20)]
    repeats: usize,
}

/// The seed's printed timings of the 120 × 30 beam (Python/SciPy), milliseconds.
const SEED_EVAL_MS: f64 = 23.0;
const SEED_SOLVE_MS: f64 = 12.7;

/// Deterministic standard normal samples (xorshift64* and Box-Muller).
struct Normal(u64);
impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn sample(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn min_time_ms(repeats: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(best)
}

/// Times the full-space evaluation and solve on the high-resolution beam, as the seed does: a
/// randomly perturbed state (`X + 0.05·N(0,1)`), inertial target at rest.
fn benchmark(repeats: usize) -> Result<serde_json::Value> {
    let cfg = CantileverConfig {
        nx: 120,
        ny: 30,
        ..Default::default()
    };
    let beam = Beam::new(&cfg)?;
    let mut sim = beam.simulator(&cfg, beam.subspace(&cfg, SpaceKind::Full)?)?;
    sim.set_inertial_target(&beam.rest)?;
    let mut rng = Normal(0x9E37_79B9_7F4A_7C15);
    let x: Vec<f64> = beam.rest.iter().map(|v| v + 0.05 * rng.sample()).collect();
    let nd = x.len();
    let mut g = vec![0.0; nd];
    // Warm up (allocations, first symbolic analysis).
    sim.full_gradient(&x, &mut g)?;
    sim.full_hessian(&x)?;
    let t = Instant::now();
    let mut rhs = g.clone();
    sim.full_solve(&mut rhs)?;
    let first_solve_ms = t.elapsed().as_secs_f64() * 1e3;
    let eval_ms = min_time_ms(repeats, || {
        sim.full_gradient(&x, &mut g)?;
        sim.full_hessian(&x)?;
        Ok(())
    })?;
    let solve_ms = min_time_ms(repeats, || {
        rhs.copy_from_slice(&g);
        sim.full_solve(&mut rhs)?;
        Ok(())
    })?;
    // The previous implementation (faer's generic supernodal numeric LLᵀ, which permutes a copy
    // of the matrix per factorization) on the same Hessian, timed in the same run.
    let (h_owned, dz_faer, faer_solve_ms) = {
        let h = sim.full_hessian(&x)?;
        let h_owned = faer::sparse::SparseColMat::<usize, f64>::new(h.symbolic().to_owned()?, h.val().to_vec());
        let mut chol = SparseCholesky::new_supernodal(h_owned.as_ref(), 1, "Newton system (faer baseline)")?;
        let mut dz = g.clone();
        let ms = min_time_ms(repeats, || {
            dz.copy_from_slice(&g);
            chol.refactor_ref(h_owned.as_ref())?;
            chol.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut dz, nd, 1));
            dz.iter_mut().for_each(|v| *v = -*v);
            Ok(())
        })?;
        (h_owned, dz, ms)
    };
    // Both solutions against each other and the residual ‖H dz + g‖ / ‖g‖ of the new one.
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    let diff: Vec<f64> = rhs.iter().zip(&dz_faer).map(|(a, b)| a - b).collect();
    let solutions_rel_diff = norm(&diff) / norm(&dz_faer);
    let mut res = g.clone();
    {
        let (cp, ri, v) = (h_owned.col_ptr(), h_owned.row_idx(), h_owned.val());
        for c in 0..nd {
            for q in cp[c]..cp[c + 1] {
                res[ri[q]] += v[q] * rhs[c];
            }
        }
    }
    let residual_rel = norm(&res) / norm(&g);
    let inverted = {
        let n = beam.mesh.n_vertices();
        (0..beam.mesh.n_elements())
            .filter(|&e| {
                let el = beam.mesh.element(e);
                let p = |a: usize, i: usize| x[i * n + el[a]];
                (p(1, 0) - p(0, 0)) * (p(2, 1) - p(0, 1)) - (p(1, 1) - p(0, 1)) * (p(2, 0) - p(0, 0)) < 0.0
            })
            .count()
    };
    Ok(json!({
        "mesh": {"vertices": beam.mesh.n_vertices(), "triangles": beam.mesh.n_elements(), "dofs": nd},
        "inverted_triangles_in_state": inverted,
        "threads": rayon::current_num_threads(),
        "repeats": repeats,
        "eval_grad_hess_ms": eval_ms,
        "solve_ms": solve_ms,
        "solve_note": "one full_solve: numeric supernodal Cholesky refactorization of the assembled Newton Hessian (values scattered into the factor, LL^T) + forward and back substitution + negation; Hessian assembly is timed in eval_grad_hess_ms; the symbolic analysis (AMD ordering, supernodes, scatter maps) is done once per mesh (first_solve_with_symbolic_ms)",
        "solve_faer_baseline_ms": faer_solve_ms,
        "solve_faer_baseline_note": "the previous implementation on the same Hessian in the same run: faer 0.24 SymbolicCholesky::factorize_numeric_llt (supernodal, AMD) + solve_in_place",
        "solve_speedup_vs_faer_baseline": faer_solve_ms / solve_ms,
        "solve_relative_residual": residual_rel,
        "solutions_relative_difference": solutions_rel_diff,
        "first_solve_with_symbolic_ms": first_solve_ms,
        "seed_eval_ms": SEED_EVAL_MS,
        "seed_solve_ms": SEED_SOLVE_MS,
        "eval_speedup": SEED_EVAL_MS / eval_ms,
        "solve_speedup": SEED_SOLVE_MS / solve_ms,
        "solve_faer_baseline_speedup": SEED_SOLVE_MS / faer_solve_ms,
    }))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let cfg = CantileverConfig::default();
    let t = Instant::now();
    let r = run_experiment(&cfg).context("running the cantilever experiment")?;
    let experiment_s = t.elapsed().as_secs_f64();
    let timing = benchmark(args.repeats).context("timing the 120 x 30 beam")?;
    println!(
        "final tip height: full {:+.3}  LMA {:+.3}  skin {:+.3}  (seed: -3.48, -0.56, -3.01)",
        r.tip_full, r.tip_lma, r.tip_skin
    );
    println!(
        "rotation error: LMA peak {:.4} at {} deg (seed 0.342 at 180), skinning max {:.2e} (seed < 1e-9)",
        r.rot_err_lma_peak, r.rot_err_lma_peak_angle_deg, r.rot_err_skin_max
    );
    println!(
        "120x30 beam: eval {:.3} ms ({:.0}x the seed's {SEED_EVAL_MS} ms), solve {:.3} ms ({:.0}x the seed's {SEED_SOLVE_MS} ms)",
        timing["eval_grad_hess_ms"].as_f64().unwrap_or(f64::NAN),
        timing["eval_speedup"].as_f64().unwrap_or(f64::NAN),
        timing["solve_ms"].as_f64().unwrap_or(f64::NAN),
        timing["solve_speedup"].as_f64().unwrap_or(f64::NAN),
    );
    println!(
        "120x30 beam solve, same run: faer's numeric LLT {:.3} ms ({:.1}x the seed) -> {:.3} ms ({:.1}x); residual {:.1e}, solutions differ by {:.1e}",
        timing["solve_faer_baseline_ms"].as_f64().unwrap_or(f64::NAN),
        timing["solve_faer_baseline_speedup"].as_f64().unwrap_or(f64::NAN),
        timing["solve_ms"].as_f64().unwrap_or(f64::NAN),
        timing["solve_speedup"].as_f64().unwrap_or(f64::NAN),
        timing["solve_relative_residual"].as_f64().unwrap_or(f64::NAN),
        timing["solutions_relative_difference"].as_f64().unwrap_or(f64::NAN),
    );
    let out = json!({
        "tip_full": r.tip_full,
        "tip_lma": r.tip_lma,
        "tip_skin": r.tip_skin,
        "rot_err_lma_peak": r.rot_err_lma_peak,
        "rot_err_lma_peak_angle_deg": r.rot_err_lma_peak_angle_deg,
        "rot_err_skin_max": r.rot_err_skin_max,
        "eval_grad_hess_ms": timing["eval_grad_hess_ms"],
        "solve_ms": timing["solve_ms"],
        "timing_120x30": timing,
        "experiment_seconds": experiment_s,
        "seed": {"tip_full": -3.48, "tip_lma": -0.56, "tip_skin": -3.01, "rot_err_lma_peak": 0.342, "rot_err_skin_max": 7.2e-10},
        "config": r.config,
        "dofs": {"full": r.full.dofs, "lma": r.lma.dofs, "skinning": r.skinning.dofs},
        "area_ratio_final": {"full": r.full.area_ratio, "lma": r.lma.area_ratio, "skinning": r.skinning.area_ratio},
        "newton_iterations": {"full": r.full.newton_iterations, "lma": r.lma.newton_iterations, "skinning": r.skinning.newton_iterations},
        "unconverged_steps": {"full": r.full.unconverged_steps, "lma": r.lma.unconverged_steps, "skinning": r.skinning.unconverged_steps},
        "tip_heights": {"full": r.full.tip_heights, "lma": r.lma.tip_heights, "skinning": r.skinning.tip_heights},
        "rotation": r.rotation,
    });
    if let Some(dir) = args.json.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&args.json, serde_json::to_string_pretty(&out)?)
        .with_context(|| format!("writing {}", args.json.display()))?;
    println!("wrote {}", args.json.display());
    if let Some(dir) = args.plots {
        for p in plots::write(&dir, &r)? {
            println!("wrote {}", p.display());
        }
    }
    Ok(())
}

mod plots {
    use std::path::{Path, PathBuf};

    use anyhow::{anyhow, Context, Result};
    use overtone_tutorial17::cantilever::CantileverResults;
    use plotters::prelude::*;

    static FONT: &[u8] = include_bytes!("../../overtone/examples/assets/DejaVuSans.ttf");
    const FULL: RGBColor = RGBColor(0xd6, 0x27, 0x28);
    const LMA: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
    const SKIN: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
    /// Errors are drawn on a log axis; exact zeros are shown at this floor.
    const LOG_FLOOR: f64 = 1e-16;

    type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

    fn line_plot(path: &Path, title: &str, xlabel: &str, ylabel: &str, series: &[Series], log_y: bool) -> Result<()> {
        const SIZE: (u32, u32) = (900, 540);
        let mut rgb = vec![0u8; 3 * (SIZE.0 * SIZE.1) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
            let xs = series.iter().flat_map(|s| s.2.iter().map(|p| p.0));
            let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            let ys: Vec<f64> = series.iter().flat_map(|s| s.2.iter().map(|p| p.1)).collect();
            let (y0, y1) = ys
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| (a.min(y), b.max(y)));
            let mut chart = ChartBuilder::on(&root);
            chart
                .caption(title, ("sans-serif", 22))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(75);
            let fmt_y = |v: &f64| if log_y { format!("{v:.0e}") } else { format!("{v:.2}") };
            macro_rules! finish {
                ($c:expr) => {{
                    let mut c = $c;
                    c.configure_mesh()
                        .y_label_formatter(&fmt_y)
                        .x_label_formatter(&|v: &f64| format!("{v:.0}"))
                        .x_desc(xlabel)
                        .y_desc(ylabel)
                        .label_style(("sans-serif", 15))
                        .draw()
                        .map_err(|e| anyhow!("{e:?}"))?;
                    for (name, color, pts) in series {
                        let color = *color;
                        c.draw_series(LineSeries::new(pts.iter().cloned(), color.stroke_width(3)))
                            .map_err(|e| anyhow!("{e:?}"))?
                            .label(*name)
                            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
                    }
                    c.configure_series_labels()
                        .background_style(WHITE.mix(0.9))
                        .border_style(BLACK)
                        .label_font(("sans-serif", 16))
                        .position(SeriesLabelPosition::UpperRight)
                        .draw()
                        .map_err(|e| anyhow!("{e:?}"))?;
                }};
            }
            if log_y {
                let lo = y0.max(LOG_FLOOR);
                let c = chart
                    .build_cartesian_2d(x0..x1, (lo / 3.0..y1 * 3.0).log_scale())
                    .map_err(|e| anyhow!("{e:?}"))?;
                finish!(c);
            } else {
                let pad = 0.08 * (y1 - y0).max(1e-12);
                let c = chart
                    .build_cartesian_2d(x0..x1, y0 - pad..y1 + pad)
                    .map_err(|e| anyhow!("{e:?}"))?;
                finish!(c);
            }
            root.present().map_err(|e| anyhow!("{e:?}"))?;
        }
        write_rgb_png(path, SIZE, &rgb)
    }

    /// Encodes an 8-bit RGB buffer (row-major, `3·w·h` bytes) as a PNG file.
    fn write_rgb_png(path: &Path, (w, h): (u32, u32), rgb: &[u8]) -> Result<()> {
        let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc
            .write_header()
            .with_context(|| format!("writing {}", path.display()))?;
        writer
            .write_image_data(rgb)
            .with_context(|| format!("writing {}", path.display()))?;
        writer.finish().with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Writes `tip_height.png`, `rotation_error.png` (linear) and `rotation_error_log.png`.
    pub fn write(dir: &Path, r: &CantileverResults) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| anyhow!("the bundled font could not be loaded"))?;
        let steps = |h: &[f64]| h.iter().enumerate().map(|(k, &y)| (k as f64, y)).collect::<Vec<_>>();
        let tip = dir.join("tip_height.png");
        line_plot(
            &tip,
            "Cantilever tip height: full vs LMA vs skinning eigenmodes",
            "step",
            "tip height",
            &[
                ("full", FULL, steps(&r.full.tip_heights)),
                ("LMA (12 modes)", LMA, steps(&r.lma.tip_heights)),
                ("skinning (72 DOFs)", SKIN, steps(&r.skinning.tip_heights)),
            ],
            false,
        )?;
        let angles = &r.rotation.angles_deg;
        let pts = |e: &[f64]| {
            angles
                .iter()
                .cloned()
                .zip(e.iter().map(|v| v.max(LOG_FLOOR)))
                .collect::<Vec<_>>()
        };
        let rot = dir.join("rotation_error.png");
        line_plot(
            &rot,
            "Rotation reconstruction error (mass norm)",
            "rest-shape rotation (deg)",
            "relative error",
            &[
                ("LMA", LMA, pts(&r.rotation.error_lma)),
                ("skinning", SKIN, pts(&r.rotation.error_skinning)),
            ],
            false,
        )?;
        let rot_log = dir.join("rotation_error_log.png");
        line_plot(
            &rot_log,
            "Rotation reconstruction error (log scale)",
            "rest-shape rotation (deg)",
            "relative error",
            &[
                ("LMA", LMA, pts(&r.rotation.error_lma)),
                ("skinning", SKIN, pts(&r.rotation.error_skinning)),
            ],
            true,
        )?;
        Ok(vec![tip, rot, rot_log])
    }
}
