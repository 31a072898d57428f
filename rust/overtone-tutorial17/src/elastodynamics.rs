//! Backward-Euler elastodynamics in a subspace, minimised by Newton's method.

use faer::linalg::matmul::matmul;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::SparseColMatRef;
use faer::{Accum, Mat, MatRef, Par, Side};

use crate::{MassProjection, Subspace, SupernodalLlt};
use overtone::energy::ElasticEnergy;
use overtone::error::{check_finite, InputError, NumericalError, OvertoneError, Result};
use overtone::solve::{newton_minimize, NewtonParams, NewtonProblem, NewtonReport};

/// Vertices held near targets by stiff springs: `E = k/2 Σ_{v ∈ pins} ‖x_v − t_v‖²`.
#[derive(Clone, Debug, PartialEq)]
pub struct PenaltyPins {
    /// Pinned vertex indices.
    pub vertices: Vec<usize>,
    /// Targets, `pins × d` row-major.
    pub targets: Vec<f64>,
    /// Spring stiffness `k` (force per length), `≥ 0`.
    pub stiffness: f64,
}

/// Time stepping settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElastodynamicsParams {
    /// Time step `h` (s), `> 0`.
    pub dt: f64,
    /// Newton settings per step.
    pub newton: NewtonParams,
}

/// Backward Euler over `x = B z + q`: each step minimises over `z`
///
/// `E(z) = 1/(2h²) ‖x − x̃‖²_M + Ψ(x) − f_gᵀ x + k/2 Σ_pins ‖x_v − t_v‖²`,
/// `x̃ = x_n + h v_n = 2 x_n − x_{n−1}`,
///
/// with the gradient `Bᵀ∇E` and Hessian `BᵀHB` of the full-space terms (full integration: the
/// real energy is evaluated on every element and projected, no cubature). The elastic Hessian
/// is projected to PSD per element. In the full space the Newton system is a sparse Cholesky
/// whose symbolic analysis is done once; in a reduced space it is a dense `r × r` Cholesky.
pub struct SubspaceElastodynamics {
    energy: ElasticEnergy,
    /// Lumped mass per unknown (length `N`).
    mass: Vec<f64>,
    /// `f_g = M g` (length `N`).
    gravity_force: Vec<f64>,
    pin_dofs: Vec<usize>,
    pin_targets: Vec<f64>,
    pin_stiffness: f64,
    dt: f64,
    newton: NewtonParams,
    subspace: Subspace,
    x_tilde: Vec<f64>,
    z: Vec<f64>,
    z_prev: Vec<f64>,
    // workspace
    x: Vec<f64>,
    g_full: Vec<f64>,
    h_values: Vec<f64>,
    chol: Option<SupernodalLlt>,
}

