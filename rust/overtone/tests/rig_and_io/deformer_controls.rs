//! The host deformer's keyframable controls (`set_controls`): damping and strength change between
//! frames without a rebind. Measured on a skinned tube swung once and held.

use overtone::deformer::SurfaceDeformer;
use overtone::settings::Solver;
use overtone::Settings;

use crate::common::tube::{bind_mesh, frame, tube};

/// Both bones translated by `x` along the x axis (the whole tube carried sideways).
fn pose(x: f64) -> Vec<f64> {
    let b = [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    [b, b].concat()
}

const FPS: f64 = 24.0;
const SWING_TIME: f64 = 0.5;

/// The rig's x offset at frame `k`: one smooth swing of 1 unit, then a hold.
fn swing(k: usize) -> f64 {
    let t = (k as f64 / FPS).min(SWING_TIME);
    0.5 * (1.0 - (std::f64::consts::PI * t / SWING_TIME).cos())
}

fn settings(fast: bool, damping: f64) -> Settings {
    Settings {
        solver: if fast { Solver::Fast } else { Solver::Full },
        modes: Some(12),
        clusters: 40,
        fps: FPS,
        lattice_resolution: Some(12),
        youngs_modulus: 2e4,
        damping,
        ..Settings::default()
    }
}

/// The deformer's settings with the controls `(damping, strength)`.
fn controls(def: &SurfaceDeformer, (damping, strength): (f64, f64)) -> Settings {
    Settings {
        damping,
        strength,
        ..def.settings().clone()
    }
}

/// Runs `frames` frames; before frame `k` is stepped, `switch(k)` may give new controls. Returns
/// per frame the x displacement of the tip vertex (ring 15) and the whole output of each frame.
fn run(
    def: &mut SurfaceDeformer,
    frames: usize,
    switch: impl Fn(usize) -> Option<(f64, f64)>,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = def.n_vertices();
    let tip = 15 * 12;
    let mut out = vec![0.0; 3 * n];
    let (mut x, mut all) = (Vec::new(), Vec::new());
    for k in 1..=frames {
        if let Some(c) = switch(k) {
            def.set_controls(&controls(def, c)).unwrap();
        }
        def.step(&frame(&pose(swing(k))), &mut out).unwrap();
        x.push(out[3 * tip]);
        all.push(out.clone());
    }
    (x, all)
}

/// Damping ratio from the logarithmic decrement of the successive positive lobes after frame
/// `from`, over at most three periods. A lobe is a run of positive samples bounded by sign
/// changes on both sides (so the first one starts after the first zero crossing after `from`);
/// its peak is the largest sample refined by a parabola through it and its neighbours. One
/// peak per lobe, so a faster ripple riding on a crest is not taken for a period.
fn damping_ratio(u: &[f64], from: usize) -> f64 {
    let mut peaks = Vec::new();
    let start = (from.max(1)..u.len())
        .find(|&k| u[k - 1] <= 0.0 && u[k] > 0.0)
        .expect("the tip crosses zero after the hold");
    let mut k = start;
    while k < u.len() {
        let end = (k..u.len()).find(|&j| u[j] <= 0.0);
        let Some(end) = end else { break };
        let top = (k..end).max_by(|&a, &b| u[a].total_cmp(&u[b])).unwrap();
        let (a, b, c) = (u[top - 1], u[top], u[top + 1]);
        let den = a - 2.0 * b + c;
        let s = if den != 0.0 { 0.5 * (a - c) / den } else { 0.0 };
        peaks.push(b - 0.25 * (a - c) * s);
        k = match (end..u.len()).find(|&j| u[j - 1] <= 0.0 && u[j] > 0.0) {
            Some(next) => next,
            None => break,
        };
    }
    assert!(peaks.len() >= 3, "too few peaks: {peaks:?}");
    let n = (peaks.len() - 1).min(3);
    let delta = (peaks[0] / peaks[n]).ln() / n as f64;
    delta / (4.0 * std::f64::consts::PI.powi(2) + delta * delta).sqrt()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// A deformer bound with damping ζ₀ and set to ζ₁ before its first step is the deformer bound
/// with ζ₁ (same system, refactored): identical outputs to 1e-12 of the motion, both solvers.
#[test]
fn set_damping_before_the_first_step_equals_binding_with_it() {
    let (v, t, w) = tube();
    for fast in [true, false] {
        let frames = 36;
        let mut a = bind_mesh(&settings(fast, 0.05), &v, &t, &w, &pose(0.0)).unwrap();
        let mut b = bind_mesh(&settings(fast, 0.3), &v, &t, &w, &pose(0.0)).unwrap();
        let (_, ua) = run(&mut a, frames, |k| (k == 1).then_some((0.3, 1.0)));
        let (_, ub) = run(&mut b, frames, |_| None);
        let scale = ub.iter().map(|u| max_abs(u)).fold(0.0, f64::max);
        let diff = ua
            .iter()
            .zip(&ub)
            .map(|(x, y)| max_abs(&x.iter().zip(y).map(|(p, q)| p - q).collect::<Vec<_>>()))
            .fold(0.0, f64::max);
        eprintln!("fast {fast}: motion {scale:.3e}, difference {diff:.3e}");
        assert!(scale > 1e-3, "the swing must move the tube ({scale:.2e})");
        assert!(diff <= 1e-12 * scale, "fast {fast}: {diff:.3e} of {scale:.3e}");
    }
}

/// Switching the damping during the hold changes the measured decay: the log decrement after
/// the switch gives ζ ≈ 0.3 where the run that keeps ζ = 0.05 measures ≈ 0.05 (full solver,
/// whose modes are exact; ±0.05: the ratio is calibrated on the band of low modes, which the
/// swing excites together). The state carries over: the switched run equals the unswitched one
/// up to the switch.
#[test]
fn damping_changed_mid_run_changes_the_measured_decay_rate() {
    let (v, t, w) = tube();
    let frames = (5.0 * FPS) as usize;
    let hold = (SWING_TIME * FPS).ceil() as usize + 2;
    let mut keep = bind_mesh(&settings(false, 0.05), &v, &t, &w, &pose(0.0)).unwrap();
    let mut switched = bind_mesh(&settings(false, 0.05), &v, &t, &w, &pose(0.0)).unwrap();
    let (uk, _) = run(&mut keep, frames, |_| None);
    let (us, _) = run(&mut switched, frames, |k| (k == hold).then_some((0.3, 1.0)));
    assert_eq!(&uk[..hold - 1], &us[..hold - 1]);
    let (zk, zs) = (damping_ratio(&uk, hold), damping_ratio(&us, hold));
    eprintln!("measured damping ratio: kept 0.05 -> {zk:.4}, switched to 0.3 -> {zs:.4}");
    assert!((zk - 0.05).abs() <= 0.05, "kept: {zk}");
    assert!((zs - 0.3).abs() <= 0.05, "switched: {zs}");
}

/// Strength scales the output exactly (2 gives twice 1 to round-off, 0 gives zero) and changes
/// nothing else; a bad control is refused and changes nothing.
#[test]
fn strength_scales_the_output_and_bad_controls_change_nothing() {
    let (v, t, w) = tube();
    let s = settings(true, 0.1);
    let mut one = bind_mesh(&s, &v, &t, &w, &pose(0.0)).unwrap();
    let mut two = bind_mesh(&s, &v, &t, &w, &pose(0.0)).unwrap();
    let mut zero = bind_mesh(&s, &v, &t, &w, &pose(0.0)).unwrap();
    for (z, st) in [(-0.1, 1.0), (f64::NAN, 1.0), (0.1, -1.0), (0.1, f64::INFINITY)] {
        assert!(
            two.set_controls(&controls(&two, (z, st))).is_err(),
            "({z}, {st}) accepted"
        );
    }
    let (_, u1) = run(&mut one, 20, |_| None);
    let (_, u2) = run(&mut two, 20, |k| (k == 5).then_some((0.1, 2.0)));
    let (_, u0) = run(&mut zero, 20, |k| (k == 1).then_some((0.1, 0.0)));
    let scale = u1.iter().map(|u| max_abs(u)).fold(0.0, f64::max);
    assert!(scale > 1e-3);
    for k in 0..20 {
        let f = if k + 1 >= 5 { 2.0 } else { 1.0 };
        for (a, b) in u1[k].iter().zip(&u2[k]) {
            assert!((f * a - b).abs() <= 1e-12 * scale, "frame {k}: {b} vs {f} x {a}");
        }
        assert!(u0[k].iter().all(|x| *x == 0.0));
    }
}
