//! The bridge between Overtone's core and C++ hosts.
//!
//! One `#[cxx::bridge]` module; every function the bridge exports runs its body under
//! `catch_unwind`, so a Rust panic reaches C++ as an ordinary error (a `rust::Error`
//! exception, which the C++ wrapper turns into a status value) and never aborts the host.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use overtone::cache::CacheState;
use overtone::deformer::{BodyInput, DeformerSettings, SurfaceDeformer, SurfacePart};
use overtone::dynamics::{FastParams, Integrator, Material, RestShape};
use overtone::progress::AtomicProgress;
use overtone::scene::{CharacterSettings, SceneDynamics};
use overtone::OvertoneError;

#[cxx::bridge(namespace = "overtone::ffi")]
mod ffi {
    /// Deformer settings (defaults from `default_settings`).
    #[derive(Clone, Debug)]
    struct Settings {
        /// Young's modulus in the normalised frame (character's longest half-extent = 1).
        youngs_modulus: f64,
        poisson_ratio: f64,
        density: f64,
        /// Frames per second (`dt = 1/fps`).
        fps: f64,
        /// Lattice cells along the longest side.
        lattice_resolution: usize,
        /// Fast (reduced) solver if true, full-order otherwise.
        fast: bool,
        /// Skinning eigenmodes of the fast solver; 0 (default): the body's automatic count
        /// (64 on a small body, 16 otherwise).
        modes: usize,
        clusters: usize,
        /// 0: implicit midpoint with substeps (default); 1: one backward-Euler step per frame
        /// (the seeds' scheme).
        integrator: u8,
        /// Substeps per frame, 1–64; 0 chooses them from the frame length and the lowest mode.
        substeps: usize,
        /// Damping ratio ζ of the lowest vibration mode (0 none, 1 critical); changeable
        /// between frames with `set_controls`.
        damping: f64,
        /// Frequency (Hz) of the lowest mode; Young's modulus is rescaled to it. 0: none.
        frequency: f64,
        /// Elastic reference: 0 the rig pose (a held pose is at rest, default), 1 the bind shape.
        rest: u8,
        /// Physics seconds per animation second (> 0).
        time_scale: f64,
        /// Seconds the rig is held at the first pose after a bind or a reset (0–60).
        preroll: f64,
        /// Multiplier of the output displacement (≥ 0); changeable with `set_controls`.
        strength: f64,
        /// A rig jump between two frames beyond this fraction of the body's bounding-box
        /// diagonal restarts the simulation there. 0: never.
        cut_distance: f64,
        /// Gravity in the host's world frame, world length units/s² (e.g. `[0, 0, -9.81]` in a
        /// Z-up scene in metres).
        gravity: [f64; 3],
    }

    /// Where a deformer's precompute came from (`overtone::cache::CacheState`, same values):
    /// hosts branch on it and show `cache_status` as the detail.
    #[repr(u8)]
    enum CacheState {
        /// No sidecar path was given.
        NotRequested = 0,
        /// Loaded from the sidecar.
        Loaded = 1,
        /// Built and written: no sidecar yet, or one built for other inputs (silent).
        Built = 2,
        /// Built and written because the sidecar was unreadable or did not fit (warn).
        Unusable = 3,
        /// Built, but the sidecar could not be written (warn).
        WriteFailed = 4,
    }

