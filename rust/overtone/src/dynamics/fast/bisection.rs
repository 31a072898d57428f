//! Divisive clustering: a partition of points into `k` groups by repeatedly bisecting the
//! group with the largest spread.
//!
//! Unlike k-means, the partition moves only where the input does: a point changes group only
//! when its projection crosses a cut (or two candidate cuts, two spreads or a group's two
//! largest variances tie), and the change stays below that cut. k-means is not continuous in
//! its input even from a fixed start: a point crossing a Voronoi boundary moves two
//! centroids, which moves other boundaries, and the Lloyd iterations carry the change through
//! the whole partition. Cutting the largest spread first (not every group in halves) puts the
//! groups where the points vary, as k-means does; cutting across the principal direction (not
//! a coordinate axis) makes the groups independent of the basis the features come in, as
//! k-means' distances are (principal-direction divisive partitioning, Boley 1998).

use nalgebra::DMatrix;

use crate::error::{OvertoneError, Result};

/// Values within this fraction of each other (spreads, cut costs) or of a group's range
/// (projections) count as equal, so that round-off (the same body in another placement) does
/// not decide between exactly tied choices of a symmetric body.
const TIE: f64 = 1e-6;

/// Labels (`m` entries in `0..k`) of a partition of `points` (`m × f`, row-major,
/// `1 ≤ k ≤ m`) into `k` groups. Starting from one group, the group with the largest sum of
/// squared distances to its mean (ties to the lower label) is split, `k − 1` times: its points
/// are ordered by their projection on the principal direction of their covariance (equal
/// projections by point index) and cut where the two parts' sums of squared distances to
/// their means add up least (ties to the earlier cut). Ties are counted to a relative `1e-6`,
/// so round-off (a host's float32 data, 1e-7) never decides them. The first part keeps the label, the
/// second takes the next one. Every group is non-empty. `O(n (f² + log n))` per cut of `n`
/// points.
pub(crate) fn bisection(points: &[f64], f: usize, k: usize) -> Result<Vec<usize>> {
    let m = points.len().checked_div(f).unwrap_or(0);
    if k == 0 || k > m {
        return Err(OvertoneError::setting(
            "clusters",
            k,
            format!("must be between 1 and the number of elements ({m})"),
        ));
    }
    let mut groups = vec![Group {
        members: (0..m).collect(),
        spread: running_spreads(points, f, 0..m)[m - 1],
    }];
    while groups.len() < k {
        // The largest spread among the groups that can be split (two or more points; with
        // k ≤ m one always exists).
        let Some(target) = (0..groups.len()).filter(|&g| groups[g].members.len() > 1).fold(
            None,
            |best: Option<usize>, g| match best {
                Some(b) if groups[b].spread >= groups[g].spread * (1.0 - TIE) => Some(b),
                _ => Some(g),
            },
        ) else {
            return Err(OvertoneError::setting(
                "clusters",
                k,
                format!("the points allow only {} groups", groups.len()),
            ));
        };
        let (low, high) = cut(points, f, &groups[target].members);
        groups[target] = low;
        groups.push(high);
    }
    let mut labels = vec![0; m];
    for (g, group) in groups.iter().enumerate() {
        for &i in &group.members {
            labels[i] = g;
        }
    }
    Ok(labels)
}

/// A group of points and its spread (sum of squared distances to its mean).
struct Group {
    members: Vec<usize>,
    spread: f64,
}

/// The spreads of the first 1, 2, …, n points of `order` (sums of squared distances to their
/// mean), from running sums: `Σ|x|² − |Σx|²/p`.
fn running_spreads(points: &[f64], f: usize, order: impl ExactSizeIterator<Item = usize>) -> Vec<f64> {
    let mut sum = vec![0.0; f];
    let mut squares = 0.0;
    let mut out = Vec::with_capacity(order.len());
    for (p, i) in order.enumerate() {
        for (s, x) in sum.iter_mut().zip(&points[i * f..(i + 1) * f]) {
            *s += x;
            squares += x * x;
        }
        out.push((squares - sum.iter().map(|s| s * s).sum::<f64>() / (p + 1) as f64).max(0.0));
    }
    out
}

