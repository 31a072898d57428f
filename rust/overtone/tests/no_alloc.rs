//! The fast solver's per-frame path allocates nothing: a counting global allocator sees zero
//! allocations across hundreds of steps and reconstructions (2D and 3D, beam and elephant, the
//! elephant also with blendshapes). (Tutorial 17's full-space Newton solve has the same test in
//! `rust/overtone-tutorial17/tests/no_alloc.rs`.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use overtone::dynamics::{FastParams, FastSolver, SolverParams};
use overtone::leak::default_momentum_weights;
use overtone::scene::{load_scene, metronome_beam, MetronomeBeam, Scene, SceneBlendshapes};

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count_step_allocations(sc: &Scene) -> usize {
    let (n, d) = (sc.mesh.n_vertices(), sc.mesh.dim());
    let rig = sc.rig().unwrap();
    let mut params: Vec<Vec<f64>> = Vec::new();
    for k in 0..sc.frames.len() {
        let mut p = vec![0.0; rig.n_params()];
        sc.frame_params_into(&rig, k, &mut p).unwrap();
        params.push(p);
    }
    let dw = default_momentum_weights(&sc.mesh).unwrap();
    let sp = SolverParams {
        dt: sc.dt,
        ..Default::default()
    };
    let mut solver = FastSolver::new(
        &sc.mesh,
        rig,
        &dw,
        &sc.material,
        &sp,
        FastParams::default_for(d),
        &params[0],
    )
    .unwrap();
    let mut out = vec![0.0; n * d];
    // Warm up once (lazy thread-pool start-up and the like are not the step's doing).
    solver.step(&params[1]).unwrap();
    solver.add_displacement(&mut out);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for p in &params[2..] {
        solver.step(p).unwrap();
        solver.add_displacement(&mut out);
    }
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

/// One test function, so no other test thread allocates while counting.
#[test]
fn fast_steps_and_reconstruction_do_not_allocate() {
    let beam = metronome_beam(MetronomeBeam {
        steps: 300,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(count_step_allocations(&beam), 0, "2D beam");
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data");
    let mut elephant = load_scene(&data.join("complementary-dynamics-cpp/elephant/elephant.json")).unwrap();
    elephant.frames.truncate(100);
    assert_eq!(count_step_allocations(&elephant), 0, "3D elephant");
    // The elephant with two animated blendshapes (extended rig parameters every step).
    let n = elephant.mesh.n_vertices();
    let x = elephant.mesh.vertices().to_vec();
    let deltas: Vec<f64> = (0..2)
        .flat_map(|t| (0..n).map(move |v| (t, v)))
        .flat_map(|(t, v)| {
            let (a, b) = (x[3 * v], x[3 * v + 1]);
            if t == 0 {
                [0.0, 0.1 * a * a, 0.0]
            } else {
                [0.05 * (3.0 * b).sin(), 0.0, 0.0]
            }
        })
        .collect();
    let weights = (0..elephant.frames.len())
        .map(|k| vec![(0.2 * k as f64).sin(), (0.1 * k as f64).cos()])
        .collect();
    elephant.blendshapes = Some(SceneBlendshapes {
        deltas,
        n_targets: 2,
        weights,
    });
    assert_eq!(count_step_allocations(&elephant), 0, "3D elephant with blendshapes");
    // 10,000 vertices reconstruct on rayon's pool: handing the job to the pool may allocate.
    let mut fish = load_scene(&data.join("fast-complementary-dynamics/cd_fish/cd_fish_rig.json")).unwrap();
    fish.frames.truncate(40);
    let total = count_step_allocations(&fish);
    eprintln!("cd_fish: {total} allocations in 38 frames");
    assert!(total <= 38, "{total} allocations in 38 frames");
}
