//! Per-vertex fields painted on a character's surface, carried to its lattice.

use crate::error::{check_finite, OvertoneError, Result};
use crate::scene::{extend_weights_inward, Character};

/// Carries a scalar field given per surface vertex (`n_s` values, the welded order the
/// character was built from) to the lattice vertices (`n`): each lattice vertex of a tet that
/// holds surface vertices takes the barycentric-weighted mean `Σ_s b_sk f_s / Σ_s b_sk` (the
/// transpose of the surface interpolation, normalised), the others the harmonic extension of
/// those values. `what` names the field in errors. Values must be finite.
pub fn lattice_field_from_surface(ch: &Character, field: &[f64], what: &str) -> Result<Vec<f64>> {
    let ns = ch.surface.len() / 3;
    if field.len() != ns {
        return Err(OvertoneError::size(
            what,
            format!("{ns} values (one per surface vertex)"),
            field.len(),
        ));
    }
    check_finite(what, field, 1)?;
    let emb = &ch.embedding;
    let nl = emb.lattice.n_vertices();
    let (mut sum, mut weight) = (vec![0.0; nl], vec![0.0; nl]);
    for (s, (c, b)) in emb.corners.iter().zip(&emb.barycentric).enumerate() {
        for k in 0..4 {
            let w = b[k].max(0.0) + 1e-12;
            sum[c[k]] += w * field[s];
            weight[c[k]] += w;
        }
    }
    let fixed: Vec<usize> = (0..nl).filter(|&v| weight[v] > 0.0).collect();
    let known: Vec<f64> = fixed.iter().map(|&v| sum[v] / weight[v]).collect();
    if fixed.len() == nl {
        return Ok(known);
    }
    // Harmonic extension of the shifted field through two complementary columns (rows sum to
    // one, so the weight normalisation of `extend_weights_inward` is a no-op).
    let lo = known.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = known.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let pairs: Vec<f64> = known
        .iter()
        .flat_map(|&f| {
            let t = (f - lo) / span;
            [t, 1.0 - t]
        })
        .collect();
    let ext = extend_weights_inward(&emb.lattice, &fixed, &pairs, 2)?;
    Ok(ext.chunks_exact(2).map(|r| lo + span * r[0]).collect())
}
