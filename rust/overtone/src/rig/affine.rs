//! 3D affine maps `x ↦ A x + t` stored as `3 × 4` row-major `[A | t]`.

/// `a ∘ b`: apply `b`, then `a`.
pub(crate) fn compose_affine(a: &[f64], b: &[f64]) -> [f64; 12] {
    let mut out = [0.0; 12];
    for i in 0..3 {
        for j in 0..4 {
            let mut s = if j == 3 { a[i * 4 + 3] } else { 0.0 };
            for k in 0..3 {
                s += a[i * 4 + k] * b[k * 4 + j];
            }
            out[i * 4 + j] = s;
        }
    }
    out
}

/// The inverse map, or `None` when `A` is singular.
pub(crate) fn invert_affine(m: &[f64]) -> Option<[f64; 12]> {
    let a = nalgebra::Matrix3::new(m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10]);
    let ai = a.try_inverse()?;
    let ti = -(ai * nalgebra::Vector3::new(m[3], m[7], m[11]));
    Some(std::array::from_fn(|k| {
        let (i, j) = (k / 4, k % 4);
        if j == 3 {
            ti[i]
        } else {
            ai[(i, j)]
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_normalisation_round_trip() {
        let m = [1.1, 0.2, -0.3, 0.5, 0.05, 0.9, 0.4, -1.0, -0.2, 0.1, 1.3, 2.0];
        let id = compose_affine(&m, &invert_affine(&m).unwrap());
        for (k, x) in id.iter().enumerate() {
            let want = if k % 4 == k / 4 { 1.0 } else { 0.0 };
            assert!((x - want).abs() < 1e-14);
        }
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        let norm = crate::scene::Normalisation {
            centre: [1.0, -2.0, 3.0],
            scale: 4.0,
            rotation: std::array::from_fn(|k| r[(k / 3, k % 3)]),
        };
        let (to, from) = norm.affine_pair();
        let id = compose_affine(&to, &from);
        // `to` maps a file point as `to_scene` does.
        let (x, mut y) = ([0.5, 7.0, -2.0], [0.0; 3]);
        norm.to_scene(&x, &mut y);
        for i in 0..3 {
            let t = to[i * 4 + 3] + (0..3).map(|j| to[i * 4 + j] * x[j]).sum::<f64>();
            assert!((t - y[i]).abs() < 1e-14);
        }
        for (k, x) in id.iter().enumerate() {
            assert!((x - if k % 4 == k / 4 { 1.0 } else { 0.0 }).abs() < 1e-15);
        }
    }
}
