//! The bridge between Overtone's core and C++ hosts.
//!
//! One `#[cxx::bridge]` module; every function the bridge exports runs its body under
//! `catch_unwind`, so a Rust panic reaches C++ as an ordinary error (a `rust::Error`
//! exception, which the C++ wrapper turns into a status value) and never aborts the host.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use overtone::deformer::{DeformerSettings, SurfaceDeformer};
use overtone::dynamics::{FastParams, Material};
use overtone::scene::CharacterSettings;

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
        modes: usize,
        clusters: usize,
    }

    extern "Rust" {
        type Deformer;
        fn default_settings() -> Settings;
        /// `rest`: n × 3; `triangles`: t × 3; `weights`: n × bones; `morph_deltas`: T × n × 3
        /// blendshape offsets (empty and `targets = 0` for none); `first_morph_weights`: T;
        /// `leak`: n values or empty for the default; `first_pose`: bones × 12 (3 × 4
        /// row-major skin transforms); `sidecar`: a .ovt path or empty.
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
            first_pose: &[f64],
            sidecar: &str,
        ) -> Result<Box<Deformer>>;
        /// One frame: `pose` bones × 12, `morph_weights` T (empty without blendshapes), `out`
        /// n × 3 displacement (world units).
        fn step(self: &mut Deformer, pose: &[f64], morph_weights: &[f64], out: &mut [f64]) -> Result<()>;
        /// Back to rest in `pose` (with the frame's `morph_weights`).
        fn reset(self: &mut Deformer, pose: &[f64], morph_weights: &[f64]) -> Result<()>;
        /// Blendshape targets T.
        fn target_count(self: &Deformer) -> usize;
        /// Relative rig-orthogonality residual of the last step, bones and blendshapes (0 before
        /// the first).
        fn residual(self: &Deformer) -> f64;
        fn cache_status(self: &Deformer) -> String;
        fn vertex_count(self: &Deformer) -> usize;
        fn bone_count(self: &Deformer) -> usize;
        /// Test hook: panics inside the bridge when `really` is true (proves hosts survive).
        fn debug_panic(self: &mut Deformer, really: bool) -> Result<()>;
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

fn default_settings() -> ffi::Settings {
    let c = CharacterSettings::default();
    let f = FastParams::default_for(3);
    ffi::Settings {
        youngs_modulus: c.material.youngs_modulus,
        poisson_ratio: c.material.poisson_ratio,
        density: c.material.density,
        fps: c.fps,
        lattice_resolution: c.lattice_resolution,
        fast: true,
        modes: f.modes,
        clusters: f.clusters,
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
    first_pose: &[f64],
    sidecar: &str,
) -> Result<Box<Deformer>, String> {
    guarded("create_deformer", || {
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
            },
            fast: settings.fast.then_some(FastParams {
                modes: settings.modes,
                clusters: settings.clusters,
            }),
            ..DeformerSettings::default()
        };
        if !(s.character.fps.is_finite() && s.character.fps > 0.0) {
            return Err(format!("setting `fps` = {} is invalid: must be > 0", s.character.fps));
        }
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
    fn vertex_count(&self) -> usize {
        self.inner.n_vertices()
    }
    fn bone_count(&self) -> usize {
        self.inner.n_bones()
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
