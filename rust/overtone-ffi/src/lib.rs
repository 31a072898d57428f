//! The bridge between Overtone's core and C++ hosts.
//!
//! One `#[cxx::bridge]` module; every function the bridge exports runs its body under
//! `catch_unwind`, so a Rust panic reaches C++ as an ordinary error (a `rust::Error`
//! exception, which the C++ wrapper turns into a status value) and never aborts the host. The
//! kind of the last failure on the calling thread is `last_error_kind` (what a host branches
//! on); the settings struct, its enums and the error kinds are generated from the core's table
//! (`overtone-codegen`, checked by its test).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use overtone::cache::CacheState;
use overtone::deformer::{BodyInput, PoseInput, SurfaceDeformer, SurfacePart};
use overtone::progress::AtomicProgress;
use overtone::settings::Value;
use overtone::{ErrorKind, OvertoneError};

#[cxx::bridge(namespace = "overtone::ffi")]
mod ffi {
    // @generated begin bridge-types (from overtone::settings::SETTINGS: scripts/generate_host_files.sh)
    /// The choices of setting `rest` (same values in C, C++ and Python).
    #[repr(i32)]
    enum RestShape {
        /// The skinned pose is the elastic reference: a held pose shows no jiggle
        Rig = 0,
        /// The bind shape is the reference (the paper's): physics may reshape a bad pose and keep an offset
        Bind = 1,
    }

    /// The choices of setting `solver` (same values in C, C++ and Python).
    #[repr(i32)]
    enum Solver {
        /// Reduced solver (skinning eigenmodes and rotation clusters): real time
        Fast = 0,
        /// Full-order solver on every lattice vertex: slower, the reference
        Full = 1,
    }

    /// The choices of setting `integrator` (same values in C, C++ and Python).
    #[repr(i32)]
    enum Integrator {
        /// Substepped, second order, no numerical damping: the look does not depend on the frame rate
        ImplicitMidpoint = 0,
        /// One step per frame (the seeds' scheme): damps the motion more at low frame rates
        BackwardEuler = 1,
    }

    /// What kind of failure the last call on this thread had (`overtone::ErrorKind`, 0 none).
    #[repr(i32)]
    enum ErrorKind {
        NoError = 0,
        InvalidInput = 1,
        InvalidSetting = 2,
        StepFailed = 3,
        Numerical = 4,
        File = 5,
        Unsupported = 6,
        Cancelled = 7,
        Internal = 8,
    }

    /// Every setting (`overtone::settings::SETTINGS`: units, ranges, defaults); an optional
    /// setting is its `use_` flag (false: automatic / none) and its value.
    #[derive(Clone)]
    struct Settings {
        /// Young's modulus: lower is jigglier.
        youngs_modulus: f64,
        /// Poisson ratio: volume preservation (ARAP uses only the shear modulus E/(2(1+ν))).
        poisson_ratio: f64,
        /// Mass density in the normalised frame.
        density: f64,
        /// Whether `frequency` is set (false: none: Young's modulus as given).
        use_frequency: bool,
        /// Jiggle frequency of the lowest mode: Young's modulus is rescaled to it at bind, so the same value gives a comparable jiggle on any character and with either solver.
        frequency: f64,
        /// Damping ratio of the low jiggle modes: 0 rings on, 0.1 decays over a few swings, 1 settles without swinging.
        damping: f64,
        /// Multiplier of the secondary motion (0 none, 2 twice).
        strength: f64,
        /// Physics seconds per animation second: 2 jiggles twice as fast.
        time_scale: f64,
        /// Seconds the rig is held at the first pose before the first frame, so the body settles (gravity) before the shot starts.
        preroll: f64,
        /// Whether `cut_distance` is set (false: never).
        use_cut_distance: bool,
        /// A rig jump between two frames larger than this fraction of the body's bounding-box diagonal restarts the simulation there (a camera cut, a teleport).
        cut_distance: f64,
        /// Whether `max_displacement` is set (false: none: no limit).
        use_max_displacement: bool,
        /// Largest displacement any vertex is shown with: a frame whose secondary motion exceeds it is scaled down as a whole (its shape kept) so a teleport or a violent move cannot fling the surface away.
        max_displacement: f64,
        /// The elastic reference shape.
        rest: RestShape,
        /// Gravity in the host's world frame (0, 0, -9.81 in a Z-up scene in metres).
        gravity: [f64; 3],
        /// Frames per second of the host's timeline: a frame advances 1/fps seconds.
        fps: f64,
        /// The solver.
        solver: Solver,
        /// Whether `modes` is set (false: automatic: 64 on a small body such as a prop or a tail, 16 otherwise).
        use_modes: bool,
        /// Skinning eigenmodes of the fast solver.
        modes: usize,
        /// Rotation clusters of the fast solver (at most the lattice's element count).
        clusters: usize,
        /// Whether `lattice_resolution` is set (false: automatic: from the mesh, so thin limbs are four cells across).
        use_lattice_resolution: bool,
        /// Cells of the tetrahedral lattice along the body's longest side.
        lattice_resolution: usize,
        /// The time integrator.
        integrator: Integrator,
        /// Whether `substeps` is set (false: automatic: from the frame rate and the stiffness (at most 1/120 s each)).
        use_substeps: bool,
        /// Solver steps per frame (implicit midpoint).
        substeps: usize,
    }
    // @generated end bridge-types

