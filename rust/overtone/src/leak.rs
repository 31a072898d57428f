//! The momentum-leaking field `D` of complementary dynamics.
//!
//! The rig-orthogonality constraint is `Jᵀ M D u_c = 0` with `D = diag(d) ⊗ I_d`. Where
//! `d_v = 0` the secondary motion may carry momentum the rig already has (the tissue rides along
//! with the handle); where `d_v = 1` it may not (the tissue resists and lags). A constant `d`
//! (`D = cI`) means no momentum exchange with the rig at all.

use faer::sparse::Triplet;

use crate::error::{check_finite, OvertoneError, Result};
use crate::fem::{lumped_mass, scalar_stiffness_triplets, DeformationJacobian};
use crate::mesh::{boundary_vertices, element_volumes, SimplexMesh};
use crate::solve::FixedValueSolve;

/// Diffuses the value 1 from the given (Dirichlet) vertices into the mesh by one backward-Euler
/// heat step, then rescales to `[0, 1]`.
///
/// With the P1 stiffness `K` (`K_uv = Σ_e vol_e ∇φ_u·∇φ_v`, the negated cotangent Laplacian) and
/// the unit-density lumped mass `M`, the free vertices `f` solve
/// `(dt K_ff + M_ff) φ_f = −dt K_fb 1` while `φ_b = 1`; the result is mapped by
/// `(φ − min φ)/(max φ − min φ)`. Returns `n` values. This is the leak of seed tutorial 23 with
/// `dt = 1` (units of `dt`: length², the diffusion length scale squared).
pub(crate) fn diffuse_from(mesh: &SimplexMesh, sources: &[usize], dt: f64) -> Result<Vec<f64>> {
    let n = mesh.n_vertices();
    let mut is_src = vec![false; n];
    for &s in sources {
        if s >= n {
            return Err(OvertoneError::size(
                "diffusion source",
                format!("a vertex index < {n}"),
                s,
            ));
        }
        is_src[s] = true;
    }
    let free: Vec<usize> = (0..n).filter(|&v| !is_src[v]).collect();
    let mut phi: Vec<f64> = is_src.iter().map(|&s| if s { 1.0 } else { 0.0 }).collect();
    if !free.is_empty() && !sources.is_empty() {
        let vols = element_volumes(mesh);
        let m = lumped_mass(mesh, &vols, 1.0);
        let g = DeformationJacobian::new(mesh);
        // dt K followed by the lumped mass on the diagonal; the sources hold the value 1.
        let a = scalar_stiffness_triplets(&g, &vols)
            .into_iter()
            .map(|t| Triplet::new(t.row, t.col, dt * t.val))
            .chain((0..n).map(|v| Triplet::new(v, v, m[v])));
        let mut solve = FixedValueSolve::new(n, a, sources, 1, "leak diffusion matrix dt*K + M")?;
        let known = vec![1.0; sources.len()];
        let x = solve.solve(&known, 1)?;
        for &v in &free {
            phi[v] = x[v];
        }
    }
    let (lo, hi) = phi
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if hi > lo {
        phi.iter_mut().for_each(|x| *x = (*x - lo) / (hi - lo));
    }
    Ok(phi)
}

/// The default momentum weights `d = 1 − diffuse_from(boundary, dt = 1)`: zero on the surface
/// (momentum leaks: the skin follows the rig), rising towards one deep inside.
pub fn default_momentum_weights(mesh: &SimplexMesh) -> Result<Vec<f64>> {
    let phi = diffuse_from(mesh, &boundary_vertices(mesh), 1.0)?;
    Ok(phi.into_iter().map(|p| 1.0 - p).collect())
}

/// The default momentum weights of a lattice embedding a body: `d = 1 − φ` with `φ` the
/// diffusion of [`diffuse_from`] (`dt = 1`) from the lattice vertices outside the body's
/// surface (`outside`, one flag per vertex) and the lattice boundary; zero on and outside the
/// surface, rising towards one deep inside.
///
/// Unlike [`default_momentum_weights`], whose zero layer is the lattice's boundary (up to a
/// cell outside the skin, a layer one cell thick that shrinks as the lattice is refined), the
/// zero set here is fixed by the surface, so the field, and the secondary motion that depends
/// on it, converge as the lattice is refined.
pub fn default_momentum_weights_in_body(mesh: &SimplexMesh, outside: &[bool]) -> Result<Vec<f64>> {
    let n = mesh.n_vertices();
    if outside.len() != n {
        return Err(OvertoneError::size(
            "outside flags",
            format!("{n} values (one per vertex)"),
            outside.len(),
        ));
    }
    let mut sources = boundary_vertices(mesh);
    sources.extend((0..n).filter(|&v| outside[v]));
    sources.sort_unstable();
    sources.dedup();
    let phi = diffuse_from(mesh, &sources, 1.0)?;
    Ok(phi.into_iter().map(|p| 1.0 - p).collect())
}

