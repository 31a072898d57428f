//! `overtone bake`: simulate a character or scene and write a point cache of the input mesh's
//! own vertices, in their own order.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::solver_choice::{IterationFlags, SolverChoice};
use crate::stage_clock::StageClock;
use anyhow::{bail, Context, Result};
use overtone::dynamics::{FastParams, AUTO_MODES};
use overtone::scene::{
    character_from_gltf_meshes, simulate_streaming, stream_character_motion, CharacterSettings, SolverKind,
};
use overtone::settings::{SettingValue, Value};
use serde_json::json;

use crate::frame_outputs::{FrameOutputs, Layout};
use crate::output_frames::{OutputFrames, SampleWindow};
use crate::physics_clock::PhysicsClock;

/// `--rig-interpolation`: how glTF LINEAR channels are sampled between keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RigInterpolationArg {
    /// The glTF semantics: piecewise linear, slerp for rotations.
    Linear,
    /// The C¹ curve through densely keyed (≤ 1/12 s) LINEAR channels.
    #[default]
    Smooth,
}

impl From<RigInterpolationArg> for overtone::io::RigInterpolation {
    fn from(a: RigInterpolationArg) -> Self {
        match a {
            RigInterpolationArg::Linear => Self::Linear,
            RigInterpolationArg::Smooth => Self::Smooth,
        }
    }
}

/// Options of a bake (see `overtone bake --help`).
pub struct BakeOptions {
    pub input: PathBuf,
    /// A file, or with several glTF meshes a folder of `<node name>.pc2` files.
    pub out: PathBuf,
    /// glTF meshes to bake by node name (empty: every mesh of the first skeleton).
    pub meshes: Vec<String>,
    pub report: Option<PathBuf>,
    pub sidecar: Option<PathBuf>,
    pub frames: Option<(usize, usize)>,
    pub fps: Option<f64>,
    /// Which solver runs the body (characters: ARAP, so `full` is local/global).
    pub solver: crate::solver_choice::SolverChoice,
    /// Fast solver: skinning eigenmodes and rotation clusters (`None`: the defaults).
    pub modes: Option<usize>,
    pub clusters: Option<usize>,
    pub leak: Option<PathBuf>,
    pub lattice_resolution: Option<usize>,
    pub animation: Option<usize>,
    /// How glTF LINEAR channels are sampled between keys (default smooth).
    pub rig_interpolation: overtone::io::RigInterpolation,
    pub mdd: Option<PathBuf>,
    /// Pictures: `.png` (still) and/or `.gif` (animation).
    pub preview: Vec<PathBuf>,
    /// The pictures' title (`None`: `<name>: secondary motion`).
    pub preview_title: Option<String>,
    /// Display surface (.obj) of a tet-mesh scene.
    pub surface: Option<PathBuf>,
    pub youngs_modulus: Option<f64>,
    pub poisson_ratio: Option<f64>,
    pub density: Option<f64>,
    pub dynamics: crate::dynamics_args::DynamicsArgs,
    /// Overwrite existing outputs of another kind (`--force`).
    pub force: bool,
}

/// Overrides the material's fields given on the command line.
fn material_overrides(o: &BakeOptions, m: &mut overtone::dynamics::Material) -> Result<()> {
    if let Some(e) = o.youngs_modulus {
        m.youngs_modulus = e;
    }
    if let Some(nu) = o.poisson_ratio {
        m.poisson_ratio = nu;
    }
    if let Some(rho) = o.density {
        m.density = rho;
    }
    m.validate()?;
    Ok(())
}

/// The fast solver's size: the defaults for `dim`, with `--modes` / `--clusters` when given.
fn fast_params(o: &BakeOptions, dim: usize) -> FastParams {
    let d = FastParams::default_for(dim);
    FastParams {
        modes: o.modes.unwrap_or(d.modes),
        clusters: o.clusters.unwrap_or(d.clusters),
        ..d
    }
}

/// Parses `A..B` (inclusive frame range).
pub fn parse_range(s: &str) -> Result<(usize, usize)> {
    let (a, b) = s.split_once("..").context("frame range must look like A..B")?;
    let (a, b): (usize, usize) = (
        a.trim().parse().context("range start")?,
        b.trim().parse().context("range end")?,
    );
    if b <= a {
        bail!("frame range {a}..{b} needs at least two frames (end after start)");
    }
    Ok((a, b))
}