    extern "Rust" {
        type Deformer;
        fn default_settings() -> Settings;
        /// The fields of `Settings` in order, `name:type` joined by commas (types `f64`, `usize`,
        /// `bool`, `u8`, `f64x3`): the list the C ABI, C++ and Python layouts are tested against.
        fn settings_fields() -> String;
        /// The bridge struct's layout, `name:offset:size` per field in order, then `sizeof:N`
        /// (the format of the C ABI's `overtone_settings_layout`), for the C++ layout check.
        fn settings_layout() -> String;
        /// `rest`: n × 3; `triangles`: t × 3; `weights`: n × bones; `morph_deltas`: T × n × 3
        /// blendshape offsets (empty and `targets = 0` for none); `first_morph_weights`: T;
        /// `leak`: n values or empty for the default; `stiffness`: n multipliers of Young's
        /// modulus (> 0 painted, -1 unpainted = 1) or empty for uniform; `first_pose`: bones × 12
        /// (3 × 4 row-major skin transforms); `sidecar`: a .ovt path or empty.
        #[allow(clippy::too_many_arguments)]
        fn create_deformer(
            settings: &Settings,
            rest: &[f64],
            triangles: &[u32],
            weights: &[f64],
            bones: usize,
            morph_deltas: &[f64],
            targets: usize,
            first_morph_weights: &[f64],
            leak: &[f64],
            stiffness: &[f64],
            first_pose: &[f64],
            sidecar: &str,
        ) -> Result<Box<Deformer>>;
        /// One frame: `pose` bones × 12, `morph_weights` T (empty without blendshapes), `out`
        /// n × 3 displacement (world units).
        fn step(self: &mut Deformer, pose: &[f64], morph_weights: &[f64], out: &mut [f64]) -> Result<()>;
        /// Changes the keyframable controls from the next step on, without a rebind: `damping`
        /// (ζ ≥ 0; refactors only the solver's system, never the sidecar) and `strength` (≥ 0).
        /// On error nothing changes.
        fn set_controls(self: &mut Deformer, damping: f64, strength: f64) -> Result<()>;
        /// Back to rest in `pose` (with the frame's `morph_weights`), then the pre-roll.
        fn reset(self: &mut Deformer, pose: &[f64], morph_weights: &[f64]) -> Result<()>;
        /// Blendshape targets T.
        fn target_count(self: &Deformer) -> usize;
        /// Relative rig-orthogonality residual of the last step, bones and blendshapes (0 before
        /// the first).
        fn residual(self: &Deformer) -> f64;
        /// Where the precompute came from, as text for a TD (the detail behind `cache_state`).
        fn cache_status(self: &Deformer) -> String;
        /// Where the precompute came from, as the code hosts branch on (never the text).
        fn cache_state(self: &Deformer) -> CacheState;
        fn vertex_count(self: &Deformer) -> usize;
        fn bone_count(self: &Deformer) -> usize;
        /// Test hook: panics inside the bridge when `really` is true (proves hosts survive).
        fn debug_panic(self: &mut Deformer, really: bool) -> Result<()>;
        /// Meshes (parts) the deformer was bound with.
        fn part_count(self: &Deformer) -> usize;
        /// First vertex of part `i` in the step's output (`i = part_count` gives the total).
        fn part_offset(self: &Deformer, i: usize) -> usize;

        type Binding;
        /// Starts a bind on a worker thread and returns at once. One body made of parts: part
        /// `p` has `part_vertices[p]` vertices and `part_triangles[p]` triangles (indices local
        /// to the part); `rest`, `triangles`, `weights`, `leak` are the parts' arrays
        /// concatenated in order (`leak`, `stiffness` empty or one value per vertex); `morph_deltas` the
        /// parts' `T × n_p × 3` blocks concatenated. Empty `part_vertices`: one part.
        #[allow(clippy::too_many_arguments)]
        fn start_bind(
            settings: &Settings,
            rest: &[f64],
            triangles: &[u32],
            part_vertices: &[usize],
            part_triangles: &[usize],
            weights: &[f64],
            bones: usize,
            morph_deltas: &[f64],
            targets: usize,
            first_morph_weights: &[f64],
            leak: &[f64],
            stiffness: &[f64],
            first_pose: &[f64],
            sidecar: &str,
        ) -> Result<Box<Binding>>;
        /// Fraction of the bind done, in [0, 1], never decreasing.
        fn fraction(self: &Binding) -> f64;
        /// What the bind is doing now.
        fn stage(self: &Binding) -> String;
        /// 0 running, 1 done, 2 failed, 3 cancelled.
        fn state(self: &Binding) -> u8;
        /// Asks the worker to stop at its next check (returns at once).
        fn cancel(self: &Binding);
        /// Waits for the worker and hands over the deformer, or the error message (the
        /// bind's error, or "cancelled by the host"). A second call fails.
        fn take(self: &mut Binding) -> Result<Box<Deformer>>;

        type PullBack;
        /// The rest-space pull-back of a world displacement through LBS (see
        /// `overtone::rig::PullBack`): `weights` n × bones row-major (finite, ≥ 0; only the
        /// positive entries are kept); `part_vertices` the vertex counts of consecutive parts
        /// (summing to n) and `part_linear` their 3 × 3 row-major matrices (parts × 9), both
        /// empty for the identity.
        fn create_pull_back(
            weights: &[f64],
            vertices: usize,
            bones: usize,
            part_vertices: &[usize],
            part_linear: &[f64],
        ) -> Result<Box<PullBack>>;
        /// `out_offsets[v] = M_p (Σ_b w_vb A_b)⁻¹ u[v]`, 0 where the blend is singular:
        /// `transforms` bones × 12 (3 × 4 row-major), `u` and `out_offsets` n × 3. Allocates
        /// nothing on success.
        fn pull_back(self: &PullBack, transforms: &[f64], u: &[f64], out_offsets: &mut [f64]) -> Result<()>;
    }
}

