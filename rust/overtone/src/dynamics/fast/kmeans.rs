//! Deterministic k-means (k-means++ seeding with a fixed seed, then Lloyd iterations).

use rayon::prelude::*;

use crate::error::{OvertoneError, Result};

/// Lloyd iterations cap (scipy's `kmeans2`, which the seed's clustering uses, runs 10). The
/// clusters only group elements for shared rotations; the last few Lloyd sweeps move a handful
/// of elements between neighbouring clusters.
const MAX_ITERATIONS: usize = 30;

/// A clustering of points.
#[derive(Clone, Debug, PartialEq)]
pub struct KMeans {
    /// Cluster of each point.
    pub labels: Vec<usize>,
    /// Centroids, `k × f` row-major.
    pub centroids: Vec<f64>,
    /// Lloyd iterations taken.
    pub iterations: usize,
}

/// SplitMix64: a small, well-mixed generator, so seeding does not depend on any crate's
/// random stream.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Clusters `points` (`m × f`, row-major) into `k` groups minimising the within-cluster sum of
/// squared distances: k-means++ seeding from `seed`, then Lloyd iterations until no label changes
/// (at most 30). Ties go to the lower cluster index; an empty cluster is re-seeded with the point
/// farthest from its centroid. The result depends only on the input and the seed. Each sweep
/// checks this thread's [`crate::progress`] scope for a cancellation.
pub fn kmeans(points: &[f64], f: usize, k: usize, seed: u64) -> Result<KMeans> {
    let m = if f == 0 { 0 } else { points.len() / f };
    if k == 0 || k > m {
        return Err(OvertoneError::setting(
            "clusters",
            k,
            format!("must be between 1 and the number of elements ({m})"),
        ));
    }
    let point = |i: usize| &points[i * f..(i + 1) * f];
    let mut state = seed;
    let mut centroids = Vec::with_capacity(k * f);
    let first = (splitmix(&mut state) % m as u64) as usize;
    centroids.extend_from_slice(point(first));
    let mut d2: Vec<f64> = (0..m).map(|i| dist2(point(i), point(first))).collect();
    for _ in 1..k {
        let total: f64 = d2.iter().sum();
        let pick = if total > 0.0 {
            let target = (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64 * total;
            let mut acc = 0.0;
            let mut chosen = m - 1;
            for (i, &w) in d2.iter().enumerate() {
                acc += w;
                if acc > target {
                    chosen = i;
                    break;
                }
            }
            chosen
        } else {
            (splitmix(&mut state) % m as u64) as usize
        };
        centroids.extend_from_slice(point(pick));
        let c = centroids.len() / f - 1;
        for i in 0..m {
            d2[i] = d2[i].min(dist2(point(i), &centroids[c * f..(c + 1) * f]));
        }
    }
    let mut labels = vec![usize::MAX; m];
    let mut iterations = 0;
    loop {
        crate::progress::check()?;
        crate::progress::report(iterations as f64 / MAX_ITERATIONS as f64, "rotation clusters (k-means)");
        iterations += 1;
        let new: Vec<usize> = (0..m)
            .into_par_iter()
            .map(|i| {
                let p = point(i);
                let mut best = (f64::INFINITY, 0);
                for c in 0..k {
                    let dd = dist2(p, &centroids[c * f..(c + 1) * f]);
                    if dd < best.0 {
                        best = (dd, c);
                    }
                }
                best.1
            })
            .collect();
        let changed = new != labels;
        labels = new;
        if !changed || iterations >= MAX_ITERATIONS {
            break;
        }
        let mut sums = vec![0.0; k * f];
        let mut counts = vec![0usize; k];
        for (i, &c) in labels.iter().enumerate() {
            counts[c] += 1;
            for (s, x) in sums[c * f..(c + 1) * f].iter_mut().zip(point(i)) {
                *s += x;
            }
        }
        for c in 0..k {
            if counts[c] > 0 {
                for j in 0..f {
                    centroids[c * f + j] = sums[c * f + j] / counts[c] as f64;
                }
            } else {
                let far = (0..m)
                    .max_by(|&a, &b| {
                        let da = dist2(point(a), &centroids[labels[a] * f..(labels[a] + 1) * f]);
                        let db = dist2(point(b), &centroids[labels[b] * f..(labels[b] + 1) * f]);
                        da.total_cmp(&db).then(b.cmp(&a))
                    })
                    .unwrap_or(0);
                centroids[c * f..(c + 1) * f].copy_from_slice(&points[far * f..(far + 1) * f]);
            }
        }
    }
    Ok(KMeans {
        labels,
        centroids,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three well-separated blobs are recovered exactly, and the result is reproducible.
    #[test]
    fn separates_blobs_deterministically() {
        let mut pts = Vec::new();
        for c in 0..3 {
            for i in 0..20 {
                pts.extend([10.0 * c as f64 + 0.01 * i as f64, -5.0 * c as f64]);
            }
        }
        let a = kmeans(&pts, 2, 3, 1).unwrap();
        let b = kmeans(&pts, 2, 3, 1).unwrap();
        assert_eq!(a, b);
        for c in 0..3 {
            let l = a.labels[c * 20];
            assert!(a.labels[c * 20..(c + 1) * 20].iter().all(|&x| x == l));
        }
        let mut distinct = a.labels.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3);
        assert!(kmeans(&pts, 2, 61, 1).is_err());
        assert!(kmeans(&pts, 2, 0, 1).is_err());
    }
}
