//! The physics clock of glTF bakes: one fixed physics rate for every output frame rate, the
//! rate the animation is sampled at so that both the physics instants and the output instants
//! are samples, and the interpolation of the physics samples' displacements to the output
//! instants.
//!
//! A bake at 24 fps and one at 96 fps then run the same physics (the same rig samples, the same
//! step `1/`[`PHYSICS_RATE`], the same substeps) and differ only where an output instant falls
//! between two physics samples: there the displacement is the cubic through the four nearest
//! samples ([`interpolation_weights`]). The rig part of every output frame is the glTF's own
//! pose at the output instant, never interpolated.

/// Physics steps per second of animation (Hz): the core's ([`overtone::dynamics::PHYSICS_RATE`],
/// where the choice of 240 Hz is explained), shared with the hosts.
pub use overtone::dynamics::PHYSICS_RATE;

/// Largest factor between the animation's sampling rate and [`PHYSICS_RATE`]: a common
/// sampling rate for the physics and the output is looked for among `a·PHYSICS_RATE`,
/// `a = 1..=MAX_SAMPLING_FACTOR` (96 fps: 480 Hz, 25 fps: 1200 Hz).
pub const MAX_SAMPLING_FACTOR: usize = 5;

/// How a glTF bake samples the animation and steps the physics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicsClock {
    /// Rate the animation is sampled at (Hz): a multiple of the output rate and, when
    /// `common`, of [`PHYSICS_RATE`].
    pub sampling_rate: f64,
    /// Animation samples per physics step.
    pub per_step: usize,
    /// Animation samples per output frame.
    pub per_frame: usize,
    /// Whether the physics runs at [`PHYSICS_RATE`] whatever the output rate. When no sampling
    /// rate up to `MAX_SAMPLING_FACTOR·PHYSICS_RATE` is a multiple of both (23.976 fps), the
    /// physics runs at the multiple of the output rate nearest [`PHYSICS_RATE`] instead
    /// (239.76 Hz), one step per sample.
    pub common: bool,
}

impl PhysicsClock {
    /// The clock of an output rate `fps` (frames per second, finite and > 0).
    pub fn new(fps: f64) -> anyhow::Result<Self> {
        anyhow::ensure!(
            fps.is_finite() && fps > 0.0,
            "--fps must be a positive number, not {fps}"
        );
        for a in 1..=MAX_SAMPLING_FACTOR {
            let rate = a as f64 * PHYSICS_RATE;
            let per_frame = rate / fps;
            let whole = per_frame.round();
            if whole >= 1.0 && (per_frame - whole).abs() <= 1e-9 * per_frame {
                return Ok(Self {
                    sampling_rate: rate,
                    per_step: a,
                    per_frame: whole as usize,
                    common: true,
                });
            }
        }
        let per_frame = (PHYSICS_RATE / fps).round().max(1.0) as usize;
        Ok(Self {
            sampling_rate: fps * per_frame as f64,
            per_step: 1,
            per_frame,
            common: false,
        })
    }

    /// One output frame per physics step at the output rate (backward Euler, explicit
    /// substeps): the clock of the seeds' scheme.
    pub fn output_rate(fps: f64) -> Self {
        Self {
            sampling_rate: fps,
            per_step: 1,
            per_frame: 1,
            common: false,
        }
    }

    /// Physics step length (seconds of animation).
    pub fn physics_dt(&self) -> f64 {
        self.per_step as f64 / self.sampling_rate
    }

    /// The animation samples the physics steps through, for `frames` output frames from a
    /// sampled animation of `available` samples: every `per_step`-th sample until one at or
    /// beyond the last output frame's instant; a sample past the end of the animation is its
    /// last (glTF holds the last pose).
    pub fn physics_samples(&self, frames: usize, available: usize) -> Vec<usize> {
        let last = (frames.max(1) - 1) * self.per_frame;
        let steps = last.div_ceil(self.per_step);
        (0..=steps)
            .map(|j| (j * self.per_step).min(available.saturating_sub(1)))
            .collect()
    }

    /// The animation sample of output frame `i`.
    pub fn sample_of_frame(&self, i: usize) -> usize {
        i * self.per_frame
    }

    /// Position of output frame `i` among the physics steps: `(j, num, den)` for step
    /// `j + num/den`.
    pub fn physics_position(&self, i: usize) -> (usize, usize, usize) {
        let q = self.sample_of_frame(i);
        (q / self.per_step, q % self.per_step, self.per_step)
    }
}