impl SubspaceElastodynamics {
    /// `vertex_mass` is the lumped mass per vertex (length `n`, `> 0`); `gravity` has `d`
    /// components; `rest` (coordinate-major, length `N`) is projected into the subspace
    /// (mass-weighted) as the initial state, at rest.
    pub fn new(
        energy: ElasticEnergy,
        vertex_mass: &[f64],
        gravity: &[f64],
        pins: &PenaltyPins,
        subspace: Subspace,
        params: &ElastodynamicsParams,
        rest: &[f64],
    ) -> Result<Self> {
        let (n, d) = (energy.n_vertices(), energy.dim());
        let nd = n * d;
        if vertex_mass.len() != n {
            return Err(OvertoneError::size("vertex masses", n, vertex_mass.len()));
        }
        if let Some(v) = vertex_mass.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(OvertoneError::setting(
                "mass",
                vertex_mass[v],
                format!("vertex {v} needs a finite mass > 0"),
            ));
        }
        if gravity.len() != d {
            return Err(OvertoneError::size("gravity", d, gravity.len()));
        }
        check_finite("gravity", gravity, 1)?;
        if subspace.n_dofs() != nd {
            return Err(OvertoneError::size("subspace rows", nd, subspace.n_dofs()));
        }
        if rest.len() != nd {
            return Err(OvertoneError::size("rest positions", nd, rest.len()));
        }
        if !(params.dt.is_finite() && params.dt > 0.0) {
            return Err(OvertoneError::setting(
                "dt",
                params.dt,
                "the time step must be finite and > 0",
            ));
        }
        params.newton.validate()?;
        if !(pins.stiffness.is_finite() && pins.stiffness >= 0.0) {
            return Err(OvertoneError::setting(
                "pin stiffness",
                pins.stiffness,
                "must be finite and >= 0",
            ));
        }
        if pins.targets.len() != pins.vertices.len() * d {
            return Err(OvertoneError::size(
                "pin targets",
                pins.vertices.len() * d,
                pins.targets.len(),
            ));
        }
        check_finite("pin targets", &pins.targets, d)?;
        let mut pin_dofs = Vec::new();
        let mut pin_targets = Vec::new();
        for (p, &v) in pins.vertices.iter().enumerate() {
            if v >= n {
                return Err(OvertoneError::setting(
                    "pinned vertex",
                    v,
                    format!("the mesh has {n} vertices"),
                ));
            }
            for i in 0..d {
                pin_dofs.push(i * n + v);
                pin_targets.push(pins.targets[p * d + i]);
            }
        }
        let mass: Vec<f64> = (0..d).flat_map(|_| vertex_mass.iter().cloned()).collect();
        let gravity_force: Vec<f64> = (0..nd).map(|k| mass[k] * gravity[k / n]).collect();
        let mut z = vec![0.0; subspace.dim()];
        MassProjection::new(&subspace, &mass)?.project(rest, &mut z)?;
        let nnz = energy.values().len();
        Ok(Self {
            energy,
            mass,
            gravity_force,
            pin_dofs,
            pin_targets,
            pin_stiffness: pins.stiffness,
            dt: params.dt,
            newton: params.newton,
            subspace,
            x_tilde: vec![0.0; nd],
            z_prev: z.clone(),
            z,
            x: vec![0.0; nd],
            g_full: vec![0.0; nd],
            h_values: vec![0.0; nnz],
            chol: None,
        })
    }

    /// One backward-Euler step from the current state.
    pub fn step(&mut self) -> Result<NewtonReport> {
        let nd = self.x.len();
        let mut xn = vec![0.0; nd];
        let mut xp = vec![0.0; nd];
        self.subspace.lift(&self.z, &mut xn);
        self.subspace.lift(&self.z_prev, &mut xp);
        for k in 0..nd {
            self.x_tilde[k] = 2.0 * xn[k] - xp[k];
        }
        let mut z = self.z.clone();
        let params = self.newton;
        let report = newton_minimize(self, &mut z, &params)?;
        self.z_prev = std::mem::replace(&mut self.z, z);
        Ok(report)
    }

    /// Current positions `x = B z + q` (coordinate-major, length `N`).
    pub fn positions(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.x.len()];
        self.subspace.lift(&self.z, &mut x);
        x
    }
    /// Subspace coordinates.
    pub fn coordinates(&self) -> &[f64] {
        &self.z
    }
    /// The elastic energy.
    pub fn elastic_energy(&mut self) -> &mut ElasticEnergy {
        &mut self.energy
    }
    /// Sets the inertial target `x̃` directly (length `N`), e.g. to evaluate the step objective
    /// at an arbitrary state.
    pub fn set_inertial_target(&mut self, x_tilde: &[f64]) -> Result<()> {
        if x_tilde.len() != self.x_tilde.len() {
            return Err(OvertoneError::size(
                "inertial target",
                self.x_tilde.len(),
                x_tilde.len(),
            ));
        }
        self.x_tilde.copy_from_slice(x_tilde);
        Ok(())
    }

    /// Full-space gradient of the step objective at `x` into `g` (length `N`).
    pub fn full_gradient(&mut self, x: &[f64], g: &mut [f64]) -> Result<()> {
        self.energy.gradient(x, g)?;
        let h2 = self.dt * self.dt;
        for k in 0..x.len() {
            g[k] += self.mass[k] * (x[k] - self.x_tilde[k]) / h2 - self.gravity_force[k];
        }
        for (p, &k) in self.pin_dofs.iter().enumerate() {
            g[k] += self.pin_stiffness * (x[k] - self.pin_targets[p]);
        }
        Ok(())
    }

    /// Assembles the full-space Hessian of the step objective at `x` (elastic part projected
    /// to PSD) and returns it as a view over the energy's pattern.
    pub fn full_hessian(&mut self, x: &[f64]) -> Result<SparseColMatRef<'_, usize, f64>> {
        self.energy.hessian(x, true)?;
        self.h_values.copy_from_slice(self.energy.values());
        let diag = self.energy.diagonal_positions();
        let h2 = self.dt * self.dt;
        for (k, &pos) in diag.iter().enumerate() {
            self.h_values[pos] += self.mass[k] / h2;
        }
        for &k in &self.pin_dofs {
            self.h_values[diag[k]] += self.pin_stiffness;
        }
        Ok(SparseColMatRef::new(self.energy.pattern().as_ref(), &self.h_values))
    }

    /// Solves `H dz = −g` in the full space with the Hessian last assembled by
    /// [`full_hessian`](Self::full_hessian): a supernodal sparse Cholesky whose symbolic analysis
    /// (AMD ordering, supernodes, scatter maps) is done on first use; every later call is one
    /// numeric refactorization and two triangular solves. `rhs` holds `g` on entry, `dz` on exit.
    pub fn full_solve(&mut self, rhs: &mut [f64]) -> Result<()> {
        if rhs.len() != self.x.len() {
            return Err(OvertoneError::size("right-hand side", self.x.len(), rhs.len()));
        }
        let h = SparseColMatRef::new(self.energy.pattern().as_ref(), &self.h_values);
        match &mut self.chol {
            Some(c) => c.refactor(h)?,
            None => self.chol = Some(SupernodalLlt::new(h, "Newton system M/h² + K + pins")?),
        }
        let chol = self.chol.as_mut().expect("factored above");
        chol.solve_in_place(rhs)?;
        rhs.iter_mut().for_each(|v| *v = -*v);
        Ok(())
    }
}

