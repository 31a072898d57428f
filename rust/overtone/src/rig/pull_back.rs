//! Pull-back of a world displacement to rest space through linear blend skinning.
//!
//! A host that adds the simulated displacement *before* its skinning (Blender's Armature
//! modifier skins `X + d`) needs, per vertex `v`, the rest offset `d_v` that LBS maps onto the
//! world displacement `u_v`. LBS is affine per vertex, `skin(X) = Σ_b w_vb (A_b X + t_b)`, so
//! `skin(X + d) = skin(X) + A_v d` with the blended linear part
//!
//! ```text
//! A_v = Σ_b w_vb A_b          (A_b = T_b[:3, :3], the bone's 3 × 3 linear part)
//! d_v = M_p · A_v⁻¹ · u_v     (M_p an optional per-part 3 × 3 matrix, identity by default)
//! ```
//!
//! `M_p` lets a host land in each mesh's own object space (Blender: the linear part of
//! `Mo_bind⁻¹`). The inverse is the adjugate over the determinant; a vertex whose blended matrix
//! is singular (`|det A_v| ≤ 10⁻¹² s³`, `s` the largest `|entry|` of any bone's `A_b`, e.g. a
//! bone scaled to zero) gets `d_v = 0` instead of an infinity.
//!
//! The weights are kept sparse (compressed rows of the positive entries): a vertex usually has at
//! most four bones, so one application costs a few dozen flops per vertex and allocates nothing.
//! Vertices go in blocks whose inverses run element-wise over stack arrays (vectorised across
//! vertices); on x86-64 CPUs with AVX2 the same code runs compiled for AVX2 (no FMA: the results
//! are bit for bit those of the baseline build, on any machine).

use super::sparse_weights::SparseWeights;
use crate::error::{check_finite, InputError};
use crate::{OvertoneError, Result};

/// Relative determinant below which a blended matrix counts as singular (times `s³`).
const SINGULAR: f64 = 1e-12;

/// The precomputed sparse weights of a pull-back (see the module's doc), built once at bind and
/// applied every frame with [`PullBack::apply`].
#[derive(Clone, Debug)]
pub struct PullBack {
    n_vertices: usize,
    n_bones: usize,
    /// The positive weights by vertex.
    weights: SparseWeights,
    /// Per part: one past its last vertex and its 3 × 3 row-major `M_p`; empty: identity.
    parts: Vec<(usize, [f64; 9])>,
}

impl PullBack {
    /// Keeps the positive entries of `weights` (`n_vertices × n_bones`, row-major). Weights must
    /// be finite and ≥ 0 (the dense blend they replace would otherwise differ); they need not sum
    /// to one. A vertex without a positive weight has `A_v = 0` and always gets `d_v = 0`.
    pub fn new(weights: &[f64], n_vertices: usize, n_bones: usize) -> Result<Self> {
        if n_vertices == 0 || n_bones == 0 {
            return Err(OvertoneError::size(
                "pull-back weights",
                "at least one vertex and one bone",
                format!("{n_vertices} vertices x {n_bones} bones"),
            ));
        }
        if n_bones > u32::MAX as usize {
            return Err(OvertoneError::size(
                "pull-back bones",
                format!("at most {}", u32::MAX),
                n_bones,
            ));
        }
        let expected = n_vertices.checked_mul(n_bones).ok_or_else(|| {
            OvertoneError::size(
                "pull-back weights",
                "a vertices x bones product that fits in memory",
                format!("{n_vertices} x {n_bones}"),
            )
        })?;
        if weights.len() != expected {
            return Err(OvertoneError::size(
                "pull-back weights",
                format!("{n_vertices} vertices x {n_bones} bones = {expected} numbers"),
                weights.len(),
            ));
        }
        check_finite("pull-back weights", weights, n_bones)?;
        if let Some(i) = weights.iter().position(|&w| w < 0.0) {
            return Err(InputError::Weights {
                vertex: i / n_bones,
                reason: format!(
                    "weight {} of bone {} is negative; skinning weights must be >= 0",
                    weights[i],
                    i % n_bones
                ),
            }
            .into());
        }
        Ok(Self {
            n_vertices,
            n_bones,
            weights: SparseWeights::from_dense(weights, n_bones),
            parts: Vec::new(),
        })
    }