/// The deformer behind the bridge.
pub struct Deformer {
    inner: SurfaceDeformer,
}

fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("internal error in {what} (please report): {msg}"))
        }
    }
}

/// The core's cache state as the bridge's enum (same values, checked by a test). A plain match
/// on a field: it cannot panic, so it needs no `guarded` (like `residual` and `cache_status`).
fn bridge_cache_state(state: CacheState) -> ffi::CacheState {
    match state {
        CacheState::NotRequested => ffi::CacheState::NotRequested,
        CacheState::Loaded => ffi::CacheState::Loaded,
        CacheState::Built => ffi::CacheState::Built,
        CacheState::Unusable => ffi::CacheState::Unusable,
        CacheState::WriteFailed => ffi::CacheState::WriteFailed,
    }
}

fn default_settings() -> ffi::Settings {
    let c = CharacterSettings::default();
    // The deformer's defaults: the body's automatic mode count, 100 clusters.
    let f = DeformerSettings::default().fast.unwrap_or(FastParams::default_for(3));
    let d = SceneDynamics::default();
    ffi::Settings {
        youngs_modulus: c.material.youngs_modulus,
        poisson_ratio: c.material.poisson_ratio,
        density: c.material.density,
        fps: c.fps,
        lattice_resolution: c.lattice_resolution,
        fast: true,
        modes: f.modes,
        clusters: f.clusters,
        integrator: integrator_code(d.integrator),
        substeps: d.substeps.unwrap_or(0),
        damping: d.damping,
        frequency: d.frequency.unwrap_or(0.0),
        rest: rest_code(d.rest),
        time_scale: d.time_scale,
        preroll: d.preroll,
        strength: d.strength,
        cut_distance: d.cut_distance.unwrap_or(0.0),
        gravity: [0.0; 3],
    }
}

/// Lists the fields of `Settings` by destructuring one without `..`, so a field added to the
/// struct does not compile until it is listed here; also gives each field's byte offset in the
/// (`repr(C)`) struct, which the tests check increase along the list (declaration order), and
/// its size.
macro_rules! settings_fields {
    ($($field:ident: $ty:literal),* $(,)?) => {{
        let ffi::Settings { $($field),* } = default_settings();
        (
            [$(concat!(stringify!($field), ":", $ty)),*].join(","),
            vec![$(std::mem::offset_of!(ffi::Settings, $field)),*],
            vec![$(std::mem::size_of_val(&$field)),*],
        )
    }};
}

fn settings_fields() -> String {
    settings_field_layout().0
}

fn settings_layout() -> String {
    let (names, offsets, sizes) = settings_field_layout();
    let mut text: Vec<String> = names
        .split(',')
        .zip(offsets.iter().zip(&sizes))
        .map(|(f, (o, s))| format!("{}:{o}:{s}", f.split(':').next().unwrap_or(f)))
        .collect();
    text.push(format!("sizeof:{}", std::mem::size_of::<ffi::Settings>()));
    text.join(",")
}

