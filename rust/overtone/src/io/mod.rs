//! File formats: readers for meshes, rigs and animations, writers for caches.
//!
//! Every reader answers malformed input with [`crate::OvertoneError::Parse`] naming the file and
//! what is wrong; none panics. Every writer is atomic: it writes a temporary file beside the
//! target and renames it, so an interrupted write never leaves a half-written file.

mod atomic_write;
mod dmat;
mod gltf_character;
mod gmsh;
mod mdd;
mod medit;
mod obj;
mod pc2;
mod reference_anim;
mod tgf;
mod tokens;

pub use atomic_write::write_atomically;
pub use dmat::{read_dmat, Dmat};
pub use gltf_character::{read_gltf_character, GltfCharacter};
pub use gmsh::{read_gmsh, GmshMesh};
pub use mdd::write_mdd;
pub use medit::{read_medit, MeditMesh};
pub use obj::{read_obj, ObjMesh};
pub use pc2::{read_pc2, write_pc2, Pc2};
pub use reference_anim::{euler_zyx_degrees, read_point_handle_anim, read_skeleton_anim, SkeletonAnim};
pub use tgf::{read_tgf, Tgf};
