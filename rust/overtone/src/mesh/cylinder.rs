//! A tetrahedralised solid cylinder of concentric vertex rings.

use crate::error::{OvertoneError, Result};
use crate::mesh::{signed_volume, SimplexMesh};

/// A solid cylinder around the y axis, `y ∈ [0, height]`, radius `radius`.
///
/// Each of the `layers` cross-sections holds the centre and `rings` concentric rings, ring `k`
/// with `8k` vertices at radius `k·radius/rings` (angles `2πj/(8k)`), so a layer has
/// `1 + 4·rings·(rings+1)` vertices (81 for 4 rings; 25 layers give the seed's 2,025
/// particles). Vertex `l·per_layer + c`: layer `l`, centre `c = 0`, then ring after ring.
/// Adjacent rings are triangulated by merging their angles; each prism between two layers is
/// split into three tetrahedra by the global vertex order (conforming across prisms), all
/// positively oriented.
pub fn tet_cylinder(rings: usize, layers: usize, radius: f64, height: f64) -> Result<SimplexMesh> {
    if rings == 0 || layers < 2 || !(radius > 0.0 && height > 0.0 && radius.is_finite() && height.is_finite()) {
        return Err(OvertoneError::setting(
            "cylinder",
            format!("rings {rings}, layers {layers}, radius {radius}, height {height}"),
            "needs rings >= 1, layers >= 2 and positive finite radius and height",
        ));
    }
    let ring_start = |k: usize| if k == 0 { 0 } else { 1 + 4 * (k - 1) * k };
    let per = ring_start(rings + 1);
    let mut disk = Vec::new();
    for k in 1..=rings {
        let (a, b) = (if k == 1 { 1 } else { 8 * (k - 1) }, 8 * k);
        let (ia, ib) = (ring_start(k - 1), ring_start(k));
        let (mut i, mut j) = (0, 0);
        while i < a || j < b {
            let advance_outer = j < b && (i == a || (j + 1) * a <= (i + 1) * b);
            if advance_outer {
                disk.extend([ia + i % a, ib + j % b, ib + (j + 1) % b]);
                j += 1;
            } else {
                disk.extend([ia + i % a, ib + j % b, ia + (i + 1) % a]);
                i += 1;
            }
        }
        if a == 1 {
            // The centre "ring" produced degenerate triangles (centre, centre, ·); drop them.
            let keep: Vec<usize> = disk
                .chunks_exact(3)
                .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
                .flatten()
                .copied()
                .collect();
            disk = keep;
        }
    }
    let mut v = Vec::with_capacity(3 * per * layers);
    for l in 0..layers {
        let y = height * l as f64 / (layers - 1) as f64;
        v.extend([0.0, y, 0.0]);
        for k in 1..=rings {
            let r = radius * k as f64 / rings as f64;
            for j in 0..8 * k {
                let t = std::f64::consts::TAU * j as f64 / (8 * k) as f64;
                v.extend([r * t.cos(), y, r * t.sin()]);
            }
        }
    }
    let mut t = Vec::new();
    for l in 0..layers - 1 {
        for tri in disk.chunks_exact(3) {
            let mut s = [tri[0], tri[1], tri[2]];
            s.sort_unstable();
            let b = l * per;
            let (v0, v1, v2) = (b + s[0], b + s[1], b + s[2]);
            let (w0, w1, w2) = (v0 + per, v1 + per, v2 + per);
            t.extend([v0, v1, v2, w0, v1, v2, w0, w1, v2, w0, w1, w2]);
        }
    }
    let probe = SimplexMesh::unchecked(3, v.clone(), t.clone());
    for e in 0..t.len() / 4 {
        if signed_volume(&probe, e) < 0.0 {
            t.swap(4 * e + 2, 4 * e + 3);
        }
    }
    SimplexMesh::new(3, v, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::element_volumes;

    /// 4 rings × 25 layers: 2,025 vertices; the volume is that of the inscribed polygonal
    /// prism (π r² h to 3% for the 32-gon outer ring).
    #[test]
    fn seed_cylinder_size_and_volume() {
        let m = tet_cylinder(4, 25, 0.2, 1.2).unwrap();
        assert_eq!(m.n_vertices(), 2025);
        let vol: f64 = element_volumes(&m).iter().sum();
        let exact = std::f64::consts::PI * 0.04 * 1.2;
        assert!((vol - exact).abs() < 0.03 * exact, "{vol} vs {exact}");
    }
}