/// `settings_fields`, the byte offsets and the sizes of the fields in the bridge's struct.
fn settings_field_layout() -> (String, Vec<usize>, Vec<usize>) {
    settings_fields!(
        youngs_modulus: "f64",
        poisson_ratio: "f64",
        density: "f64",
        fps: "f64",
        lattice_resolution: "usize",
        fast: "bool",
        modes: "usize",
        clusters: "usize",
        integrator: "u8",
        substeps: "usize",
        damping: "f64",
        frequency: "f64",
        rest: "u8",
        time_scale: "f64",
        preroll: "f64",
        strength: "f64",
        cut_distance: "f64",
        gravity: "f64x3",
    )
}

fn integrator_code(i: Integrator) -> u8 {
    match i {
        Integrator::ImplicitMidpoint => 0,
        Integrator::BackwardEuler => 1,
    }
}

fn rest_code(r: RestShape) -> u8 {
    match r {
        RestShape::Rig => 0,
        RestShape::Bind => 1,
    }
}

/// A host's stiffness array (empty: uniform) as the core's per-vertex multipliers: `-1`
/// (unpainted) becomes 1, painted values must be finite and > 0.
fn stiffness_field(stiffness: &[f64], n: usize) -> Result<Option<Vec<f64>>, String> {
    if stiffness.is_empty() {
        return Ok(None);
    }
    if stiffness.len() != n {
        return Err(format!(
            "stiffness field: expected {n} values (one per vertex), got {}",
            stiffness.len()
        ));
    }
    if let Some(v) = stiffness.iter().position(|&x| x != -1.0 && !(x.is_finite() && x > 0.0)) {
        return Err(format!(
            "stiffness field: {} at vertex {v}; painted multipliers of Young's modulus must be finite \
             and > 0 (1: the default), or -1 for an unpainted vertex",
            stiffness[v]
        ));
    }
    Ok(Some(
        stiffness.iter().map(|&x| if x == -1.0 { 1.0 } else { x }).collect(),
    ))
}

/// The core's settings from the bridge's, with `stiffness` (per surface vertex, see
/// [`stiffness_field`]) for a body of `n` vertices; every range is checked here or by the bind.
fn deformer_settings(settings: &ffi::Settings, stiffness: &[f64], n: usize) -> Result<DeformerSettings, String> {
    let integrator = match settings.integrator {
        0 => Integrator::ImplicitMidpoint,
        1 => Integrator::BackwardEuler,
        x => {
            return Err(format!(
                "setting `integrator` = {x} is invalid: 0 (implicit midpoint) or 1 (backward Euler)"
            ))
        }
    };
    let rest = match settings.rest {
        0 => RestShape::Rig,
        1 => RestShape::Bind,
        x => {
            return Err(format!(
                "setting `rest` = {x} is invalid: 0 (rig pose) or 1 (bind shape)"
            ))
        }
    };
    let nonneg = |name: &str, v: f64| -> Result<f64, String> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!(
                "setting `{name}` = {v} is invalid: must be a finite number >= 0"
            ))
        }
    };
    let dynamics = SceneDynamics {
        integrator,
        substeps: (settings.substeps != 0).then_some(settings.substeps),
        damping: nonneg("damping", settings.damping)?,
        frequency: (nonneg("frequency", settings.frequency)? != 0.0).then_some(settings.frequency),
        rest,
        stiffness: stiffness_field(stiffness, n)?,
        // The lattice's material shares come from the embedding, never from the host.
        fill: None,
        time_scale: settings.time_scale,
        preroll: nonneg("preroll", settings.preroll)?,
        strength: nonneg("strength", settings.strength)?,
        cut_distance: (nonneg("cut_distance", settings.cut_distance)? != 0.0).then_some(settings.cut_distance),
    };
    // Ranges the core checks against the lattice (stiffness size) are re-checked there; the
    // rest is checked now so a bad setting fails before any work.
    dynamics
        .validate(dynamics.stiffness.as_ref().map_or(0, |s| s.len()))
        .map_err(|e| e.to_string())?;
    let s = DeformerSettings {
        character: CharacterSettings {
            lattice_resolution: settings.lattice_resolution,
            material: Material {
                youngs_modulus: settings.youngs_modulus,
                poisson_ratio: settings.poisson_ratio,
                density: settings.density,
            },
            fps: settings.fps,
            animation: None,
            ..CharacterSettings::default()
        },
        fast: settings.fast.then_some(FastParams {
            modes: settings.modes,
            clusters: settings.clusters,
        }),
        dynamics,
        gravity: settings.gravity,
    };
    if let Some(g) = s.gravity.iter().find(|g| !g.is_finite()) {
        return Err(format!("setting `gravity` holds {g}: must be finite"));
    }
    if !(s.character.fps.is_finite() && s.character.fps > 0.0) {
        return Err(format!("setting `fps` = {} is invalid: must be > 0", s.character.fps));
    }
    Ok(s)
}

