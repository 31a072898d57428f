//! `overtone bench`: ms/step of the full and fast solvers on the seed's beams and the 3D scenes.
//!
//! Each scene is simulated `repeats` times per solver; the table gives the smallest of the
//! per-run median step times (the machine is shared, and the minimum of medians is the figure
//! least disturbed by other load) and the precompute time of that run. The speedup is the ratio
//! of the two, measured in the same run.

use std::path::Path;

use anyhow::Result;
use overtone::dynamics::FastParams;
use overtone::scene::{metronome_beam, simulate, ElasticModel, MetronomeBeam, Scene, Simulation, SolverKind};

use crate::report::median;
use crate::scenes::example_path;

/// The seed's five beam resolutions (grid vertices along × across) and the ms/step the seed
/// printed for them, full and reduced (simkit, Python, another machine: context only).
const BEAMS: [((usize, usize), f64, f64); 5] = [
    ((40, 5), 5.0, 0.67),
    ((70, 7), 12.7, 0.67),
    ((100, 8), 20.3, 0.68),
    ((140, 9), 32.2, 0.67),
    ((180, 10), 46.3, 0.67),
];
const SCENES_3D: [&str; 5] = [
    "complementary-dynamics-cpp/sphere/sphere.json",
    "complementary-dynamics-cpp/elephant/elephant.json",
    "complementary-dynamics-cpp/fish/fish.json",
    "complementary-dynamics-cpp/frog/frog.json",
    "fast-complementary-dynamics/cd_fish/cd_fish_rig.json",
];

struct Measured {
    step_ms: f64,
    precompute_ms: f64,
    sim: Simulation,
}

fn measure(sc: &Scene, kind: SolverKind, repeats: usize) -> Result<Measured> {
    let mut best: Option<Measured> = None;
    for _ in 0..repeats.max(1) {
        let sim = simulate(sc, kind)?;
        // Skip the first two steps (caches and thread pool warming up).
        let m = median(&sim.step_ms[sim.step_ms.len().min(2)..]);
        if best.as_ref().map(|b| m < b.step_ms).unwrap_or(true) {
            best = Some(Measured {
                step_ms: m,
                precompute_ms: sim.precompute_ms,
                sim,
            });
        }
    }
    Ok(best.expect("at least one run"))
}

fn worst_residual(sim: &Simulation) -> f64 {
    sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max)
}

pub fn run(out: Option<&Path>, frames: usize, repeats: usize) -> Result<()> {
    let header = [
        "| scene | vertices | elements | full precompute ms | full ms/step | fast precompute ms | fast ms/step | speedup | structural orthogonality | max residual full / fast | seed simkit full / fast ms/step (published) |".to_string(),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|".to_string(),
    ];
    out!("{}\n{}", header[0], header[1]);
    let mut rows = header.to_vec();
    let mut emit = |label: String, sc: &Scene, published: String| -> Result<()> {
        let full = measure(sc, SolverKind::full_order(sc.model), repeats)?;
        let fast = measure(sc, SolverKind::Fast(FastParams::default_for(sc.mesh.dim())), repeats)?;
        let orth = fast
            .sim
            .fast
            .as_ref()
            .map(|f| f.structural_orthogonality)
            .unwrap_or(f64::NAN);
        let row = format!(
            "| {label} | {} | {} | {:.1} | {:.3} | {:.1} | {:.4} | {:.0}x | {orth:.1e} | {:.0e} / {:.0e} | {published} |",
            sc.mesh.n_vertices(),
            sc.mesh.n_elements(),
            full.precompute_ms,
            full.step_ms,
            fast.precompute_ms,
            fast.step_ms,
            full.step_ms / fast.step_ms,
            worst_residual(&full.sim),
            worst_residual(&fast.sim),
        );
        out!("{row}");
        rows.push(row);
        Ok(())
    };
    for ((w, h), full_ms, fast_ms) in BEAMS {
        let sc = metronome_beam(MetronomeBeam {
            w,
            h,
            ..Default::default()
        })?;
        emit(format!("metronome {w}x{h}"), &sc, format!("{full_ms} / {fast_ms}"))?;
    }
    for file in SCENES_3D {
        let mut sc = overtone::scene::load_scene(&example_path(file))?;
        let name = sc.name.clone();
        let label = if sc.model != ElasticModel::Arap {
            let asked = sc.model.name();
            sc.model = ElasticModel::Arap;
            format!("{name} (ARAP in place of {asked})")
        } else {
            name.to_string()
        };
        sc.frames.truncate(frames.max(4));
        emit(label, &sc, "–".into())?;
    }
    let recon = reconstruction_ms(&example_path(SCENES_3D[4]))?;
    let line = format!(
        "\nReconstruction of u = B z at the {} vertices of cd_fish (16 modes, weight structure): {:.3} ms (median of 200)",
        recon.0, recon.1
    );
    out!("{line}");
    rows.push(line);
    if let Some(p) = out {
        overtone::io::write_atomically(p, (rows.join("\n") + "\n").as_bytes())?;
    }
    Ok(())
}

