//! Modal damping: each of the body's lowest vibration modes decays at the damping ratio that was
//! asked for, so `damping` is the decay a user sees on the motion the rig excites.
//!
//! A Rayleigh pair calibrated on one mode gives every other mode `ζ_k = (α + βρ_k)/(2ω_k)`; on a
//! lattice the lowest mode is often a bending mode with an unusually large Laplacian energy
//! `ρ_1/ω_1²`, so the modes a swing actually rings were damped at a fifth of the asked ratio
//! (the seed beam: 0.018 measured for 0.1 asked). Here the damping force is
//!
//! `C u̇ = β L̂ u̇ + Σ_k c_k (M φ_k)(φ_kᵀ M u̇)`,
//!
//! with `φ_k` the `K` lowest vibrating modes of the solver's own linearised stiffness under the
//! rig constraint (mass-orthonormal, `φ_kᵀ M φ_k = 1`, angular frequency `ω_k`, Laplacian energy
//! `ρ_k = φ_kᵀ L̂ φ_k`). The stiffness-proportional part `β = ζ · min_k 2ω_k/ρ_k` is the largest
//! that over-damps none of them and keeps damping the modes above them (numerical noise
//! included); each mode then gets the rest, `c_k = 2ζω_k − βρ_k ≥ 0`, so its ratio
//! `(βρ_k + c_k)/(2ω_k)` is exactly `ζ`.
//!
//! The `β` part is implicit, in the solvers' step matrices; the modal part is applied to the
//! complementary velocity after each step of length `Δ` as its exact solution,
//! `q_k ← e^{−c_k Δ} q_k` for `q_k = φ_kᵀ M u̇` (unconditionally stable, and it leaves the
//! velocity admissible: every `φ_k` satisfies the rig constraint). On a mode that oscillates
//! with `ωΔ` small, damping the velocity alone by `e^{−cΔ}` per step takes the amplitude down
//! by `e^{−cΔ/2} = e^{−ζωΔ}`, the envelope of a ratio-`ζ` oscillator.
//!
//! **Large motion.** Under the rig constraint a large swing stiffens the body (a big bend must
//! stretch): the seed beam's tip rings at a 0.75-0.85 s period after a full sweep against its
//! 2.6 s linear mode, so rates fixed at `2ζω_k` gave the full model's envelope 0.025 for 0.05
//! asked and 0.036 for 0.1.
//! Each mode therefore damps at the frequency it is seen to ring at: `Ω_k` is the mean angular
//! speed of the phase point `(a_k − ā_k, −q_k/Ω_k)` (`a_k = (Mφ_k)ᵀ u`, `q_k = (Mφ_k)ᵀ u̇`),
//! averaged over one period `2π/Ω_k` of its own ([`FrequencyTracker`]), and the mode's rate is
//! `c_k = max(0, 2ζ·max(ω_k, Ω_k) − βρ_k)`. A small oscillation rings at `ω_k`, so it keeps
//! the linear calibration; slower, forced motion (a walk under a 5 Hz body) is clamped to it.
//! The average is trusted once the coordinate has turned twice within that period (and until
//! it turns less than once), so the first swing after rest is damped at the linear rate.

use crate::dynamics::time_integration::Damping;
use crate::math::kernels::{dot, dot2};

/// How many of the full-order body's lowest vibrating modes get the asked ratio exactly (each
/// is an `n·d` field applied every step; on CesiumMan 32 instead of 12 moved the measured ratio
/// by less than 0.01 at 0.1 and 0.3).
pub(crate) const DAMPED_MODES: usize = 12;

/// How many of the fast solver's lowest reduced modes get the asked ratio exactly (each a
/// `d·r̂` vector, a few hundred numbers): a character's visible jiggle mixes more of its
/// reduced modes than the lowest 12. On CesiumMan walking and then held (whole-surface decay,
/// `tests/physics/character_damping.rs`) 12 gave 0.094 and 0.277 for 0.1 and 0.3 asked, 32
/// give 0.102 and 0.299.
pub(crate) const REDUCED_DAMPED_MODES: usize = 32;

/// One vibration mode of a solver: `(ω, ρ)` with `ω` the angular frequency (rad/s) and `ρ` the
/// Laplacian energy of the unit-mass mode (1/s², in the solver's current stiffness units).
pub(crate) type ModeEnergy = (f64, f64);

