//! Shape-matching dynamics over overlapping regions, with an optional example manifold
//! (Koyama et al. 2013, §4.1-4.3).

use rayon::prelude::*;

use crate::error::{InputError, NumericalError, OvertoneError, Result};
use crate::math::polar::{closest_rotation_3d, closest_rotation_3d_x4};
use crate::shape_matching::rigid_motion::damp_non_rigid_velocity;
use crate::shape_matching::stretch::{det3, inverse3, mul3, polar_stretch_3d, stretch_matrix_3d, stretch_of_3d};
use crate::shape_matching::{ExampleManifold, ManifoldScope, Regions, ShapeMatchingParams};

/// Accuracy (radians) of the per-region rotations: far below what one explicit step resolves.
const ROTATION_ACCURACY: f64 = 1e-10;
/// A region's rest moment matrix `Σ m q qᵀ` with smallest/largest eigenvalue below this is
/// refused as degenerate (flat or collinear rest particles).
pub(crate) const REGION_CONDITION_LIMIT: f64 = 1e-6;
/// An example whose region map `A` has `det A / (‖A‖_F/√3)³` below this collapses or inverts the
/// region and is refused.
pub(crate) const EXAMPLE_VOLUME_LIMIT: f64 = 1e-3;
/// Region count from which the per-region work runs on several threads.
pub(crate) const PARALLEL_MIN_REGIONS: usize = 8192;
/// Regions (or particles) per parallel task: a multiple of 4 (see `update_regions`).
const PARALLEL_CHUNK: usize = 64;

/// What the goal of a region is built from when the body has examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExampleGoal {
    /// The seed's eq. (3): `g_{r,i} = R_r S*_r qᵢ + c_r`, the rest shape of the region stretched
    /// by the projected stretch. Exact for examples that deform every region affinely; for
    /// others (a twist bends a region quadratically) the example is only near an equilibrium.
    #[default]
    Stretch,
    /// Our extension: each example's own region shape with its rotation removed,
    /// `eʲ_{r,i} = (Rʲ_r)ᵀ(xʲᵢ − cʲ_r)`, replaces `Sʲ_r qᵢ`:
    /// `g_{r,i} = R_r (qᵢ + β Σ_j w_j (eʲ_{r,i} − qᵢ)) + c_r` with the same weights (eq. 7).
    /// Identical to `Stretch` for affine examples; makes every example pose an exact
    /// equilibrium at `β = 1`.
    Shape,
}

/// Per-region state and results of the last step.
#[derive(Clone, Copy, Debug)]
struct RegionState {
    /// Warm start of the rotation (unit quaternion); after a step, the step's rotation.
    warm: [f64; 4],
    /// The rotation of the step before (unit quaternion), for the extrapolated warm start.
    prev: [f64; 4],
    /// Rotation `R_r` (row-major).
    rot: [f64; 9],
    /// Stretch vector of `S_r` (examples only).
    stretch: [f64; 6],
    /// Current centroid `c_r`.
    centre: [f64; 3],
    /// The goal map `R_r S*_r` (or `R_r`), row-major.
    goal_map: [f64; 9],
    /// The region's raw weights (per-region manifold with at most 16 examples).
    weights_for_shape: [f64; 16],
}

/// Shape matching (Müller et al. 2005) over overlapping regions, as in the seed's §4.1.
///
/// Per step, for every region `r` with members `i` (rest positions `x⁰ᵢ`, current `xᵢ`):
///
/// * masses `m̃ᵢ = mᵢ / nᵢ`, `nᵢ` the number of regions particle `i` belongs to (FastLSM, the
///   seed's reference [10]), so that the regions together weigh what the body weighs;
/// * centroids `c⁰_r`, `c_r` (mass-weighted), `pᵢ = xᵢ − c_r`, `qᵢ = x⁰ᵢ − c⁰_r`;
/// * eq. (1): `A_r = (Σ m̃ p qᵀ)(Σ m̃ q qᵀ)⁻¹`, polar `A_r = R_r S_r`;
/// * goals `g_{r,i} = R_r S*_r qᵢ + c_r` (eq. 3) with `S*_r` the projection of `S_r` on the
///   example manifold, or without examples `g_{r,i} = R_r qᵢ + c_r` (eq. 2), where `R_r` is then
///   the rotation of `A_pq = Σ m̃ p qᵀ` (Müller's least-squares rigid fit, which conserves
///   angular momentum exactly; with an isotropic rest moment it equals the rotation of `A_r`);
/// * `gᵢ` = mean of `g_{r,i}` over the regions of `i`;
/// * eq. (4): `vᵢ ← vᵢ + α (gᵢ − xᵢ)/h + h g_ext`, then the damping of the non-rigid velocity
///   (see [`ShapeMatchingParams::damping`]), the floor's velocity response; eq. (5):
///   `xᵢ ← xᵢ + h vᵢ`.
///
/// Positions and velocities are stored per particle as `[x, y, z]` (host layout, `n × 3`
/// row-major), which keeps each region's gather in one cache line per particle.
pub struct ShapeMatchingSolver {
    n: usize,
    params: ShapeMatchingParams,
    rest: Vec<[f64; 3]>,
    mass: Vec<f64>,
    regions: Regions,
    /// Per region, `1 / Σ m̃`.
    region_inv_mass: Vec<f64>,
    /// Per region, `(Σ m̃ q qᵀ)⁻¹`.
    aqq_inv: Vec<[f64; 9]>,
    /// Per region, the rest centroid `c⁰_r`.
    rest_centre: Vec<[f64; 3]>,
    /// Region-major slots: `(m̃, m̃ q)`.
    slot_mq: Vec<[f64; 4]>,
    /// Region-major slots: `(m̃, m̃ A_qq⁻¹ q)`, so that `Σ x (m̃, m̃ A_qq⁻¹ q)` gives `A` directly.
    slot_maq: Vec<[f64; 4]>,
    /// Particle-major slots: the region and `q` of each of the particle's memberships.
    p_start: Vec<usize>,
    p_region: Vec<usize>,
    p_q: Vec<[f64; 3]>,
    inv_count: Vec<f64>,
    manifold: Option<ExampleManifold>,
    example_goal: ExampleGoal,
    /// Particle-major, per slot and example, `eʲ − q` (`slots × N`), for [`ExampleGoal::Shape`].
    p_d: Vec<[f64; 3]>,
    /// Per region, `β w_j` (`n_regions × N`), for [`ExampleGoal::Shape`].
    region_w: Vec<f64>,
    x: Vec<[f64; 3]>,
    v: Vec<[f64; 3]>,
    state: Vec<RegionState>,
    /// Per region, the goal map (9, row-major) and the centroid (3): what phase 3 reads.
    goals: Vec<[f64; 12]>,
    stretch_all: Vec<f64>,
    weights: Vec<f64>,
    contacts: usize,
    /// Held particles (ascending, no repeats): their velocity is zeroed before the position
    /// update, so they stay where [`set_state`](Self::set_state) put them.
    held: Vec<usize>,
    /// Per particle, whether it is held (empty when none is); the floor does not move them.
    is_held: Vec<bool>,
    /// The other buffers of `x` and `v`: a step writes the new positions and velocities into
    /// them and swaps them in once they are finite, so a failed step leaves `x` and `v`
    /// untouched and nothing is copied for recovery (sized in [`new`](Self::new)).
    x_next: Vec<[f64; 3]>,
    v_next: Vec<[f64; 3]>,
    /// The other buffer of `state`: a step writes the new region states into it (carrying over
    /// what the step reads or may not rewrite: the warm starts and the stretches) and swaps it
    /// in; a failed step swaps back, so the old states are never copied whole.
    state_spare: Vec<RegionState>,
    /// The other buffer of `weights`, swapped in by a step that recomputes them all (a global
    /// or grouped manifold) and back on failure.
    weights_spare: Vec<f64>,
}

