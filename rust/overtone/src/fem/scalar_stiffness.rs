//! The scalar ARAP stiffness (weighted cotangent Laplacian) `L̂ = Ĝᵀ diag(w ⊗ 1_d) Ĝ`.

use faer::sparse::{SparseColMat, Triplet};

use crate::error::{NumericalError, Result};
use crate::fem::DeformationJacobian;

/// Triplets (row, col, value) of `L̂`, both triangles, duplicates not summed.
///
/// `L̂_uv = Σ_e w_e g_a·g_b` over elements `e` with local vertices `a ↦ u`, `b ↦ v`; with
/// `w_e = μ·vol_e` the full ARAP stiffness is `L = L̂ ⊗ I_d` (coordinate-major), and the ARAP
/// energy `Σ_e (μ vol_e / 2)‖F_e − R_e‖²` has Hessian `L` for fixed rotations. `L̂` is symmetric
/// positive semi-definite with the constant vector in its kernel.
pub fn scalar_stiffness_triplets(g: &DeformationJacobian, element_weights: &[f64]) -> Vec<Triplet<usize, usize, f64>> {
    let d = g.dim();
    let k = d + 1;
    let mut t = Vec::with_capacity(g.n_elements() * k * k);
    for (e, &w) in element_weights.iter().enumerate() {
        let gr = g.gradients(e);
        let el = g.element(e);
        for a in 0..k {
            for b in 0..k {
                let dot: f64 = (0..d).map(|j| gr[a * d + j] * gr[b * d + j]).sum();
                t.push(Triplet::new(el[a], el[b], w * dot));
            }
        }
    }
    t
}

/// `L̂` as an `n × n` sparse matrix (see [`scalar_stiffness_triplets`]).
pub fn scalar_stiffness(g: &DeformationJacobian, element_weights: &[f64]) -> Result<SparseColMat<usize, f64>> {
    let n = g.n_vertices();
    SparseColMat::try_new_from_triplets(n, n, &scalar_stiffness_triplets(g, element_weights)).map_err(|e| {
        NumericalError::Factorization {
            matrix: "stiffness assembly".into(),
            reason: format!("{e:?}"),
        }
        .into()
    })
}
