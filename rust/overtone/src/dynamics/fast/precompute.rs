//! The cached part of the fast solver's precompute: skinning eigenmodes and rotation clusters.

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::cache::CacheKey;
use crate::dynamics::fast::{skinning_eigenmodes_of_material, FastParams, RotationClusters};
use crate::error::Result;
use crate::mesh::SimplexMesh;

/// What the sidecar of the fast solver holds (everything that costs more than a few
/// milliseconds to rebuild).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastPrecomputeData {
    pub n_vertices: usize,
    pub modes: usize,
    /// Weight fields, `n × k`, column-major.
    pub weights: Vec<f64>,
    pub eigenvalues: Vec<f64>,
    pub constraint_rows: usize,
    pub constraint_rank: usize,
    /// Cluster of each element.
    pub labels: Vec<usize>,
    pub cluster_sizes: Vec<usize>,
}

impl FastPrecomputeData {
    /// The weight fields as a matrix.
    pub fn weight_matrix(&self) -> Mat<f64> {
        Mat::from_fn(self.n_vertices, self.modes, |v, l| {
            self.weights[l * self.n_vertices + v]
        })
    }
}

/// The key of a fast precompute: the mesh, the scalar constraint rows (`Â = Ĵᵀ diag(m ⊙ d)`
/// and the blendshape rows; they carry the weights, rest positions, leak field and density),
/// the blendshape deltas themselves (`T × n × d`; they also enter the rig terms through `J̃`),
/// the subspace size, the per-element stiffness multipliers (empty: uniform) and the per-vertex
/// material shares of an embedding lattice (`fill`, empty: whole elements). The shear
/// modulus, the time step and the damping do not enter: the stored reduced operators are per
/// unit shear modulus, and the system matrix is factored when the solver is built.
pub fn fast_precompute_key(
    mesh: &SimplexMesh,
    a_hat: &Mat<f64>,
    deltas: &[f64],
    fast: FastParams,
    element_stiffness: &[f64],
    fill: &[f64],
) -> [u8; 32] {
    let a: Vec<f64> = (0..a_hat.nrows() * a_hat.ncols())
        .map(|i| a_hat[(i / a_hat.ncols(), i % a_hat.ncols())])
        .collect();
    CacheKey::new()
        .text("payload", "fast-precompute")
        .usizes("dim", &[mesh.dim()])
        .f64s("vertices", mesh.vertices())
        .usizes("elements", mesh.elements())
        .usizes("constraint shape", &[a_hat.nrows(), a_hat.ncols()])
        .f64s("constraint", &a)
        .f64s("blendshape deltas", deltas)
        .usizes("modes, clusters", &[fast.modes, fast.clusters])
        .text("clustering", "divisive bisection across principal directions")
        .text(
            "eigenmodes",
            "of the material: effective volumes, stiffness multipliers",
        )
        .f64s("element stiffness multipliers", element_stiffness)
        .f64s("vertex material shares (fill)", fill)
        .finish()
}

/// Eigenmodes and clusters (the expensive part of the fast precompute): the eigenmodes of the
/// body's material ([`skinning_eigenmodes_of_material`] with per-element `stiffness_weights`
/// `vol_e · s_e` and effective `volumes`), the clusters of their element features. Reports to
/// this thread's [`crate::progress`] scope (eigenmodes up to 85 %, clusters up to 100 %) and
/// stops with [`crate::OvertoneError::Cancelled`] when it is cancelled.
pub fn build_fast_precompute(
    mesh: &SimplexMesh,
    a_hat: &Mat<f64>,
    fast: FastParams,
    stiffness_weights: &[f64],
    volumes: &[f64],
) -> Result<FastPrecomputeData> {
    crate::progress::check()?;
    let modes = crate::progress::within(0.0, 0.85, || {
        skinning_eigenmodes_of_material(mesh, a_hat, fast.modes, stiffness_weights, volumes)
    })?;
    crate::progress::report(0.85, "rotation clusters");
    crate::progress::check()?;
    let clusters = if fast.clusters == mesh.n_elements() {
        RotationClusters::per_element(mesh.n_elements())
    } else {
        crate::progress::within(0.85, 1.0, || RotationClusters::new(mesh, &modes.weights, fast.clusters))?
    };
    crate::progress::report(1.0, "rotation clusters");
    let n = mesh.n_vertices();
    Ok(FastPrecomputeData {
        n_vertices: n,
        modes: fast.modes,
        weights: (0..fast.modes)
            .flat_map(|l| (0..n).map(move |v| (v, l)))
            .map(|(v, l)| modes.weights[(v, l)])
            .collect(),
        eigenvalues: modes.values,
        constraint_rows: modes.constraint_rows,
        constraint_rank: modes.constraint_rank,
        labels: clusters.labels,
        cluster_sizes: clusters.sizes,
    })
}
