//! Fast complementary dynamics (Benchekroun et al. 2023): ARAP local/global in a rig-orthogonal
//! skinning-eigenmode subspace with clustered rotations.

use std::time::Instant;

use faer::sparse::SparseColMat;
use faer::{Mat, Side};

use crate::cache::{load_or_build, CacheStatus};
use crate::dense_kernels::{add_transposed_product3, dot, dot3};
use crate::dynamics::fast::{build_fast_precompute, fast_precompute_key, SkinningBasis};
use crate::dynamics::time_integration::{
    extrapolate_from, restore_fields, save_fields, Damping, FramePlan, FrameStepper, SubstepSolver,
};
use crate::dynamics::{validate_solver_inputs, ConstraintRank, Material, RestShape, SolverParams, StepReport};
use crate::error::{OvertoneError, Result};
use crate::fem::{lame_parameters, lumped_mass, scalar_stiffness, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::polar::{closest_rotation_2d, closest_rotation_3d, closest_rotation_3d_x4};
use crate::rig::{spectral_norm, LbsRig, RigConstraint};
use serde::{Deserialize, Serialize};

/// Accuracy (radians) of the per-cluster rotations.
const CLUSTER_ROTATION_ACCURACY: f64 = 1e-12;

/// Size of the reduced space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastParams {
    /// Skinning eigenmodes `k` (weight fields); the subspace has `k·d(d+1)` coordinates.
    /// Defaults: 10 in 2D (the seed's), 16 in 3D (the paper code's).
    pub modes: usize,
    /// Rotation clusters; default 20 in 2D, 100 in 3D. Must not exceed the element count.
    pub clusters: usize,
}

impl FastParams {
    /// The defaults for dimension `dim`.
    pub fn default_for(dim: usize) -> Self {
        if dim == 2 {
            Self {
                modes: 10,
                clusters: 20,
            }
        } else {
            Self {
                modes: 16,
                clusters: 100,
            }
        }
    }
}

/// What the precompute produced, for reports.
#[derive(Clone, Debug, Default)]
pub struct FastPrecompute {
    /// Eigenvalues of the skinning eigenmodes (1/length²), ascending.
    pub eigenvalues: Vec<f64>,
    /// Elements per rotation cluster.
    pub cluster_sizes: Vec<usize>,
    /// `‖(JᵀMD) B‖₂ / (‖JᵀMD‖₂ ‖B‖₂)`.
    pub structural_orthogonality: f64,
    /// Rows of the weight-space constraint per coordinate: given, and how many are independent.
    pub constraint_rows: ConstraintRank,
    /// Reduced coordinates `r = d·r̂`.
    pub reduced_dofs: usize,
    /// Milliseconds per precompute stage, in order.
    pub stage_ms: Vec<(String, f64)>,
    /// Whether the eigenmodes and clusters came from a sidecar.
    pub cache: CacheStatus,
    /// Substeps per frame of the time integration.
    pub substeps: usize,
    /// Frequency of the lowest vibration mode of the subspace (Hz), with the stiffness used.
    pub lowest_frequency_hz: f64,
}

/// Fast complementary dynamics: `u_c = B z` with `B` the M-orthonormalised rig-orthogonal
/// skinning basis ([`SkinningBasis`]), so `Jᵀ M D u_c = 0` holds structurally and the global
/// step is unconstrained.
///
/// Each step minimises, over `z` (coordinate-major, `d × r̂`), the backward-Euler objective of
/// the full solver restricted to `x = J p_{t+1} + B z`:
/// `‖x − x̃‖²_M/(2h²) + Σ_e (μ vol_e/2) ‖F_e(x) − R_{c(e)}‖² − xᵀ M g`, `x̃ = x_t + h v_t`,
/// with one rotation `R_c` per cluster. With `BᵀMB = I`, setting the gradient to zero gives,
/// per coordinate `i`,
///
/// `(B̂ᵀL̂B̂ + I/h²) z_i = y_i/h² − B̂ᵀM̂Ĵ q_i/h² − B̂ᵀL̂Ĵ p_i + Σ_c K̂_cᵀ R_c[i,:] + B̂ᵀM̂1 g_i`
///
/// where `y = z_t + h ż_t`, `q = p_{t+1} − p_t − h ṗ_t` (finite-difference velocities), and
/// `K̂_c = Σ_{e∈c} μ vol_e Ĝ_e B̂` (`d × r̂`). The local step takes `R_c` closest to
/// `F_c = Σ_{e∈c} μ vol_e F_e = K̂_c z_i + K̂ᴶ_c p_i` (rows `i`), the mass-weighted cluster
/// average up to a positive factor. The `r̂ × r̂` matrix is factored once (dense Cholesky) and
/// the step does not allocate. Per-step cost depends on `k` and the cluster count only.
///
/// **Blendshapes.** The rig pose is the morph-then-skin pose, linear per coordinate in the
/// extended parameters `p̃_i = [p_i, β_1 p_i, …]` with `J̃ = [Ĵ, Ĵ_1, …]`
/// ([`LbsRig::extended_params_into`]), so every rig term above uses `J̃`, `p̃` in place of `Ĵ`,
/// `p`. The constraint gains the coupled rows `Δ_tᵀ M D`. A weight field `w` spans the
/// displacements `u_i = Σ_j a_ij w X̂_j` for every `d × (d+1)` matrix `a`; `Δ_tᵀ M D u =
/// Σ_ij a_ij (m ⊙ d ⊙ Δ_t,i ⊙ X̂_j)ᵀ w` vanishes for every `a` iff `(m ⊙ d ⊙ Δ_t,i ⊙ X̂_j)ᵀ w = 0`
/// for all `i, j`: the scalar rows `G_{t,i} = m ⊙ d ⊙ Δ_t,i` join `Â`
/// ([`RigConstraint::per_coordinate_rows`]) before the weight-space rows are formed, and
/// `Jᵀ M D B = 0` holds structurally for the blendshape columns too.
pub struct FastSolver {
    dim: usize,
    n: usize,
    rr: usize,
    /// Columns of `J̃`, `c̃ = c(1+T)`.
    n_rig: usize,
    rig: LbsRig,
    basis: SkinningBasis,
    /// Length `τ` of one backward-Euler solve (see [`FramePlan::solve_step`]).
    h: f64,
    iterations: usize,
    gravity: Vec<f64>,
    rest: RestShape,
    damping: Damping,
    /// Start each solve from the inertial prediction (substepped integrators).
    predict: bool,
    /// `μ B̂ᵀL̂B̂` (`r̂ × r̂`, row-major), for the damping force.
    btlb: Vec<f64>,
    /// `B̂ᵀM̂B̂` (`r̂ × r̂`, row-major), kept to refactor the system when the damping changes.
    bmb: Vec<f64>,
    /// The lowest mode's Laplacian energy `μ ρ_L` (see [`Damping::rayleigh_split`]).
    rho_l: f64,
    /// Lowest angular frequency `ω₁` of the subspace (rad/s).
    omega1: f64,
    /// Cholesky factor of `(1 + β/τ) μB̂ᵀL̂B̂ + (1/τ² + α/τ) I` (`r̂ × r̂`).
    chol: DenseCholesky,
    /// Per cluster `K̂_c` (`d × r̂`, row-major), concatenated.
    k_basis: Vec<f64>,
    /// Per cluster `K̂ᴶ_c` (`d × c`), concatenated.
    k_rig: Vec<f64>,
    /// `B̂ᵀM̂Ĵ` (`r̂ × c`), `B̂ᵀL̂Ĵ` (`r̂ × c`), row-major.
    bmj: Vec<f64>,
    blj: Vec<f64>,
    /// `B̂ᵀM̂1` (`r̂`).
    bm1: Vec<f64>,
    /// `ÂB̂` (`c × r̂`) and `B̂ᵀB̂` (`r̂ × r̂`), for the residual.
    a_b: Vec<f64>,
    b_b: Vec<f64>,
    /// `G_{t,i} B̂` (`T·d × r̂`, row `t·d + i`), for the blendshape residual.
    g_b: Vec<f64>,
    constraint_norm: f64,
    blend_norm: f64,
    n_clusters: usize,
    info: FastPrecompute,
    // state
    z: Vec<f64>,
    zdot: Vec<f64>,
    /// Extended parameters `p̃` (`d·c̃`) and their finite-difference velocity.
    p: Vec<f64>,
    pdot: Vec<f64>,
    /// The rig parameters `p` as given (`n_params`).
    p_full: Vec<f64>,
    /// `p̃` of the next pose (workspace).
    p_ext: Vec<f64>,
    warm: Vec<[f64; 4]>,
    /// Warm starts of the rig pose's cluster rotations (rest = rig), and their value at the
    /// start of the step in progress.
    warm_rig: Vec<[f64; 4]>,
    warm_rig_start: Vec<[f64; 4]>,
    frames: FrameStepper,
    // workspace
    /// `warm` at the start of the step in progress (restored when the step fails).
    warm_start: Vec<[f64; 4]>,
    /// The rig pose's cluster rotations `R_c(J p)` (rest = rig), layout of `rvec`.
    r_rig: Vec<f64>,
    /// Midpoint start `(z_n, ż_n, ṗ_n)` and the frame's saved state.
    mid: Vec<f64>,
    saved: Vec<f64>,
    saved_warm: Vec<[f64; 4]>,
    base: Vec<f64>,
    f_rig: Vec<f64>,
    f0: Vec<f64>,
    fvec: Vec<f64>,
    rvec: Vec<f64>,
    /// Iterating in cluster space, when cheaper (see [`ClusterSpace`]).
    cluster_space: Option<ClusterSpace>,
    coeff: Vec<f64>,
    z_prev: Vec<f64>,
}

