//! The host-facing deformer on a skinned tube: the rig contract, rest invariance, refusals that
//! leave the state untouched.

use overtone::deformer::{BodyInput, PoseInput, SurfaceDeformer, SurfacePart};
use overtone::progress::NoProgress;
use overtone::Settings;

use crate::common::paths::tmpdir;
use crate::common::tube::{bind_mesh, frame, tube};

/// Bone 1 rotated by `angle` about the z axis through (0, 1.5, 0); bone 0 fixed.
fn pose(angle: f64) -> Vec<f64> {
    let (c, s) = (angle.cos(), angle.sin());
    let pivot = [0.0, 1.5];
    let t = [
        pivot[0] - (c * pivot[0] - s * pivot[1]),
        pivot[1] - (s * pivot[0] + c * pivot[1]),
    ];
    vec![
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, c, -s, 0.0, t[0], s, c, 0.0, t[1], 0.0, 0.0, 1.0,
        0.0,
    ]
}

#[test]
fn deformer_keeps_the_contract_and_refuses_bad_poses_without_side_effects() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    // Cut detection off: the 1e300 jump below must reach the solver (with it on, that jump
    // is a cut and restarts the simulation: see `a_teleport_is_a_cut_not_a_launch`).
    let mut settings = Settings::default();
    settings.cut_distance = None;
    let mut def = bind_mesh(&settings, &v, &t, &w, &pose(0.0)).unwrap();
    let mut twin = bind_mesh(&settings, &v, &t, &w, &pose(0.0)).unwrap();
    let (mut out, mut out2) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
    // Holding the rest pose: nothing moves.
    def.step(&frame(&pose(0.0)), &mut out).unwrap();
    twin.step(&frame(&pose(0.0)), &mut out2).unwrap();
    assert!(out.iter().all(|x| x.abs() < 1e-12), "rest pose produced motion");
    let mut peak: f64 = 0.0;
    for k in 1..30 {
        let a = 0.8 * (k as f64 * 0.3).sin();
        // Refused poses (wrong size, NaN) and a wrong output size change nothing: the twin,
        // which never sees them, stays bit-identical.
        assert!(def.step(&frame(&pose(a)[..12]), &mut out).is_err());
        let mut bad = pose(a);
        bad[5] = f64::NAN;
        assert!(def.step(&frame(&bad), &mut out).is_err());
        assert!(def.step(&frame(&pose(a)), &mut vec![0.0; 5]).is_err());
        // A finite pose whose step overflows (a translation of 1e300) fails the step itself:
        // typed error, and the state and the last report stay as they were.
        let mut jump = pose(a);
        jump[3] = 1e300;
        let last = def.last_report();
        let e = def.step(&frame(&jump), &mut out).unwrap_err();
        assert!(
            matches!(
                e,
                overtone::OvertoneError::Numerical(overtone::NumericalError::StepFailed { .. })
            ) && e.to_string().contains("unchanged"),
            "{e:?}"
        );
        assert_eq!(def.last_report(), last);
        let r = def.step(&frame(&pose(a)), &mut out).unwrap();
        twin.step(&frame(&pose(a)), &mut out2).unwrap();
        assert!(out == out2, "frame {k}: a refused call changed the state");
        assert!(r.relative_residual <= 1e-8, "frame {k}: {:e}", r.relative_residual);
        assert!(out.iter().all(|x| x.is_finite()));
        peak = peak.max(out.iter().fold(0.0, |m, x| m.max(x.abs())));
    }
    assert!(peak > 1e-4, "no secondary motion: {peak}");
    // Reset forgets the history: it equals a deformer created in that pose.
    def.reset(&frame(&pose(0.3))).unwrap();
    def.step(&frame(&pose(0.35)), &mut out).unwrap();
    let mut fresh = bind_mesh(&settings, &v, &t, &w, &pose(0.3)).unwrap();
    fresh.step(&frame(&pose(0.35)), &mut out2).unwrap();
    assert!(out == out2, "reset differs from a fresh start");
}

/// Two blendshapes on the tube: a bulge of the middle third and a sideways bend of the tip half.
fn tube_morphs(v: &[f64]) -> Vec<f64> {
    let n = v.len() / 3;
    let mut d = vec![0.0; 2 * n * 3];
    for i in 0..n {
        let (x, y, z) = (v[3 * i], v[3 * i + 1], v[3 * i + 2]);
        let r = (x * x + z * z).sqrt();
        if (1.0..=2.0).contains(&y) && r > 1e-9 {
            let s = 0.15 * (std::f64::consts::PI * (y - 1.0)).sin();
            d[3 * i] = s * x / r;
            d[3 * i + 2] = s * z / r;
        }
        let t = ((y - 1.5) / 1.5).max(0.0);
        d[3 * n + 3 * i] = 0.4 * t * t;
    }
    d
}

