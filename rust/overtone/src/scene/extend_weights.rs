//! Extending weights known on some vertices (usually the surface) to the whole mesh.

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;

use crate::error::{OvertoneError, Result};
use crate::fem::{scalar_stiffness_triplets, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::solve::SparseCholesky;

/// Weights for every vertex from weights `known` (`|fixed| × m`, row-major) at the vertices
/// `fixed`: each column is the harmonic extension (`K_ff w_f = −K_fb w_b` with the P1 stiffness
/// `K`), which keeps rows summing to one; small negative values (discrete maximum-principle
/// violations) are clamped to zero and rows renormalised. Returns `n × m`, row-major.
pub fn extend_weights_inward(mesh: &SimplexMesh, fixed: &[usize], known: &[f64], m: usize) -> Result<Vec<f64>> {
    let n = mesh.n_vertices();
    if known.len() != fixed.len() * m {
        return Err(OvertoneError::size(
            "known weights",
            format!("{} x {m}", fixed.len()),
            known.len(),
        ));
    }
    let mut index = vec![usize::MAX; n];
    let mut is_fixed = vec![false; n];
    for (k, &v) in fixed.iter().enumerate() {
        if v >= n {
            return Err(OvertoneError::size("fixed vertex", format!("< {n}"), v));
        }
        is_fixed[v] = true;
        index[v] = k;
    }
    let free: Vec<usize> = (0..n).filter(|&v| !is_fixed[v]).collect();
    let mut w = vec![0.0; n * m];
    for (k, &v) in fixed.iter().enumerate() {
        w[v * m..(v + 1) * m].copy_from_slice(&known[k * m..(k + 1) * m]);
    }
    if !free.is_empty() {
        if fixed.is_empty() {
            return Err(OvertoneError::setting(
                "weights",
                "none known",
                "at least one vertex must carry weights",
            ));
        }
        let mut fidx = vec![usize::MAX; n];
        for (k, &v) in free.iter().enumerate() {
            fidx[v] = k;
        }
        let g = DeformationJacobian::new(mesh);
        let vols = element_volumes(mesh);
        let nf = free.len();
        let mut rhs = Mat::<f64>::zeros(nf, m);
        let mut trip = Vec::new();
        for t in scalar_stiffness_triplets(&g, &vols) {
            let r = fidx[t.row];
            if r == usize::MAX {
                continue;
            }
            if fidx[t.col] != usize::MAX {
                trip.push(Triplet::new(r, fidx[t.col], t.val));
            } else {
                let b = index[t.col];
                for j in 0..m {
                    rhs[(r, j)] -= t.val * known[b * m + j];
                }
            }
        }
        let k = SparseColMat::try_new_from_triplets(nf, nf, &trip).map_err(|e| OvertoneError::Factorization {
            what: "weight extension".into(),
            reason: format!("{e:?}"),
        })?;
        let mut chol = SparseCholesky::new(&k, m, "weight extension (interior Laplacian)")?;
        chol.solve_in_place(rhs.as_mut());
        for (k, &v) in free.iter().enumerate() {
            for j in 0..m {
                w[v * m + j] = rhs[(k, j)];
            }
        }
    }
    for v in 0..n {
        let row = &mut w[v * m..(v + 1) * m];
        row.iter_mut().for_each(|x| *x = x.max(0.0));
        let sum: f64 = row.iter().sum();
        if sum > 0.0 {
            row.iter_mut().for_each(|x| *x /= sum);
        } else {
            return Err(OvertoneError::Weights {
                vertex: v,
                reason: "no bone reaches this vertex after extending the weights inward".into(),
            });
        }
    }
    Ok(w)
}