/// Everything the fast solver precomputes, stored in the sidecar: the skinning basis, the
/// clustered operators, the reduced system's Cholesky factor and the report figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReducedModel {
    basis: SkinningBasis,
    /// `B̂ᵀL̂B̂` per unit shear modulus (`r̂ × r̂`, row-major, symmetrised).
    btlb: Vec<f64>,
    /// `B̂ᵀM̂B̂` (`r̂ × r̂`, row-major; the identity up to round-off).
    bmb: Vec<f64>,
    /// `ω₁²` per unit shear modulus: the lowest vibrating eigenvalue of the model's own
    /// linearised stiffness in the subspace ([`clustered_arap_stiffness`]).
    arap_lambda: f64,
    /// The lowest mode's Laplacian energy `ρ_L` per unit shear modulus (see
    /// [`Damping::rayleigh_split`]).
    laplacian_rayleigh: f64,
    k_basis: Vec<f64>,
    k_rig: Vec<f64>,
    bmj: Vec<f64>,
    blj: Vec<f64>,
    bm1: Vec<f64>,
    a_b: Vec<f64>,
    b_b: Vec<f64>,
    g_b: Vec<f64>,
    constraint_norm: f64,
    blend_norm: f64,
    n_clusters: usize,
    rr: usize,
    modes: usize,
    eigenvalues: Vec<f64>,
    cluster_sizes: Vec<usize>,
    constraint_rows: (usize, usize),
    structural_orthogonality: f64,
}

impl ReducedModel {
    /// Checks that every stored array has the length implied by the model's counts, for a body
    /// of dimension `dim`, `n_vertices` vertices, `rig_columns` scalar rig columns (extended by
    /// the blendshapes), `constraint_rows` scalar constraint rows of the bones and `targets`
    /// blendshapes, and holds finite numbers. A model decoded from a sidecar is used only when this passes (the
    /// checksum detects corruption, not a file crafted with a matching checksum); the error says
    /// which array is off.
    pub fn check_shapes(
        &self,
        dim: usize,
        n_vertices: usize,
        rig_columns: usize,
        constraint_rows: usize,
        targets: usize,
    ) -> std::result::Result<(), String> {
        let (d, c, rr, nc) = (dim, rig_columns, self.rr, self.n_clusters);
        let len = |name: &str, v: &[f64], factors: &[usize]| -> std::result::Result<(), String> {
            let want = factors.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
            if want != Some(v.len()) {
                return Err(format!(
                    "{name} holds {} numbers, expected {factors:?} (product)",
                    v.len()
                ));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("{name} holds a non-finite number"));
            }
            Ok(())
        };
        if !self.basis.shapes_consistent() || self.basis.dim() != d || self.basis.n_vertices() != n_vertices {
            return Err(format!(
                "the skinning basis does not fit a {d}D body of {n_vertices} vertices"
            ));
        }
        if rr != self.basis.reduced_dim() {
            return Err(format!(
                "reduced size {rr} and basis {} disagree",
                self.basis.reduced_dim()
            ));
        }
        len("BᵀLB", &self.btlb, &[rr, rr])?;
        len("BᵀMB", &self.bmb, &[rr, rr])?;
        if !(self.arap_lambda.is_finite() && self.arap_lambda > 0.0) {
            return Err(format!(
                "lowest-mode eigenvalue {} is not a positive number",
                self.arap_lambda
            ));
        }
        len("cluster stiffness (basis)", &self.k_basis, &[nc, d, rr])?;
        len("cluster stiffness (rig)", &self.k_rig, &[nc, d, c])?;
        len("BᵀMJ", &self.bmj, &[rr, c])?;
        len("BᵀLJ", &self.blj, &[rr, c])?;
        len("BᵀM1", &self.bm1, &[rr])?;
        len("ÂB", &self.a_b, &[constraint_rows, rr])?;
        len("blendshape rows GB", &self.g_b, &[targets, d, rr])?;
        len("BᵀB", &self.b_b, &[rr, rr])?;
        if nc == 0 || self.cluster_sizes.len() != nc {
            return Err(format!("{nc} clusters but {} cluster sizes", self.cluster_sizes.len()));
        }
        Ok(())
    }

    /// A few lines describing the model (for `overtone inspect`).
    pub fn summary(&self) -> String {
        format!(
            "fast solver model: {} vertices, {} skinning eigenmodes, {} reduced DOFs per coordinate\n\
             eigenvalues {:?}\n\
             weight-space constraint: {} rows, {} independent; structural orthogonality {:.2e}\n\
             {} rotation clusters (sizes {:?})",
            self.basis.n_vertices(),
            self.modes,
            self.rr,
            self.eigenvalues,
            self.constraint_rows.0,
            self.constraint_rows.1,
            self.structural_orthogonality,
            self.n_clusters,
            self.cluster_sizes
        )
    }
}

