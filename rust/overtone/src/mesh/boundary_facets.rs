//! Boundary facets: edges of a triangle mesh or faces of a tetrahedral mesh used by one element.

use crate::mesh::SimplexMesh;

/// Facets of the boundary, each `d` vertex indices oriented outward (counter-clockwise seen from
/// outside), in a deterministic order (sorted by their vertex set).
///
/// A facet is on the boundary when exactly one element has it.
pub fn boundary_facets(mesh: &SimplexMesh) -> Vec<Vec<usize>> {
    // Outward orientation of the facet opposite each local vertex of a positive simplex.
    const TRI: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];
    const TET: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
    let d = mesh.dim();
    let mut facets: Vec<(Vec<usize>, Vec<usize>)> = Vec::with_capacity(mesh.n_elements() * (d + 1));
    for e in 0..mesh.n_elements() {
        let el = mesh.element(e);
        for a in 0..=d {
            let oriented: Vec<usize> = if d == 2 {
                TRI[a].iter().map(|&l| el[l]).collect()
            } else {
                TET[a].iter().map(|&l| el[l]).collect()
            };
            let mut key = oriented.clone();
            key.sort_unstable();
            facets.push((key, oriented));
        }
    }
    facets.sort_unstable();
    let mut out = Vec::new();
    let mut i = 0;
    while i < facets.len() {
        let mut j = i + 1;
        while j < facets.len() && facets[j].0 == facets[i].0 {
            j += 1;
        }
        if j - i == 1 {
            out.push(facets[i].1.clone());
        }
        i = j;
    }
    out
}

/// Sorted, de-duplicated indices of the vertices on the boundary.
pub(crate) fn boundary_vertices(mesh: &SimplexMesh) -> Vec<usize> {
    let mut on = vec![false; mesh.n_vertices()];
    for f in boundary_facets(mesh) {
        for v in f {
            on[v] = true;
        }
    }
    (0..on.len()).filter(|&v| on[v]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_of_two_triangles_has_four_outward_edges() {
        let v = vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let mesh = SimplexMesh::new(2, v, vec![0, 1, 2, 0, 2, 3]).unwrap();
        let f = boundary_facets(&mesh);
        assert_eq!(f.len(), 4);
        // Each outward edge (a, b) of a counter-clockwise square has the interior on its left:
        // the cross product (b - a) × (centre - a) is positive.
        for e in &f {
            let (a, b) = (mesh.vertex(e[0]), mesh.vertex(e[1]));
            let cross = (b[0] - a[0]) * (0.5 - a[1]) - (b[1] - a[1]) * (0.5 - a[0]);
            assert!(cross > 0.0, "edge {e:?} is not counter-clockwise");
        }
        assert_eq!(boundary_vertices(&mesh), vec![0, 1, 2, 3]);
    }

    #[test]
    fn single_tet_faces_point_outward() {
        let v = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let mesh = SimplexMesh::new(3, v, vec![0, 1, 2, 3]).unwrap();
        let c = [0.25; 3];
        for f in boundary_facets(&mesh) {
            let p: Vec<&[f64]> = f.iter().map(|&i| mesh.vertex(i)).collect();
            let u = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
            let w = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
            let nrm = [
                u[1] * w[2] - u[2] * w[1],
                u[2] * w[0] - u[0] * w[2],
                u[0] * w[1] - u[1] * w[0],
            ];
            let to_c = [c[0] - p[0][0], c[1] - p[0][1], c[2] - p[0][2]];
            let dot = nrm[0] * to_c[0] + nrm[1] * to_c[1] + nrm[2] * to_c[2];
            assert!(dot < 0.0, "face {f:?} points inward");
        }
    }
}
