//! Seed tutorial 17, subspace elastodynamics: positions restricted to `x = B z + q`. This is
//! the tutorial's experiment, kept to reproduce it (`examples/cantilever.rs`, `tests/subspace.rs`,
//! `tests/cantilever.rs`); it is not part of the product: the production solvers
//! (`overtone::dynamics`), the deformer, the CLI and the hosts do not use it. It is built on
//! Overtone's building blocks (`overtone::{mesh, fem, energy, solve, rig}`).
//!
//! * [`Subspace`]: the full space (`B = I`) or a dense basis with an offset.
//! * [`linear_modal_analysis`]: the lowest vibration modes of linear elasticity (`K`, `M`).
//! * Skinning eigenmodes: Laplacian eigenvectors used as LBS weights,
//!   [`skinning_eigenmodes`](overtone::dynamics::fast::skinning_eigenmodes)`(mesh, None, k)` (the
//!   unconstrained, dense case of the fast solver's eigenmodes), `B = `[`lbs_jacobian`](overtone::rig::lbs_jacobian)`(d, X, W)`.
//! * [`MassProjection`]: the mass-weighted projection `z = (BᵀMB)⁻¹ BᵀM (y − q)`.
//! * [`SubspaceElastodynamics`]: backward Euler with inertia, an elastic energy, gravity and
//!   penalty pins, minimised by Newton's method in the subspace coordinates.
//! * [`SupernodalLlt`]: the numeric refactorization those Newton steps run on.
//! * [`cantilever`]: the tutorial's cantilever experiment as library functions.

mod basis;
pub mod cantilever;
mod elastodynamics;
mod modal;
mod projection;
mod supernodal_llt;

pub use basis::Subspace;
pub use elastodynamics::{ElastodynamicsParams, PenaltyPins, SubspaceElastodynamics};
pub use modal::linear_modal_analysis;
pub use projection::{MassProjection, PROJECTION_RANK_TOLERANCE};
pub use supernodal_llt::SupernodalLlt;
