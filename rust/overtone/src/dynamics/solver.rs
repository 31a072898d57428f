//! What every complementary-dynamics solver shares: the stepping interface [`CdSolver`] (with
//! its implementations for the three solvers), the report of a step, the rank of the
//! rig-orthogonality constraint, and the checks made on the inputs.

// The impls below forward to inherent methods of the same names: if one is ever removed, the
// call would resolve to the trait method itself; make that a compile error.
#![deny(unconditional_recursion)]

use crate::dynamics::{FastPrecompute, FastSolver, FullOrderSolver, Material, NewtonCdSolver, SolverParams};
use crate::error::{OvertoneError, Result};
use crate::leak::validate_momentum_weights;
use crate::mesh::SimplexMesh;
use crate::rig::LbsRig;

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Local/global iterations taken.
    pub iterations: usize,
    /// `‖Jᵀ M D u_c‖₂` after the step (units: mass × length²).
    pub residual: f64,
    /// `‖Jᵀ M D u_c‖₂ / (‖Jᵀ M D‖₂ ‖u_c‖₂)` (0 when `u_c = 0`); dimensionless.
    pub relative_residual: f64,
}

/// The rig-orthogonality rows per coordinate: how many are independent (kept) out of how many
/// the rig gives (bone rows `bones·(d+1)` plus blendshape rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConstraintRank {
    /// Independent rows kept.
    pub kept: usize,
    /// Rows given.
    pub given: usize,
}

/// The checks every complementary-dynamics solver makes on its inputs: the rig matches the
/// mesh (vertex count and dimension), the leak field has one value `≥ 0` per vertex, and the
/// material and step settings are in range.
pub(crate) fn validate_solver_inputs(
    mesh: &SimplexMesh,
    rig: &LbsRig,
    momentum_weights: &[f64],
    material: &Material,
    params: &SolverParams,
) -> Result<()> {
    let (d, n) = (mesh.dim(), mesh.n_vertices());
    if rig.dim() != d || rig.n_vertices() != n {
        return Err(OvertoneError::size(
            "rig",
            format!("{n} vertices in {d}D (the mesh's)"),
            format!("{} vertices in {}D", rig.n_vertices(), rig.dim()),
        ));
    }
    validate_momentum_weights(momentum_weights, n)?;
    material.validate()?;
    params.validate(d)
}

