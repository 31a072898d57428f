//! A glTF bake's output frames, made as the physics samples arrive: each output frame is the
//! file's vertices at the glTF's own pose of the frame's instant plus the secondary displacement
//! cubic-interpolated from the physics samples around it (exact at instants that are physics
//! samples), scaled down where it exceeds the scene's `max_displacement`. Only the samples some
//! output frame uses are asked for ([`SampleWindow::needed`]) and at most four are held, so
//! memory does not grow with the clip's length.

use std::collections::VecDeque;

use anyhow::Result;
use overtone::scene::Character;

use crate::physics_clock::{interpolate, interpolation_weights, PhysicsClock};

/// The interpolation of output frame `i` among `n_physics` samples: first node, weights, count.
fn weights_of(clock: &PhysicsClock, i: usize, n_physics: usize) -> (usize, [f64; 4], usize) {
    let (j, num, den) = clock.physics_position(i);
    interpolation_weights(j, num, den, n_physics)
}

/// The physics samples output frame `i` reads (those with a non-zero weight), lowest first.
fn nodes(clock: &PhysicsClock, i: usize, n_physics: usize) -> impl Iterator<Item = usize> {
    let (first, w, k) = weights_of(clock, i, n_physics);
    (0..k).filter(move |&a| w[a] != 0.0).map(move |a| first + a)
}

/// The physics samples an output clock reads, held only while some later output frame needs
/// them (at most four), and the output frames' interpolated displacements made from them.
pub struct SampleWindow {
    clock: PhysicsClock,
    n_output: usize,
    n_physics: usize,
    /// The samples still needed: `(physics index, displacement)`, increasing.
    window: VecDeque<(usize, Vec<f64>)>,
    /// Buffers of samples no longer needed, reused.
    spare: Vec<Vec<f64>>,
    /// The next output frame to make.
    next: usize,
    u: Vec<f64>,
}

impl SampleWindow {
    /// For `n_output` frames on `clock` from `n_physics` samples of `len` values each.
    pub fn new(clock: PhysicsClock, n_output: usize, n_physics: usize, len: usize) -> Self {
        Self {
            clock,
            n_output,
            n_physics,
            window: VecDeque::with_capacity(5),
            spare: Vec::new(),
            next: 0,
            u: vec![0.0; len],
        }
    }

    /// Which of the `n_physics` samples some of the `n_output` frames read.
    pub fn needed(clock: &PhysicsClock, n_output: usize, n_physics: usize) -> Vec<bool> {
        let mut needed = vec![false; n_physics];
        for i in 0..n_output {
            for s in nodes(clock, i, n_physics) {
                needed[s] = true;
            }
        }
        needed
    }

    /// Takes physics sample `k` (samples arrive in increasing order) and hands every output
    /// frame it completes to `made(i, u)` (`u` its interpolated displacement, which `made` may
    /// change in place).
    pub fn push(
        &mut self,
        k: usize,
        sample: &[f64],
        made: &mut dyn FnMut(usize, &mut [f64]) -> Result<()>,
    ) -> Result<()> {
        anyhow::ensure!(
            self.window.back().is_none_or(|(j, _)| *j < k),
            "physics sample {k} arrived out of order"
        );
        anyhow::ensure!(
            sample.len() == self.u.len(),
            "physics sample {k} has {} values, not {}",
            sample.len(),
            self.u.len()
        );
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(sample);
        self.window.push_back((k, buf));
        while self.next < self.n_output && nodes(&self.clock, self.next, self.n_physics).all(|s| s <= k) {
            let i = self.next;
            let window = &self.window;
            if let Some(s) = nodes(&self.clock, i, self.n_physics).find(|s| window.iter().all(|(j, _)| j != s)) {
                anyhow::bail!("output frame {i} reads physics sample {s}, which was skipped");
            }
            let (first, w, n) = weights_of(&self.clock, i, self.n_physics);
            let held = |s: usize| -> &[f64] {
                let (_, v) = window.iter().find(|(j, _)| *j == s).expect("checked above");
                v
            };
            interpolate(held, first, &w, n, &mut self.u);
            self.next += 1;
            made(i, &mut self.u)?;
        }
        // Samples before the next frame's first node are read by no later frame.
        if self.next < self.n_output {
            let first = nodes(&self.clock, self.next, self.n_physics).next().unwrap_or(0);
            while self.window.front().is_some_and(|(j, _)| *j < first) {
                let (_, v) = self.window.pop_front().expect("a sample");
                self.spare.push(v);
            }
        }
        Ok(())
    }

    /// Samples held now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.window.len()
    }

    /// Checks that every output frame was made (all the samples they read arrived).
    pub fn finish(&self) -> Result<()> {
        anyhow::ensure!(
            self.next == self.n_output,
            "{} of {} output frames were made: the physics samples stopped early",
            self.next,
            self.n_output
        );
        Ok(())
    }
}

