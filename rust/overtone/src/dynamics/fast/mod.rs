//! Fast complementary dynamics (Benchekroun et al. 2023), everything in one place: the
//! rig-orthogonal skinning eigenmodes (`skinning_eigenmodes`, `weight_space_constraint`), the
//! subspace basis (`skinning_basis`), the rotation clusters (`rotation_clusters`, `bisection`), the
//! eigenmodes-and-clusters precompute (`precompute`), the reduced model built from them (`model`:
//! reduced operators per unit shear modulus, the payload of the `cache` sidecar), the per-step
//! kernels (`kernels`) and the solver (`solver`: model, system, state and workspace).

mod bisection;
mod kernels;
mod model;
mod precompute;
mod rotation_clusters;
mod skinning_basis;
mod skinning_eigenmodes;
mod solver;
mod weight_space_constraint;

pub(crate) use bisection::bisection;
pub use model::{FastParams, FastPrecompute, ReducedModel, AUTO_MODES, FAST_PRECOMPUTE_KIND, SMALL_BODY_MODES};
pub(crate) use precompute::build_fast_precompute;
pub use precompute::{fast_precompute_key, FastPrecomputeData};
pub use rotation_clusters::RotationClusters;
pub use skinning_basis::SkinningBasis;
pub use skinning_eigenmodes::{skinning_eigenmodes, skinning_eigenmodes_of_material, SkinningEigenmodes};
pub use solver::FastSolver;
pub use weight_space_constraint::weight_space_constraint;
