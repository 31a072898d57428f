//! Embedding a surface mesh in a tetrahedral lattice, or a display surface in a user's tet mesh.

mod auto_resolution;
mod fast_winding_number;
mod lattice;
mod material_share;
mod memory;
mod passenger_pieces;
mod tet_embedding;
mod winding_number;

pub(crate) use auto_resolution::choose_lattice_resolution;
pub use auto_resolution::{ResolutionChoice, CELLS_ACROSS_BULK};
pub(crate) use fast_winding_number::WindingTree;
pub(crate) use lattice::{add_embedded, embed_surface, AUTO_LATTICE_RESOLUTION, DEFAULT_LATTICE_RESOLUTION};
pub use lattice::{surface_pieces, Embedding};
pub use memory::LatticeSolver;
pub(crate) use memory::{available_memory, check_lattice_memory};
pub(crate) use tet_embedding::embed_points_in_tets;
pub use tet_embedding::TetEmbedding;
pub(crate) use winding_number::winding_number;