/// A body's arrays, owned by the worker thread.
struct OwnedBody {
    rest: Vec<f64>,
    triangles: Vec<usize>,
    weights: Vec<f64>,
    morph_deltas: Vec<f64>,
    leak: Vec<f64>,
    first_morph_weights: Vec<f64>,
    first_pose: Vec<f64>,
    sidecar: String,
    /// Per part: vertex range, triangle range (in triangles), morph range (in numbers).
    parts: Vec<(std::ops::Range<usize>, std::ops::Range<usize>, std::ops::Range<usize>)>,
    bones: usize,
    targets: usize,
}

impl OwnedBody {
    fn input(&self) -> BodyInput<'_> {
        BodyInput {
            parts: self
                .parts
                .iter()
                .map(|(v, t, d)| SurfacePart {
                    vertices: &self.rest[3 * v.start..3 * v.end],
                    triangles: &self.triangles[3 * t.start..3 * t.end],
                    weights: &self.weights[v.start * self.bones..v.end * self.bones],
                    morph_deltas: &self.morph_deltas[d.clone()],
                    leak: (!self.leak.is_empty()).then(|| &self.leak[v.start..v.end]),
                })
                .collect(),
            n_bones: self.bones,
            n_targets: self.targets,
            first_morph_weights: &self.first_morph_weights,
            first_pose: &self.first_pose,
            sidecar: (!self.sidecar.is_empty()).then(|| Path::new(&self.sidecar)),
        }
    }
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const FAILED: u8 = 2;
const CANCELLED: u8 = 3;

struct Shared {
    progress: AtomicProgress,
    state: AtomicU8,
    result: Mutex<Option<Result<SurfaceDeformer, String>>>,
}

