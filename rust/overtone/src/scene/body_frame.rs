//! The body frame of a surface: the frame a character's lattice is built in, so that the same
//! body translated or turned anywhere in the world gets the same lattice (and moves the same).
//!
//! The axes are the principal axes of the vertices' second moment `C = Σ (x_v − x̄)(x_v − x̄)ᵀ`
//! (largest first): for a character in any pose they follow its height, span and depth, so the
//! lattice cells line up with the body as they did with the world axes for an upright one.
//! Everything that fixes them depends only on the body and its vertex order, never on the world
//! axes: an axis's sign makes the index-weighted moment `m = Σ_v (v+1)(x_v − x̄)` positive on it
//! (the plain first moment is zero), and where two or three second moments are equal (a round
//! tube, a sphere: any axis in that plane is principal) the axes in the plane are `m` and then
//! `m₂ = Σ_v (v+1)²(x_v − x̄)`, projected. The third axis is the cross product of the first two,
//! so the frame is a rotation.
//!
//! The centre and scale are those of the bounding box in the body frame: the box's centre, and
//! its longest half-extent.

use nalgebra::{Matrix3, Vector3};

use crate::error::{OvertoneError, Result};
use crate::scene::Normalisation;

/// Second moments within this fraction of the largest are treated as equal: principal axes
/// closer than that are ill-determined (a host's float32 round-off, 1e-7, would turn them by
/// up to 1e-7/gap), so the index-weighted moments fix them instead; at 1e-3 round-off turns
/// the axes of distinct moments by at most ~1e-4 rad.
const EQUAL_MOMENTS: f64 = 1e-3;

/// The body frame of `vertices` (`n × 3`) and the vertices in it (`n × 3`, centred, longest
/// half-extent 1). `name` names the surface in the error for a surface of zero or non-finite
/// extent.
pub(crate) fn body_frame(name: &str, vertices: &[f64]) -> Result<(Normalisation, Vec<f64>)> {
    let n = vertices.len() / 3;
    let degenerate = || OvertoneError::setting("surface", name, "has zero or non-finite extent");
    if n == 0 || vertices.iter().any(|x| !x.is_finite()) {
        return Err(degenerate());
    }
    let point = |v: usize| Vector3::new(vertices[3 * v], vertices[3 * v + 1], vertices[3 * v + 2]);
    let mean = (0..n).map(point).sum::<Vector3<f64>>() / n as f64;
    let mut second = Matrix3::zeros();
    let (mut m1, mut m2) = (Vector3::zeros(), Vector3::zeros());
    for v in 0..n {
        let r = point(v) - mean;
        second += r * r.transpose();
        let w = (v + 1) as f64 / n as f64;
        m1 += w * r;
        m2 += w * w * r;
    }
    let axes = principal_axes(&(second / n as f64), &m1, &m2).ok_or_else(degenerate)?;
    // Bounding box in the body frame.
    let local: Vec<f64> = (0..n)
        .flat_map(|v| {
            let r = point(v) - mean;
            std::array::from_fn::<f64, 3, _>(|i| axes.column(i).dot(&r))
        })
        .collect();
    let (lo, hi) = crate::mesh::bounding_box(&local);
    let mid: [f64; 3] = std::array::from_fn(|i| 0.5 * (lo[i] + hi[i]));
    let scale = (0..3).map(|i| 0.5 * (hi[i] - lo[i])).fold(0.0, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(degenerate());
    }
    let centre_world = mean + axes * Vector3::from(mid);
    let normalised = local
        .iter()
        .enumerate()
        .map(|(k, y)| (y - mid[k % 3]) / scale)
        .collect();
    let frame = Normalisation {
        centre: [centre_world.x, centre_world.y, centre_world.z],
        scale,
        rotation: std::array::from_fn(|k| axes[(k / 3, k % 3)]),
    };
    Ok((frame, normalised))
}

