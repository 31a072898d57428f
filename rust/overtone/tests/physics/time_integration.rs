//! Frame-rate independence and damping of the production time integration (implicit midpoint
//! with substeps, modal damping), measured on the seed's metronome beam after one swing.

use overtone::dynamics::FastParams;

use crate::common::envelope::envelope_ratio;
use overtone::scene::{
    metronome_beam, simulate_streaming, MetronomeBeam, Scene, SceneDynamics, Simulation, SolverKind,
};

/// Seconds of the swing (the handle moves by `SWING` along x, smoothly), then a hold.
const SWING_TIME: f64 = 0.8;
const SWING: f64 = 0.5;
const TOTAL_TIME: f64 = 4.0;

/// The seed's beam with its handle at `handle(t)` along x until `SWING_TIME`, then held,
/// sampled at `fps` for `TOTAL_TIME`.
fn beam_held_after(fps: f64, handle: impl Fn(f64) -> f64) -> Scene {
    let mut sc = metronome_beam(MetronomeBeam {
        steps: 1,
        ..Default::default()
    })
    .unwrap();
    let frames = (TOTAL_TIME * fps).round() as usize;
    sc.frames = (0..=frames)
        .map(|k| vec![1.0, 0.0, handle((k as f64 / fps).min(SWING_TIME)), 0.0, 1.0, 0.0])
        .collect();
    sc.dt = 1.0 / fps;
    sc
}

/// The beam swung once (by `SWING`, smoothly) then held, sampled at `fps`.
fn swing_beam(fps: f64, dynamics: SceneDynamics) -> Scene {
    let mut sc = beam_held_after(fps, |t| {
        SWING * 0.5 * (1.0 - (std::f64::consts::PI * t / SWING_TIME).cos())
    });
    sc.dynamics = dynamics;
    // Stiffer than the seed's E = 1e5 (lowest mode about 0.5 Hz): a jiggle of about 2.3 Hz,
    // a period of 10 frames at 24 fps.
    sc.material.youngs_modulus = 2e6;
    sc
}

/// Per frame, the x displacement of the beam's top vertex.
fn tip_motion(sc: &Scene, kind: SolverKind) -> Vec<f64> {
    tip_motion_and_run(sc, kind).0
}

/// [`tip_motion`] and the simulation's report.
fn tip_motion_and_run(sc: &Scene, kind: SolverKind) -> (Vec<f64>, Simulation) {
    let d = sc.mesh.dim();
    let tip = (0..sc.mesh.n_vertices())
        .max_by(|&a, &b| sc.mesh.vertex(a)[1].total_cmp(&sc.mesh.vertex(b)[1]))
        .unwrap();
    let mut out = Vec::new();
    let mut keep = |_: usize, _: &[f64], disp: &[f64]| -> overtone::Result<()> {
        out.push(disp[tip * d]);
        Ok(())
    };
    let sim = simulate_streaming(sc, kind, None, &mut keep).unwrap();
    let worst = sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max);
    assert!(worst < 1e-8, "relative residual {worst:.2e} ({kind:?})");
    (out, sim)
}

/// Extrema of the sampled signal after `t0` (parabolic interpolation through the three samples
/// around each): `(time, value)`.
fn extrema(u: &[f64], fps: f64, t0: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for k in 1..u.len() - 1 {
        let t = k as f64 / fps;
        if t < t0 {
            continue;
        }
        let (a, b, c) = (u[k - 1], u[k], u[k + 1]);
        if (b > a && b >= c) || (b < a && b <= c) {
            let den = a - 2.0 * b + c;
            let s = if den != 0.0 { 0.5 * (a - c) / den } else { 0.0 };
            out.push((t + s / fps, b - 0.25 * (a - c) * s));
        }
    }
    out
}

