//! Material and solver settings.

use serde::{Deserialize, Serialize};

use crate::error::{OvertoneError, Result};

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

/// Time stepping and local/global iteration settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverParams {
    /// Time step `h` in seconds (one step per frame), `> 0`. Default `1/100`.
    pub dt: f64,
    /// Local/global iterations per step. Default 10 (the seed's). More: closer to the exact
    /// backward-Euler minimiser; cost grows linearly.
    pub iterations: usize,
    /// If set, stop iterating early once `‖Δu‖_∞ ≤ tolerance · max(‖u‖_∞, 1e-12)`.
    pub tolerance: Option<f64>,
    /// Gravity acceleration (length/s²), `d` components. Default zero.
    pub gravity: Vec<f64>,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            dt: 0.01,
            iterations: 10,
            tolerance: None,
            gravity: Vec::new(),
        }
    }
}

impl SolverParams {
    /// Checks ranges for a `dim`-dimensional scene; an empty gravity means zero.
    pub fn validate(&self, dim: usize) -> Result<()> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(OvertoneError::setting(
                "dt",
                self.dt,
                "the time step must be a finite number of seconds > 0",
            ));
        }
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
        if !self.gravity.is_empty() && self.gravity.len() != dim {
            return Err(OvertoneError::size(
                "gravity",
                format!("{dim} components"),
                self.gravity.len(),
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
