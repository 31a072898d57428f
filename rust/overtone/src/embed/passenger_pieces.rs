//! Layered pieces (clothing, hair cards, eyes, teeth, glasses) ride in the lattice of the body
//! they cover instead of getting a lattice of their own.
//!
//! A separate surface piece normally gets its own copy of the lattice cubes it occupies (see
//! [`super::embed_surface`]), so separate solids (the parts of a robot) are not glued. For an
//! open shell over a body (a shirt) that copy is a sheet of cubes one or two cells thick, held
//! by nothing but the rig: the layered avatar of issue 31 had its outfit move 3.7x the avatar's
//! height while the body under it did not move. Such a piece is a *passenger*: its vertices
//! are embedded in its *host*'s lattice (the cube of the host that holds them, or the host cube
//! nearest to them), so it moves with the body's secondary motion and adds no degrees of
//! freedom.
//!
//! The rule. Pieces are visited from the largest (most occupied cubes; ties: lower index). The
//! first is a host. For a later piece `p`, let `h` be the host (so far) with the most of `p`'s
//! vertices within [`PASSENGER_REACH`] cubes (Chebyshev distance) of one of its cubes. When at
//! least [`PASSENGER_NEAR_SHARE`] of them are, `p` is a passenger of `h` if
//! * `p` is open (has boundary edges) and either at least half of its cubes are `h`'s or it is
//!   at most half `h`'s size: a shell or a card, with no volume of its own to simulate (a
//!   shirt, whose winding-number inside is the torso; shorts; hair cards), or
//! * at least half of `p`'s cubes are `h`'s cubes and `p` is at most half `h`'s size: it
//!   overlaps the body (eyes, teeth); two solids of one size that overlap stay apart, and a
//!   closed piece does not ride this way in an open one (a body inside a long robe, whose
//!   winding-number inside holds the body, keeps its own lattice), or
//! * `p` occupies at most an eighth as many cubes as `h`: a small accessory near the body
//!   (glasses, buttons, a robot's joint balls).
//!
//! Otherwise it is a host itself: a separate solid of its own size (a robot's limb) keeps its
//! own lattice.

use std::collections::HashMap;

use crate::embed::lattice::CubeGrid;

/// Cubes (Chebyshev distance) within which a passenger's vertices must lie from its host's.
pub(crate) const PASSENGER_REACH: usize = 2;
/// Share of a piece's vertices that must lie within reach of its host (a hair card hangs
/// partly beyond it).
pub(crate) const PASSENGER_NEAR_SHARE: f64 = 0.5;

/// Per piece, the host piece whose lattice it rides in (`None`: it keeps its own lattice).
///
/// * `vertices`: `n × 3` row-major; `piece_tris[p]`: piece `p`'s triangles;
/// * `occupied[p]`: the cubes piece `p` occupies (`(cube index, touches the surface)`).
pub(crate) fn passenger_hosts(
    grid: &CubeGrid,
    vertices: &[f64],
    piece_tris: &[Vec<usize>],
    occupied: &[Vec<(usize, bool)>],
) -> Vec<Option<usize>> {
    let n_pieces = piece_tris.len();
    let mut hosts_of_piece = vec![None; n_pieces];
    let mut order: Vec<usize> = (0..n_pieces).collect();
    order.sort_by(|&a, &b| occupied[b].len().cmp(&occupied[a].len()).then(a.cmp(&b)));
    // Cube -> host pieces occupying it.
    let mut owners: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut hosts: Vec<usize> = Vec::new();
    let reach = PASSENGER_REACH as isize;
    // Whether each piece has holes (boundary edges), counted once per piece.
    let open: Vec<bool> = piece_tris
        .iter()
        .map(|t| crate::mesh::surface_defects(t).0 > 0)
        .collect();
    for &p in &order {
        if piece_tris[p].is_empty() {
            continue;
        }
        let chosen = if hosts.is_empty() {
            None
        } else {
            let mut piece_vertices = piece_tris[p].clone();
            piece_vertices.sort_unstable();
            piece_vertices.dedup();
            // Per host, how many of the piece's vertices lie within reach of its cubes.
            let mut near: HashMap<usize, usize> = HashMap::new();
            let mut seen: Vec<usize> = Vec::new();
            for &v in &piece_vertices {
                let c = grid.locate(&vertices[3 * v..3 * v + 3]);
                seen.clear();
                for dz in -reach..=reach {
                    for dy in -reach..=reach {
                        for dx in -reach..=reach {
                            let q = [c[0] as isize + dx, c[1] as isize + dy, c[2] as isize + dz];
                            if (0..3).any(|i| q[i] < 0 || q[i] >= grid.dims[i] as isize) {
                                continue;
                            }
                            let k = grid.index([q[0] as usize, q[1] as usize, q[2] as usize]);
                            if let Some(hs) = owners.get(&k) {
                                for &h in hs {
                                    if !seen.contains(&h) {
                                        seen.push(h);
                                    }
                                }
                            }
                        }
                    }
                }
                for &h in &seen {
                    *near.entry(h).or_insert(0) += 1;
                }
            }
            // The host nearest to most vertices (ties: the host visited first, the larger).
            let best = hosts.iter().map(|&h| (h, near.get(&h).copied().unwrap_or(0))).fold(
                None,
                |acc: Option<(usize, usize)>, (h, c)| match acc {
                    Some((_, bc)) if bc >= c => acc,
                    _ => Some((h, c)),
                },
            );
            best.and_then(|(h, count)| {
                let near_share = count as f64 / piece_vertices.len().max(1) as f64;
                if near_share < PASSENGER_NEAR_SHARE {
                    return None;
                }
                let (size, host_size) = (occupied[p].len(), occupied[h].len());
                let shared = occupied[p]
                    .iter()
                    .filter(|(k, _)| owners.get(k).is_some_and(|hs| hs.contains(&h)))
                    .count();
                let covers = 2 * shared >= size;
                let shell = open[p] && (covers || 2 * size <= host_size);
                // A closed piece rides an open host only when small: the winding-number inside
                // of a long open robe holds the body, which must not ride in the robe.
                let overlaps = covers && 2 * size <= host_size && (open[p] || !open[h]);
                let small = 8 * size <= host_size;
                (shell || overlaps || small).then_some(h)
            })
        };
        match chosen {
            Some(h) => hosts_of_piece[p] = Some(h),
            None => {
                hosts.push(p);
                for &(k, _) in &occupied[p] {
                    owners.entry(k).or_default().push(p);
                }
            }
        }
    }
    hosts_of_piece
}

