//! Seed tutorial 17: a neo-Hookean cantilever sagging under gravity in the full space, a linear
//! modal analysis (LMA) subspace and a skinning-eigenmode subspace, and the rotation test.
//!
//! Setup (the tutorial's): a `50 × 11` vertex grid over `[−2, 2] × [−0.25, 0.25]` (cells split
//! along the `(i,j)–(i+1,j+1)` diagonal, [`centered_triangle_grid`]), stable neo-Hookean with
//! `E = 3000`, `ν = 0.4` (Lamé parameters passed unchanged), `ρ = 1` (lumped mass), `h = 0.02`,
//! gravity `−9.8`, the left column (`x ≤ min x + 1e-6`) pinned by springs of stiffness `1e7`,
//! 80 backward-Euler steps from rest, Newton with `tol = 1e-6`, 30 iterations at most. The tip
//! is the first vertex with the largest `x` (the bottom-right corner). LMA uses the 12 lowest
//! modes (`x = X + B z`); skinning eigenmodes use 12 weight fields (72 columns, `x = B z`).
//!
//! The rotation test rotates the rest shape by `θ ∈ [0°, 360°]` (73 samples), projects it into
//! each subspace in the mass norm and reports `‖Bz + q − x_θ‖_M / ‖x_θ‖_M`.

use serde::Serialize;

use crate::{
    linear_modal_analysis, ElastodynamicsParams, MassProjection, PenaltyPins, Subspace, SubspaceElastodynamics,
};
use overtone::dynamics::fast::skinning_eigenmodes;
use overtone::energy::{ElasticEnergy, EnergyModel};
use overtone::error::Result;
use overtone::fem::{lame_parameters, lumped_mass};
use overtone::mesh::{centered_triangle_grid, element_volumes, SimplexMesh};
use overtone::rig::lbs_jacobian;
use overtone::solve::NewtonParams;

/// All settings of the experiment; [`Default`] is the tutorial's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CantileverConfig {
    pub nx: usize,
    pub ny: usize,
    pub width: f64,
    pub height: f64,
    pub youngs_modulus: f64,
    pub poisson_ratio: f64,
    pub density: f64,
    pub dt: f64,
    pub gravity: f64,
    pub pin_stiffness: f64,
    pub steps: usize,
    /// LMA modes and skinning weight fields.
    pub modes: usize,
    pub newton_tolerance: f64,
    pub newton_max_iterations: usize,
    /// Samples of the rotation angle over `[0°, 360°]`.
    pub rotation_samples: usize,
}

impl Default for CantileverConfig {
    fn default() -> Self {
        Self {
            nx: 50,
            ny: 11,
            width: 4.0,
            height: 0.5,
            youngs_modulus: 3000.0,
            poisson_ratio: 0.4,
            density: 1.0,
            dt: 0.02,
            gravity: -9.8,
            pin_stiffness: 1e7,
            steps: 80,
            modes: 12,
            newton_tolerance: 1e-6,
            newton_max_iterations: 30,
            rotation_samples: 73,
        }
    }
}

/// Which space the beam is simulated in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SpaceKind {
    Full,
    Lma,
    Skinning,
}

/// One simulation.
#[derive(Clone, Debug, Serialize)]
pub struct DynamicsRun {
    pub space: SpaceKind,
    /// Subspace dimension `r`.
    pub dofs: usize,
    /// Tip height per frame (frame 0 = rest).
    pub tip_heights: Vec<f64>,
    /// Newton iterations per step.
    pub newton_iterations: Vec<usize>,
    /// Steps whose Newton loop did not meet the tolerance.
    pub unconverged_steps: usize,
    /// Largest `f(z_{k+1}) − f(z_k)` over all accepted Newton steps (≤ 0: never an increase).
    pub max_energy_change: f64,
    /// Min and max of area(deformed)/area(rest) over the elements, final frame.
    pub area_ratio: (f64, f64),
    /// Final positions, coordinate-major.
    pub final_positions: Vec<f64>,
}

/// The rotation test.
#[derive(Clone, Debug, Serialize)]
pub struct RotationTest {
    pub angles_deg: Vec<f64>,
    pub error_lma: Vec<f64>,
    pub error_skinning: Vec<f64>,
}

/// The beam and its operators.
pub struct Beam {
    pub mesh: SimplexMesh,
    /// Rest positions, coordinate-major.
    pub rest: Vec<f64>,
    pub vertex_mass: Vec<f64>,
    pub pins: PenaltyPins,
    pub tip: usize,
}

