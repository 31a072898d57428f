//! Lumped (barycentric) mass matrix.

use crate::mesh::SimplexMesh;

/// Diagonal of the lumped mass matrix, length `n` (units: density × length^d).
///
/// Each element gives `ρ·vol_e/(d+1)` to each of its `d+1` vertices, so the masses sum to
/// `ρ · Σ vol_e`. The full `nd × nd` mass matrix is `diag(m) ⊗ I_d`.
pub fn lumped_mass(mesh: &SimplexMesh, volumes: &[f64], density: f64) -> Vec<f64> {
    let share = 1.0 / (mesh.dim() + 1) as f64;
    let mut m = vec![0.0; mesh.n_vertices()];
    for (e, vol) in volumes.iter().enumerate() {
        for &v in mesh.element(e) {
            m[v] += density * vol * share;
        }
    }
    m
}
