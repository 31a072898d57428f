//! Per-vertex fields painted on a character's surface, carried to its lattice.

use crate::error::{check_finite, OvertoneError, Result};
use crate::scene::{extend_harmonic, Character};

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
    extend_harmonic(&emb.lattice, &fixed, &known, 1, what)
}
