//! Embedding a surface mesh in a tetrahedral lattice, or a display surface in a user's tet mesh.

mod auto_resolution;
mod lattice;
mod material_share;
mod memory;
mod tet_embedding;
mod winding_number;

pub use auto_resolution::{
    choose_lattice_resolution, ResolutionChoice, CELLS_ACROSS_BULK, CELLS_ACROSS_THIN_PARTS, MAX_AUTO_RESOLUTION,
    MAX_AUTO_TETS, MIN_AUTO_RESOLUTION, THIN_QUANTILE,
};
pub use lattice::{embed_surface, surface_pieces, Embedding, AUTO_LATTICE_RESOLUTION, DEFAULT_LATTICE_RESOLUTION};
pub use material_share::MIN_MATERIAL_SHARE;
pub use memory::{available_memory, check_lattice_memory, lattice_memory_estimate, LatticeSolver};
pub use tet_embedding::{embed_points_in_tets, TetEmbedding};
pub use winding_number::winding_number;
