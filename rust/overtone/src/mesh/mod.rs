//! Simplicial meshes: triangles in 2D, tetrahedra in 3D.

mod boundary_facets;
mod bounding_box;
mod closest_point_on_triangle;
mod cylinder;
mod element_order;
mod grid;
mod simplex_mesh;
mod surface_defects;
mod volume;

pub use boundary_facets::boundary_facets;
pub(crate) use boundary_facets::boundary_vertices;
pub use bounding_box::bounding_box;
pub(crate) use bounding_box::bounding_box_d;
pub(crate) use closest_point_on_triangle::closest_point_on_triangle;
pub use cylinder::tet_cylinder;
pub(crate) use element_order::spatial_element_order;
pub use grid::{centered_triangle_grid, tet_grid, triangle_grid};
pub use simplex_mesh::SimplexMesh;
pub(crate) use surface_defects::surface_defects;
pub use volume::element_volumes;
pub(crate) use volume::signed_volume;
