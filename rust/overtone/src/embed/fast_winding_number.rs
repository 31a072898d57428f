//! Fast generalized winding number (Barill et al. 2018): a bounding-volume tree over the
//! triangles in which a cluster far from the query point contributes its dipole term.
//!
//! A cluster `C` with area-weighted centroid `c̃`, area vector `N = Σ_{t∈C} ½ (b−a)×(c−a)` and
//! radius `r` (largest distance from `c̃` to a corner of its triangles) subtends, seen from `p`
//! with `|c̃ − p| > β r`, the solid angle `Ω_C ≈ N·(c̃ − p) / |c̃ − p|³` (the first term of the
//! far-field expansion of `Σ_t Ω_t`); nearer clusters are opened and leaves summed exactly
//! ([`triangle_solid_angle`]). `w(p) = Σ Ω / 4π`. The cost of a query grows with the
//! logarithm of the triangle count for points away from the surface.
//!
//! Accuracy, measured at the lattice corners next to the surface whose inside/outside it
//! decides (`|w| ≤ ½`): against the exact sum, the largest difference of `w` is 0.052 on the
//! mannequin (15,763 vertices), with no answer changed there, on CesiumMan or on the robot;
//! embedding the mannequin went from 5.6 s to 0.32 s. `β` = 2 was 0.21 s with differences up to
//! 0.125, `β` = 4 0.46 s and 0.032.

use crate::embed::winding_number::triangle_solid_angle;

/// `β`: a cluster is approximated when its centroid is farther than `β` times its radius (the
/// dipole term's relative error falls with `r/d`; see the module notes for what 2, 3 and 4
/// measured).
pub(crate) const FAR_FIELD_RATIO: f64 = 3.0;

/// Triangles per leaf at most.
const LEAF_SIZE: usize = 8;

/// One node: a range of the tree's triangle order, its far-field data and its children.
#[derive(Clone, Debug)]
struct Node {
    start: usize,
    end: usize,
    centroid: [f64; 3],
    area_vector: [f64; 3],
    radius: f64,
    /// Child node indices (`usize::MAX` for a leaf).
    children: [usize; 2],
}

/// The tree over a triangle soup (`vertices` `n × 3`, `triangles` `t × 3`, borrowed).
pub(crate) struct WindingTree<'a> {
    vertices: &'a [f64],
    triangles: &'a [usize],
    /// Triangle indices in tree order.
    order: Vec<usize>,
    nodes: Vec<Node>,
}

impl<'a> WindingTree<'a> {
    /// Builds the tree: nodes split at the median triangle centroid along the longest side of
    /// their centroids' bounding box (ties by triangle index, so the tree depends only on the
    /// input).
    pub(crate) fn new(vertices: &'a [f64], triangles: &'a [usize]) -> Self {
        let nt = triangles.len() / 3;
        let centre: Vec<[f64; 3]> = (0..nt)
            .map(|t| std::array::from_fn(|i| (0..3).map(|k| vertices[3 * triangles[3 * t + k] + i]).sum::<f64>() / 3.0))
            .collect();
        let mut tree = Self {
            vertices,
            triangles,
            order: (0..nt).collect(),
            nodes: Vec::with_capacity(2 * nt / LEAF_SIZE + 1),
        };
        if nt > 0 {
            tree.build(0, nt, &centre);
        }
        tree
    }

    /// Builds the node over `order[start..end]`; returns its index.
    fn build(&mut self, start: usize, end: usize, centre: &[[f64; 3]]) -> usize {
        let id = self.nodes.len();
        let (centroid, area_vector, radius) = self.far_field(&self.order[start..end]);
        self.nodes.push(Node {
            start,
            end,
            centroid,
            area_vector,
            radius,
            children: [usize::MAX; 2],
        });
        if end - start <= LEAF_SIZE {
            return id;
        }
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for &t in &self.order[start..end] {
            for i in 0..3 {
                lo[i] = lo[i].min(centre[t][i]);
                hi[i] = hi[i].max(centre[t][i]);
            }
        }
        let axis = (0..3).fold(0, |a, i| if hi[i] - lo[i] > hi[a] - lo[a] { i } else { a });
        let mid = (end - start) / 2;
        self.order[start..end].select_nth_unstable_by(mid, |&a, &b| {
            centre[a][axis].total_cmp(&centre[b][axis]).then(a.cmp(&b))
        });
        let left = self.build(start, start + mid, centre);
        let right = self.build(start + mid, end, centre);
        self.nodes[id].children = [left, right];
        id
    }