/// A bind running on a worker thread (see `start_bind`). Dropping it cancels the worker and
/// waits for it, so no thread outlives its handle.
pub struct Binding {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl Drop for Binding {
    fn drop(&mut self) {
        self.shared.progress.cancel();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn start_bind(
    settings: &ffi::Settings,
    rest: &[f64],
    triangles: &[u32],
    part_vertices: &[usize],
    part_triangles: &[usize],
    weights: &[f64],
    bones: usize,
    morph_deltas: &[f64],
    targets: usize,
    first_morph_weights: &[f64],
    leak: &[f64],
    stiffness: &[f64],
    first_pose: &[f64],
    sidecar: &str,
) -> Result<Box<Binding>, String> {
    guarded("start_bind", || {
        let n = rest.len() / 3;
        let s = deformer_settings(settings, stiffness, n)?;
        let (pv, pt): (Vec<usize>, Vec<usize>) = if part_vertices.is_empty() && part_triangles.is_empty() {
            (vec![n], vec![triangles.len() / 3])
        } else {
            (part_vertices.to_vec(), part_triangles.to_vec())
        };
        if pv.len() != pt.len() || pv.is_empty() {
            return Err(format!(
                "parts: {} vertex counts and {} triangle counts given; one of each per part is needed",
                pv.len(),
                pt.len()
            ));
        }
        let (sum_v, sum_t) = (
            pv.iter().try_fold(0usize, |a, &x| a.checked_add(x)),
            pt.iter().try_fold(0usize, |a, &x| a.checked_add(x)),
        );
        if sum_v != Some(n) || rest.len() % 3 != 0 {
            return Err(format!(
                "parts: the vertex counts add up to {sum_v:?} but `rest` holds {} numbers ({n} vertices)",
                rest.len()
            ));
        }
        if sum_t.map(|t| t.checked_mul(3)) != Some(Some(triangles.len())) {
            return Err(format!(
                "parts: the triangle counts add up to {sum_t:?} but `triangles` holds {} indices",
                triangles.len()
            ));
        }
        if morph_deltas.len() != targets.saturating_mul(3).saturating_mul(n) {
            return Err(format!(
                "blendshape offsets: expected {targets} targets x {n} vertices x 3 = {} numbers, got {}",
                targets.saturating_mul(3).saturating_mul(n),
                morph_deltas.len()
            ));
        }
        let mut parts = Vec::with_capacity(pv.len());
        let (mut v0, mut t0) = (0, 0);
        for (&nv, &nt) in pv.iter().zip(&pt) {
            let d0 = targets * 3 * v0;
            parts.push((v0..v0 + nv, t0..t0 + nt, d0..d0 + targets * 3 * nv));
            v0 += nv;
            t0 += nt;
        }
        let body = OwnedBody {
            rest: rest.to_vec(),
            triangles: triangles.iter().map(|&i| i as usize).collect(),
            weights: weights.to_vec(),
            morph_deltas: morph_deltas.to_vec(),
            leak: leak.to_vec(),
            first_morph_weights: first_morph_weights.to_vec(),
            first_pose: first_pose.to_vec(),
            sidecar: sidecar.to_string(),
            parts,
            bones,
            targets,
        };
        let shared = Arc::new(Shared {
            progress: AtomicProgress::new(),
            state: AtomicU8::new(RUNNING),
            result: Mutex::new(None),
        });
        let worker_shared = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("overtone-bind".into())
            .spawn(move || {
                let sh = &worker_shared;
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    SurfaceDeformer::bind(&s, &body.input(), &sh.progress)
                }));
                let (state, result) = match outcome {
                    Ok(Ok(d)) => (DONE, Ok(d)),
                    Ok(Err(OvertoneError::Cancelled)) => (CANCELLED, Err(OvertoneError::Cancelled.to_string())),
                    Ok(Err(e)) => (FAILED, Err(e.to_string())),
                    Err(_) => (
                        FAILED,
                        Err("internal error in the bind (please report): a panic".to_string()),
                    ),
                };
                if let Ok(mut r) = sh.result.lock() {
                    *r = Some(result);
                }
                sh.state.store(state, Ordering::Release);
            })
            .map_err(|e| format!("could not start the bind thread: {e}"))?;
        Ok(Box::new(Binding {
            shared,
            worker: Some(worker),
        }))
    })
}

