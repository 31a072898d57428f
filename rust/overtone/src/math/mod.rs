//! Small dense math shared by the solvers: polar decompositions and the SIMD kernels
//! (dot products, 3-vector sweeps) of the hot loops.

pub mod kernels;
pub mod polar;