/// A per-vertex leak field: a JSON array of numbers or a one-column `.dmat`.
fn read_leak(path: &Path) -> Result<Vec<f64>> {
    if path.extension().map(|e| e == "dmat").unwrap_or(false) {
        let m = overtone::io::read_dmat(path)?;
        if m.cols != 1 {
            bail!("{}: a leak field has one column, this has {}", path.display(), m.cols);
        }
        return Ok(m.data);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Vec<f64> =
        serde_json::from_str(&text).with_context(|| format!("{}: expected a JSON array of numbers", path.display()))?;
    Ok(v)
}

/// A file name from a glTF node name: characters other than letters, digits, `-`, `_` and `.`
/// become `_`, a leading dot too; empty names become `mesh`; repeated names get `_2`, `_3`, ….
pub fn cache_file_names(names: &[String]) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    names
        .iter()
        .map(|n| {
            let mut s: String = n
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if s.starts_with('.') {
                s.replace_range(0..1, "_");
            }
            if s.is_empty() {
                s = "mesh".into();
            }
            let mut candidate = s.clone();
            let mut k = 2;
            while !used.insert(candidate.to_lowercase()) {
                candidate = format!("{s}_{k}");
                k += 1;
            }
            format!("{candidate}.pc2")
        })
        .collect()
}

/// What a bake computed, for the caches, previews and report.
struct Baked {
    /// The caches written as the frames arrived, and the motion measured on the way.
    written: crate::frame_outputs::Written,
    /// Output frame rate (frames per second).
    fps: f64,
    sim: overtone::scene::Simulation,
    n_points: usize,
    name: String,
    /// Triangles of the written mesh, `t × 3`.
    triangles: Vec<usize>,
    /// With several glTF meshes (or a folder output): per cache file, its range of points.
    mesh_outputs: Vec<(String, std::ops::Range<usize>)>,
    warnings: Vec<String>,
    surface_report: serde_json::Value,
    lattice_report: serde_json::Value,
    n_blendshapes: usize,
    /// The physics clock of glTF bakes (report only).
    physics_rate: Option<f64>,
    sampling_rate: Option<f64>,
    common_clock: Option<bool>,
    /// The physics step that ends at or just after each output frame (report only; the
    /// identity when every frame is one step).
    step_of_frame: Option<PhysicsClock>,
    /// Milliseconds spent preparing a glTF character (0 for scenes).
    prepare_ms: f64,
    /// Milliseconds spent making the output frames and writing them (for a glTF character on
    /// the output frames' thread, overlapping the steps; for a scene after each step).
    output_ms: f64,
}

pub fn bake(o: BakeOptions) -> Result<()> {
    let clock = StageClock::new();
    clock.mark("checking the outputs and reading the leak field");
    check_outputs(&o)?;
    let leak = o.leak.as_deref().map(read_leak).transpose()?;
    let t_prepare = std::time::Instant::now();
    let is_gltf = is_gltf(&o.input);
    anyhow::ensure!(
        o.meshes.is_empty() || is_gltf,
        "--mesh picks meshes of a glTF file; {} is a scene",
        o.input.display()
    );
    let start = o.frames.map(|(a, _)| a as f64 + 1.0).unwrap_or(1.0);
    let baked = if is_gltf {
        bake_gltf(&o, leak, t_prepare, start, &clock)?
    } else {
        bake_scene(&o, leak, start, &clock)?
    };
    clock.mark("writing the previews");
    write_previews(&o, &baked, start)?;
    clock.mark("writing the report");
    write_report(&o, &baked, is_gltf, &clock)?;
    out!(
        "baked {} frames of {} points to {} (median step {:.3} ms, max relative residual {:.1e})",
        baked.written.n_frames,
        baked.n_points,
        baked.written.files.join(", "),
        crate::report::median(&baked.sim.step_ms),
        baked.sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max)
    );
    Ok(())
}

/// The caches of a bake of `n_frames` frames of `n_points` points, opened before its
/// simulation so that the frames are written as they arrive.
fn open_outputs(
    o: &BakeOptions,
    mesh_outputs: &[(String, std::ops::Range<usize>)],
    n_frames: usize,
    n_points: usize,
    fps: f64,
    start: f64,
) -> Result<FrameOutputs> {
    FrameOutputs::open(&Layout {
        out: &o.out,
        mesh_outputs,
        mdd: o.mdd.as_deref(),
        previews: !o.preview.is_empty(),
        n_frames,
        n_points,
        fps,
        start_frame: start,
    })
}

