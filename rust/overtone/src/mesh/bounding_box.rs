//! Axis-aligned bounding box of a 3D point set.

/// Corners `(lo, hi)` of the axis-aligned box around `points` (`n × 3` row-major, length units):
/// `lo_i = min_v x_{v,i}`, `hi_i = max_v x_{v,i}`. An empty set gives `(+∞, −∞)` per axis.
pub fn bounding_box(points: &[f64]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points.chunks_exact(3) {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    (lo, hi)
}

/// [`bounding_box`] of a `d`-dimensional point set (`n × d` row-major); the unused axes of a
/// 2D set stay `(+∞, −∞)`.
pub(crate) fn bounding_box_d(points: &[f64], d: usize) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points.chunks_exact(d) {
        for i in 0..d {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_of_three_points() {
        let (lo, hi) = bounding_box(&[1.0, -2.0, 3.0, -1.0, 5.0, 0.5, 0.0, 0.0, 4.0]);
        assert_eq!((lo, hi), ([-1.0, -2.0, 0.5], [1.0, 5.0, 4.0]));
        let (lo, hi) = bounding_box(&[]);
        assert!(lo.iter().all(|x| *x == f64::INFINITY) && hi.iter().all(|x| *x == f64::NEG_INFINITY));
    }
}
