//! Rigs: linear blend skinning.

mod affine;
mod lbs;
mod orthogonality;

pub use affine::{compose_affine, invert_affine, normalisation_pair};
pub use lbs::{LbsRig, NEGATIVE_WEIGHT_TOLERANCE, WEIGHT_SUM_TOLERANCE};
pub use orthogonality::{spectral_norm, validate_solver_inputs, RigConstraint};
