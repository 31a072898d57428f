//! Complementary dynamics solvers.

mod fast;
mod full_order;
mod params;

pub use fast::{FastParams, FastPrecompute, FastSolver};
pub use full_order::{FullOrderSolver, StepReport};
pub use params::{Material, SolverParams};
