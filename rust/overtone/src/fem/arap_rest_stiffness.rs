//! The linearised ARAP stiffness at the rest shape.

use crate::fem::DeformationJacobian;

/// `y += K u` with `K` the Hessian at rest of the ARAP energy `Σ_e (w_e/2)‖F_e − R_e‖²`
/// (`w_e = μ vol_e`): near `F = I + A` the closest rotation is `I + skew A + O(A²)`, so the energy
/// is `Σ_e (w_e/2)‖sym A_e‖²` to second order and `K u = Σ_e Gᵀ (w_e sym ∇u_e)` — linear elasticity
/// with Lamé parameters `(μ/2, 0)`. Unlike the Laplacian `L = L̂ ⊗ I` of the global step, `K`
/// does not resist rotations, so plane sections of a bending beam turn for free and its
/// vibration frequencies are the physical ones. `u`, `y`: coordinate-major fields (`n·d`).
/// Allocates per-element slot vectors (precompute only).
pub(crate) fn arap_rest_stiffness_product(jac: &DeformationJacobian, w: &[f64], u: &[f64], y: &mut [f64]) {
    let d = jac.dim();
    let mut p = vec![0.0; jac.n_elements() * d * d];
    let mut a = [0.0; 9];
    for e in 0..jac.n_elements() {
        jac.deformation_gradient(e, u, &mut a[..d * d]);
        for i in 0..d {
            for j in 0..d {
                p[e * d * d + i * d + j] = 0.5 * w[e] * (a[i * d + j] + a[j * d + i]);
            }
        }
    }
    jac.add_transpose_apply(&p, y);
}

/// The matrix of [`arap_rest_stiffness_product`], `n·d × n·d` (coordinate-major dofs `i·n + v`):
/// per element and local vertices `a, b`, `K[(i,a),(j,b)] += (w_e/2)(δ_ij g_a·g_b + g_a[j] g_b[i])`.
pub(crate) fn arap_rest_stiffness_matrix(
    jac: &DeformationJacobian,
    w: &[f64],
) -> crate::error::Result<faer::sparse::SparseColMat<usize, f64>> {
    use faer::sparse::{SparseColMat, Triplet};
    let (d, n) = (jac.dim(), jac.n_vertices());
    let k = d + 1;
    let mut t = Vec::with_capacity(jac.n_elements() * k * k * d * d);
    for e in 0..jac.n_elements() {
        let g = jac.gradients(e);
        let el = jac.element(e);
        for a in 0..k {
            for b in 0..k {
                let (ga, gb) = (&g[a * d..(a + 1) * d], &g[b * d..(b + 1) * d]);
                let dot: f64 = (0..d).map(|l| ga[l] * gb[l]).sum();
                for i in 0..d {
                    for j in 0..d {
                        let v = 0.5 * w[e] * (if i == j { dot } else { 0.0 } + ga[j] * gb[i]);
                        if v != 0.0 {
                            t.push(Triplet::new(i * n + el[a], j * n + el[b], v));
                        }
                    }
                }
            }
        }
    }
    Ok(SparseColMat::try_new_from_triplets(n * d, n * d, &t).map_err(|e| {
        crate::error::NumericalError::Factorization {
            matrix: "linearised ARAP stiffness".into(),
            reason: format!("{e:?}"),
        }
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::SimplexMesh;

    /// `K` annihilates rigid motions (translations and infinitesimal rotations) and is
    /// symmetric: `vᵀ K u = uᵀ K v`.
    #[test]
    fn rest_stiffness_ignores_rigid_motion_and_is_symmetric() {
        let mesh = SimplexMesh::new(
            3,
            vec![
                0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0,
            ],
            vec![0, 1, 2, 3, 1, 4, 2, 3],
        )
        .unwrap();
        let jac = DeformationJacobian::new(&mesh);
        let w = [1.3, 0.7];
        let n = 5;
        let x = mesh.vertices();
        // u = ω × x with ω = (0.2, −0.5, 0.9), coordinate-major.
        let om = [0.2, -0.5, 0.9];
        let mut rot = vec![0.0; 3 * n];
        for v in 0..n {
            let p = &x[3 * v..3 * v + 3];
            rot[v] = om[1] * p[2] - om[2] * p[1];
            rot[n + v] = om[2] * p[0] - om[0] * p[2];
            rot[2 * n + v] = om[0] * p[1] - om[1] * p[0];
        }
        let mut y = vec![0.0; 3 * n];
        arap_rest_stiffness_product(&jac, &w, &rot, &mut y);
        assert!(y.iter().all(|v| v.abs() < 1e-14), "{y:?}");
        let u: Vec<f64> = (0..3 * n).map(|k| (k as f64 * 0.61).sin()).collect();
        let v: Vec<f64> = (0..3 * n).map(|k| (k as f64 * 1.37).cos()).collect();
        let (mut ku, mut kv) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        arap_rest_stiffness_product(&jac, &w, &u, &mut ku);
        arap_rest_stiffness_product(&jac, &w, &v, &mut kv);
        let a: f64 = v.iter().zip(&ku).map(|(p, q)| p * q).sum();
        let b: f64 = u.iter().zip(&kv).map(|(p, q)| p * q).sum();
        assert!((a - b).abs() < 1e-13 * a.abs().max(1.0));
        // The assembled matrix applies the same operator.
        let k = arap_rest_stiffness_matrix(&jac, &w).unwrap();
        let um = faer::Mat::from_fn(3 * n, 1, |r, _| u[r]);
        let km = &k * &um;
        let err = (0..3 * n).map(|r| (km[(r, 0)] - ku[r]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-13, "{err:e}");
    }
}
