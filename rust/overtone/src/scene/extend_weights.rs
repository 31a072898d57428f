//! Extending weights known on some vertices (usually the surface) to the whole mesh.

use crate::error::{InputError, OvertoneError, Result};
use crate::fem::{scalar_stiffness_triplets, DeformationJacobian};
use crate::mesh::{element_volumes, SimplexMesh};
use crate::solve::FixedValueSolve;

/// The fixed-value solve of the P1 stiffness `K` (`K_uv = Σ_e vol_e ∇φ_u·∇φ_v`) of `mesh` with
/// the vertices `fixed` held, for up to `max_rhs` fields at once.
fn laplacian_solve(mesh: &SimplexMesh, fixed: &[usize], max_rhs: usize, what: &str) -> Result<FixedValueSolve> {
    let g = DeformationJacobian::new(mesh);
    let vols = element_volumes(mesh);
    FixedValueSolve::new(
        mesh.n_vertices(),
        scalar_stiffness_triplets(&g, &vols),
        fixed,
        max_rhs,
        what,
    )
}

/// Weights for every vertex from weights `known` (`|fixed| × m`, row-major) at the vertices
/// `fixed`: each column is the harmonic extension (`K_ff w_f = −K_fb w_b` with the P1 stiffness
/// `K`), which keeps rows summing to one; small negative values (discrete maximum-principle
/// violations) are clamped to zero and rows renormalised. Returns `n × m`, row-major.
pub(crate) fn extend_weights_inward(mesh: &SimplexMesh, fixed: &[usize], known: &[f64], m: usize) -> Result<Vec<f64>> {
    let n = mesh.n_vertices();
    if known.len() != fixed.len() * m {
        return Err(OvertoneError::size(
            "known weights",
            format!("{} x {m}", fixed.len()),
            known.len(),
        ));
    }
    if fixed.is_empty() && n > 0 {
        return Err(OvertoneError::setting(
            "weights",
            "none known",
            "at least one vertex must carry weights",
        ));
    }
    let mut w = laplacian_solve(mesh, fixed, m, "weight extension (interior Laplacian)")?.solve(known, m)?;
    for v in 0..n {
        let row = &mut w[v * m..(v + 1) * m];
        row.iter_mut().for_each(|x| *x = x.max(0.0));
        let sum: f64 = row.iter().sum();
        if sum > 0.0 {
            row.iter_mut().for_each(|x| *x /= sum);
        } else {
            return Err(InputError::Weights {
                vertex: v,
                reason: "no bone reaches this vertex after extending the weights inward".into(),
            }
            .into());
        }
    }
    Ok(w)
}

/// The harmonic extension of `q` fields known at the vertices `fixed` (`known`: `|fixed| × q`,
/// row-major) to every vertex: `K_ff x_f = −K_fb x_b` with the P1 stiffness `K`. Each column is
/// clamped to the range of its known values (the continuous extension's maximum principle,
/// which the discrete one can miss by round-off or on obtuse elements). Returns `n × q`,
/// row-major. `what` names the field in errors.
pub(crate) fn extend_harmonic(
    mesh: &SimplexMesh,
    fixed: &[usize],
    known: &[f64],
    q: usize,
    what: &str,
) -> Result<Vec<f64>> {
    if known.len() != fixed.len() * q {
        return Err(OvertoneError::size(what, format!("{} x {q}", fixed.len()), known.len()));
    }
    if fixed.is_empty() && mesh.n_vertices() > 0 {
        return Err(OvertoneError::setting(
            what,
            "none known",
            "at least one vertex must carry a value",
        ));
    }
    let mut x = laplacian_solve(mesh, fixed, q, what)?.solve(known, q)?;
    for j in 0..q {
        let (lo, hi) = known
            .iter()
            .skip(j)
            .step_by(q)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        x.iter_mut().skip(j).step_by(q).for_each(|v| *v = v.clamp(lo, hi));
    }
    Ok(x)
}