/// The leak field of the reference C++ release (its "Poisson mask"): `d_v = m_v z_v / max(m z)`
/// with `m` the unit-density lumped mass and `z` the solution of the Poisson problem `K z = m`
/// (`K` the P1 stiffness, the negated cotangent Laplacian) with `z = 0` on the boundary vertices.
///
/// The release's constraint `Aᵀ M Φ u = 0` with `Φ = diag(M z) ⊗ I₃` is Overtone's
/// `Jᵀ M D u = 0` with this `d` (the constraint is homogeneous, so the scale of `d` does not
/// matter; it is scaled to a largest value of 1). Zero on the surface, largest deep inside, and
/// proportional to the local element size through `m`. Returns `n` values in `[0, 1]`.
/// Errors: a mesh without boundary vertices or with a piece that touches no boundary.
pub fn poisson_momentum_weights(mesh: &SimplexMesh) -> Result<Vec<f64>> {
    let n = mesh.n_vertices();
    let boundary = boundary_vertices(mesh);
    if boundary.is_empty() {
        return Err(OvertoneError::Unsupported(
            "the Poisson leak field needs a mesh with a boundary".into(),
        ));
    }
    let vols = element_volumes(mesh);
    let m = lumped_mass(mesh, &vols, 1.0);
    let g = DeformationJacobian::new(mesh);
    let k = scalar_stiffness_triplets(&g, &vols);
    let mut solve = FixedValueSolve::new(n, k, &boundary, 1, "Poisson leak matrix K")?;
    let z = solve.solve_with_load(&vec![0.0; boundary.len()], &m, 1)?;
    let mut d: Vec<f64> = m.iter().zip(&z).map(|(mv, zv)| (mv * zv).max(0.0)).collect();
    let top = d.iter().fold(0.0f64, |a, &x| a.max(x));
    if top > 0.0 {
        d.iter_mut().for_each(|x| *x /= top);
    }
    check_finite("Poisson leak field", &d, 1)?;
    Ok(d)
}

/// Validates a user-given (painted) field `d`: one finite value `≥ 0` per vertex, not all zero.
pub(crate) fn validate_momentum_weights(d: &[f64], n_vertices: usize) -> Result<()> {
    if d.len() != n_vertices {
        return Err(OvertoneError::size(
            "leak field D",
            format!("{n_vertices} values (one per vertex)"),
            d.len(),
        ));
    }
    check_finite("leak field D", d, 1)?;
    if let Some(v) = d.iter().position(|&x| x < 0.0) {
        return Err(OvertoneError::setting(
            "D",
            format!("{} at vertex {v}", d[v]),
            "momentum weights must be >= 0 (0: follows the rig, 1: resists it)",
        ));
    }
    Ok(())
}

/// The value of a painted leak field that marks an unpainted vertex (see [`validate_painted_leak`]).
pub(crate) const UNPAINTED: f64 = -1.0;

/// Validates a painted leak field on a host's surface: one finite value per vertex, each either
/// `≥ 0` (painted: the momentum weight `d` there) or exactly [`UNPAINTED`] (`-1`: the default
/// field there). Returns whether any vertex is unpainted.
pub(crate) fn validate_painted_leak(d: &[f64], n_vertices: usize) -> Result<bool> {
    if d.len() != n_vertices {
        return Err(OvertoneError::size(
            "leak field D",
            format!("{n_vertices} values (one per vertex)"),
            d.len(),
        ));
    }
    check_finite("leak field D", d, 1)?;
    if let Some(v) = d.iter().position(|&x| x < 0.0 && x != UNPAINTED) {
        return Err(OvertoneError::setting(
            "D",
            format!("{} at vertex {v}", d[v]),
            "painted momentum weights must be >= 0 (0: follows the rig, 1: resists it), or -1 for an \
             unpainted vertex (the default field there)",
        ));
    }
    Ok(d.contains(&UNPAINTED))
}