impl ShapeMatchingSolver {
    /// Precomputes the regions' rest data and puts the particles at rest in the rest pose.
    ///
    /// * `rest`: `n × 3` row-major rest positions.
    /// * `masses`: `n` positive masses.
    /// * `regions`: over the same `n` particles; each must have at least 4 members that do not
    ///   lie in a plane.
    pub fn new(rest: &[f64], masses: &[f64], regions: Regions, params: ShapeMatchingParams) -> Result<Self> {
        params.validate()?;
        if rest.is_empty() || rest.len() % 3 != 0 {
            return Err(OvertoneError::size(
                "rest positions",
                "a non-empty n x 3 array",
                rest.len(),
            ));
        }
        crate::error::check_finite("rest positions", rest, 3)?;
        let n = rest.len() / 3;
        if masses.len() != n {
            return Err(OvertoneError::size("masses", n, masses.len()));
        }
        if let Some(i) = masses.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(OvertoneError::setting(
                "masses",
                format!("particle {i}: {}", masses[i]),
                "every mass must be a finite number > 0",
            ));
        }
        if regions.n_particles() != n {
            return Err(OvertoneError::size("regions' particle count", n, regions.n_particles()));
        }
        let x0: Vec<[f64; 3]> = rest.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let counts = regions.membership_counts();
        let n_reg = regions.n_regions();
        let mut region_inv_mass = Vec::with_capacity(n_reg);
        let mut aqq_inv = Vec::with_capacity(n_reg);
        let mut rest_centre = Vec::with_capacity(n_reg);
        let mut slot_mq = Vec::with_capacity(regions.n_slots());
        let mut slot_maq = Vec::with_capacity(regions.n_slots());
        let mut slot_q = Vec::with_capacity(regions.n_slots());
        for r in 0..n_reg {
            let mem = regions.members(r);
            if mem.len() < 4 {
                return Err(InputError::DegenerateRegion {
                    region: r,
                    reason: format!(
                        "it has {} particles; a 3D region needs at least 4 not in one plane (use more rings)",
                        mem.len()
                    ),
                }
                .into());
            }
            let mut total = 0.0;
            let mut c0 = [0.0; 3];
            for &i in mem {
                let mt = masses[i] / counts[i] as f64;
                total += mt;
                for k in 0..3 {
                    c0[k] += mt * x0[i][k];
                }
            }
            c0.iter_mut().for_each(|c| *c /= total);
            let mut aqq = [0.0; 9];
            for &i in mem {
                let mt = masses[i] / counts[i] as f64;
                let q = [x0[i][0] - c0[0], x0[i][1] - c0[1], x0[i][2] - c0[2]];
                for a in 0..3 {
                    for b in 0..3 {
                        aqq[a * 3 + b] += mt * q[a] * q[b];
                    }
                }
                slot_mq.push([mt, mt * q[0], mt * q[1], mt * q[2]]);
                slot_q.push(q);
            }
            let eig = nalgebra::Matrix3::from_row_slice(&aqq).symmetric_eigenvalues();
            let (lo, hi) = (eig.min(), eig.max());
            if !(lo > REGION_CONDITION_LIMIT * hi) {
                return Err(InputError::DegenerateRegion {
                    region: r,
                    reason: format!(
                        "its {} rest particles lie (nearly) in a plane or on a line (moment eigenvalues {lo:.3e} .. {hi:.3e}); use a tetrahedral mesh or more rings",
                        mem.len()
                    ),
                }
                .into());
            }
            region_inv_mass.push(1.0 / total);
            rest_centre.push(c0);
            let inv = inverse3(&aqq).ok_or_else(|| InputError::DegenerateRegion {
                region: r,
                reason: "its rest moment matrix is singular".into(),
            })?;
            for (s, &i) in regions.slot_range(r).zip(mem) {
                let mt = masses[i] / counts[i] as f64;
                let q: [f64; 3] = slot_q[s];
                let aq: [f64; 3] =
                    std::array::from_fn(|a| inv[a * 3] * q[0] + inv[a * 3 + 1] * q[1] + inv[a * 3 + 2] * q[2]);
                slot_maq.push([mt, mt * aq[0], mt * aq[1], mt * aq[2]]);
            }
            aqq_inv.push(inv);
        }
        // Particle-major slot lists (ascending region order per particle).
        let mut p_start = vec![0usize; n + 1];
        for &i in regions.all_members() {
            p_start[i + 1] += 1;
        }
        for i in 0..n {
            p_start[i + 1] += p_start[i];
        }
        let mut fill = p_start.clone();
        let mut p_region = vec![0; regions.n_slots()];
        let mut p_q = vec![[0.0; 3]; regions.n_slots()];
        for r in 0..n_reg {
            for s in regions.slot_range(r) {
                let i = regions.all_members()[s];
                p_region[fill[i]] = r;
                p_q[fill[i]] = slot_q[s];
                fill[i] += 1;
            }
        }
        let inv_count = counts.iter().map(|&c| 1.0 / c as f64).collect();
        let identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let state = vec![
            RegionState {
                warm: [1.0, 0.0, 0.0, 0.0],
                prev: [1.0, 0.0, 0.0, 0.0],
                rot: identity,
                stretch: [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
                centre: [0.0; 3],
                goal_map: identity,
                weights_for_shape: [0.0; 16],
            };
            n_reg
        ];
        Ok(Self {
            n,
            params,
            x: x0.clone(),
            v: vec![[0.0; 3]; n],
            rest: x0,
            mass: masses.to_vec(),
            regions,
            region_inv_mass,
            aqq_inv,
            rest_centre,
            slot_mq,
            slot_maq,
            p_start,
            p_region,
            p_q,
            inv_count,
            manifold: None,
            example_goal: ExampleGoal::Stretch,
            p_d: Vec::new(),
            region_w: Vec::new(),
            state_spare: state.clone(),
            state,
            goals: vec![[0.0; 12]; n_reg],
            stretch_all: Vec::new(),
            weights: Vec::new(),
            contacts: 0,
            held: Vec::new(),
            is_held: Vec::new(),
            x_next: vec![[0.0; 3]; n],
            v_next: vec![[0.0; 3]; n],
            weights_spare: Vec::new(),
        })
    }

