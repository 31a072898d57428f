//! The polar decomposition `A = R S` of a region's (or element's) linear map, and the stretch
//! `S` as a vector.
//!
//! `R` is the rotation closest to `A` ([`crate::math::polar`]) and `S = Rᵀ A`, symmetrised (it is
//! symmetric up to the rotation's accuracy). For a non-inverted `A` this is the polar
//! decomposition of the seed's eq. (1): `S = √(AᵀA)`, `R = A S⁻¹`.
//!
//! A symmetric `d × d` stretch has `k = d(d+1)/2` independent numbers (six in 3D, three in 2D).
//! They are stored as the vector
//!
//! * 3D: `s = (S₀₀, S₁₁, S₂₂, √2 S₀₁, √2 S₀₂, √2 S₁₂)`
//! * 2D: `s = (S₀₀, S₁₁, √2 S₀₁)`
//!
//! so that the Euclidean norm of `s` is the Frobenius norm of `S`: the least squares of the
//! example projection (eq. 7) then measure stretch differences independently of the axes. (The
//! seed only says "six numbers"; the `√2` weighting is our choice, see `example_manifold.rs`.)

pub use crate::math::mat3::det3;
pub(crate) use crate::math::mat3::{inverse3, mul3};
use crate::math::polar::{closest_rotation_2d, closest_rotation_3d};

/// Numbers per stretch vector in dimension `dim`: 6 (3D) or 3 (2D).
pub const fn stretch_len(dim: usize) -> usize {
    dim * (dim + 1) / 2
}

const SQRT2: f64 = std::f64::consts::SQRT_2;

/// Polar decomposition of a 3×3 row-major `a`: writes the rotation into `r` (row-major) and
/// returns the stretch vector. `warm` is the rotation's warm start (unit quaternion), updated.
#[inline]
pub(crate) fn polar_stretch_3d(a: &[f64; 9], warm: &mut [f64; 4], r: &mut [f64; 9], accuracy: f64) -> [f64; 6] {
    closest_rotation_3d(a, warm, r, accuracy);
    stretch_of_3d(a, r)
}

/// The stretch vector of `S = Rᵀ A` for a 3×3 row-major `a` and its polar rotation `r`.
#[inline]
pub(crate) fn stretch_of_3d(a: &[f64; 9], r: &[f64; 9]) -> [f64; 6] {
    // S = Rᵀ A
    let mut s = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            s[i * 3 + j] = r[i] * a[j] + r[3 + i] * a[3 + j] + r[6 + i] * a[6 + j];
        }
    }
    [
        s[0],
        s[4],
        s[8],
        SQRT2 * 0.5 * (s[1] + s[3]),
        SQRT2 * 0.5 * (s[2] + s[6]),
        SQRT2 * 0.5 * (s[5] + s[7]),
    ]
}

/// Polar decomposition of a 2×2 row-major `a`: writes the rotation into `r` and returns the
/// stretch vector.
#[inline]
pub(crate) fn polar_stretch_2d(a: &[f64; 4], r: &mut [f64; 4]) -> [f64; 3] {
    closest_rotation_2d(a, r);
    let s00 = r[0] * a[0] + r[2] * a[2];
    let s01 = r[0] * a[1] + r[2] * a[3];
    let s10 = r[1] * a[0] + r[3] * a[2];
    let s11 = r[1] * a[1] + r[3] * a[3];
    [s00, s11, SQRT2 * 0.5 * (s01 + s10)]
}

/// The symmetric 3×3 matrix (row-major) of a stretch vector.
#[inline]
pub(crate) fn stretch_matrix_3d(s: &[f64]) -> [f64; 9] {
    let (a, b, c) = (s[3] / SQRT2, s[4] / SQRT2, s[5] / SQRT2);
    [s[0], a, b, a, s[1], c, b, c, s[2]]
}

/// The symmetric 2×2 matrix (row-major) of a stretch vector.
#[inline]
pub(crate) fn stretch_matrix_2d(s: &[f64]) -> [f64; 4] {
    let a = s[2] / SQRT2;
    [s[0], a, a, s[1]]
}

/// The stretch vector of the identity (the rest state) in dimension `dim`.
pub(crate) fn identity_stretch(dim: usize) -> Vec<f64> {
    let mut s = vec![0.0; stretch_len(dim)];
    s[..dim].fill(1.0);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `R S` reproduces `A` to 1e-12 for a rotated anisotropic stretch, `S` is the stretch put in,
    /// and the vector's norm is the Frobenius norm of `S`.
    #[test]
    fn recovers_rotation_and_stretch() {
        let (c, s) = (0.7f64.cos(), 0.7f64.sin());
        let rot = [c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0];
        let st = [1.3, 0.2, -0.1, 0.2, 0.8, 0.05, -0.1, 0.05, 1.1];
        let a = mul3(&rot, &st);
        let mut q = [1.0, 0.0, 0.0, 0.0];
        let mut r = [0.0; 9];
        let v = polar_stretch_3d(&a, &mut q, &mut r, 1e-13);
        let sm = stretch_matrix_3d(&v);
        for k in 0..9 {
            assert!((sm[k] - st[k]).abs() < 1e-12, "{k}: {} vs {}", sm[k], st[k]);
            assert!((r[k] - rot[k]).abs() < 1e-12);
        }
        let frob: f64 = st.iter().map(|x| x * x).sum::<f64>().sqrt();
        let vn: f64 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((frob - vn).abs() < 1e-12);
        // 2D
        let a2 = [
            c * 1.2 - s * 0.1,
            c * 0.1 - s * 0.9,
            s * 1.2 + c * 0.1,
            s * 0.1 + c * 0.9,
        ];
        let mut r2 = [0.0; 4];
        let v2 = polar_stretch_2d(&a2, &mut r2);
        let m2 = stretch_matrix_2d(&v2);
        for (k, want) in [1.2, 0.1, 0.1, 0.9].iter().enumerate() {
            assert!((m2[k] - want).abs() < 1e-12);
        }
    }
}
