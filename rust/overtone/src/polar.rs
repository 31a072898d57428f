//! The rotation closest to a deformation gradient (the rotational factor of the polar
//! decomposition), in 2D and 3D.
//!
//! `R = argmax_{R ∈ SO(d)} tr(RᵀF)`, which minimises `‖F − R‖_F`. For an inverted `F`
//! (`det F < 0`) this is the SVD rotation with the sign of the smallest singular direction
//! flipped, as in `polar_svd` with reflection handling.

use nalgebra::{Matrix3, Rotation3, UnitQuaternion};

/// Default accuracy (radians) of the 3D rotation: Newton stops once the rotation is within
/// about this angle of the exact one.
pub const ROTATION_ACCURACY: f64 = 1e-13;
/// Safety cap on Newton iterations before falling back to the SVD.
const NEWTON_MAX_ITERATIONS: usize = 12;

/// Writes into `r` (`d × d` row-major) the rotation closest to `f` (`d × d` row-major).
///
/// `warm` is a unit quaternion `(w, x, y, z)` holding a previous rotation for the same element
/// (3D only; ignored in 2D): the 3D solver runs Newton's method on `tr(RᵀF)` from it, and
/// updates it. Any unit quaternion is a valid start; a poor one costs one SVD.
#[inline]
pub fn closest_rotation(dim: usize, f: &[f64], warm: &mut [f64; 4], r: &mut [f64]) {
    if dim == 2 {
        closest_rotation_2d(f, r);
    } else {
        closest_rotation_3d(f, warm, r, ROTATION_ACCURACY);
    }
}

/// 2D: `R = [c −s; s c]` with `θ = atan2(F₁₀ − F₀₁, F₀₀ + F₁₁)` (exact, closed form).
#[inline(always)]
pub fn closest_rotation_2d(f: &[f64], r: &mut [f64]) {
    let (y, x) = (f[2] - f[1], f[0] + f[3]);
    let h = (x * x + y * y).sqrt();
    let (c, s) = if h > 0.0 { (x / h, y / h) } else { (1.0, 0.0) };
    r[0] = c;
    r[1] = -s;
    r[2] = s;
    r[3] = c;
}

fn quat_to_matrix(q: &[f64; 4], r: &mut [f64]) {
    let [w, x, y, z] = *q;
    r[0] = 1.0 - 2.0 * (y * y + z * z);
    r[1] = 2.0 * (x * y - w * z);
    r[2] = 2.0 * (x * z + w * y);
    r[3] = 2.0 * (x * y + w * z);
    r[4] = 1.0 - 2.0 * (x * x + z * z);
    r[5] = 2.0 * (y * z - w * x);
    r[6] = 2.0 * (x * z - w * y);
    r[7] = 2.0 * (y * z + w * x);
    r[8] = 1.0 - 2.0 * (x * x + y * y);
}

