//! Complementary dynamics solvers.

mod full_order;
mod params;

pub use full_order::{FullOrderSolver, StepReport};
pub use params::{Material, SolverParams};
