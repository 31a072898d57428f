//! Integration tests of the physics: the FEM operators, the solvers (full-order, fast, Newton,
//! shape matching) and what they guarantee (the rig contract, blendshape constraints, failed
//! steps that change nothing), time integration and damping, long randomised runs, and the
//! convergence of a character's motion under lattice refinement.
//!
//! One test binary (one link of the library and faer) with a module per area; the fixtures the
//! binaries share are in `tests/common/`. Run one area with a filter:
//! `cargo test --release -p overtone --test physics fast::`.

#[path = "../common/mod.rs"]
mod common;

mod blendshapes;
mod character_damping;
mod embedding_convergence;
mod fast;
mod fast_full_agreement;
mod full_order;
mod newton_cd;
mod operators;
mod release_conventions;
mod round_off_invariance;
mod shape_matching;
mod step_failure;
mod stress;
mod time_integration;
mod uniform_tube_convergence;
