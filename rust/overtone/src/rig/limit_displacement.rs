//! The per-body limit on the displacement shown (the `max_displacement` setting).

/// Scales the displacement field `u` (`n × 3`, row-major) by `min(1, limit / max_v |u_v|)`, so
/// that no vertex moves further than `limit` (same units as `u`) while the field keeps its
/// shape; returns the factor applied (1 when within the limit). `limit` must be `> 0`.
///
/// A teleport the cut detection does not catch, or a violent move, can give a transient far
/// beyond any art-directed jiggle; scaling the whole field (not clamping each vertex) keeps
/// neighbouring vertices consistent, so the surface does not flatten where the limit bites.
pub fn limit_displacement(u: &mut [f64], limit: f64) -> f64 {
    let largest_sq = u
        .chunks_exact(3)
        .map(|v| v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        .fold(0.0_f64, f64::max);
    if largest_sq <= limit * limit {
        return 1.0;
    }
    let factor = limit / largest_sq.sqrt();
    u.iter_mut().for_each(|x| *x *= factor);
    factor
}

/// The bounding-box diagonal of `n × 3` row-major points (0 for none): the length
/// `max_displacement` is a fraction of.
pub fn bounding_box_diagonal(points: &[f64]) -> f64 {
    if points.len() < 3 {
        return 0.0;
    }
    let (lo, hi) = crate::mesh::bounding_box(points);
    (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within the limit nothing changes; beyond it the largest vertex lands on the limit to
    /// round-off and every vertex is scaled by the same factor (directions and ratios kept).
    #[test]
    fn scales_the_whole_field_so_the_largest_vertex_meets_the_limit() {
        let mut u = vec![0.3, 0.0, 0.4, 0.0, 0.1, 0.0];
        assert_eq!(limit_displacement(&mut u, 0.5), 1.0);
        assert_eq!(u, vec![0.3, 0.0, 0.4, 0.0, 0.1, 0.0]);
        let f = limit_displacement(&mut u, 0.25);
        assert!((f - 0.5).abs() < 1e-15, "factor {f}");
        let largest = (u[0] * u[0] + u[2] * u[2]).sqrt();
        assert!((largest - 0.25).abs() < 1e-15, "largest {largest}");
        assert!(
            (u[4] - 0.05).abs() < 1e-15,
            "the small vertex is scaled alike: {}",
            u[4]
        );
    }
}
