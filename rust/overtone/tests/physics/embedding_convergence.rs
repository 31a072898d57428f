//! Convergence of a character's secondary motion under lattice refinement, and its hold.
//!
//! The character is a thin-limbed "mallet" made here: a block (the body, one bone) with a long
//! square bar (the limb, a second bone) of 0.1 across against a length of 2, one closed surface.
//! The limb swings vigorously about the joint for 0.75 s, then the rig holds still for 1.5 s in
//! a pose away from bind. Baked at the automatic lattice resolution and at a 1.5x finer one
//! (fast solver, 120 Hz, default settings), the secondary motion must agree (issue 13):
//! peak within 30 %, per-frame maxima within 30 % (relative L2 over the clip); and once the rig
//! has held still for 1 s the secondary motion must be at most 0.3 % of the diagonal.
//!
//! Measured 2026-12-02 (eigenmodes of the material, four cells across thin parts, 125k-tet
//! budget): the automatic resolution is 74 and the test passes there (peak ratio 1.05, per
//! frame 0.16, hold 0.06 % of the diagonal). Forced lattices 66 and 73 give 0.93 / 0.14 and
//! 0.98 / 0.15; at three cells across (55) it was 1.25 / 0.31, and 50, 53, 58, 62 gave 1.46,
//! 1.06, 1.16, 1.10 (per frame 0.84, 0.20, 0.38, 0.27): below about 3.3 cells the result
//! depends on where the bar falls in the cells. Before the eigenmodes followed the material
//! shares, 55 vs 83 gave 1.57 (per frame 0.91, hold 0.39 %).
//!
//! The fast solver moves the bar itself far less than the full-order solver does (the tip
//! 0.003 against 0.16 at 83 cells): the limb follows its bone, and the peak is at the block's
//! corners at the joint, which the linear blend half-carries with the limb. The bar's own
//! small motion converges more slowly than the peak (2.5-8.4 times larger at 55 than at 83
//! cells along it, with 16 modes, one rotation per element or 48 modes alike; the full-order
//! solver's bar agrees within 2-23 % at its tip and 13-51 % along it there).

use crate::common::refinement;

use overtone::dynamics::{FastParams, AUTO_MODES};
use overtone::scene::{bake_character, Character, CharacterSettings, SolverKind};

const FPS: f64 = 120.0;
/// Joint between body and limb, on the x axis.
const JOINT: f64 = -0.4;
const SWING_SECONDS: f64 = 0.75;
const HOLD_SECONDS: f64 = 1.5;

/// Half-width of the cross-section at ring `x`: the block up to the joint, the bar beyond.
fn rings() -> Vec<(f64, f64)> {
    let mut r = vec![(-1.0, 0.25), (-0.7, 0.25), (JOINT, 0.25), (JOINT, 0.05)];
    let steps = 14;
    for k in 1..=steps {
        r.push((JOINT + (1.0 - JOINT) * k as f64 / steps as f64, 0.05));
    }
    r
}

/// The closed surface: square rings along x (4 vertices each, outward quads between rings, a
/// flat annulus at the step) and two end caps; vertices `n × 3`, triangles `t × 3`.
fn mallet() -> (Vec<f64>, Vec<usize>) {
    let rings = rings();
    let corners = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
    let mut v = Vec::new();
    for &(x, h) in &rings {
        for (cy, cz) in corners {
            v.extend([x, cy * h, cz * h]);
        }
    }
    let mut t = Vec::new();
    for r in 0..rings.len() - 1 {
        for k in 0..4 {
            let (a, b) = (4 * r + k, 4 * r + (k + 1) % 4);
            let (c, d) = (a + 4, b + 4);
            t.extend([a, b, d, a, d, c]);
        }
    }
    let last = 4 * (rings.len() - 1);
    t.extend([0, 2, 1, 0, 3, 2]);
    t.extend([last, last + 1, last + 2, last, last + 2, last + 3]);
    (v, t)
}

/// Weights `n × 2`: the body bone up to the joint, the limb bone beyond, blended over 0.2.
fn weights(v: &[f64]) -> Vec<f64> {
    v.chunks(3)
        .flat_map(|p| {
            let s = ((p[0] - (JOINT - 0.1)) / 0.2).clamp(0.0, 1.0);
            let w = s * s * (3.0 - 2.0 * s);
            [1.0 - w, w]
        })
        .collect()
}

/// The limb's angle about z (radians) at time `t`: a swing of ±0.6 rad at 2 Hz that ends, at
/// full speed, in a hold at 0.4 rad.
fn angle(t: f64) -> f64 {
    if t < SWING_SECONDS {
        0.6 * (2.0 * std::f64::consts::PI * t / 0.5).sin() + 0.4 * t / SWING_SECONDS
    } else {
        0.4
    }
}

/// Per frame, the two bones' skin transforms (`3 × 4` row-major): the body still, the limb
/// rotated about z around the joint.
fn frames() -> Vec<Vec<f64>> {
    let n = ((SWING_SECONDS + HOLD_SECONDS) * FPS).round() as usize + 1;
    (0..n)
        .map(|k| {
            let a = angle(k as f64 / FPS);
            let (c, s) = (a.cos(), a.sin());
            // x' = R (x − p) + p with p = (JOINT, 0, 0).
            let limb = [c, -s, 0.0, JOINT - c * JOINT, s, c, 0.0, -s * JOINT, 0.0, 0.0, 1.0, 0.0];
            let body = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
            body.iter().chain(limb.iter()).copied().collect()
        })
        .collect()
}

/// Per frame, the largest secondary displacement of a surface vertex, and the lattice
/// resolution used.
fn per_frame_maxima(resolution: usize) -> (Vec<f64>, usize) {
    let (v, t) = mallet();
    let w = weights(&v);
    let settings = CharacterSettings {
        lattice_resolution: resolution,
        fps: FPS,
        ..CharacterSettings::default()
    };
    let ch = Character::from_surface("mallet", &v, &t, &w, 2, frames(), &settings, None).unwrap();
    // Default settings: the body chooses its mode count (the automatic lattice's size).
    let fast = FastParams {
        modes: AUTO_MODES,
        ..FastParams::default_for(3)
    };
    let baked = bake_character(&ch, SolverKind::Fast(fast), None, &mut |_, _| {}).unwrap();
    let maxima = refinement::surface_maxima(&baked, &format!("resolution {resolution}"));
    (maxima, ch.lattice_resolution)
}

#[test]
fn thin_limb_motion_converges_under_refinement_and_holds() {
    let (v, _) = mallet();
    let (lo, hi) = overtone::mesh::bounding_box(&v);
    let diagonal = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
    let (coarse, r) = per_frame_maxima(0);
    let finer = (3 * r + 1) / 2;
    let (fine, _) = per_frame_maxima(finer);
    let still_from = ((SWING_SECONDS + 1.0) * FPS).ceil() as usize;
    // Visible secondary motion at default settings (issue 13: 0.2 % to 6 % of the diagonal).
    refinement::check_refinement(
        &format!("resolution {r} vs {finer}"),
        &coarse,
        &fine,
        diagonal,
        still_from,
    );
}
