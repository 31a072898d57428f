//! `overtone figures`: the shape-matching paper's figures (Koyama et al. 2013, Fig. 8, 9, 12)
//! and the example-aware complementary-dynamics swing, run with their twins without examples,
//! measured and drawn.
//!
//! Per figure `F` (see [`overtone::figures`]) it writes into the output
//! folder `F.png` (one row per body, panels at the instants of largest twist or S-bend of the
//! bodies with examples and at the end, every panel at one scale), `F.json` (per body the
//! twist, bend and S-bend in degrees and the distance to the rest shape and to each example
//! every 1/60 s, and their summary) and `F-K.pc2` (body `K`'s particles every 1/60 s).

use std::path::Path;

use anyhow::{Context, Result};
use overtone::figures::{run_figure, FigureRun, PaperFigure};
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
        let outcome = run_figure(f)?;
        let runs: Vec<&FigureRun> = outcome.bodies.iter().map(|b| &b.run).collect();
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
                outcome
                    .bodies
                    .iter()
                    .filter(|b| b.examples > 0)
                    .map(|b| b.run.angles[i].twist.abs() + b.run.angles[i].s_bend.abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        let top = effect.iter().cloned().fold(0.0, f64::max);
        let mut picks = frames_of_largest_motion(&effect, 2, (n / 8).max(1));
        picks.extend(effect.iter().position(|&e| e >= 0.5 * top));
        picks.push(n - 1);
        picks.sort_unstable();
        picks.dedup();
        let rows: Vec<FigureRow<'_>> = outcome
            .bodies
            .iter()
            .enumerate()
            .map(|(k, b)| (k, &b.run, b))
            .map(|(k, r, b)| FigureRow {
                label: b.name.clone(),
                triangles: &b.surface,
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
        let floor = outcome.floor.map(|fl| (fl.normal, fl.offset));
        write_figure_png(&png, f.title(), &rows, floor)?;

        let deg = |v: &dyn Fn(&FigureRun) -> Vec<f64>, r: &FigureRun| -> Vec<f64> {
            v(r).into_iter().map(|x| (x.to_degrees() * 1e3).round() / 1e3).collect()
        };
        let largest = |v: &[f64]| v.iter().map(|x| x.abs()).fold(0.0, f64::max);
        let bodies: Vec<_> = outcome
            .bodies
            .iter()
            .map(|b| {
                let r = &b.run;
                let twist = deg(&|r| r.angles.iter().map(|a| a.twist).collect(), r);
                let bend = deg(&|r| r.angles.iter().map(|a| a.bend).collect(), r);
                let s_bend = deg(&|r| r.angles.iter().map(|a| a.s_bend).collect(), r);
                json!({
                    "name": b.name,
                    "particles": b.n_particles,
                    "examples": b.examples,
                    "method": b.method,
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
            "schema_version": crate::report::SCHEMA_VERSION,
            "kind": "shape_matching_figure",
            "figure": stem,
            "title": f.title(),
            "settings": outcome.settings.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "angles": "degrees; twist: end cap against end cap about the bar's axis; bend: far end's tangent against the near end's; S-bend: the S amplitude (0 for a uniform bend); distances: mass-weighted RMS after the best rigid fit (m)",
            "picture_instants_s": picks.iter().map(|&i| runs[0].times[i]).collect::<Vec<_>>(),
            "bodies": bodies,
        });
        overtone::io::write_atomically(&report, serde_json::to_string_pretty(&doc)?.as_bytes())?;
        for (b, path) in outcome.bodies.iter().zip(&caches) {
            overtone::io::write_pc2(path, 0.0, 1.0, b.n_particles, &b.run.frames)?;
        }
        out!("{}", f.title());
        for b in &outcome.bodies {
            let r = &b.run;
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