impl Beam {
    /// Builds the grid, the lumped masses, the wall pins and the tip vertex.
    pub fn new(cfg: &CantileverConfig) -> Result<Self> {
        let mesh = centered_triangle_grid(cfg.nx, cfg.ny, cfg.width, cfg.height)?;
        let n = mesh.n_vertices();
        let rest: Vec<f64> = (0..2)
            .flat_map(|i| (0..n).map(move |v| (i, v)))
            .map(|(i, v)| mesh.vertex(v)[i])
            .collect();
        let vertex_mass = lumped_mass(&mesh, &element_volumes(&mesh), cfg.density);
        let xmin = (0..n).map(|v| rest[v]).fold(f64::INFINITY, f64::min);
        let xmax = (0..n).map(|v| rest[v]).fold(f64::NEG_INFINITY, f64::max);
        let pinned: Vec<usize> = (0..n).filter(|&v| rest[v] <= xmin + 1e-6).collect();
        let targets = pinned.iter().flat_map(|&v| [rest[v], rest[n + v]]).collect();
        let tip = (0..n).find(|&v| rest[v] == xmax).unwrap_or(0);
        Ok(Self {
            mesh,
            rest,
            vertex_mass,
            pins: PenaltyPins {
                vertices: pinned,
                targets,
                stiffness: cfg.pin_stiffness,
            },
            tip,
        })
    }

    /// The subspace of `kind`.
    pub fn subspace(&self, cfg: &CantileverConfig, kind: SpaceKind) -> Result<Subspace> {
        let nd = self.rest.len();
        match kind {
            SpaceKind::Full => Ok(Subspace::full(nd)),
            SpaceKind::Lma => Subspace::reduced(linear_modal_analysis(&self.mesh, cfg.modes)?.basis, self.rest.clone()),
            SpaceKind::Skinning => {
                let weights = skinning_eigenmodes(&self.mesh, None, cfg.modes)?.weights;
                let basis = lbs_jacobian(self.mesh.dim(), self.mesh.vertices(), weights.as_ref())?;
                Subspace::reduced(basis, vec![0.0; nd])
            }
        }
    }

    /// The backward-Euler simulator in `subspace`.
    pub fn simulator(&self, cfg: &CantileverConfig, subspace: Subspace) -> Result<SubspaceElastodynamics> {
        let lame = lame_parameters(cfg.youngs_modulus, cfg.poisson_ratio)?;
        let energy = ElasticEnergy::new(&self.mesh, EnergyModel::NeoHookean, lame.mu, lame.lambda)?;
        let params = ElastodynamicsParams {
            dt: cfg.dt,
            newton: NewtonParams {
                tolerance: cfg.newton_tolerance,
                max_iterations: cfg.newton_max_iterations,
                ..Default::default()
            },
        };
        SubspaceElastodynamics::new(
            energy,
            &self.vertex_mass,
            &[0.0, cfg.gravity],
            &self.pins,
            subspace,
            &params,
            &self.rest,
        )
    }

    fn area_ratio(&self, x: &[f64]) -> (f64, f64) {
        let n = self.mesh.n_vertices();
        let area = |p: &dyn Fn(usize, usize) -> f64, el: &[usize]| {
            0.5 * ((p(el[1], 0) - p(el[0], 0)) * (p(el[2], 1) - p(el[0], 1))
                - (p(el[1], 1) - p(el[0], 1)) * (p(el[2], 0) - p(el[0], 0)))
        };
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for e in 0..self.mesh.n_elements() {
            let el = self.mesh.element(e);
            let r = area(&|v, i| x[i * n + v], el) / area(&|v, i| self.rest[i * n + v], el);
            lo = lo.min(r);
            hi = hi.max(r);
        }
        (lo, hi)
    }
}