#[test]
fn blendshape_deformer_is_orthogonal_to_the_targets_too() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    let deltas = tube_morphs(&v);
    let settings = Settings::default();
    let p0 = pose(0.0);
    let with_deltas = |deltas| BodyInput {
        parts: vec![SurfacePart {
            vertices: &v,
            triangles: &t,
            weights: &w,
            morph_deltas: deltas,
            ..Default::default()
        }],
        n_bones: 2,
        n_targets: 2,
        first_pose: PoseInput {
            transforms: &p0,
            morph_weights: &[0.0, 0.0],
        },
        sidecar: None,
    };
    let mut def = SurfaceDeformer::bind(&settings, &with_deltas(&deltas), &NoProgress).unwrap();
    assert_eq!(def.n_targets(), 2);
    let mut out = vec![0.0; 3 * n];
    let mut worst: f64 = 0.0;
    let mut moved: f64 = 0.0;
    // Only the blendshapes animate for 30 frames (the bones hold), then both.
    for k in 1..60 {
        let s = (0.3 * k as f64).sin();
        let weights = [s.abs(), 0.5 * (1.0 - (0.2 * k as f64).cos())];
        let angle = if k < 30 {
            0.0
        } else {
            0.4 * (0.2 * (k - 30) as f64).sin()
        };
        def.step(
            &PoseInput {
                transforms: &pose(angle),
                morph_weights: &weights,
            },
            &mut out,
        )
        .unwrap();
        worst = worst.max(def.relative_residual());
        moved = moved.max(out.iter().fold(0.0_f64, |a, x| a.max(x.abs())));
    }
    eprintln!("blendshape deformer: relative residual {worst:.2e}, largest displacement {moved:.4}");
    // The contract against bones and blendshapes: 1e-8 relative.
    assert!(worst <= 1e-8, "relative residual {worst:.2e}");
    assert!(moved > 1e-4, "no secondary motion from the blendshapes ({moved:.2e})");
    // The weights are required, one per target, finite; a refusal changes nothing.
    let before = out.clone();
    assert!(def.step(&frame(&pose(0.1)), &mut out).is_err());
    assert!(def
        .step(
            &PoseInput {
                transforms: &pose(0.1),
                morph_weights: &[0.1]
            },
            &mut out
        )
        .is_err());
    assert!(def
        .step(
            &PoseInput {
                transforms: &pose(0.1),
                morph_weights: &[0.1, f64::NAN]
            },
            &mut out
        )
        .is_err());
    assert_eq!(out, before);
    // A target of the wrong size is refused at creation.
    assert!(SurfaceDeformer::bind(&settings, &with_deltas(&deltas[..3 * n]), &NoProgress).is_err());
}

/// A rig that jumps by more than the cut distance (half the body's diagonal) in one frame
/// restarts the simulation there: zero displacement at the jump, no launch afterwards (the
/// next frames' motion stays the size of the motion before the jump), the contract holds.
#[test]
fn a_teleport_is_a_cut_not_a_launch() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    let mut def = bind_mesh(&Settings::default(), &v, &t, &w, &pose(0.0)).unwrap();
    let mut out = vec![0.0; 3 * n];
    let shifted = |a: f64, dx: f64| {
        let mut p = pose(a);
        p[3] += dx;
        p[15] += dx;
        p
    };
    let size = |u: &[f64]| {
        u.chunks(3)
            .map(|x| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt())
            .fold(0.0, f64::max)
    };
    let mut before: f64 = 0.0;
    for k in 1..20 {
        def.step(&frame(&shifted(0.5 * (k as f64 * 0.3).sin(), 0.0)), &mut out)
            .unwrap();
        before = before.max(size(&out));
    }
    assert!(before > 1e-3, "the swing moves the tube ({before:.2e})");
    // Teleport by 10 (the tube's diagonal is about 3).
    def.step(&frame(&shifted(0.5 * (20.0f64 * 0.3).sin(), 10.0)), &mut out)
        .unwrap();
    assert_eq!(def.cuts(), 1);
    assert_eq!(size(&out), 0.0);
    let mut after: f64 = 0.0;
    for k in 21..40 {
        def.step(&frame(&shifted(0.5 * (k as f64 * 0.3).sin(), 10.0)), &mut out)
            .unwrap();
        after = after.max(size(&out));
        assert!(def.relative_residual() < 1e-8);
    }
    assert_eq!(def.cuts(), 1);
    assert!(after < 2.0 * before, "after the cut {after:.3e}, before {before:.3e}");
}