    /// One skinned mesh of a body: `rest` n × 3 (world space at bind), `triangles` t × 3 (indices
    /// into this part's vertices), `weights` n × bones, `morph_deltas` targets × n × 3 (empty
    /// without blendshapes), `leak` and `stiffness` n values each or empty (every part or none;
    /// -1 marks an unpainted vertex).
    struct Part<'a> {
        rest: &'a [f64],
        triangles: &'a [u32],
        weights: &'a [f64],
        morph_deltas: &'a [f64],
        leak: &'a [f64],
        stiffness: &'a [f64],
    }

    /// One frame's rig: `transforms` bones × 12 (3 × 4 row-major skin transforms, bind space to
    /// posed world space), `morph_weights` the targets' weights (empty without blendshapes).
    struct Pose<'a> {
        transforms: &'a [f64],
        morph_weights: &'a [f64],
    }

    /// A body to bind: its parts (several meshes on one skeleton), the bone and blendshape
    /// counts, the first frame's rig and a sidecar path (empty: none).
    struct Body<'a> {
        parts: &'a [Part<'a>],
        bones: usize,
        targets: usize,
        first_pose: Pose<'a>,
        sidecar: &'a str,
    }

    /// The state of an asynchronous bind.
    #[repr(i32)]
    enum BindState {
        Running = 0,
        Done = 1,
        Failed = 2,
        Cancelled = 3,
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
        /// The kind of the last failure of a bridge call on this thread (`NoError` after a
        /// success): what the C++ wrapper puts beside the message.
        fn last_error_kind() -> ErrorKind;
        /// The fields of `Settings` in order, `name:type` joined by commas (types `f64`, `usize`,
        /// `bool`, `enum`, `f64x3`): the list the C ABI and Python layouts are tested against.
        fn settings_fields() -> String;
        /// Binds `body` with `settings` on the calling thread.
        fn create_deformer(settings: &Settings, body: &Body) -> Result<Box<Deformer>>;
        /// One frame: `out` n × 3 displacement (world units).
        fn step(self: &mut Deformer, pose: &Pose, out: &mut [f64]) -> Result<()>;
        /// Takes the host's settings between frames: the animatable ones apply from the next step
        /// on without a rebind; any other that differs from the bind's is refused. On error
        /// nothing changes.
        fn set_controls(self: &mut Deformer, settings: &Settings) -> Result<()>;
        /// Back to rest in `pose`, then the pre-roll.
        fn reset(self: &mut Deformer, pose: &Pose) -> Result<()>;
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
        /// Starts a bind on a worker thread (it copies the body) and returns at once.
        fn start_bind(settings: &Settings, body: &Body) -> Result<Box<Binding>>;
        /// Fraction of the bind done, in [0, 1], never decreasing.
        fn fraction(self: &Binding) -> f64;
        /// What the bind is doing now.
        fn stage(self: &Binding) -> String;
        fn state(self: &Binding) -> BindState;
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

/// Runs a bridge call: clears the thread's error kind, turns a panic into an `Internal` error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    LAST_ERROR_KIND.with(|k| k.set(None));
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(failed(
                ErrorKind::Internal,
                format!("internal error in {what} (please report): {msg}"),
            ))
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
    settings_to_bridge(&overtone::Settings::default())
}

