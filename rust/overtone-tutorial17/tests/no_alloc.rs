//! Newton's full-space solve of tutorial 17 (numeric refactorization of the supernodal Cholesky
//! + triangular solves) allocates nothing: a counting global allocator sees zero allocations
//! across 20 solves after the first (which does the symbolic analysis).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use overtone_tutorial17::cantilever::{Beam, CantileverConfig, SpaceKind};

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

/// One test function, so no other test thread allocates while counting.
#[test]
fn full_space_newton_solve_does_not_allocate() {
    assert_eq!(count_full_solve_allocations(), 0, "Newton full-space solve");
}

/// Allocations of 20 full-space Newton solves on the 60 × 15 cantilever (after the first,
/// which does the symbolic analysis).
fn count_full_solve_allocations() -> usize {
    let cfg = CantileverConfig {
        nx: 60,
        ny: 15,
        ..Default::default()
    };
    let beam = Beam::new(&cfg).unwrap();
    let mut sim = beam
        .simulator(&cfg, beam.subspace(&cfg, SpaceKind::Full).unwrap())
        .unwrap();
    sim.set_inertial_target(&beam.rest).unwrap();
    let x: Vec<f64> = beam
        .rest
        .iter()
        .enumerate()
        .map(|(k, v)| v + 0.01 * (k as f64).sin())
        .collect();
    let mut g = vec![0.0; x.len()];
    sim.full_gradient(&x, &mut g).unwrap();
    sim.full_hessian(&x).unwrap();
    let mut rhs = g.clone();
    sim.full_solve(&mut rhs).unwrap();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for _ in 0..20 {
        rhs.copy_from_slice(&g);
        sim.full_solve(&mut rhs).unwrap();
    }
    ALLOCATIONS.load(Ordering::SeqCst) - before
}