/// The fast model's elastic energy linearised at rest, per unit shear modulus, as a
/// `d·r̂ × d·r̂` matrix on the coordinate-major reduced coordinates `z = (z_0, …, z_{d−1})`.
///
/// The model's energy is `Σ_e w_e ½|F_e − R_c(e)|²` with one rotation per cluster, the polar
/// factor of the cluster gradient `G_c = Σ_{e∈c} w_e F_e` (`G_c[i][j] = K̂_c,j · z_i` for the
/// secondary part). At rest (`G_c = W_c I`, `W_c = Σ_{e∈c} w_e`) the sum of singular values is
/// `σ(W_c I + δG) = d W_c + tr δG + |skew δG|²/(2W_c) + O(δG³)`, so to second order
///
/// `E = ½ Σ_i z_iᵀ (B̂ᵀL̂B̂) z_i − Σ_c 1/(4W_c) Σ_{i<j} (K̂_c,j·z_i − K̂_c,i·z_j)²`:
///
/// per-element rotations would leave `½ Σ_e w_e |sym δF_e|²` (linear elasticity with `(μ/2,
/// 0)`); a cluster's single rotation cancels only the cluster's mean rotation, which makes the
/// model stiffer than the elements' (CesiumMan's and the test beam's lowest modes vibrate 17%
/// faster), and the damping and frequency controls must see this frequency.
/// `btlb` is `B̂ᵀL̂B̂` (`r̂ × r̂`, row-major), `k_basis` the `K̂_c` (`n_c × d × r̂`), `cluster_weight`
/// the `W_c`.
fn clustered_arap_stiffness(d: usize, rr: usize, btlb: &[f64], k_basis: &[f64], cluster_weight: &[f64]) -> Mat<f64> {
    let mut k = Mat::<f64>::zeros(d * rr, d * rr);
    for i in 0..d {
        for a in 0..rr {
            for b in 0..rr {
                k[(i * rr + a, i * rr + b)] = btlb[a * rr + b];
            }
        }
    }
    // s(z) = K̂_c,j·z_i − K̂_c,i·z_j; −(1/(2W_c)) sᵀs in ½zᵀKz.
    for (c, &w) in cluster_weight.iter().enumerate() {
        if !(w > 0.0) {
            continue;
        }
        let row = |j: usize| &k_basis[(c * d + j) * rr..(c * d + j + 1) * rr];
        for i in 0..d {
            for j in i + 1..d {
                // s = [coefficient vector on z_i: K̂_c,j ; on z_j: −K̂_c,i]
                let (si, sj) = (row(j), row(i));
                for (p_blk, p_vec, p_sign) in [(i, si, 1.0), (j, sj, -1.0)] {
                    for (q_blk, q_vec, q_sign) in [(i, si, 1.0), (j, sj, -1.0)] {
                        for a in 0..rr {
                            for b in 0..rr {
                                k[(p_blk * rr + a, q_blk * rr + b)] -=
                                    p_sign * q_sign * p_vec[a] * q_vec[b] / (2.0 * w);
                            }
                        }
                    }
                }
            }
        }
    }
    k
}

/// Builds the reduced model (eigenmodes, clusters, basis, reduced operators) per unit shear
/// modulus: `weights[e] = vol_e · s_e` (`s_e` the element's stiffness multiplier). `stage` is
/// called after each stage with its name.
fn build_reduced_model(
    mesh: &SimplexMesh,
    jh: &Mat<f64>,
    mass: &[f64],
    rc: &RigConstraint,
    weights: &[f64],
    fast: FastParams,
    stage: &mut dyn FnMut(&str),
) -> Result<ReducedModel> {
    let (d, n, c) = (mesh.dim(), mesh.n_vertices(), jh.ncols());
    let a_hat = &rc.scalar;
    let pre = build_fast_precompute(mesh, &rc.per_coordinate_rows(), fast)?;
    stage("skinning eigenmodes and clusters");
    let basis = SkinningBasis::new(&pre.weight_matrix(), mesh.vertices(), d, mass)?;
    let rr = basis.reduced_dim();
    let bd = basis.dense();
    stage("subspace basis");
    let g = DeformationJacobian::new(mesh);
    let l_hat: SparseColMat<usize, f64> = scalar_stiffness(&g, weights)?;
    let btlb = bd.transpose() * (&l_hat * &bd);
    let blj_m = bd.transpose() * (&l_hat * jh);
    let mj = Mat::from_fn(n, c, |v, k| mass[v] * jh[(v, k)]);
    let bmj_m = bd.transpose() * &mj;
    let bm1: Vec<f64> = (0..rr).map(|a| (0..n).map(|v| bd[(v, a)] * mass[v]).sum()).collect();
    let n_clusters = pre.cluster_sizes.len();
    let mut k_basis = vec![0.0; n_clusters * d * rr];
    let mut k_rig = vec![0.0; n_clusters * d * c];
    for e in 0..mesh.n_elements() {
        let cl = pre.labels[e];
        let gr = g.gradients(e);
        for (a, &v) in mesh.element(e).iter().enumerate() {
            for j in 0..d {
                let coef = weights[e] * gr[a * d + j];
                let kb = &mut k_basis[(cl * d + j) * rr..(cl * d + j + 1) * rr];
                for (col, x) in kb.iter_mut().enumerate() {
                    *x += coef * bd[(v, col)];
                }
                let kr = &mut k_rig[(cl * d + j) * c..(cl * d + j + 1) * c];
                for (col, x) in kr.iter_mut().enumerate() {
                    *x += coef * jh[(v, col)];
                }
            }
        }
    }
    let btlb_sym: Vec<f64> = (0..rr * rr)
        .map(|k| 0.5 * (btlb[(k / rr, k % rr)] + btlb[(k % rr, k / rr)]))
        .collect();
    let bmb: Vec<f64> = (0..rr * rr)
        .map(|k| (0..n).map(|v| bd[(v, k / rr)] * mass[v] * bd[(v, k % rr)]).sum())
        .collect();
    // The lowest mode of the model itself (clustered rotations), in the subspace (its columns
    // are admissible).
    let mut cluster_weight = vec![0.0; n_clusters];
    for (e, &cl) in pre.labels.iter().enumerate() {
        cluster_weight[cl] += weights[e];
    }
    let stiffness = clustered_arap_stiffness(d, rr, &btlb_sym, &k_basis, &cluster_weight);
    let gram = Mat::from_fn(d * rr, d * rr, |p, q| {
        if p / rr == q / rr {
            bmb[(p % rr) * rr + q % rr]
        } else {
            0.0
        }
    });
    let (arap_lambda, coeff) = crate::dynamics::time_integration::lowest_ritz_pair(&gram, &stiffness)?;
    // Laplacian energy of the unit-mass lowest mode: Σ_i c_iᵀ (B̂ᵀL̂B̂) c_i.
    let laplacian_rayleigh: f64 = (0..d)
        .map(|i| {
            let ci = &coeff[i * rr..(i + 1) * rr];
            (0..rr)
                .map(|a| (0..rr).map(|b| ci[a] * btlb_sym[a * rr + b] * ci[b]).sum::<f64>())
                .sum::<f64>()
        })
        .sum();
    stage("lowest vibration mode");
    let ab = a_hat * &bd;
    let bb = bd.transpose() * &bd;
    let nt = rc.n_targets();
    // G_{t,i} B̂, and ‖(JᵀMD)(I_d ⊗ B̂)‖₂ of the stacked rows [I_d ⊗ ÂB̂; (G_{t,0}B̂, …, G_{t,d-1}B̂)].
    let gb = Mat::from_fn(nt * d, rr, |row, a| {
        let (t, i) = (row / d, row % d);
        (0..n).map(|v| rc.blend[(t, i * n + v)] * bd[(v, a)]).sum::<f64>()
    });
    let jmdb_norm = if nt == 0 {
        spectral_norm(&ab)?
    } else {
        let cb = ab.nrows();
        spectral_norm(&Mat::from_fn(d * cb + nt, d * rr, |row, col| {
            let (i, a) = (col / rr, col % rr);
            if row < d * cb {
                if row / cb == i {
                    ab[(row % cb, a)]
                } else {
                    0.0
                }
            } else {
                gb[((row - d * cb) * d + i, a)]
            }
        }))?
    };
    let orth = jmdb_norm / (rc.norm * spectral_norm(&bd)?).max(f64::MIN_POSITIVE);
    stage("reduced matrices");
    let row_major = |m: &Mat<f64>| -> Vec<f64> {
        (0..m.nrows() * m.ncols())
            .map(|i| m[(i / m.ncols(), i % m.ncols())])
            .collect()
    };
    Ok(ReducedModel {
        basis,
        btlb: btlb_sym,
        bmb,
        arap_lambda,
        laplacian_rayleigh,
        k_basis,
        k_rig,
        bmj: row_major(&bmj_m),
        blj: row_major(&blj_m),
        bm1,
        a_b: row_major(&ab),
        b_b: row_major(&bb),
        g_b: row_major(&gb),
        constraint_norm: rc.norm,
        blend_norm: rc.blend_norm,
        n_clusters,
        rr,
        modes: fast.modes,
        eigenvalues: pre.eigenvalues,
        cluster_sizes: pre.cluster_sizes,
        constraint_rows: (pre.constraint_rows, pre.constraint_rank),
        structural_orthogonality: orth,
    })
}