    /// The regions' stretch vectors (`n_regions × 6`, see [`crate::shape_matching::stretch`]) of
    /// a pose (`n × 3` row-major).
    ///
    /// Refuses a pose of the wrong size, with non-finite numbers, or that collapses or inverts a
    /// region (`det A_r / (‖A_r‖_F/√3)³ <` [`EXAMPLE_VOLUME_LIMIT`]); the error names the region.
    pub fn region_stretches(&self, pose: &[f64]) -> Result<Vec<f64>> {
        if pose.len() != 3 * self.n {
            return Err(OvertoneError::size(
                "pose",
                format!("{} vertices x 3 (the body's)", self.n),
                format!("{} numbers ({} vertices)", pose.len(), pose.len() / 3),
            ));
        }
        crate::error::check_finite("pose", pose, 3)?;
        let mut out = Vec::with_capacity(self.regions.n_regions() * 6);
        for r in 0..self.regions.n_regions() {
            let (_, apq) = self.region_moments(r, |i| [pose[3 * i], pose[3 * i + 1], pose[3 * i + 2]]);
            let a = mul3(&apq, &self.aqq_inv[r]);
            let frob = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            let rel = det3(&a) / (frob / 3f64.sqrt()).powi(3);
            if !(rel >= EXAMPLE_VOLUME_LIMIT) {
                return Err(InputError::DegenerateRegion {
                    region: r,
                    reason: format!(
                        "the pose {} this region (relative volume {rel:.2e})",
                        if rel < 0.0 { "inverts" } else { "collapses" }
                    ),
                }
                .into());
            }
            let mut q = [1.0, 0.0, 0.0, 0.0];
            let mut rot = [0.0; 9];
            out.extend(polar_stretch_3d(&a, &mut q, &mut rot, 1e-14));
        }
        Ok(out)
    }

    /// Gives the body example poses (each `n × 3` row-major, in the rest pose's vertex order):
    /// the goal becomes `R S*` with `S*` the projection of the regions' stretches on the
    /// examples' span (eq. 7), blended by `beta`. Replaces earlier examples.
    ///
    /// Errors name the example: wrong vertex count, NaN/Inf, a region collapsed or inverted by
    /// the example, an example equal to the rest shape, or (global scope) examples that are
    /// linearly dependent.
    pub fn set_examples(&mut self, examples: &[Vec<f64>], scope: ManifoldScope, beta: f64) -> Result<()> {
        let n_reg = self.regions.n_regions();
        if examples.is_empty() {
            return Err(OvertoneError::setting("examples", 0, "give at least one example pose"));
        }
        let mut stretches = Vec::with_capacity(examples.len());
        for (j, ex) in examples.iter().enumerate() {
            let s = self.region_stretches(ex).map_err(|e| InputError::Example {
                example: j,
                reason: match e {
                    OvertoneError::Input(InputError::Size { expected, got, .. }) => {
                        format!("expected {expected}, got {got}")
                    }
                    OvertoneError::Input(InputError::NonFinite { location, .. }) => {
                        format!("non-finite coordinate at {location}")
                    }
                    OvertoneError::Input(InputError::DegenerateRegion { region, reason }) => {
                        format!("in shape-matching region {region} (around particle {region}): {reason}")
                    }
                    other => other.to_string(),
                },
            })?;
            stretches.push(s);
        }
        let rest = (0..n_reg).flat_map(|_| [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]).collect();
        let m = ExampleManifold::new(rest, &stretches, 6, scope, beta)?;
        // Example region shapes without rotation, minus the rest shape, per particle-major slot.
        let ne = examples.len();
        let mut frames = Vec::with_capacity(ne * n_reg);
        for ex in examples {
            for r in 0..n_reg {
                let (c, apq) = self.region_moments(r, |i| [ex[3 * i], ex[3 * i + 1], ex[3 * i + 2]]);
                let a = mul3(&apq, &self.aqq_inv[r]);
                let mut q = [1.0, 0.0, 0.0, 0.0];
                let mut rot = [0.0; 9];
                polar_stretch_3d(&a, &mut q, &mut rot, 1e-14);
                frames.push((rot, c));
            }
        }
        self.p_d = vec![[0.0; 3]; self.p_region.len() * ne];
        for i in 0..self.n {
            for s in self.p_start[i]..self.p_start[i + 1] {
                let r = self.p_region[s];
                for (j, ex) in examples.iter().enumerate() {
                    let (rot, c) = &frames[j * n_reg + r];
                    let d = [ex[3 * i] - c[0], ex[3 * i + 1] - c[1], ex[3 * i + 2] - c[2]];
                    let q = self.p_q[s];
                    for a in 0..3 {
                        // (Rʲ)ᵀ d − q
                        self.p_d[s * ne + j][a] = rot[a] * d[0] + rot[3 + a] * d[1] + rot[6 + a] * d[2] - q[a];
                    }
                }
            }
        }
        self.region_w = vec![0.0; n_reg * ne];
        self.stretch_all = vec![0.0; n_reg * 6];
        self.weights = vec![0.0; m.n_groups() * m.n_examples()];
        self.weights_spare = self.weights.clone();
        self.manifold = Some(m);
        Ok(())
    }