/// Runs `simulate` with a sink that may fail for the CLI's own reasons (a cache write, a frame
/// out of order): the core sees a stop, and the CLI's error is the one returned.
fn with_output_errors<T>(
    simulate: impl FnOnce(&mut dyn FnMut(Result<()>) -> overtone::Result<()>) -> overtone::Result<T>,
) -> Result<T> {
    let mut failed: Option<anyhow::Error> = None;
    let mut check = |r: Result<()>| -> overtone::Result<()> {
        r.map_err(|e| {
            failed = Some(e);
            overtone::OvertoneError::Unsupported("the bake's outputs stopped the simulation".into())
        })
    };
    let result = simulate(&mut check);
    match (result, failed) {
        (_, Some(e)) => Err(e),
        (r, None) => Ok(r?),
    }
}

/// Whether `path` names a glTF file (`.glb` or `.gltf`); anything else is a scene.
fn is_gltf(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "glb" || e == "gltf")
}

/// Whether `--out` names a folder of `<node name>.pc2` caches rather than one cache file: an
/// existing folder, or a path without an extension (created when missing), as `--help` says.
fn out_names_a_folder(o: &BakeOptions) -> bool {
    o.out.is_dir() || o.out.extension().is_none()
}

/// Refuses outputs that clash with the inputs or each other ([`check_paths`]), then an output
/// file or preview of an unknown format, before anything is computed.
fn check_outputs(o: &BakeOptions) -> Result<()> {
    // Clashes first (an output onto an input is the costliest mistake), then the formats.
    let folder_out = out_names_a_folder(o);
    check_paths(o, folder_out)?;
    if !folder_out {
        crate::cache_format::CacheFormat::of(&o.out)?;
    } else if !is_gltf(&o.input) {
        bail!(
            "--out {} names a folder, but a scene bakes one mesh: give a file name ending in one of {}; nothing was computed",
            o.out.display(),
            crate::cache_format::EXTENSIONS
        );
    }
    for p in &o.preview {
        crate::preview::PreviewKind::of(p)?;
    }
    Ok(())
}