/// Per surface vertex, where it is embedded: its own position, or for a vertex of a passenger
/// (`hosts[piece[v]]` set) that lies outside its host's surface (generalized winding number
/// `|w| ≤ ½`) the nearest point of that surface, so that the passenger moves exactly as the
/// body surface under it (a shirt 1.2 cm out of the body embedded at its own place moved 1.5x
/// the body under it: the lattice just outside a body is not the body). Passenger vertices
/// inside the host (an eye's back) stay where they are, in the body's material.
///
/// `vertices` `n × 3`; `piece[v]` the piece of vertex `v` (`usize::MAX`: none);
/// `piece_tris[p]` piece `p`'s triangles. Returns `n × 3`.
pub(crate) fn anchored_positions(
    grid: &CubeGrid,
    vertices: &[f64],
    piece: &[usize],
    piece_tris: &[Vec<usize>],
    hosts: &[Option<usize>],
) -> Vec<f64> {
    use rayon::prelude::*;
    let mut out = vertices.to_vec();
    let point = |v: usize| [vertices[3 * v], vertices[3 * v + 1], vertices[3 * v + 2]];
    let mut host_ids: Vec<usize> = hosts.iter().flatten().copied().collect();
    host_ids.sort_unstable();
    host_ids.dedup();
    for h in host_ids {
        // The host's triangles by the cubes their bounding boxes overlap.
        let tris = &piece_tris[h];
        let mut buckets: HashMap<usize, Vec<usize>> = HashMap::new();
        for (t, tri) in tris.chunks_exact(3).enumerate() {
            let cs: Vec<[usize; 3]> = tri.iter().map(|&v| grid.locate(&point(v))).collect();
            for z in (0..3).map(|k| cs[k][2]).min().unwrap()..=(0..3).map(|k| cs[k][2]).max().unwrap() {
                for y in (0..3).map(|k| cs[k][1]).min().unwrap()..=(0..3).map(|k| cs[k][1]).max().unwrap() {
                    for x in (0..3).map(|k| cs[k][0]).min().unwrap()..=(0..3).map(|k| cs[k][0]).max().unwrap() {
                        buckets.entry(grid.index([x, y, z])).or_default().push(t);
                    }
                }
            }
        }
        let inside = super::WindingTree::new(vertices, tris);
        let riders: Vec<usize> = (0..piece.len())
            .filter(|&v| piece[v] != usize::MAX && hosts[piece[v]] == Some(h))
            .filter(|&v| inside.winding_number(point(v)).abs() <= 0.5)
            .collect();
        let anchors: Vec<[f64; 3]> = riders
            .par_iter()
            .map(|&v| nearest_point_on_surface(grid, &buckets, tris, vertices, &point(v)))
            .collect();
        for (&v, a) in riders.iter().zip(anchors) {
            out[3 * v..3 * v + 3].copy_from_slice(&a);
        }
    }
    out
}

/// The nearest point to `p` of the triangles `tris` (of `vertices`), found through `buckets`
/// (cube -> triangles overlapping it) in growing shells of cubes around `p`'s cube.
fn nearest_point_on_surface(
    grid: &CubeGrid,
    buckets: &HashMap<usize, Vec<usize>>,
    tris: &[usize],
    vertices: &[f64],
    p: &[f64; 3],
) -> [f64; 3] {
    let c = grid.locate(p);
    let corner = |v: usize| [vertices[3 * v], vertices[3 * v + 1], vertices[3 * v + 2]];
    let max_r = grid.dims.iter().copied().max().unwrap_or(0);
    let mut best: Option<(f64, [f64; 3])> = None;
    let mut tested: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for r in 0..=max_r {
        grid.for_each_in_shell(c, r, |q| {
            let Some(ts) = buckets.get(&grid.index(q)) else {
                return;
            };
            for &t in ts {
                if !tested.insert(t) {
                    continue;
                }
                let x = crate::mesh::closest_point_on_triangle(
                    p,
                    &corner(tris[3 * t]),
                    &corner(tris[3 * t + 1]),
                    &corner(tris[3 * t + 2]),
                );
                let d: f64 = (0..3).map(|i| (x[i] - p[i]).powi(2)).sum();
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, x));
                }
            }
        });
        // Triangles first met in a later shell lie at least r cells away.
        if let Some((bd, x)) = best {
            let next = r as f64 * grid.cell;
            if bd <= next * next {
                return x;
            }
        }
    }
    best.map_or(*p, |(_, x)| x)
}
