//! The cached part of the fast solver's precompute: skinning eigenmodes and rotation clusters.

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::cache::{read_sidecar, write_sidecar, CacheKey};
use crate::dynamics::FastParams;
use crate::error::Result;
use crate::mesh::SimplexMesh;
use crate::reduced::{skinning_eigenmodes, RotationClusters};

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

/// Where the precompute came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheStatus {
    /// No sidecar path was given.
    NotRequested,
    /// Loaded from the sidecar.
    Loaded,
    /// Built and written; the string says why the sidecar could not be used.
    Rebuilt(String),
    /// Built, but the sidecar could not be written (the run goes on without it).
    WriteFailed(String),
}

impl std::fmt::Display for CacheStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRequested => write!(f, "no sidecar"),
            Self::Loaded => write!(f, "loaded from sidecar"),
            Self::Rebuilt(why) => write!(f, "rebuilt ({why}) and saved"),
            Self::WriteFailed(why) => write!(f, "built; sidecar not written: {why}"),
        }
    }
}

/// The key of a fast precompute: the mesh, the scalar constraint `Â = Ĵᵀ diag(m ⊙ d)` (which
/// carries the weights, rest positions, leak field and density), and the subspace size.
pub fn fast_precompute_key(mesh: &SimplexMesh, a_hat: &Mat<f64>, fast: FastParams) -> [u8; 32] {
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
        .usizes("modes, clusters", &[fast.modes, fast.clusters])
        .finish()
}

fn build(mesh: &SimplexMesh, a_hat: &Mat<f64>, fast: FastParams) -> Result<FastPrecomputeData> {
    let modes = skinning_eigenmodes(mesh, a_hat, fast.modes)?;
    let clusters = if fast.clusters == mesh.n_elements() {
        RotationClusters::per_element(mesh.n_elements())
    } else {
        RotationClusters::new(mesh, &modes.weights, fast.clusters)?
    };
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

/// Loads the eigenmodes and clusters from `sidecar` when it matches these inputs exactly, else
/// builds them (and writes the sidecar atomically when a path is given).
pub fn load_or_build_fast_precompute(
    mesh: &SimplexMesh,
    a_hat: &Mat<f64>,
    fast: FastParams,
    sidecar: Option<&Path>,
) -> Result<(FastPrecomputeData, CacheStatus)> {
    let Some(path) = sidecar else {
        return Ok((build(mesh, a_hat, fast)?, CacheStatus::NotRequested));
    };
    let key = fast_precompute_key(mesh, a_hat, fast);
    let miss = match read_sidecar::<FastPrecomputeData>(path, &key) {
        Ok(data)
            if data.n_vertices == mesh.n_vertices()
                && data.weights.len() == data.n_vertices * data.modes
                && data.labels.len() == mesh.n_elements()
                && data.labels.iter().all(|&l| l < data.cluster_sizes.len()) =>
        {
            return Ok((data, CacheStatus::Loaded));
        }
        Ok(_) => "payload inconsistent with the mesh".to_string(),
        Err(m) => m.to_string(),
    };
    let data = build(mesh, a_hat, fast)?;
    let status = match write_sidecar(path, &key, &data) {
        Ok(()) => CacheStatus::Rebuilt(miss),
        Err(e) => CacheStatus::WriteFailed(e.to_string()),
    };
    Ok((data, status))
}
