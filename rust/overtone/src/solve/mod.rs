//! Linear solvers: sparse Cholesky with a reusable workspace, quadratic minimisation with fixed
//! values (Dirichlet), and the constrained (Schur
//! complement) solve of the complementary-dynamics global step; Newton's method; the lowest
//! eigenpairs of a pencil under linear constraints (thick-restart Lanczos); Anderson
//! acceleration of fixed-point iterations.

pub(crate) mod anderson;
mod blendshape_projection;
mod constrained_eigen;
mod constrained_solve;
mod constraint_basis;
mod dense_eigen;
mod fixed_value;
mod newton;
mod sparse_cholesky;
pub mod thick_restart_lanczos;

pub use blendshape_projection::BlendshapeProjection;
pub(crate) use constrained_eigen::lowest_constrained_eigenpairs;
pub use constrained_eigen::ConstrainedEigenpairs;
pub use constrained_solve::ConstrainedSolve;
pub(crate) use constrained_solve::PARALLEL_MIN_VERTICES;
pub use constraint_basis::orthonormal_constraint_basis;
pub use dense_eigen::{dense_generalized_eigen, Modes, DENSE_EIGEN_MAX_SIZE};
pub use fixed_value::FixedValueSolve;
pub use newton::{newton_minimize, NewtonIteration, NewtonParams, NewtonProblem, NewtonReport};
pub use sparse_cholesky::SparseCholesky;
