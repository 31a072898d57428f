//! Generalized winding number of a triangle soup (Jacobson et al. 2013).

/// `w(p) = (1/4π) Σ_t Ω_t(p)` with the signed solid angle of each triangle from
/// `tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|)` (Van Oosterom–Strackee),
/// `a, b, c` the corners relative to `p`. For a closed, consistently oriented surface it is
/// ±1 inside and 0 outside; for open or messy meshes it degrades gracefully (fractional).
///
/// * `vertices`: `n × 3` row-major; `triangles`: `t × 3`.
pub(crate) fn winding_number(vertices: &[f64], triangles: &[usize], p: [f64; 3]) -> f64 {
    let total: f64 = triangles
        .chunks_exact(3)
        .map(|t| triangle_solid_angle(vertices, [t[0], t[1], t[2]], p))
        .sum();
    total / (4.0 * std::f64::consts::PI)
}

/// The signed solid angle `Ω` (steradians) that triangle `t` (indices into `vertices`, `n × 3`)
/// subtends at `p`: `tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|)`.
pub(crate) fn triangle_solid_angle(vertices: &[f64], t: [usize; 3], p: [f64; 3]) -> f64 {
    let corner = |k: usize| {
        let v = &vertices[3 * t[k]..3 * t[k] + 3];
        [v[0] - p[0], v[1] - p[1], v[2] - p[2]]
    };
    let (a, b, c) = (corner(0), corner(1), corner(2));
    let norm = |x: [f64; 3]| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
    let dot = |x: [f64; 3], y: [f64; 3]| x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    let det =
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
    let (la, lb, lc) = (norm(a), norm(b), norm(c));
    let denom = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
    2.0 * det.atan2(denom)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An outward-oriented cube: +1 inside, 0 outside.
    #[test]
    fn cube_inside_and_outside() {
        let v: Vec<f64> = (0..8)
            .flat_map(|k| [(k & 1) as f64, ((k >> 1) & 1) as f64, ((k >> 2) & 1) as f64])
            .collect();
        let t = vec![
            0, 2, 1, 1, 2, 3, // z = 0, normal −z
            4, 5, 6, 5, 7, 6, // z = 1, normal +z
            0, 1, 4, 1, 5, 4, // y = 0
            2, 6, 3, 3, 6, 7, // y = 1
            0, 4, 2, 2, 4, 6, // x = 0
            1, 3, 5, 3, 7, 5, // x = 1
        ];
        assert!((winding_number(&v, &t, [0.5, 0.4, 0.3]) - 1.0).abs() < 1e-12);
        assert!(winding_number(&v, &t, [1.5, 0.4, 0.3]).abs() < 1e-12);
        assert!(winding_number(&v, &t, [-3.0, 7.0, 0.3]).abs() < 1e-12);
    }
}
