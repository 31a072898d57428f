//! The positive entries of a dense `n_vertices × n_bones` skinning-weight matrix, by vertex
//! (compressed rows, bones in increasing order).
//!
//! A skinned vertex usually has at most four bones of a rig's dozens, so a per-frame loop over a
//! vertex's kept entries does a few dozen flops where the dense row would read every bone. The
//! entries keep the dense row's order, so a sum over them rounds exactly as the dense loop that
//! skips zero weights.

/// Compressed rows of the positive weights; built once at bind, read every frame.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseWeights {
    /// Vertex `v`'s entries are `row_start[v]..row_start[v + 1]` (length `n_vertices + 1`).
    row_start: Vec<usize>,
    /// Bone of each kept entry (increasing within a vertex).
    bone: Vec<u32>,
    /// Weight (> 0) of each kept entry.
    weight: Vec<f64>,
}

impl SparseWeights {
    /// The entries `> 0` of `weights` (`rows of n_bones`, row-major; the caller has checked the
    /// size, finiteness and signs). `n_bones` must be ≥ 1 and at most `u32::MAX`.
    pub(crate) fn from_dense(weights: &[f64], n_bones: usize) -> Self {
        debug_assert!(n_bones >= 1 && n_bones <= u32::MAX as usize && weights.len() % n_bones == 0);
        let kept = weights.iter().filter(|&&w| w > 0.0).count();
        let mut row_start = Vec::with_capacity(weights.len() / n_bones + 1);
        let mut bone = Vec::with_capacity(kept);
        let mut weight = Vec::with_capacity(kept);
        row_start.push(0);
        for row in weights.chunks_exact(n_bones) {
            for (b, &w) in row.iter().enumerate() {
                if w > 0.0 {
                    bone.push(b as u32);
                    weight.push(w);
                }
            }
            row_start.push(bone.len());
        }
        Self {
            row_start,
            bone,
            weight,
        }
    }

    /// Vertices (rows).
    pub fn n_vertices(&self) -> usize {
        self.row_start.len() - 1
    }

    /// Vertex `v`'s bones and their weights (bones increasing).
    #[inline]
    pub fn row(&self, v: usize) -> (&[u32], &[f64]) {
        let r = self.row_start[v]..self.row_start[v + 1];
        (&self.bone[r.clone()], &self.weight[r])
    }

    /// The entries of vertices `start..end`: their row bounds (`end − start + 1` offsets into
    /// the entry arrays), bones and weights.
    #[inline]
    pub(crate) fn rows(&self, start: usize, end: usize) -> (&[usize], &[u32], &[f64]) {
        (&self.row_start[start..=end], &self.bone, &self.weight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept entries are the dense matrix's positive ones, in bone order, and a blend over
    /// them is bit-identical to the dense loop that skips zeros.
    #[test]
    fn rows_hold_the_positive_weights_in_bone_order() {
        let dense = [
            0.0, 0.25, 0.0, 0.75, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4,
        ];
        let s = SparseWeights::from_dense(&dense, 4);
        assert_eq!(s.n_vertices(), 4);
        assert_eq!(s.row(0), (&[1u32, 3][..], &[0.25, 0.75][..]));
        assert_eq!(s.row(1), (&[0u32][..], &[1.0][..]));
        assert_eq!(s.row(2), (&[][..], &[][..]));
        assert_eq!(s.row(3).0, &[0u32, 1, 2, 3][..]);
        let values = [0.3, -1.7, 2.9, 1e-3];
        for v in 0..4 {
            let mut dense_sum = 0.0;
            for b in 0..4 {
                let w = dense[4 * v + b];
                if w != 0.0 {
                    dense_sum += w * values[b];
                }
            }
            let (bones, weights) = s.row(v);
            let sparse_sum = bones
                .iter()
                .zip(weights)
                .fold(0.0, |a, (&b, w)| a + w * values[b as usize]);
            assert_eq!(dense_sum.to_bits(), sparse_sum.to_bits(), "vertex {v}");
        }
    }
}
