//! The determinant `J = det F`, its gradient (the cofactor matrix) and its Hessian.

/// Whether `d` is 2 or 3 and the slices are long enough for `F` (`d²`) and an output of
/// `out_len(d)` values. The per-element functions answer NaN (never panic) otherwise.
#[inline(always)]
pub(crate) fn shape_ok(d: usize, f_len: usize, out_len: usize, need: usize) -> bool {
    (d == 2 || d == 3) && f_len >= d * d && out_len >= need
}

/// Fills `out` with NaN (the answer of a per-element function to malformed input).
#[inline(never)]
pub(crate) fn fill_nan(out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = f64::NAN);
}

/// `det F` of a `d × d` row-major matrix (`d` = 2 or 3; NaN for other `d` or a short slice).
#[inline]
pub(crate) fn determinant(d: usize, f: &[f64]) -> f64 {
    if !shape_ok(d, f.len(), 0, 0) {
        return f64::NAN;
    }
    if d == 2 {
        f[0] * f[3] - f[1] * f[2]
    } else {
        f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6]) + f[2] * (f[3] * f[7] - f[4] * f[6])
    }
}

/// The cofactor matrix `cof F = ∂J/∂F` (`= J F⁻ᵀ` when `F` is invertible) into `c` (`d × d`).
/// In 3D its rows are `r₁×r₂, r₂×r₀, r₀×r₁` for the rows `rᵢ` of `F`.
#[inline]
pub(crate) fn cofactor(d: usize, f: &[f64], c: &mut [f64]) {
    if !shape_ok(d, f.len(), c.len(), d * d) {
        return fill_nan(c);
    }
    if d == 2 {
        c[0] = f[3];
        c[1] = -f[2];
        c[2] = -f[1];
        c[3] = f[0];
    } else {
        let cross = |a: usize, b: usize, out: &mut [f64]| {
            let (x, y) = (&f[3 * a..3 * a + 3], &f[3 * b..3 * b + 3]);
            out[0] = x[1] * y[2] - x[2] * y[1];
            out[1] = x[2] * y[0] - x[0] * y[2];
            out[2] = x[0] * y[1] - x[1] * y[0];
        };
        cross(1, 2, &mut c[0..3]);
        cross(2, 0, &mut c[3..6]);
        cross(0, 1, &mut c[6..9]);
    }
}

/// Levi-Civita symbol of `(a, b)` (2D) as a sign.
#[inline(always)]
fn eps2(a: usize, b: usize) -> f64 {
    if a == b {
        0.0
    } else if a == 0 {
        1.0
    } else {
        -1.0
    }
}

/// Levi-Civita symbol of `(a, b, c)` (3D).
#[inline(always)]
fn eps3(a: usize, b: usize, c: usize) -> f64 {
    if a == b || b == c || a == c {
        0.0
    } else if (a + 1) % 3 == b {
        1.0
    } else {
        -1.0
    }
}

/// `h += scale · ∂²J/∂F²` (`d² × d²`): `∂²J/∂F_ij∂F_kl = ε_ik ε_jl` in 2D (constant) and
/// `Σ_mn ε_ikm ε_jln F_mn` in 3D.
#[inline]
pub(crate) fn add_determinant_hessian(d: usize, f: &[f64], scale: f64, h: &mut [f64]) {
    if !shape_ok(d, f.len(), h.len(), d * d * d * d) {
        return fill_nan(h);
    }
    let dd = d * d;
    for i in 0..d {
        for k in 0..d {
            if i == k {
                continue;
            }
            for j in 0..d {
                for l in 0..d {
                    if j == l {
                        continue;
                    }
                    let v = if d == 2 {
                        eps2(i, k) * eps2(j, l)
                    } else {
                        let (m, n) = (3 - i - k, 3 - j - l);
                        eps3(i, k, m) * eps3(j, l, n) * f[m * 3 + n]
                    };
                    h[(i * d + j) * dd + k * d + l] += scale * v;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::fd;

    #[test]
    fn cofactor_and_determinant_hessian_match_finite_differences() {
        for d in [2, 3] {
            for f in fd::samples(d) {
                let mut c = vec![0.0; d * d];
                cofactor(d, &f, &mut c);
                let g = fd::gradient(d, &f, &|x| determinant(d, x));
                assert!(fd::rel_err(&c, &g) < fd::FD_TOLERANCE, "cofactor d={d}");
                let mut h = vec![0.0; d * d * d * d];
                add_determinant_hessian(d, &f, 1.0, &mut h);
                let hf = fd::hessian(d, &f, &|x, out| cofactor(d, x, out));
                assert!(fd::rel_err(&h, &hf) < fd::FD_TOLERANCE, "det hessian d={d}");
            }
        }
    }
}