/// Median time of reconstructing the displacement at every vertex from a non-zero state.
fn reconstruction_ms(scene: &Path) -> Result<(usize, f64)> {
    let sc = overtone::scene::load_scene(scene)?;
    let (n, d) = (sc.mesh.n_vertices(), sc.mesh.dim());
    let rig = overtone::rig::LbsRig::new(d, sc.mesh.vertices(), &sc.weights, sc.n_bones)?;
    let p0 = rig.params_from_transforms(&sc.frames[0])?;
    let dw = overtone::leak::default_momentum_weights(&sc.mesh)?;
    let params = overtone::dynamics::SolverParams {
        dt: sc.dt,
        ..Default::default()
    };
    let mut solver = overtone::dynamics::FastSolver::new(
        &sc.mesh,
        rig,
        &dw,
        &sc.material,
        &params,
        FastParams::default_for(d),
        &p0,
    )?;
    for f in &sc.frames[1..20] {
        let p = solver.rig().params_from_transforms(f)?;
        solver.step(&p)?;
    }
    let mut out = vec![0.0; n * d];
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        out.fill(0.0);
        let t = std::time::Instant::now();
        solver.add_displacement(&mut out);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((n, median(&times)))
}

/// CPU time (ns) used so far: `(calling thread, every thread of the process)`, the first field
/// (time on a core) of `/proc/thread-self/schedstat` and its sum over `/proc/self/task/*/`.
/// `None` where that is not available.
fn cpu_ns() -> Option<(u64, u64)> {
    let read = |path: std::path::PathBuf| -> Option<u64> {
        let text = std::fs::read_to_string(path).ok()?;
        text.split_whitespace().next()?.parse::<u64>().ok()
    };
    let own = read("/proc/thread-self/schedstat".into())?;
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        total += read(task.ok()?.path().join("schedstat"))?;
    }
    Some((own, total))
}

/// The lower quartile (nearest rank) of `x`; NaN when empty.
fn lower_quartile(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 4]
}

/// Substep counts of [`substeps_table`]; `None` is the automatic rule.
const SUBSTEPS: [Option<usize>; 5] = [Some(1), Some(2), Some(4), Some(8), None];