impl NewtonProblem for SubspaceElastodynamics {
    fn energy(&mut self, z: &[f64]) -> Result<f64> {
        let mut x = std::mem::take(&mut self.x);
        self.subspace.lift(z, &mut x);
        let psi = self.energy.energy(&x);
        let h2 = self.dt * self.dt;
        let mut e = 0.0;
        for k in 0..x.len() {
            let dx = x[k] - self.x_tilde[k];
            e += 0.5 * self.mass[k] * dx * dx / h2 - self.gravity_force[k] * x[k];
        }
        for (p, &k) in self.pin_dofs.iter().enumerate() {
            let dx = x[k] - self.pin_targets[p];
            e += 0.5 * self.pin_stiffness * dx * dx;
        }
        self.x = x;
        match psi {
            Ok(psi) => Ok(psi + e),
            // Non-finite trial positions: the line search rejects the step.
            Err(OvertoneError::Input(InputError::NonFinite { .. })) => Ok(f64::NAN),
            Err(other) => Err(other),
        }
    }

    fn gradient(&mut self, z: &[f64], g: &mut [f64]) -> Result<()> {
        let mut x = std::mem::take(&mut self.x);
        let mut gf = std::mem::take(&mut self.g_full);
        self.subspace.lift(z, &mut x);
        let r = self.full_gradient(&x, &mut gf);
        self.subspace.restrict(&gf, g);
        self.x = x;
        self.g_full = gf;
        r
    }

    fn direction(&mut self, z: &[f64], g: &[f64], dz: &mut [f64]) -> Result<()> {
        let mut x = std::mem::take(&mut self.x);
        self.subspace.lift(z, &mut x);
        let r = self.full_hessian(&x).map(|_| ());
        self.x = x;
        r?;
        match self.subspace.basis() {
            None => {
                dz.copy_from_slice(g);
                self.full_solve(dz)
            }
            Some(b) => {
                let (nd, r) = (b.nrows(), b.ncols());
                let h = SparseColMatRef::new(self.energy.pattern().as_ref(), &self.h_values);
                let mut hb = Mat::<f64>::zeros(nd, r);
                sparse_dense_matmul(hb.as_mut(), Accum::Replace, h, b, 1.0, Par::Seq);
                let mut hr = Mat::<f64>::zeros(r, r);
                matmul(hr.as_mut(), Accum::Replace, b.transpose(), hb.as_ref(), 1.0, Par::Seq);
                let llt = hr.llt(Side::Lower).map_err(|e| NumericalError::Factorization {
                    matrix: "reduced Newton system BᵀHB".into(),
                    reason: format!("{e:?}"),
                })?;
                let sol = llt.solve(MatRef::from_column_major_slice(g, r, 1));
                for k in 0..r {
                    dz[k] = -sol[(k, 0)];
                }
                Ok(())
            }
        }
    }
}