    /// Chooses how example goals are built (default [`ExampleGoal::Stretch`], the seed's).
    pub fn set_example_goal(&mut self, goal: ExampleGoal) {
        self.example_goal = goal;
    }

    /// The example manifold, if any.
    pub fn manifold(&self) -> Option<&ExampleManifold> {
        self.manifold.as_ref()
    }

    /// Sets `β` of the example manifold.
    pub fn set_beta(&mut self, beta: f64) -> Result<()> {
        match &mut self.manifold {
            Some(m) => m.set_beta(beta),
            None => Err(OvertoneError::setting("beta", beta, "the body has no example poses")),
        }
    }

    /// Sets positions (`n × 3` row-major) and velocities (same shape) of every particle.
    pub fn set_state(&mut self, positions: &[f64], velocities: &[f64]) -> Result<()> {
        for (what, a) in [("positions", positions), ("velocities", velocities)] {
            if a.len() != 3 * self.n {
                return Err(OvertoneError::size(what, 3 * self.n, a.len()));
            }
            crate::error::check_finite(what, a, 3)?;
        }
        for i in 0..self.n {
            self.x[i] = [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]];
            self.v[i] = [velocities[3 * i], velocities[3 * i + 1], velocities[3 * i + 2]];
        }
        // A jump in state: no rotation to extrapolate from.
        for st in &mut self.state {
            st.prev = st.warm;
        }
        Ok(())
    }

    /// Holds `particles` in place (a clamp, as the seed's Fig. 12 holds one end of its cuboid):
    /// from the next step on their velocity is zero after the velocity update (eq. 4, the
    /// damping and gravity), so they keep the positions [`set_state`](Self::set_state) gave
    /// them and act on the rest of the body through the regions they belong to. Replaces
    /// earlier held particles; an empty list frees the body. Indices are particle numbers
    /// (`0..n`); repeats are allowed.
    pub fn set_held(&mut self, particles: &[usize]) -> Result<()> {
        if let Some(&i) = particles.iter().find(|&&i| i >= self.n) {
            return Err(OvertoneError::size(
                "held particle index",
                format!("below {} (the body's particle count)", self.n),
                i,
            ));
        }
        let mut held = particles.to_vec();
        held.sort_unstable();
        held.dedup();
        self.is_held = vec![false; self.n];
        for &i in &held {
            self.is_held[i] = true;
        }
        self.held = held;
        Ok(())
    }

    /// The held particles (ascending), see [`set_held`](Self::set_held).
    pub fn held(&self) -> &[usize] {
        &self.held
    }

    /// Replaces the settings.
    pub fn set_params(&mut self, params: ShapeMatchingParams) -> Result<()> {
        params.validate()?;
        self.params = params;
        Ok(())
    }

    /// `(c_r, Σ m̃ x qᵀ)` of region `r` for positions given by `pos`. Because `Σ m̃ q = 0`,
    /// `Σ m̃ x qᵀ = Σ m̃ (x − c) qᵀ = A_pq`.
    #[inline(always)]
    fn region_moments(&self, r: usize, pos: impl Fn(usize) -> [f64; 3]) -> ([f64; 3], [f64; 9]) {
        self.region_moments_with(&self.slot_mq, r, pos)
    }

    /// `(c_r, Σ m̃ x wᵀ)` with `(m̃, m̃ w)` per slot from `table` (`slot_mq` or `slot_maq`).
    #[inline(always)]
    fn region_moments_with(
        &self,
        table: &[[f64; 4]],
        r: usize,
        pos: impl Fn(usize) -> [f64; 3],
    ) -> ([f64; 3], [f64; 9]) {
        let range = self.regions.slot_range(r);
        let mem = self.regions.members(r);
        let smq = &table[range];
        // Row i of `acc` is Σ xᵢ (m̃, m̃ q): the centroid's numerator and row i of A_pq.
        let mut acc = [[0.0; 4]; 3];
        for (&i, mq) in mem.iter().zip(smq) {
            let x = pos(i);
            for a in 0..3 {
                for b in 0..4 {
                    acc[a][b] += x[a] * mq[b];
                }
            }
        }
        let im = self.region_inv_mass[r];
        (
            [acc[0][0] * im, acc[1][0] * im, acc[2][0] * im],
            [
                acc[0][1], acc[0][2], acc[0][3], acc[1][1], acc[1][2], acc[1][3], acc[2][1], acc[2][2], acc[2][3],
            ],
        )
    }

    /// Phase 1 of a step for region `r`: centroid, `A`, its polar decomposition and, without a
    /// manifold or with a per-region one (`fused`), the goal map.
    #[inline(always)]
    fn update_region<const SIMD: bool>(&self, r: usize, st: &mut RegionState, fused: bool) {
        let f = self.prepare_region::<SIMD>(r, st);
        closest_rotation_3d(&f, &mut st.warm, &mut st.rot, ROTATION_ACCURACY);
        self.finish_region(r, st, &f, fused);
    }

    /// [`update_regions`](Self::update_regions) over a block of regions starting at `r0`.
    #[inline(always)]
    fn update_region_block<const SIMD: bool>(&self, r0: usize, states: &mut [RegionState], fused: bool) {
        for (c, sts) in states.chunks_mut(4).enumerate() {
            self.update_regions::<SIMD>(r0 + 4 * c, sts, fused);
        }
    }

    /// [`update_region`](Self::update_region) for regions `r0..r0 + states.len()`; four at a
    /// time share one [`closest_rotation_3d_x4`] (the same results as one at a time).
    #[inline(always)]
    fn update_regions<const SIMD: bool>(&self, r0: usize, states: &mut [RegionState], fused: bool) {
        if states.len() != 4 {
            for (k, st) in states.iter_mut().enumerate() {
                self.update_region::<SIMD>(r0 + k, st, fused);
            }
            return;
        }
        let states: &mut [RegionState; 4] = states.try_into().expect("four regions");
        let mut f = [[0.0; 9]; 4];
        let mut warm = [[0.0; 4]; 4];
        for k in 0..4 {
            f[k] = self.prepare_region::<SIMD>(r0 + k, &mut states[k]);
            warm[k] = states[k].warm;
        }
        let mut rot = [[0.0; 9]; 4];
        closest_rotation_3d_x4(&f, &mut warm, &mut rot, ROTATION_ACCURACY);
        for k in 0..4 {
            states[k].warm = warm[k];
            states[k].rot = rot[k];
            self.finish_region(r0 + k, &mut states[k], &f[k], fused);
        }
    }

    /// Centroid and warm start of region `r`; returns the matrix whose rotation is wanted:
    /// `A_pq` without a manifold, `A = A_pq A_qq⁻¹` with one.
    #[inline(always)]
    fn prepare_region<const SIMD: bool>(&self, r: usize, st: &mut RegionState) -> [f64; 9] {
        // Without a manifold the rotation of A_pq is wanted, with one that of A = A_pq A_qq⁻¹.
        let table = if self.manifold.is_some() {
            &self.slot_maq
        } else {
            &self.slot_mq
        };
        #[cfg(target_arch = "x86_64")]
        let (c, f) = if SIMD {
            // SAFETY: SIMD is only set in code that runs once AVX2 and FMA were detected.
            unsafe { self.region_moments_avx2(table, r) }
        } else {
            self.region_moments_with(table, r, |i| self.x[i])
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (c, f) = self.region_moments_with(table, r, |i| self.x[i]);
        st.centre = c;
        // Warm start: the last two rotations extrapolated at constant angular velocity.
        let current = st.warm;
        st.warm = extrapolate_rotation(&st.prev, &current);
        st.prev = current;
        f
    }

    /// The goal map of region `r` once `st.rot` is the rotation of `f` (see
    /// [`prepare_region`](Self::prepare_region)).
    #[inline(always)]
    fn finish_region(&self, r: usize, st: &mut RegionState, f: &[f64; 9], fused: bool) {
        match &self.manifold {
            None => st.goal_map = st.rot,
            Some(m) => {
                st.stretch = stretch_of_3d(f, &st.rot);
                if fused {
                    let mut w = [0.0; 16];
                    let ne = m.n_examples();
                    let mut target = [0.0; 6];
                    if ne <= 16 {
                        m.unit_weights(r, &st.stretch, &mut w[..ne]);
                        m.target(r, &w[..ne], &mut target);
                    } else {
                        let mut wv = vec![0.0; ne];
                        m.unit_weights(r, &st.stretch, &mut wv);
                        m.target(r, &wv, &mut target);
                    }
                    st.goal_map = mul3(&st.rot, &stretch_matrix_3d(&target));
                    st.weights_for_shape = w;
                }
            }
        }
    }

    /// [`region_moments`](Self::region_moments) of the current positions with AVX2 + FMA: per
    /// member, one fused multiply-add of `(m̃, m̃ q)` per coordinate.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn region_moments_avx2(&self, table: &[[f64; 4]], r: usize) -> ([f64; 3], [f64; 9]) {
        use std::arch::x86_64::*;
        let range = self.regions.slot_range(r);
        let mem = self.regions.members(r);
        let smq = &table[range];
        let (mut a0, mut a1, mut a2) = (_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd());
        for (&i, mq) in mem.iter().zip(smq) {
            let x = &self.x[i];
            // SAFETY: `mq` is four contiguous f64.
            let w = unsafe { _mm256_loadu_pd(mq.as_ptr()) };
            a0 = _mm256_fmadd_pd(_mm256_set1_pd(x[0]), w, a0);
            a1 = _mm256_fmadd_pd(_mm256_set1_pd(x[1]), w, a1);
            a2 = _mm256_fmadd_pd(_mm256_set1_pd(x[2]), w, a2);
        }
        let mut acc = [[0.0; 4]; 3];
        // SAFETY: each row of `acc` is four contiguous f64.
        unsafe {
            _mm256_storeu_pd(acc[0].as_mut_ptr(), a0);
            _mm256_storeu_pd(acc[1].as_mut_ptr(), a1);
            _mm256_storeu_pd(acc[2].as_mut_ptr(), a2);
        }
        let im = self.region_inv_mass[r];
        (
            [acc[0][0] * im, acc[1][0] * im, acc[2][0] * im],
            [
                acc[0][1], acc[0][2], acc[0][3], acc[1][1], acc[1][2], acc[1][3], acc[2][1], acc[2][2], acc[2][3],
            ],
        )
    }

    /// Advances one time step (eq. 1-5 with gravity, damping and the floor).
    ///
    /// Errors: [`NumericalError::StepFailed`] if the state became non-finite (a time step far too
    /// large for the forces); [`OvertoneError::Unsupported`] for [`ExampleGoal::Shape`] with a
    /// per-region manifold of more than 16 examples. On every error the state (positions,
    /// velocities, the regions' rotations, stretches and warm starts, the example weights, the
    /// contact count) is bit-identical to before the call, so the host may retry with a smaller
    /// `dt` or `alpha`.
    pub fn step(&mut self) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            return unsafe { self.step_avx2() };
        }
        self.step_impl::<false>()
    }

    /// [`step`](Self::step) compiled for AVX2 + FMA processors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn step_avx2(&mut self) -> Result<()> {
        self.step_impl::<true>()
    }

    #[inline(always)]
    fn step_impl<const SIMD: bool>(&mut self) -> Result<()> {
        let parallel = self.regions.n_regions() >= PARALLEL_MIN_REGIONS;
        let fused = self.manifold.as_ref().is_none_or(|m| m.n_groups() == m.n_units());
        let shape_goal = self.example_goal == ExampleGoal::Shape && self.manifold.is_some();
        if shape_goal && fused && self.manifold.as_ref().is_some_and(|m| m.n_examples() > 16) {
            return Err(OvertoneError::Unsupported(
                "ExampleGoal::Shape with a per-region manifold supports at most 16 examples".into(),
            ));
        }
        // The new region states go to the spare buffer: what phase 1 reads (the warm starts)
        // or does not always rewrite (the stretch, without a manifold) is carried over.
        std::mem::swap(&mut self.state, &mut self.state_spare);
        for (new, old) in self.state.iter_mut().zip(&self.state_spare) {
            new.warm = old.warm;
            new.prev = old.prev;
            new.stretch = old.stretch;
        }
        // Phase 2 below rewrites every weight: it writes them to the spare buffer.
        let swapped_weights = !fused;
        if swapped_weights {
            std::mem::swap(&mut self.weights, &mut self.weights_spare);
        }
        // Phase 1: per region, the centroid, A, its polar decomposition and (fused) the goal map.
        let mut state = std::mem::take(&mut self.state);
        {
            let this = &*self;
            if parallel {
                state
                    .par_chunks_mut(PARALLEL_CHUNK)
                    .enumerate()
                    .for_each(|(c, sts)| simd_region_block(this, PARALLEL_CHUNK * c, sts, fused));
            } else {
                for (c, sts) in state.chunks_mut(4).enumerate() {
                    this.update_regions::<SIMD>(4 * c, sts, fused);
                }
            }
        }
        self.state = state;
        // Phase 2 (global or grouped manifold): weights from all regions, then the goal maps.
        if !fused {
            let m = self.manifold.as_ref().expect("not fused only with a manifold");
            for (r, st) in self.state.iter().enumerate() {
                self.stretch_all[r * 6..(r + 1) * 6].copy_from_slice(&st.stretch);
            }
            m.weights(&self.stretch_all, &mut self.weights);
            let ne = m.n_examples();
            let weights = &self.weights;
            if parallel {
                self.state
                    .par_chunks_mut(PARALLEL_CHUNK)
                    .enumerate()
                    .for_each(|(c, sts)| simd_goal_maps(m, PARALLEL_CHUNK * c, weights, ne, sts));
            } else {
                for (r, st) in self.state.iter_mut().enumerate() {
                    grouped_goal_map(m, r, weights, ne, st);
                }
            }
        }
        if shape_goal {
            let m = self.manifold.as_ref().expect("checked");
            let (ne, beta) = (m.n_examples(), m.beta());
            for r in 0..self.state.len() {
                for j in 0..ne {
                    self.region_w[r * ne + j] = beta
                        * if fused {
                            self.state[r].weights_for_shape[j]
                        } else {
                            self.weights[m.group_of(r) * ne + j]
                        };
                }
                self.state[r].goal_map = self.state[r].rot;
            }
        }
        // Per region `[G | t]`: the goal map and, without example shapes, `t = c − G c⁰`, so
        // that `G q + c = G x⁰ + t` and a particle's goal sum needs no per-slot product.
        for ((g, st), c0) in self.goals.iter_mut().zip(&self.state).zip(&self.rest_centre) {
            let gm = &st.goal_map;
            g[..9].copy_from_slice(gm);
            for a in 0..3 {
                g[9 + a] = if shape_goal {
                    st.centre[a]
                } else {
                    st.centre[a] - (gm[a * 3] * c0[0] + gm[a * 3 + 1] * c0[1] + gm[a * 3 + 2] * c0[2])
                };
            }
        }
        // Phase 3: per particle, the averaged goal and the velocity update (eq. 4).
        let (h, alpha, grav) = (self.params.dt, self.params.alpha, self.params.gravity);
        {
            let sums = GoalSums {
                goals: &self.goals,
                p_start: &self.p_start,
                p_region: &self.p_region,
                p_q: &self.p_q,
                inv_count: &self.inv_count,
                rest: &self.rest,
                p_d: &self.p_d,
                region_w: &self.region_w,
                ne: if shape_goal {
                    self.manifold.as_ref().map_or(0, |m| m.n_examples())
                } else {
                    0
                },
                shape_goal,
                k: alpha / h,
                h,
                grav,
            };
            // The new velocities go to `v_next` (each starts as a copy of the old one, in the
            // same pass), so a failed step leaves `v` as it was.
            if parallel {
                self.v_next
                    .par_chunks_mut(PARALLEL_CHUNK)
                    .zip(self.v.par_chunks(PARALLEL_CHUNK))
                    .zip(self.x.par_chunks(PARALLEL_CHUNK))
                    .enumerate()
                    .for_each(|(c, ((vn, v), x))| {
                        vn.copy_from_slice(v);
                        simd_velocities(&sums, PARALLEL_CHUNK * c, x, vn)
                    });
            } else {
                for (i, ((vn, v), x)) in self.v_next.iter_mut().zip(&self.v).zip(&self.x).enumerate() {
                    *vn = *v;
                    sums.update_velocity::<SIMD>(i, x, vn);
                }
            }
        }
        if self.held.is_empty() {
            damp_non_rigid_velocity(&self.x, &mut self.v_next, &self.mass, self.params.damping);
        } else {
            // A held body can make no rigid motion: all of its velocity is damped (a swing
            // about the clamp is nearly a rigid rotation, which the free body's damping spares).
            let keep = 1.0 - self.params.damping;
            for v in &mut self.v_next {
                v.iter_mut().for_each(|c| *c *= keep);
            }
            for &i in &self.held {
                self.v_next[i] = [0.0; 3];
            }
        }
        // Phase 4: positions (eq. 5) and the floor, into `x_next`.
        let mut contacts = 0;
        let mut finite = true;
        for (i, ((xn, x), v)) in self
            .x_next
            .iter_mut()
            .zip(&self.x)
            .zip(self.v_next.iter_mut())
            .enumerate()
        {
            if let Some(f) = &self.params.floor {
                // A held particle stays put, below the floor or not.
                if !self.is_held.get(i).copied().unwrap_or(false) {
                    contacts += f.respond(x, v, h) as usize;
                }
            }
            for a in 0..3 {
                xn[a] = x[a] + h * v[a];
            }
            finite &= xn.iter().chain(v.iter()).all(|c| c.is_finite());
        }
        if !finite {
            self.restore_step_start(swapped_weights);
            return Err(NumericalError::StepFailed {
                step: "shape-matching step".into(),
                reason: "positions became non-finite; reduce dt or alpha".into(),
            }
            .into());
        }
        std::mem::swap(&mut self.x, &mut self.x_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        self.contacts = contacts;
        Ok(())
    }

    /// Puts back the state [`step_impl`](Self::step_impl) started from: the region states (and
    /// the weights, when the step swapped them) by swapping the buffers back. `x` and `v` were
    /// not written (the step wrote `x_next` and `v_next`); `goals`, `stretch_all` and
    /// `region_w` need nothing: every step recomputes them before reading them.
    fn restore_step_start(&mut self, swapped_weights: bool) {
        std::mem::swap(&mut self.state, &mut self.state_spare);
        if swapped_weights {
            std::mem::swap(&mut self.weights, &mut self.weights_spare);
        }
    }

    /// Puts every particle back at its rest position with zero velocity.
    pub fn reset(&mut self) {
        self.x.copy_from_slice(&self.rest);
        self.v.fill([0.0; 3]);
        for st in &mut self.state {
            st.warm = [1.0, 0.0, 0.0, 0.0];
            st.prev = st.warm;
        }
    }

    /// Number of particles.
    pub fn n_particles(&self) -> usize {
        self.n
    }
    /// The regions.
    pub fn regions(&self) -> &Regions {
        &self.regions
    }
    /// The settings.
    pub fn params(&self) -> &ShapeMatchingParams {
        &self.params
    }
    /// Particle masses.
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }
    /// Current positions, per particle (`positions().as_flattened()` is `n × 3` row-major).
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.x
    }
    /// Current velocities, per particle.
    pub fn velocities(&self) -> &[[f64; 3]] {
        &self.v
    }
    /// Particles that touched the floor in the last step.
    pub fn contacts(&self) -> usize {
        self.contacts
    }
    /// The raw least-squares weights `w_1..w_N` of the last step per group (global or grouped
    /// manifolds; empty otherwise), see [`ExampleManifold::blended_weights`].
    pub fn example_weights(&self) -> &[f64] {
        &self.weights
    }
    /// The stretch vector of region `r` at the last step (examples only).
    pub fn region_stretch(&self, r: usize) -> [f64; 6] {
        self.state[r].stretch
    }
}

