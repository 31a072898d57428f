//! Embedding a surface mesh in a tetrahedral lattice, or a display surface in a user's tet mesh.

mod lattice;
mod memory;
mod tet_embedding;
mod winding_number;

pub use lattice::{embed_surface, Embedding, DEFAULT_LATTICE_RESOLUTION};
pub use memory::{available_memory, check_lattice_memory, lattice_memory_estimate, LatticeSolver};
pub use tet_embedding::{embed_points_in_tets, TetEmbedding};
pub use winding_number::winding_number;