impl FastSolver {
    /// Precomputes the subspace, clusters and reduced matrices, and puts the body at rest in
    /// pose `p0`. Same inputs as [`FullOrderSolver::new`](crate::dynamics::FullOrderSolver::new)
    /// plus the subspace size.
    pub fn new(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        fast: FastParams,
        p0: &[f64],
    ) -> Result<Self> {
        Self::with_sidecar(mesh, rig, momentum_weights, material, params, fast, p0, None)
    }

    /// As [`new`](Self::new), loading the eigenmodes and clusters from the sidecar file when it
    /// was built from exactly these inputs, and (re)writing it otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn with_sidecar(
        mesh: &SimplexMesh,
        rig: LbsRig,
        momentum_weights: &[f64],
        material: &Material,
        params: &SolverParams,
        fast: FastParams,
        p0: &[f64],
        sidecar: Option<&std::path::Path>,
    ) -> Result<Self> {
        validate_solver_inputs(mesh, &rig, momentum_weights, material, params)?;
        let (d, n) = (mesh.dim(), mesh.n_vertices());
        if fast.modes == 0 {
            return Err(OvertoneError::setting(
                "modes",
                0,
                "the fast solver needs at least one skinning eigenmode",
            ));
        }
        if fast.clusters == 0 || fast.clusters > mesh.n_elements() {
            return Err(OvertoneError::setting(
                "clusters",
                fast.clusters,
                format!("must be between 1 and the number of elements ({})", mesh.n_elements()),
            ));
        }
        let mut info = FastPrecompute::default();
        let mut clock = Instant::now();
        let mut stage = |name: &str, info: &mut FastPrecompute| {
            info.stage_ms
                .push((name.to_string(), clock.elapsed().as_secs_f64() * 1e3));
            clock = Instant::now();
        };

        let lame = lame_parameters(material.youngs_modulus, material.poisson_ratio)?;
        let vols = element_volumes(mesh);
        let mass = lumped_mass(mesh, &vols, material.density);
        let jh = rig.extended_jacobian();
        let c = jh.ncols();
        let rc = RigConstraint::new(&rig, &mass, momentum_weights)?;
        let (cb, nt) = (rc.scalar.nrows(), rc.n_targets());
        stage("operators", &mut info);

        let element_stiffness = params.element_stiffness(mesh)?.unwrap_or_default();
        let unit_weights: Vec<f64> = if element_stiffness.is_empty() {
            vols.clone()
        } else {
            vols.iter().zip(&element_stiffness).map(|(v, s)| v * s).collect()
        };
        let key = fast_precompute_key(mesh, &rc.per_coordinate_rows(), rig.deltas(), fast, &element_stiffness);
        let (model, cache_status) = load_or_build(
            sidecar,
            &key,
            |m: &ReducedModel| m.check_shapes(d, n, c, cb, nt).map_err(|e| e.to_string()),
            || {
                build_reduced_model(mesh, &jh, &mass, &rc, &unit_weights, fast, &mut |name| {
                    stage(name, &mut info)
                })
            },
        )?;
        if cache_status == CacheStatus::Loaded {
            stage("reduced model (sidecar)", &mut info);
        }
        info.eigenvalues = model.eigenvalues.clone();
        info.constraint_rows = ConstraintRank {
            kept: model.constraint_rows.1,
            given: model.constraint_rows.0,
        };
        info.cluster_sizes = model.cluster_sizes.clone();
        info.structural_orthogonality = model.structural_orthogonality;
        info.reduced_dofs = d * model.rr;
        info.cache = cache_status;
        let ReducedModel {
            basis,
            mut btlb,
            bmb,
            arap_lambda,
            laplacian_rayleigh,
            mut k_basis,
            mut k_rig,
            bmj,
            mut blj,
            bm1,
            a_b,
            b_b,
            g_b,
            constraint_norm,
            blend_norm,
            n_clusters,
            rr,
            modes,
            ..
        } = model;
        // The lowest mode: ω₁² = μ λ₁ (λ₁ of the linearised ARAP stiffness per unit μ, stored
        // in the model); `frequency` rescales μ so that ω₁ = 2πf.
        let lambda_unit = arap_lambda;
        let mu = match params.frequency {
            Some(f) => (std::f64::consts::TAU * f).powi(2) / lambda_unit,
            None => lame.mu,
        };
        let omega1 = (mu * lambda_unit).sqrt();
        for x in btlb
            .iter_mut()
            .chain(k_basis.iter_mut())
            .chain(k_rig.iter_mut())
            .chain(blj.iter_mut())
        {
            *x *= mu;
        }
        let plan = FramePlan::new(params, Some(omega1));
        let tau = plan.solve_step();
        let damping = Damping::rayleigh_split(params.damping, omega1, mu * laplacian_rayleigh);
        let (ks, h2, dm) = (1.0 + damping.stiffness / tau, tau * tau, damping.mass / tau);
        let sys = Mat::from_fn(rr, rr, |a, b| {
            ks * btlb[a * rr + b] + bmb[a * rr + b] / h2 + dm * bmb[a * rr + b]
        });
        let chol = DenseCholesky::new(&sys)?;
        let cluster_space = ClusterSpace::new_if_cheaper(&k_basis, n_clusters * d, rr, &chol);
        info.substeps = plan.substeps;
        info.lowest_frequency_hz = omega1 / std::f64::consts::TAU;

        let gravity = if params.gravity.is_empty() {
            vec![0.0; d]
        } else {
            params.gravity.clone()
        };
        let n_params = rig.n_params();
        let mut solver = Self {
            dim: d,
            n,
            rr,
            n_rig: c,
            rig,
            basis,
            h: tau,
            iterations: params.iterations,
            gravity,
            rest: params.rest,
            damping,
            predict: plan.integrator != crate::dynamics::Integrator::BackwardEuler,
            btlb,
            bmb,
            rho_l: mu * laplacian_rayleigh,
            omega1,
            chol,
            k_basis,
            k_rig,
            bmj,
            blj,
            bm1,
            a_b,
            b_b,
            g_b,
            constraint_norm,
            blend_norm,
            n_clusters,
            info,
            z: vec![0.0; d * rr],
            zdot: vec![0.0; d * rr],
            p: vec![0.0; d * c],
            pdot: vec![0.0; d * c],
            p_full: vec![0.0; n_params],
            p_ext: vec![0.0; d * c],
            warm: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            warm_rig: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            warm_rig_start: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            frames: FrameStepper::new(plan),
            warm_start: vec![[1.0, 0.0, 0.0, 0.0]; n_clusters],
            r_rig: vec![0.0; n_clusters * d * d],
            mid: vec![0.0; 3 * d * rr + d * c],
            saved: vec![0.0; 2 * d * rr + 2 * d * c + n_params],
            saved_warm: vec![[1.0, 0.0, 0.0, 0.0]; 2 * n_clusters],
            base: vec![0.0; d * rr],
            f_rig: vec![0.0; n_clusters * d * d],
            f0: vec![0.0; n_clusters * d * d],
            fvec: vec![0.0; n_clusters * d * d],
            rvec: vec![0.0; n_clusters * d * d],
            cluster_space,
            coeff: vec![0.0; d * modes * (d + 1)],
            z_prev: vec![0.0; d * rr],
        };
        solver.reset(p0)?;
        Ok(solver)
    }

    /// Changes the damping ratio `ζ` of the lowest mode (≥ 0, dimensionless) from the next step
    /// on, keeping the state: refactors the `r̂ × r̂` system
    /// `(1 + β/τ) μB̂ᵀL̂B̂ + (1/τ² + α/τ) B̂ᵀM̂B̂` with the new Rayleigh pair `(α, β)` (and the
    /// cluster-space operators when they are used). Nothing is refactored when `ζ` is unchanged.
    /// On error the solver is unchanged.
    pub fn set_damping(&mut self, zeta: f64) -> Result<()> {
        if !(zeta.is_finite() && zeta >= 0.0) {
            return Err(OvertoneError::setting("damping", zeta, "must be a finite number >= 0"));
        }
        let damping = Damping::rayleigh_split(zeta, self.omega1, self.rho_l);
        if damping == self.damping {
            return Ok(());
        }
        let (rr, tau) = (self.rr, self.h);
        let (ks, h2, dm) = (1.0 + damping.stiffness / tau, tau * tau, damping.mass / tau);
        let (btlb, bmb) = (&self.btlb, &self.bmb);
        let sys = Mat::from_fn(rr, rr, |a, b| {
            ks * btlb[a * rr + b] + bmb[a * rr + b] / h2 + dm * bmb[a * rr + b]
        });
        let chol = DenseCholesky::new(&sys)?;
        self.cluster_space = ClusterSpace::new_if_cheaper(&self.k_basis, self.n_clusters * self.dim, rr, &chol);
        self.chol = chol;
        self.damping = damping;
        Ok(())
    }

    /// Gives the body its rig's velocity toward pose `p_next`, `dt` seconds of physics time
    /// later: `ṗ = (p_next − p) / dt` (extended rig parameters) with `ż = 0` (no complementary velocity);
    /// `p` and `z` are unchanged. The state of a body that was moving with its rig
    /// (not at rest) when the clip starts or after a cut, so a rig already in motion at its
    /// first frame does not kick the body: at rest, the first step would see the jump from zero
    /// to the rig's velocity as an impulse of acceleration.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf, or `dt` not finite and > 0 (nothing
    /// changes).
    pub fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
        self.rig.check_params(p_next)?;
        crate::dynamics::time_integration::check_frame_length(dt)?;
        self.rig.extended_params_into(p_next, &mut self.pdot);
        for (v, &p) in self.pdot.iter_mut().zip(&self.p) {
            *v = (*v - p) / dt;
        }
        self.zdot.fill(0.0);
        Ok(())
    }

    /// Puts the body at rest in pose `p0`.
    pub fn reset(&mut self, p0: &[f64]) -> Result<()> {
        self.rig.check_params(p0)?;
        self.rig.extended_params_into(p0, &mut self.p);
        self.p_full.copy_from_slice(p0);
        self.pdot.fill(0.0);
        self.z.fill(0.0);
        self.zdot.fill(0.0);
        self.warm.fill([1.0, 0.0, 0.0, 0.0]);
        self.warm_rig.fill([1.0, 0.0, 0.0, 0.0]);
        Ok(())
    }

    /// Advances one step to rig pose `p_next`. Does not allocate.
    pub fn step(&mut self, p_next: &[f64]) -> Result<StepReport> {
        let iterations = self.advance(p_next)?;
        let (residual, relative_residual) = self.constraint_residual();
        Ok(StepReport {
            iterations,
            residual,
            relative_residual,
        })
    }

    /// The step without the residual diagnostic; returns the iterations taken. Does not
    /// allocate.
    ///
    /// Errors: a pose of the wrong size or with NaN/Inf (refused before anything changes);
    /// [`OvertoneError::StepFailed`] when the solve produces a non-finite state. On every error
    /// the state (`z`, `ż`, rig parameters and their velocity, rotation warm starts) is
    /// bit-identical to before the call.
    pub fn advance(&mut self, p_given: &[f64]) -> Result<usize> {
        self.rig.check_params(p_given)?;
        let mut frames = std::mem::take(&mut self.frames);
        let result = frames.advance(self, p_given);
        self.frames = frames;
        result
    }

    /// One backward-Euler solve of length `τ` toward `p_given` (checked by the caller).
    fn solve_substep(&mut self, p_given: &[f64]) -> Result<usize> {
        // The extended parameters p̃ (equal to p without blendshapes); taken out of `self` for
        // the step (no allocation) and put back at the end.
        let mut p_ext = std::mem::take(&mut self.p_ext);
        self.rig.extended_params_into(p_given, &mut p_ext);
        let result = self.advance_extended(&p_ext);
        if result.is_ok() {
            self.p_full.copy_from_slice(p_given);
        }
        self.p_ext = p_ext;
        result
    }

    fn advance_extended(&mut self, p_next: &[f64]) -> Result<usize> {
        let (d, rr, c, h) = (self.dim, self.rr, self.n_rig, self.h);
        let h2 = h * h;
        // Rig part of each cluster's deformation gradient, `f_rig[i][cl·d + j]`.
        let nq = self.n_clusters * d;
        rows_times_coordinates(d, &self.k_rig, nq, c, p_next, None, &mut self.f_rig);
        let rest_rig = self.rest == RestShape::Rig;
        self.warm_rig_start.copy_from_slice(&self.warm_rig);
        if rest_rig {
            // The rig pose's cluster rotations: its elastic force Σ_c K̂_cᵀ(F_c(Jp) − R_c(Jp))
            // is cancelled, so the rig term of the right-hand side is −Σ_c K̂_cᵀ R_c(Jp)
            // instead of −B̂ᵀL̂Ĵ p.
            rotations_into(d, self.n_clusters, &self.f_rig, &mut self.warm_rig, &mut self.r_rig);
        }
        let (dm, ds) = (self.damping.mass / h, self.damping.stiffness / h);
        // Constant part of the right-hand side.
        for i in 0..d {
            let zi = &self.z[i * rr..(i + 1) * rr];
            for a in 0..rr {
                let mut s = (zi[a] + h * self.zdot[i * rr + a]) / h2 + self.bm1[a] * self.gravity[i];
                if ds != 0.0 || dm != 0.0 {
                    // Rayleigh damping of ż: + (α B̂ᵀM̂B̂ + β μB̂ᵀL̂B̂) z_n / τ (B̂ᵀM̂B̂ = I).
                    s += dm * zi[a] + ds * dot(&self.btlb[a * rr..(a + 1) * rr], zi);
                }
                self.base[i * rr + a] = s;
            }
            // The rig's inertia (and, without the rig's rest shape, elasticity) terms, four rows
            // at a time: each row keeps its own running sum in the order of one row at a time.
            let rows = RigRows {
                bmj: &self.bmj,
                blj: &self.blj,
                c,
                p_next: &p_next[i * c..(i + 1) * c],
                p: &self.p[i * c..(i + 1) * c],
                pdot: &self.pdot[i * c..(i + 1) * c],
                h,
                rest_rig,
            };
            let bi = &mut self.base[i * rr..(i + 1) * rr];
            let blocks = rr / 4;
            for b in 0..blocks {
                rows.subtract::<4>(4 * b, (&mut bi[4 * b..4 * b + 4]).try_into().expect("four rows"));
            }
            for a in 4 * blocks..rr {
                rows.subtract::<1>(a, (&mut bi[a..a + 1]).try_into().expect("one row"));
            }
        }
        if rest_rig {
            subtract_transposed_product(d, &self.k_basis, nq, rr, &self.r_rig, &mut self.base);
        }
        self.z_prev.copy_from_slice(&self.z);
        self.warm_start.copy_from_slice(&self.warm);
        if self.predict {
            // Start the iterations from the inertial prediction z + τż (substeps are short, so
            // it is close to the solution and the fixed iteration count lands nearer to it).
            for k in 0..d * rr {
                self.z[k] += h * self.zdot[k];
            }
        }
        // Cluster gradients of the warm start: F_i = F_rig,i + K̂ z_i.
        rows_times_coordinates(d, &self.k_basis, nq, rr, &self.z, Some(&self.f_rig), &mut self.fvec);
        match self.cluster_space.take() {
            Some(cs) => {
                // f0_i = K̂ H⁻¹ base_i, then F_i = F_rig,i + f0_i + P R_i between rotations.
                rows_times_coordinates(d, &cs.kh, nq, rr, &self.base, Some(&self.f_rig), &mut self.f0);
                for it in 0..self.iterations {
                    self.local_step();
                    if it + 1 < self.iterations {
                        rows_times_coordinates(d, &cs.p, nq, nq, &self.rvec, Some(&self.f0), &mut self.fvec);
                    }
                }
                self.global_solve();
                self.cluster_space = Some(cs);
            }
            None => {
                for it in 0..self.iterations {
                    self.local_step();
                    self.global_solve();
                    if it + 1 < self.iterations {
                        rows_times_coordinates(d, &self.k_basis, nq, rr, &self.z, Some(&self.f_rig), &mut self.fvec);
                    }
                }
            }
        }
        if self.z.iter().any(|x| !x.is_finite()) {
            self.z.copy_from_slice(&self.z_prev);
            self.warm.copy_from_slice(&self.warm_start);
            self.warm_rig.copy_from_slice(&self.warm_rig_start);
            return Err(OvertoneError::StepFailed {
                what: "reduced (fast) step of complementary dynamics".into(),
                reason: "the solve produced a non-finite state (the rig pose jumps too far)".into(),
            });
        }
        for k in 0..d * rr {
            self.zdot[k] = (self.z[k] - self.z_prev[k]) / h;
        }
        for k in 0..d * c {
            self.pdot[k] = (p_next[k] - self.p[k]) / h;
            self.p[k] = p_next[k];
        }
        Ok(self.iterations)
    }

    /// One rotation per cluster, closest to the cluster gradient in `fvec` (`fvec[i][c·d + j]`),
    /// written to `rvec` in the same layout.
    fn local_step(&mut self) {
        rotations_into(self.dim, self.n_clusters, &self.fvec, &mut self.warm, &mut self.rvec);
    }

    /// Global step: `z_i = H⁻¹ (base_i + K̂ᵀ R_i)` for each coordinate. In 3D the three
    /// coordinates share each read of a row of `K̂` and of `L` (the same arithmetic per
    /// coordinate, in the same order, as one coordinate at a time).
    fn global_solve(&mut self) {
        let (d, rr) = (self.dim, self.rr);
        let nq = self.n_clusters * d;
        self.z.copy_from_slice(&self.base);
        if d == 3 {
            let (z0, rest) = self.z.split_at_mut(rr);
            let (z1, z2) = rest.split_at_mut(rr);
            let (r0, r1, r2) = (&self.rvec[..nq], &self.rvec[nq..2 * nq], &self.rvec[2 * nq..3 * nq]);
            add_transposed_product3(&self.k_basis, nq, rr, 1.0, [r0, r1, r2], [z0, z1, &mut z2[..rr]]);
            self.chol.solve3_in_place(z0, z1, z2);
            return;
        }
        for i in 0..d {
            let zi = &mut self.z[i * rr..(i + 1) * rr];
            for q in 0..nq {
                let r = self.rvec[i * nq + q];
                for (x, k) in zi.iter_mut().zip(&self.k_basis[q * rr..(q + 1) * rr]) {
                    *x += r * k;
                }
            }
            self.chol.solve_in_place(zi);
        }
    }

    /// `‖G B z‖₂²` (blendshape rows) from the precomputed `G_{t,i} B̂`.
    fn blendshape_product_sq(&self) -> f64 {
        let (d, rr) = (self.dim, self.rr);
        let nt = self.g_b.len() / (d * rr).max(1);
        (0..nt)
            .map(|t| {
                let s: f64 = (0..d)
                    .map(|i| {
                        dot(
                            &self.g_b[(t * d + i) * rr..(t * d + i + 1) * rr],
                            &self.z[i * rr..(i + 1) * rr],
                        )
                    })
                    .sum();
                s * s
            })
            .sum()
    }

    /// `‖B z‖_2²` from the precomputed `B̂ᵀB̂`.
    fn displacement_norm_sq(&self) -> f64 {
        let (d, rr) = (self.dim, self.rr);
        let mut den = 0.0;
        for i in 0..d {
            let zi = &self.z[i * rr..(i + 1) * rr];
            for a in 0..rr {
                den += zi[a] * dot(&self.b_b[a * rr..(a + 1) * rr], zi);
            }
        }
        den
    }

    /// `(‖G B z‖₂, relative to ‖G‖₂ ‖B z‖₂)`: the residual against the blendshape columns alone
    /// (zeros without blendshapes). Does not allocate.
    pub fn blendshape_residual(&self) -> (f64, f64) {
        let abs = self.blendshape_product_sq().sqrt();
        let un = self.displacement_norm_sq().max(0.0).sqrt();
        let rel = if un > 0.0 && self.blend_norm > 0.0 {
            abs / (self.blend_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// `(‖Jᵀ M D B z‖₂, relative to ‖Jᵀ M D‖₂ ‖B z‖₂)` from the precomputed `ÂB̂`, `G_{t,i}B̂`
    /// and `B̂ᵀB̂` (bone and blendshape rows together).
    pub fn constraint_residual(&self) -> (f64, f64) {
        let (d, rr) = (self.dim, self.rr);
        let c = self.a_b.len() / rr.max(1);
        let (mut num, mut den) = (self.blendshape_product_sq(), 0.0);
        for i in 0..d {
            let zi = &self.z[i * rr..(i + 1) * rr];
            for k in 0..c {
                let s = dot(&self.a_b[k * rr..(k + 1) * rr], zi);
                num += s * s;
            }
            for a in 0..rr {
                let s = dot(&self.b_b[a * rr..(a + 1) * rr], zi);
                den += zi[a] * s;
            }
        }
        let (abs, un) = (num.sqrt(), den.max(0.0).sqrt());
        let rel = if un > 0.0 && self.constraint_norm > 0.0 {
            abs / (self.constraint_norm * un)
        } else {
            0.0
        };
        (abs, rel)
    }

    /// Complementary displacement `u_c = B z` added into `out` (`n × d`, row-major).
    pub fn add_displacement(&mut self, out: &mut [f64]) {
        self.basis.field_coefficients(&self.z, &mut self.coeff);
        self.basis.add_reconstruction(&self.coeff, out);
    }

    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.n
    }
    /// Reduced coordinates `z` (coordinate-major, `d × r̂`).
    pub fn reduced_state(&self) -> &[f64] {
        &self.z
    }
    /// Reduced velocities `ż = (z_t − z_{t−1})/h` (coordinate-major, `d × r̂`).
    pub fn reduced_velocity(&self) -> &[f64] {
        &self.zdot
    }
    /// The rig.
    pub fn rig(&self) -> &LbsRig {
        &self.rig
    }
    /// The current rig parameters `p` (bones, then blendshape weights).
    pub fn rig_params(&self) -> &[f64] {
        &self.p_full
    }
    /// Lowest angular frequency `ω₁` of the subspace (rad/s), with the stiffness used.
    pub fn lowest_angular_frequency(&self) -> f64 {
        self.omega1
    }
    /// What the precompute produced.
    pub fn precompute(&self) -> &FastPrecompute {
        &self.info
    }
}

/// The rig terms of one coordinate's right-hand side (see `advance_extended`):
/// `s_a −= Σ_k [B̂ᵀM̂Ĵ]_{ak} q_k / τ²` with `q = p_{n+1} − p_n − τ ṗ_n` (and `s_a −= [B̂ᵀL̂Ĵ]_{ak}
/// p_{n+1,k}` without the rig's rest shape), `c` rig columns.
struct RigRows<'a> {
    /// `B̂ᵀM̂Ĵ` and `B̂ᵀL̂Ĵ`, `r̂ × c` row-major.
    bmj: &'a [f64],
    blj: &'a [f64],
    c: usize,
    /// This coordinate's `p_{n+1}`, `p_n` and `ṗ_n` (`c` each).
    p_next: &'a [f64],
    p: &'a [f64],
    pdot: &'a [f64],
    h: f64,
    rest_rig: bool,
}