/// Weights of the Lagrange polynomial through up to four consecutive samples at integer
/// positions, evaluated at `j + num/den` (`0 ≤ num < den`) among `n` samples: the nodes are
/// `j−1 ..= j+2` shifted to lie inside `0..n` (fewer when `n < 4`). Returns the first node and
/// the weights (summing to 1; exactly `[…, 1, …]` at a sample). The cubic's error on a
/// sinusoid of angular frequency `ω` sampled every `h` is at most about `0.023 (ωh)⁴` of its
/// amplitude.
pub fn interpolation_weights(j: usize, num: usize, den: usize, n: usize) -> (usize, [f64; 4], usize) {
    let k = n.clamp(1, 4);
    if num == 0 || n == 1 {
        return (j.min(n - 1), [1.0, 0.0, 0.0, 0.0], 1);
    }
    let first = j.saturating_sub(1).min(n - k);
    let s = j as f64 + num as f64 / den as f64;
    let mut w = [0.0; 4];
    for (a, wa) in w.iter_mut().enumerate().take(k) {
        let xa = (first + a) as f64;
        let mut l = 1.0;
        for b in 0..k {
            if b != a {
                let xb = (first + b) as f64;
                l *= (s - xb) / (xa - xb);
            }
        }
        *wa = l;
    }
    (first, w, k)
}

/// `out ← Σ_a w_a · sample(first + a)` (`k` terms, those with `w_a ≠ 0`; every sample as long
/// as `out`).
pub fn interpolate<'a>(sample: impl Fn(usize) -> &'a [f64], first: usize, w: &[f64; 4], k: usize, out: &mut [f64]) {
    out.fill(0.0);
    for a in 0..k {
        if w[a] == 0.0 {
            continue;
        }
        for (o, x) in out.iter_mut().zip(sample(first + a)) {
            *o += w[a] * x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_rates_share_the_physics_step() {
        for (fps, rate, per_frame) in [
            (24.0, 240.0, 10),
            (30.0, 240.0, 8),
            (60.0, 240.0, 4),
            (96.0, 480.0, 5),
            (25.0, 1200.0, 48),
        ] {
            let c = PhysicsClock::new(fps).unwrap();
            assert!(c.common, "{fps}");
            assert_eq!((c.sampling_rate, c.per_frame), (rate, per_frame), "{fps}");
            assert!((c.physics_dt() - 1.0 / PHYSICS_RATE).abs() < 1e-15, "{fps}");
        }
        // 23.976 fps has no common rate up to 1200 Hz: ten samples per frame, 239.76 Hz.
        let c = PhysicsClock::new(24000.0 / 1001.0).unwrap();
        assert!(!c.common);
        assert_eq!((c.per_frame, c.per_step), (10, 1));
        assert!(PhysicsClock::new(0.0).is_err() && PhysicsClock::new(f64::NAN).is_err());
    }

    #[test]
    fn physics_samples_cover_the_last_frame() {
        // 96 fps, 3 frames: output samples 0, 5, 10 at 480 Hz; physics every 2nd → 0..=10.
        let c = PhysicsClock::new(96.0).unwrap();
        assert_eq!(c.physics_samples(3, 11), vec![0, 2, 4, 6, 8, 10]);
        // 4 frames end at sample 15: physics needs 16, past the animation's end → held at 15.
        assert_eq!(*c.physics_samples(4, 16).last().unwrap(), 15);
        assert_eq!(c.physics_position(3), (7, 1, 2));
    }

    #[test]
    fn the_cubic_reproduces_cubics_and_hits_samples() {
        let f = |x: f64| 0.3 * x * x * x - x * x + 2.0 * x - 5.0;
        let samples: Vec<Vec<f64>> = (0..6).map(|k| vec![f(k as f64)]).collect();
        let mut out = [0.0];
        for j in 0..6 {
            for num in 0..3 {
                if j == 5 && num > 0 {
                    continue;
                }
                let (first, w, k) = interpolation_weights(j, num, 3, samples.len());
                interpolate(|i| &samples[i], first, &w, k, &mut out);
                let x = j as f64 + num as f64 / 3.0;
                assert!(
                    (out[0] - f(x)).abs() < 1e-12 * (1.0 + f(x).abs()),
                    "{x}: {} vs {}",
                    out[0],
                    f(x)
                );
                if num == 0 {
                    assert_eq!(out[0], samples[j][0]);
                }
            }
        }
        // Two samples: linear.
        let two = vec![vec![1.0], vec![3.0]];
        let (first, w, k) = interpolation_weights(0, 1, 4, 2);
        interpolate(|i| &two[i], first, &w, k, &mut out);
        assert!((out[0] - 1.5).abs() < 1e-15);
    }
}
