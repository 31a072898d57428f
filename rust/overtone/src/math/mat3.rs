//! Row-major 3×3 matrices as `[f64; 9]`: determinant, inverse and product.

/// Determinant of a row-major 3×3 matrix.
#[inline]
pub fn det3(a: &[f64; 9]) -> f64 {
    a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6])
}

/// Inverse of a row-major 3×3 matrix (`None` when singular).
pub(crate) fn inverse3(a: &[f64; 9]) -> Option<[f64; 9]> {
    let det = det3(a);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    Some([
        (a[4] * a[8] - a[5] * a[7]) * inv,
        (a[2] * a[7] - a[1] * a[8]) * inv,
        (a[1] * a[5] - a[2] * a[4]) * inv,
        (a[5] * a[6] - a[3] * a[8]) * inv,
        (a[0] * a[8] - a[2] * a[6]) * inv,
        (a[2] * a[3] - a[0] * a[5]) * inv,
        (a[3] * a[7] - a[4] * a[6]) * inv,
        (a[1] * a[6] - a[0] * a[7]) * inv,
        (a[0] * a[4] - a[1] * a[3]) * inv,
    ])
}

/// Row-major 3×3 product `a b`.
#[inline(always)]
pub(crate) fn mul3(a: &[f64; 9], b: &[f64; 9]) -> [f64; 9] {
    let mut c = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            c[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
        }
    }
    c
}
