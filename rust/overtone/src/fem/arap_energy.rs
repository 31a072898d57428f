//! ARAP elastic energy and its gradient (used for verification and reporting).

use crate::fem::DeformationJacobian;
use crate::math::polar::closest_rotation;

/// `E(x) = Σ_e (μ vol_e / 2) ‖F_e − R_e‖²_F` with `R_e` the rotation closest to `F_e`
/// (`element_weights[e] = μ·vol_e`). Units: energy (J when μ is in Pa and lengths in m).
pub fn arap_energy(g: &DeformationJacobian, element_weights: &[f64], x: &[f64]) -> f64 {
    let d = g.dim();
    let mut f = [0.0; 9];
    let mut r = [0.0; 9];
    let mut q = [1.0, 0.0, 0.0, 0.0];
    (0..g.n_elements())
        .map(|e| {
            g.deformation_gradient(e, x, &mut f);
            closest_rotation(d, &f[..d * d], &mut q, &mut r[..d * d]);
            let dist2: f64 = (0..d * d).map(|i| (f[i] - r[i]).powi(2)).sum();
            0.5 * element_weights[e] * dist2
        })
        .sum()
}

/// `∇E(x) = Gᵀ (μ vol ⊗ I)(F − R)`, coordinate-major, length `n·d`. Exact because `R(F)` is the
/// maximiser of `tr(RᵀF)`, so its variation does not contribute (envelope theorem).
pub fn arap_gradient(g: &DeformationJacobian, element_weights: &[f64], x: &[f64]) -> Vec<f64> {
    let d = g.dim();
    let mut p = vec![0.0; g.n_elements() * d * d];
    let mut f = [0.0; 9];
    let mut r = [0.0; 9];
    let mut q = [1.0, 0.0, 0.0, 0.0];
    for e in 0..g.n_elements() {
        g.deformation_gradient(e, x, &mut f);
        closest_rotation(d, &f[..d * d], &mut q, &mut r[..d * d]);
        for i in 0..d * d {
            p[e * d * d + i] = element_weights[e] * (f[i] - r[i]);
        }
    }
    let mut y = vec![0.0; x.len()];
    g.add_transpose_apply(&p, &mut y);
    y
}