// @generated begin bridge-conversions (from overtone::settings::SETTINGS: scripts/generate_host_files.sh)
/// The core's settings from the bridge's, every value checked against the table.
fn settings_from_bridge(s: &ffi::Settings) -> overtone::Result<overtone::Settings> {
    let mut c = overtone::Settings::default();
    c.set("youngs_modulus", &Value::F64(s.youngs_modulus))?;
    c.set("poisson_ratio", &Value::F64(s.poisson_ratio))?;
    c.set("density", &Value::F64(s.density))?;
    c.set(
        "frequency",
        &if s.use_frequency {
            Value::F64(s.frequency)
        } else {
            Value::Unset
        },
    )?;
    c.set("damping", &Value::F64(s.damping))?;
    c.set("strength", &Value::F64(s.strength))?;
    c.set("time_scale", &Value::F64(s.time_scale))?;
    c.set("preroll", &Value::F64(s.preroll))?;
    c.set(
        "cut_distance",
        &if s.use_cut_distance {
            Value::F64(s.cut_distance)
        } else {
            Value::Unset
        },
    )?;
    c.set(
        "max_displacement",
        &if s.use_max_displacement {
            Value::F64(s.max_displacement)
        } else {
            Value::Unset
        },
    )?;
    c.set(
        "rest",
        &Value::Choice(usize::try_from(s.rest.repr).unwrap_or(usize::MAX)),
    )?;
    c.set("gravity", &Value::Vec3(s.gravity))?;
    c.set("fps", &Value::F64(s.fps))?;
    c.set(
        "solver",
        &Value::Choice(usize::try_from(s.solver.repr).unwrap_or(usize::MAX)),
    )?;
    c.set(
        "modes",
        &if s.use_modes {
            Value::Count(s.modes)
        } else {
            Value::Unset
        },
    )?;
    c.set("clusters", &Value::Count(s.clusters))?;
    c.set(
        "lattice_resolution",
        &if s.use_lattice_resolution {
            Value::Count(s.lattice_resolution)
        } else {
            Value::Unset
        },
    )?;
    c.set(
        "integrator",
        &Value::Choice(usize::try_from(s.integrator.repr).unwrap_or(usize::MAX)),
    )?;
    c.set(
        "substeps",
        &if s.use_substeps {
            Value::Count(s.substeps)
        } else {
            Value::Unset
        },
    )?;
    Ok(c)
}

