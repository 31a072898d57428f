//! The fixed physics clock: the rate every host and every bake steps the default integrator at,
//! whatever the frame rate, and how a host's frames are split into its steps.

use crate::error::Result;

/// Physics steps per second of animation (Hz) with the default integrator (implicit midpoint),
/// in hosts and in glTF bakes alike; each step still takes the automatic substeps
/// (`ω₁Δ ≤ 0.5`; the fast solver `ω₁Δ ≤ 0.75`).
///
/// Why 240 Hz: the secondary motion of the test characters carries frequencies well above the
/// lowest mode's (CesiumMan, fast solver: ω₁ = 114 rad/s, visible content near 300 rad/s), so
/// samples of the displacement at 120 Hz, interpolated to 96 fps instants, are off by 8.9% of
/// the motion (cubic; 13% linear), at 240 Hz by 1.7% (cubic). 240 is also a multiple of 24, 30,
/// 48, 60, 80 and 120 fps, whose frames are physics instants exactly.
pub const PHYSICS_RATE: f64 = 240.0;

/// Splits a host's frames into steps of a fixed clock: a host hands one pose per frame, the
/// physics steps every `1/`[`PHYSICS_RATE`] s of animation, the rig interpolated between the
/// frame's poses at each step's instant.
///
/// `phase` (in `[0, 1)` steps) is how far the host's time is ahead of the last physics step:
/// a frame of `L = PHYSICS_RATE/fps` steps holds the steps `j = 1..=⌊phase + L⌋`, the `j`-th at
/// the fraction `s_j = (j − phase)/L ∈ (0, 1]` of the frame. At 24, 30, 48, 60, 80, 120 and
/// 240 fps every frame ends on a step; at 96 fps (2.5 steps a frame) every other frame does
/// and the others show the state of the step 1/480 s before them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhysicsClock {
    phase: f64,
}

impl PhysicsClock {
    /// Back to a frame that ends on a step (a bind, a reset, a cut).
    pub fn reset(&mut self) {
        self.phase = 0.0;
    }

    /// Advances one host frame of `steps_per_frame` (`L = PHYSICS_RATE/fps`, finite and `> 0`)
    /// physics steps, calling `step(s_j)` for each step in order with the fraction of the frame
    /// at its instant; returns the number of steps. An error from `step` is returned at once
    /// and the clock is left at the frame's start.
    pub fn advance(&mut self, steps_per_frame: f64, mut step: impl FnMut(f64) -> Result<()>) -> Result<usize> {
        let total = self.phase + steps_per_frame;
        // A frame that ends within round-off of a step ends on it (10.01 steps at 23.976 fps
        // accumulate; 2.5 + 2.5 at 96 fps lands on 5 exactly).
        let k = (total + 1e-9).floor().max(0.0) as usize;
        for j in 1..=k {
            step((j as f64 - self.phase) / steps_per_frame)?;
        }
        self.phase = (total - k as f64).max(0.0);
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of 2.5 steps (96 fps) take 2 and 3 steps in turn, ending on a step every other
    /// frame; the fractions lie in (0, 1] and the steps' instants are evenly spaced by 1/L.
    #[test]
    fn frames_of_two_and_a_half_steps_alternate() {
        let mut c = PhysicsClock::default();
        let mut instants = Vec::new();
        for frame in 0..4 {
            let n = c
                .advance(2.5, |s| {
                    assert!(s > 0.0 && s <= 1.0, "fraction {s}");
                    instants.push(frame as f64 + s);
                    Ok(())
                })
                .unwrap();
            assert_eq!(n, if frame % 2 == 0 { 2 } else { 3 });
        }
        assert_eq!(instants.len(), 10);
        for (j, t) in instants.iter().enumerate() {
            assert!((t - (j + 1) as f64 / 2.5).abs() < 1e-12, "step {j} at {t}");
        }
    }

    /// 1001 frames at 23.976 fps (10.01 steps each) take 10020 steps (10020.01 rounded down),
    /// and a failing step leaves the clock where the frame started.
    #[test]
    fn fractional_rates_accumulate_and_failures_change_nothing() {
        let l = PHYSICS_RATE / (24000.0 / 1001.0);
        let mut c = PhysicsClock::default();
        let total: usize = (0..1001).map(|_| c.advance(l, |_| Ok(())).unwrap()).sum();
        assert_eq!(total, 10020);
        let before = c;
        let failed = c.advance(l, |_| Err(crate::OvertoneError::Cancelled));
        assert!(failed.is_err());
        assert_eq!(c, before);
    }
}