    /// Splits the vertices into consecutive parts of `part_vertices[p]` vertices (summing to
    /// the vertex count), part `p` multiplying its offsets by the 3 × 3 row-major matrix
    /// `part_linear[9p..9p + 9]` (finite). Empty slices: identity for every vertex.
    pub fn with_parts(mut self, part_vertices: &[usize], part_linear: &[f64]) -> Result<Self> {
        if part_vertices.is_empty() && part_linear.is_empty() {
            self.parts.clear();
            return Ok(self);
        }
        if part_linear.len() != 9 * part_vertices.len() {
            return Err(OvertoneError::size(
                "pull-back part matrices",
                format!(
                    "{} parts x 9 = {} numbers",
                    part_vertices.len(),
                    9 * part_vertices.len()
                ),
                part_linear.len(),
            ));
        }
        let total = part_vertices.iter().try_fold(0usize, |a, &x| a.checked_add(x));
        if total != Some(self.n_vertices) {
            return Err(OvertoneError::size(
                "pull-back part vertex counts",
                format!("a sum of {} (the weights' vertices)", self.n_vertices),
                total.map_or_else(|| "an overflowing sum".to_string(), |t| t.to_string()),
            ));
        }
        check_finite("pull-back part matrices", part_linear, 9)?;
        let mut end = 0;
        self.parts = part_vertices
            .iter()
            .zip(part_linear.chunks_exact(9))
            .map(|(&n, m)| {
                end += n;
                (end, std::array::from_fn(|k| m[k]))
            })
            .collect();
        Ok(self)
    }

    pub fn n_vertices(&self) -> usize {
        self.n_vertices
    }

    pub fn n_bones(&self) -> usize {
        self.n_bones
    }

    /// Writes `d` (`n_vertices × 3`, row-major, rest/object units) for the skin transforms
    /// `transforms` (`n_bones × 12`, each a row-major 3 × 4 `[A_b | t_b]`; only `A_b` is read)
    /// and the world displacement `u` (`n_vertices × 3`). Allocates nothing; on error `d` is
    /// untouched.
    pub fn apply(&self, transforms: &[f64], u: &[f64], d: &mut [f64]) -> Result<()> {
        let (n, m) = (self.n_vertices, self.n_bones);
        if transforms.len() != 12 * m {
            return Err(OvertoneError::size(
                "pull-back transforms",
                format!("{m} bones x 12 = {} numbers", 12 * m),
                transforms.len(),
            ));
        }
        for (what, len) in [("pull-back displacement", u.len()), ("pull-back output", d.len())] {
            if len != 3 * n {
                return Err(OvertoneError::size(
                    what,
                    format!("{n} vertices x 3 = {} numbers", 3 * n),
                    len,
                ));
            }
        }
        check_finite("pull-back transforms", transforms, 12)?;
        check_finite("pull-back displacement", u, 3)?;
        let threshold = singular_threshold(transforms);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { self.apply_parts_avx2(transforms, u, d, threshold) };
            return Ok(());
        }
        self.apply_parts(transforms, u, d, threshold);
        Ok(())
    }

    /// [`apply_parts`](Self::apply_parts) compiled for AVX2 (four lanes instead of SSE2's two;
    /// no FMA, so every result is bit for bit the SSE2 one).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn apply_parts_avx2(&self, transforms: &[f64], u: &[f64], d: &mut [f64], threshold: f64) {
        self.apply_parts(transforms, u, d, threshold)
    }

    /// Every part's vertices (validated sizes).
    #[inline(always)]
    fn apply_parts(&self, transforms: &[f64], u: &[f64], d: &mut [f64], threshold: f64) {
        let mut start = 0;
        if self.parts.is_empty() {
            self.apply_range(transforms, u, d, 0..self.n_vertices, None, threshold);
        } else {
            for (end, mat) in &self.parts {
                self.apply_range(transforms, u, d, start..*end, Some(mat), threshold);
                start = *end;
            }
        }
    }

    /// [`apply`](Self::apply) on the vertices `range` with the part matrix `post` (validated
    /// sizes), in blocks of [`BLOCK`] vertices: each block's blended matrices and displacements
    /// are gathered into stack arrays (structure of arrays), so that the inverse runs
    /// element-wise over the block and vectorises across vertices.
    #[inline(always)]
    fn apply_range(
        &self,
        transforms: &[f64],
        u: &[f64],
        d: &mut [f64],
        range: std::ops::Range<usize>,
        post: Option<&[f64; 9]>,
        threshold: f64,
    ) {
        let identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let mp = post.unwrap_or(&identity);
        let mut start = range.start;
        while start < range.end {
            let len = BLOCK.min(range.end - start);
            // Lanes past `len` stay zero: a singular blend, d = 0, never written.
            let mut a = [[0.0f64; BLOCK]; 9];
            let mut x = [[0.0f64; BLOCK]; 3];
            let end = start + len;
            let (row_start, bone, weight) = self.weights.rows(start, end);
            let rows = row_start.windows(2);
            let xs = u[3 * start..3 * end].chunks_exact(3);
            for (k, (row, xv)) in rows.zip(xs).enumerate() {
                // The whole 3 × 4 rows are blended (the translation column is unused): twelve
                // contiguous multiply-adds per bone vectorise where nine strided ones do not.
                let mut acc = [0.0f64; 12];
                for e in row[0]..row[1] {
                    let b = 12 * bone[e] as usize;
                    let (w, t) = (weight[e], &transforms[b..b + 12]);
                    for c in 0..12 {
                        acc[c] += w * t[c];
                    }
                }
                for (r, c) in [0, 1, 2, 4, 5, 6, 8, 9, 10].into_iter().enumerate() {
                    a[r][k] = acc[c];
                }
                for i in 0..3 {
                    x[i][k] = xv[i];
                }
            }
            let y = inverse_times(&a, &x, threshold);
            let outs = d[3 * start..3 * (start + len)].chunks_exact_mut(3);
            for (k, out) in outs.enumerate() {
                for i in 0..3 {
                    out[i] = mp[3 * i] * y[0][k] + mp[3 * i + 1] * y[1][k] + mp[3 * i + 2] * y[2][k];
                }
            }
            start += len;
        }
    }
}

