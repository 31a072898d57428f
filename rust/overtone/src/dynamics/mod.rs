//! Complementary dynamics solvers.

mod fast;
mod full_order;
mod newton_cd;
mod params;
pub mod time_integration;

pub use fast::{FastParams, FastPrecompute, FastSolver, ReducedModel};
pub use full_order::{FullOrderSolver, StepReport};
pub use newton_cd::{NewtonCdSolver, NEWTON_CD_TOLERANCE};
pub use params::{Integrator, Material, RestShape, SolverParams, DEFAULT_DAMPING, MAX_SUBSTEPS};
pub use time_integration::{auto_substeps, Damping, FramePlan};
