//! Material and solver settings.

use serde::{Deserialize, Serialize};

use crate::error::{OvertoneError, Result};

/// Default damping ratio of the production scheme: a visible follow-through that decays to
/// a few percent within two to three periods.
pub(crate) const DEFAULT_DAMPING: f64 = 0.1;

/// Default frequency of a character's lowest vibration mode, Hz (hosts and glTF bakes; scene
/// files keep their Young's modulus unless they give a frequency). Both solvers rescale the
/// stiffness to it at bind, each on its own lowest mode, so the solver switch keeps the jiggle's
/// rate: at one Young's modulus the reduced model, stiffened by its subspace and rotation
/// clusters, rang ~1.5x as fast as the full model (CesiumMan 6.2 vs 4.2 Hz at the former
/// default 2.5e4), and stocky bodies twice as fast as slender ones (mannequin 12.4 Hz, avatar
/// 13.4 Hz). Measured when choosing it: a live host's frame-rate independence degrades as the
/// body's period nears a few host frames (Blender CesiumMan, 96 vs 24 fps: 1.8% of the peak at
/// 4 Hz, 3.8% at 5, 6.6% at 6), and a layered avatar's motion grows as the frequency drops
/// (peak 1.7% / 3.0% / 6.1% of its diagonal at 6 / 5 / 4 Hz, still 0.45% one second after
/// the rig stops at 4 Hz).
pub const DEFAULT_FREQUENCY: f64 = 5.0;

/// An ARAP material: `E` and `ν` give the shear modulus `μ`, density gives the lumped mass.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Material {
    /// Young's modulus `E` (Pa in SI units). Stiffer materials jiggle faster and less.
    pub youngs_modulus: f64,
    /// Poisson ratio `ν` in `(−1, 0.5)`. ARAP uses only `μ = E/(2(1+ν))`.
    pub poisson_ratio: f64,
    /// Density `ρ` (kg/m³ in SI units), `> 0`.
    pub density: f64,
}

impl Default for Material {
    /// `E = 1e5`, `ν = 0`, `ρ = 1000`: the seed tutorial's beam.
    fn default() -> Self {
        Self {
            youngs_modulus: 1e5,
            poisson_ratio: 0.0,
            density: 1e3,
        }
    }
}

/// The time integrator of a frame (see [`crate::dynamics::time_integration`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Integrator {
    /// One backward-Euler step of the whole frame (`substeps` ignored): the seeds' scheme,
    /// strongly dissipative at large steps (kept so the seed comparisons stay exact).
    BackwardEuler,
    /// Implicit midpoint on `substeps` equal substeps: second order, no numerical
    /// dissipation on a linear system (every loss of motion comes from `damping`).
    ImplicitMidpoint,
}

impl Integrator {
    /// The scene-file / CLI name (`backward_euler`, `implicit_midpoint`).
    pub fn name(self) -> &'static str {
        match self {
            Integrator::BackwardEuler => "backward_euler",
            Integrator::ImplicitMidpoint => "implicit_midpoint",
        }
    }
    /// Parses [`name`](Self::name) (also with `-` for `_`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.replace('-', "_").as_str() {
            "backward_euler" => Ok(Integrator::BackwardEuler),
            "implicit_midpoint" | "midpoint" => Ok(Integrator::ImplicitMidpoint),
            _ => Err(OvertoneError::setting(
                "integrator",
                s,
                "choose backward_euler or implicit_midpoint",
            )),
        }
    }
}

/// The elastic reference shape of complementary dynamics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RestShape {
    /// The paper's fixed rest (bind) shape: a posed rig away from bind is elastically stressed,
    /// so physics may reshape a bad pose (and a held pose keeps a static offset).
    Bind,
    /// The rig pose is the elastic reference. With the ARAP solvers (full-order local/global
    /// and fast) each element's (each cluster's) reference is the rig pose's rotation of it,
    /// its stretch dropped: `E_rig(u) = Σ_e μ vol_e/2 · min_R ‖F_e(u) + R_e(J p) − R‖²`
    /// (`R_e(J p)` the rotation closest to `F_e(J p)`), zero at `u_c = 0`, so every held pose
    /// is a minimum. The earlier form `E(J p + u) − ∇E(J p)·u` cancelled only the force: it
    /// kept the stiffness of the stress the skinning puts in, which is negative for rotations
    /// of an element it compresses (`tr((S − I)(I − Q)) < 0` for a stretch `S < I` and a
    /// rotation `Q ≠ I`), so the regions linear blend skinning collapses (CesiumMan's crotch
    /// in a stride) buckled into a 6 cm bulge held for half a second. The Newton
    /// (neo-Hookean) solver keeps that form.
    Rig,
}

