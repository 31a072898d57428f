//! Element volumes (areas in 2D).

use crate::mesh::SimplexMesh;

/// Signed volume of element `e`: `det[x₁ − x₀, …, x_d − x₀] / d!` (area in 2D).
pub(crate) fn signed_volume(mesh: &SimplexMesh, e: usize) -> f64 {
    let el = mesh.element(e);
    let x0 = mesh.vertex(el[0]);
    let edge = |a: usize, i: usize| mesh.vertex(el[a])[i] - x0[i];
    match mesh.dim() {
        2 => 0.5 * (edge(1, 0) * edge(2, 1) - edge(1, 1) * edge(2, 0)),
        _ => {
            let (a, b, c) = (
                [edge(1, 0), edge(1, 1), edge(1, 2)],
                [edge(2, 0), edge(2, 1), edge(2, 2)],
                [edge(3, 0), edge(3, 1), edge(3, 2)],
            );
            (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]))
                / 6.0
        }
    }
}

/// Rest volumes of all elements, length `m` (units: length^d). Positive for a validated mesh.
pub fn element_volumes(mesh: &SimplexMesh) -> Vec<f64> {
    (0..mesh.n_elements()).map(|e| signed_volume(mesh, e)).collect()
}
