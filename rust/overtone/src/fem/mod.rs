//! Finite-element operators on simplicial meshes (linear elements).

mod arap_energy;
mod deformation_jacobian;
mod lame;
mod mass_matrix;
mod scalar_stiffness;

pub use arap_energy::{arap_energy, arap_gradient};
pub use deformation_jacobian::{DeformationJacobian, PARALLEL_MIN_ELEMENTS};
pub use lame::{lame_parameters, Lame};
pub use mass_matrix::lumped_mass;
pub use scalar_stiffness::{scalar_stiffness, scalar_stiffness_triplets};
