//! How far a rig moves any of its vertices between two poses (cut and teleport detection).

use crate::rig::LbsRig;

/// Weight below which a vertex does not count toward a bone's region.
const REGION_WEIGHT: f64 = 1e-3;

/// Per bone, the bounding box of the rest vertices it moves (weight ≥ 10⁻³); the largest
/// movement of a bone's region between two poses is measured at the box's corners, so the
/// per-frame check costs `2^d` points per bone, not a skinning of every vertex.
#[derive(Clone, Debug)]
pub struct RigJump {
    dim: usize,
    /// Per bone, `2^d` corners (`d` numbers each); empty for a bone that moves no vertex.
    corners: Vec<Vec<f64>>,
    /// The rest body's bounding-box diagonal (length units).
    diagonal: f64,
}

impl RigJump {
    pub fn new(rig: &LbsRig) -> Self {
        let (d, m, n) = (rig.dim(), rig.n_bones(), rig.n_vertices());
        let (rest, w) = (rig.rest(), rig.weights());
        let (lo, hi) = crate::mesh::bounding_box_d(rest, d);
        let diagonal = (0..d).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
        let corners = (0..m)
            .map(|b| {
                let (mut a, mut z) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
                for v in (0..n).filter(|&v| w[v * m + b] >= REGION_WEIGHT) {
                    for i in 0..d {
                        a[i] = a[i].min(rest[v * d + i]);
                        z[i] = z[i].max(rest[v * d + i]);
                    }
                }
                if !a[0].is_finite() {
                    return Vec::new();
                }
                (0..1usize << d)
                    .flat_map(|c| (0..d).map(move |i| (c, i)))
                    .map(|(c, i)| if c >> i & 1 == 0 { a[i] } else { z[i] })
                    .collect()
            })
            .collect();
        Self {
            dim: d,
            corners,
            diagonal,
        }
    }

    /// The rest body's bounding-box diagonal.
    pub fn diagonal(&self) -> f64 {
        self.diagonal
    }

    /// The largest movement of a bone region's corner from pose `pa` to pose `pb` (rig
    /// parameters of the rig this was built for; blendshape weights are not counted).
    pub fn jump(&self, pa: &[f64], pb: &[f64]) -> f64 {
        let d = self.dim;
        let c = self.corners.len() * (d + 1);
        let mut worst: f64 = 0.0;
        for (b, corners) in self.corners.iter().enumerate() {
            for x in corners.chunks_exact(d) {
                let mut s2 = 0.0;
                for i in 0..d {
                    let mut delta = 0.0;
                    for j in 0..=d {
                        let xj = if j < d { x[j] } else { 1.0 };
                        let k = i * c + b * (d + 1) + j;
                        delta += (pb[k] - pa[k]) * xj;
                    }
                    s2 += delta * delta;
                }
                worst = worst.max(s2.sqrt());
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_translation_moves_every_region_by_its_length() {
        // Two bones over a unit square; bone 1 translates by (0.3, 0.4).
        let rest = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let w = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0];
        let rig = LbsRig::new(2, &rest, &w, 2).unwrap();
        let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let mv = [1.0, 0.0, 0.3, 0.0, 1.0, 0.4];
        let pa = rig.params_from_transforms(&[id, id].concat()).unwrap();
        let pb = rig.params_from_transforms(&[id, mv].concat()).unwrap();
        let j = RigJump::new(&rig);
        assert!((j.jump(&pa, &pb) - 0.5).abs() < 1e-15);
        assert_eq!(j.jump(&pa, &pa), 0.0);
        assert!((j.diagonal() - 2f64.sqrt()).abs() < 1e-15);
    }
}
