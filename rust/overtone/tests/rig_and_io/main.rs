//! Integration tests of what comes into and goes out of the core: the scene, mesh, animation
//! and glTF readers (robustness included), glTF characters and their morph targets, rig
//! interpolation, display surfaces, the precompute sidecar, and the host-facing deformer.
//!
//! One test binary (one link of the library and faer) with a module per area; the fixtures the
//! binaries share are in `tests/common/`. Run one area with a filter:
//! `cargo test --release -p overtone --test rig_and_io deformer::`.

#[path = "../common/mod.rs"]
mod common;

mod characters;
mod deformer;
mod deformer_controls;
mod display_surface;
mod gltf_morph;
mod reader_robustness;
mod rig_interpolation;
mod scenes;
mod sidecar;