/// A bind reports monotone fractions ending at 1 with stage names; a cancelled bind (cancelled
/// from another thread while it runs, and one cancelled before it starts) returns `Cancelled`
/// and writes no sidecar; the same bind uncancelled writes it.
#[test]
fn bind_reports_progress_and_can_be_cancelled() {
    use overtone::progress::{AtomicProgress, Progress};
    use overtone::OvertoneError;
    use std::sync::Mutex;

    /// Records every report, and cancels once the fraction passes `cancel_at`.
    struct Recorder {
        seen: Mutex<Vec<(f64, String)>>,
        inner: AtomicProgress,
        cancel_at: f64,
    }
    impl Progress for Recorder {
        fn report(&self, f: f64, stage: &str) {
            self.seen.lock().unwrap().push((f, stage.to_string()));
            self.inner.report(f, stage);
            if f >= self.cancel_at {
                self.inner.cancel();
            }
        }
        fn cancelled(&self) -> bool {
            self.inner.cancelled()
        }
    }
    let (v, t, w) = tube();
    let dir = tmpdir("bind-progress");
    let sidecar = dir.join("tube.ovt");
    let _ = std::fs::remove_file(&sidecar);
    let p0 = pose(0.0);
    let body = BodyInput {
        parts: vec![SurfacePart {
            vertices: &v,
            triangles: &t,
            weights: &w,
            ..Default::default()
        }],
        n_bones: 2,
        first_pose: frame(&p0),
        sidecar: Some(&sidecar),
        ..Default::default()
    };
    let settings = Settings::default();
    // Cancelled in the middle of the solver's precompute (past the lattice scene at 25 %).
    let rec = Recorder {
        seen: Mutex::new(Vec::new()),
        inner: AtomicProgress::new(),
        cancel_at: 0.3,
    };
    let e = SurfaceDeformer::bind(&settings, &body, &rec).err().expect("cancelled");
    assert!(matches!(e, OvertoneError::Cancelled), "{e}");
    assert!(!sidecar.exists(), "a cancelled bind wrote its sidecar");
    // Cancelled before it starts.
    let pre = AtomicProgress::new();
    pre.cancel();
    assert!(matches!(
        SurfaceDeformer::bind(&settings, &body, &pre),
        Err(OvertoneError::Cancelled)
    ));
    // Uncancelled: fractions never decrease, reach 1, and name the stages.
    let rec = Recorder {
        seen: Mutex::new(Vec::new()),
        inner: AtomicProgress::new(),
        cancel_at: f64::INFINITY,
    };
    let def = SurfaceDeformer::bind(&settings, &body, &rec).unwrap();
    let seen = rec.seen.lock().unwrap();
    assert!(seen.len() > 10, "only {} reports", seen.len());
    assert!(seen.windows(2).all(|p| p[1].0 >= p[0].0 - 1e-15), "fractions decreased");
    assert_eq!(seen.last().unwrap().0, 1.0);
    assert!(seen.iter().any(|(_, s)| s.contains("eigenmodes")));
    assert!(seen.iter().any(|(_, s)| s.contains("lattice")));
    assert!(sidecar.exists());
    assert_eq!(def.n_parts(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two meshes bound to one skeleton form one body: the same tube given whole or as two parts
/// (the tube and a copy shifted far away, indices per part) gives the tube's displacement in
/// the first part's range; each part's vertices are where `part_range` says; the contract
/// holds for the body. A leak field on one part only and per-part index errors are refused.
#[test]
fn several_meshes_bind_as_one_body() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    let far: Vec<f64> = v
        .iter()
        .enumerate()
        .map(|(i, x)| if i % 3 == 0 { x + 2.0 } else { *x })
        .collect();
    let p0 = pose(0.0);
    let part = |verts: &'static [f64]| SurfacePart {
        vertices: verts,
        triangles: Box::leak(t.clone().into_boxed_slice()),
        weights: Box::leak(w.clone().into_boxed_slice()),
        ..Default::default()
    };
    let v1: &'static [f64] = Box::leak(v.clone().into_boxed_slice());
    let v2: &'static [f64] = Box::leak(far.into_boxed_slice());
    let body = BodyInput {
        parts: vec![part(v1), part(v2)],
        n_bones: 2,
        first_pose: frame(&p0),
        ..Default::default()
    };
    let settings = Settings::default();
    let mut def = SurfaceDeformer::bind(&settings, &body, &NoProgress).unwrap();
    assert_eq!(def.n_parts(), 2);
    assert_eq!(def.part_range(0), Some(0..n));
    assert_eq!(def.part_range(1), Some(n..2 * n));
    assert_eq!(def.part_range(2), None);
    let mut out = vec![0.0; 6 * n];
    let mut peak = [0.0f64; 2];
    for k in 1..20 {
        def.step(&frame(&pose(0.8 * (k as f64 * 0.3).sin())), &mut out).unwrap();
        assert!(def.relative_residual() < 1e-8, "residual {}", def.relative_residual());
        for p in 0..2 {
            let r = def.part_range(p).unwrap();
            let m = out[3 * r.start..3 * r.end].iter().fold(0.0f64, |a, x| a.max(x.abs()));
            peak[p] = peak[p].max(m);
        }
    }
    assert!(peak[0] > 1e-4 && peak[1] > 1e-4, "both parts move: {peak:?}");
    // Refusals.
    let leak = vec![1.0; n];
    let mut bad = body.clone();
    bad.parts[0].leak = Some(&leak);
    assert!(SurfaceDeformer::bind(&settings, &bad, &NoProgress).is_err());
    let mut bad = body.clone();
    let tri_global: Vec<usize> = t.iter().map(|&i| i + n).collect();
    bad.parts[1].triangles = &tri_global;
    let e = SurfaceDeformer::bind(&settings, &bad, &NoProgress).err().unwrap();
    assert!(e.to_string().contains("indices are per part"), "{e}");
    let empty = BodyInput {
        parts: vec![],
        n_bones: 2,
        first_pose: frame(&p0),
        ..Default::default()
    };
    assert!(SurfaceDeformer::bind(&settings, &empty, &NoProgress).is_err());
}

/// The tube turned about a skew axis by 2.2 rad and moved by (5, −3, 11), posed by the same
/// motion conjugated into that placement, gets the same secondary motion turned with it: the
/// lattice is built in the body's own frame, not along the world axes (it was, and the turned
/// tube's motion differed from the upright one's by 107% of its size). Checked on the live
/// deformer with the fast solver (default) and gravity (a world vector, turned into the frame).
#[test]
fn a_body_turned_and_moved_in_the_world_moves_the_same() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    let q = nalgebra::Rotation3::from_axis_angle(
        &nalgebra::Unit::new_normalize(nalgebra::Vector3::new(0.3, -1.0, 0.6)),
        2.2,
    )
    .into_inner();
    let shift = nalgebra::Vector3::new(5.0, -3.0, 11.0);
    let place = |p: &[f64]| -> [f64; 3] {
        let y = q * nalgebra::Vector3::new(p[0], p[1], p[2]) + shift;
        [y.x, y.y, y.z]
    };
    let turned_v: Vec<f64> = v.chunks(3).flat_map(place).collect();
    // Bone transforms in the new placement: P T P⁻¹ with P = [Q | shift].
    let conjugate = |pose: &[f64]| -> Vec<f64> {
        pose.chunks(12)
            .flat_map(|b| {
                let a = nalgebra::Matrix3::new(b[0], b[1], b[2], b[4], b[5], b[6], b[8], b[9], b[10]);
                let tr = nalgebra::Vector3::new(b[3], b[7], b[11]);
                let a2 = q * a * q.transpose();
                let t2 = q * tr + shift - a2 * shift;
                (0..12).map(move |k| if k % 4 == 3 { t2[k / 4] } else { a2[(k / 4, k % 4)] })
            })
            .collect()
    };
    let mut upright = Settings::default();
    upright.gravity = [0.0, -2.0, 0.0];
    let mut turned = upright.clone();
    let g = q * nalgebra::Vector3::new(0.0, -2.0, 0.0);
    turned.gravity = [g.x, g.y, g.z];
    let mut a = bind_mesh(&upright, &v, &t, &w, &pose(0.0)).unwrap();
    let mut b = bind_mesh(&turned, &turned_v, &t, &w, &conjugate(&pose(0.0))).unwrap();
    let (mut out_a, mut out_b) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
    let (mut worst, mut peak) = (0.0f64, 0.0f64);
    for k in 1..40 {
        let angle = 0.8 * (k as f64 * 0.3).sin();
        a.step(&frame(&pose(angle)), &mut out_a).unwrap();
        b.step(&frame(&conjugate(&pose(angle))), &mut out_b).unwrap();
        for s in 0..n {
            let ua = q * nalgebra::Vector3::new(out_a[3 * s], out_a[3 * s + 1], out_a[3 * s + 2]);
            let ub = nalgebra::Vector3::new(out_b[3 * s], out_b[3 * s + 1], out_b[3 * s + 2]);
            worst = worst.max((ua - ub).norm());
            peak = peak.max(ua.norm());
        }
    }
    eprintln!("turned vs upright: largest difference {worst:.3e} of a peak {peak:.3e}");
    assert!(peak > 1e-3, "no secondary motion: {peak}");
    assert!(worst <= 1e-6 * peak, "turned vs upright: {worst:e} of {peak:e}");
}