/// Mean period from the upward zero crossings after `t0` (linear interpolation).
fn period(u: &[f64], fps: f64, t0: f64) -> f64 {
    let mut ups = Vec::new();
    for k in 0..u.len() - 1 {
        let t = k as f64 / fps;
        if t >= t0 && u[k] < 0.0 && u[k + 1] >= 0.0 {
            ups.push(t + u[k] / (u[k] - u[k + 1]) / fps);
        }
    }
    assert!(ups.len() >= 3, "too few oscillations: {ups:?}");
    (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f64
}

/// Damping ratio from the logarithmic decrement of successive peaks of one sign.
fn damping_ratio(u: &[f64], fps: f64, t0: f64) -> f64 {
    let peaks: Vec<f64> = extrema(u, fps, t0).iter().map(|e| e.1).filter(|v| *v > 0.0).collect();
    assert!(peaks.len() >= 3, "{peaks:?}");
    let n = (peaks.len() - 1).min(3);
    let delta = (peaks[0] / peaks[n]).ln() / n as f64;
    delta / (4.0 * std::f64::consts::PI.powi(2) + delta * delta).sqrt()
}

fn dynamics(damping: f64) -> SceneDynamics {
    SceneDynamics {
        damping,
        ..SceneDynamics::default()
    }
}

#[test]
fn undamped_beam_keeps_ringing_at_24_fps_with_the_period_of_96_fps() {
    let settle = SWING_TIME + 0.05;
    let u24 = tip_motion(
        &swing_beam(24.0, dynamics(0.0)),
        SolverKind::LocalGlobal(Default::default()),
    );
    let u96 = tip_motion(
        &swing_beam(96.0, dynamics(0.0)),
        SolverKind::LocalGlobal(Default::default()),
    );
    let (p24, p96) = (period(&u24, 24.0, settle), period(&u96, 96.0, settle));
    let ex = extrema(&u24, 24.0, settle);
    let first = ex[0].1.abs();
    let later = ex
        .iter()
        .filter(|e| e.0 >= ex[0].0 + 1.0 - 0.5 * p24 && e.0 <= ex[0].0 + 1.0 + 0.5 * p24)
        .map(|e| e.1.abs())
        .fold(0.0, f64::max);
    let be = tip_motion(
        &swing_beam(24.0, SceneDynamics::seed()),
        SolverKind::LocalGlobal(Default::default()),
    );
    let be_ex = extrema(&be, 24.0, settle);
    eprintln!(
        "period 24 fps {p24:.4} s, 96 fps {p96:.4} s; amplitude first {first:.4e}, one second later {later:.4e} ({:.1}%); backward Euler first {:.3e}",
        100.0 * later / first,
        be_ex.first().map_or(0.0, |e| e.1.abs())
    );
    assert!(later >= 0.8 * first, "amplitude after 1 s: {later:.3e} of {first:.3e}");
    assert!((p24 / p96 - 1.0).abs() < 0.05, "periods {p24} vs {p96}");
}

#[test]
fn damping_ratio_of_the_lowest_mode_is_what_was_asked() {
    let settle = SWING_TIME + 0.05;
    for zeta in [0.05, 0.1, 0.3] {
        for (fps, kind) in [
            (24.0, SolverKind::LocalGlobal(Default::default())),
            (96.0, SolverKind::LocalGlobal(Default::default())),
            (
                96.0,
                SolverKind::Fast(FastParams {
                    modes: 20,
                    clusters: 60,
                    iterations: 10,
                }),
            ),
        ] {
            let u = tip_motion(&swing_beam(fps, dynamics(zeta)), kind);
            let measured = damping_ratio(&u, fps, settle);
            eprintln!("ζ = {zeta}: measured {measured:.4} ({kind:?} at {fps} fps)");
            // Both solvers fit the damping to their own lowest mode: the full solver's from the
            // vector eigenproblem, the fast solver's from its clustered model linearised in its
            // subspace (the per-element stiffness there read 1.90 Hz against 2.23 Hz measured,
            // and ζ came out 14% low).
            let tol = 0.03;
            assert!(
                (measured - zeta).abs() <= tol,
                "ζ = {zeta}: measured {measured} ({kind:?})"
            );
        }
    }
}

/// The fast solver's lowest frequency — what the damping fit, the automatic substeps and the
/// `frequency` control rely on — is the one it vibrates at: its clustered rotations make it
/// stiffer than the per-element linearisation (1.90 Hz there, 2.23 Hz measured), so the
/// frequency comes from its own linearised model. Undamped beam at 96 fps: the period of the
/// free swing matches `1/f₁` within 1%.
#[test]
fn the_fast_solver_vibrates_at_its_computed_lowest_frequency() {
    let sc = swing_beam(96.0, dynamics(0.0));
    let kind = SolverKind::Fast(FastParams {
        modes: 20,
        clusters: 60,
        iterations: 10,
    });
    let (u, sim) = tip_motion_and_run(&sc, kind);
    let f1 = sim.fast.as_ref().unwrap().lowest_frequency_hz;
    let measured = 1.0 / period(&u, 96.0, SWING_TIME + 0.05);
    eprintln!("fast solver: computed f1 {f1:.4} Hz, measured {measured:.4} Hz");
    assert!(
        (measured / f1 - 1.0).abs() < 0.01,
        "computed {f1} Hz, measured {measured} Hz"
    );
}

/// A rig held still in a pose far from bind (the beam's handle scaled by 1.6 and sheared) shows
/// no secondary motion with the rig pose as elastic reference (`u_c = 0` is an equilibrium:
/// the first frame does not jump either), while the paper's bind rest keeps a static offset.
#[test]
fn a_held_pose_far_from_bind_shows_no_secondary_motion_with_the_rig_rest() {
    for (rest, solver) in [
        (
            overtone::dynamics::RestShape::Rig,
            SolverKind::LocalGlobal(Default::default()),
        ),
        (
            overtone::dynamics::RestShape::Rig,
            SolverKind::Fast(FastParams::default_for(2)),
        ),
        (
            overtone::dynamics::RestShape::Bind,
            SolverKind::LocalGlobal(Default::default()),
        ),
    ] {
        let mut sc = swing_beam(24.0, dynamics(0.1));
        sc.dynamics.rest = rest;
        let posed = vec![1.6, 0.4, 0.3, 0.0, 1.6, 0.0];
        sc.frames = vec![posed; 49];
        let mut peak: f64 = 0.0;
        let mut last: f64 = 0.0;
        let d = sc.mesh.dim();
        let mut keep = |_: usize, _: &[f64], disp: &[f64]| -> overtone::Result<()> {
            last = disp
                .chunks(d)
                .map(|u| u.iter().map(|x| x * x).sum::<f64>().sqrt())
                .fold(0.0, f64::max);
            peak = peak.max(last);
            Ok(())
        };
        simulate_streaming(&sc, solver, None, &mut keep).unwrap();
        eprintln!("{rest:?} {solver:?}: peak {peak:.3e}, after 2 s {last:.3e} (beam length 2)");
        if rest == overtone::dynamics::RestShape::Rig {
            assert!(peak < 1e-10, "{solver:?}: held pose moved by {peak:e}");
        } else {
            assert!(last > 1e-3, "bind rest: the scaled pose keeps an offset ({last:e})");
        }
    }
}

/// A clip that starts in motion does not kick the body: the beam translated at a constant
/// velocity from its first frame (no rig acceleration at all) shows no secondary motion with the
/// production scheme, which starts the body moving with its rig; the seeds' scheme starts it at
/// rest, and the jump from rest to the rig's velocity at the first step sets it swinging.
#[test]
fn a_clip_that_starts_moving_does_not_kick_the_body() {
    let fps = 24.0;
    let clip = |dynamics: SceneDynamics| {
        let mut sc = swing_beam(fps, dynamics);
        // 1 beam length (2) per second along x, from the first frame to the last.
        sc.frames = (0..=24)
            .map(|k| vec![1.0, 0.0, 2.0 * k as f64 / fps, 0.0, 1.0, 0.0])
            .collect();
        sc
    };
    let peak = |sc: &Scene, solver: SolverKind| {
        let d = sc.mesh.dim();
        let mut peak: f64 = 0.0;
        let mut keep = |_: usize, _: &[f64], disp: &[f64]| -> overtone::Result<()> {
            let m = disp
                .chunks(d)
                .map(|u| u.iter().map(|x| x * x).sum::<f64>().sqrt())
                .fold(0.0, f64::max);
            peak = peak.max(m);
            Ok(())
        };
        simulate_streaming(sc, solver, None, &mut keep).unwrap();
        peak
    };
    for solver in [
        SolverKind::LocalGlobal(Default::default()),
        SolverKind::Fast(FastParams::default_for(2)),
    ] {
        let moving = peak(&clip(dynamics(0.1)), solver);
        let at_rest = peak(&clip(SceneDynamics::seed()), solver);
        eprintln!("{solver:?}: peak {moving:.3e} (production), {at_rest:.3e} (seeds' scheme, from rest)");
        assert!(
            moving < 1e-10,
            "{solver:?}: a constant-velocity clip moved the body by {moving:e}"
        );
        assert!(
            at_rest > 1e-3,
            "{solver:?}: starting at rest should kick the beam ({at_rest:e})"
        );
    }
}

/// Out-of-range dynamics settings are refused with the setting's name, from scene keys and
/// from the API.
#[test]
fn bad_dynamics_settings_are_refused() {
    use overtone::scene::DynamicsKeys;
    let base = SceneDynamics::default();
    for (name, text) in [
        ("integrator", "rk4"),
        ("rest", "pose"),
        ("damping", "-0.1"),
        ("substeps", "0"),
        ("cut_distance", "-0.5"),
    ] {
        let mut k = DynamicsKeys::default();
        let e = k.set_text(name, text).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
        assert_eq!(k.apply(&base).unwrap(), base, "{name}: a refused key changed the keys");
    }
    let n = 10;
    let bad: Vec<(&str, SceneDynamics)> = vec![
        (
            "damping",
            SceneDynamics {
                damping: -0.1,
                ..base.clone()
            },
        ),
        (
            "damping",
            SceneDynamics {
                damping: f64::NAN,
                ..base.clone()
            },
        ),
        (
            "substeps",
            SceneDynamics {
                substeps: Some(0),
                ..base.clone()
            },
        ),
        (
            "substeps",
            SceneDynamics {
                substeps: Some(1000),
                ..base.clone()
            },
        ),
        (
            "frequency",
            SceneDynamics {
                frequency: Some(0.0),
                ..base.clone()
            },
        ),
        (
            "time_scale",
            SceneDynamics {
                time_scale: 0.0,
                ..base.clone()
            },
        ),
        (
            "preroll",
            SceneDynamics {
                preroll: -1.0,
                ..base.clone()
            },
        ),
        (
            "strength",
            SceneDynamics {
                strength: f64::INFINITY,
                ..base.clone()
            },
        ),
        (
            "cut_distance",
            SceneDynamics {
                cut_distance: Some(-0.5),
                ..base.clone()
            },
        ),
        (
            "stiffness",
            SceneDynamics {
                stiffness: Some(vec![1.0; n - 1]),
                ..base.clone()
            },
        ),
        (
            "stiffness",
            SceneDynamics {
                stiffness: Some(vec![0.0; n]),
                ..base.clone()
            },
        ),
    ];
    for (name, d) in bad {
        let e = d.validate(n).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
    assert!(base.validate(n).is_ok() && SceneDynamics::seed().validate(n).is_ok());
}

/// Gravity, time scale, strength and pre-roll act as documented on the beam: the time scale
/// `s` at `fps/s` reproduces the unscaled run at `fps` (same physics step per frame); strength
/// scales the output displacement exactly; with gravity a pre-roll lets the sag settle, so the
/// first frame already shows it.
#[test]
fn time_scale_strength_and_preroll_do_what_they_say() {
    let base = tip_motion(
        &swing_beam(48.0, dynamics(0.1)),
        SolverKind::LocalGlobal(Default::default()),
    );
    // Time scale 2 at 24 fps: each frame advances 2/24 s of physics, so an animation whose
    // poses follow physics time 2k/24 is the unscaled run at 12 fps, frame for frame.
    let base12 = tip_motion(
        &swing_beam(12.0, dynamics(0.1)),
        SolverKind::LocalGlobal(Default::default()),
    );
    let mut sc = swing_beam(
        24.0,
        SceneDynamics {
            time_scale: 2.0,
            ..dynamics(0.1)
        },
    );
    for (k, f) in sc.frames.iter_mut().enumerate() {
        let t = (2.0 * k as f64 / 24.0).min(SWING_TIME);
        f[2] = SWING * 0.5 * (1.0 - (std::f64::consts::PI * t / SWING_TIME).cos());
    }
    let scaled = tip_motion(&sc, SolverKind::LocalGlobal(Default::default()));
    let err = (0..base12.len())
        .map(|k| (scaled[k] - base12[k]).abs())
        .fold(0.0, f64::max);
    let size = base.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!(err < 1e-12, "time scale: {err:e} of {size:e}");
    let strong = tip_motion(
        &swing_beam(
            48.0,
            SceneDynamics {
                strength: 2.5,
                ..dynamics(0.1)
            },
        ),
        SolverKind::LocalGlobal(Default::default()),
    );
    for (a, b) in strong.iter().zip(&base) {
        assert!((a - 2.5 * b).abs() <= 1e-12 * size.max(1e-300) + 1e-15);
    }
    let mut heavy = swing_beam(
        48.0,
        SceneDynamics {
            preroll: 3.0,
            damping: 1.0,
            ..dynamics(0.1)
        },
    );
    heavy.gravity = vec![-9.81, 0.0];
    let sag = tip_motion(&heavy, SolverKind::LocalGlobal(Default::default()));
    let settled = sag[sag.len() - 1];
    assert!(settled.abs() > 1e-4, "gravity sags the beam ({settled:e})");
    assert!(
        (sag[0] - settled).abs() < 0.05 * settled.abs() + 0.05 * size,
        "pre-roll: first frame {} vs settled {settled}",
        sag[0]
    );
}

/// The fast solver's local/global iterations stop once converged (relative tolerance 1e-4 on
/// the cluster gradients), not after a fixed count: on the swung beam at 96 fps the motion
/// with at most 10 iterations a solve equals the one with at most 60 within 1e-3 of its peak,
/// and takes fewer than 10 on average.
#[test]
fn the_fast_solver_stops_iterating_once_converged() {
    let sc = swing_beam(96.0, dynamics(0.1));
    let run = |iterations: usize| {
        let kind = SolverKind::Fast(FastParams {
            modes: 20,
            clusters: 60,
            iterations,
        });
        let (u, sim) = tip_motion_and_run(&sc, kind);
        let solves = sim.steps.len() * sim.fast.as_ref().unwrap().substeps;
        let mean = sim.steps.iter().map(|s| s.iterations).sum::<usize>() as f64 / solves as f64;
        (u, mean)
    };
    let (u10, mean10) = run(10);
    let (u60, mean60) = run(60);
    let peak = u60.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let diff = u10.iter().zip(&u60).fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
    eprintln!(
        "iterations a solve: {mean10:.2} (at most 10), {mean60:.2} (at most 60); difference {:.2e} of the peak",
        diff / peak
    );
    assert!(mean10 < 9.0, "{mean10} iterations a solve");
    assert!(diff <= 1e-3 * peak, "difference {diff:.3e}, peak {peak:.3e}");
}

/// A stiff body rings at its computed frequency with the fast solver's default ten iterations,
/// at one substep of 1/240 s up to the fast solver's automatic limit `ω₁Δ ≤ 0.75`: the beam
/// made stiff through `frequency` (19.1 Hz at `ω₁Δ = 0.5`, 28.6 Hz at 0.75), swung then held.
/// The plain local/global iteration stopped at ten rang at 15.5 Hz at 0.5 (19% slow) and 61%
/// of the peak away from eight substeps per step (it converges in ~53 a solve); the
/// Anderson-accelerated one rings within 1% and 1.5% (19.06 and 28.37 Hz measured), decays
/// at the asked ratio within ±0.03 (0.058 and 0.061 for 0.05: the off-centred rule's
/// `(θ−½)ω₁Δ` adds 0.01-0.015), peaks within 5% of eight substeps (1.023 and 1.028 of it) and follows them
/// within 8% and 15% of the peak (4.9% and 11.3% measured: the midpoint rule's error on the
/// modes above the lowest). At `ω₁Δ = 1` it rang 5.2% slow and peaked 10% high, which is why
/// the limit is 0.75.
#[test]
fn a_stiff_body_rings_at_its_frequency_with_the_default_iterations() {
    let fps = 240.0;
    let zeta = 0.05;
    let kind = SolverKind::Fast(FastParams {
        modes: 20,
        clusters: 60,
        iterations: 10,
    });
    // (ω₁Δ, period within, follows eight substeps within … of the peak)
    for (omega_step, rings, follows) in [(0.5, 0.01, 0.08), (0.75, 0.015, 0.15)] {
        let f1 = omega_step * fps / std::f64::consts::TAU;
        let run = |substeps: Option<usize>| {
            let mut sc = swing_beam(fps, dynamics(zeta));
            sc.dynamics.frequency = Some(f1);
            sc.dynamics.substeps = substeps;
            let (u, sim) = tip_motion_and_run(&sc, kind);
            let fast = sim.fast.as_ref().unwrap();
            (u, fast.substeps, fast.lowest_frequency_hz)
        };
        let (u, substeps, computed) = run(None);
        let (reference, _, _) = run(Some(8));
        // The free swing after the hold, while it is well above round-off (0.4 s: 8 periods).
        let free = |u: &[f64]| u[..((SWING_TIME + 0.4) * fps) as usize].to_vec();
        let measured = 1.0 / period(&free(&u), fps, SWING_TIME + 0.02);
        let ratio = damping_ratio(&free(&u), fps, SWING_TIME + 0.02);
        let largest = |u: &[f64]| u.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let peak = largest(&reference);
        let diff = u.iter().zip(&reference).fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
        eprintln!(
            "ω₁Δ = {omega_step}: computed {computed:.2} Hz, measured {measured:.2} Hz; damping {ratio:.4} (asked {zeta}); {substeps} substeps; peak {:.4} of 8 substeps', difference {:.4} of it",
            largest(&u) / peak,
            diff / peak
        );
        assert_eq!(substeps, 1, "ω₁Δ = {omega_step}");
        assert!(
            (measured / computed - 1.0).abs() < rings,
            "ω₁Δ = {omega_step}: computed {computed} Hz, measured {measured} Hz"
        );
        assert!(
            (ratio - zeta).abs() <= 0.03,
            "ω₁Δ = {omega_step}: damping ratio {ratio}, asked {zeta}"
        );
        assert!(
            (largest(&u) / peak - 1.0).abs() <= 0.05,
            "ω₁Δ = {omega_step}: peak {} of 8 substeps'",
            largest(&u) / peak
        );
        assert!(
            diff <= follows * peak,
            "ω₁Δ = {omega_step}: difference {diff:.3e}, peak {peak:.3e}"
        );
    }
}

/// The issue's own case: the seed's beam (E = 1e5, 40 × 5) swung once by the metronome's full
/// sweep (`3 sin(2πt/0.8 s)` for 0.8 s), then held, at 96 fps. The swing is geometrically
/// nonlinear: under the rig constraint the bent beam must stretch, so its tip rings at a 0.75-0.85 s
/// period against the 2.6 s of the full model's lowest mode. Rates fixed at `2ζω_k` left the
/// envelope a viewer sees at 0.026 for 0.05 asked and 0.047 for 0.1 (full solver, this
/// measure); damping at the rate each mode is seen to ring at gives 0.050 and 0.076 (fast:
/// 0.059 and 0.119; it was 0.046 for 0.05). At 0.3 the full model reads about 0.24 and the fast
/// 0.33 (the Python measure of the CLI's float32 caches), outside ±0.03, not asserted.
#[test]
fn the_seed_beams_full_sweep_rings_down_at_the_asked_ratio() {
    let fps = 96.0;
    // The metronome's sweep ends back at 0 at `SWING_TIME`, where the hold starts.
    let mut sc = beam_held_after(fps, |t| 3.0 * (std::f64::consts::TAU * t / SWING_TIME).sin());
    for zeta in [0.05, 0.1] {
        sc.dynamics = dynamics(zeta);
        for kind in [
            SolverKind::LocalGlobal(Default::default()),
            SolverKind::Fast(FastParams::default_for(2)),
        ] {
            let u = tip_motion(&sc, kind);
            let free = &u[((SWING_TIME + 0.05) * fps) as usize..];
            let measured = envelope_ratio(free, fps);
            eprintln!("full sweep, ζ = {zeta}: envelope {measured:.4} ({kind:?})");
            assert!(
                (measured - zeta).abs() <= 0.03,
                "ζ = {zeta}: envelope {measured} ({kind:?})"
            );
        }
    }
}
