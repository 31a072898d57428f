//! Deterministic k-means (k-means++ seeding with a fixed seed, then Lloyd iterations).

use rayon::prelude::*;

use crate::error::{OvertoneError, Result};

/// Lloyd iterations cap (scipy's `kmeans2`, which the seed's clustering uses, runs 10). The
/// clusters only group elements for shared rotations; the last few Lloyd sweeps move a handful
/// of elements between neighbouring clusters.
const MAX_ITERATIONS: usize = 30;

/// Relative margin on Hamerly's bounds: far above the round-off of a distance between
/// features (`~1e-15` relative), so pruning never keeps a label a full scan would change.
const PRUNE_MARGIN: f64 = 1e-9;

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

/// k-means++ seeding (`k × f` centroids, row-major) of `points` (`m × f`, `1 ≤ k ≤ m`): the
/// first centroid a point drawn uniformly from `seed`, each next one a point drawn with
/// probability proportional to its squared distance to the nearest centroid so far.
fn seeding(points: &[f64], f: usize, k: usize, seed: u64) -> Vec<f64> {
    let m = points.len() / f;
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
    centroids
}

/// The Lloyd update: each centroid (`k × f`, row-major) moves to the mean of the points
/// (`m × f`) labelled with it; an empty cluster is re-seeded with the point farthest from its
/// centroid (clusters in index order, so a re-seed sees the centroids already moved).
fn update_centroids(points: &[f64], f: usize, labels: &[usize], centroids: &mut [f64]) {
    let (m, k) = (labels.len(), centroids.len() / f);
    let point = |i: usize| &points[i * f..(i + 1) * f];
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
    let mut centroids = seeding(points, f, k, seed);
    // Lloyd iterations with Hamerly's bounds (Hamerly 2010): per point an upper bound `upper`
    // on the distance to its centroid and a lower bound `lower` on the distance to every other
    // centroid, both moved by how far the centroids moved. A point whose upper bound is below
    // both its lower bound and half the distance from its centroid to the nearest other one
    // keeps its label without a scan; the bounds carry a relative margin of `PRUNE_MARGIN`, so
    // a skipped point is one the full scan would give the same label, and the labels, the
    // centroids and the iteration count are those of plain Lloyd.
    let mut labels = vec![usize::MAX; m];
    let mut upper = vec![f64::INFINITY; m];
    let mut lower = vec![0.0f64; m];
    let mut half_gap = vec![0.0; k];
    let mut iterations = 0;
    loop {
        crate::progress::check()?;
        crate::progress::report(iterations as f64 / MAX_ITERATIONS as f64, "rotation clusters (k-means)");
        iterations += 1;
        let centroid = |c: usize| &centroids[c * f..(c + 1) * f];
        let changed = labels
            .par_iter_mut()
            .zip(upper.par_iter_mut())
            .zip(lower.par_iter_mut())
            .enumerate()
            .map(|(i, ((label, up), low))| {
                let p = point(i);
                if *label != usize::MAX {
                    let bound = (*low).max(half_gap[*label]) * (1.0 - PRUNE_MARGIN);
                    if *up < bound {
                        return false;
                    }
                    *up = dist2(p, centroid(*label)).sqrt() * (1.0 + PRUNE_MARGIN);
                    if *up < bound {
                        return false;
                    }
                }
                let (mut best, mut second) = ((f64::INFINITY, 0), f64::INFINITY);
                for c in 0..k {
                    let dd = dist2(p, centroid(c));
                    if dd < best.0 {
                        second = best.0;
                        best = (dd, c);
                    } else if dd < second {
                        second = dd;
                    }
                }
                *up = best.0.sqrt() * (1.0 + PRUNE_MARGIN);
                *low = second.sqrt() * (1.0 - PRUNE_MARGIN);
                let moved = *label != best.1;
                *label = best.1;
                moved
            })
            .reduce(|| false, |a, b| a || b);
        if !changed || iterations >= MAX_ITERATIONS {
            break;
        }
        let previous = centroids.clone();
        update_centroids(points, f, &labels, &mut centroids);
        // How far each centroid moved; the bounds move by as much (the lower one by the
        // largest move among the other centroids).
        let shift: Vec<f64> = (0..k)
            .map(|c| dist2(&previous[c * f..(c + 1) * f], &centroids[c * f..(c + 1) * f]).sqrt())
            .collect();
        let (mut first, mut runner) = ((0.0, usize::MAX), 0.0);
        for (c, &s) in shift.iter().enumerate() {
            if s > first.0 {
                runner = first.0;
                first = (s, c);
            } else if s > runner {
                runner = s;
            }
        }
        upper
            .par_iter_mut()
            .zip(lower.par_iter_mut())
            .zip(labels.par_iter())
            .for_each(|((up, low), &a)| {
                *up = (*up + shift[a]) * (1.0 + PRUNE_MARGIN);
                // The margin is taken on the operands, not on the difference: `low − s` can be
                // far smaller than the round-off of `low` itself. (`low` is infinite only with
                // one cluster, which has no other centroid.)
                let s = if a == first.1 { runner } else { first.0 };
                if low.is_finite() {
                    *low = *low - s - PRUNE_MARGIN * (low.abs() + s);
                }
            });
        half_gap.par_iter_mut().enumerate().for_each(|(c, g)| {
            let own = &centroids[c * f..(c + 1) * f];
            let nearest = (0..k)
                .filter(|&o| o != c)
                .map(|o| dist2(own, &centroids[o * f..(o + 1) * f]))
                .fold(f64::INFINITY, f64::min);
            *g = 0.5 * nearest.sqrt();
        });
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

    /// Plain Lloyd (every point scanned against every centroid each sweep), with the same tie
    /// rule and stopping rule as [`kmeans`] and its seeding and centroid update: only the
    /// assignment, the part the bounds prune, is written out here.
    fn lloyd_reference(points: &[f64], f: usize, k: usize, seed: u64) -> KMeans {
        let m = points.len() / f;
        let point = |i: usize| &points[i * f..(i + 1) * f];
        // The seeding is [`kmeans`]'s own.
        let mut centroids = seeding(points, f, k, seed);
        let mut labels = vec![usize::MAX; m];
        let mut iterations = 0;
        loop {
            iterations += 1;
            let new: Vec<usize> = (0..m)
                .map(|i| {
                    let mut best = (f64::INFINITY, 0);
                    for c in 0..k {
                        let dd = dist2(point(i), &centroids[c * f..(c + 1) * f]);
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
            update_centroids(points, f, &labels, &mut centroids);
        }
        KMeans {
            labels,
            centroids,
            iterations,
        }
    }

    /// Hamerly's pruning changes no label: on uniform, clustered and tied (repeated) points the
    /// labels, centroids and iteration counts equal plain Lloyd's exactly.
    #[test]
    fn pruned_lloyd_equals_plain_lloyd() {
        let mut state = 7u64;
        let mut uniform = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|_| (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64)
                .collect()
        };
        let (m, f) = (3000, 6);
        let flat = uniform(m * f);
        // Blobs: 12 centres, points scattered 0.02 around them.
        let centres = uniform(12 * f);
        let jitter = uniform(m * f);
        let blobs: Vec<f64> = (0..m * f)
            .map(|i| centres[((i / f) % 12) * f + i % f] + 0.02 * (jitter[i] - 0.5))
            .collect();
        // Ties: every point repeated four times, on a coarse grid of values.
        let grid: Vec<f64> = flat.iter().map(|x| (x * 4.0).floor()).collect();
        let tied: Vec<f64> = grid[..m / 4 * f]
            .chunks(f)
            .flat_map(|p| p.iter().chain(p).chain(p).chain(p).copied().collect::<Vec<_>>())
            .collect();
        for (name, pts) in [("uniform", &flat), ("blobs", &blobs), ("tied", &tied)] {
            for k in [1, 2, 12, 100, 500] {
                let fast = kmeans(pts, f, k, 11).unwrap();
                let plain = lloyd_reference(pts, f, k, 11);
                assert_eq!(fast.labels, plain.labels, "{name}, k = {k}: labels");
                assert_eq!(fast.centroids, plain.centroids, "{name}, k = {k}: centroids");
                assert_eq!(fast.iterations, plain.iterations, "{name}, k = {k}: iterations");
            }
        }
    }

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