impl RestShape {
    /// The scene-file / CLI name (`bind`, `rig`).
    pub fn name(self) -> &'static str {
        match self {
            RestShape::Bind => "bind",
            RestShape::Rig => "rig",
        }
    }
    /// Parses [`name`](Self::name).
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "bind" => Ok(RestShape::Bind),
            "rig" => Ok(RestShape::Rig),
            _ => Err(OvertoneError::setting("rest", s, "choose rig or bind")),
        }
    }
}

/// Time stepping, damping and material-field settings shared by every solver; each solver's
/// iteration controls are its own ([`LocalGlobalParams`], [`crate::dynamics::NewtonCdParams`],
/// [`crate::dynamics::FastParams`]).
///
/// The defaults are the seeds' scheme (one backward-Euler step per frame, no damping, bind
/// rest, uniform stiffness), so a solver built with `SolverParams::default()` reproduces the
/// seed tutorials; [`SolverParams::art_directable`] gives Overtone's production defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverParams {
    /// Time advanced per call of `step`/`advance` (one frame), seconds of physics time, `> 0`.
    /// Default `1/100`.
    pub dt: f64,
    /// Gravity acceleration (length/s²), `d` components. Default zero.
    pub gravity: Vec<f64>,
    /// Time integrator. Default [`Integrator::BackwardEuler`] (the seeds').
    pub integrator: Integrator,
    /// Substeps per frame for [`Integrator::ImplicitMidpoint`]; `None` chooses them (see
    /// [`crate::dynamics::time_integration::auto_substeps`]). Default `Some(1)`.
    pub substeps: Option<usize>,
    /// Damping ratio `ζ ≥ 0` of the low vibration modes of the complementary motion
    /// (0 none, 1 critical): the ARAP solvers give each of their lowest vibration modes exactly
    /// `ζ` (modal damping, see `modal_damping`; higher modes get a stiffness-proportional
    /// part), Newton's method `C = 2ζω₁ M`. Default 0.
    pub damping: f64,
    /// If set, the lowest vibration mode's frequency in Hz: the stiffness (Young's modulus) is
    /// rescaled so the lowest mode vibrates at this rate. Default `None`.
    pub frequency: Option<f64>,
    /// Elastic reference shape. Default [`RestShape::Bind`] (the paper's).
    pub rest: RestShape,
    /// Per-vertex multiplier of Young's modulus (`n` values `> 0`; an element takes the mean of
    /// its vertices'); empty means 1 everywhere. Default empty.
    pub stiffness: Vec<f64>,
    /// Per-vertex share of the material a lattice vertex stands for (`n` values in `(0, 1]`;
    /// an element takes the mean of its vertices'): an embedding lattice keeps every cube the
    /// surface crosses whole, and `fill` scales each element's volume in the mass and the
    /// stiffness (`m = ρ Σ fill_e vol_e / (d+1)`, weight `μ fill_e vol_e`) so the lattice has the
    /// body's mass and stiffness rather than its cubes'. Empty means 1 everywhere (a tet mesh
    /// that is the body). Default empty.
    pub fill: Vec<f64>,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            dt: 0.01,
            gravity: Vec::new(),
            integrator: Integrator::BackwardEuler,
            substeps: Some(1),
            damping: 0.0,
            frequency: None,
            rest: RestShape::Bind,
            stiffness: Vec::new(),
            fill: Vec::new(),
        }
    }
}

/// The iteration controls of the full-order ARAP local/global solver
/// ([`crate::dynamics::FullOrderSolver`]): alternate the per-element best-fit rotations (local)
/// and one prefactored linear solve (global) `iterations` times per solve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalGlobalParams {
    /// Local/global iterations per solve, `≥ 1`. Default 10 (the seed's). More: closer to the
    /// exact backward-Euler minimiser; cost grows linearly.
    pub iterations: usize,
    /// If set, stop iterating early once `‖Δu‖_∞ ≤ tolerance · max(‖u‖_∞, 1e-12)`
    /// (dimensionless, `≥ 0`). Default `None`: always run `iterations`.
    pub tolerance: Option<f64>,
}

impl Default for LocalGlobalParams {
    fn default() -> Self {
        Self {
            iterations: 10,
            tolerance: None,
        }
    }
}

impl LocalGlobalParams {
    /// Iterations to convergence: up to 100, stopping once the relative update is below
    /// `1e-4`. The full-order default of a scene stepped by backward Euler
    /// ([`crate::scene::SolverKind::full_order_for`]): one large implicit step per frame
    /// starts far from its minimiser, where the fixed 10 iterations (enough for the short
    /// substeps of the implicit midpoint, started from the inertial prediction) stop short.
    /// Measured on the reference release's elephant (frames 1-20 against an independent
    /// solve to round-off): 10 iterations differ by 3.5% of the motion and peak 10% low;
    /// these by 0.12% and 0.3%.
    pub fn converged() -> Self {
        Self {
            iterations: 100,
            tolerance: Some(1e-4),
        }
    }

