//! Stress: thousands of steps of randomised rigs — large rotations, sudden jumps, scaling —
//! with stiff and soft materials and a large time step, for the full and fast solvers. No NaN,
//! bounded motion, the rig contract holds at every step.

use overtone::dynamics::FastParams;
use overtone::scene::{metronome_beam, simulate, MetronomeBeam, Scene, SolverKind};

/// A seeded random rig: a smooth random rotation, slow scaling, and a sudden translation jump
/// every 97 frames.
fn random_rig(frames: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut s = seed;
    let mut rnd = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let (mut angle, mut omega, mut t) = (0.0f64, 0.0f64, [0.0f64, 0.0]);
    (0..frames)
        .map(|f| {
            omega = (omega + 0.05 * rnd()).clamp(-0.3, 0.3);
            angle += omega;
            if f % 97 == 96 {
                t = [t[0] + rnd(), t[1] + rnd()];
            }
            let scale = 1.0 + 0.2 * (f as f64 * 0.01).sin();
            let (c, si) = (scale * angle.cos(), scale * angle.sin());
            vec![c, -si, t[0], si, c, t[1]]
        })
        .collect()
}

fn stress(sc: Scene, kind: SolverKind, label: &str) {
    let sim = simulate(&sc, kind, 10, None).unwrap();
    let worst = sim.steps.iter().map(|s| s.relative_residual).fold(0.0, f64::max);
    let nan = sim.positions.iter().flatten().filter(|x| !x.is_finite()).count();
    let peak = sim.max_displacement.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "{label}: {} steps, max relative residual {worst:.1e}, NaN {nan}, max |u_c| {peak:.3}",
        sim.steps.len()
    );
    assert_eq!(nan, 0, "{label}");
    assert!(worst <= 1e-8, "{label}: residual {worst:e}");
    assert!(peak < 20.0, "{label}: secondary motion {peak} on a 2-unit beam");
}

#[test]
fn randomised_rigs_stay_finite_and_rig_orthogonal() {
    let frames = 10_001;
    for (e, dt, label) in [(1e7, 0.01, "stiff"), (1e3, 0.01, "soft"), (1e5, 0.05, "large dt")] {
        let mut sc = metronome_beam(MetronomeBeam {
            steps: 1,
            ..Default::default()
        })
        .unwrap();
        sc.frames = random_rig(frames, 17);
        sc.material.youngs_modulus = e;
        sc.dt = dt;
        stress(sc.clone(), SolverKind::Full, &format!("full, {label}"));
        stress(
            sc,
            SolverKind::Fast(FastParams::default_for(2)),
            &format!("fast, {label}"),
        );
    }
}
