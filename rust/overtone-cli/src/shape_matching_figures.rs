//! `overtone figures`: the shape-matching paper's figures (Koyama et al. 2013, Fig. 8, 9, 12)
//! run with their twins without examples, measured and drawn.
//!
//! Per figure `F` (see [`overtone::shape_matching::paper_figures`]) it writes into the output
//! folder `F.png` (one row per body, panels at the instants of largest twist or S-bend of the
//! bodies with examples and at the end, every panel at one scale), `F.json` (per body the
//! twist, bend and S-bend in degrees and the distance to the rest shape and to each example
//! every 1/60 s, and their summary) and `F-K.pc2` (body `K`'s particles every 1/60 s).

use std::path::Path;

use anyhow::{Context, Result};
use overtone::shape_matching::paper_figures::{figure, run_body, FigureRun, PaperFigure};
use serde_json::json;

use crate::output_paths::{self, Kind, Output};
use crate::preview::{frames_of_largest_motion, write_figure_png, FigureRow};

/// Body colours, the twin without examples first.
const COLOURS: [[f64; 3]; 4] = [
    [178.0, 178.0, 186.0],
    [70.0, 140.0, 200.0],
    [222.0, 128.0, 60.0],
    [110.0, 170.0, 90.0],
];

/// Runs the figures named in `only` (every figure when empty) into `out_dir`.
pub fn run(out_dir: &Path, only: &[String], force: bool) -> Result<()> {
    let figures: Vec<PaperFigure> = if only.is_empty() {
        PaperFigure::ALL.to_vec()
    } else {
        only.iter()
            .map(|name| {
                PaperFigure::ALL
                    .into_iter()
                    .find(|f| f.name() == name || f.name().split('-').next() == Some(name.as_str()))
                    .with_context(|| {
                        format!(
                            "unknown figure `{name}`; known: {}",
                            PaperFigure::ALL.map(|f| f.name()).join(", ")
                        )
                    })
            })
            .collect::<Result<_>>()?
    };
    output_paths::check(
        &[],
        &[Output {
            flag: "--out-dir",
            path: out_dir,
            kind: Kind::Folder,
        }],
        force,
    )?;
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    for f in figures {
        let setup = figure(f)?;
        let runs: Vec<FigureRun> = setup
            .bodies
            .iter()
            .map(|b| Ok(run_body(&setup, b)?))
            .collect::<Result<_>>()?;
        let stem = f.name();
        // Files first checked, then written.
        let png = out_dir.join(format!("{stem}.png"));
        let report = out_dir.join(format!("{stem}.json"));
        let caches: Vec<_> = (0..runs.len())
            .map(|k| out_dir.join(format!("{stem}-{k}.pc2")))
            .collect();
        let mut outputs = vec![
            Output {
                flag: "the figure's picture",
                path: &png,
                kind: Kind::Png,
            },
            Output {
                flag: "the figure's report",
                path: &report,
                kind: Kind::Report,
            },
        ];
        outputs.extend(caches.iter().map(|p| Output {
            flag: "a figure body's cache",
            path: p,
            kind: Kind::Pc2,
        }));
        output_paths::check(&[], &outputs, force)?;

        // Instants: where the effect of the examples (the largest |twist| + |S-bend| over the
        // bodies with examples) first reaches half its largest value, the two instants of
        // largest effect (an eighth of the run apart), and the end.
        let n = runs[0].times.len();
        let effect: Vec<f64> = (0..n)
            .map(|i| {
                runs.iter()
                    .zip(&setup.bodies)
                    .filter(|(_, b)| !b.examples.is_empty())
                    .map(|(r, _)| r.angles[i].twist.abs() + r.angles[i].s_bend.abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        let top = effect.iter().cloned().fold(0.0, f64::max);
        let mut picks = frames_of_largest_motion(&effect, 2, (n / 8).max(1));
        picks.extend(effect.iter().position(|&e| e >= 0.5 * top));
        picks.push(n - 1);
        picks.sort_unstable();
        picks.dedup();
        let rows: Vec<FigureRow<'_>> = runs
            .iter()
            .zip(&setup.bodies)
            .enumerate()
            .map(|(k, (r, b))| FigureRow {
                label: b.name.clone(),
                triangles: &b.body.surface,
                frames: picks.iter().map(|&i| r.frames[i].as_slice()).collect(),
                captions: picks
                    .iter()
                    .map(|&i| {
                        let a = r.angles[i];
                        format!(
                            "t {:.2} s: twist {:.0}°, S {:.0}°, bend {:.0}°",
                            r.times[i],
                            a.twist.to_degrees(),
                            a.s_bend.to_degrees(),
                            a.bend.to_degrees()
                        )
                    })
                    .collect(),
                colour: COLOURS[k % COLOURS.len()],
            })
            .collect();
        let floor = setup.params.floor.map(|fl| (fl.normal, fl.offset));
        write_figure_png(&png, f.title(), &rows, floor)?;

        let deg = |v: &dyn Fn(&FigureRun) -> Vec<f64>, r: &FigureRun| -> Vec<f64> {
            v(r).into_iter().map(|x| (x.to_degrees() * 1e3).round() / 1e3).collect()
        };
        let largest = |v: &[f64]| v.iter().map(|x| x.abs()).fold(0.0, f64::max);
        let bodies: Vec<_> = runs
            .iter()
            .zip(&setup.bodies)
            .map(|(r, b)| {
                let twist = deg(&|r| r.angles.iter().map(|a| a.twist).collect(), r);
                let bend = deg(&|r| r.angles.iter().map(|a| a.bend).collect(), r);
                let s_bend = deg(&|r| r.angles.iter().map(|a| a.s_bend).collect(), r);
                json!({
                    "name": b.name,
                    "particles": b.body.n_particles(),
                    "examples": b.examples.len(),
                    "manifold": if b.examples.is_empty() { "none" } else { b.scope.name() },
                    "beta": b.beta,
                    "goal": format!("{:?}", b.goal),
                    "held_particles": b.held.len(),
                    "summary": {
                        "largest_twist_deg": largest(&twist),
                        "largest_s_bend_deg": largest(&s_bend),
                        "largest_bend_deg": largest(&bend),
                        "final_twist_deg": twist[n - 1],
                        "final_s_bend_deg": s_bend[n - 1],
                        "final_bend_deg": bend[n - 1],
                        "final_distance_to_rest": r.distance_to_rest[n - 1],
                        "final_distance_to_examples": r.distance_to_examples[n - 1],
                    },
                    "series": {
                        "time_s": r.times,
                        "twist_deg": twist,
                        "bend_deg": bend,
                        "s_bend_deg": s_bend,
                        "distance_to_rest": r.distance_to_rest,
                        "distance_to_examples": r.distance_to_examples,
                    },
                })
            })
            .collect();
        let doc = json!({
            "figure": stem,
            "title": f.title(),
            "dt": setup.params.dt,
            "alpha": setup.params.alpha,
            "damping": setup.params.damping,
            "steps": setup.steps,
            "angles": "degrees; twist: end cap against end cap about the bar's axis; bend: far end's tangent against the near end's; S-bend: the S amplitude (0 for a uniform bend); distances: mass-weighted RMS after the best rigid fit (m)",
            "picture_instants_s": picks.iter().map(|&i| runs[0].times[i]).collect::<Vec<_>>(),
            "bodies": bodies,
        });
        overtone::io::write_atomically(&report, serde_json::to_string_pretty(&doc)?.as_bytes())?;
        for ((r, b), path) in runs.iter().zip(&setup.bodies).zip(&caches) {
            overtone::io::write_pc2(path, 0.0, 1.0, b.body.n_particles(), &r.frames)?;
        }
        out!("{}", f.title());
        for (r, b) in runs.iter().zip(&setup.bodies) {
            let peak = |g: &dyn Fn(&overtone::shape_matching::BarAngles) -> f64| {
                r.angles.iter().map(|a| g(a).abs()).fold(0.0, f64::max).to_degrees()
            };
            let last = r.angles[n - 1];
            out!(
                "  {:36} largest twist {:6.1}°, S-bend {:5.1}°, bend {:5.1}° | at {:.1} s: twist {:6.1}°, S-bend {:5.1}°",
                b.name,
                peak(&|a| a.twist),
                peak(&|a| a.s_bend),
                peak(&|a| a.bend),
                r.times[n - 1],
                last.twist.to_degrees(),
                last.s_bend.to_degrees()
            );
        }
        out!("  wrote {} (+ .json, .pc2 per body)", png.display());
    }
    Ok(())
}