/// Bakes the glTF character `o.input` (its meshes, with the painted `leak`) on the physics
/// clock: output frames and displacements of the file's own vertices at the output rate.
/// `t_prepare` started before the character was read (for `prepare_ms`).
fn bake_gltf(
    o: &BakeOptions,
    leak: Option<Vec<f64>>,
    t_prepare: std::time::Instant,
    start: f64,
    stages: &StageClock,
) -> Result<Baked> {
    let mut mesh_outputs: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    if let Some(s) = &o.surface {
        bail!(
            "--surface {} applies to tet-mesh scenes; a glTF character's own mesh is always the one written",
            s.display()
        );
    }
    let mut settings = CharacterSettings::default();
    if let Some(f) = o.fps {
        settings.fps = f;
    }
    // The physics clock (see `physics_clock`): with the default integrator the physics steps
    // at a fixed rate whatever the output rate, on the animation sampled at a rate that is a
    // multiple of both, and the output frames take the glTF's pose at their instant plus the
    // displacement interpolated from the physics samples. Backward Euler (one step per frame,
    // the seeds' scheme) and explicit --substeps (per output frame) step at the output rate.
    let output_fps = settings.fps;
    let keys = o.dynamics.keys()?;
    let backward_euler = keys
        .get("integrator")
        .and_then(|v| <overtone::dynamics::Integrator as SettingValue>::from_value(&v))
        == Some(overtone::dynamics::Integrator::BackwardEuler);
    let clock = if backward_euler || matches!(keys.get("substeps"), Some(Value::Count(_))) {
        PhysicsClock::output_rate(output_fps)
    } else {
        PhysicsClock::new(output_fps)?
    };
    settings.fps = clock.sampling_rate;
    if let Some(r) = o.lattice_resolution {
        settings.lattice_resolution = r;
    }
    settings.animation = o.animation;
    settings.rig_interpolation = o.rig_interpolation;
    settings.sidecar = o.sidecar.clone();
    material_overrides(o, &mut settings.material)?;
    // The glTF is read and its rig sampled before the core reports its first stage.
    stages.mark("reading the glTF and sampling the rig");
    let (mut ch, meshes) = overtone::progress::scoped(stages, || {
        character_from_gltf_meshes(&o.input, &settings, leak.as_deref(), &o.meshes)
    })
    .with_context(|| format!("preparing {}", o.input.display()))?;
    // Staged with the run's other outputs (an interrupted bake writes none of them).
    ch.save_preparation();
    stages.mark("dynamics flags, painted fields and frame range");
    if meshes.len() > 1 || out_names_a_folder(o) {
        anyhow::ensure!(
            o.out.is_dir() || !o.out.exists(),
            "--out {} is a file; {} meshes are written into a folder",
            o.out.display(),
            meshes.len()
        );
        anyhow::ensure!(
            o.mdd.is_none() || meshes.len() == 1,
            "--mdd writes one mesh; with {} meshes pick one with --mesh",
            meshes.len()
        );
        let names: Vec<String> = meshes.iter().map(|m| m.name.clone()).collect();
        if meshes.len() > 1 {
            eprintln!("baking {} meshes as one body: {}", meshes.len(), names.join(", "));
        }
        mesh_outputs = cache_file_names(&names)
            .into_iter()
            .zip(meshes.iter().map(|m| m.vertices.clone()))
            .collect();
    }
    // Dynamics flags; a painted stiffness (per welded or per input vertex) multiplies the
    // skeleton-derived default; gravity is given in the file's units (÷ scale).
    // A Young's modulus given without a frequency is used as given (the character's default
    // stiffness is a frequency, `DEFAULT_FREQUENCY`).
    if o.youngs_modulus.is_some() && keys.get("frequency").is_none() {
        ch.scene.dynamics.frequency = None;
    }
    ch.scene.dynamics = keys.apply(&ch.scene.dynamics)?;
    if let Some(p) = &o.dynamics.stiffness {
        let mut f = crate::dynamics_args::read_field(p, "stiffness")?;
        if f.len() == ch.original_to_welded.len() && f.len() != ch.surface.len() / 3 {
            let mut welded = vec![1.0; ch.surface.len() / 3];
            for (orig, &w) in ch.original_to_welded.iter().enumerate() {
                welded[w] = f[orig];
            }
            f = welded;
        }
        let lattice = overtone::scene::lattice_field_from_surface(&ch, &f, "stiffness")?;
        ch.scene.dynamics.stiffness = Some(match ch.scene.dynamics.stiffness.take() {
            None => lattice,
            Some(d) => lattice.iter().zip(&d).map(|(a, b)| a * b).collect(),
        });
    }
    if let Some(g) = o.dynamics.gravity(3)? {
        ch.scene.gravity = ch.frame.vector_to_scene(&g);
    }
    ch.scene.validate()?;
    let mut n_output = (ch.scene.frames.len() - 1) / clock.per_frame + 1;
    if let Some((a, b)) = o.frames {
        anyhow::ensure!(
            b < n_output,
            "frame range ends at {b} but the animation has {n_output} frames"
        );
        // Keep the samples past frame b that the last physics step needs, where they exist.
        let last = (a * clock.per_frame + ((b - a) * clock.per_frame).next_multiple_of(clock.per_step))
            .min(ch.scene.frames.len() - 1);
        ch.select_frames(a * clock.per_frame, last)?;
        n_output = b - a + 1;
    }
    let prepare_ms = t_prepare.elapsed().as_secs_f64() * 1e3;
    let n_blendshapes = ch.scene.blendshapes.as_ref().map_or(0, |b| b.n_targets);
    for w in &ch.warnings {
        eprintln!("warning: {w}");
    }
    warnings.extend(ch.warnings.iter().cloned());
    let auto = match &ch.resolution_choice {
        Some(c) => format!(
            " (chosen: thin parts {:.3} across, bulk {:.3}, {} cells wanted{})",
            c.thin_diameter * ch.frame.scale,
            c.bulk_diameter * ch.frame.scale,
            c.wanted,
            if c.resolution < c.wanted {
                ", capped by the tet budget"
            } else {
                ""
            }
        ),
        None => String::new(),
    };
    eprintln!(
        "{}: {} surface vertices ({} pieces, {} of them riding in the lattice of the body they cover) embedded in {} lattice vertices / {} tets at resolution {}{auto}; {} frames at {} fps",
        ch.scene.name,
        ch.original_to_welded.len(),
        ch.embedding.pieces,
        ch.embedding.passengers,
        ch.scene.mesh.n_vertices(),
        ch.scene.mesh.n_elements(),
        ch.lattice_resolution,
        n_output,
        output_fps
    );
    let lattice_report = json!({
        "resolution": ch.lattice_resolution,
        "automatic": ch.resolution_choice.is_some(),
        "thin_diameter": ch.resolution_choice.as_ref().map(|c| c.thin_diameter * ch.frame.scale),
        "bulk_diameter": ch.resolution_choice.as_ref().map(|c| c.bulk_diameter * ch.frame.scale),
        "automatic_tets": ch.automatic_tets,
        "wanted_resolution": ch.resolution_choice.as_ref().map(|c| c.wanted),
        "vertices": ch.scene.mesh.n_vertices(),
        "tets": ch.scene.mesh.n_elements(),
        "surface_pieces": ch.embedding.pieces,
        "riding_pieces": ch.embedding.passengers,
        "hinge_splits": ch.embedding.hinge_splits,
        // Where the lattice preparation came from (the sidecar's record), as text.
        "preparation": ch.preparation_cache,
    });
    // A glTF character's body chooses its mode count unless `--modes` sets it.
    let kind = if o.solver == SolverChoice::Fast {
        let fp = ch.fast_params(FastParams {
            modes: o.modes.unwrap_or(AUTO_MODES),
            ..fast_params(o, 3)
        });
        eprintln!(
            "fast solver: {} modes asked (fewer when the last would split a cluster of equal eigenvalues){}, {} clusters",
            fp.modes,
            if o.modes.is_none() {
                format!(" (automatic: the automatic lattice has {} tets)", ch.automatic_tets)
            } else {
                String::new()
            },
            fp.clusters
        );
        SolverKind::Fast(fp)
    } else {
        o.solver.kind(&ch.scene, fast_params(o, 3), IterationFlags::default())
    };
    stages.mark("the physics clock's samples");
    let samples = clock.physics_samples(n_output, ch.scene.frames.len());
    // When the physics steps through every animation sample (24, 30, 60 fps), the character
    // itself is the physics character (no copy of its sampled animation).
    let every_sample = samples.iter().copied().eq(0..ch.scene.frames.len());
    let physics = if every_sample {
        ch.scene.dt = clock.physics_dt();
        std::borrow::Cow::Borrowed(&ch)
    } else {
        std::borrow::Cow::Owned(physics_character(&ch, &samples, clock.physics_dt()))
    };
    let needed = SampleWindow::needed(&clock, n_output, samples.len());
    stages.mark("opening the caches");
    let n_points = ch.original_to_welded.len();
    let mut outputs = open_outputs(o, &mesh_outputs, n_output, n_points, output_fps, start)?;
    let mut frames = OutputFrames::new(&ch, clock, n_output, samples.len());
    let mut progress = Progress::new(samples.len(), "physics steps");
    let mut tick = |k: usize, _: usize| progress.set(k);
    let mut output_ms = 0.0;
    stages.mark("simulation (precompute, steps; output frames made and written as they arrive)");
    // The output frames are made and written on a second thread while the physics steps.
    let mut make_frames = |k: usize, u: &[f64]| -> Result<()> {
        let t = std::time::Instant::now();
        let r = frames.push(k, u, &mut |_, x, u| outputs.push(x, u));
        output_ms += t.elapsed().as_secs_f64() * 1e3;
        r
    };
    let (sim, made) = crate::output_thread::pipelined(&mut make_frames, |sink| {
        with_output_errors(|check| {
            overtone::progress::scoped(stages, || {
                stream_character_motion(
                    &physics,
                    kind,
                    o.sidecar.as_deref(),
                    &|k| needed[k],
                    &mut tick,
                    &mut |k, u| check(sink(k, u)),
                )
            })
        })
    })?;
    // An output error is the cause of a stopped simulation: it comes first.
    made?;
    let sim = sim?;
    progress.finish();
    frames.finish()?;
    stages.mark("completing the caches");
    let written = outputs.finish(&ch.scene.name, &ch.file_triangles, output_fps, start)?;
    let physics_rate = Some(1.0 / clock.physics_dt());
    let step_of_frame = Some(clock);
    let sampling_rate = Some(clock.sampling_rate);
    let common_clock = Some(clock.common);
    Ok(Baked {
        written,
        fps: output_fps,
        sim,
        n_points,
        name: ch.scene.name.clone(),
        triangles: ch.file_triangles.clone(),
        mesh_outputs,
        warnings,
        surface_report: serde_json::Value::Null,
        lattice_report,
        n_blendshapes,
        physics_rate,
        sampling_rate,
        common_clock,
        step_of_frame,
        output_ms,
        prepare_ms,
    })
}

