//! End-to-end tests of the `overtone` binary: its commands (`cli`), the docs' names (`docs_names`), outputs that never destroy
//! an input (`output_safety`), and interrupted or concurrent bakes (`reliability`).
//!
//! One test binary with a module per area. The example data and temporary folders come from the
//! core's test fixtures (`rust/overtone/tests/common/paths.rs`, one copy for the workspace).

#[path = "../../../overtone/tests/common/paths.rs"]
#[allow(dead_code)]
mod paths;

mod cli;
mod docs_names;
mod output_safety;
mod reliability;

/// The `overtone` binary under test.
fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_overtone"))
}
