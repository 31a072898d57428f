//! No build step. This script exists for its build-dependency (`Cargo.toml`): `proc-macro2`
//! with `span-locations`, the feature the C++ bridge's build dependency (`cxx-build`) turns on
//! in a workspace build. With it the demo (`cargo run -p overtone-cli`) resolves the same
//! features as the test suite (`cargo test --workspace`), so the two share every compiled
//! dependency instead of building faer and everything above it twice.
fn main() {}