impl RigRows<'_> {
    /// Rows `a0..a0 + N` into `s`: `N` independent running sums, each in column order `k`
    /// (the same arithmetic as one row at a time, with `q_k` formed once for the `N` rows).
    #[inline(always)]
    fn subtract<const N: usize>(&self, a0: usize, s: &mut [f64; N]) {
        let (c, h) = (self.c, self.h);
        let h2 = h * h;
        let bmj: [&[f64]; N] = std::array::from_fn(|l| &self.bmj[(a0 + l) * c..(a0 + l + 1) * c]);
        let (p_next, p, pdot) = (&self.p_next[..c], &self.p[..c], &self.pdot[..c]);
        if self.rest_rig {
            for k in 0..c {
                let q = p_next[k] - p[k] - h * pdot[k];
                for l in 0..N {
                    s[l] -= bmj[l][k] * q / h2;
                }
            }
        } else {
            let blj: [&[f64]; N] = std::array::from_fn(|l| &self.blj[(a0 + l) * c..(a0 + l + 1) * c]);
            for k in 0..c {
                let pk = p_next[k];
                let q = pk - p[k] - h * pdot[k];
                for l in 0..N {
                    s[l] -= bmj[l][k] * q / h2;
                    s[l] -= blj[l][k] * pk;
                }
            }
        }
    }
}

