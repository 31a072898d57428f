//! The fast solver's precomputed model (Benchekroun et al. 2023): the reduced space's size
//! ([`FastParams`]), the [`ReducedModel`] stored in the sidecar (skinning basis, clustered
//! operators, lowest mode per unit shear modulus), how it is built or loaded, and the report of
//! what the precompute produced ([`FastPrecompute`]).

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;

use crate::cache::{load_or_build, CacheStatus};
use crate::dynamics::fast::{build_fast_precompute, fast_precompute_key, SkinningBasis};
use crate::dynamics::modal_damping::REDUCED_DAMPED_MODES;
use crate::dynamics::{ConstraintRank, Material, SolverParams};
use crate::error::{NumericalError, OvertoneError, Result};
use crate::fem::{lame_parameters, lumped_mass, scalar_stiffness, DeformationJacobian, Lame};
use crate::mesh::SimplexMesh;
use crate::rig::{spectral_norm, LbsRig, RigConstraint};
use serde::{Deserialize, Serialize};

/// A `modes` asking a character's body for its automatic count ([`FastParams::resolved`]).
pub const AUTO_MODES: usize = 0;
/// The automatic count of a small body ([`FastParams::resolved`]).
pub const SMALL_BODY_MODES: usize = 64;
/// A body whose automatic lattice has at most this many tetrahedra is small: its eigen solve
/// for [`SMALL_BODY_MODES`] modes takes a few seconds (the tests' tube, 23k tetrahedra at 51
/// cells: 4.5 s) and each step about a millisecond. The test characters' automatic lattices have
/// 65k-119k tetrahedra.
pub(crate) const SMALL_BODY_TETS: usize = 40_000;

/// The fast solver's controls: the size of the reduced space and its local/global iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastParams {
    /// Skinning eigenmodes `k` (weight fields); the subspace has `k·d(d+1)` coordinates.
    /// Defaults: 10 in 2D (the seed's), 16 in 3D (the paper code's); [`AUTO_MODES`] lets a
    /// character's body choose ([`FastParams::resolved`]).
    pub modes: usize,
    /// Rotation clusters; default 20 in 2D, 100 in 3D. Must not exceed the element count.
    pub clusters: usize,
    /// Local/global iterations per solve (clustered rotations, then one reduced linear solve),
    /// `≥ 1`: exactly this many with backward Euler (the seed's scheme), at most this many
    /// with the midpoint rule, which stops once they converge. Default 10 (the seed's); not
    /// part of the precompute.
    pub iterations: usize,
}

impl FastParams {
    /// The defaults for dimension `dim`.
    pub fn default_for(dim: usize) -> Self {
        if dim == 2 {
            Self {
                modes: 10,
                clusters: 20,
                iterations: 10,
            }
        } else {
            Self {
                modes: 16,
                clusters: 100,
                iterations: 10,
            }
        }
    }

    /// The size for a body whose automatic lattice has `automatic_tets` tetrahedra: an
    /// [`AUTO_MODES`] count becomes [`SMALL_BODY_MODES`] on a small body (at most
    /// [`SMALL_BODY_TETS`]) and the 3D default (16) otherwise; any other count is kept.
    ///
    /// Why: the rig takes every variation along a bone, so the lowest rig-orthogonal modes are
    /// fields across the body's cross-sections. On a long body of uniform thickness (a tail, a
    /// tentacle, the tests' tube) they form a dense band (the 16th eigenvalue within 1.5 times
    /// the first) whose lowest members the leak barely drives, and less as the lattice refines:
    /// with 16 modes the tube's peak fell from 3.9 % of the diagonal at 39 cells to 1.3 % at 78,
    /// with 64 it stays at 2.9-3.8 % from 38 cells on (51 vs 77 cells: 1.00, per frame 0.08). On
    /// the characters 64 modes move the motion by 5 % (CesiumMan) for a 4x longer eigen solve,
    /// so large bodies keep 16. The count depends on the automatic lattice, not on the one used,
    /// so a finer lattice of the same body keeps it.
    pub fn resolved(self, automatic_tets: usize) -> Self {
        if self.modes != AUTO_MODES {
            return self;
        }
        Self {
            modes: if automatic_tets <= SMALL_BODY_TETS {
                SMALL_BODY_MODES
            } else {
                Self::default_for(3).modes
            },
            ..self
        }
    }

