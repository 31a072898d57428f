//! Rigs: linear blend skinning.

mod affine;
mod frame_path;
mod lbs;
mod limit_displacement;
mod orthogonality;
mod pose_interpolation;
mod pull_back;
mod rig_jump;
mod sparse_weights;

pub(crate) use affine::{compose_affine, invert_affine};
pub use frame_path::FramePath;
pub use lbs::{lbs_basis, lbs_jacobian, LbsRig};
pub use limit_displacement::{bounding_box_diagonal, limit_displacement};
pub use orthogonality::{spectral_norm, RigConstraint};
pub use pose_interpolation::PoseInterpolator;
pub use pull_back::PullBack;
pub use rig_jump::RigJump;
pub use sparse_weights::SparseWeights;
