//! End-to-end tests of the `overtone` binary: its commands (`cli`), outputs that never destroy
//! an input (`output_safety`), and interrupted or concurrent bakes (`reliability`).
//!
//! One test binary with a module per area.

mod cli;
mod output_safety;
mod reliability;