/// `out[i·m + q] = (add[i·m + q] +) M_q · x_i` for coordinates `i < d` and rows `q < m`: the
/// `m × n` row-major matrix `M` applied to the `d` coordinate blocks of `x` (`d × n`,
/// coordinate-major), i.e. `out = (add +) (M X)ᵀ` with `X` the `n × d` matrix of coordinates.
/// Every output is one [`dot`]; in 3D the three coordinates share each read of a row of `M`
/// ([`dot3`], bit-identical to three [`dot`]s). Does not allocate.
fn rows_times_coordinates(
    d: usize,
    m_rows: &[f64],
    m: usize,
    n: usize,
    x: &[f64],
    add: Option<&[f64]>,
    out: &mut [f64],
) {
    if d == 3 {
        let (x0, x1, x2) = (&x[..n], &x[n..2 * n], &x[2 * n..3 * n]);
        for q in 0..m {
            let v = dot3(&m_rows[q * n..(q + 1) * n], x0, x1, x2);
            for (i, vi) in v.into_iter().enumerate() {
                out[i * m + q] = match add {
                    Some(a) => a[i * m + q] + vi,
                    None => vi,
                };
            }
        }
        return;
    }
    for i in 0..d {
        let xi = &x[i * n..(i + 1) * n];
        for q in 0..m {
            let v = dot(&m_rows[q * n..(q + 1) * n], xi);
            out[i * m + q] = match add {
                Some(a) => a[i * m + q] + v,
                None => v,
            };
        }
    }
}

