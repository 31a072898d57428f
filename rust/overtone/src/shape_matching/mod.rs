//! Example-based elastic deformation by shape matching (Koyama, Takayama, Umetani and Igarashi
//! 2013, after Müller et al. 2005): particles, overlapping regions, goal positions from each
//! region's best rotation and (projected) stretch, and the linear example manifold.
//!
//! Everything here is 3D. Poses are `n × 3` row-major arrays (host layout).

mod bar_shape;
mod body;
mod example_manifold;
mod example_poses;
mod floor;
mod params;
mod regions;
pub mod rigid_motion;
mod solver;
pub mod stretch;

pub use bar_shape::{BarAngles, BarShape};
pub use body::{read_pose, Body};
pub use example_manifold::{ExampleManifold, ManifoldScope};
pub use example_poses::{s_bend_pose, twist_pose};
pub use floor::Floor;
pub use params::ShapeMatchingParams;
pub use regions::Regions;
pub use rigid_motion::{momenta, rigid_residual};
pub(crate) use solver::EXAMPLE_VOLUME_LIMIT;
pub use solver::{ExampleGoal, ShapeMatchingSolver};