    /// Refuses no eigenmode, and a cluster count outside `1..=` the mesh's element count.
    pub(super) fn check(self, mesh: &SimplexMesh) -> Result<()> {
        if self.modes == 0 {
            return Err(OvertoneError::setting(
                "modes",
                0,
                "the fast solver needs at least one skinning eigenmode",
            ));
        }
        if self.iterations == 0 {
            return Err(OvertoneError::setting(
                "iterations",
                0,
                "at least one local/global iteration is needed",
            ));
        }
        if self.clusters == 0 || self.clusters > mesh.n_elements() {
            return Err(OvertoneError::setting(
                "clusters",
                self.clusters,
                format!("must be between 1 and the number of elements ({})", mesh.n_elements()),
            ));
        }
        Ok(())
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

impl FastPrecompute {
    /// The report of `model`, obtained as `cache` says, with the precompute's stage timings;
    /// the time plan's figures (`substeps`, `lowest_frequency_hz`) are left at zero.
    pub(super) fn from_model(model: &ReducedModel, cache: CacheStatus, stage_ms: Vec<(String, f64)>) -> Self {
        Self {
            eigenvalues: model.eigenvalues.clone(),
            cluster_sizes: model.cluster_sizes.clone(),
            structural_orthogonality: model.structural_orthogonality,
            constraint_rows: ConstraintRank {
                kept: model.constraint_rows.1,
                given: model.constraint_rows.0,
            },
            reduced_dofs: model.dim() * model.rr,
            stage_ms,
            cache,
            substeps: 0,
            lowest_frequency_hz: 0.0,
        }
    }
}

/// The body's operators the reduced model is built from (and the solver's stiffness `μ`).
pub(super) struct FastOperators {
    pub(super) lame: Lame,
    pub(super) vols: Vec<f64>,
    pub(super) mass: Vec<f64>,
    /// The leak field `d` (one value per vertex).
    pub(super) momentum_weights: Vec<f64>,
}

impl FastOperators {
    /// The element volumes are the [effective](SolverParams::effective_volumes) ones: scaled
    /// by an embedding lattice's material shares (`params.fill`) when it has them. The rig's
    /// Jacobian and constraint (dense, `n × c`) are formed only when the model is built, not
    /// when it is loaded from a sidecar.
    pub(super) fn new(
        mesh: &SimplexMesh,
        material: &Material,
        params: &SolverParams,
        momentum_weights: &[f64],
    ) -> Result<Self> {
        let lame = lame_parameters(material.youngs_modulus, material.poisson_ratio)?;
        let vols = params.effective_volumes(mesh)?;
        let mass = lumped_mass(mesh, &vols, material.density);
        Ok(Self {
            lame,
            vols,
            mass,
            momentum_weights: momentum_weights.to_vec(),
        })
    }
}

/// The sidecar record kind of the fast solver's reduced model.
pub const FAST_PRECOMPUTE_KIND: &str = "fast-precompute";

impl ReducedModel {
    /// The model per unit shear modulus: read from `sidecar` when it was built from exactly
    /// these inputs and fits the body, built (and the sidecar (re)written) otherwise. `stage`
    /// is called after each stage with its name.
    pub(super) fn load_or_build(
        mesh: &SimplexMesh,
        rig: &LbsRig,
        ops: &FastOperators,
        params: &SolverParams,
        fast: FastParams,
        sidecar: Option<&std::path::Path>,
        stage: &mut dyn FnMut(&str),
    ) -> Result<(Self, CacheStatus)> {
        let (d, n) = (mesh.dim(), mesh.n_vertices());
        let FastOperators {
            vols,
            mass,
            momentum_weights,
            ..
        } = ops;
        let (c, cb, nt) = (rig.n_extended_scalar_params(), rig.n_scalar_params(), rig.n_targets());
        let element_stiffness = params.element_stiffness(mesh)?.unwrap_or_default();
        let unit_weights: Vec<f64> = if element_stiffness.is_empty() {
            vols.clone()
        } else {
            vols.iter().zip(&element_stiffness).map(|(v, s)| v * s).collect()
        };
        let momentum_mass: Vec<f64> = mass.iter().zip(momentum_weights).map(|(m, w)| m * w).collect();
        let key = fast_precompute_key(mesh, rig, mass, &momentum_mass, fast, &element_stiffness, &params.fill);
        let (model, cache_status) = load_or_build(
            sidecar,
            FAST_PRECOMPUTE_KIND,
            &key,
            |m: &ReducedModel| m.check_shapes(d, n, c, cb, nt).map_err(|e| e.to_string()),
            || {
                let jh = rig.extended_jacobian();
                let rc = RigConstraint::new(rig, mass, momentum_weights)?;
                build_reduced_model(mesh, &jh, mass, vols, &rc, &unit_weights, fast, stage)
            },
        )?;
        if cache_status == CacheStatus::Loaded {
            stage("reduced model (sidecar)");
        }
        Ok((model, cache_status))
    }
}

/// Everything the fast solver precomputes, stored in the sidecar: the skinning basis, the
/// clustered operators, the modes the damping reads and the report figures (the reduced system is
/// factored when the solver is built, for its own shear modulus, step and damping).
///
/// The fields (their names, order and types) are the sidecar's bincode payload: changing any
/// of them needs a new sidecar format version. Stored per unit shear modulus; the solver keeps
/// its model scaled by `μ` ([`ReducedModel::scale_by_shear_modulus`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReducedModel {
    pub(super) basis: SkinningBasis,
    /// `B̂ᵀL̂B̂` per unit shear modulus (`r̂ × r̂`, row-major, symmetrised); `μ B̂ᵀL̂B̂` once
    /// scaled, for the damping force.
    pub(super) btlb: Vec<f64>,
    /// `B̂ᵀM̂B̂` (`r̂ × r̂`, row-major; the identity up to round-off), kept to refactor the
    /// system when the damping changes.
    pub(super) bmb: Vec<f64>,
    /// `ω₁²` per unit shear modulus: the lowest vibrating eigenvalue of the model's own
    /// linearised stiffness in the subspace ([`clustered_arap_stiffness`]).
    pub(super) arap_lambda: f64,
    /// The model's lowest vibrating modes, for the damping (see `modal_damping`): eigenvalues
    /// `ω_k²` and Laplacian energies `ρ_k = Σ_i φ_k,iᵀ(B̂ᵀL̂B̂)φ_k,i` per unit shear modulus,
    /// ascending (`mode_lambda[0] = arap_lambda`), and the shapes `φ_k` on the reduced
    /// coordinates (`K × d·r̂`, row `k`, coordinate-major, `φ_kᵀ(I_d ⊗ B̂ᵀM̂B̂)φ_k = 1`).
    pub(super) mode_lambda: Vec<f64>,
    pub(super) mode_rho: Vec<f64>,
    pub(super) mode_shapes: Vec<f64>,
    /// Per cluster `K̂_c` (`d × r̂`, row-major), concatenated (scaled by `μ`).
    pub(super) k_basis: Vec<f64>,
    /// Per cluster `K̂ᴶ_c` (`d × c`), concatenated (scaled by `μ`).
    pub(super) k_rig: Vec<f64>,
    /// `B̂ᵀM̂Ĵ` (`r̂ × c`), `B̂ᵀL̂Ĵ` (`r̂ × c`, scaled by `μ`), row-major.
    pub(super) bmj: Vec<f64>,
    pub(super) blj: Vec<f64>,
    /// `B̂ᵀM̂1` (`r̂`).
    pub(super) bm1: Vec<f64>,
    /// `ÂB̂` (`c × r̂`) and `B̂ᵀB̂` (`r̂ × r̂`), for the residual.
    pub(super) a_b: Vec<f64>,
    pub(super) b_b: Vec<f64>,
    /// `G_{t,i} B̂` (`T·d × r̂`, row `t·d + i`), for the blendshape residual.
    pub(super) g_b: Vec<f64>,
    pub(super) constraint_norm: f64,
    pub(super) blend_norm: f64,
    pub(super) n_clusters: usize,
    pub(super) rr: usize,
    pub(super) modes: usize,
    pub(super) eigenvalues: Vec<f64>,
    pub(super) cluster_sizes: Vec<usize>,
    pub(super) constraint_rows: (usize, usize),
    pub(super) structural_orthogonality: f64,
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
        let k = self.mode_lambda.len();
        len("vibration mode eigenvalues", &self.mode_lambda, &[k])?;
        len("vibration mode energies", &self.mode_rho, &[k])?;
        len("vibration mode shapes", &self.mode_shapes, &[k, d, rr])?;
        if k == 0 || self.mode_lambda.iter().chain(&self.mode_rho).any(|&x| !(x >= 0.0)) {
            return Err(format!(
                "{k} vibration modes, or a negative eigenvalue or energy among them"
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

    /// Multiplies the stiffness operators `B̂ᵀL̂B̂`, `K̂_c`, `K̂ᴶ_c` and `B̂ᵀL̂Ĵ` (stored per unit
    /// shear modulus) by `mu`, in place, in that order.
    pub(crate) fn scale_by_shear_modulus(&mut self, mu: f64) {
        for x in self
            .btlb
            .iter_mut()
            .chain(self.k_basis.iter_mut())
            .chain(self.k_rig.iter_mut())
            .chain(self.blj.iter_mut())
        {
            *x *= mu;
        }
    }

    /// `W_c = Σ_{e∈c} w_e` per cluster (`w_e` the element's stiffness weight `μ vol_e s_e`, in
    /// the model's current units), read off `K̂ᴶ` at the bind pose: with every bone the
    /// identity, `F_c(J p) = Σ_{e∈c} w_e I = W_c I` (the mean of its diagonal is taken).
    /// `n_bones` bones, each a block of `d + 1` parameters per coordinate.
    pub(super) fn cluster_weights(&self, n_bones: usize) -> Vec<f64> {
        let (d, nc) = (self.dim(), self.n_clusters);
        let c = self.k_rig.len() / (nc * d).max(1);
        (0..nc)
            .map(|cl| {
                (0..d)
                    .map(|i| {
                        let row = &self.k_rig[(cl * d + i) * c..(cl * d + i + 1) * c];
                        (0..n_bones).map(|b| row[b * (d + 1) + i]).sum::<f64>()
                    })
                    .sum::<f64>()
                    / d as f64
            })
            .collect()
    }

    /// Spatial dimension `d`.
    pub(super) fn dim(&self) -> usize {
        self.basis.dim()
    }

    /// Number of vertices `n`.
    pub(super) fn n_vertices(&self) -> usize {
        self.basis.n_vertices()
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
/// modulus: `vols` are the effective element volumes (scaled by a lattice's material shares),
/// `weights[e] = vols[e] · s_e` (`s_e` the element's stiffness multiplier); the eigenmodes are
/// those of that material. `stage` is called after each stage with its name.
fn build_reduced_model(
    mesh: &SimplexMesh,
    jh: &Mat<f64>,
    mass: &[f64],
    vols: &[f64],
    rc: &RigConstraint,
    weights: &[f64],
    fast: FastParams,
    stage: &mut dyn FnMut(&str),
) -> Result<ReducedModel> {
    let (d, n, c) = (mesh.dim(), mesh.n_vertices(), jh.ncols());
    let a_hat = &rc.scalar;
    // What does not depend on the clusters is built while they are cut: the subspace basis
    // and its products with the rest operators.
    let (pre, besides) = build_fast_precompute(mesh, &rc.per_coordinate_rows(), fast, weights, vols, |w| {
        let basis = SkinningBasis::new(w, mesh.vertices(), d, mass)?;
        let rr = basis.reduced_dim();
        let bd = basis.dense();
        let g = DeformationJacobian::new(mesh);
        let l_hat: SparseColMat<usize, f64> = scalar_stiffness(&g, weights)?;
        // L̂ is symmetric, so B̂ᵀL̂Ĵ = (L̂B̂)ᵀĴ reuses the one sparse product.
        let lb = &l_hat * &bd;
        let btlb = bd.transpose() * &lb;
        let blj_m = lb.transpose() * jh;
        let mj = Mat::from_fn(n, c, |v, k| mass[v] * jh[(v, k)]);
        let bmj_m = bd.transpose() * &mj;
        let bm1: Vec<f64> = (0..rr).map(|a| (0..n).map(|v| bd[(v, a)] * mass[v]).sum()).collect();
        let mb = Mat::from_fn(n, rr, |v, a| mass[v] * bd[(v, a)]);
        let bmb_m = bd.transpose() * &mb;
        let bmb: Vec<f64> = (0..rr * rr)
            .map(|k| 0.5 * (bmb_m[(k / rr, k % rr)] + bmb_m[(k % rr, k / rr)]))
            .collect();
        Ok::<_, OvertoneError>((basis, bd, g, btlb, blj_m, bmj_m, bm1, bmb))
    })?;
    let (basis, bd, g, btlb, blj_m, bmj_m, bm1, bmb) = besides?;
    let rr = basis.reduced_dim();
    stage("skinning eigenmodes and clusters");
    let n_clusters = pre.cluster_sizes.len();
    // K̂ = G_c B̂ and K̂ᴶ = G_c Ĵ with the sparse clustered gradient operator
    // G_c[(c·d + j), v] = Σ_{e∈c, v∈e} w_e ∂φ_v/∂x_j (each cluster touches only its vertices).
    let mut gc_triplets = Vec::with_capacity(mesh.n_elements() * (d + 1) * d);
    for e in 0..mesh.n_elements() {
        let cl = pre.labels[e];
        let gr = g.gradients(e);
        for (a, &v) in mesh.element(e).iter().enumerate() {
            for j in 0..d {
                gc_triplets.push(Triplet::new(cl * d + j, v, weights[e] * gr[a * d + j]));
            }
        }
    }
    let gc = SparseColMat::<usize, f64>::try_new_from_triplets(n_clusters * d, n, &gc_triplets).map_err(|e| {
        NumericalError::Factorization {
            matrix: "clustered gradient operator".into(),
            reason: format!("{e:?}"),
        }
    })?;
    let row_major = |m: &Mat<f64>| -> Vec<f64> {
        (0..m.nrows() * m.ncols())
            .map(|i| m[(i / m.ncols(), i % m.ncols())])
            .collect()
    };
    let k_basis = row_major(&(&gc * &bd));
    let k_rig = row_major(&(&gc * jh));
    let btlb_sym: Vec<f64> = (0..rr * rr)
        .map(|k| 0.5 * (btlb[(k / rr, k % rr)] + btlb[(k % rr, k / rr)]))
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
    let pairs = crate::dynamics::time_integration::lowest_ritz_pairs(&gram, &stiffness, REDUCED_DAMPED_MODES)?;
    let arap_lambda = pairs[0].0;
    // Per mode: λ_k, ρ_k = Σ_i c_iᵀ (B̂ᵀL̂B̂) c_i of the unit-mass mode, and the shape.
    let mode_lambda: Vec<f64> = pairs.iter().map(|(lambda, _)| lambda.max(0.0)).collect();
    let mode_rho: Vec<f64> = pairs
        .iter()
        .map(|(_, coeff)| {
            (0..d)
                .map(|i| {
                    let ci = &coeff[i * rr..(i + 1) * rr];
                    (0..rr)
                        .map(|a| (0..rr).map(|b| ci[a] * btlb_sym[a * rr + b] * ci[b]).sum::<f64>())
                        .sum::<f64>()
                })
                .sum::<f64>()
                .max(0.0)
        })
        .collect();
    let mode_shapes: Vec<f64> = pairs.iter().flat_map(|(_, coeff)| coeff.iter().copied()).collect();
    stage("clustered operators and lowest vibration mode");
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
    Ok(ReducedModel {
        basis,
        btlb: btlb_sym,
        bmb,
        arap_lambda,
        mode_lambda,
        mode_rho,
        mode_shapes,
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
        modes: pre.modes,
        eigenvalues: pre.eigenvalues,
        cluster_sizes: pre.cluster_sizes,
        constraint_rows: (pre.constraint_rows, pre.constraint_rank),
        structural_orthogonality: orth,
    })
}