/// `y_i ← y_i − Mᵀ w_i` for coordinates `i < d`: `M` is `m × n` row-major, `w` is `d × m` and
/// `y` is `d × n` (coordinate-major); accumulated row by row of `M`, so each entry of `y` gets
/// its `m` subtractions in row order (in 3D the coordinates share each read of a row, with the
/// same arithmetic per coordinate). Does not allocate.
fn subtract_transposed_product(d: usize, m_rows: &[f64], m: usize, n: usize, w: &[f64], y: &mut [f64]) {
    if d == 3 {
        let (y0, rest) = y.split_at_mut(n);
        let (y1, y2) = rest.split_at_mut(n);
        // x − r·k == x + (−r)·k exactly.
        let (w0, w1, w2) = (&w[..m], &w[m..2 * m], &w[2 * m..3 * m]);
        add_transposed_product3(m_rows, m, n, -1.0, [w0, w1, w2], [y0, y1, &mut y2[..n]]);
        return;
    }
    for i in 0..d {
        let yi = &mut y[i * n..(i + 1) * n];
        for q in 0..m {
            let r = w[i * m + q];
            for (x, k) in yi.iter_mut().zip(&m_rows[q * n..(q + 1) * n]) {
                *x -= r * k;
            }
        }
    }
}

/// One rotation per cluster, closest to the cluster gradient in `f` (`f[i·n_c d + c·d + j]`),
/// written to `r` in the same layout; `warm` holds the 3D warm starts. In 3D four clusters at a
/// time share one [`closest_rotation_3d_x4`] (bit-identical to one at a time).
///
/// On x86-64 with AVX the same code is compiled for 256-bit registers (chosen at run time): the
/// four-cluster batches are laid out as structure of arrays, one register per entry; Rust does
/// not reassociate or fuse floating-point operations, so the bits are the same either way.
fn rotations_into(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the processor supports AVX (checked just above).
        return unsafe { rotations_into_avx(d, n_clusters, f, warm, r) };
    }
    rotations_into_portable(d, n_clusters, f, warm, r)
}

