//! Embedding a surface mesh in a tetrahedral lattice.

mod lattice;
mod winding_number;

pub use lattice::{embed_surface, Embedding, DEFAULT_LATTICE_RESOLUTION};
pub use winding_number::winding_number;
