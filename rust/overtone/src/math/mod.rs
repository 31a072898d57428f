//! Small dense math shared by the solvers: polar decompositions, the SIMD kernels (dot
//! products, 3-vector sweeps) of the hot loops, 3-vectors and 3×3 matrices.

pub mod kernels;
pub mod mat3;
pub mod polar;
pub mod vec3;