/// The bridge's settings from the core's (an unset optional setting shows its table's
/// `unset_value`).
fn settings_to_bridge(c: &overtone::Settings) -> ffi::Settings {
    let unset = |name: &str| overtone::settings::spec(name).map_or(0.0, |s| s.unset_value);
    let number = |v: &Option<Value>| match *v {
        Some(Value::F64(x)) => x,
        Some(Value::Count(n)) => n as f64,
        _ => f64::NAN,
    };
    ffi::Settings {
        youngs_modulus: number(&c.value("youngs_modulus")),
        poisson_ratio: number(&c.value("poisson_ratio")),
        density: number(&c.value("density")),
        use_frequency: !matches!(c.value("frequency"), Some(Value::Unset)),
        frequency: match c.value("frequency") {
            Some(Value::Unset) => unset("frequency"),
            v => number(&v),
        },
        damping: number(&c.value("damping")),
        strength: number(&c.value("strength")),
        time_scale: number(&c.value("time_scale")),
        preroll: number(&c.value("preroll")),
        use_cut_distance: !matches!(c.value("cut_distance"), Some(Value::Unset)),
        cut_distance: match c.value("cut_distance") {
            Some(Value::Unset) => unset("cut_distance"),
            v => number(&v),
        },
        use_max_displacement: !matches!(c.value("max_displacement"), Some(Value::Unset)),
        max_displacement: match c.value("max_displacement") {
            Some(Value::Unset) => unset("max_displacement"),
            v => number(&v),
        },
        rest: ffi::RestShape {
            repr: match c.value("rest") {
                Some(Value::Choice(i)) => i as i32,
                _ => 0,
            },
        },
        gravity: match c.value("gravity") {
            Some(Value::Vec3(g)) => g,
            _ => [0.0; 3],
        },
        fps: number(&c.value("fps")),
        solver: ffi::Solver {
            repr: match c.value("solver") {
                Some(Value::Choice(i)) => i as i32,
                _ => 0,
            },
        },
        use_modes: !matches!(c.value("modes"), Some(Value::Unset)),
        modes: (match c.value("modes") {
            Some(Value::Unset) => unset("modes"),
            v => number(&v),
        }) as usize,
        clusters: number(&c.value("clusters")) as usize,
        use_lattice_resolution: !matches!(c.value("lattice_resolution"), Some(Value::Unset)),
        lattice_resolution: (match c.value("lattice_resolution") {
            Some(Value::Unset) => unset("lattice_resolution"),
            v => number(&v),
        }) as usize,
        integrator: ffi::Integrator {
            repr: match c.value("integrator") {
                Some(Value::Choice(i)) => i as i32,
                _ => 0,
            },
        },
        use_substeps: !matches!(c.value("substeps"), Some(Value::Unset)),
        substeps: (match c.value("substeps") {
            Some(Value::Unset) => unset("substeps"),
            v => number(&v),
        }) as usize,
    }
}
// @generated end bridge-conversions

fn settings_fields() -> String {
    let mut fields = Vec::new();
    for s in overtone::settings::SETTINGS {
        if s.kind.optional {
            fields.push(format!("use_{}:bool", s.name));
        }
        let ty = match s.kind.base {
            overtone::settings::Base::F64 => "f64",
            overtone::settings::Base::Count => "usize",
            overtone::settings::Base::Bool => "bool",
            overtone::settings::Base::Vec3 => "f64x3",
            overtone::settings::Base::Choice(_) => "enum",
        };
        fields.push(format!("{}:{ty}", s.name));
    }
    fields.join(",")
}

thread_local! {
    static LAST_ERROR_KIND: Cell<Option<ErrorKind>> = const { Cell::new(None) };
}

fn last_error_kind() -> ffi::ErrorKind {
    ffi::ErrorKind {
        repr: LAST_ERROR_KIND.with(|k| k.get()).map_or(0, |k| k as i32),
    }
}

/// A failure on its way to C++: the message, and its kind recorded for `last_error_kind`.
fn failed(kind: ErrorKind, message: String) -> String {
    LAST_ERROR_KIND.with(|k| k.set(Some(kind)));
    message
}

fn core_error(e: OvertoneError) -> String {
    failed(e.kind(), e.to_string())
}

/// A part's arrays, owned by the worker thread.
struct OwnedPart {
    rest: Vec<f64>,
    triangles: Vec<usize>,
    weights: Vec<f64>,
    morph_deltas: Vec<f64>,
    leak: Option<Vec<f64>>,
    stiffness: Option<Vec<f64>>,
}

/// A body's arrays, owned by the worker thread (or borrowed for one call).
struct OwnedBody {
    parts: Vec<OwnedPart>,
    bones: usize,
    targets: usize,
    first_transforms: Vec<f64>,
    first_morph_weights: Vec<f64>,
    sidecar: String,
}