/// Cost per frame against substeps: a glTF character at 24 fps (the production integrator,
/// the default damping), its first `frames` frames simulated with 1, 2, 4 and 8 substeps and
/// the automatic count, by the fast and the full solver. Per configuration the figures are the
/// CPU time of every thread of the process and of the thread that steps the solver
/// ([`cpu_ns`]) from frame 2 to the last frame, per frame (the step and the frame's output:
/// displacement reconstruction, positions), the smallest over `repeats` rounds, and the lower
/// quartile of the step's own wall time; the rounds run every configuration in turn
/// so that each ratio against 1 substep compares figures taken under the same load. CPU time,
/// not wall time: on the shared machine the per-frame wall times are bimodal (CesiumMan, fast,
/// 8 substeps: 3.3 ms, or 20-45 ms for the frames during which the process waited for a core;
/// 0.44 s of CPU time for 4.1 s of wall time), and a frame longer than the scheduler's slice
/// nearly always waits. The full solver's work runs on rayon's workers (its stepping thread
/// mostly waits: 0.3 ms of CPU per frame against 88 ms for the process), so its figure is the
/// all-threads one; the fast solver steps on its own thread, while rayon's idle workers spin
/// between the parallel sections of the frame's output (about 1 ms per frame whatever the
/// substeps), so its figure is the stepping thread's. Returns the Markdown table.
pub fn substeps_table(character: &Path, frames: usize, repeats: usize) -> Result<String> {
    let settings = overtone::scene::CharacterSettings::default();
    let mut ch = overtone::scene::character_from_gltf(character, &settings, None)?;
    let keep = frames.max(4).min(ch.scene.frames.len()) - 1;
    ch.select_frames(0, keep)?;
    let sidecar = std::env::temp_dir().join(format!("overtone-bench-substeps-{}.ovt", std::process::id()));
    let kinds = [
        ("fast", SolverKind::Fast(FastParams::default_for(3))),
        ("full", SolverKind::full_order(ch.scene.model)),
    ];
    // best[solver][substeps] = (ms per frame, iterations per frame, substeps used if known)
    let mut best = [[(f64::INFINITY, 0usize, None::<usize>); SUBSTEPS.len()]; 2];
    let mut wall = [[f64::INFINITY; SUBSTEPS.len()]; 2];
    let mut all = [[f64::INFINITY; SUBSTEPS.len()]; 2];
    for round in 0..repeats.max(1) {
        for (k, (_, kind)) in kinds.iter().enumerate() {
            for (s, substeps) in SUBSTEPS.iter().enumerate() {
                let mut sc = ch.scene.clone();
                sc.dynamics.substeps = *substeps;
                let last = sc.frames.len() - 1;
                let (mut cpu_start, mut cpu_end) = (None, None);
                let mut clock = |k: usize, _: &[f64], _: &[f64]| -> overtone::Result<()> {
                    if k == 2 {
                        cpu_start = cpu_ns();
                    }
                    if k == last {
                        cpu_end = cpu_ns();
                    }
                    Ok(())
                };
                let sim = overtone::scene::simulate_streaming(&sc, *kind, Some(&sidecar), &mut clock)?;
                let per_frame = |a: u64, b: u64| (b - a) as f64 * 1e-6 / (last - 2) as f64;
                let (cpu, cpu_all) = match (cpu_start, cpu_end) {
                    (Some(a), Some(b)) if last > 2 => (per_frame(a.0, b.0), per_frame(a.1, b.1)),
                    _ => (f64::NAN, f64::NAN),
                };
                let ms = lower_quartile(&sim.step_ms[2.min(sim.step_ms.len())..]);
                let iterations = sim.steps.iter().map(|r| r.iterations).max().unwrap_or(0);
                let used = substeps.or(sim.fast.as_ref().map(|f| f.substeps));
                eprintln!(
                    "round {round}: {} substeps {:?}: {cpu:.3} ms CPU (all threads {cpu_all:.3}), {ms:.3} ms wall per frame",
                    kinds[k].0, substeps
                );
                if !(cpu >= best[k][s].0) {
                    best[k][s] = (cpu, iterations, used);
                }
                wall[k][s] = wall[k][s].min(ms);
                all[k][s] = all[k][s].min(cpu_all);
            }
        }
    }
    let _ = std::fs::remove_file(&sidecar);
    let mut rows = vec![
        format!(
            "{}: {} lattice vertices, {} tets, {} frames at 24 fps (dt = 1/24 s), damping {}; CPU time per frame, best of {} rounds",
            ch.scene.name,
            ch.scene.mesh.n_vertices(),
            ch.scene.mesh.n_elements(),
            keep + 1,
            ch.scene.dynamics.damping,
            repeats.max(1)
        ),
        String::new(),
        "| solver | substeps | CPU ms/frame, all threads | × 1 substep | CPU ms/frame, stepping thread | × 1 substep | step wall ms (lower quartile) | × 1 substep | local/global iterations per frame |".into(),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ];
    for (k, (name, _)) in kinds.iter().enumerate() {
        let (one, one_wall, one_all) = (best[k][0].0, wall[k][0], all[k][0]);
        for (s, substeps) in SUBSTEPS.iter().enumerate() {
            let (ms, it, used) = best[k][s];
            let label = match (substeps, used) {
                (Some(n), _) => n.to_string(),
                (None, Some(n)) => format!("auto ({n})"),
                (None, None) => "auto".into(),
            };
            rows.push(format!(
                "| {name} | {label} | {:.3} | {:.2} | {ms:.3} | {:.2} | {:.3} | {:.2} | {it} |",
                all[k][s],
                all[k][s] / one_all,
                ms / one,
                wall[k][s],
                wall[k][s] / one_wall,
            ));
        }
    }
    Ok(rows.join("\n") + "\n")
}