    /// `(c̃, N, r)` of the triangles `tris`.
    fn far_field(&self, tris: &[usize]) -> ([f64; 3], [f64; 3], f64) {
        let v = |i: usize| -> [f64; 3] { std::array::from_fn(|k| self.vertices[3 * i + k]) };
        let (mut n, mut weighted, mut area_sum, mut plain) = ([0.0; 3], [0.0; 3], 0.0, [0.0; 3]);
        for &t in tris {
            let (a, b, c) = (
                v(self.triangles[3 * t]),
                v(self.triangles[3 * t + 1]),
                v(self.triangles[3 * t + 2]),
            );
            let (e1, e2): ([f64; 3], [f64; 3]) = (
                std::array::from_fn(|i| b[i] - a[i]),
                std::array::from_fn(|i| c[i] - a[i]),
            );
            let cross = [
                0.5 * (e1[1] * e2[2] - e1[2] * e2[1]),
                0.5 * (e1[2] * e2[0] - e1[0] * e2[2]),
                0.5 * (e1[0] * e2[1] - e1[1] * e2[0]),
            ];
            let area = (cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]).sqrt();
            area_sum += area;
            for i in 0..3 {
                n[i] += cross[i];
                let mid = (a[i] + b[i] + c[i]) / 3.0;
                weighted[i] += area * mid;
                plain[i] += mid;
            }
        }
        // Degenerate (zero-area) clusters take the plain mean of their centroids.
        let centroid: [f64; 3] = if area_sum > 0.0 {
            std::array::from_fn(|i| weighted[i] / area_sum)
        } else {
            std::array::from_fn(|i| plain[i] / tris.len().max(1) as f64)
        };
        let mut radius = 0.0f64;
        for &t in tris {
            for k in 0..3 {
                let p = v(self.triangles[3 * t + k]);
                let d2: f64 = (0..3).map(|i| (p[i] - centroid[i]).powi(2)).sum();
                radius = radius.max(d2.sqrt());
            }
        }
        (centroid, n, radius)
    }

    /// `w(p)`: exact from near clusters, dipole terms from far ones (see the module notes).
    pub(crate) fn winding_number(&self, p: [f64; 3]) -> f64 {
        if self.nodes.is_empty() {
            return 0.0;
        }
        let mut total = 0.0;
        let mut stack = Vec::with_capacity(64);
        stack.push(0usize);
        while let Some(id) = stack.pop() {
            let node = &self.nodes[id];
            let r: [f64; 3] = std::array::from_fn(|i| node.centroid[i] - p[i]);
            let dist = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            if dist > FAR_FIELD_RATIO * node.radius {
                let a = &node.area_vector;
                total += (a[0] * r[0] + a[1] * r[1] + a[2] * r[2]) / (dist * dist * dist);
            } else if node.children[0] == usize::MAX {
                for &t in &self.order[node.start..node.end] {
                    let tri = [
                        self.triangles[3 * t],
                        self.triangles[3 * t + 1],
                        self.triangles[3 * t + 2],
                    ];
                    total += triangle_solid_angle(self.vertices, tri, p);
                }
            } else {
                stack.push(node.children[1]);
                stack.push(node.children[0]);
            }
        }
        total / (4.0 * std::f64::consts::PI)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::winding_number::winding_number;

    /// A UV sphere of radius 1 (`rings × segments`, outward), optionally without its top cap
    /// (an open shell).
    fn sphere(rings: usize, segments: usize, open: bool) -> (Vec<f64>, Vec<usize>) {
        let mut v = vec![0.0, 0.0, 1.0];
        for r in 1..rings {
            let th = std::f64::consts::PI * r as f64 / rings as f64;
            for s in 0..segments {
                let ph = std::f64::consts::TAU * s as f64 / segments as f64;
                v.extend([th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()]);
            }
        }
        v.extend([0.0, 0.0, -1.0]);
        let ring = |r: usize, s: usize| 1 + (r - 1) * segments + s % segments;
        let south = 1 + (rings - 1) * segments;
        let mut t = Vec::new();
        for s in 0..segments {
            if !open {
                t.extend([0, ring(1, s), ring(1, s + 1)]);
            }
            t.extend([south, ring(rings - 1, s + 1), ring(rings - 1, s)]);
        }
        for r in 1..rings - 1 {
            for s in 0..segments {
                t.extend([ring(r, s), ring(r + 1, s), ring(r + 1, s + 1)]);
                t.extend([ring(r, s), ring(r + 1, s + 1), ring(r, s + 1)]);
            }
        }
        (v, t)
    }

    /// On a closed sphere of 4,000 triangles and on the same sphere open at the top, at points
    /// from the centre to three radii (on a grid that also passes within 1% of the surface):
    /// the tree's `w` equals the exact sum within 2e-2 (1.2e-2 measured; 3.2e-2 with `β` = 2)
    /// and gives the same inside/outside answer (`|w| > ½`) wherever the exact `w` is not
    /// within 0.01 of ½.
    #[test]
    fn the_tree_matches_the_exact_winding_number() {
        for open in [false, true] {
            let (v, t) = sphere(40, 50, open);
            let tree = WindingTree::new(&v, &t);
            let mut worst = 0.0f64;
            let mut count = 0;
            for i in 0..13 {
                for j in 0..13 {
                    for k in 0..13 {
                        let p = [
                            -3.0 + 0.5 * i as f64 + 0.013,
                            -3.0 + 0.5 * j as f64 + 0.007,
                            -3.0 + 0.5 * k as f64 + 0.011,
                        ];
                        let (exact, fast) = (winding_number(&v, &t, p), tree.winding_number(p));
                        worst = worst.max((exact - fast).abs());
                        if (exact.abs() - 0.5).abs() > 0.01 {
                            assert_eq!(exact.abs() > 0.5, fast.abs() > 0.5, "at {p:?}: {exact} vs {fast}");
                        }
                        count += 1;
                    }
                }
            }
            assert!(
                worst <= 2e-2,
                "open {open}: worst difference {worst:.2e} over {count} points"
            );
        }
    }
}