impl OwnedBody {
    /// Copies the bridge's body (triangle indices widened; an empty field is "not given").
    fn copy(body: &ffi::Body<'_>) -> Self {
        let given = |f: &[f64]| (!f.is_empty()).then(|| f.to_vec());
        Self {
            parts: body
                .parts
                .iter()
                .map(|p| OwnedPart {
                    rest: p.rest.to_vec(),
                    triangles: p.triangles.iter().map(|&i| i as usize).collect(),
                    weights: p.weights.to_vec(),
                    morph_deltas: p.morph_deltas.to_vec(),
                    leak: given(p.leak),
                    stiffness: given(p.stiffness),
                })
                .collect(),
            bones: body.bones,
            targets: body.targets,
            first_transforms: body.first_pose.transforms.to_vec(),
            first_morph_weights: body.first_pose.morph_weights.to_vec(),
            sidecar: body.sidecar.to_string(),
        }
    }

    fn input(&self) -> BodyInput<'_> {
        BodyInput {
            parts: self
                .parts
                .iter()
                .map(|p| SurfacePart {
                    vertices: &p.rest,
                    triangles: &p.triangles,
                    weights: &p.weights,
                    morph_deltas: &p.morph_deltas,
                    leak: p.leak.as_deref(),
                    stiffness: p.stiffness.as_deref(),
                })
                .collect(),
            n_bones: self.bones,
            n_targets: self.targets,
            first_pose: PoseInput {
                transforms: &self.first_transforms,
                morph_weights: &self.first_morph_weights,
            },
            sidecar: (!self.sidecar.is_empty()).then(|| Path::new(&self.sidecar)),
        }
    }
}

fn pose_input<'a>(pose: &ffi::Pose<'a>) -> PoseInput<'a> {
    PoseInput {
        transforms: pose.transforms,
        morph_weights: pose.morph_weights,
    }
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const FAILED: u8 = 2;
const CANCELLED: u8 = 3;

struct Shared {
    progress: AtomicProgress,
    state: AtomicU8,
    result: Mutex<Option<Result<SurfaceDeformer, (ErrorKind, String)>>>,
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

fn start_bind(settings: &ffi::Settings, body: &ffi::Body<'_>) -> Result<Box<Binding>, String> {
    guarded("start_bind", || {
        // Settings are checked now, so a bad one fails before any work; the body on the worker.
        let s = settings_from_bridge(settings).map_err(core_error)?;
        let body = OwnedBody::copy(body);
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
                    Ok(Err(e)) if e.kind() == ErrorKind::Cancelled => (CANCELLED, Err((e.kind(), e.to_string()))),
                    Ok(Err(e)) => (FAILED, Err((e.kind(), e.to_string()))),
                    Err(_) => (
                        FAILED,
                        Err((
                            ErrorKind::Internal,
                            "internal error in the bind (please report): a panic".to_string(),
                        )),
                    ),
                };
                if let Ok(mut r) = sh.result.lock() {
                    *r = Some(result);
                }
                sh.state.store(state, Ordering::Release);
            })
            .map_err(|e| failed(ErrorKind::Internal, format!("could not start the bind thread: {e}")))?;
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
    fn state(&self) -> ffi::BindState {
        match self.shared.state.load(Ordering::Acquire) {
            RUNNING => ffi::BindState::Running,
            DONE => ffi::BindState::Done,
            CANCELLED => ffi::BindState::Cancelled,
            _ => ffi::BindState::Failed,
        }
    }
    fn cancel(&self) {
        self.shared.progress.cancel();
    }
    fn take(&mut self) -> Result<Box<Deformer>, String> {
        guarded("take", || {
            if let Some(w) = self.worker.take() {
                w.join()
                    .map_err(|_| failed(ErrorKind::Internal, "the bind thread died".into()))?;
            }
            let mut slot = self
                .shared
                .result
                .lock()
                .map_err(|_| failed(ErrorKind::Internal, "the bind's result is unavailable".into()))?;
            match slot.take() {
                Some(Ok(inner)) => Ok(Box::new(Deformer { inner })),
                Some(Err((kind, message))) => Err(failed(kind, message)),
                None => Err(failed(
                    ErrorKind::InvalidInput,
                    "the bind's result was already taken".into(),
                )),
            }
        })
    }
}

