//! Projection of a symmetric matrix onto the positive semi-definite cone.

/// Eigenvalues are clamped to this value (not below): zero, the nearest PSD matrix in the
/// Frobenius norm. Newton systems stay definite through the mass term `M/h²` or the pins.
pub(crate) const SPD_EIGENVALUE_FLOOR: f64 = 0.0;

/// Replaces the symmetric `n × n` row-major matrix `h` by its projection
/// `V max(Λ, floor) Vᵀ` (`h = V Λ Vᵀ`). Returns whether anything was clamped (when nothing
/// is, `h` is left bit-for-bit unchanged). Only the lower triangle is read. A slice shorter than
/// `n²` or with NaN/Inf is left unchanged (returns `false`).
pub(crate) fn project_spd(n: usize, h: &mut [f64]) -> bool {
    if h.len() < n * n || h[..n * n].iter().any(|v| !v.is_finite()) {
        // Malformed or non-finite input: nothing sensible to project; leave it to the caller.
        return false;
    }
    match n {
        4 => project_fixed::<4>(h),
        9 => project_fixed::<9>(h),
        _ => project_dynamic(n, h),
    }
}

macro_rules! project_body {
    ($m:expr, $n:expr, $h:expr) => {{
        let m = $m;
        let eig = m.symmetric_eigen();
        if eig.eigenvalues.iter().all(|&l| l >= SPD_EIGENVALUE_FLOOR) {
            return false;
        }
        let mut lam = eig.eigenvalues.clone();
        lam.iter_mut().for_each(|l| *l = l.max(SPD_EIGENVALUE_FLOOR));
        let v = &eig.eigenvectors;
        for i in 0..$n {
            for j in 0..$n {
                $h[i * $n + j] = (0..$n).map(|k| v[(i, k)] * lam[k] * v[(j, k)]).sum();
            }
        }
        true
    }};
}

fn project_fixed<const N: usize>(h: &mut [f64]) -> bool {
    if N == 4 {
        let m = nalgebra::Matrix4::from_fn(|i, j| h[i.max(j) * 4 + i.min(j)]);
        project_body!(m, 4, h)
    } else {
        let m = nalgebra::SMatrix::<f64, 9, 9>::from_fn(|i, j| h[i.max(j) * 9 + i.min(j)]);
        project_body!(m, 9, h)
    }
}

fn project_dynamic(n: usize, h: &mut [f64]) -> bool {
    let m = nalgebra::DMatrix::from_fn(n, n, |i, j| h[i.max(j) * n + i.min(j)]);
    project_body!(m, n, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_clamps_negative_eigenvalues_and_keeps_psd_matrices() {
        // diag(2, −1, 3, 0.5) rotated by a Householder reflection.
        let n = 4;
        let v = [0.5, 0.5, 0.5, 0.5];
        let lam = [2.0, -1.0, 3.0, 0.5];
        let q = |i: usize, j: usize| (if i == j { 1.0 } else { 0.0 }) - 2.0 * v[i] * v[j];
        let mut h: Vec<f64> = (0..n * n)
            .map(|k| (0..n).map(|m| q(k / n, m) * lam[m] * q(k % n, m)).sum())
            .collect();
        assert!(project_spd(n, &mut h));
        for k in 0..n * n {
            let want: f64 = (0..n).map(|m| q(k / n, m) * lam[m].max(0.0) * q(k % n, m)).sum();
            assert!((h[k] - want).abs() < 1e-12);
        }
        let before = h.clone();
        // Clamped eigenvalue is zero up to round-off: a second projection changes at most round-off.
        project_spd(n, &mut h);
        assert!(h.iter().zip(&before).all(|(a, b)| (a - b).abs() < 1e-12));
        let mut id = vec![0.0; 81];
        (0..9).for_each(|i| id[i * 9 + i] = 1.0);
        assert!(!project_spd(9, &mut id));
    }
}
