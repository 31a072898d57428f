//! Embedding a surface mesh in a tetrahedral lattice, or a display surface in a user's tet mesh.

mod lattice;
mod tet_embedding;
mod winding_number;

pub use lattice::{embed_surface, Embedding, DEFAULT_LATTICE_RESOLUTION};
pub use tet_embedding::{embed_points_in_tets, TetEmbedding};
pub use winding_number::winding_number;