/// Blends a painted field into the default one on the lattice: `d = (1 − m) d_default + m p`,
/// where `m` (the painted mask) and `m p` (the painted values) are each extended from the
/// surface to the lattice, so painted regions take the painted values, unpainted ones keep
/// `d_default`, with a smooth transition between. `mask` and `masked_values` are per lattice
/// vertex, `mask` in `[0, 1]`.
pub(crate) fn blend_painted(default: &[f64], mask: &[f64], masked_values: &[f64]) -> Vec<f64> {
    default
        .iter()
        .zip(mask)
        .zip(masked_values)
        .map(|((&d, &m), &mp)| ((1.0 - m) * d + mp).max(0.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w × h` grid of unit squares, each split into two triangles.
    fn grid(w: usize, h: usize) -> SimplexMesh {
        let mut v = Vec::new();
        for j in 0..h {
            for i in 0..w {
                v.extend([i as f64, j as f64]);
            }
        }
        let mut t = Vec::new();
        for j in 0..h - 1 {
            for i in 0..w - 1 {
                let a = j * w + i;
                t.extend([a, a + 1, a + w, a + 1, a + w + 1, a + w]);
            }
        }
        SimplexMesh::new(2, v, t).unwrap()
    }

    /// On a `21 × 21` grid of unit squares (side `L = 20`) every interior vertex has unit mass
    /// and the P1 stiffness is the 5-point Laplacian, so `d = z / max z` makes
    /// `4 d_v − Σ_neighbours d` the same constant `1/max z` at every interior vertex; and `max z`
    /// is the torsion function's peak of the square, `0.0736713 L²`, within 1% (the 5-point
    /// scheme's error at this resolution). Zero on the boundary, one at the centre.
    #[test]
    fn poisson_field_solves_the_torsion_problem_of_a_square() {
        let w = 21;
        let mesh = grid(w, w);
        let d = poisson_momentum_weights(&mesh).unwrap();
        for v in boundary_vertices(&mesh) {
            assert_eq!(d[v], 0.0, "boundary vertex {v}");
        }
        assert!((d[10 * w + 10] - 1.0).abs() < 1e-12, "centre {}", d[10 * w + 10]);
        let lap = |v: usize| 4.0 * d[v] - d[v - 1] - d[v + 1] - d[v - w] - d[v + w];
        let c = lap(w + 1);
        for j in 1..w - 1 {
            for i in 1..w - 1 {
                let v = j * w + i;
                assert!((lap(v) - c).abs() < 1e-12, "vertex {v}: {} vs {c}", lap(v));
            }
        }
        let peak = 1.0 / c;
        let want = 0.0736713 * 400.0;
        assert!((peak / want - 1.0).abs() < 0.01, "max z = {peak}, continuum {want}");
    }

    /// On a 1D-like strip the discrete heat step is monotone: the field is 1 on the boundary,
    /// strictly inside (0, 1) elsewhere after rescaling has mapped its minimum to 0.
    #[test]
    fn diffused_field_is_one_on_boundary_and_bounded() {
        let (w, h) = (8, 5);
        let mesh = grid(w, h);
        let b = boundary_vertices(&mesh);
        assert_eq!(b.len(), 2 * (w + h) - 4);
        let phi = diffuse_from(&mesh, &b, 1.0).unwrap();
        for &v in &b {
            assert_eq!(phi[v], 1.0);
        }
        let min = phi.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(min, 0.0);
        assert!(phi.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }

    /// The body's field is zero on every vertex flagged outside (not only on the lattice
    /// boundary), positive on the others, with maximum one; flags of the wrong length are
    /// refused.
    #[test]
    fn body_leak_is_zero_outside_the_surface() {
        let (w, h) = (9, 7);
        let mesh = grid(w, h);
        // Outside: the two outer rings of the grid (the body is the inner 5 x 3 block).
        let outside: Vec<bool> = (0..w * h)
            .map(|k| {
                let (i, j) = (k % w, k / w);
                i < 2 || j < 2 || i >= w - 2 || j >= h - 2
            })
            .collect();
        let d = default_momentum_weights_in_body(&mesh, &outside).unwrap();
        for k in 0..w * h {
            if outside[k] {
                assert_eq!(d[k], 0.0, "outside vertex {k}");
            } else {
                assert!(d[k] > 0.0 && d[k] <= 1.0, "inside vertex {k}: {}", d[k]);
            }
        }
        assert_eq!(d.iter().cloned().fold(0.0, f64::max), 1.0);
        assert!(default_momentum_weights_in_body(&mesh, &outside[1..]).is_err());
    }

    #[test]
    fn painted_leak_accepts_unpainted_marks_and_refuses_other_negatives() {
        assert!(!validate_painted_leak(&[0.0, 0.5, 1.0], 3).unwrap());
        assert!(validate_painted_leak(&[0.0, UNPAINTED, 2.0], 3).unwrap());
        assert!(validate_painted_leak(&[0.0, -0.5, 1.0], 3).is_err());
        assert!(validate_painted_leak(&[0.0, f64::NAN, 1.0], 3).is_err());
        assert!(validate_painted_leak(&[0.0, 1.0], 3).is_err());
    }

    /// Unpainted (mask 0) keeps the default exactly, fully painted (mask 1) takes the painted
    /// value exactly, half-way blends linearly.
    #[test]
    fn blend_keeps_the_default_where_unpainted() {
        let d = blend_painted(&[0.2, 0.2, 0.2], &[0.0, 1.0, 0.5], &[0.0, 0.9, 0.45]);
        assert_eq!(d[0], 0.2);
        assert!((d[1] - 0.9).abs() < 1e-15);
        assert!((d[2] - 0.55).abs() < 1e-15);
    }
}