/// Whether the processor has AVX2 and FMA (the parallel tasks of a step then run code compiled
/// for them; the serial step is compiled that way as a whole).
#[inline(always)]
fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines `$name`, which runs `$body` compiled for AVX2 + FMA when the processor has them.
macro_rules! simd_task {
    ($name:ident, $avx:ident, ($($arg:ident: $ty:ty),*), $body:block) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx($($arg: $ty),*) $body
        fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if has_avx2_fma() {
                // SAFETY: the processor has AVX2 and FMA (checked just above).
                return unsafe { $avx($($arg),*) };
            }
            $body
        }
    };
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn region_block_avx2(this: &ShapeMatchingSolver, r0: usize, sts: &mut [RegionState], fused: bool) {
    this.update_region_block::<true>(r0, sts, fused)
}

/// Phase 1 over a block of regions, compiled for AVX2 + FMA when the processor has them.
fn simd_region_block(this: &ShapeMatchingSolver, r0: usize, sts: &mut [RegionState], fused: bool) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the processor has AVX2 and FMA (checked just above).
        return unsafe { region_block_avx2(this, r0, sts, fused) };
    }
    this.update_region_block::<false>(r0, sts, fused)
}

simd_task!(simd_goal_maps, goal_maps_avx2, (m: &ExampleManifold, r0: usize, weights: &[f64], ne: usize, sts: &mut [RegionState]), {
    for (k, st) in sts.iter_mut().enumerate() {
        grouped_goal_map(m, r0 + k, weights, ne, st);
    }
});

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn velocities_avx2(sums: &GoalSums<'_>, i0: usize, x: &[[f64; 3]], v: &mut [[f64; 3]]) {
    for (k, (v, x)) in v.iter_mut().zip(x).enumerate() {
        sums.update_velocity::<true>(i0 + k, x, v);
    }
}

