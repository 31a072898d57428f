//! The reduced space of fast complementary dynamics (Benchekroun et al. 2023): rig-orthogonal
//! skinning eigenmodes and rotation clusters.

mod constrained_eigen;
mod kmeans;
mod rotation_clusters;
mod skinning_basis;
mod skinning_eigenmodes;
pub mod thick_restart_lanczos;
mod weight_space_constraint;

pub use constrained_eigen::{lowest_constrained_eigenpairs, ConstrainedEigenpairs};
pub use kmeans::{kmeans, KMeans};
pub use rotation_clusters::{element_features, RotationClusters};
pub use skinning_basis::SkinningBasis;
pub use skinning_eigenmodes::{skinning_eigenmodes, SkinningEigenmodes};
pub use weight_space_constraint::weight_space_constraint;