/// [`rotations_into_portable`] compiled with AVX enabled.
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn rotations_into_avx(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    rotations_into_portable(d, n_clusters, f, warm, r)
}

/// The body of [`rotations_into`].
#[inline(always)]
fn rotations_into_portable(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    let nq = n_clusters * d;
    let mut first = 0;
    if d == 3 {
        for c4 in 0..n_clusters / 4 {
            let cl0 = 4 * c4;
            let fc: [[f64; 9]; 4] =
                std::array::from_fn(|l| std::array::from_fn(|k| f[(k / 3) * nq + (cl0 + l) * 3 + k % 3]));
            let mut w4: [[f64; 4]; 4] = std::array::from_fn(|l| warm[cl0 + l]);
            let mut r4 = [[0.0; 9]; 4];
            closest_rotation_3d_x4(&fc, &mut w4, &mut r4, CLUSTER_ROTATION_ACCURACY);
            for l in 0..4 {
                warm[cl0 + l] = w4[l];
                for k in 0..9 {
                    r[(k / 3) * nq + (cl0 + l) * 3 + k % 3] = r4[l][k];
                }
            }
        }
        first = 4 * (n_clusters / 4);
    }
    for cl in first..n_clusters {
        let mut fc = [0.0; 9];
        for i in 0..d {
            for j in 0..d {
                fc[i * d + j] = f[i * nq + cl * d + j];
            }
        }
        let mut rc = [0.0; 9];
        if d == 2 {
            closest_rotation_2d(&fc[..4], &mut rc[..4]);
        } else {
            closest_rotation_3d(&fc, &mut warm[cl], &mut rc, CLUSTER_ROTATION_ACCURACY);
        }
        for i in 0..d {
            for j in 0..d {
                r[i * nq + cl * d + j] = rc[i * d + j];
            }
        }
    }
}

impl SubstepSolver for FastSolver {
    fn substep_rig(&self) -> &LbsRig {
        &self.rig
    }
    fn current_params(&self) -> &[f64] {
        &self.p_full
    }
    fn substep(&mut self, p: &[f64]) -> Result<usize> {
        self.solve_substep(p)
    }
    fn begin_midpoint(&mut self) {
        let n = 2 * self.z.len() + self.pdot.len();
        save_fields(&mut self.mid[..n], &[&self.z, &self.zdot, &self.pdot]);
    }
    fn finish_midpoint(&mut self, p_end: &[f64]) {
        let (zn, pn) = (self.z.len(), self.pdot.len());
        extrapolate_from(&self.mid[..zn], &mut self.z);
        extrapolate_from(&self.mid[zn..2 * zn], &mut self.zdot);
        extrapolate_from(&self.mid[2 * zn..2 * zn + pn], &mut self.pdot);
        self.rig.extended_params_into(p_end, &mut self.p);
        self.p_full.copy_from_slice(p_end);
    }
    fn save_frame(&mut self) {
        save_fields(
            &mut self.saved,
            &[&self.z, &self.zdot, &self.p, &self.pdot, &self.p_full],
        );
        let nc = self.n_clusters;
        self.saved_warm[..nc].copy_from_slice(&self.warm);
        self.saved_warm[nc..].copy_from_slice(&self.warm_rig);
    }
    fn restore_frame(&mut self) {
        restore_fields(
            &self.saved,
            &mut [
                &mut self.z,
                &mut self.zdot,
                &mut self.p,
                &mut self.pdot,
                &mut self.p_full,
            ],
        );
        let nc = self.n_clusters;
        self.warm.copy_from_slice(&self.saved_warm[..nc]);
        self.warm_rig.copy_from_slice(&self.saved_warm[nc..]);
    }
}

/// The local/global iteration rewritten on cluster gradients: with `P = K̂ H⁻¹ K̂ᵀ` and
/// `K̂H⁻¹` precomputed, the gradients after a global step are `F = F_rig + K̂H⁻¹ base + P R`, so
/// intermediate iterations never form `z`; one solve after the last local step recovers it.
/// Identical in exact arithmetic; used when `(n_c d)² < 2 n_c d r̂ + r̂²` (few clusters, as in
/// the 2D defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ClusterSpace {
    /// `K̂ H⁻¹`, `n_c d × r̂` row-major.
    kh: Vec<f64>,
    /// `P`, `n_c d × n_c d` row-major.
    p: Vec<f64>,
}

impl ClusterSpace {
    fn new_if_cheaper(k: &[f64], nq: usize, rr: usize, chol: &DenseCholesky) -> Option<Self> {
        if nq * nq >= 2 * nq * rr + rr * rr {
            return None;
        }
        let mut kh = k.to_vec();
        for q in 0..nq {
            chol.solve_in_place(&mut kh[q * rr..(q + 1) * rr]);
        }
        let mut p = vec![0.0; nq * nq];
        for a in 0..nq {
            for b in 0..nq {
                p[a * nq + b] = dot(&kh[a * rr..(a + 1) * rr], &k[b * rr..(b + 1) * rr]);
            }
        }
        Some(Self { kh, p })
    }
}

/// A dense Cholesky factor `H = L Lᵀ` stored for contiguous forward and backward substitution.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct DenseCholesky {
    n: usize,
    /// `L`, row-major (row `i` holds `L[i, ..i]` then the diagonal).
    lower: Vec<f64>,
    /// `Lᵀ`, row-major (row `i` holds `L[i+1.., i]` after the diagonal).
    upper: Vec<f64>,
    inv_diag: Vec<f64>,
}

impl DenseCholesky {
    fn new(h: &Mat<f64>) -> Result<Self> {
        let n = h.nrows();
        let llt = h.llt(Side::Lower).map_err(|e| OvertoneError::Factorization {
            what: "reduced system matrix".into(),
            reason: format!("{e:?}; the subspace stiffness is not positive definite"),
        })?;
        let l = llt.L();
        let lower = (0..n * n)
            .map(|k| if k % n <= k / n { l[(k / n, k % n)] } else { 0.0 })
            .collect();
        let upper = (0..n * n)
            .map(|k| if k % n >= k / n { l[(k % n, k / n)] } else { 0.0 })
            .collect();
        let inv_diag = (0..n).map(|i| 1.0 / l[(i, i)]).collect();
        Ok(Self {
            n,
            lower,
            upper,
            inv_diag,
        })
    }

    /// `bᵢ ← H⁻¹ bᵢ` for three right-hand sides in place, sharing each read of a row of `L`
    /// and `Lᵀ`; each `bᵢ` gets exactly [`solve_in_place`](Self::solve_in_place)'s arithmetic.
    /// Does not allocate.
    fn solve3_in_place(&self, b0: &mut [f64], b1: &mut [f64], b2: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot3(&self.lower[i * n..i * n + i], &b0[..i], &b1[..i], &b2[..i]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
            b2[i] = (b2[i] - s[2]) * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let u = &self.upper[i * n + i + 1..(i + 1) * n];
            let s = dot3(u, &b0[i + 1..n], &b1[i + 1..n], &b2[i + 1..n]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
            b2[i] = (b2[i] - s[2]) * self.inv_diag[i];
        }
    }

    /// `b ← H⁻¹ b` in place. Does not allocate.
    fn solve_in_place(&self, b: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot(&self.lower[i * n..i * n + i], &b[..i]);
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let s = dot(&self.upper[i * n + i + 1..(i + 1) * n], &b[i + 1..]);
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
    }
}