/// Receives `(output frame, positions n × 3, displacement n × 3)`.
pub type FrameSink<'a> = dyn FnMut(usize, &[f64], &[f64]) -> Result<()> + 'a;

/// Makes the output frames of one glTF bake from its physics samples, in order.
pub struct OutputFrames<'a> {
    ch: &'a Character,
    clock: PhysicsClock,
    window: SampleWindow,
    /// `max_displacement` in world units (a share of the bind surface's diagonal).
    limit: Option<f64>,
    /// The skinned (welded) surface of the frame being made, then its positions.
    skinned: Vec<f64>,
    x: Vec<f64>,
}

impl<'a> OutputFrames<'a> {
    /// For `n_output` frames of `ch` on `clock`, from `n_physics` physics samples.
    pub fn new(ch: &'a Character, clock: PhysicsClock, n_output: usize, n_physics: usize) -> Self {
        let limit = ch
            .scene
            .dynamics
            .max_displacement
            .map(|m| m * overtone::rig::bounding_box_diagonal(&ch.surface));
        let n = 3 * ch.original_to_welded.len();
        Self {
            ch,
            clock,
            window: SampleWindow::new(clock, n_output, n_physics, n),
            limit,
            skinned: vec![0.0; ch.surface.len()],
            x: vec![0.0; n],
        }
    }

    /// Takes physics sample `k` (its displacement `u`, `n × 3`; samples arrive in increasing
    /// order) and hands every output frame it completes to `out(i, positions, displacement)`.
    pub fn push(&mut self, k: usize, u: &[f64], out: &mut FrameSink) -> Result<()> {
        let (ch, clock, limit, skinned, x) = (self.ch, self.clock, self.limit, &mut self.skinned, &mut self.x);
        self.window.push(k, u, &mut |i, u| {
            if let Some(limit) = limit {
                overtone::rig::limit_displacement(u, limit);
            }
            ch.skinned_surface_into(clock.sample_of_frame(i), skinned)?;
            for (v, &s) in ch.original_to_welded.iter().enumerate() {
                for c in 0..3 {
                    x[3 * v + c] = skinned[3 * s + c] + u[3 * v + c];
                }
            }
            out(i, x, u)
        })
    }

    /// Checks that every output frame was made.
    pub fn finish(&self) -> Result<()> {
        self.window.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window's frames equal the interpolation over every sample held at once (bit for
    /// bit), for rates where output instants fall between physics samples and at the clip's
    /// end; a skipped sample, one out of order or of the wrong size, and a clip cut short are
    /// refused.
    #[test]
    fn streamed_frames_read_the_samples_the_whole_list_would() {
        for (fps, n_output) in [(24.0, 7), (96.0, 9), (25.0, 4), (24000.0 / 1001.0, 5)] {
            let clock = PhysicsClock::new(fps).unwrap();
            let n_physics = clock.physics_samples(n_output, usize::MAX).len();
            let samples: Vec<Vec<f64>> = (0..n_physics)
                .map(|k| vec![(k as f64 * 0.37).sin(), k as f64 * k as f64 * 1e-3])
                .collect();
            // Batch: every sample held.
            let batch: Vec<Vec<f64>> = (0..n_output)
                .map(|i| {
                    let (first, w, k) = weights_of(&clock, i, n_physics);
                    let mut u = vec![0.0; 2];
                    interpolate(|s| &samples[s], first, &w, k, &mut u);
                    u
                })
                .collect();
            // Streamed through the window, the needed samples only.
            let needed = SampleWindow::needed(&clock, n_output, n_physics);
            let mut window = SampleWindow::new(clock, n_output, n_physics, 2);
            let mut made = Vec::new();
            for (k, s) in samples.iter().enumerate().filter(|(k, _)| needed[*k]) {
                window
                    .push(k, s, &mut |i, u| {
                        assert_eq!(i, made.len());
                        made.push(u.to_vec());
                        Ok(())
                    })
                    .unwrap();
                assert!(window.held() <= 4, "{fps}: {} samples held", window.held());
            }
            window.finish().unwrap();
            assert_eq!(made, batch, "{fps}");
            // Where every output instant is a physics sample (24 fps), those alone are read.
            if clock.per_frame % clock.per_step == 0 {
                assert_eq!(needed.iter().filter(|&&b| b).count(), n_output, "{fps}");
            }
        }
        let clock = PhysicsClock::new(96.0).unwrap();
        let mut w = SampleWindow::new(clock, 3, 6, 1);
        // Frame 0 reads sample 0 alone.
        let e = w.push(2, &[0.0], &mut |_, _| Ok(())).unwrap_err().to_string();
        assert!(e.contains("sample 0, which was skipped"), "{e}");
        assert!(w.push(1, &[0.0], &mut |_, _| Ok(())).is_err());
        assert!(w.push(3, &[0.0, 1.0], &mut |_, _| Ok(())).is_err());
        assert!(w.finish().unwrap_err().to_string().contains("0 of 3"));
    }
}
