//! Convergence of a long uniform body's secondary motion under lattice refinement, and its hold.
//!
//! The body is the Blender tests' tube made here: length 3 along z, radius 0.25, skinned to a
//! chain of three bones with smooth weights; the whole chain swings about x around its root as
//! the Blender tests key it (1.2 s), then holds for 1.5 s away from bind. A body of uniform thickness is all "bulk":
//! the automatic lattice puts eight cells across it ([`CELLS_ACROSS_BULK`]) and, being small, it
//! gets 64 modes ([`SMALL_BODY_MODES`]). Baked at default settings at the automatic lattice and at
//! a 1.5x finer one, the secondary motion must agree as issue 13 asks: peak within 30 %,
//! per-frame maxima within 30 % (relative L2 over the clip), peak between 0.2 % and 6 % of the
//! diagonal, and at most 0.3 % of it once the rig has held still for 1 s.
//!
//! Measured 2026-12-02 with the glTF export of the Blender tube (CLI, 24 fps clip): with the
//! former defaults (26 cells, 16 modes) the peak was 1.30 times the 39-cell one (per frame 0.38)
//! and kept shrinking under refinement (16 modes, 51 vs 77 cells: 1.68); at the defaults now
//! (51 cells, 64 modes) 1.00 (per frame 0.08).

use crate::common::refinement;

use overtone::dynamics::{FastParams, AUTO_MODES, SMALL_BODY_MODES};
use overtone::embed::CELLS_ACROSS_BULK;
use overtone::scene::{bake_character, Character, CharacterSettings, SolverKind};

const FPS: f64 = 24.0;
const LENGTH: f64 = 3.0;
const RADIUS: f64 = 0.25;
const BONES: usize = 3;
const SWING_SECONDS: f64 = 29.0 / 24.0;
const HOLD_SECONDS: f64 = 1.5;

/// The closed tube: `rings × segments` side vertices and two cap centres; vertices `n × 3`,
/// outward triangles `t × 3`.
fn tube(rings: usize, segments: usize) -> (Vec<f64>, Vec<usize>) {
    let mut v = Vec::new();
    for r in 0..rings {
        let z = LENGTH * r as f64 / (rings - 1) as f64;
        for s in 0..segments {
            let a = 2.0 * std::f64::consts::PI * s as f64 / segments as f64;
            v.extend([RADIUS * a.cos(), RADIUS * a.sin(), z]);
        }
    }
    let (bottom, top) = (rings * segments, rings * segments + 1);
    v.extend([0.0, 0.0, 0.0, 0.0, 0.0, LENGTH]);
    let mut t = Vec::new();
    for r in 0..rings - 1 {
        for s in 0..segments {
            let a = r * segments + s;
            let b = r * segments + (s + 1) % segments;
            t.extend([a, b, b + segments, a, b + segments, a + segments]);
        }
    }
    let last = (rings - 1) * segments;
    for s in 0..segments {
        t.extend([bottom, (s + 1) % segments, s]);
        t.extend([top, last + s, last + (s + 1) % segments]);
    }
    (v, t)
}

/// Weights `n × BONES`: Gaussians in z about each bone's middle (width 0.45 of a bone),
/// normalised, as the Blender tests' tube.
fn weights(v: &[f64]) -> Vec<f64> {
    let seg = LENGTH / BONES as f64;
    v.chunks(3)
        .flat_map(|p| {
            let w: Vec<f64> = (0..BONES)
                .map(|b| (-((p[2] - (b as f64 + 0.5) * seg) / (0.45 * seg)).powi(2)).exp())
                .collect();
            let sum: f64 = w.iter().sum();
            w.into_iter().map(move |x| x / sum)
        })
        .collect()
}

/// Keys of the chain's angle about x (seconds, radians): the Blender tests' tube's swing
/// (frames 1, 8, 16, 24, 30 at 24 fps), ending in a hold away from bind.
const KEYS: [(f64, f64); 5] = [
    (0.0, 0.0),
    (7.0 / 24.0, 0.7),
    (15.0 / 24.0, -0.5),
    (23.0 / 24.0, 0.3),
    (SWING_SECONDS, 0.2),
];

/// The chain's angle about x (radians) at time `t`: smoothstep between the keys (zero slope at
/// each, as clamped Bézier keys), held after the last.
fn angle(t: f64) -> f64 {
    KEYS.windows(2)
        .find(|k| t < k[1].0)
        .map_or(KEYS[KEYS.len() - 1].1, |k| {
            let s = (t - k[0].0) / (k[1].0 - k[0].0);
            k[0].1 + (k[1].1 - k[0].1) * s * s * (3.0 - 2.0 * s)
        })
}

/// Per frame, every bone's skin transform (`3 × 4` row-major): the chain rotated about x
/// around its root at the origin.
fn frames() -> Vec<Vec<f64>> {
    let n = ((SWING_SECONDS + HOLD_SECONDS) * FPS).round() as usize + 1;
    (0..n)
        .map(|k| {
            let (s, c) = angle(k as f64 / FPS).sin_cos();
            let r = [1.0, 0.0, 0.0, 0.0, 0.0, c, -s, 0.0, 0.0, s, c, 0.0];
            (0..BONES).flat_map(|_| r).collect()
        })
        .collect()
}

/// Per frame, the largest secondary displacement of a surface vertex, and the lattice
/// resolution and mode count used.
fn per_frame_maxima(resolution: usize) -> (Vec<f64>, usize, usize) {
    let (v, t) = tube(41, 24);
    let w = weights(&v);
    let settings = CharacterSettings {
        lattice_resolution: resolution,
        fps: FPS,
        ..CharacterSettings::default()
    };
    let ch = Character::from_surface("tube", &v, &t, &w, BONES, frames(), &settings, None).unwrap();
    // Default settings: the body chooses its mode count.
    let fast = ch.fast_params(FastParams {
        modes: AUTO_MODES,
        ..FastParams::default_for(3)
    });
    let baked = bake_character(&ch, SolverKind::Fast(fast), None, &mut |_, _| {}).unwrap();
    let maxima = refinement::surface_maxima(&baked, &format!("resolution {resolution}"));
    (maxima, ch.lattice_resolution, fast.modes)
}

#[test]
fn uniform_tube_motion_converges_under_refinement_and_holds() {
    let (v, _) = tube(41, 24);
    let (lo, hi) = overtone::mesh::bounding_box(&v);
    let diagonal = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
    let (coarse, r, modes) = per_frame_maxima(0);
    // Eight cells across the diameter 0.5 of a body 3 long (within a probe cell).
    let wanted = (LENGTH / (2.0 * RADIUS / CELLS_ACROSS_BULK)).ceil() as usize;
    assert!(r.abs_diff(wanted) <= 3, "automatic lattice {r}, wanted about {wanted}");
    assert_eq!(modes, SMALL_BODY_MODES, "a small body gets the small-body mode count");
    let finer = (3 * r + 1) / 2;
    let (fine, _, fine_modes) = per_frame_maxima(finer);
    assert_eq!(
        fine_modes, modes,
        "a finer lattice of the same body keeps its mode count"
    );
    let still_from = ((SWING_SECONDS + 1.0) * FPS).ceil() as usize;
    refinement::check_refinement(
        &format!("resolution {r} vs {finer}, {modes} modes"),
        &coarse,
        &fine,
        diagonal,
        still_from,
    );
}