/// The rotation whose columns are the body axes (see the module doc): principal axes of the
/// second moment `c`, signs and equal-moment planes fixed by the index-weighted moments `m1`,
/// `m2`. `None` when the moments cannot fix a frame (all vertices on one point or line with
/// the index moments along it: a degenerate surface).
fn principal_axes(c: &Matrix3<f64>, m1: &Vector3<f64>, m2: &Vector3<f64>) -> Option<Matrix3<f64>> {
    let eig = c.symmetric_eigen();
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let lambda: [f64; 3] = std::array::from_fn(|i| eig.eigenvalues[order[i]]);
    let vec = |i: usize| eig.eigenvectors.column(order[i]).into_owned();
    let top = lambda[0];
    if !(top > 0.0) {
        return None;
    }
    let equal = |a: f64, b: f64| (a - b).abs() <= EQUAL_MOMENTS * top;
    // A unit vector along `m1` (or `m2`) with its components along `against` removed.
    let in_plane = |against: &[Vector3<f64>]| -> Option<Vector3<f64>> {
        [m1, m2].into_iter().find_map(|m| {
            let mut r = *m;
            for a in against {
                r -= a * a.dot(&r);
            }
            let len = r.norm();
            (len > 1e-9 * m.norm().max(f64::MIN_POSITIVE) && len > 0.0).then(|| r / len)
        })
    };
    // An eigenvector with the sign that makes `m1` (or `m2`) positive along it.
    let signed = |e: Vector3<f64>| -> Vector3<f64> {
        let s = [m1, m2]
            .into_iter()
            .map(|m| e.dot(m))
            .find(|d| d.abs() > 1e-12 * (m1.norm() + m2.norm()))
            .unwrap_or(1.0);
        if s < 0.0 {
            -e
        } else {
            e
        }
    };
    let (e1, e2) = match (equal(lambda[0], lambda[1]), equal(lambda[1], lambda[2])) {
        // Three distinct moments.
        (false, false) => (signed(vec(0)), signed(vec(1))),
        // The largest alone, a plane of equal moments below it (a round tube).
        (false, true) => {
            let e1 = signed(vec(0));
            (e1, in_plane(&[e1])?)
        }
        // A plane of equal largest moments (a disc) above the smallest.
        (true, false) => {
            let e3 = signed(vec(2));
            let e1 = in_plane(&[e3])?;
            (e1, e3.cross(&e1))
        }
        // All equal (a sphere, a cube).
        (true, true) => {
            let e1 = in_plane(&[])?;
            (e1, in_plane(&[e1])?)
        }
    };
    let e3 = e1.cross(&e2);
    Some(Matrix3::from_columns(&[e1, e2, e3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rotation about a skew axis by `angle` radians (Rodrigues), row-major.
    fn rotation(axis: [f64; 3], angle: f64) -> Matrix3<f64> {
        let a = Vector3::from(axis).normalize();
        nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(a), angle).into_inner()
    }

    /// An irregular box of points and a round tube (equal moments across it): the frame of the
    /// body turned by `Q` and moved is `Q` times the body's, and the normalised vertices are
    /// the same to round-off; the frame is a rotation.
    #[test]
    fn the_body_frame_turns_and_moves_with_the_body() {
        let blob: Vec<f64> = (0..40)
            .flat_map(|k| {
                let t = k as f64;
                [
                    2.0 * (0.7 * t).sin(),
                    0.8 * (1.3 * t).cos() + 0.1 * t,
                    0.3 * (2.1 * t).sin(),
                ]
            })
            .collect();
        let mut tube = Vec::new();
        for r in 0..6 {
            for s in 0..12 {
                let a = std::f64::consts::TAU * s as f64 / 12.0;
                tube.extend([0.25 * a.cos(), 0.5 * r as f64, 0.25 * a.sin()]);
            }
        }
        let q = rotation([0.3, -1.0, 0.6], 2.2);
        let shift = Vector3::new(5.0, -3.0, 11.0);
        for body in [&blob, &tube] {
            let (f0, n0) = body_frame("body", body).unwrap();
            let moved: Vec<f64> = body
                .chunks(3)
                .flat_map(|p| {
                    let y = q * Vector3::new(p[0], p[1], p[2]) + shift;
                    [y.x, y.y, y.z]
                })
                .collect();
            let (f1, n1) = body_frame("body", &moved).unwrap();
            let r0 = Matrix3::from_row_slice(&f0.rotation);
            let r1 = Matrix3::from_row_slice(&f1.rotation);
            assert!((r0.transpose() * r0 - Matrix3::identity()).norm() < 1e-12);
            assert!((r0.determinant() - 1.0).abs() < 1e-12);
            assert!((r1 - q * r0).norm() < 1e-9, "{r1} vs {}", q * r0);
            assert!((f1.scale - f0.scale).abs() < 1e-12 * f0.scale);
            let c = q * Vector3::from(f0.centre) + shift;
            assert!((Vector3::from(f1.centre) - c).norm() < 1e-12 * c.norm());
            let worst = n0.iter().zip(&n1).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-9, "normalised vertices differ by {worst}");
            // Longest half-extent 1, centred.
            let top = n0.iter().map(|x| x.abs()).fold(0.0, f64::max);
            assert!((top - 1.0).abs() < 1e-12);
        }
        assert!(body_frame("point", &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]).is_err());
        assert!(body_frame("nan", &[f64::NAN, 0.0, 0.0, 1.0, 0.0, 0.0]).is_err());
    }
}