/// 3D: Newton's method on `f(δ) = tr((R e^{[δ]×})ᵀ F)` from the warm start.
///
/// With `S = RᵀF`, the gradient is `g = (S₃₂ − S₂₃, S₁₃ − S₃₁, S₂₁ − S₁₂)` and the Hessian is
/// `sym(S) − tr(S) I`; the step `δ = (tr(S) I − sym(S))⁻¹ g` is taken while that matrix is
/// positive definite (we are in the basin of the maximum). Otherwise, and for near-singular
/// cases, the rotation comes from the SVD of `F` with the reflection fix.
pub fn closest_rotation_3d(f: &[f64], warm: &mut [f64; 4], r: &mut [f64], accuracy: f64) {
    let step_tolerance = accuracy.sqrt();
    let scale = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
    if scale == 0.0 {
        quat_to_matrix(warm, r);
        return;
    }
    for _ in 0..NEWTON_MAX_ITERATIONS {
        quat_to_matrix(warm, r);
        // S = Rᵀ F
        let mut s = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                s[i * 3 + j] = r[i] * f[j] + r[3 + i] * f[3 + j] + r[6 + i] * f[6 + j];
            }
        }
        let g = [s[7] - s[5], s[2] - s[6], s[3] - s[1]];
        let tr = s[0] + s[4] + s[8];

        // M = tr(S) I − sym(S)
        let m00 = tr - s[0];
        let m11 = tr - s[4];
        let m22 = tr - s[8];
        let m01 = -0.5 * (s[1] + s[3]);
        let m02 = -0.5 * (s[2] + s[6]);
        let m12 = -0.5 * (s[5] + s[7]);
        let c00 = m11 * m22 - m12 * m12;
        let c01 = m02 * m12 - m01 * m22;
        let c02 = m01 * m12 - m02 * m11;
        let det = m00 * c00 + m01 * c01 + m02 * c02;
        let minor2 = m00 * m11 - m01 * m01;
        let tiny = 1e-8 * scale;
        if !(m00 > tiny && minor2 > tiny * tiny && det > tiny * tiny * tiny) {
            break;
        }
        // At the maximum already (the Newton step would be about |g| / (2 tr/3) < tolerance):
        // `r` holds the warm rotation.
        let g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if 9.0 * g2 < 4.0 * (accuracy * tr).powi(2) {
            return;
        }
        let c11 = m00 * m22 - m02 * m02;
        let c12 = m01 * m02 - m00 * m12;
        let c22 = minor2;
        let delta = [
            (c00 * g[0] + c01 * g[1] + c02 * g[2]) / det,
            (c01 * g[0] + c11 * g[1] + c12 * g[2]) / det,
            (c02 * g[0] + c12 * g[1] + c22 * g[2]) / det,
        ];
        let step2 = delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2];
        // q ← q ⊗ (1, δ/2)/‖·‖: a rotation by 2·atan(|δ|/2) = |δ| + O(|δ|³) about δ, which
        // keeps Newton's quadratic convergence without trigonometric calls.
        let d = [1.0, 0.5 * delta[0], 0.5 * delta[1], 0.5 * delta[2]];
        let q = *warm;
        let mut nq = [
            q[0] * d[0] - q[1] * d[1] - q[2] * d[2] - q[3] * d[3],
            q[0] * d[1] + q[1] * d[0] + q[2] * d[3] - q[3] * d[2],
            q[0] * d[2] - q[1] * d[3] + q[2] * d[0] + q[3] * d[1],
            q[0] * d[3] + q[1] * d[2] - q[2] * d[1] + q[3] * d[0],
        ];
        let inv_norm = 1.0 / nq.iter().map(|v| v * v).sum::<f64>().sqrt();
        nq.iter_mut().for_each(|v| *v *= inv_norm);
        *warm = nq;
        if step2 < step_tolerance * step_tolerance {
            quat_to_matrix(warm, r);
            return;
        }
    }
    svd_rotation(f, warm, r);
}

/// The closest rotation from the SVD `F = U Σ Vᵀ` (singular values descending):
/// `R = U diag(1, 1, det(U Vᵀ)) Vᵀ`. Also resets the warm start to `R`.
fn svd_rotation(f: &[f64], warm: &mut [f64; 4], r: &mut [f64]) {
    let m = Matrix3::from_row_slice(&f[..9]);
    let svd = m.svd(true, true);
    let (mut u, v_t) = (svd.u.expect("requested U"), svd.v_t.expect("requested Vᵀ"));
    if (u * v_t).determinant() < 0.0 {
        u.column_mut(2).neg_mut();
    }
    let rot = u * v_t;
    for i in 0..3 {
        for j in 0..3 {
            r[i * 3 + j] = rot[(i, j)];
        }
    }
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(rot));
    *warm = [q.w, q.i, q.j, q.k];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// Reference: SVD with reflection fix, compared entrywise to 1e-12 for random, inverted and
    /// rotated-by-near-π matrices from both a cold and a warm start.
    #[test]
    fn matches_svd_polar_factor() {
        let mut s = 7u64;
        for trial in 0..2000 {
            let mut f: Vec<f64> = (0..9).map(|_| lcg(&mut s)).collect();
            if trial % 3 == 0 {
                for i in 0..3 {
                    f[i * 4] += 2.0; // near a rotation
                }
            }
            let mut reference = [0.0; 9];
            let mut q_ref = [1.0, 0.0, 0.0, 0.0];
            svd_rotation(&f, &mut q_ref, &mut reference);
            for start in [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], q_ref] {
                let mut q = start;
                let mut r = [0.0; 9];
                closest_rotation_3d(&f, &mut q, &mut r, ROTATION_ACCURACY);
                let err = r.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                // Ties (equal smallest singular values) make the answer non-unique; skip them.
                let sv = Matrix3::from_row_slice(&f).singular_values();
                let gap = (sv[1] - sv[2]).abs().min((sv[0] - sv[1]).abs());
                if gap > 1e-6 {
                    assert!(err < 1e-12, "trial {trial}: error {err:e}");
                }
            }
        }
    }

    #[test]
    fn two_d_is_the_rotation_of_a_rotated_stretch() {
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        // F = R(0.3) · diag(2, 0.5)
        let f = [2.0 * c, -0.5 * s, 2.0 * s, 0.5 * c];
        let mut r = [0.0; 4];
        closest_rotation_2d(&f, &mut r);
        assert!((r[0] - c).abs() < 1e-15 && (r[2] - s).abs() < 1e-15);
    }
}