/// Phase 3 over a block of particles, compiled for AVX2 + FMA when the processor has them.
fn simd_velocities(sums: &GoalSums<'_>, i0: usize, x: &[[f64; 3]], v: &mut [[f64; 3]]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the processor has AVX2 and FMA (checked just above).
        return unsafe { velocities_avx2(sums, i0, x, v) };
    }
    for (k, (v, x)) in v.iter_mut().zip(x).enumerate() {
        sums.update_velocity::<false>(i0 + k, x, v);
    }
}

/// The goal map `R_r S*_r` of region `r` from its group's weights (`weights` holds `N` per group).
#[inline(always)]
fn grouped_goal_map(m: &ExampleManifold, r: usize, weights: &[f64], ne: usize, st: &mut RegionState) {
    let g = m.group_of(r);
    let mut target = [0.0; 6];
    m.target(r, &weights[g * ne..(g + 1) * ne], &mut target);
    st.goal_map = mul3(&st.rot, &stretch_matrix_3d(&target));
}

/// What phase 3 of a step reads: the regions' goals and the particles' slot lists.
struct GoalSums<'a> {
    goals: &'a [[f64; 12]],
    p_start: &'a [usize],
    p_region: &'a [usize],
    p_q: &'a [[f64; 3]],
    inv_count: &'a [f64],
    rest: &'a [[f64; 3]],
    p_d: &'a [[f64; 3]],
    region_w: &'a [f64],
    ne: usize,
    shape_goal: bool,
    /// `α / h`.
    k: f64,
    h: f64,
    grav: [f64; 3],
}