/// The Rayleigh part for ratio `zeta` on `modes`: `β = ζ · min_k 2ω_k/ρ_k` (s), the largest
/// that over-damps none of them (`ζ = 0`, or no mode with `ρ > 0`: none).
fn rayleigh_part(zeta: f64, modes: &[ModeEnergy]) -> Damping {
    let beta = zeta
        * modes
            .iter()
            .filter(|(w, rho)| *w > 0.0 && *rho > 0.0 && rho.is_finite())
            .map(|(w, rho)| 2.0 * w / rho)
            .fold(f64::INFINITY, f64::min);
    Damping {
        mass: 0.0,
        stiffness: if beta.is_finite() { beta } else { 0.0 },
    }
}

/// The modal part of the damping: `K` mass-orthonormal mode shapes of a field of length `len`
/// (`len` = `d·n` coordinate-major for a full-order body, `d·r̂` for a reduced one) and their
/// rates. Does not allocate after construction.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModalDamping {
    len: usize,
    /// `φ_k` (`K × len`, row `k`).
    shapes: Vec<f64>,
    /// `M φ_k` (`K × len`), the projection onto mode `k`: `q_k = (Mφ_k)ᵀ u̇`.
    weighted: Vec<f64>,
    /// `(ω_k, ρ_k)` of each mode, kept to recalibrate when the ratio changes.
    modes: Vec<ModeEnergy>,
    /// `c_k` (1/s) of a small oscillation (at `ω_k`).
    rates: Vec<f64>,
    /// The ratio `ζ` asked for.
    zeta: f64,
    /// Each mode's observed ringing rate ([`FrequencyTracker`]).
    trackers: Vec<FrequencyTracker>,
    /// The trackers at the start of the frame in progress ([`ModalDamping::save_state`]).
    saved: Vec<FrequencyTracker>,
}

/// The rate a mode's coordinate is seen to ring at: the mean angular speed of its phase point
/// `(a − ā, −q/Ω)` about the origin (`a` the coordinate, `ā` its running mean, `q` its rate,
/// `Ω` the estimate so far, which makes the path of a steady oscillation a circle), each step's
/// turn `Δθ` weighted by `r_prev·r` (the lengths of the phase vectors at its two ends) and
/// averaged exponentially over one period of the estimate: `Ω ← ⟨r r' Δθ⟩ / ⟨r r' Δt⟩`. A
/// small, fast ripple on a large swing makes small loops that do not wind about the origin, so
/// the estimate is the rate of the oscillation the eye sees (an average of `q²/a²` would be
/// pulled up by the ripple, and by how finely the steps resolve it). Also counts how often `q`
/// changed sign within that period (turns of `a`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct FrequencyTracker {
    /// Running mean `ā` of the coordinate, over the mode's linear period.
    mean: f64,
    /// The last phase vector `(a − ā, −q/Ω)`.
    phase: [f64; 2],
    /// Running averages of `r r' Δθ` (rad, counter-clockwise positive) and of `r r' Δt` (s).
    turned: f64,
    elapsed: f64,
    /// Turns of `a`, each fading as `e^{−t/T}` (`T` the averaging time).
    turns: f64,
    /// Sign of the last nonzero `q` (0 before any).
    sign: f64,
    /// Whether the average is trusted: set at [`TURNS`](Self::TURNS) turns, cleared below
    /// [`KEEP_TURNS`](Self::KEEP_TURNS) (a steady oscillation holds about two turns per
    /// period, so one threshold would flicker on and off every half period).
    trusted: bool,
    /// The current estimate `Ω` (rad/s); 0 before any motion.
    omega: f64,
}

impl FrequencyTracker {
    /// Turns within one averaging time before the estimate is trusted.
    const TURNS: f64 = 2.0;
    /// Turns within one averaging time below which a trusted estimate is dropped again.
    const KEEP_TURNS: f64 = 1.0;

