//! `overtone`: the command-line front door (run a scene, the demo, the benchmark table).

/// `println!` that ignores a closed stdout (e.g. `overtone inspect f.ovt | head`) instead of
/// panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod bake;
mod bench;
mod cache_format;
#[cfg(test)]
mod cli_reference;
mod dynamics_args;
mod frame_outputs;
mod interrupt;
mod output_frames;
mod output_paths;
mod output_thread;
mod physics_clock;
mod preview;
mod report;
mod scenes;
mod shape_matching_figures;
mod solver_choice;
mod stage_clock;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use overtone::dynamics::FastParams;
use overtone::scene::SolverKind;
use solver_choice::{IterationFlags, SolverChoice};

#[derive(Parser)]
#[command(
    name = "overtone",
    version,
    about = "Complementary-dynamics secondary motion for skinned characters"
)]
struct Cli {
    /// Overwrite an existing output file even when it is not a file of the kind being written
    /// (e.g. `--out` naming a .glb). Inputs are never overwritten, with or without it.
    #[arg(long, global = true)]
    force: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene and write a PC2 cache (final positions of every frame) and a report.
    Run {
        /// Scene file (`overtone-scene/1` JSON or a reference-release scene JSON), or a built-in
        /// scene: `metronome` or `metronome:WxH`.
        scene: String,
        #[arg(long, value_enum, default_value = "full")]
        solver: SolverChoice,
        /// Cache of the positions of every frame, the first included; the extension chooses the
        /// format: .pc2, .mdd, .abc (Alembic), .usda, .usdc or .usd (binary USD).
        #[arg(long)]
        out: PathBuf,
        /// JSON report (per-frame residual and step time, and a summary).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Iterations per solve: local/global (local-global and fast solvers, default 10) or at
        /// most this many Newton iterations (newton, default 30).
        #[arg(long)]
        iterations: Option<usize>,
        /// Fast solver: skinning eigenmodes (default 10 in 2D, 16 in 3D).
        #[arg(long)]
        modes: Option<usize>,
        /// Fast solver: rotation clusters (default 20 in 2D, 100 in 3D).
        #[arg(long)]
        clusters: Option<usize>,
        /// Fast solver: precompute sidecar (.ovt) to load, or to write when missing or stale.
        #[arg(long)]
        sidecar: Option<PathBuf>,
        /// Stop iterating early: local/global when the relative update falls below this; Newton
        /// when the step length falls below this (default 1e-6).
        #[arg(long)]
        tolerance: Option<f64>,
        /// Override the scene's material model (e.g. `arap` to run a neo-Hookean scene with ARAP).
        #[arg(long)]
        model: Option<String>,
        /// Leak field: a constant value of D everywhere (e.g. 1 for no momentum leak).
        #[arg(long)]
        leak_constant: Option<f64>,
        #[command(flatten)]
        dynamics: dynamics_args::DynamicsArgs,
    },
    /// Run the built-in 3D demo (the reference release's elephant) into a folder.
    Demo {
        /// Output folder.
        #[arg(long, default_value = "overtone-demo")]
        out_dir: PathBuf,
    },
    /// Run the shape-matching paper's figures (Fig. 8 slope, Fig. 9 cylinders, Fig. 12 held
    /// cuboid) and the example-aware complementary-dynamics swing, each body beside its twin
    /// without examples: a picture, a report of twist and bend over time, and a PC2 per body.
    Figures {
        /// Output folder.
        #[arg(long, default_value = "overtone-figures")]
        out_dir: PathBuf,
        /// Only these figures (`fig8`, `fig9`, `fig12`, `cd`, or their full names); all by default.
        #[arg(long)]
        only: Vec<String>,
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
        /// Instead of the scene table: cost per frame against substeps (1, 2, 4, 8, automatic;
        /// fast and full solver) on this glTF character at 24 fps, as ratios against 1 substep
        /// measured in the same rounds (`--frames` frames, `--repeats` rounds).
        #[arg(long, value_name = "GLB", conflicts_with = "stiffness")]
        substeps: Option<PathBuf>,
        /// Instead of the scene table: the fast solver's cost per 24 fps frame on this glTF
        /// character on the 240 Hz physics clock at 1x, 10x and 100x the default Young's
        /// modulus (substeps, iterations, residual, peak, and the difference from 8 substeps
        /// per physics step; `--frames` frames, `--repeats` rounds).
        #[arg(long, value_name = "GLB")]
        stiffness: Option<PathBuf>,
        /// Instead of the scene table: every stage of a bind of these glTF characters (repeat
        /// the flag), cold (empty sidecar) and warm (the sidecar the cold bind wrote), best of
        /// `--repeats` rounds.
        #[arg(long, value_name = "GLB", conflicts_with_all = ["stiffness", "substeps"])]
        bind: Vec<PathBuf>,
    },
    /// Bake secondary motion of a glTF character (.glb/.gltf) or a scene into a point cache of
    /// the input mesh's own vertices, in their own order, one sample per frame.
    Bake {
        input: PathBuf,
        /// The cache; its extension chooses the format: .pc2, .mdd, .abc (Alembic), .usda,
        /// .usdc or .usd (binary USD). With several meshes (or a path without an extension) a
        /// folder (created if missing) holding one `<glTF node name>.pc2` per mesh.
        #[arg(long)]
        out: PathBuf,
        /// glTF mesh (node name) to bake; repeat for several (default: every mesh bound to the
        /// first skinned mesh's skeleton, simulated as one body).
        #[arg(long = "mesh")]
        meshes: Vec<String>,
        #[arg(long)]
        report: Option<PathBuf>,
        /// Precompute sidecar (.ovt): the character's lattice preparation and, with the fast
        /// solver, its reduced model; each loaded when it was made from the same inputs,
        /// (re)written otherwise.
        #[arg(long)]
        sidecar: Option<PathBuf>,
        /// Inclusive frame range `A..B` (the simulation starts at rest at frame A).
        #[arg(long, value_parser = bake::parse_range)]
        frames: Option<(usize, usize)>,
        /// Output frame rate for glTF animations (default 24). The physics runs on its own
        /// 240 Hz clock, so every rate shows the same motion at the instants it shares.
        #[arg(long)]
        fps: Option<f64>,
        #[arg(long, value_enum, default_value = "fast")]
        solver: SolverChoice,
        /// Fast solver: skinning eigenmodes. glTF characters: automatic by default (or 0): 64 on
        /// a small body (its automatic lattice has at most 40,000 tets: a prop, a tail), 16
        /// otherwise. Scenes: 16 in 3D, 10 in 2D.
        #[arg(long)]
        modes: Option<usize>,
        /// Fast solver: rotation clusters (default 100 in 3D, 20 in 2D).
        #[arg(long)]
        clusters: Option<usize>,
        /// Leak field D per input vertex: a JSON array or a one-column .dmat.
        #[arg(long)]
        leak: Option<PathBuf>,
        /// Lattice cells along the character's longest side (default: chosen from the geometry so
        /// thin limbs are four cells across, at most 125k tets; 0 also means automatic).
        #[arg(long)]
        lattice_resolution: Option<usize>,
        /// Which glTF animation (index, default 0).
        #[arg(long)]
        animation: Option<usize>,
        /// How glTF LINEAR channels are evaluated between keys on the physics clock: `smooth`
        /// (default: where keys are at most 1/12 s apart, as exported per-frame bakes are, the C¹
        /// Hermite/Catmull-Rom curve through them, so the rig has no acceleration spike at every
        /// key) or `linear` (the glTF semantics exactly). STEP and CUBICSPLINE keep theirs.
        #[arg(long, value_enum, default_value = "smooth")]
        rig_interpolation: bake::RigInterpolationArg,
        /// Also write an MDD cache.
        #[arg(long)]
        mdd: Option<PathBuf>,
        /// Also draw the bake shaded: `.png` (rig alone beside rig + secondary motion at the
        /// frames of largest motion) or `.gif` (the whole bake animated).
        #[arg(long)]
        preview: Vec<PathBuf>,
        /// Display surface (.obj) of a tet-mesh scene: the cache then holds this surface's
        /// vertices, in its order and units, each carried by its tet's barycentric coordinates.
        #[arg(long)]
        surface: Option<PathBuf>,
        /// Young's modulus (glTF characters: in the normalised frame, longest half-extent 1;
        /// default 2.5e4, rescaled to the default frequency of 5 Hz; given without
        /// --frequency, it is used as given).
        #[arg(long)]
        youngs_modulus: Option<f64>,
        /// Poisson ratio (default 0.4).
        #[arg(long)]
        poisson_ratio: Option<f64>,
        /// Density (default 1000).
        #[arg(long)]
        density: Option<f64>,
        #[command(flatten)]
        dynamics: dynamics_args::DynamicsArgs,
    },
    /// Print what a sidecar (.ovt) holds.
    Inspect { file: PathBuf },
    /// Write a scene (file or built-in) as `overtone-scene/1` JSON.
    Export {
        scene: String,
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() {
    // Outputs are staged while the command runs and committed together at the end, so an
    // interrupt (see `interrupt`) or a failure leaves every earlier output as it was.
    let result = real_main().and_then(|()| Ok(overtone::io::commit_deferred()?));
    if let Err(e) = result {
        if overtone::io::writes_abandoned() {
            // An interrupt stopped an output being written: the signal handler reports it and
            // exits with the signal's code; this thread only waits for it.
            std::thread::sleep(std::time::Duration::from_secs(10));
        }
        overtone::io::discard_deferred();
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    interrupt::install()?;
    overtone::io::defer_commits();
    let force = cli.force;
    match cli.command {
        Command::Run {
            scene,
            solver,
            out,
            report,
            iterations,
            modes,
            clusters,
            sidecar,
            tolerance,
            model,
            leak_constant,
            dynamics,
        } => {
            use output_paths::{Input, Kind, Output};
            let outputs: Vec<Output> = [
                Some(Output {
                    flag: "--out",
                    path: &out,
                    kind: Kind::cache(&out),
                }),
                report.as_deref().map(|path| Output {
                    flag: "--report",
                    path,
                    kind: Kind::Report,
                }),
                sidecar.as_deref().map(|path| Output {
                    flag: "--sidecar",
                    path,
                    kind: Kind::Sidecar,
                }),
            ]
            .into_iter()
            .flatten()
            .collect();
            output_paths::check(
                &[Input {
                    flag: "scene",
                    path: Path::new(&scene),
                }],
                &outputs,
                force,
            )?;
            let mut sc = scenes::load(&scene)?;
            if let Some(m) = model {
                sc.model = overtone::scene::ElasticModel::parse(&m)?;
            }
            if let Some(c) = leak_constant {
                sc.momentum_weights = Some(vec![c; sc.mesh.n_vertices()]);
            }
            dynamics.apply_to_scene(&mut sc)?;
            let mut fp = FastParams::default_for(sc.mesh.dim());
            fp.modes = modes.unwrap_or(fp.modes);
            fp.clusters = clusters.unwrap_or(fp.clusters);
            let kind = solver.kind(&sc, fp, IterationFlags { iterations, tolerance });
            run(&sc, kind, &out, report.as_deref(), sidecar.as_deref())?;
            Ok(())
        }
        Command::Demo { out_dir } => demo(&out_dir, force),
        Command::Figures { out_dir, only } => shape_matching_figures::run(&out_dir, &only, force),
        Command::Bench {
            out,
            frames,
            repeats,
            substeps,
            stiffness,
            bind,
        } => {
            if let Some(path) = out.as_deref() {
                let o = output_paths::Output {
                    flag: "--out",
                    path,
                    kind: output_paths::Kind::Markdown,
                };
                let inputs: Vec<output_paths::Input> = [
                    ("--substeps", substeps.as_deref()),
                    ("--stiffness", stiffness.as_deref()),
                ]
                .into_iter()
                .filter_map(|(flag, path)| path.map(|path| output_paths::Input { flag, path }))
                .chain(bind.iter().map(|path| output_paths::Input { flag: "--bind", path }))
                .collect();
                output_paths::check(&inputs, &[o], force)?;
            }
            let table = match (substeps, stiffness) {
                (Some(character), _) => Some(bench::substeps_table(&character, frames, repeats)?),
                (None, Some(character)) => Some(bench::stiffness_table(&character, frames, repeats)?),
                (None, None) if !bind.is_empty() => Some(bench::bind_table(&bind, repeats)?),
                (None, None) => None,
            };
            match table {
                Some(table) => {
                    out!("{table}");
                    if let Some(p) = out.as_deref() {
                        overtone::io::write_atomically(p, table.as_bytes())?;
                    }
                    Ok(())
                }
                None => bench::run(out.as_deref(), frames, repeats),
            }
        }
        Command::Inspect { file } => inspect(&file),
        Command::Bake {
            input,
            out,
            meshes,
            report,
            sidecar,
            frames,
            fps,
            solver,
            modes,
            clusters,
            leak,
            lattice_resolution,
            animation,
            rig_interpolation,
            mdd,
            preview,
            surface,
            youngs_modulus,
            poisson_ratio,
            density,
            dynamics,
        } => bake::bake(bake::BakeOptions {
            input,
            out,
            meshes,
            report,
            sidecar,
            frames,
            fps,
            solver,
            modes,
            clusters,
            leak,
            lattice_resolution,
            animation,
            rig_interpolation: rig_interpolation.into(),
            mdd,
            preview,
            preview_title: None,
            surface,
            youngs_modulus,
            poisson_ratio,
            density,
            dynamics,
            force,
        }),
        Command::Export { scene, out } => {
            let o = output_paths::Output {
                flag: "--out",
                path: &out,
                kind: output_paths::Kind::Scene,
            };
            output_paths::check(
                &[output_paths::Input {
                    flag: "scene",
                    path: Path::new(&scene),
                }],
                &[o],
                force,
            )?;
            let sc = scenes::load(&scene)?;
            overtone::scene::write_overtone_scene(&out, &sc)?;
            out!("wrote {}", out.display());
            Ok(())
        }
    }
}

fn run(
    scene: &overtone::scene::Scene,
    kind: SolverKind,
    out: &Path,
    report_path: Option<&Path>,
    sidecar: Option<&Path>,
) -> Result<overtone::scene::Simulation> {
    cache_format::CacheFormat::of(out)?;
    let sim = overtone::scene::simulate_with_sidecar(scene, kind, sidecar)
        .with_context(|| format!("simulating scene `{}`", scene.name))?;
    let triangles = cache_format::surface_triangles(&scene.mesh);
    let mesh = overtone::io::AnimatedMesh {
        name: &scene.name,
        triangles: &triangles,
        frames: &sim.positions,
        fps: 1.0 / scene.dt,
        start_frame: 1.0,
    };
    cache_format::write_cache(out, &mesh)?;
    let summary = report::summary(scene, &sim);
    if let Some(f) = &sim.fast {
        out!(
            "fast subspace: {} reduced DOFs, {} clusters, structural orthogonality {:.2e}; precompute {}",
            f.reduced_dofs,
            f.cluster_sizes.len(),
            f.structural_orthogonality,
            f.cache
        );
    }
    if let Some(r) = report_path {
        overtone::io::write_atomically(r, serde_json::to_string_pretty(&report::full(scene, &sim))?.as_bytes())?;
    }
    out!(
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

/// The built-in demo: the reference release's elephant (full-order solver, its own tet mesh
/// and skeleton) and the CesiumMan glTF character (fast solver on an embedded lattice), each with
/// a PC2 cache, a report and a shaded preview picture (CesiumMan also as an animated GIF).
fn demo(out_dir: &Path, force: bool) -> Result<()> {
    {
        use output_paths::{Input, Kind, Output};
        let elephant = scenes::example_path("complementary-dynamics-cpp/elephant/elephant.json");
        let cesium = scenes::example_path("khronos-gltf-sample-assets/CesiumMan.glb");
        let inputs = [
            Input {
                flag: "the demo's elephant",
                path: &elephant,
            },
            Input {
                flag: "the demo's CesiumMan",
                path: &cesium,
            },
        ];
        let names: Vec<(PathBuf, Kind)> = [
            ("elephant.pc2", Kind::Pc2),
            ("elephant_report.json", Kind::Report),
            ("elephant.png", Kind::Png),
            ("elephant_scene.json", Kind::Scene),
            ("cesium_man.pc2", Kind::Pc2),
            ("cesium_man_report.json", Kind::Report),
            ("cesium_man.png", Kind::Png),
            ("cesium_man.gif", Kind::Gif),
            ("cesium_man.ovt", Kind::Sidecar),
            ("cesium_man_soft_belly.pc2", Kind::Pc2),
            ("cesium_man_soft_belly_report.json", Kind::Report),
            ("cesium_man_soft_belly.png", Kind::Png),
        ]
        .into_iter()
        .map(|(n, k)| (out_dir.join(n), k))
        .collect();
        output_paths::check(
            &inputs,
            &[Output {
                flag: "--out-dir",
                path: out_dir,
                kind: Kind::Folder,
            }],
            force,
        )?;
        if out_dir.is_dir() {
            let files: Vec<Output> = names
                .iter()
                .map(|(path, kind)| Output {
                    flag: "the demo output",
                    path,
                    kind: *kind,
                })
                .collect();
            output_paths::check(&inputs, &files, force)?;
        }
    }
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    // `look`: the motion settings given (`(row, value)`, the scene keys) and the pictures' title;
    // `sidecar`: the stem of the fast solver's sidecar (bakes of one body share it).
    struct Look<'a> {
        settings: &'a [(&'static str, &'a str)],
        title: Option<&'a str>,
        sidecar: &'a str,
    }
    let bake =
        |input: PathBuf, stem: &str, solver: SolverChoice, pictures: &[&str], look: Look| -> Result<Vec<PathBuf>> {
            let files = [
                out_dir.join(format!("{stem}.pc2")),
                out_dir.join(format!("{stem}_report.json")),
            ];
            let preview: Vec<PathBuf> = pictures.iter().map(|e| out_dir.join(format!("{stem}.{e}"))).collect();
            bake::bake(bake::BakeOptions {
                input,
                out: files[0].clone(),
                meshes: Vec::new(),
                report: Some(files[1].clone()),
                sidecar: (solver == SolverChoice::Fast).then(|| out_dir.join(format!("{}.ovt", look.sidecar))),
                frames: None,
                fps: None,
                solver,
                modes: None,
                clusters: None,
                leak: None,
                lattice_resolution: None,
                animation: None,
                rig_interpolation: Default::default(),
                mdd: None,
                preview: preview.clone(),
                preview_title: look.title.map(str::to_string),
                surface: None,
                youngs_modulus: None,
                poisson_ratio: None,
                density: None,
                dynamics: dynamics_args::DynamicsArgs {
                    table: dynamics_args::TableFlags {
                        given: look.settings.iter().map(|(k, v)| (*k, v.to_string())).collect(),
                    },
                    ..Default::default()
                },
                force,
            })?;
            Ok(files.into_iter().chain(preview).collect())
        };
    let elephant = scenes::example_path("complementary-dynamics-cpp/elephant/elephant.json");
    let default_look = |sidecar| Look {
        settings: &[],
        title: None,
        sidecar,
    };
    let mut written = bake(
        elephant.clone(),
        "elephant",
        SolverChoice::Full,
        &["png"],
        default_look("elephant"),
    )?;
    let scene_json = out_dir.join("elephant_scene.json");
    overtone::scene::write_overtone_scene(&scene_json, &overtone::scene::load_scene(&elephant)?)?;
    written.push(scene_json);
    let cesium = scenes::example_path("khronos-gltf-sample-assets/CesiumMan.glb");
    written.extend(bake(
        cesium.clone(),
        "cesium_man",
        SolverChoice::Fast,
        &["png", "gif"],
        default_look("cesium_man"),
    )?);
    // The same walk with the Blender add-on's Soft Belly preset (3 Hz, damping 0.15): what a
    // softer setting shows beside the default's few millimetres.
    written.extend(bake(
        cesium,
        "cesium_man_soft_belly",
        SolverChoice::Fast,
        &["png"],
        Look {
            settings: &[("frequency", "3"), ("damping", "0.15")],
            title: Some("CesiumMan, Soft Belly preset (3 Hz, damping 0.15): secondary motion"),
            sidecar: "cesium_man",
        },
    )?);
    out!("demo written to {}:", out_dir.display());
    for p in &written {
        out!("  {}", p.display());
    }
    Ok(())
}

fn inspect(file: &Path) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    // Another format's header cannot be parsed with this one's layout: name its version.
    if bytes.len() >= 12 && &bytes[..8] == overtone::cache::MAGIC {
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != overtone::cache::FORMAT_VERSION {
            out!("{}", file.display());
            out!(
                "  format version {version} (this build: {}): it will be rebuilt on next use",
                overtone::cache::FORMAT_VERSION
            );
            return Ok(());
        }
    }
    let h = overtone::cache::read_sidecar_header(&bytes).with_context(|| {
        format!(
            "{} is not an Overtone sidecar (bad magic or truncated header)",
            file.display()
        )
    })?;
    out!("{}", file.display());
    out!(
        "  format version {} (this build: {})",
        h.format_version,
        overtone::cache::FORMAT_VERSION
    );
    out!(
        "  written by Overtone {} (this build: {})",
        h.library_version,
        env!("CARGO_PKG_VERSION")
    );
    let records = overtone::cache::sidecar_records(&bytes);
    let end = records.last().map_or(0, |(_, r)| r.end);
    for (h, range) in records {
        let key: String = h.key.iter().map(|b| format!("{b:02x}")).collect();
        out!("  record \"{}\"", h.kind);
        out!("    key {key}");
        let payload = &bytes[(range.start + h.header_len).min(range.end)..range.end];
        out!("    payload {} bytes (header says {})", payload.len(), h.payload_len);
        if payload.len() as u64 != h.payload_len
            || (overtone::cache::record_checksum(&h.kind, &h.key, payload) != h.checksum)
        {
            out!("    TRUNCATED OR CORRUPT (length or checksum): it will be rebuilt on next use");
            continue;
        }
        if h.kind == overtone::dynamics::FAST_PRECOMPUTE_KIND {
            match bincode::serde::decode_from_slice::<overtone::dynamics::ReducedModel, _>(
                payload,
                bincode::config::standard(),
            ) {
                Ok((m, _)) => {
                    for line in m.summary().lines() {
                        out!("    {line}");
                    }
                }
                Err(e) => {
                    out!("    payload does not decode as a fast solver model ({e}): it will be rebuilt on next use")
                }
            }
        } else if h.kind == overtone::scene::LATTICE_PREPARATION_KIND {
            match bincode::serde::decode_from_slice::<overtone::scene::LatticePreparation, _>(
                payload,
                bincode::config::standard(),
            ) {
                Ok((p, _)) => out!(
                    "    lattice of {} vertices and {} tetrahedra at resolution {}, {} surface vertices embedded",
                    p.embedding.lattice.n_vertices(),
                    p.embedding.lattice.n_elements(),
                    p.lattice_resolution,
                    p.embedding.corners.len()
                ),
                Err(e) => {
                    out!("    payload does not decode as a lattice preparation ({e}): it will be rebuilt on next use")
                }
            }
        }
    }
    if end < bytes.len() {
        out!(
            "  {} bytes after the last record that are not a record: they will be dropped on next write",
            bytes.len() - end
        );
    }
    Ok(())
}