/// Simulates the beam in `kind` for `cfg.steps` steps.
pub fn run_dynamics(cfg: &CantileverConfig, kind: SpaceKind) -> Result<DynamicsRun> {
    let beam = Beam::new(cfg)?;
    let subspace = beam.subspace(cfg, kind)?;
    let dofs = subspace.dim();
    let mut sim = beam.simulator(cfg, subspace)?;
    let n = beam.mesh.n_vertices();
    let mut tip_heights = vec![beam.rest[n + beam.tip]];
    let mut newton_iterations = Vec::with_capacity(cfg.steps);
    let mut unconverged_steps = 0;
    let mut max_energy_change = f64::NEG_INFINITY;
    for _ in 0..cfg.steps {
        let rep = sim.step()?;
        newton_iterations.push(rep.iterations.len());
        if !rep.converged {
            unconverged_steps += 1;
        }
        for it in rep.iterations.iter().filter(|it| it.step_length > 0.0) {
            max_energy_change = max_energy_change.max(it.new_energy - it.energy);
        }
        let x = sim.positions();
        tip_heights.push(x[n + beam.tip]);
    }
    let final_positions = sim.positions();
    Ok(DynamicsRun {
        space: kind,
        dofs,
        tip_heights,
        newton_iterations,
        unconverged_steps,
        max_energy_change,
        area_ratio: beam.area_ratio(&final_positions),
        final_positions,
    })
}

/// The rotation test for the LMA and skinning subspaces.
pub fn rotation_test(cfg: &CantileverConfig) -> Result<RotationTest> {
    let beam = Beam::new(cfg)?;
    let n = beam.mesh.n_vertices();
    let mass: Vec<f64> = (0..2).flat_map(|_| beam.vertex_mass.iter().cloned()).collect();
    let lma = beam.subspace(cfg, SpaceKind::Lma)?;
    let skin = beam.subspace(cfg, SpaceKind::Skinning)?;
    let (pl, ps) = (MassProjection::new(&lma, &mass)?, MassProjection::new(&skin, &mass)?);
    let samples = cfg.rotation_samples.max(2);
    let angles_deg: Vec<f64> = (0..samples).map(|s| 360.0 * s as f64 / (samples - 1) as f64).collect();
    let norm_m = |v: &[f64]| v.iter().zip(&mass).map(|(a, m)| m * a * a).sum::<f64>().sqrt();
    let mut error_lma = Vec::with_capacity(samples);
    let mut error_skinning = Vec::with_capacity(samples);
    for &deg in &angles_deg {
        let (s, c) = deg.to_radians().sin_cos();
        let mut y = vec![0.0; 2 * n];
        for v in 0..n {
            let (px, py) = (beam.rest[v], beam.rest[n + v]);
            y[v] = c * px - s * py;
            y[n + v] = s * px + c * py;
        }
        for (sub, proj, out) in [(&lma, &pl, &mut error_lma), (&skin, &ps, &mut error_skinning)] {
            let mut z = vec![0.0; sub.dim()];
            proj.project(&y, &mut z)?;
            let mut x = vec![0.0; 2 * n];
            sub.lift(&z, &mut x);
            let diff: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
            out.push(norm_m(&diff) / norm_m(&y));
        }
    }
    Ok(RotationTest {
        angles_deg,
        error_lma,
        error_skinning,
    })
}

/// The whole experiment's numbers.
#[derive(Clone, Debug, Serialize)]
pub struct CantileverResults {
    pub config: CantileverConfig,
    pub tip_full: f64,
    pub tip_lma: f64,
    pub tip_skin: f64,
    pub rot_err_lma_peak: f64,
    pub rot_err_lma_peak_angle_deg: f64,
    pub rot_err_skin_max: f64,
    pub full: DynamicsRun,
    pub lma: DynamicsRun,
    pub skinning: DynamicsRun,
    pub rotation: RotationTest,
}

/// Runs the three simulations and the rotation test.
pub fn run_experiment(cfg: &CantileverConfig) -> Result<CantileverResults> {
    let full = run_dynamics(cfg, SpaceKind::Full)?;
    let lma = run_dynamics(cfg, SpaceKind::Lma)?;
    let skinning = run_dynamics(cfg, SpaceKind::Skinning)?;
    let rotation = rotation_test(cfg)?;
    let (peak_idx, peak) = rotation
        .error_lma
        .iter()
        .cloned()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |a, (i, e)| if e > a.1 { (i, e) } else { a });
    let last = |r: &DynamicsRun| *r.tip_heights.last().unwrap_or(&f64::NAN);
    Ok(CantileverResults {
        config: cfg.clone(),
        tip_full: last(&full),
        tip_lma: last(&lma),
        tip_skin: last(&skinning),
        rot_err_lma_peak: peak,
        rot_err_lma_peak_angle_deg: rotation.angles_deg[peak_idx],
        rot_err_skin_max: rotation.error_skinning.iter().cloned().fold(0.0, f64::max),
        full,
        lma,
        skinning,
        rotation,
    })
}
