//! Fixtures shared by the integration-test binaries of `overtone` (`physics`, `rig_and_io`),
//! each of which includes this folder with `#[path = "../common/mod.rs"] mod common;`; the CLI's
//! `end_to_end` includes `paths.rs` alone. A binary uses only part of it, hence `dead_code` is
//! allowed here.
#![allow(dead_code)]

/// The damping ratio of a ringing signal's envelope.
pub mod envelope;
/// Sizes of a baked secondary motion.
pub mod motion;
/// Where the input data are; temporary folders.
pub mod paths;
/// Seeded pseudo-random numbers.
pub mod random;
/// Issue 13's refinement criteria on a character bake.
pub mod refinement;
/// The deformer tests' skinned tube.
pub mod tube;