    /// Adds a step of `length` seconds ending at coordinate `a` with rate `q`; `omega` is the
    /// mode's linear frequency (the estimate's floor, and its start). Returns `max(ω, Ω)`,
    /// capped at the step's Nyquist rate `π/length`.
    fn update(&mut self, a: f64, q: f64, length: f64, omega: f64) -> f64 {
        let nyquist = (std::f64::consts::PI / length).max(omega);
        let seen = self.omega.max(omega);
        // The mean over the mode's linear period: over the estimate's, it would follow a slow
        // swing, leave only a fast ripple about it and read the ripple's rate.
        let slow = (-length * omega / std::f64::consts::TAU).exp();
        self.mean = slow * self.mean + (1.0 - slow) * a;
        let keep = (-length * seen / std::f64::consts::TAU).exp();
        let add = 1.0 - keep;
        let phase = [a - self.mean, -q / seen];
        let [x0, y0] = self.phase;
        let [x1, y1] = phase;
        let weight = x0.hypot(y0) * x1.hypot(y1);
        let angle = (x0 * y1 - y0 * x1).atan2(x0 * x1 + y0 * y1);
        // Signed: a steady oscillation winds counter-clockwise (`a = cos Ωt`, `−q/Ω = sin Ωt`),
        // while a rattle of the rate from step to step goes back and forth and cancels.
        self.turned = keep * self.turned + add * weight * angle;
        self.elapsed = keep * self.elapsed + add * weight * length;
        self.phase = phase;
        self.turns *= keep;
        if q != 0.0 {
            let sign = q.signum();
            if self.sign != 0.0 && sign != self.sign {
                self.turns += 1.0;
            }
            self.sign = sign;
        }
        self.trusted = if self.trusted {
            self.turns >= Self::KEEP_TURNS
        } else {
            self.turns >= Self::TURNS
        };
        self.omega = if self.trusted && self.elapsed > 0.0 {
            (self.turned / self.elapsed).clamp(omega, nyquist)
        } else {
            omega
        };
        self.omega
    }
}

impl ModalDamping {
    /// Modes `shapes` (`K × len`, mass-orthonormal), their mass products `weighted` (`M φ_k`,
    /// same layout) and `(ω_k, ρ_k)`, at ratio `zeta`; returns the Rayleigh part the solver
    /// puts in its step matrix with it.
    pub(crate) fn new(
        len: usize,
        shapes: Vec<f64>,
        weighted: Vec<f64>,
        modes: Vec<ModeEnergy>,
        zeta: f64,
    ) -> (Self, Damping) {
        debug_assert_eq!(shapes.len(), modes.len() * len);
        debug_assert_eq!(weighted.len(), modes.len() * len);
        let mut modal = Self {
            len,
            shapes,
            weighted,
            rates: vec![0.0; modes.len()],
            zeta,
            trackers: vec![FrequencyTracker::default(); modes.len()],
            saved: vec![FrequencyTracker::default(); modes.len()],
            modes,
        };
        let rayleigh = modal.set_ratio(zeta);
        (modal, rayleigh)
    }

    /// Recalibrates for ratio `zeta` (rates `c_k = max(0, 2ζω_k − βρ_k)`, 1/s); returns the new
    /// Rayleigh part. Does not allocate.
    pub(crate) fn set_ratio(&mut self, zeta: f64) -> Damping {
        let rayleigh = self.rayleigh_for(zeta);
        self.zeta = zeta;
        for (c, (w, rho)) in self.rates.iter_mut().zip(&self.modes) {
            *c = (2.0 * zeta * w - rayleigh.stiffness * rho).max(0.0);
        }
        rayleigh
    }

    /// The Rayleigh part `zeta` would give, without changing anything.
    pub(crate) fn rayleigh_for(&self, zeta: f64) -> Damping {
        rayleigh_part(zeta, &self.modes)
    }

    /// `(ω_k, ρ_k)` of the damped modes, lowest first.
    #[cfg(test)]
    pub(crate) fn modes(&self) -> &[ModeEnergy] {
        &self.modes
    }

    /// Mode `k`'s shape `φ_k`.
    #[cfg(test)]
    pub(crate) fn shape(&self, k: usize) -> &[f64] {
        &self.shapes[k * self.len..(k + 1) * self.len]
    }

    /// Mode `k`'s coordinate `q_k = (Mφ_k)ᵀ u` of a field `u`.
    #[cfg(test)]
    pub(crate) fn coordinate(&self, k: usize, u: &[f64]) -> f64 {
        self.weighted[k * self.len..(k + 1) * self.len]
            .iter()
            .zip(u)
            .map(|(w, u)| w * u)
            .sum()
    }

    /// Forgets the observed frequencies (the body put at rest).
    pub(crate) fn reset_state(&mut self) {
        self.trackers.fill(FrequencyTracker::default());
    }