impl Binding {
    fn fraction(&self) -> f64 {
        self.shared.progress.fraction()
    }
    fn stage(&self) -> String {
        self.shared.progress.stage()
    }
    fn state(&self) -> u8 {
        self.shared.state.load(Ordering::Acquire)
    }
    fn cancel(&self) {
        self.shared.progress.cancel();
    }
    fn take(&mut self) -> Result<Box<Deformer>, String> {
        guarded("take", || {
            if let Some(w) = self.worker.take() {
                w.join().map_err(|_| "the bind thread died".to_string())?;
            }
            let mut slot = self
                .shared
                .result
                .lock()
                .map_err(|_| "the bind's result is unavailable".to_string())?;
            match slot.take() {
                Some(Ok(inner)) => Ok(Box::new(Deformer { inner })),
                Some(Err(msg)) => Err(msg),
                None => Err("the bind's result was already taken".to_string()),
            }
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn create_deformer(
    settings: &ffi::Settings,
    rest: &[f64],
    triangles: &[u32],
    weights: &[f64],
    bones: usize,
    morph_deltas: &[f64],
    targets: usize,
    first_morph_weights: &[f64],
    leak: &[f64],
    stiffness: &[f64],
    first_pose: &[f64],
    sidecar: &str,
) -> Result<Box<Deformer>, String> {
    guarded("create_deformer", || {
        let s = deformer_settings(settings, stiffness, rest.len() / 3)?;
        let tris: Vec<usize> = triangles.iter().map(|&i| i as usize).collect();
        let leak = (!leak.is_empty()).then_some(leak);
        let sidecar = (!sidecar.is_empty()).then(|| Path::new(sidecar));
        SurfaceDeformer::with_morphs(
            &s,
            rest,
            &tris,
            weights,
            bones,
            morph_deltas,
            targets,
            first_morph_weights,
            leak,
            first_pose,
            sidecar,
        )
        .map(|inner| Box::new(Deformer { inner }))
        .map_err(|e| e.to_string())
    })
}

impl Deformer {
    fn step(&mut self, pose: &[f64], morph_weights: &[f64], out: &mut [f64]) -> Result<(), String> {
        guarded("step", || {
            self.inner
                .step_with_morphs(pose, morph_weights, out)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }
    fn set_controls(&mut self, damping: f64, strength: f64) -> Result<(), String> {
        guarded("set_controls", || {
            self.inner.set_controls(damping, strength).map_err(|e| e.to_string())
        })
    }
    fn reset(&mut self, pose: &[f64], morph_weights: &[f64]) -> Result<(), String> {
        guarded("reset", || {
            self.inner
                .reset_with_morphs(pose, morph_weights)
                .map_err(|e| e.to_string())
        })
    }
    fn target_count(&self) -> usize {
        self.inner.n_targets()
    }
    fn residual(&self) -> f64 {
        self.inner.relative_residual()
    }
    fn cache_status(&self) -> String {
        self.inner.cache_status().to_string()
    }
    fn cache_state(&self) -> ffi::CacheState {
        bridge_cache_state(self.inner.cache_status().state())
    }
    fn vertex_count(&self) -> usize {
        self.inner.n_vertices()
    }
    fn bone_count(&self) -> usize {
        self.inner.n_bones()
    }
    fn part_count(&self) -> usize {
        self.inner.n_parts()
    }
    fn part_offset(&self, i: usize) -> usize {
        match self.inner.part_range(i) {
            Some(r) => r.start,
            None => self.inner.n_vertices(),
        }
    }
    fn debug_panic(&mut self, really: bool) -> Result<(), String> {
        guarded("debug_panic", || {
            if really {
                panic!("deliberate panic requested by the host's test");
            }
            Ok(())
        })
    }
}

/// The pull-back behind the bridge.
pub struct PullBack {
    inner: overtone::rig::PullBack,
}

fn create_pull_back(
    weights: &[f64],
    vertices: usize,
    bones: usize,
    part_vertices: &[usize],
    part_linear: &[f64],
) -> Result<Box<PullBack>, String> {
    guarded("create_pull_back", || {
        overtone::rig::PullBack::new(weights, vertices, bones)
            .and_then(|p| p.with_parts(part_vertices, part_linear))
            .map(|inner| Box::new(PullBack { inner }))
            .map_err(|e| e.to_string())
    })
}

impl PullBack {
    fn pull_back(&self, transforms: &[f64], u: &[f64], out_offsets: &mut [f64]) -> Result<(), String> {
        guarded("pull_back", || {
            self.inner.apply(transforms, u, out_offsets).map_err(|e| e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exported field list is the struct's declaration order (offsets increase along it)
    /// and covers every byte of it up to the alignment padding.
    #[test]
    fn settings_field_list_is_the_declaration_order() {
        let (names, offsets, _) = settings_field_layout();
        let n = names.split(',').count();
        assert_eq!(n, offsets.len());
        assert!(offsets.windows(2).all(|w| w[0] < w[1]), "offsets {offsets:?}");
        let last = names.rsplit(',').next().unwrap();
        assert_eq!(last, "gravity:f64x3");
        assert!(offsets[n - 1] + 24 <= std::mem::size_of::<ffi::Settings>());
        assert!(std::mem::size_of::<ffi::Settings>() - (offsets[n - 1] + 24) < 8);
    }

    /// The bridge's cache states carry the core's values (the C++, C and Python constants are
    /// written from the same list).
    #[test]
    fn cache_states_cross_with_the_core_values() {
        let all = [
            CacheState::NotRequested,
            CacheState::Loaded,
            CacheState::Built,
            CacheState::Unusable,
            CacheState::WriteFailed,
        ];
        for (i, state) in all.into_iter().enumerate() {
            assert_eq!(state as u8, i as u8);
            assert_eq!(bridge_cache_state(state).repr, state as u8, "{state:?}");
        }
    }
}
