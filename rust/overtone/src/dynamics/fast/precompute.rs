//! The cached part of the fast solver's precompute: skinning eigenmodes and rotation clusters.

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::cache::CacheKey;
use crate::dynamics::fast::{skinning_eigenmodes_of_material, FastParams, RotationClusters};
use crate::error::Result;
use crate::mesh::SimplexMesh;
use crate::rig::LbsRig;

/// Eigenpairs computed beyond the requested count, to see whether the cut splits a cluster.
const CUT_LOOKAHEAD: usize = 4;
/// Two eigenvalues closer than this (relative) belong to one cluster: the basis of such a
/// cluster is the eigensolver's choice, and round-off (a mirrored object's float32 transforms)
/// decides which member a cut through it keeps.
const CLUSTER_GAP: f64 = 1e-3;

/// What the sidecar of the fast solver holds (everything that costs more than a few
/// milliseconds to rebuild).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastPrecomputeData {
    pub n_vertices: usize,
    /// Weight fields kept: the requested count, less the members of an eigenvalue cluster the
    /// cut would split ([`modes_kept`]).
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

/// The key of a fast precompute: the mesh; the rig (rest positions, bone weights and blendshape
/// deltas: with the momentum mass they fix the constraint rows `Â = Ĵᵀ diag(m ⊙ d)`, the
/// blendshape rows and the rig terms through `J̃`); the lumped mass `m` (so the density and the
/// effective volumes; the basis is made mass-orthonormal, so a density change that a leak
/// field cancels in `m ⊙ d` is still a new model) and the momentum mass `m ⊙ d` per vertex
/// (`d` the leak field); the subspace size; the per-element stiffness multipliers (empty:
/// uniform) and the per-vertex material shares of an embedding lattice (`fill`, empty: whole
/// elements). The rows themselves are not hashed: they are `m(d+1)` numbers a vertex where
/// these inputs are `m + 2`, and a warm bind would otherwise form the dense `n × c` Jacobian
/// just to hash it. The shear modulus, the time step and the damping do not enter: the stored
/// reduced operators are per unit shear modulus, and the system matrix is factored when the
/// solver is built.
pub fn fast_precompute_key(
    mesh: &SimplexMesh,
    rig: &LbsRig,
    mass: &[f64],
    momentum_mass: &[f64],
    fast: FastParams,
    element_stiffness: &[f64],
    fill: &[f64],
) -> [u8; 32] {
    CacheKey::new()
        .text("payload", "fast-precompute")
        .usizes("dim", &[mesh.dim()])
        .f64s("vertices", mesh.vertices())
        .usizes("elements", mesh.elements())
        .usizes("rig: bones, targets", &[rig.n_bones(), rig.n_targets()])
        .f64s("rig rest positions", rig.rest())
        .f64s("rig bone weights", rig.weights())
        .f64s("blendshape deltas", rig.deltas())
        .f64s("lumped mass m", mass)
        .f64s("momentum mass m ⊙ d", momentum_mass)
        .usizes("modes, clusters", &[fast.modes, fast.clusters])
        .usizes(
            "damped reduced modes",
            &[crate::dynamics::modal_damping::REDUCED_DAMPED_MODES],
        )
        .text("clustering", "divisive bisection across principal directions")
        .text(
            "eigenmodes",
            "of the material: effective volumes, stiffness multipliers; cut between eigenvalue clusters",
        )
        .f64s("element stiffness multipliers", element_stiffness)
        .f64s("vertex material shares (fill)", fill)
        .finish()
}

/// How many of the ascending eigenvalues `values` to keep when `k` are asked for: the largest
/// `j ≤ k` whose next eigenvalue is more than [`CLUSTER_GAP`] (relative) above `λ_j`, so the
/// subspace never holds part of a cluster of (near-)equal eigenvalues; `k` itself when `values`
/// has no eigenvalue beyond it or when every cut down to `k/2` splits a cluster.
///
/// Measured on the Blender tests' tube at 32 cells (a square lattice around a round tube has
/// pairs of equal eigenvalues): the mirrored tube moved 0.10 % of the peak away from the plain
/// one with 63 modes, 1.02 % with 64 and 7.57 % with 65 before this cut.
pub(crate) fn modes_kept(values: &[f64], k: usize) -> usize {
    if values.len() <= k {
        return k.min(values.len());
    }
    (k.div_ceil(2).max(1)..=k)
        .rev()
        .find(|&j| values[j] - values[j - 1] > CLUSTER_GAP * values[j].abs().max(f64::MIN_POSITIVE))
        .unwrap_or(k)
}

