//! A floor plane with restitution and Coulomb friction.

use crate::error::{OvertoneError, Result};

/// The half-space `n · x ≥ offset` (unit normal `n`) that particles may not leave.
///
/// The seed does not describe its floor; we use the usual particle response at the velocity
/// level, applied before the position update (eq. 5) to each particle that would end the step
/// below the plane: a fast impact (`−v_n >` [`resting_speed`](Self::resting_speed)) reflects the
/// normal velocity to `−e v_n` (restitution `e`); a slow one lands the particle exactly on the
/// plane (`v_n = −gap/h`, resting contact). The tangential velocity loses `μ` times the normal
/// velocity change (Coulomb friction with coefficient `μ`), never reversing. Changing only
/// velocities (no teleporting of positions) adds no energy, so a resting body stays at rest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floor {
    /// Unit normal pointing out of the floor (default `(0, 1, 0)`: y up).
    pub normal: [f64; 3],
    /// The plane is `n · x = offset` (default 0).
    pub offset: f64,
    /// Restitution `e ∈ [0, 1]`: 0 kills the normal velocity, 1 bounces elastically. Default 0.3.
    pub restitution: f64,
    /// Friction coefficient `μ ≥ 0`. Default 0.5.
    pub friction: f64,
    /// Impacts slower than this (length/s) do not bounce (resting contact; the usual restitution
    /// velocity threshold of rigid-body engines): the normal velocity becomes 0. Without it a
    /// body resting under gravity keeps bouncing on its lowest particles. Default 0.5.
    pub resting_speed: f64,
}

impl Default for Floor {
    fn default() -> Self {
        Self {
            normal: [0.0, 1.0, 0.0],
            offset: 0.0,
            restitution: 0.3,
            friction: 0.5,
            resting_speed: 0.5,
        }
    }
}

impl Floor {
    /// Checks `|n| = 1` (to 1e-9), finite offset, `e ∈ [0, 1]`, `μ ≥ 0`.
    pub fn validate(&self) -> Result<()> {
        let nn: f64 = self.normal.iter().map(|x| x * x).sum();
        if !((nn - 1.0).abs() <= 1e-9) {
            return Err(OvertoneError::setting(
                "floor.normal",
                format!("{:?}", self.normal),
                "must be a unit vector",
            ));
        }
        if !self.offset.is_finite() {
            return Err(OvertoneError::setting("floor.offset", self.offset, "must be finite"));
        }
        if !(self.restitution.is_finite() && (0.0..=1.0).contains(&self.restitution)) {
            return Err(OvertoneError::setting(
                "floor.restitution",
                self.restitution,
                "must be in [0, 1]",
            ));
        }
        if !(self.resting_speed.is_finite() && self.resting_speed >= 0.0) {
            return Err(OvertoneError::setting(
                "floor.resting_speed",
                self.resting_speed,
                "must be >= 0",
            ));
        }
        if !(self.friction.is_finite() && self.friction >= 0.0) {
            return Err(OvertoneError::setting("floor.friction", self.friction, "must be >= 0"));
        }
        Ok(())
    }

    /// Resolves contact for one particle at `x` with velocity `v` about to move by `h v`;
    /// returns whether it touches the floor this step.
    #[inline]
    pub(crate) fn respond(&self, x: &[f64; 3], v: &mut [f64; 3], h: f64) -> bool {
        let n = self.normal;
        let gap = n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - self.offset;
        let vn = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
        if gap + h * vn >= 0.0 {
            return false;
        }
        let vn_new = if -vn > self.resting_speed {
            -self.restitution * vn
        } else {
            -gap / h
        };
        let dvn = vn_new - vn;
        let mut vt = [v[0] - vn * n[0], v[1] - vn * n[1], v[2] - vn * n[2]];
        let vt_len = (vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]).sqrt();
        let scale = if vt_len > 0.0 {
            (1.0 - self.friction * dvn.abs() / vt_len).max(0.0)
        } else {
            0.0
        };
        vt.iter_mut().for_each(|c| *c *= scale);
        for i in 0..3 {
            v[i] = vt[i] + vn_new * n[i];
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A particle hitting the floor at (3, −4) m/s with e = 0.5, μ = 0.25 leaves at
    /// (3 − 0.25·6, 2) = (1.5, 2) m/s; a slow one lands exactly on the plane.
    #[test]
    fn restitution_and_friction() {
        let f = Floor {
            restitution: 0.5,
            friction: 0.25,
            resting_speed: 0.0,
            ..Default::default()
        };
        let x = [0.0, 0.01, 0.0];
        let mut v = [3.0, -4.0, 0.0];
        assert!(f.respond(&x, &mut v, 0.01));
        assert!((v[0] - 1.5).abs() < 1e-14 && (v[1] - 2.0).abs() < 1e-14);
        // Friction never reverses the sliding direction.
        let mut v = [0.1, -4.0, 0.0];
        f.respond(&x, &mut v, 0.01);
        assert_eq!(v[0], 0.0);
        // Resting contact: lands on the plane.
        let slow = Floor::default();
        let mut v = [0.0, -0.2, 0.0];
        assert!(slow.respond(&[0.0, 0.001, 0.0], &mut v, 0.01));
        assert!((0.001 + 0.01 * v[1]).abs() < 1e-15);
        assert!(!slow.respond(&[0.0, 0.1, 0.0], &mut v, 0.01));
    }
}