/// The motion of [`the_frame_rate_changes_the_sampling_not_the_motion`]: bone 1 swung out to
/// 0.8 rad and back by `0.4 (1 − cos 2πt)` over the first second (at rest at both ends), then
/// held; `t` in seconds.
fn swing(t: f64) -> f64 {
    0.4 * (1.0 - (2.0 * std::f64::consts::PI * t.min(1.0)).cos())
}

/// With the default integrator a host's frame rate changes how often it looks, not what moves:
/// the same swing played at 24, 30 and 96 fps (poses sampled at each rate, the rig interpolated
/// between frames on the fixed physics clock) agrees at the instants the rates share (every
/// 1/6 s over 2 s, swing and ring-down) within 5% of the peak secondary motion (measured 3.2%
/// at 24 fps, 2.5% at 30, 0.4% at 48: what remains is the rig between frames, a causal cubic
/// through the frames seen; blending the frames linearly gave 35%, 19% and 5.6%; before the
/// fixed clock each rate stepped its own frame length). A deformer takes a new frame
/// rate without a rebind; with backward Euler (one step per frame) it is refused, as is any
/// precompute setting.
#[test]
fn the_frame_rate_changes_the_sampling_not_the_motion() {
    let (v, t, w) = tube();
    let n = v.len() / 3;
    let run = |fps: f64| -> Vec<Vec<f64>> {
        let mut s = Settings::default();
        s.fps = fps;
        // The tube's Young's modulus as given (lowest mode ~2.5 Hz), not the default 5 Hz:
        // the swing stops with a step in the rig's acceleration, which a host sees only at its
        // frames, so the ring-down of a body whose period nears a few host frames differs by
        // where in the frame the step fell (24 vs 96 fps: 3.2% at 2.5 Hz, 10% at 3 Hz, 14% at
        // 4-6 Hz, measured; the Blender CesiumMan test, a keyed clip without that step, holds
        // 5% at the default).
        s.frequency = None;
        let mut d = bind_mesh(&s, &v, &t, &w, &pose(0.0)).unwrap();
        let mut out = vec![0.0; 3 * n];
        let frames = (2.0 * fps).round() as usize;
        let every = (fps / 6.0).round() as usize;
        let mut shared = vec![out.clone()];
        for k in 1..=frames {
            d.step(&frame(&pose(swing(k as f64 / fps))), &mut out).unwrap();
            if k % every == 0 {
                shared.push(out.clone());
            }
        }
        shared
    };
    let reference = run(96.0);
    let peak = reference
        .iter()
        .flat_map(|u| u.chunks(3).map(|x| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt()))
        .fold(0.0, f64::max);
    assert!(peak > 1e-3, "no secondary motion: {peak}");
    for fps in [24.0, 30.0] {
        let other = run(fps);
        assert_eq!(other.len(), reference.len());
        let worst = other
            .iter()
            .zip(&reference)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0, f64::max);
        eprintln!(
            "{fps} fps vs 96 fps: largest difference {:.2}% of the peak {peak:.3e}",
            100.0 * worst / peak
        );
        assert!(worst <= 0.05 * peak, "{fps} fps: {worst:e} of {peak:e}");
    }
    // A new frame rate without a rebind; a precompute setting still refused.
    let mut s = Settings::default();
    let mut d = bind_mesh(&s, &v, &t, &w, &pose(0.0)).unwrap();
    s.fps = 30.0;
    d.set_controls(&s).unwrap();
    let mut stiffer = s.clone();
    stiffer.youngs_modulus *= 2.0;
    assert!(d.set_controls(&stiffer).is_err());
    let mut be = Settings::default();
    be.integrator = overtone::dynamics::Integrator::BackwardEuler;
    let mut d = bind_mesh(&be, &v, &t, &w, &pose(0.0)).unwrap();
    be.fps = 30.0;
    let err = d.set_controls(&be).expect_err("backward Euler steps once per frame");
    assert!(err.to_string().contains("fps"), "{err}");
}

