//! Complementary dynamics solvers.

mod fast;
mod full_order;
mod newton_cd;
mod params;

pub use fast::{FastParams, FastPrecompute, FastSolver, ReducedModel};
pub use full_order::{FullOrderSolver, StepReport};
pub use newton_cd::{NewtonCdSolver, NEWTON_CD_TOLERANCE};
pub use params::{Material, SolverParams};
