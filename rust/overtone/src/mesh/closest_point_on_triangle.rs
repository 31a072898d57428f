//! The point of a triangle nearest to a given point.

use crate::math::vec3::{dot, sub};

/// The point of triangle `(a, b, c)` nearest to `p` (3D), by the region of `p` against the
/// triangle's vertices and edges (Ericson, *Real-Time Collision Detection*, §5.1.5). A
/// degenerate triangle gives a point of its edges.
pub(crate) fn closest_point_on_triangle(p: &[f64; 3], a: &[f64; 3], b: &[f64; 3], c: &[f64; 3]) -> [f64; 3] {
    let ab = sub(b, a);
    let ac = sub(c, a);
    let ap = sub(p, a);
    let d1 = dot(&ab, &ap);
    let d2 = dot(&ac, &ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return *a;
    }
    let bp = sub(p, b);
    let d3 = dot(&ab, &bp);
    let d4 = dot(&ac, &bp);
    if d3 >= 0.0 && d4 <= d3 {
        return *b;
    }
    let lerp = |o: &[f64; 3], d: &[f64; 3], t: f64| [o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]];
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return lerp(a, &ab, d1 / (d1 - d3));
    }
    let cp = sub(p, c);
    let d5 = dot(&ab, &cp);
    let d6 = dot(&ac, &cp);
    if d6 >= 0.0 && d5 <= d6 {
        return *c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return lerp(a, &ac, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return lerp(b, &sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if !(denom.abs() > 0.0) {
        // Degenerate (collinear) triangle: the nearest of its three edges.
        let on = |o: &[f64; 3], e: [f64; 3]| {
            let t = (dot(&sub(p, o), &e) / dot(&e, &e).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
            lerp(o, &e, t)
        };
        let cands = [on(a, ab), on(a, ac), on(b, sub(c, b))];
        return cands
            .into_iter()
            .min_by(|x, y| dot(&sub(p, x), &sub(p, x)).total_cmp(&dot(&sub(p, y), &sub(p, y))))
            .expect("three candidates");
    }
    let (v, w) = (vb / denom, vc / denom);
    [
        a[0] + ab[0] * v + ac[0] * w,
        a[1] + ab[1] * v + ac[1] * w,
        a[2] + ab[2] * v + ac[2] * w,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Above the face, beyond an edge, beyond a vertex, and a degenerate triangle.
    #[test]
    fn each_region_gives_its_nearest_point() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let near = |x: [f64; 3], y: [f64; 3]| (0..3).all(|i| (x[i] - y[i]).abs() < 1e-15);
        let at = |p: [f64; 3]| closest_point_on_triangle(&p, &a, &b, &c);
        assert!(near(at([0.2, 0.3, 5.0]), [0.2, 0.3, 0.0]), "above the face");
        assert!(near(at([0.5, -2.0, 1.0]), [0.5, 0.0, 0.0]), "beyond edge ab");
        assert!(near(at([-1.0, -1.0, 0.0]), a), "beyond vertex a");
        assert!(near(at([2.0, 2.0, 0.0]), [0.5, 0.5, 0.0]), "beyond edge bc");
        assert!(near(at([3.0, 0.1, 0.0]), b), "beyond vertex b");
        // Collinear corners: the nearest point of the segment.
        let q = closest_point_on_triangle(&[0.5, 1.0, 0.0], &a, &b, &[2.0, 0.0, 0.0]);
        assert!(near(q, [0.5, 0.0, 0.0]), "{q:?}");
    }
}