/// Bakes the tet-mesh scene `o.input` (with the painted `leak`), its frames and displacements
/// on the display surface when one is given, else on the tet mesh's vertices (padded to 3D).
fn bake_scene(o: &BakeOptions, leak: Option<Vec<f64>>, start: f64, stages: &StageClock) -> Result<Baked> {
    let mut warnings: Vec<String> = Vec::new();
    let mut surface_report = serde_json::Value::Null;
    stages.mark("reading the scene");
    let mut sc = crate::scenes::load(&o.input.to_string_lossy())?;
    if let Some(d) = leak {
        sc.momentum_weights = Some(d);
    }
    material_overrides(o, &mut sc.material)?;
    o.dynamics.apply_to_scene(&mut sc)?;
    if let Some((a, b)) = o.frames {
        anyhow::ensure!(
            b < sc.frames.len(),
            "frame range ends at {b} but the scene has {} frames",
            sc.frames.len()
        );
        sc.select_frames(a, b)?;
    }
    let n_blendshapes = sc.blendshapes.as_ref().map_or(0, |b| b.n_targets);
    stages.mark("dynamics flags, frame range and display surface");
    let mut triangles = crate::cache_format::surface_triangles(&sc.mesh);
    let display = match &o.surface {
        None => None,
        Some(path) => {
            let obj = overtone::io::read_obj(path)?;
            triangles = obj.triangles.clone();
            let ds = overtone::scene::DisplaySurface::new(&sc, &obj.vertices)
                .with_context(|| format!("embedding {} in the tet mesh of {}", path.display(), sc.name))?;
            for w in &ds.warnings {
                eprintln!("warning: {w}");
            }
            warnings.extend(ds.warnings.iter().cloned());
            surface_report = json!({
                "file": path.display().to_string(),
                "vertices": ds.n_vertices(),
                "outside_tet_mesh": ds.embedding.outside,
                "max_outside_distance_normalised": ds.embedding.max_distance,
            });
            Some(ds)
        }
    };
    let kind = o
        .solver
        .kind(&sc, fast_params(o, sc.mesh.dim()), IterationFlags::default());
    let d = sc.mesh.dim();
    let fps = o.fps.unwrap_or(1.0 / sc.dt);
    let n_points = display
        .as_ref()
        .map(|ds| ds.n_vertices())
        .unwrap_or(sc.mesh.n_vertices());
    stages.mark("opening the caches");
    let mut outputs = open_outputs(o, &[], sc.frames.len(), n_points, fps, start)?;
    let (mut disp3, mut x, mut u) = (Vec::new(), vec![0.0; 3 * n_points], vec![0.0; 3 * n_points]);
    let mut output_ms = 0.0;
    stages.mark("simulation (precompute, steps; frames written as they arrive)");
    let sim = with_output_errors(|check| {
        overtone::progress::scoped(stages, || {
            simulate_streaming(&sc, kind, o.sidecar.as_deref(), &mut |_, frame, disp| {
                let t = std::time::Instant::now();
                disp3.clear();
                disp3.extend(
                    disp.chunks_exact(d)
                        .flat_map(|u| (0..3).map(move |i| if i < d { u[i] } else { 0.0 })),
                );
                let r = match &display {
                    None => outputs.push(frame, &disp3),
                    Some(ds) => {
                        ds.positions(frame, &mut x);
                        ds.displacements(&disp3, &mut u);
                        outputs.push(&x, &u)
                    }
                };
                output_ms += t.elapsed().as_secs_f64() * 1e3;
                check(r)
            })
        })
    })?;
    stages.mark("completing the caches");
    let written = outputs.finish(&sc.name, &triangles, fps, start)?;
    Ok(Baked {
        written,
        fps,
        sim,
        n_points,
        name: sc.name.clone(),
        triangles,
        mesh_outputs: Vec::new(),
        warnings,
        surface_report,
        lattice_report: serde_json::Value::Null,
        n_blendshapes,
        physics_rate: None,
        sampling_rate: None,
        common_clock: None,
        step_of_frame: None,
        output_ms,
        prepare_ms: 0.0,
    })
}