    /// Remembers the observed frequencies (start of a frame).
    pub(crate) fn save_state(&mut self) {
        self.saved.copy_from_slice(&self.trackers);
    }

    /// Goes back to what [`save_state`](Self::save_state) remembered (a step failed).
    pub(crate) fn restore_state(&mut self) {
        self.trackers.copy_from_slice(&self.saved);
    }

    /// Mode `k`'s rate `c_k` (1/s) at the frequency it was last seen to ring at.
    #[cfg(test)]
    pub(crate) fn rate(&self, k: usize) -> f64 {
        let seen = self.trackers[k].omega.max(self.modes[k].0);
        self.rates[k] + 2.0 * self.zeta * (seen - self.modes[k].0)
    }

    /// Damps the complementary velocity over a step of `length` seconds:
    /// `u̇ ← u̇ − Σ_k (1 − e^{−c_k Δ}) q_k φ_k` with `q_k = (Mφ_k)ᵀ u̇` and `c_k` at the rate the
    /// mode is seen to ring at (see the module docs), fed with `a_k = (Mφ_k)ᵀ u` of the
    /// complementary `displacement` at the step's end. `velocity` is the complementary velocity
    /// itself when `rig` is `None`; with `rig = Some((end, start))` it is the total velocity and
    /// `u̇ = velocity − (end − start)/length` (the rig's mean velocity over the step, from its
    /// positions at both ends). Only `velocity` and the trackers change. Modes are
    /// mass-orthogonal, so one pass in order equals the simultaneous update. Does not allocate.
    pub(crate) fn apply(
        &mut self,
        velocity: &mut [f64],
        displacement: &[f64],
        rig: Option<(&[f64], &[f64])>,
        length: f64,
    ) {
        debug_assert_eq!(velocity.len(), self.len);
        debug_assert_eq!(displacement.len(), self.len);
        if self.zeta == 0.0 {
            return;
        }
        for k in 0..self.rates.len() {
            let (lo, hi) = (k * self.len, (k + 1) * self.len);
            let w = &self.weighted[lo..hi];
            let (q, a) = match rig {
                Some((end, start)) => (
                    w.iter()
                        .zip(velocity.iter())
                        .zip(end.iter().zip(start))
                        .map(|((w, v), (e, s))| w * (v - (e - s) / length))
                        .sum(),
                    dot(w, displacement),
                ),
                // One read of `Mφ_k` for both (bit-identical to two `dot`s).
                None => {
                    let [q, a] = dot2(w, velocity, displacement);
                    (q, a)
                }
            };
            let omega = self.modes[k].0;
            let seen = self.trackers[k].update(a, q, length, omega);
            let c = self.rates[k] + 2.0 * self.zeta * (seen - omega);
            if c <= 0.0 {
                continue;
            }
            let s = (1.0 - (-c * length).exp()) * q;
            for (v, phi) in velocity.iter_mut().zip(&self.shapes[lo..hi]) {
                *v -= s * phi;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every calibrated mode gets exactly `ζ` from `(βρ_k + c_k)/(2ω_k)`, none a negative rate,
    /// and the mode with the largest `ρ/ω` has no modal part (all of it is Rayleigh).
    #[test]
    fn every_calibrated_mode_gets_the_asked_ratio() {
        let zeta = 0.1;
        // (ω, ρ): a bending-like lowest mode with ρ/ω² = 195, then ordinary ones.
        let modes = [(2.41, 1133.0), (8.7, 600.0), (11.6, 900.0), (18.3, 2400.0)];
        let unit = |k: usize| {
            (0..modes.len())
                .map(|j| f64::from(u8::from(j == k)))
                .collect::<Vec<_>>()
        };
        let shapes: Vec<f64> = (0..modes.len()).flat_map(unit).collect();
        let (mut md, r) = ModalDamping::new(modes.len(), shapes.clone(), shapes, modes.to_vec(), zeta);
        let c = md.rates.clone();
        for (k, &(w, rho)) in modes.iter().enumerate() {
            assert!(c[k] >= 0.0);
            let ratio = (r.stiffness * rho + c[k]) / (2.0 * w);
            assert!((ratio - zeta).abs() < 1e-14, "mode {k}: {ratio}");
        }
        assert_eq!(r.mass, 0.0);
        assert!(c[0] == 0.0, "{c:?}");
        assert_eq!(md.set_ratio(0.0), Damping::default());
        assert!(md.rates.iter().all(|&c| c == 0.0));
    }

    /// The tracker reads the rate a coordinate rings at: a 1 Hz mode driven at 3 Hz is damped at
    /// `2ζ·3ω` (within 2%), at 1 Hz or slower at `2ζω` (within 2%), a 2% ripple at 20 Hz on a
    /// 1 Hz swing (40% of its speed) changes the rate by under 5%, not towards the ripple's 20x,
    /// and the first half period from rest keeps `2ζω`.
    #[test]
    fn the_rate_follows_the_frequency_the_mode_is_seen_to_ring_at() {
        let (w, zeta, dt) = (std::f64::consts::TAU, 0.1, 1.0 / 240.0);
        let drive = |md: &mut ModalDamping, seconds: f64, motion: &dyn Fn(f64) -> (f64, f64)| {
            for n in 1..=(seconds / dt) as usize {
                let (a, q) = motion(n as f64 * dt);
                md.apply(&mut [q], &[a], None, dt);
            }
        };
        let fresh = || ModalDamping::new(1, vec![1.0], vec![1.0], vec![(w, 0.0)], zeta).0;
        let linear = 2.0 * zeta * w;
        for (speed, expected) in [(3.0, 3.0 * linear), (1.0, linear), (0.4, linear)] {
            let mut md = fresh();
            let o = speed * w;
            drive(&mut md, 3.0, &|t| ((o * t).cos(), -o * (o * t).sin()));
            let rate = md.rate(0);
            assert!((rate / expected - 1.0).abs() < 0.02, "{speed}: {rate} vs {expected}");
        }
        let mut md = fresh();
        drive(&mut md, 3.0, &|t| {
            let r = 20.0 * w;
            (
                (w * t).cos() + 0.02 * (r * t).cos(),
                -w * (w * t).sin() - 0.02 * r * (r * t).sin(),
            )
        });
        assert!((md.rate(0) / linear - 1.0).abs() < 0.05, "ripple: {}", md.rate(0));
        let mut md = fresh();
        drive(&mut md, 0.5, &|t| {
            (1.0 - (3.0 * w * t).cos(), 3.0 * w * (3.0 * w * t).sin())
        });
        assert_eq!(md.rate(0), linear, "onset");
    }

    /// A single undamped unit-mass oscillator `q̈ = −ω²q` stepped exactly between damping
    /// steps of `Δ` decays with the envelope `e^{−ζωt}` of ratio `ζ` (within 3% of `ζ` at
    /// `ωΔ = 0.25`).
    #[test]
    fn velocity_damping_between_exact_oscillator_steps_decays_at_the_ratio() {
        let (w, zeta) = (2.0 * std::f64::consts::PI, 0.1);
        let (mut damping, _) = ModalDamping::new(1, vec![1.0], vec![1.0], vec![(w, 0.0)], zeta);
        // ρ = 0: no Rayleigh part, all modal (c = 2ζω).
        assert_eq!(damping.rates, vec![2.0 * zeta * w]);
        let dt = 0.25 / w;
        let (mut q, mut v) = (1.0f64, 0.0f64);
        let steps = (4.0 / (w * dt * zeta)) as usize; // until e^{-4}
        let mut peaks = Vec::new();
        let mut last = (q, 0.0);
        for n in 0..steps {
            let (c, s) = ((w * dt).cos(), (w * dt).sin());
            let (q1, v1) = (q * c + v / w * s, -q * w * s + v * c);
            q = q1;
            let mut vv = [v1];
            damping.apply(&mut vv, &[q], None, dt);
            v = vv[0];
            let e = (q * q + v * v / (w * w)).sqrt();
            if n % 50 == 0 {
                peaks.push(((n + 1) as f64 * dt, e));
            }
            last = ((n + 1) as f64 * dt, e);
        }
        let (t0, e0) = peaks[1];
        let measured = -(last.1 / e0).ln() / ((last.0 - t0) * w);
        assert!((measured - zeta).abs() < 0.03 * zeta, "{measured}");
    }

    /// Damping ratio from the logarithmic decrement of the positive peaks of a free decay `q`
    /// (uniformly sampled; parabolic interpolation through each peak), over at most three
    /// periods: `δ = ln(q_0/q_n)/n`, `ζ = δ/√(4π² + δ²)`.
    fn log_decrement_ratio(q: &[f64]) -> f64 {
        let mut peaks = Vec::new();
        for k in 1..q.len() - 1 {
            let (a, b, c) = (q[k - 1], q[k], q[k + 1]);
            if b > 0.0 && b > a && b >= c {
                let den = a - 2.0 * b + c;
                let s = if den != 0.0 { 0.5 * (a - c) / den } else { 0.0 };
                peaks.push(b - 0.25 * (a - c) * s);
            }
        }
        assert!(peaks.len() >= 2, "too few peaks: {peaks:?}");
        let n = (peaks.len() - 1).min(3);
        let delta = (peaks[0] / peaks[n]).ln() / n as f64;
        delta / (4.0 * std::f64::consts::PI.powi(2) + delta * delta).sqrt()
    }

    /// The damping ratio of mode `k`'s free decay over 3.5 of its periods at `fps`:
    /// `coordinate(first)` returns the mode's coordinate, after a step unless `first`.
    fn free_decay_ratio(md: &ModalDamping, k: usize, fps: f64, mut coordinate: impl FnMut(bool) -> f64) -> f64 {
        let frames = (3.5 * fps * std::f64::consts::TAU / md.modes()[k].0).ceil() as usize;
        let q: Vec<f64> = (0..=frames).map(|f| coordinate(f == 0)).collect();
        log_decrement_ratio(&q)
    }

    /// On the seed's beam (E = 1e5, 96 and 24 fps, production integrator), each of the three
    /// lowest modes started alone (amplitude 10⁻⁴ of the beam, rig held) rings down at the asked ratio
    /// within 0.1ζ + 0.005, for the full-order and the fast solver. The Rayleigh calibration
    /// this replaced gave the full solver's second mode 0.023, 0.045 and 0.131 for 0.05, 0.1 and
    /// 0.3 (its lowest mode carries `ρ/ω² = 195`, the next ones 27).
    #[test]
    fn each_mode_of_the_seed_beam_rings_down_at_the_asked_ratio() {
        use crate::dynamics::{FastParams, FastSolver, FullOrderSolver, LocalGlobalParams};
        use crate::scene::{metronome_beam, rig_start, MetronomeBeam, SceneDynamics};
        let scene = metronome_beam(MetronomeBeam {
            steps: 1,
            ..Default::default()
        })
        .unwrap();
        let (rig, p0, dw) = rig_start(&scene).unwrap();
        for (fps, zeta) in [(96.0, 0.05), (96.0, 0.1), (96.0, 0.3), (24.0, 0.1), (24.0, 0.3)] {
            let params = SceneDynamics {
                damping: zeta,
                ..SceneDynamics::default()
            }
            .solver_params(1.0 / fps, vec![0.0, 0.0]);
            let mut full = FullOrderSolver::new(
                &scene.mesh,
                rig.clone(),
                &dw,
                &scene.material,
                &params,
                LocalGlobalParams::default(),
                &p0,
            )
            .unwrap();
            let mut fast = FastSolver::new(
                &scene.mesh,
                rig.clone(),
                &dw,
                &scene.material,
                &params,
                FastParams::default_for(2),
                &p0,
            )
            .unwrap();
            for k in 0..3 {
                let check = |solver: &str, md: &ModalDamping, measured: f64| {
                    let hz = md.modes()[k].0 / std::f64::consts::TAU;
                    eprintln!("{fps} fps, {solver} mode {k} ({hz:.2} Hz): asked {zeta}, measured {measured:.4}");
                    assert!(
                        (measured - zeta).abs() <= 0.1 * zeta + 0.005,
                        "{fps} fps, {solver} mode {k}: asked {zeta}, measured {measured}"
                    );
                };
                let md = full.modal_damping().unwrap().clone();
                full.reset(&p0).unwrap();
                full.excite_mode(k, 2e-4);
                let measured = free_decay_ratio(&md, k, fps, |first| {
                    if !first {
                        full.step(&p0).unwrap();
                    }
                    md.coordinate(k, full.complementary())
                });
                check("full", &md, measured);
                let md = fast.modal_damping().clone();
                fast.reset(&p0).unwrap();
                fast.excite_mode(k, 2e-4);
                let measured = free_decay_ratio(&md, k, fps, |first| {
                    if !first {
                        fast.step(&p0).unwrap();
                    }
                    md.coordinate(k, fast.reduced())
                });
                check("fast", &md, measured);
            }
        }
    }
}