/// Cuts `members` (two or more points) in two non-empty groups along their principal
/// direction, where the groups' spreads add up least.
fn cut(points: &[f64], f: usize, members: &[usize]) -> (Group, Group) {
    let n = members.len();
    let direction = principal_direction(points, f, members);
    let along = |i: usize| -> f64 {
        points[i * f..(i + 1) * f]
            .iter()
            .zip(&direction)
            .map(|(x, d)| x * d)
            .sum()
    };
    // Projections equal to round-off (a symmetric body has many) order by index: keys are
    // counted in steps of `TIE` times the range.
    let projections: Vec<f64> = members.iter().map(|&i| along(i)).collect();
    let (lo, hi) = projections
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let step = (TIE * (hi - lo)).max(f64::MIN_POSITIVE);
    let mut keyed: Vec<(i64, usize)> = members
        .iter()
        .zip(&projections)
        .map(|(&i, &x)| (((x - lo) / step).round() as i64, i))
        .collect();
    keyed.sort_unstable();
    let mut low: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    let head = running_spreads(points, f, low.iter().copied());
    let tail = running_spreads(points, f, low.iter().rev().copied());
    // Cut after p points (1 ≤ p ≤ n − 1): head[p − 1] + tail[n − p − 1]; the earliest of the
    // cuts within `TIE` of the least.
    let cost = |p: usize| head[p - 1] + tail[n - p - 1];
    let least = (1..n).map(cost).fold(f64::INFINITY, f64::min);
    let best = (1..n).find(|&p| cost(p) <= least + TIE * least.abs()).unwrap_or(1);
    let high = low.split_off(best);
    (
        Group {
            members: low,
            spread: head[best - 1],
        },
        Group {
            members: high,
            spread: tail[n - best - 1],
        },
    )
}