/// Writes the pictures `o.preview` of the baked secondary motion (from the frames kept for
/// them).
fn write_previews(o: &BakeOptions, baked: &Baked, start: f64) -> Result<()> {
    let w = &baked.written;
    let mesh = overtone::io::AnimatedMesh {
        name: &baked.name,
        triangles: &baked.triangles,
        frames: &w.frames,
        fps: baked.fps,
        start_frame: start,
    };
    for p in &o.preview {
        // Encoded in memory and written atomically (staged with the run's other outputs).
        let title = o
            .preview_title
            .clone()
            .unwrap_or_else(|| format!("{}: secondary motion", baked.name));
        crate::preview::write_preview(p, &title, &mesh, &w.displacements)?;
    }
    Ok(())
}

/// Writes the JSON report `o.report` (when asked): the run's settings, timings, residuals,
/// caches and per-frame motion.
fn write_report(o: &BakeOptions, baked: &Baked, is_gltf: bool, stages: &StageClock) -> Result<()> {
    let Baked {
        written,
        fps,
        sim,
        n_points,
        name,
        mesh_outputs,
        warnings,
        surface_report,
        lattice_report,
        n_blendshapes,
        physics_rate,
        sampling_rate,
        common_clock,
        step_of_frame,
        prepare_ms,
        output_ms,
        ..
    } = baked;
    let dynamics_report = json!({
        "physics_rate_hz": physics_rate,
        "rig_interpolation": is_gltf.then_some(match o.rig_interpolation {
            overtone::io::RigInterpolation::Linear => "linear",
            overtone::io::RigInterpolation::Smooth => "smooth",
        }),
        "animation_sampling_hz": sampling_rate,
        "common_physics_clock": common_clock,
        "substeps": sim.fast.as_ref().map(|f| f.substeps),
        "lowest_frequency_hz": sim.lowest_frequency_hz,
        // Physics steps taken and their local/global iterations (all substeps).
        "physics_steps": sim.steps.len(),
        "iterations": sim.steps.iter().map(|s| s.iterations).sum::<usize>(),
        "flags": o
            .dynamics
            .table
            .given
            .iter()
            .map(|(name, text)| (name.to_string(), json!(text)))
            .collect::<serde_json::Map<_, _>>(),
    });
    if let Some(r) = &o.report {
        let worst = sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max);
        let report = json!({
            "schema_version": crate::report::SCHEMA_VERSION,
            "kind": "bake",
            "input": o.input.display().to_string(),
            "name": name,
            "points": n_points,
            "frames": written.n_frames,
            "fps": fps,
            "solver": if sim.fast.is_some() { "fast" } else { "full" },
            "precompute_ms": sim.precompute_ms,
            "median_step_ms": crate::report::median(&sim.step_ms),
            "max_relative_residual": worst,
            "structural_orthogonality": sim.fast.as_ref().map(|f| f.structural_orthogonality),
            "blendshapes": n_blendshapes,
            "max_blendshape_relative_residual": sim.blendshape_relative_residual.iter().cloned().fold(0.0, f64::max),
            "max_displacement_normalised": sim.max_displacement.iter().cloned().fold(0.0, f64::max),
            "sidecar": sim.fast.as_ref().map(|f| f.cache.clone()),
            "precompute_stage_ms": sim.fast.as_ref().map(|f| f.stage_ms.iter().map(|(k, ms)| json!({"stage": k, "ms": ms})).collect::<Vec<_>>()),
            "prepare_ms": prepare_ms,
            // Every stage of the bake in order (the report's own writing is the last, up to
            // now), the wall time so far, and the simulation's physics: its precompute and
            // the sum of its steps. For a glTF character, the output frames are made and
            // written as the samples arrive, on a thread of their own beside the stepping
            // one: `output_ms` is that thread's busy time (`cache_write_ms` the time in it
            // spent handing frames to the cache writers, which write on threads of their own,
            // plus the caches' completion), overlapping the steps; the simulation stage's
            // time beyond the steps is mostly carrying the motion of the physics samples
            // that output frames read to the surface.
            "stage_ms": stages.stages().iter().map(|(k, ms)| json!({"stage": k, "ms": ms})).collect::<Vec<_>>(),
            "wall_ms": stages.elapsed_ms(),
            "physics_ms": {"precompute": sim.precompute_ms, "steps": sim.step_ms.iter().sum::<f64>()},
            "output_ms": output_ms,
            "dynamics": dynamics_report,
            "cuts": sim.cuts,
            "cache_write_ms": written.write_ms,
            "warnings": warnings,
            "display_surface": surface_report,
            "lattice": lattice_report,
            "caches": mesh_outputs.iter().map(|(f, r)| json!({"file": f, "vertices": r.len(), "first_vertex": r.start})).collect::<Vec<_>>(),
            "diagonal": written.diagonal,
            "per_frame": written.motion.iter().enumerate().skip(1).filter_map(|(i, (u, rig))| {
                // Steps are counted from frame 0: step k − 1 ends at physics sample k.
                let k = step_of_frame.map_or(i, |c| {
                    let (j, num, _) = c.physics_position(i);
                    j + usize::from(num > 0)
                });
                let (s, ms) = (sim.steps.get(k - 1)?, sim.step_ms.get(k - 1)?);
                Some(json!({"relative_residual": s.relative_residual, "step_ms": ms, "max_surface_displacement": u, "rig_motion": rig}))
            }).collect::<Vec<_>>(),
        });
        overtone::io::write_atomically(r, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    Ok(())
}

/// The character `ch` (its animation sampled at the clock's sampling rate) stepped through the
/// animation samples `samples` only, `dt` (seconds) apart: the lattice scene's rig and
/// blendshape weights, the surface's world transforms and morph weights.
fn physics_character(ch: &overtone::scene::Character, samples: &[usize], dt: f64) -> overtone::scene::Character {
    let pick = |rows: &[Vec<f64>]| samples.iter().map(|&k| rows[k].clone()).collect::<Vec<_>>();
    let mut p = ch.clone();
    p.scene.frames = pick(&ch.scene.frames);
    p.scene.dt = dt;
    if let (Some(bs), Some(src)) = (&mut p.scene.blendshapes, &ch.scene.blendshapes) {
        bs.weights = pick(&src.weights);
    }
    p.world_frames = pick(&ch.world_frames);
    if let (Some(mo), Some(src)) = (&mut p.morphs, &ch.morphs) {
        mo.weights = pick(&src.weights);
    }
    p
}

/// Refuses, before any work, outputs that are inputs, that coincide, that are folders or that
/// would replace a file of another kind without `--force` (see [`crate::output_paths`]).
fn check_paths(o: &BakeOptions, folder_out: bool) -> Result<()> {
    use crate::output_paths::{check, Input, Kind, Output};
    let inputs: Vec<Input> = [
        Some(Input {
            flag: "input",
            path: &o.input,
        }),
        o.leak.as_deref().map(|path| Input { flag: "--leak", path }),
        o.dynamics.stiffness.as_deref().map(|path| Input {
            flag: "--stiffness",
            path,
        }),
        o.surface.as_deref().map(|path| Input {
            flag: "--surface",
            path,
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    let outputs: Vec<Output> = [
        Some(Output {
            flag: "--out",
            path: &o.out,
            kind: if folder_out { Kind::Folder } else { Kind::cache(&o.out) },
        }),
        o.mdd.as_deref().map(|path| Output {
            flag: "--mdd",
            path,
            kind: Kind::Mdd,
        }),
        o.report.as_deref().map(|path| Output {
            flag: "--report",
            path,
            kind: Kind::Report,
        }),
        None,
        o.sidecar.as_deref().map(|path| Output {
            flag: "--sidecar",
            path,
            kind: Kind::Sidecar,
        }),
    ]
    .into_iter()
    .flatten()
    .chain(o.preview.iter().map(|path| Output {
        flag: "--preview",
        path,
        kind: Kind::picture(path),
    }))
    .collect();
    check(&inputs, &outputs, o.force)
}

/// Seconds of a bake before its log gets progress lines.
const QUIET_SECONDS: f64 = 2.0;

/// Progress of a bake on stderr: a bar with the time left on an interactive terminal, and
/// otherwise (a farm's log) a line at every tenth of the way with the elapsed time and an
/// estimate of the time left, once the bake has run for [`QUIET_SECONDS`] (a short bake's log
/// stays short).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    what: &'static str,
    started: std::time::Instant,
    /// The next tenth to print (non-interactive).
    next_tenth: usize,
}

impl Progress {
    /// Progress over `total` items, named `what` in the log lines.
    fn new(total: usize, what: &'static str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("baking {bar:40} {pos}/{len} {msg} ({eta} left)")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.set_message(what);
            bar
        });
        Self {
            bar,
            total,
            what,
            started: std::time::Instant::now(),
            next_tenth: 1,
        }
    }

    /// `done` of the items are done.
    fn set(&mut self, done: usize) {
        if let Some(b) = &self.bar {
            b.set_position(done as u64);
            return;
        }
        if self.total < 10 || done * 10 < self.next_tenth * self.total {
            return;
        }
        self.next_tenth = done * 10 / self.total + 1;
        let elapsed = self.started.elapsed().as_secs_f64();
        if elapsed < QUIET_SECONDS {
            return;
        }
        let left = elapsed * (self.total - done.min(self.total)) as f64 / done.max(1) as f64;
        eprintln!(
            "baking: {done}/{} {} ({:.0}%), {} elapsed, about {} left",
            self.total,
            self.what,
            100.0 * done as f64 / self.total as f64,
            clock_time(elapsed),
            clock_time(left)
        );
    }

    fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// `h:mm:ss` (or `m:ss`) of `seconds`.
fn clock_time(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