/// The stepping interface of every complementary-dynamics solver ([`FullOrderSolver`],
/// [`NewtonCdSolver`], [`FastSolver`]), as the scene runner and the host deformer use it.
///
/// The state is the rig parameters `p` plus the complementary displacement `u_c` (and their
/// velocities). Every `Err` leaves the state bit-identical to before the call. Poses are rig
/// parameter vectors of length [`LbsRig::n_params`]. `Send + Sync` as the three solvers are,
/// so a host's deformer holding a `Box<dyn CdSolver>` stays both.
pub trait CdSolver: Send + Sync {
    /// Spatial dimension `d` (2 or 3).
    fn dim(&self) -> usize;
    /// Number of simulated vertices `n`.
    fn n_vertices(&self) -> usize;
    /// The rig.
    fn rig(&self) -> &LbsRig;
    /// Puts the body at rest in pose `p`: `u_c = 0`, zero velocity.
    fn reset(&mut self, p: &[f64]) -> Result<()>;
    /// Gives the body its rig's velocity toward `p_next`, `dt` physics seconds later (`dt > 0`),
    /// with no complementary velocity; positions and `u_c` are unchanged.
    fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()>;
    /// One frame toward pose `p_next` without the residual diagnostic (what the step timings
    /// measure); returns the iterations taken.
    fn advance(&mut self, p_next: &[f64]) -> Result<usize>;
    /// [`advance`](Self::advance) then [`constraint_residual`](Self::constraint_residual).
    fn step(&mut self, p_next: &[f64]) -> Result<StepReport> {
        let iterations = self.advance(p_next)?;
        let (residual, relative_residual) = self.constraint_residual();
        Ok(StepReport {
            iterations,
            residual,
            relative_residual,
        })
    }
    /// `(‖Jᵀ M D u_c‖₂, relative)` of the current state, bone and blendshape rows together
    /// (see [`StepReport`] for units); `&mut` for the full-order solvers' workspace.
    fn constraint_residual(&mut self) -> (f64, f64);
    /// `(‖G u_c‖₂, ‖G u_c‖₂/(‖G‖₂‖u_c‖₂))` against the blendshape columns alone (zeros without
    /// blendshapes).
    fn blendshape_residual(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
    /// Rig-orthogonality rows per coordinate: independent ones kept, and given.
    fn constraint_rank(&self) -> ConstraintRank;
    /// The complementary displacement `u_c` into `out` (`n × d`, row-major, overwritten).
    /// Does not allocate.
    fn write_displacement(&mut self, out: &mut [f64]);
    /// The final positions `J p + u_c` into `frame` (`n × 3`, row-major, z = 0 in 2D) and `u_c`
    /// into `disp` (`n × d`, row-major); returns `max_v ‖u_c,v‖` (length units).
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64;
    /// The damping ratio `ζ ≥ 0` of the lowest mode from the next step on. Errors when `ζ` is
    /// out of range or the solver cannot change its damping after construction (an
    /// [`OvertoneError::Setting`] naming `damping`); on error the solver is unchanged.
    fn set_damping(&mut self, zeta: f64) -> Result<()>;
    /// Prepares [`write_embedded_displacement`](Self::write_embedded_displacement) for `m`
    /// points embedded in the mesh (per point its four mesh vertices `corners` and barycentric
    /// weights): `Ok(true)` when the solver reads its displacement at such points more cheaply
    /// than reconstructing the whole mesh (the fast solver: from its reduced coordinates), else
    /// `Ok(false)` and the caller interpolates [`write_displacement`](Self::write_displacement).
    ///
    /// Errors: a corner index out of range or a non-finite weight (nothing changes).
    fn prepare_embedded(&mut self, _corners: &[[usize; 4]], _barycentric: &[[f64; 4]]) -> Result<bool> {
        Ok(false)
    }
    /// The complementary displacement at the prepared points, `Σ_c b_c u_c(corner_c)`, into
    /// `out` (`m × d`, row-major, overwritten); returns `false` (and writes nothing) when no
    /// points were prepared for this size. Does not allocate.
    fn write_embedded_displacement(&mut self, _out: &mut [f64]) -> bool {
        false
    }
    /// The fast solver's precompute report (`None` for the full-order solvers).
    fn fast_precompute(&self) -> Option<&FastPrecompute> {
        None
    }
    /// The lowest vibration frequency (Hz) the solver computed for its time plan, damping or
    /// `frequency` control (`None` when it needed none, and for Newton's method).
    fn lowest_frequency_hz(&self) -> Option<f64> {
        None
    }
}

/// Frame output of the full-order solvers, whose state is coordinate-major (`x`, `u`: `n·d`):
/// positions to `n × 3` rows (z = 0 in 2D), displacement to `n × d` rows; returns the largest
/// displacement `max_v ‖u_v‖`.
fn write_full_frame(x: &[f64], u: &[f64], frame: &mut [f64], disp: &mut [f64]) -> f64 {
    let n = frame.len() / 3;
    let d = u.len() / n;
    for v in 0..n {
        for i in 0..3 {
            frame[v * 3 + i] = if i < d { x[i * n + v] } else { 0.0 };
        }
        for i in 0..d {
            disp[v * d + i] = u[i * n + v];
        }
    }
    max_norm(disp, d)
}

/// `max_v ‖u_v‖₂` of an `n × d` row-major field.
pub(crate) fn max_norm(u: &[f64], d: usize) -> f64 {
    u.chunks_exact(d)
        .map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
}

/// A coordinate-major field `u` (`n·d`) into `out` (`n × d`, row-major).
fn transpose_into(u: &[f64], d: usize, out: &mut [f64]) {
    let n = u.len() / d;
    for v in 0..n {
        for i in 0..d {
            out[d * v + i] = u[i * n + v];
        }
    }
}

/// The [`CdSolver`] methods every solver implements by its inherent method of the same name
/// (inherent methods take precedence over the trait's in `Type::method` paths).
macro_rules! delegate_to_inherent {
    ($t:ty) => {
        fn dim(&self) -> usize {
            <$t>::dim(self)
        }
        fn n_vertices(&self) -> usize {
            <$t>::n_vertices(self)
        }
        fn rig(&self) -> &LbsRig {
            <$t>::rig(self)
        }
        fn reset(&mut self, p: &[f64]) -> Result<()> {
            <$t>::reset(self, p)
        }
        fn match_rig_velocity(&mut self, p_next: &[f64], dt: f64) -> Result<()> {
            <$t>::match_rig_velocity(self, p_next, dt)
        }
        fn advance(&mut self, p_next: &[f64]) -> Result<usize> {
            <$t>::advance(self, p_next)
        }
        fn constraint_residual(&mut self) -> (f64, f64) {
            <$t>::constraint_residual(self)
        }
        fn set_damping(&mut self, zeta: f64) -> Result<()> {
            <$t>::set_damping(self, zeta)
        }
    };
}

/// The output methods of the full-order solvers, whose state (`positions()`, `displacement()`)
/// is coordinate-major `n·d`, and whose inherent `constraint_rank` is the trait's.
macro_rules! full_order_output {
    ($t:ty) => {
        fn constraint_rank(&self) -> ConstraintRank {
            <$t>::constraint_rank(self)
        }
        fn write_displacement(&mut self, out: &mut [f64]) {
            transpose_into(self.displacement(), <$t>::dim(self), out);
        }
        fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
            write_full_frame(self.positions(), self.displacement(), frame, disp)
        }
    };
}