/// Multiples of the default stiffness (Young's modulus, and frequency × √multiple) in [`stiffness_table`].
const STIFFNESS: [f64; 3] = [1.0, 10.0, 100.0];

/// Substeps per physics step of the converged reference in [`stiffness_table`].
const REFERENCE_SUBSTEPS: usize = 8;

/// Host frame rate of [`stiffness_table`]'s per-frame figures (frames per second).
const HOST_FPS: f64 = 24.0;

/// The fast solver's cost against stiffness: a glTF character on the physics clock (its
/// animation sampled at [`PHYSICS_RATE`](overtone::dynamics::PHYSICS_RATE), one solver step a
/// sample, as a bake and the hosts step it), its first `frames` 24 fps frames, at 1x, 10x and
/// 100x the default Young's modulus. Per stiffness: the wall time of the solver's steps per
/// 24 fps frame (mean step from the third on, times the steps a frame; the smallest over
/// `repeats` rounds that run every stiffness in turn), the automatic substeps, the local/global iterations per
/// frame, the worst relative rig-orthogonality residual, the motion's peak (largest lattice
/// displacement over the 24 fps frames, as a share of the lattice's bounding-box diagonal),
/// and the largest difference from a reference stepped with [`REFERENCE_SUBSTEPS`] substeps
/// per physics step (max over the 24 fps frames and vertices, as a share of the reference's
/// peak). Returns the Markdown table.
pub fn stiffness_table(character: &Path, frames: usize, repeats: usize) -> Result<String> {
    use overtone::dynamics::PHYSICS_RATE;
    let settings = overtone::scene::CharacterSettings {
        fps: PHYSICS_RATE,
        ..Default::default()
    };
    let mut ch = overtone::scene::character_from_gltf(character, &settings, None)?;
    let per_frame = (PHYSICS_RATE / HOST_FPS).round() as usize;
    let keep = (frames.max(2) * per_frame).min(ch.scene.frames.len() - 1);
    ch.select_frames(0, keep)?;
    let host_frames = keep / per_frame;
    let (n, d) = (ch.scene.mesh.n_vertices(), ch.scene.mesh.dim());
    anyhow::ensure!(d == 3, "the stiffness sweep runs a 3D character");
    let (lo, hi) = overtone::mesh::bounding_box(ch.scene.mesh.vertices());
    let diagonal = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
    let e0 = ch.scene.material.youngs_modulus;
    let kind = SolverKind::Fast(FastParams::default_for(d));
    let sidecar = std::env::temp_dir().join(format!("overtone-bench-stiffness-{}.ovt", std::process::id()));
    let scene_at = |scale: f64, substeps: Option<usize>| {
        let mut sc = ch.scene.clone();
        sc.material.youngs_modulus = e0 * scale;
        // Stiffness × scale is frequency × √scale.
        sc.dynamics.frequency = ch.scene.dynamics.frequency.map(|f| f * scale.sqrt());
        sc.dynamics.substeps = substeps;
        sc
    };
    // The lattice displacement at every 24 fps frame.
    let host_motion = |sc: &Scene| -> Result<(Vec<Vec<f64>>, Simulation)> {
        let mut out = Vec::with_capacity(host_frames + 1);
        let mut keep_frame = |k: usize, _: &[f64], disp: &[f64]| -> overtone::Result<()> {
            if k % per_frame == 0 {
                out.push(disp.to_vec());
            }
            Ok(())
        };
        let sim = overtone::scene::simulate_streaming(sc, kind, Some(&sidecar), &mut keep_frame)?;
        Ok((out, sim))
    };
    let peak = |u: &[Vec<f64>]| {
        u.iter()
            .flat_map(|f| f.chunks(d).map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt()))
            .fold(0.0, f64::max)
    };
    let mut references = Vec::new();
    for &scale in &STIFFNESS {
        references.push(host_motion(&scene_at(scale, Some(REFERENCE_SUBSTEPS)))?.0);
    }
    // best[s] = (step wall ms per 24 fps frame, substeps, iterations per frame, residual, peak,
    // difference, lowest mode Hz)
    let mut best = [(f64::INFINITY, 0usize, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64); STIFFNESS.len()];
    for round in 0..repeats.max(1) {
        for (s, &scale) in STIFFNESS.iter().enumerate() {
            let (motion, sim) = host_motion(&scene_at(scale, None))?;
            // The steps' own time (the solver's step, not the per-step output the streaming
            // simulation writes for every physics sample), from the third on.
            let timed = &sim.step_ms[2.min(sim.step_ms.len())..];
            let cpu = timed.iter().sum::<f64>() / timed.len().max(1) as f64 * per_frame as f64;
            let reference = &references[s];
            let ref_peak = peak(reference);
            let diff = motion
                .iter()
                .zip(reference)
                .flat_map(|(a, b)| {
                    a.chunks(d)
                        .zip(b.chunks(d))
                        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).powi(2)).sum::<f64>().sqrt())
                })
                .fold(0.0, f64::max)
                / ref_peak;
            let iterations = sim.steps.iter().map(|r| r.iterations).sum::<usize>() as f64 / host_frames as f64;
            let residual = sim.steps.iter().map(|r| r.relative_residual).fold(0.0, f64::max);
            let substeps = sim.fast.as_ref().map_or(0, |f| f.substeps);
            eprintln!("round {round}: {scale}x E: {cpu:.3} ms of steps per {HOST_FPS} fps frame, {substeps} substeps, {iterations:.1} iterations per frame, difference {diff:.3}");
            if !(cpu >= best[s].0) {
                let f1 = sim.lowest_frequency_hz.unwrap_or(f64::NAN);
                best[s] = (cpu, substeps, iterations, residual, peak(&motion) / diagonal, diff, f1);
            }
        }
    }
    let _ = std::fs::remove_file(&sidecar);
    let mut rows = vec![
        format!(
            "{}: {n} lattice vertices, {} tets, fast solver, physics clock {PHYSICS_RATE} Hz, {host_frames} frames at {HOST_FPS} fps, damping {}; best of {} rounds",
            ch.scene.name,
            ch.scene.mesh.n_elements(),
            ch.scene.dynamics.damping,
            repeats.max(1)
        ),
        String::new(),
        format!("| stiffness (× default) | lowest mode | step ms per {HOST_FPS} fps frame | × default | automatic substeps per physics step | local/global iterations per frame | worst relative residual | peak / diagonal | difference from {REFERENCE_SUBSTEPS} substeps / its peak |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ];
    for (s, &scale) in STIFFNESS.iter().enumerate() {
        let (ms, substeps, it, res, pk, diff, f1) = best[s];
        rows.push(format!(
            "| {scale}x | {f1:.1} Hz | {ms:.3} | {:.2} | {substeps} | {it:.1} | {res:.1e} | {pk:.2e} | {diff:.3} |",
            ms / best[0].0,
        ));
    }
    Ok(rows.join("\n") + "\n")
}

/// The stages of one bind of a glTF character: `(stage, ms)` in order, preparation (reading,
/// lattice, embedding, weights: what the core reports while it builds the character) then the
/// fast solver's precompute (from `sidecar` when it holds this character's, else built and
/// written there), and the sidecar's status.
fn bind_stages(character: &Path, sidecar: &Path) -> Result<(Vec<(String, f64)>, String)> {
    let stages = crate::stage_clock::StageClock::new();
    stages.mark("reading the glTF and sampling the rig");
    let settings = overtone::scene::CharacterSettings {
        sidecar: Some(sidecar.to_path_buf()),
        ..Default::default()
    };
    let mut ch = overtone::progress::scoped(&stages, || {
        overtone::scene::character_from_gltf(character, &settings, None)
    })?;
    ch.save_preparation();
    stages.mark("precompute");
    // One frame: the bind alone, no step.
    ch.select_frames(0, 0)?;
    let kind = SolverKind::Fast(ch.fast_params(FastParams {
        modes: overtone::dynamics::AUTO_MODES,
        ..FastParams::default_for(3)
    }));
    let sim = overtone::progress::scoped(&stages, || {
        overtone::scene::simulate_streaming(&ch.scene, kind, Some(sidecar), &mut |_, _, _| Ok(()))
    })?;
    let status = sim.fast.as_ref().map_or("none".to_string(), |f| f.cache.to_string());
    let mut out: Vec<(String, f64)> = stages.stages();
    // The precompute's own stages replace its one mark, when the solver reported them.
    if let Some(f) = &sim.fast {
        if let Some(k) = out.iter().position(|(n, _)| n == "precompute") {
            out.truncate(k);
            out.extend(f.stage_ms.iter().map(|(n, ms)| (format!("precompute: {n}"), *ms)));
        }
    }
    Ok((out, status))
}

/// One stage of the bind table: its name, cold ms and warm ms.
type StageRow = (String, f64, f64);

/// The bind table of issue 34: per glTF character, every stage of a bind with an empty sidecar
/// (cold) and with the sidecar the cold bind wrote (warm), best of `repeats` rounds per stage
/// (rounds run the characters in turn; "—" for a stage one of the two binds does not have), and
/// the totals. Returns the Markdown. The sidecars are committed as they are written (the
/// command's outputs are otherwise staged until it ends), so an interrupt after the first
/// round reports the run's outputs as written although the table is not.
pub fn bind_table(characters: &[std::path::PathBuf], repeats: usize) -> Result<String> {
    /// The sidecars' folder, removed however the table ends.
    struct Scratch(std::path::PathBuf);
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let scratch = Scratch(std::env::temp_dir().join(format!("overtone-bench-bind-{}", std::process::id())));
    let dir = &scratch.0;
    std::fs::create_dir_all(dir)?;
    // best[c] = per stage (name, cold ms, warm ms), and the warm status.
    let mut best: Vec<(Vec<StageRow>, String)> = vec![(Vec::new(), String::new()); characters.len()];
    for round in 0..repeats.max(1) {
        for (c, path) in characters.iter().enumerate() {
            let sidecar = dir.join(format!("{c}.ovt"));
            let _ = std::fs::remove_file(&sidecar);
            let (cold, _) = bind_stages(path, &sidecar)?;
            // The command's outputs are staged until it ends (see `interrupt`): the sidecar the
            // cold bind wrote is put in place now, for the warm bind to find.
            overtone::io::commit_deferred()?;
            let (warm, status) = bind_stages(path, &sidecar)?;
            let total = |s: &[(String, f64)]| s.iter().map(|(_, ms)| ms).sum::<f64>();
            eprintln!(
                "round {round}: {}: cold {:.2} s, warm {:.2} s ({status})",
                path.display(),
                total(&cold) / 1e3,
                total(&warm) / 1e3
            );
            let rows = &mut best[c].0;
            for (name, ms) in &cold {
                match rows.iter_mut().find(|(n, _, _)| n == name) {
                    Some(r) => r.1 = r.1.min(*ms),
                    None => rows.push((name.clone(), *ms, f64::NAN)),
                }
            }
            for (name, ms) in &warm {
                match rows.iter_mut().find(|(n, _, _)| n == name) {
                    Some(r) if r.2.is_nan() => r.2 = *ms,
                    Some(r) => r.2 = r.2.min(*ms),
                    None => rows.push((name.clone(), f64::NAN, *ms)),
                }
            }
            best[c].1 = status;
        }
    }
    drop(scratch);
    let mut out = vec![format!(
        "Binds (fast solver, default settings), best of {} rounds per stage: cold with an empty sidecar, warm with the one the cold bind wrote.",
        repeats.max(1)
    )];
    for (path, (rows, status)) in characters.iter().zip(&best) {
        let sum = |f: fn(&StageRow) -> f64| rows.iter().map(f).filter(|x| x.is_finite()).sum::<f64>();
        let (cold, warm) = (sum(|r| r.1), sum(|r| r.2));
        out.push(String::new());
        out.push(format!(
            "**{}**: cold {:.2} s, warm {:.2} s (warm: {status})",
            path.file_name()
                .map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned()),
            cold / 1e3,
            warm / 1e3
        ));
        out.push(String::new());
        out.push("| stage | cold ms | warm ms |".into());
        out.push("|---|---:|---:|".into());
        for (name, c, w) in rows {
            let cell = |x: f64| if x.is_finite() { format!("{x:.1}") } else { "—".into() };
            out.push(format!("| {name} | {} | {} |", cell(*c), cell(*w)));
        }
        out.push(format!("| **total** | **{cold:.1}** | **{warm:.1}** |"));
    }
    Ok(out.join("\n") + "\n")
}
