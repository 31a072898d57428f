//! Overtone: physical secondary motion layered on a linear-blend-skinning rig, under the
//! contract of complementary dynamics: the physics never produces a motion the rig could make
//! itself (`Jᵀ M D u_c = 0`).
//!
//! Conventions: double precision throughout; a *field* over `n` vertices in `d` dimensions is a
//! coordinate-major slice of length `n·d` (coordinate `i` of vertex `v` at `i·n + v`); meshes and
//! weights given by hosts are row-major.

pub mod cache;
pub mod deformer;
pub mod dynamics;
pub mod embed;
pub mod energy;
pub mod error;
pub mod fem;
pub mod figures;
pub mod io;
pub mod leak;
pub(crate) mod math;
pub mod mesh;
pub mod progress;
pub mod rig;
pub mod scene;
pub mod settings;
pub mod shape_matching;
pub mod solve;

pub use error::{ErrorKind, FileError, InputError, NumericalError, OvertoneError, Result, SettingError};
pub use settings::Settings;