    /// Refuses no iteration and a negative or non-finite tolerance.
    pub fn validate(&self) -> Result<()> {
        if self.iterations == 0 {
            return Err(OvertoneError::setting(
                "iterations",
                0,
                "at least one local/global iteration is needed",
            ));
        }
        if let Some(t) = self.tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(OvertoneError::setting("tolerance", t, "must be a finite number >= 0"));
            }
        }
        Ok(())
    }
}

/// Largest accepted substep count per frame.
pub(crate) const MAX_SUBSTEPS: usize = 64;

impl SolverParams {
    /// Per-element stiffness multipliers (the mean of each element's vertices'), or `None` for
    /// a uniform material. Refuses a field whose length is not the vertex count.
    pub(crate) fn element_stiffness(&self, mesh: &crate::mesh::SimplexMesh) -> Result<Option<Vec<f64>>> {
        element_means(mesh, "stiffness field", &self.stiffness)
    }

    /// Element volumes scaled by the [`fill`](Self::fill) (the mean of each element's
    /// vertices'): the volumes the mass and the stiffness are assembled from. Refuses a fill
    /// whose length is not the vertex count.
    pub(crate) fn effective_volumes(&self, mesh: &crate::mesh::SimplexMesh) -> Result<Vec<f64>> {
        let mut vols = crate::mesh::element_volumes(mesh);
        if let Some(shares) = element_means(mesh, "fill field", &self.fill)? {
            for (v, s) in vols.iter_mut().zip(shares) {
                *v *= s;
            }
        }
        Ok(vols)
    }

    /// Checks ranges for a `dim`-dimensional scene; an empty gravity means zero.
    pub fn validate(&self, dim: usize) -> Result<()> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(OvertoneError::setting(
                "dt",
                self.dt,
                "the time step must be a finite number of seconds > 0",
            ));
        }
        if !self.gravity.is_empty() && self.gravity.len() != dim {
            return Err(OvertoneError::size(
                "gravity",
                format!("{dim} components"),
                self.gravity.len(),
            ));
        }
        // The ranges of the settings table's rows (one source for every caller).
        let row = |name: &str| crate::settings::spec(name);
        if let Some(n) = self.substeps {
            row("substeps")?.check_number(n as f64)?;
        }
        row("damping")?.check_number(self.damping)?;
        if let Some(f) = self.frequency {
            row("frequency")?.check_number(f)?;
        }
        if let Some((v, s)) = self
            .stiffness
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s > 0.0))
        {
            return Err(OvertoneError::setting(
                "stiffness",
                s,
                format!("the stiffness multiplier of vertex {v} must be a finite number > 0"),
            ));
        }
        if let Some((v, f)) = self
            .fill
            .iter()
            .enumerate()
            .find(|(_, f)| !(f.is_finite() && **f > 0.0 && **f <= 1.0))
        {
            return Err(OvertoneError::setting(
                "fill",
                f,
                format!("the material share of vertex {v} must be a number in (0, 1]"),
            ));
        }
        if self.gravity.iter().any(|g| !g.is_finite()) {
            return Err(OvertoneError::setting(
                "gravity",
                format!("{:?}", self.gravity),
                "must be finite",
            ));
        }
        Ok(())
    }
}

impl Material {
    /// Checks that `E > 0`, `−1 < ν < 0.5`, `ρ > 0`, all finite.
    pub fn validate(&self) -> Result<()> {
        crate::fem::lame_parameters(self.youngs_modulus, self.poisson_ratio)?;
        if !(self.density.is_finite() && self.density > 0.0) {
            return Err(OvertoneError::setting(
                "density",
                self.density,
                "must be a finite number > 0",
            ));
        }
        Ok(())
    }
}

/// Per element the mean of a per-vertex `field` over the element's vertices, or `None` when
/// the field is empty (not given). Refuses a field whose length is not the vertex count,
/// naming it `what`.
fn element_means(mesh: &crate::mesh::SimplexMesh, what: &str, field: &[f64]) -> Result<Option<Vec<f64>>> {
    if field.is_empty() {
        return Ok(None);
    }
    if field.len() != mesh.n_vertices() {
        return Err(OvertoneError::size(
            what,
            format!("{} values (one per vertex)", mesh.n_vertices()),
            field.len(),
        ));
    }
    Ok(Some(
        (0..mesh.n_elements())
            .map(|e| {
                let el = mesh.element(e);
                el.iter().map(|&v| field[v]).sum::<f64>() / el.len() as f64
            })
            .collect(),
    ))
}