/// The unit eigenvector (`f` entries) of the largest eigenvalue of the covariance of the
/// points `part`, signed so that its largest-magnitude component (the first of equal ones) is
/// positive. Rotating the
/// feature space rotates it with the points, so the cut does not depend on the basis the
/// features come in (an eigensolver's basis of a repeated eigenvalue is arbitrary).
fn principal_direction(points: &[f64], f: usize, part: &[usize]) -> Vec<f64> {
    let n = part.len() as f64;
    let mut mean = vec![0.0; f];
    for &i in part {
        for (s, x) in mean.iter_mut().zip(&points[i * f..(i + 1) * f]) {
            *s += x;
        }
    }
    mean.iter_mut().for_each(|s| *s /= n);
    let mut covariance = DMatrix::<f64>::zeros(f, f);
    let mut centred = vec![0.0; f];
    for &i in part {
        for ((c, x), m) in centred.iter_mut().zip(&points[i * f..(i + 1) * f]).zip(&mean) {
            *c = x - m;
        }
        for a in 0..f {
            for b in 0..=a {
                covariance[(a, b)] += centred[a] * centred[b];
            }
        }
    }
    for a in 0..f {
        for b in 0..a {
            covariance[(b, a)] = covariance[(a, b)];
        }
    }
    let eigen = covariance.symmetric_eigen();
    let top = (1..f).fold(0, |best, j| {
        if eigen.eigenvalues[j] > eigen.eigenvalues[best] {
            j
        } else {
            best
        }
    });
    let mut v: Vec<f64> = eigen.eigenvectors.column(top).iter().copied().collect();
    let largest = v.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let lead = (0..f).find(|&j| v[j].abs() >= largest * (1.0 - TIE)).unwrap_or(0);
    if v[lead] < 0.0 {
        v.iter_mut().for_each(|x| *x = -*x);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform points in `[0, 1)^f` from a fixed linear congruential stream.
    fn uniform(m: usize, f: usize, mut state: u64) -> Vec<f64> {
        (0..m * f)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    /// Groups of each labelling `labels` with `k` groups: the member lists.
    fn members(labels: &[usize], k: usize) -> Vec<Vec<usize>> {
        let mut g = vec![Vec::new(); k];
        for (i, &l) in labels.iter().enumerate() {
            g[l].push(i);
        }
        g
    }

    /// Every label in `0..k` is used, for any `k` up to the number of points, repeated
    /// points included (a group of equal points has no spread but must still be split when
    /// `k` asks for it).
    #[test]
    fn every_group_is_non_empty() {
        let (m, f) = (300, 4);
        let pts = uniform(m, f, 3);
        // Each point three times.
        let tied: Vec<f64> = pts[..100 * f].chunks(f).flat_map(|p| [p, p, p].concat()).collect();
        for (name, set) in [("uniform", &pts), ("tied", &tied)] {
            for k in [1, 2, 3, 7, 100, 299, 300] {
                let labels = bisection(set, f, k).unwrap();
                assert_eq!(labels.len(), m, "{name}, k = {k}");
                for (g, list) in members(&labels, k).iter().enumerate() {
                    assert!(!list.is_empty(), "{name}, k = {k}: group {g} is empty");
                }
            }
        }
    }

    /// Two blobs on a line, one 0.1 wide with 900 points, one 1.0 wide with 100: the groups go
    /// where the spread is (most of the 10 to the wide blob, though it has a tenth of the
    /// points), each group is an interval of the line, and no group spans both blobs.
    #[test]
    fn groups_follow_the_spread() {
        let f = 2;
        let u = uniform(1000, f, 5);
        let pts: Vec<f64> = u
            .chunks(f)
            .enumerate()
            .flat_map(|(i, p)| {
                let x = if i < 900 { 0.1 * p[0] } else { 5.0 + p[0] };
                [x, 1e-3 * p[1]]
            })
            .collect();
        let k = 10;
        let groups = members(&bisection(&pts, f, k).unwrap(), k);
        let mut spans: Vec<(f64, f64)> = groups
            .iter()
            .map(|g| {
                let xs = g.iter().map(|&i| pts[i * f]);
                (
                    xs.clone().fold(f64::INFINITY, f64::min),
                    xs.fold(f64::NEG_INFINITY, f64::max),
                )
            })
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            assert!(w[0].1 < w[1].0, "groups overlap along the line: {spans:?}");
        }
        let wide = spans.iter().filter(|s| s.0 >= 5.0).count();
        let narrow = spans.iter().filter(|s| s.1 <= 0.1).count();
        assert_eq!(wide + narrow, k, "a group spans both blobs: {spans:?}");
        assert!(wide >= 7, "{wide} of {k} groups on the wide blob: {spans:?}");
    }

    /// The partition (as sets: labels may be swapped between the two halves of a cut) of
    /// `labels`, each group as the lowest point index it holds.
    fn canonical(labels: &[usize], k: usize) -> Vec<usize> {
        let mut first = vec![usize::MAX; k];
        for (i, &l) in labels.iter().enumerate() {
            first[l] = first[l].min(i);
        }
        labels.iter().map(|&l| first[l]).collect()
    }

    /// Rotating the feature space (a product of plane rotations, as an eigensolver's choice of
    /// basis for a repeated eigenvalue does) gives the same groups.
    #[test]
    fn unchanged_by_a_rotation_of_the_features() {
        let (m, f) = (2000, 6);
        let mut pts = uniform(m, f, 13);
        // Stretch the coordinates unequally, so every cut has a clear principal direction.
        for p in pts.chunks_mut(f) {
            for (j, x) in p.iter_mut().enumerate() {
                *x *= 1.0 + j as f64;
            }
        }
        let mut turned = pts.clone();
        for (a, b, angle) in [(0usize, 5usize, 0.7f64), (1, 3, -1.1), (2, 4, 0.4), (0, 1, 2.0)] {
            let (c, s) = (angle.cos(), angle.sin());
            for p in turned.chunks_mut(f) {
                let (x, y) = (p[a], p[b]);
                p[a] = c * x - s * y;
                p[b] = s * x + c * y;
            }
        }
        for k in [2, 10, 100] {
            let (one, two) = (bisection(&pts, f, k).unwrap(), bisection(&turned, f, k).unwrap());
            assert_eq!(canonical(&one, k), canonical(&two, k), "k = {k}");
        }
    }

    /// A relative perturbation of 1e-9 (far above double round-off, far below the gap between
    /// neighbouring points at a split) changes no label.
    #[test]
    fn unchanged_by_round_off() {
        let (m, f) = (5000, 8);
        let pts = uniform(m, f, 9);
        let noise = uniform(m, f, 11);
        let moved: Vec<f64> = pts
            .iter()
            .zip(&noise)
            .map(|(x, e)| x * (1.0 + 2e-9 * (e - 0.5)))
            .collect();
        for k in [10, 100, 500] {
            assert_eq!(
                bisection(&pts, f, k).unwrap(),
                bisection(&moved, f, k).unwrap(),
                "k = {k}"
            );
        }
    }

    #[test]
    fn rejects_zero_or_too_many_groups() {
        let pts = uniform(10, 2, 1);
        assert!(bisection(&pts, 2, 0).is_err());
        assert!(bisection(&pts, 2, 11).is_err());
        assert!(bisection(&[], 0, 1).is_err());
    }
}
