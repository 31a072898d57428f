//! A cache-friendly element order.

use crate::mesh::SimplexMesh;

/// Element indices sorted along a Morton (Z-order) curve of their centroids, so that elements
/// close in space are close in memory.
///
/// Per-element loops and per-vertex gathers over incident elements then touch memory in
/// nearby blocks even when a mesher numbered vertices and elements at random (the fish of the
/// reference release spreads each tet over 40% of the vertex range on median). Ties keep the
/// original order, so the result is deterministic.
pub(crate) fn spatial_element_order(mesh: &SimplexMesh) -> Vec<usize> {
    let d = mesh.dim();
    let k = d + 1;
    let m = mesh.n_elements();
    let centroids: Vec<f64> = (0..m)
        .flat_map(|e| {
            let el = mesh.element(e);
            (0..d).map(move |i| el.iter().map(|&v| mesh.vertex(v)[i]).sum::<f64>() / k as f64)
        })
        .collect();
    let mut lo = vec![f64::INFINITY; d];
    let mut hi = vec![f64::NEG_INFINITY; d];
    for c in centroids.chunks_exact(d) {
        for i in 0..d {
            lo[i] = lo[i].min(c[i]);
            hi[i] = hi[i].max(c[i]);
        }
    }
    let bits = if d == 2 { 31 } else { 21 };
    let cells = ((1u64 << bits) - 1) as f64;
    let mut keyed: Vec<(u64, usize)> = centroids
        .chunks_exact(d)
        .enumerate()
        .map(|(e, c)| {
            let mut key = 0u64;
            let q: Vec<u64> = (0..d)
                .map(|i| {
                    let span = hi[i] - lo[i];
                    if span > 0.0 {
                        (((c[i] - lo[i]) / span) * cells) as u64
                    } else {
                        0
                    }
                })
                .collect();
            for b in (0..bits).rev() {
                for qi in &q {
                    key = (key << 1) | ((qi >> b) & 1);
                }
            }
            (key, e)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, e)| e).collect()
}

impl SimplexMesh {
    /// The same mesh with its elements listed in `order` (a permutation of `0..m`).
    pub(crate) fn with_element_order(&self, order: &[usize]) -> Self {
        let k = self.dim() + 1;
        let elements = order
            .iter()
            .flat_map(|&e| self.element(e).iter().copied())
            .collect::<Vec<_>>();
        debug_assert_eq!(elements.len(), self.n_elements() * k);
        Self::unchecked(self.dim(), self.vertices().to_vec(), elements)
    }
}
