//! The skinned tube the deformer tests bind.

/// A closed tube along y (length 3, radius 0.25: 16 rings of 12 vertices and two cap centres)
/// with two bones (root and tip half), weights blending linearly over the middle third.
/// Returns vertices `n × 3`, triangles `t × 3` and weights `n × 2`.
pub fn tube() -> (Vec<f64>, Vec<usize>, Vec<f64>) {
    let (rings, seg) = (16, 12);
    let mut v = Vec::new();
    let mut w = Vec::new();
    for r in 0..rings {
        let y = 3.0 * r as f64 / (rings - 1) as f64;
        let t = (y - 1.0).clamp(0.0, 1.0);
        for s in 0..seg {
            let a = std::f64::consts::TAU * s as f64 / seg as f64;
            v.extend([0.25 * a.cos(), y, 0.25 * a.sin()]);
            w.extend([1.0 - t, t]);
        }
    }
    let mut tri = Vec::new();
    for r in 0..rings - 1 {
        for s in 0..seg {
            let (a, b) = (r * seg + s, r * seg + (s + 1) % seg);
            tri.extend([a, a + seg, b, b, a + seg, b + seg]);
        }
    }
    // Caps.
    let (bottom, top) = (v.len() / 3, v.len() / 3 + 1);
    v.extend([0.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
    w.extend([1.0, 0.0, 0.0, 1.0]);
    for s in 0..seg {
        let (a, b) = (s, (s + 1) % seg);
        tri.extend([bottom, a, b]);
        let (a, b) = ((rings - 1) * seg + s, (rings - 1) * seg + (s + 1) % seg);
        tri.extend([top, b, a]);
    }
    (v, tri, w)
}

/// Binds one mesh (`v` `n × 3`, `t` `t × 3`, weights `w` `n × bones`) at the first pose
/// `first` (`bones × 12`), without blendshapes, painted fields or a sidecar.
pub fn bind_mesh(
    settings: &overtone::Settings,
    v: &[f64],
    t: &[usize],
    w: &[f64],
    first: &[f64],
) -> overtone::Result<overtone::deformer::SurfaceDeformer> {
    let body = overtone::deformer::BodyInput {
        parts: vec![overtone::deformer::SurfacePart {
            vertices: v,
            triangles: t,
            weights: w,
            ..Default::default()
        }],
        n_bones: first.len() / 12,
        first_pose: frame(first),
        ..Default::default()
    };
    overtone::deformer::SurfaceDeformer::bind(settings, &body, &overtone::progress::NoProgress)
}

/// A frame of a bones-only rig: its `bones × 12` transforms.
pub fn frame(transforms: &[f64]) -> overtone::deformer::PoseInput<'_> {
    overtone::deformer::PoseInput {
        transforms,
        morph_weights: &[],
    }
}