/// Eigenmodes and clusters (the expensive part of the fast precompute): the eigenmodes of the
/// body's material ([`skinning_eigenmodes_of_material`] with per-element `stiffness_weights`
/// `vol_e · s_e` and effective `volumes`), the clusters of their element features. Reports to
/// this thread's [`crate::progress`] scope (eigenmodes up to 85 %, clusters up to 100 %) and
/// stops with [`crate::OvertoneError::Cancelled`] when it is cancelled.
///
/// `beside(weights)` runs on a second thread while the clusters are cut, with the kept weight
/// fields (`n × modes`); its result is returned with the precompute. It must not report
/// progress (the scope is this thread's).
pub(crate) fn build_fast_precompute<T: Send>(
    mesh: &SimplexMesh,
    a_hat: &Mat<f64>,
    fast: FastParams,
    stiffness_weights: &[f64],
    volumes: &[f64],
    beside: impl FnOnce(&Mat<f64>) -> T + Send,
) -> Result<(FastPrecomputeData, T)> {
    crate::progress::check()?;
    // A few eigenpairs beyond the request show whether the cut splits a cluster; there must be
    // room for them beside the constraint.
    let n = mesh.n_vertices();
    let rows = a_hat.nrows() * (mesh.dim() + 1);
    let asked = if n > fast.modes + CUT_LOOKAHEAD + rows {
        fast.modes + CUT_LOOKAHEAD
    } else {
        fast.modes
    };
    let mut modes = crate::progress::within(0.0, 0.85, || {
        skinning_eigenmodes_of_material(mesh, a_hat, asked, stiffness_weights, volumes)
    })?;
    let kept = modes_kept(&modes.values, fast.modes);
    modes.values.truncate(kept);
    modes.weights = modes.weights.subcols(0, kept).to_owned();
    crate::progress::report(0.85, "rotation clusters");
    crate::progress::check()?;
    let weights = &modes.weights;
    let (clusters, besides) = std::thread::scope(|scope| {
        let other = scope.spawn(|| beside(weights));
        let clusters = if fast.clusters == mesh.n_elements() {
            Ok(RotationClusters::per_element(mesh.n_elements()))
        } else {
            crate::progress::within(0.85, 1.0, || RotationClusters::new(mesh, weights, fast.clusters))
        };
        let besides = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (clusters, besides)
    });
    let clusters = clusters?;
    crate::progress::report(1.0, "rotation clusters");
    let data = FastPrecomputeData {
        n_vertices: n,
        modes: kept,
        weights: (0..kept)
            .flat_map(|l| (0..n).map(move |v| (v, l)))
            .map(|(v, l)| modes.weights[(v, l)])
            .collect(),
        eigenvalues: modes.values,
        constraint_rows: modes.constraint_rows,
        constraint_rank: modes.constraint_rank,
        labels: clusters.labels,
        cluster_sizes: clusters.sizes,
    };
    Ok((data, besides))
}

#[cfg(test)]
mod tests {
    use super::modes_kept;

    /// The cut steps below a cluster it would split, keeps `k` between clusters, and keeps `k`
    /// when there is nothing beyond it to compare with or when the cluster reaches below `k/2`.
    #[test]
    fn the_cut_never_splits_an_eigenvalue_cluster() {
        let spread = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(modes_kept(&spread, 4), 4);
        // λ4 = λ5 (a pair): keeping 4 would hold one of them.
        let pair = [1.0, 2.0, 3.0, 4.0, 4.0 + 1e-9, 6.0];
        assert_eq!(modes_kept(&pair, 4), 3);
        // A gap of 5e-4 of the eigenvalue is one cluster, 2.5e-3 is not.
        assert_eq!(modes_kept(&[1.0, 2.0, 3.0, 4.0, 4.01, 6.0], 4), 4);
        assert_eq!(modes_kept(&[1.0, 2.0, 3.0, 4.0, 4.002, 6.0], 4), 3);
        // Nothing beyond the request, or a cluster from below k/2: keep k.
        assert_eq!(modes_kept(&pair[..4], 4), 4);
        assert_eq!(modes_kept(&[1.0, 2.0, 2.0, 2.0, 2.0, 2.0], 4), 4);
    }
}