impl GoalSums<'_> {
    /// Eq. (4) for particle `i`: `vᵢ += α (gᵢ − xᵢ)/h + h g_ext`, `gᵢ` the mean of its goals.
    #[inline(always)]
    fn update_velocity<const SIMD: bool>(&self, i: usize, x: &[f64; 3], v: &mut [f64; 3]) {
        let Self {
            goals,
            p_start,
            p_region,
            p_q,
            inv_count,
            rest,
            p_d,
            region_w,
            ne,
            shape_goal,
            k,
            h,
            grav,
        } = *self;
        let mut g = [0.0; 3];
        if shape_goal {
            // g = Σ_r G_r (q + Σ_j β w_j (eʲ − q)) + c_r
            for s in p_start[i]..p_start[i + 1] {
                let r = p_region[s];
                let gr = &goals[r];
                let mut q = p_q[s];
                for j in 0..ne {
                    let (w, d) = (region_w[r * ne + j], &p_d[s * ne + j]);
                    for a in 0..3 {
                        q[a] += w * d[a];
                    }
                }
                for a in 0..3 {
                    g[a] += gr[a * 3] * q[0] + gr[a * 3 + 1] * q[1] + gr[a * 3 + 2] * q[2] + gr[9 + a];
                }
            }
        } else {
            // g = (Σ_r G_r) x⁰ + Σ_r t_r
            let mut sum = [0.0; 12];
            let regions = &p_region[p_start[i]..p_start[i + 1]];
            #[cfg(target_arch = "x86_64")]
            if SIMD {
                // SAFETY: SIMD is only set in code that runs once AVX2 was detected; every
                // `goals[r]` and `sum` are 12 contiguous f64.
                unsafe { sum_goals_avx2(goals, regions, &mut sum) };
            }
            if !SIMD || cfg!(not(target_arch = "x86_64")) {
                for &r in regions {
                    let gr = &goals[r];
                    for a in 0..12 {
                        sum[a] += gr[a];
                    }
                }
            }
            let x0 = rest[i];
            for a in 0..3 {
                g[a] = sum[a * 3] * x0[0] + sum[a * 3 + 1] * x0[1] + sum[a * 3 + 2] * x0[2] + sum[9 + a];
            }
        }
        let ic = inv_count[i];
        for a in 0..3 {
            v[a] += k * (g[a] * ic - x[a]) + h * grav[a];
        }
    }
}

