//! Settings of the shape-matching solver.

use crate::error::{OvertoneError, Result};
use crate::shape_matching::Floor;

/// Time stepping, stiffness, damping and the environment of [`super::ShapeMatchingSolver`].
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeMatchingParams {
    /// Time step `h` (s), `> 0`. Default `1/240` (four steps per 60 Hz frame; the seed does not
    /// state `h`). Under gravity `g` each region settles about `h² g / α` off its goal, and
    /// with 1-ring regions these offsets add up over the body: at `h = 1/60` the 225-particle
    /// cuboid sags by a fifth of its height and the 1.2 m cylinder collapses, at `1/240` both
    /// rest within a few millimetres of their shape.
    pub dt: f64,
    /// Stiffness `α ∈ [0, 1]` of eq. (4): the fraction of the distance to the goal closed per
    /// step (Müller et al. 2005). Default 0.5. 1: as stiff as the step allows; the effective
    /// oscillation frequency grows like `√α / h`.
    pub alpha: f64,
    /// Gravity (length/s²). Default `(0, −9.8, 0)`.
    pub gravity: [f64; 3],
    /// Per-step damping `k ∈ [0, 1]` of the velocity that is not a rigid motion (Müller et al.
    /// 2007, "Position based dynamics", §3.5): `v ← v + k (v_cm + ω × r − v)`. It preserves
    /// linear and angular momentum exactly. Default 0.02. The seed has no damping term; without
    /// one, undamped shape matching keeps oscillating.
    pub damping: f64,
    /// Optional floor plane. Default `Some(Floor::default())`.
    pub floor: Option<Floor>,
}

impl Default for ShapeMatchingParams {
    fn default() -> Self {
        Self {
            dt: 1.0 / 240.0,
            alpha: 0.5,
            gravity: [0.0, -9.8, 0.0],
            damping: 0.02,
            floor: Some(Floor::default()),
        }
    }
}

impl ShapeMatchingParams {
    /// Free flight: no gravity, no floor, no damping (momentum is then conserved).
    pub fn free() -> Self {
        Self {
            gravity: [0.0; 3],
            damping: 0.0,
            floor: None,
            ..Self::default()
        }
    }

    /// Checks every setting's range.
    pub fn validate(&self) -> Result<()> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(OvertoneError::setting(
                "dt",
                self.dt,
                "must be a finite number of seconds > 0",
            ));
        }
        if !(self.alpha.is_finite() && (0.0..=1.0).contains(&self.alpha)) {
            return Err(OvertoneError::setting(
                "alpha",
                self.alpha,
                "stiffness must be in [0, 1] (larger values overshoot the goal and are unstable)",
            ));
        }
        if self.gravity.iter().any(|g| !g.is_finite()) {
            return Err(OvertoneError::setting(
                "gravity",
                format!("{:?}", self.gravity),
                "must be finite",
            ));
        }
        if !(self.damping.is_finite() && (0.0..=1.0).contains(&self.damping)) {
            return Err(OvertoneError::setting("damping", self.damping, "must be in [0, 1]"));
        }
        if let Some(f) = &self.floor {
            f.validate()?;
        }
        Ok(())
    }
}
