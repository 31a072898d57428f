//! Shared driver of the shape-matching examples: build or read a body, add example poses, drop
//! it on the floor, write a PC2 cache and a JSON report with per-step timings.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use overtone::shape_matching::{
    read_pose, rigid_residual, s_bend_pose, twist_pose, Body, ExampleGoal, ManifoldScope, ShapeMatchingParams,
    ShapeMatchingSolver,
};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Built {
    /// No example (plain shape matching).
    None,
    /// The twist example.
    Twist,
    /// The S-shaped example.
    S,
    /// Both.
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Goal {
    /// The seed's eq. (3): R S* q + c.
    Stretch,
    /// Example region shapes (exact examples).
    Shape,
}

#[derive(Args, Debug)]
pub struct Common {
    /// Rest body from a file (.mesh with tetrahedra, or .obj / triangle .mesh surface) instead of
    /// the built-in one.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Example pose files (.mesh / .obj, same vertex order as the rest body); replaces --examples.
    #[arg(long = "example-file")]
    pub example_files: Vec<PathBuf>,
    /// Built-in example poses (twist and/or S shape) for the built-in body.
    #[arg(long, value_enum, default_value = "twist")]
    pub examples: Built,
    /// Blend toward the examples (the seed uses 0.995).
    #[arg(long, default_value_t = 0.995)]
    pub beta: f64,
    /// `global` or `per-region`.
    #[arg(long, default_value = "global")]
    pub manifold: String,
    #[arg(long, value_enum, default_value = "stretch")]
    pub goal: Goal,
    /// Stiffness alpha in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub alpha: f64,
    /// Time step (s). The cache keeps one frame per 1/60 s.
    #[arg(long, default_value_t = 1.0 / 240.0)]
    pub dt: f64,
    /// Region size in rings.
    #[arg(long, default_value_t = 1)]
    pub rings: usize,
    /// Density (mass per volume; per particle for surfaces).
    #[arg(long, default_value_t = 1000.0)]
    pub density: f64,
    /// Steps.
    #[arg(long, default_value_t = 1200)]
    pub steps: usize,
    /// Height of the drop (m) of the body's lowest point.
    #[arg(long, default_value_t = 0.5)]
    pub drop: f64,
    /// PC2 cache of every step's positions.
    #[arg(long)]
    pub out: PathBuf,
    /// JSON report.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Timing repeats (the report gives the fastest run's median step).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
}

/// `(x, y, z)` → `(y, x, z)`: lets the bar-along-x example poses act on a body along y.
#[allow(dead_code)] // used by the cylinder only
pub fn swap_xy(x: &[f64]) -> Vec<f64> {
    x.chunks_exact(3).flat_map(|p| [p[1], p[0], p[2]]).collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn rows(x: &[f64]) -> Vec<[f64; 3]> {
    x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// The start pose: the rest pose turned by 0.3 rad about z and 0.2 rad about x, lifted so its
/// lowest point is `drop` above the floor.
fn start_pose(rest: &[f64], drop: f64) -> Vec<f64> {
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    let (c2, s2) = (0.2f64.cos(), 0.2f64.sin());
    let mut out: Vec<f64> = rest
        .chunks_exact(3)
        .flat_map(|p| {
            let (x, y, z) = (c * p[0] - s * p[1], s * p[0] + c * p[1], p[2]);
            [x, c2 * y - s2 * z, s2 * y + c2 * z]
        })
        .collect();
    let low = out.chunks_exact(3).map(|p| p[1]).fold(f64::INFINITY, f64::min);
    for p in out.chunks_exact_mut(3) {
        p[1] += drop - low;
    }
    out
}

/// Runs a scene and writes its outputs. `built_in` makes the default body and its examples.
pub fn run(
    name: &str,
    args: &Common,
    built_in: impl Fn() -> Result<Body>,
    built_in_examples: impl Fn(&[f64], Built) -> Vec<(String, Vec<f64>)>,
    seed_ms: (f64, f64),
) -> Result<()> {
    let body = match &args.mesh {
        Some(p) => Body::load(p, args.density, args.rings).with_context(|| format!("reading {}", p.display()))?,
        None => built_in()?,
    };
    let examples: Vec<(String, Vec<f64>)> = if !args.example_files.is_empty() {
        args.example_files
            .iter()
            .map(|p| Ok((p.display().to_string(), read_pose(p)?)))
            .collect::<Result<_>>()?
    } else if args.mesh.is_some() && args.examples != Built::None {
        bail!("give --example-file poses for a body read from a file (or --examples none)");
    } else {
        built_in_examples(&body.rest, args.examples)
    };
    let params = ShapeMatchingParams {
        alpha: args.alpha,
        dt: args.dt,
        ..ShapeMatchingParams::default()
    };
    let scope = ManifoldScope::parse(&args.manifold)?;
    let make = |with_examples: bool| -> Result<ShapeMatchingSolver> {
        let mut sm = ShapeMatchingSolver::new(&body.rest, &body.masses, body.regions.clone(), params.clone())?;
        if with_examples && !examples.is_empty() {
            let poses: Vec<Vec<f64>> = examples.iter().map(|e| e.1.clone()).collect();
            sm.set_examples(&poses, scope.clone(), args.beta)?;
            sm.set_example_goal(match args.goal {
                Goal::Stretch => ExampleGoal::Stretch,
                Goal::Shape => ExampleGoal::Shape,
            });
        }
        let start = start_pose(&body.rest, args.drop);
        sm.set_state(&start, &vec![0.0; start.len()])?;
        Ok(sm)
    };
    // Timing: the whole run, `repeats` times, with and without the examples (t_sm).
    let time_run = |with_examples: bool| -> Result<f64> {
        let mut best = f64::INFINITY;
        for _ in 0..args.repeats.max(1) {
            let mut sm = make(with_examples)?;
            let mut ms = Vec::with_capacity(args.steps);
            for _ in 0..args.steps {
                let t = Instant::now();
                sm.step()?;
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            best = best.min(median(&mut ms));
        }
        Ok(best)
    };
    let t_sm = time_run(false)?;
    let t_tot = if examples.is_empty() { t_sm } else { time_run(true)? };

    let name = match &args.mesh {
        Some(p) => p
            .file_stem()
            .map_or(name.to_string(), |s| s.to_string_lossy().into_owned()),
        None => name.to_string(),
    };
    let name = name.as_str();
    let mut sm = make(true)?;
    let n = body.n_particles();
    let rest_rows = rows(&body.rest);
    let mut frames = vec![sm.positions().as_flattened().to_vec()];
    let mut per_step = Vec::new();
    let every = ((1.0 / 60.0) / args.dt).round().max(1.0) as usize;
    for k in 0..args.steps {
        sm.step()?;
        if (k + 1) % every == 0 {
            frames.push(sm.positions().as_flattened().to_vec());
        }
        if (k + 1) % (10 * every) == 0 || k + 1 == args.steps {
            let dist: Vec<f64> = examples
                .iter()
                .map(|(_, e)| rigid_residual(&rows(e), sm.positions(), &body.masses))
                .collect();
            per_step.push(json!({
                "step": k + 1,
                "contacts": sm.contacts(),
                "residual_to_rest": rigid_residual(&rest_rows, sm.positions(), &body.masses),
                "residual_to_examples": dist,
                "weights": sm.example_weights(),
            }));
        }
    }
    check_dir(&args.out)?;
    overtone::io::write_pc2(&args.out, 0.0, 1.0, n, &frames)?;
    let summary = json!({
        "scene": name,
        "particles": n,
        "regions": sm.regions().n_regions(),
        "region_slots": sm.regions().n_slots(),
        "examples": examples.iter().map(|e| e.0.clone()).collect::<Vec<_>>(),
        "beta": args.beta,
        "manifold": scope.name(),
        "goal": format!("{:?}", args.goal),
        "alpha": args.alpha,
        "dt": params.dt,
        "steps": args.steps,
        "frames_in_cache": frames.len(),
        "threads": rayon::current_num_threads(),
        "t_sm_ms": t_sm,
        "t_proj_ms": t_tot - t_sm,
        "t_tot_ms": t_tot,
        "seed_table1_ms": {"t_sm": seed_ms.0, "t_tot": seed_ms.1, "machine": "Core i7 M620 2.66 GHz (2010)"},
        "speedup_vs_seed": seed_ms.1 / t_tot,
    });
    println!(
        "{name}: {n} particles, {} regions | per step: t_sm {:.4} ms, t_proj {:.4} ms, t_tot {:.4} ms (seed Table 1: {:.2} / {:.2} ms, {:.1}x faster)",
        sm.regions().n_regions(),
        t_sm,
        t_tot - t_sm,
        t_tot,
        seed_ms.0,
        seed_ms.1,
        seed_ms.1 / t_tot
    );
    if let Some(r) = &args.report {
        check_dir(r)?;
        let report = json!({"summary": summary, "samples": per_step});
        overtone::io::write_atomically(r, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    println!("wrote {}", args.out.display());
    Ok(())
}

fn check_dir(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    anyhow::ensure!(dir.is_dir(), "output folder {} does not exist", dir.display());
    Ok(())
}

/// The built-in example poses of a bar along x.
pub fn bar_examples(rest: &[f64], which: Built) -> Vec<(String, Vec<f64>)> {
    let mut out = Vec::new();
    if matches!(which, Built::Twist | Built::Both) {
        out.push((
            "twist (pi/2 end to end)".to_string(),
            twist_pose(rest, std::f64::consts::FRAC_PI_2),
        ));
    }
    if matches!(which, Built::S | Built::Both) {
        out.push(("S shape (tangent swing 0.6 rad)".to_string(), s_bend_pose(rest, 0.6)));
    }
    out
}