/// `10⁻¹² s³`, `s` the largest `|entry|` of the bones' linear parts (`transforms` bones × 12).
fn singular_threshold(transforms: &[f64]) -> f64 {
    let s = transforms
        .chunks_exact(12)
        .flat_map(|t| [t[0], t[1], t[2], t[4], t[5], t[6], t[8], t[9], t[10]])
        .fold(0.0f64, |acc, x| acc.max(x.abs()));
    SINGULAR * s * s * s
}

/// Vertices per block of [`PullBack::apply`] (its stack arrays hold `15 · BLOCK` numbers, 7.5 KiB).
const BLOCK: usize = 64;

/// Per lane `k`, `a_k⁻¹ x_k` for the row-major 3 × 3 `a_k` (`a[r][k]` its entry `r`) by its
/// adjugate over its determinant, or 0 where `|det a_k| ≤ threshold`.
#[inline(always)]
fn inverse_times(a: &[[f64; BLOCK]; 9], x: &[[f64; BLOCK]; 3], threshold: f64) -> [[f64; BLOCK]; 3] {
    let mut y = [[0.0f64; BLOCK]; 3];
    for k in 0..BLOCK {
        let e = |r: usize| a[r][k];
        let adj = [
            e(4) * e(8) - e(5) * e(7),
            e(2) * e(7) - e(1) * e(8),
            e(1) * e(5) - e(2) * e(4),
            e(5) * e(6) - e(3) * e(8),
            e(0) * e(8) - e(2) * e(6),
            e(2) * e(3) - e(0) * e(5),
            e(3) * e(7) - e(4) * e(6),
            e(1) * e(6) - e(0) * e(7),
            e(0) * e(4) - e(1) * e(3),
        ];
        let det = e(0) * adj[0] + e(1) * adj[3] + e(2) * adj[6];
        // `>`, so that a NaN determinant (impossible with finite inputs) also gives 0.
        let ok = det.abs() > threshold;
        let inv = 1.0 / det;
        for i in 0..3 {
            let v = (adj[3 * i] * x[0][k] + adj[3 * i + 1] * x[1][k] + adj[3 * i + 2] * x[2][k]) * inv;
            y[i][k] = if ok { v } else { 0.0 };
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The dense reference: `A_v = Σ_b w_vb A_b` over every bone, `M_p A_v⁻¹ u_v` with the
    /// inverse from Gauss-Jordan elimination with partial pivoting (independent of the
    /// adjugate), 0 where `|det| ≤ 10⁻¹² s³`.
    fn dense(w: &[f64], n: usize, m: usize, t: &[f64], u: &[f64], post: &[[f64; 9]]) -> Vec<f64> {
        let s = (0..m)
            .flat_map(|b| (0..3).flat_map(move |i| (0..3).map(move |j| (b, i, j))))
            .fold(0.0f64, |acc, (b, i, j)| acc.max(t[12 * b + 4 * i + j].abs()));
        let mut out = vec![0.0; 3 * n];
        for v in 0..n {
            let mut a = [[0.0f64; 3]; 3];
            for b in 0..m {
                for i in 0..3 {
                    for j in 0..3 {
                        a[i][j] += w[v * m + b] * t[12 * b + 4 * i + j];
                    }
                }
            }
            let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
                - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
            if det.abs() <= 1e-12 * s * s * s {
                continue;
            }
            let mut aug = [[0.0f64; 4]; 3];
            for i in 0..3 {
                aug[i][..3].copy_from_slice(&a[i]);
                aug[i][3] = u[3 * v + i];
            }
            for c in 0..3 {
                let p = (c..3)
                    .max_by(|&x, &y| aug[x][c].abs().total_cmp(&aug[y][c].abs()))
                    .unwrap();
                aug.swap(c, p);
                for r in 0..3 {
                    if r != c {
                        let f = aug[r][c] / aug[c][c];
                        for k in c..4 {
                            aug[r][k] -= f * aug[c][k];
                        }
                    }
                }
            }
            let y: Vec<f64> = (0..3).map(|i| aug[i][3] / aug[i][i]).collect();
            let mp = &post[if post.len() > 1 && v >= n / 2 { 1 } else { 0 }];
            for i in 0..3 {
                out[3 * v + i] = (0..3).map(|j| mp[3 * i + j] * y[j]).sum();
            }
        }
        out
    }

    /// Random normalised sparse weights (1-4 bones per vertex), random transforms, bone 0
    /// scaled to zero and the vertices weighted to it alone singular.
    fn case(n: usize, m: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut st = seed;
        let mut w = vec![0.0; n * m];
        for v in 0..n {
            let k = 1 + (lcg(&mut st) * 4.0) as usize;
            for _ in 0..k {
                let b = (lcg(&mut st) * m as f64) as usize % m;
                w[v * m + b] += 0.05 + lcg(&mut st);
            }
            let sum: f64 = w[v * m..(v + 1) * m].iter().sum();
            w[v * m..(v + 1) * m].iter_mut().for_each(|x| *x /= sum);
        }
        // The first vertices: bone 0 alone, which the transforms scale to zero.
        for v in 0..3 {
            w[v * m..(v + 1) * m].fill(0.0);
            w[v * m] = 1.0;
        }
        let mut t: Vec<f64> = (0..12 * m).map(|_| 2.0 * lcg(&mut st) - 1.0).collect();
        for b in 0..m {
            for i in 0..3 {
                t[12 * b + 5 * i] += 2.0; // diagonally dominant: well conditioned blends
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                t[4 * i + j] = 0.0;
            }
        }
        let u = (0..3 * n).map(|_| 2.0 * lcg(&mut st) - 1.0).collect();
        (w, t, u)
    }

    fn max_rel(a: &[f64], b: &[f64]) -> f64 {
        let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
    }

    #[test]
    fn matches_the_dense_computation() {
        let (n, m) = (500, 13);
        let (w, t, u) = case(n, m, 7);
        let pb = PullBack::new(&w, n, m).unwrap();
        let mut d = vec![f64::NAN; 3 * n];
        pb.apply(&t, &u, &mut d).unwrap();
        let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let want = dense(&w, n, m, &t, &u, &[id]);
        assert!(max_rel(&d, &want) <= 1e-12, "relative error {:e}", max_rel(&d, &want));
        assert!(
            d[..9].iter().all(|&x| x == 0.0),
            "singular blends give 0: {:?}",
            &d[..9]
        );
        assert!(d[9..].iter().any(|&x| x != 0.0));
        // A well-conditioned vertex really is pulled back: A_v d_v = u_v.
        let v = 10;
        for i in 0..3 {
            let av: f64 = (0..3)
                .map(|j| (0..m).map(|b| w[v * m + b] * t[12 * b + 4 * i + j]).sum::<f64>() * d[3 * v + j])
                .sum();
            assert!((av - u[3 * v + i]).abs() < 1e-12);
        }
    }

    #[test]
    fn parts_multiply_by_their_matrix() {
        let (n, m) = (200, 5);
        let (w, t, u) = case(n, m, 11);
        let post = [
            [0.5, 0.1, 0.0, -0.2, 2.0, 0.3, 0.0, 0.4, 1.5],
            [0.0, 0.0, 100.0, 0.0, -100.0, 0.0, 100.0, 0.0, 0.0],
        ];
        let flat: Vec<f64> = post.iter().flatten().copied().collect();
        let pb = PullBack::new(&w, n, m)
            .unwrap()
            .with_parts(&[n / 2, n - n / 2], &flat)
            .unwrap();
        let mut d = vec![0.0; 3 * n];
        pb.apply(&t, &u, &mut d).unwrap();
        let want = dense(&w, n, m, &t, &u, &post);
        assert!(max_rel(&d, &want) <= 1e-12, "relative error {:e}", max_rel(&d, &want));
        let mut again = vec![0.0; 3 * n];
        pb.apply(&t, &u, &mut again).unwrap();
        assert_eq!(d, again, "deterministic");
    }

    #[test]
    fn refuses_bad_input() {
        let (n, m) = (20, 3);
        let (mut w, mut t, mut u) = case(n, m, 3);
        assert!(PullBack::new(&w[1..], n, m).is_err());
        assert!(PullBack::new(&w, 0, m).is_err());
        w[4] = -0.5;
        let e = PullBack::new(&w, n, m).unwrap_err().to_string();
        assert!(e.contains("vertex 1") && e.contains("negative"), "{e}");
        w[4] = f64::NAN;
        assert!(matches!(
            PullBack::new(&w, n, m),
            Err(OvertoneError::Input(InputError::NonFinite { .. }))
        ));
        w[4] = 0.0;
        let pb = PullBack::new(&w, n, m).unwrap();
        assert!(pb.clone().with_parts(&[n - 1], &[0.0; 9]).is_err());
        assert!(pb.clone().with_parts(&[n], &[0.0; 8]).is_err());
        assert!(pb.clone().with_parts(&[n], &[f64::INFINITY; 9]).is_err());
        let mut d = vec![7.0; 3 * n];
        assert!(pb.apply(&t[..12], &u, &mut d).is_err());
        assert!(pb.apply(&t, &u[..3], &mut d).is_err());
        assert!(pb.apply(&t, &u, &mut d[..3]).is_err());
        t[5] = f64::INFINITY;
        let e = pb.apply(&t, &u, &mut d).unwrap_err().to_string();
        assert!(e.contains("transforms") && e.contains("row 0"), "{e}");
        t[5] = 1.0;
        u[7] = f64::NAN;
        assert!(matches!(
            pb.apply(&t, &u, &mut d),
            Err(OvertoneError::Input(InputError::NonFinite { .. }))
        ));
        assert!(d.iter().all(|&x| x == 7.0), "the output is untouched on error");
    }

    /// The AVX2 build of the loop (taken by `apply` where the CPU has it) and the baseline one
    /// agree bit for bit.
    #[test]
    fn every_build_gives_the_same_bits() {
        let (n, m) = (301, 9);
        let (w, t, u) = case(n, m, 13);
        let pb = PullBack::new(&w, n, m)
            .unwrap()
            .with_parts(&[100, 201], &[0.5; 18])
            .unwrap();
        let (mut a, mut b) = (vec![0.0; 3 * n], vec![1.0; 3 * n]);
        pb.apply(&t, &u, &mut a).unwrap();
        pb.apply_parts(&t, &u, &mut b, singular_threshold(&t));
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn all_bones_zero_gives_zero() {
        let (n, m) = (10, 2);
        let (w, _, u) = case(n, m, 5);
        let pb = PullBack::new(&w, n, m).unwrap();
        let mut d = vec![1.0; 3 * n];
        pb.apply(&[0.0; 24], &u, &mut d).unwrap();
        assert!(d.iter().all(|&x| x == 0.0));
    }
}