fn create_deformer(settings: &ffi::Settings, body: &ffi::Body<'_>) -> Result<Box<Deformer>, String> {
    guarded("create_deformer", || {
        let s = settings_from_bridge(settings).map_err(core_error)?;
        let body = OwnedBody::copy(body);
        SurfaceDeformer::bind(&s, &body.input(), &overtone::progress::NoProgress)
            .map(|inner| Box::new(Deformer { inner }))
            .map_err(core_error)
    })
}

impl Deformer {
    fn step(&mut self, pose: &ffi::Pose<'_>, out: &mut [f64]) -> Result<(), String> {
        guarded("step", || {
            self.inner.step(&pose_input(pose), out).map(|_| ()).map_err(core_error)
        })
    }
    fn set_controls(&mut self, settings: &ffi::Settings) -> Result<(), String> {
        guarded("set_controls", || {
            let s = settings_from_bridge(settings).map_err(core_error)?;
            self.inner.set_controls(&s).map_err(core_error)
        })
    }
    fn reset(&mut self, pose: &ffi::Pose<'_>) -> Result<(), String> {
        guarded("reset", || self.inner.reset(&pose_input(pose)).map_err(core_error))
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
            .map_err(core_error)
    })
}

impl PullBack {
    fn pull_back(&self, transforms: &[f64], u: &[f64], out_offsets: &mut [f64]) -> Result<(), String> {
        guarded("pull_back", || {
            self.inner.apply(transforms, u, out_offsets).map_err(core_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting crosses the bridge and back unchanged (the defaults and a changed set,
    /// optional ones set and unset), and a bridge value outside the table's range or an
    /// unknown enum code is refused with the setting's name and an `InvalidSetting` kind.
    #[test]
    fn settings_cross_the_bridge_by_name_and_are_checked_once() {
        let d = overtone::Settings::default();
        assert_eq!(settings_from_bridge(&settings_to_bridge(&d)).unwrap(), d);
        let changed = overtone::Settings {
            damping: 0.3,
            frequency: Some(5.0),
            modes: Some(32),
            cut_distance: None,
            max_displacement: Some(0.05),
            integrator: overtone::dynamics::Integrator::BackwardEuler,
            rest: overtone::dynamics::RestShape::Bind,
            solver: overtone::settings::Solver::Full,
            gravity: [0.0, -9.81, 0.0],
            ..d.clone()
        };
        assert_eq!(settings_from_bridge(&settings_to_bridge(&changed)).unwrap(), changed);
        let mut bad = settings_to_bridge(&d);
        bad.damping = -1.0;
        let e = settings_from_bridge(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidSetting);
        assert!(e.to_string().contains("damping"), "{e}");
        let mut bad = settings_to_bridge(&d);
        bad.integrator = ffi::Integrator { repr: 7 };
        let e = settings_from_bridge(&bad).unwrap_err();
        assert!(e.to_string().contains("integrator"), "{e}");
        let mut bad = settings_to_bridge(&d);
        bad.use_substeps = true;
        bad.substeps = 0;
        assert!(settings_from_bridge(&bad).unwrap_err().to_string().contains("substeps"));
    }

    /// A failed call leaves its kind for `last_error_kind`; the next successful call clears it.
    #[test]
    fn a_failure_leaves_its_kind_for_the_host() {
        let r = guarded("test", || Err::<(), _>(core_error(OvertoneError::Cancelled)));
        assert!(r.is_err());
        assert_eq!(last_error_kind().repr, ErrorKind::Cancelled as i32);
        let r = guarded("test", || -> Result<(), String> { panic!("deliberate") });
        assert!(r.unwrap_err().contains("internal error"));
        assert_eq!(last_error_kind().repr, ErrorKind::Internal as i32);
        guarded("test", || Ok(())).unwrap();
        assert_eq!(last_error_kind().repr, 0);
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
