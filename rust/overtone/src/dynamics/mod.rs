//! Complementary dynamics solvers, all behind one stepping interface, [`CdSolver`].
//!
//! * [`FullOrderSolver`]: full-order ARAP local/global (Zhang et al. 2020; seed tutorial 23).
//! * [`NewtonCdSolver`]: hyperelastic complementary dynamics by Newton's method.
//! * [`fast`]: fast complementary dynamics (Benchekroun et al. 2023): the reduced model, its
//!   skinning eigenmodes, rotation clusters and cached precompute, and the solver.

pub mod fast;
mod full_order;
mod modal_damping;
mod newton_cd;
mod params;
mod physics_clock;
mod solver;
pub mod time_integration;

pub use fast::{
    FastParams, FastPrecompute, FastSolver, ReducedModel, AUTO_MODES, FAST_PRECOMPUTE_KIND, SMALL_BODY_MODES,
};
pub use full_order::FullOrderSolver;
pub use newton_cd::{NewtonCdParams, NewtonCdSolver};
pub use params::{Integrator, LocalGlobalParams, Material, RestShape, SolverParams, DEFAULT_FREQUENCY};
pub(crate) use params::{DEFAULT_DAMPING, MAX_SUBSTEPS};
pub use physics_clock::{PhysicsClock, PHYSICS_RATE};
pub(crate) use solver::{max_norm, validate_solver_inputs};
pub use solver::{CdSolver, ConstraintRank, StepReport};
pub use time_integration::{Damping, FramePlan};