/// Issue 31, layered clothing: an open sleeve 2 cm outside the tube (the tube's rings over y in
/// [0.8, 2.2], its vertices half-way between the tube's around the ring, no caps; a second
/// part with the same weights) rides in the tube's lattice. Over a swing of the tip bone its
/// secondary motion matches the tube's under it (the mean of the two tube vertices it sits
/// between) within 20% (RMS over vertices and frames; 9.8% measured), and its peak the tube's
/// there within 10% (0.93x measured). With its own lattice (before) the sleeve, held by nothing
/// but the rig, moved on its own.
#[test]
fn a_sleeve_rides_with_the_tube_it_covers() {
    let (v, t, w) = tube();
    let n_tube = v.len() / 3;
    // The sleeve: 8 rings of 12 vertices at radius 0.27 at the tube's rings 4-11 (y 0.8 to
    // 2.2), open at both ends.
    let (rings, seg) = (8, 12);
    let (mut sv, mut sw, mut st) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rings {
        let y = 3.0 * (r + 4) as f64 / 15.0;
        let b = (y - 1.0).clamp(0.0, 1.0);
        for s in 0..seg {
            let a = std::f64::consts::TAU * (s as f64 + 0.5) / seg as f64;
            sv.extend([0.27 * a.cos(), y, 0.27 * a.sin()]);
            sw.extend([1.0 - b, b]);
        }
    }
    for r in 0..rings - 1 {
        for s in 0..seg {
            let (a, b) = (r * seg + s, r * seg + (s + 1) % seg);
            st.extend([a, a + seg, b, b, a + seg, b + seg]);
        }
    }
    let n_sleeve = sv.len() / 3;
    let rest_pose = pose(0.0);
    let body = BodyInput {
        parts: vec![
            SurfacePart {
                vertices: &v,
                triangles: &t,
                weights: &w,
                ..Default::default()
            },
            SurfacePart {
                vertices: &sv,
                triangles: &st,
                weights: &sw,
                ..Default::default()
            },
        ],
        n_bones: 2,
        first_pose: frame(&rest_pose),
        ..Default::default()
    };
    let mut def = SurfaceDeformer::bind(&Settings::default(), &body, &NoProgress).unwrap();
    // The two tube vertices each sleeve vertex sits between (tube ring r + 4, around-ring s, s + 1).
    let under = |s: usize| -> [usize; 2] {
        let (r, k) = (s / seg + 4, s % seg);
        [r * seg + k, r * seg + (k + 1) % seg]
    };
    let mut out = vec![0.0; 3 * (n_tube + n_sleeve)];
    let (mut diff2, mut tube2) = (0.0, 0.0);
    let (mut sleeve_peak, mut tube_peak) = (0.0f64, 0.0f64);
    for k in 1..=72 {
        let a = if k <= 24 {
            0.8 * (k as f64 * 0.26).sin()
        } else {
            0.8 * (24.0 * 0.26f64).sin()
        };
        def.step(&frame(&pose(a)), &mut out).unwrap();
        for s in 0..n_sleeve {
            let us = &out[3 * (n_tube + s)..3 * (n_tube + s) + 3];
            let [j0, j1] = under(s);
            let ut: [f64; 3] = std::array::from_fn(|i| 0.5 * (out[3 * j0 + i] + out[3 * j1 + i]));
            diff2 += (0..3).map(|i| (us[i] - ut[i]).powi(2)).sum::<f64>();
            let tn = (0..3).map(|i| ut[i] * ut[i]).sum::<f64>();
            tube2 += tn;
            tube_peak = tube_peak.max(tn.sqrt());
            sleeve_peak = sleeve_peak.max((0..3).map(|i| us[i] * us[i]).sum::<f64>().sqrt());
        }
    }
    let rel = (diff2 / tube2).sqrt();
    println!("sleeve vs tube: RMS difference {rel:.3}, peaks {sleeve_peak:.3e} / {tube_peak:.3e}");
    assert!(tube_peak > 1e-3, "the tube under the sleeve moves: {tube_peak}");
    assert!(rel <= 0.2, "{rel}");
    assert!(
        (sleeve_peak / tube_peak - 1.0).abs() <= 0.1,
        "{sleeve_peak} vs {tube_peak}"
    );
}
