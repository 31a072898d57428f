//! Finite-element operators on simplicial meshes (linear elements).

mod arap_energy;
mod arap_rest_stiffness;
mod deformation_jacobian;
mod lame;
mod mass_matrix;
mod scalar_stiffness;

pub use arap_energy::{arap_energy, arap_gradient};
pub(crate) use arap_rest_stiffness::{arap_rest_stiffness_matrix, arap_rest_stiffness_product};
pub use deformation_jacobian::DeformationJacobian;
pub(crate) use deformation_jacobian::PARALLEL_MIN_ELEMENTS;
pub use lame::{lame_parameters, Lame};
pub use mass_matrix::lumped_mass;
pub use scalar_stiffness::{scalar_stiffness, scalar_stiffness_triplets};
