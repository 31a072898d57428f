//! File formats: readers for meshes, rigs and animations, writers for caches.
//!
//! Every reader answers malformed input with [`crate::FileError::Parse`] naming the file and
//! what is wrong; none panics. Every writer is atomic: it writes a temporary file beside the
//! target and renames it, so an interrupted write never leaves a half-written file.

mod alembic;
mod animated_mesh;
mod atomic_write;
mod background_file;
mod dmat;
mod frame_stream;
mod gltf_character;
mod gmsh;
pub mod key_curves;
mod mdd;
mod medit;
mod obj;
mod pc2;
mod reference_anim;
mod tgf;
mod tokens;
mod usd;

pub use alembic::write_alembic;
pub use animated_mesh::AnimatedMesh;
pub(crate) use atomic_write::read_latest;
pub use atomic_write::{
    abandon_pending_writes, commit_deferred, defer_commits, deferred_committed, discard_deferred, write_atomically,
    writes_abandoned, AtomicFile,
};
pub(crate) use dmat::parse_dmat;
pub use dmat::{read_dmat, Dmat};
pub(crate) use gltf_character::{list_skinned_meshes, read_gltf_mesh_node};
pub use gltf_character::{
    parse_gltf_character, read_gltf_character, read_gltf_character_with, GltfCharacter, SkinnedMeshNode,
};
pub use gmsh::{parse_gmsh, read_gmsh, GmshMesh};
pub use key_curves::RigInterpolation;
pub use mdd::{write_mdd, MddWriter};
pub use medit::{parse_medit, read_medit, MeditMesh};
pub use obj::{read_obj, ObjMesh};
pub use pc2::{parse_pc2, read_pc2, write_pc2, Pc2, Pc2Writer};
pub use reference_anim::{parse_point_handle_anim, parse_skeleton_anim, read_skeleton_anim, SkeletonAnim};
pub(crate) use tgf::parse_tgf;
pub use tgf::{read_tgf, Tgf};
pub(crate) use tokens::read_text;
pub use usd::{write_usda, write_usdc, UpAxis};