impl CdSolver for FullOrderSolver {
    delegate_to_inherent!(FullOrderSolver);
    full_order_output!(FullOrderSolver);
    fn blendshape_residual(&self) -> (f64, f64) {
        FullOrderSolver::blendshape_residual(self)
    }
    fn lowest_frequency_hz(&self) -> Option<f64> {
        self.lowest_angular_frequency().map(|w| w / std::f64::consts::TAU)
    }
}

impl CdSolver for NewtonCdSolver {
    delegate_to_inherent!(NewtonCdSolver);
    full_order_output!(NewtonCdSolver);
}

impl CdSolver for FastSolver {
    delegate_to_inherent!(FastSolver);
    fn blendshape_residual(&self) -> (f64, f64) {
        FastSolver::blendshape_residual(self)
    }
    fn constraint_rank(&self) -> ConstraintRank {
        self.precompute().constraint_rows
    }
    fn write_displacement(&mut self, out: &mut [f64]) {
        out.fill(0.0);
        self.add_displacement(out);
    }
    fn write_frame(&mut self, frame: &mut [f64], disp: &mut [f64]) -> f64 {
        FastSolver::write_frame(self, frame, disp)
    }
    fn prepare_embedded(&mut self, corners: &[[usize; 4]], barycentric: &[[f64; 4]]) -> Result<bool> {
        FastSolver::prepare_embedded(self, corners, barycentric)
    }
    fn write_embedded_displacement(&mut self, out: &mut [f64]) -> bool {
        FastSolver::write_embedded_displacement(self, out)
    }
    fn fast_precompute(&self) -> Option<&FastPrecompute> {
        Some(self.precompute())
    }
    fn lowest_frequency_hz(&self) -> Option<f64> {
        Some(self.lowest_angular_frequency() / std::f64::consts::TAU)
    }
}
