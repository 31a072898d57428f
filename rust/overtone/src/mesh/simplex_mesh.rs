//! A validated simplicial mesh.

use crate::error::{check_finite, InputError, OvertoneError, Result, SettingError};
use crate::mesh::volume::signed_volume;

/// Relative volume below which an element counts as degenerate: `|vol| / ℓ_max^d < this`, with
/// `ℓ_max` the element's longest edge. A regular simplex scores 0.43 (2D) and 0.12 (3D).
pub(crate) const DEGENERATE_RELATIVE_VOLUME: f64 = 1e-10;

/// A mesh of simplices: `n` vertices in `dim` dimensions (`dim` = 2: triangles, 3: tetrahedra).
///
/// * `vertices`: `n × dim`, row-major (vertex `v`, coordinate `i` at `v * dim + i`).
/// * `elements`: `m × (dim + 1)`, row-major, 0-based vertex indices, positively oriented
///   (`det[x₁ − x₀, …, x_d − x₀] > 0`).
///
/// Construction validates everything the FEM operators rely on, so every operator built from a
/// `SimplexMesh` may assume a well-formed mesh; so does deserialising one (a sidecar's lattice
/// is validated again as it is read).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "MeshData", into = "MeshData")]
pub struct SimplexMesh {
    dim: usize,
    vertices: Vec<f64>,
    elements: Vec<usize>,
}

/// A [`SimplexMesh`]'s arrays as stored; read back through [`SimplexMesh::new`].
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct MeshData {
    dim: usize,
    vertices: Vec<f64>,
    elements: Vec<usize>,
}

impl TryFrom<MeshData> for SimplexMesh {
    type Error = OvertoneError;
    fn try_from(m: MeshData) -> Result<Self> {
        Self::new(m.dim, m.vertices, m.elements)
    }
}

impl From<SimplexMesh> for MeshData {
    fn from(m: SimplexMesh) -> Self {
        Self {
            dim: m.dim,
            vertices: m.vertices,
            elements: m.elements,
        }
    }
}

impl SimplexMesh {
    /// Builds and validates a mesh.
    ///
    /// Refuses: `dim` other than 2 or 3, arrays whose length is not a multiple of the row size,
    /// an empty mesh, non-finite coordinates, out-of-range or repeated vertex indices, degenerate
    /// (relative volume below [`DEGENERATE_RELATIVE_VOLUME`]) and inverted elements, and vertices
    /// no element uses (they would make the stiffness matrix singular).
    pub fn new(dim: usize, vertices: Vec<f64>, elements: Vec<usize>) -> Result<Self> {
        if dim != 2 && dim != 3 {
            return Err(OvertoneError::setting(
                "dim",
                dim,
                "must be 2 (triangles) or 3 (tetrahedra)",
            ));
        }
        if vertices.is_empty() || vertices.len() % dim != 0 {
            return Err(OvertoneError::size(
                "vertex array",
                format!("a non-empty multiple of {dim} numbers"),
                vertices.len(),
            ));
        }
        let k = dim + 1;
        if elements.is_empty() || elements.len() % k != 0 {
            return Err(OvertoneError::size(
                "element array",
                format!("a non-empty multiple of {k} indices"),
                elements.len(),
            ));
        }
        check_finite("vertex positions", &vertices, dim)?;
        let n = vertices.len() / dim;
        let mut used = vec![false; n];
        for (e, el) in elements.chunks_exact(k).enumerate() {
            for (a, &v) in el.iter().enumerate() {
                if v >= n {
                    return Err(InputError::IndexOutOfRange {
                        element: e,
                        vertex: v,
                        n_vertices: n,
                    }
                    .into());
                }
                if el[..a].contains(&v) {
                    return Err(InputError::DegenerateElement {
                        element: e,
                        volume: 0.0,
                    }
                    .into());
                }
                used[v] = true;
            }
        }
        if let Some(v) = used.iter().position(|u| !u) {
            return Err(SettingError {
                name: "mesh".into(),
                value: format!("vertex {v}"),
                reason: "is not used by any element; remove unreferenced vertices".into(),
            }
            .into());
        }
        let mesh = Self {
            dim,
            vertices,
            elements,
        };
        for e in 0..mesh.n_elements() {
            let vol = signed_volume(&mesh, e);
            let lmax = mesh.longest_edge(e);
            let rel = vol / lmax.powi(dim as i32);
            if !(rel.abs() >= DEGENERATE_RELATIVE_VOLUME) {
                return Err(InputError::DegenerateElement {
                    element: e,
                    volume: rel,
                }
                .into());
            }
            if rel < 0.0 {
                return Err(InputError::InvertedElement {
                    element: e,
                    volume: vol,
                }
                .into());
            }
        }
        Ok(mesh)
    }

    /// A mesh without validation, for generators that fix orientation before validating.
    pub(crate) fn unchecked(dim: usize, vertices: Vec<f64>, elements: Vec<usize>) -> Self {
        Self {
            dim,
            vertices,
            elements,
        }
    }

    /// Spatial dimension `d` (2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.vertices.len() / self.dim
    }
    /// Number of elements `m`.
    pub fn n_elements(&self) -> usize {
        self.elements.len() / (self.dim + 1)
    }
    /// Vertex positions, `n × d` row-major.
    pub fn vertices(&self) -> &[f64] {
        &self.vertices
    }
    /// Element vertex indices, `m × (d+1)` row-major.
    pub fn elements(&self) -> &[usize] {
        &self.elements
    }
    /// Position of vertex `v` (length `d`).
    pub fn vertex(&self, v: usize) -> &[f64] {
        &self.vertices[v * self.dim..(v + 1) * self.dim]
    }
    /// Vertex indices of element `e` (length `d + 1`).
    pub fn element(&self, e: usize) -> &[usize] {
        let k = self.dim + 1;
        &self.elements[e * k..(e + 1) * k]
    }

    fn longest_edge(&self, e: usize) -> f64 {
        let el = self.element(e);
        let mut lmax: f64 = 0.0;
        for a in 0..el.len() {
            for b in a + 1..el.len() {
                let (pa, pb) = (self.vertex(el[a]), self.vertex(el[b]));
                let l2: f64 = pa.iter().zip(pb).map(|(x, y)| (x - y) * (x - y)).sum();
                lmax = lmax.max(l2.sqrt());
            }
        }
        lmax
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_inverted_degenerate_and_out_of_range() {
        let v = vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        assert!(SimplexMesh::new(2, v.clone(), vec![0, 1, 2]).is_ok());
        assert!(matches!(
            SimplexMesh::new(2, v.clone(), vec![0, 2, 1]),
            Err(OvertoneError::Input(InputError::InvertedElement { .. }))
        ));
        assert!(matches!(
            SimplexMesh::new(2, v.clone(), vec![0, 1, 3]),
            Err(OvertoneError::Input(InputError::IndexOutOfRange { vertex: 3, .. }))
        ));
        let flat = vec![0.0, 0.0, 1.0, 0.0, 2.0, 0.0];
        assert!(matches!(
            SimplexMesh::new(2, flat, vec![0, 1, 2]),
            Err(OvertoneError::Input(InputError::DegenerateElement { .. }))
        ));
        let nan = vec![0.0, 0.0, f64::NAN, 0.0, 0.0, 1.0];
        assert!(matches!(
            SimplexMesh::new(2, nan, vec![0, 1, 2]),
            Err(OvertoneError::Input(InputError::NonFinite { .. }))
        ));
    }
}