/// `sum = Σ_r goals[r]` (12 numbers each) with AVX2, in the order of `regions`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn sum_goals_avx2(goals: &[[f64; 12]], regions: &[usize], sum: &mut [f64; 12]) {
    use std::arch::x86_64::*;
    let (mut s0, mut s1, mut s2) = (_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd());
    for &r in regions {
        let p = goals[r].as_ptr();
        // SAFETY: `goals[r]` holds 12 contiguous f64.
        unsafe {
            s0 = _mm256_add_pd(s0, _mm256_loadu_pd(p));
            s1 = _mm256_add_pd(s1, _mm256_loadu_pd(p.add(4)));
            s2 = _mm256_add_pd(s2, _mm256_loadu_pd(p.add(8)));
        }
    }
    // SAFETY: `sum` holds 12 contiguous f64.
    unsafe {
        _mm256_storeu_pd(sum.as_mut_ptr(), s0);
        _mm256_storeu_pd(sum.as_mut_ptr().add(4), s1);
        _mm256_storeu_pd(sum.as_mut_ptr().add(8), s2);
    }
}

/// The rotation one step after `current` at constant angular velocity, `(q_c q_p⁻¹) q_c`
/// (unit quaternions `(w, x, y, z)`; either sign of `prev` gives the same rotation).
#[inline]
fn extrapolate_rotation(prev: &[f64; 4], current: &[f64; 4]) -> [f64; 4] {
    let mul = |a: &[f64; 4], b: &[f64; 4]| {
        [
            a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
        ]
    };
    let step = mul(current, &[prev[0], -prev[1], -prev[2], -prev[3]]);
    let q = mul(&step, current);
    let inv_norm = 1.0 / q.iter().map(|v| v * v).sum::<f64>().sqrt();
    [q[0] * inv_norm, q[1] * inv_norm, q[2] * inv_norm, q[3] * inv_norm]
}
