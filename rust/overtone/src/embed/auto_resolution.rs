//! The lattice resolution chosen from the geometry: thin limbs several cells thick, the bulk of
//! the body more, within a budget of tetrahedra.

use crate::embed::lattice::{check_triangles, occupied_cubes_per_piece, piece_triangles, CubeGrid};
use crate::error::{OvertoneError, Result};

/// Cells across the diameter of the thin parts (the [`THIN_QUANTILE`] of the local thickness).
pub(crate) const CELLS_ACROSS_THIN_PARTS: f64 = 4.0;
/// The thickness quantile that defines "thin": 10 % of the body's volume is thinner. Fingers and
/// other small features below that share are not resolved, arms and legs are.
pub(crate) const THIN_QUANTILE: f64 = 0.10;
/// Cells across the diameter of the body's bulk (the median of the local thickness by volume).
/// The rig takes the variations along each bone, so the fast solver's rig-orthogonal modes are
/// fields across the body's cross-sections, and a body of uniform thickness (a tail, a
/// tentacle: its thin parts are its bulk) needs more cells across than four for them. The
/// tests' tube with 64 modes, default lattice against the 1.5x finer one (peak ratio / per-frame
/// difference): 1.33 / 0.50 at four cells across, 1.27 / 0.34 and 1.12 / 0.18 at six (38 and 39
/// cells), 1.15 / 0.19 at seven, 0.95 / 0.09 and 1.00 / 0.08 at eight (48 and 51). On the test
/// characters the thin parts ask for more cells than this, except RiggedFigure (79 cells
/// instead of 74).
pub const CELLS_ACROSS_BULK: f64 = 8.0;
/// Budget: at most this many tetrahedra (6 per kept cube): a bind of up to ~35 s on 2 cores.
pub(crate) const MAX_AUTO_TETS: usize = 125_000;
/// Limits of the automatic choice (cells along the longest side).
pub(crate) const MIN_AUTO_RESOLUTION: usize = 16;
pub(crate) const MAX_AUTO_RESOLUTION: usize = 128;
/// Resolution of the probe grid on which the thickness is measured.
const PROBE_RESOLUTION: usize = 128;

/// What [`choose_lattice_resolution`] decided, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResolutionChoice {
    /// Cells along the longest side of the bounding box.
    pub resolution: usize,
    /// Diameter of the thin parts (the surface's units), `2 r` at [`THIN_QUANTILE`].
    pub thin_diameter: f64,
    /// Diameter of the bulk (the surface's units), the median local thickness.
    pub bulk_diameter: f64,
    /// The resolution the thickness asks for (before the budget and the limits): the finer of
    /// the thin parts' and the bulk's.
    pub wanted: usize,
    /// Tetrahedra of the chosen lattice.
    pub tets: usize,
}

/// Kept cubes of every piece of the surface at `resolution` (union over pieces counted once
/// per piece, as the lattice duplicates them), with the grid.
fn occupancy(vertices: &[f64], triangles: &[usize], resolution: usize) -> Result<(CubeGrid, Vec<Vec<(usize, bool)>>)> {
    let grid = CubeGrid::around(vertices, resolution)?;
    let n = vertices.len() / 3;
    let (_, piece_tris) = piece_triangles(n, triangles);
    let mut occ = occupied_cubes_per_piece(&grid, vertices, &piece_tris);
    // Passengers (layered pieces) ride in their host's cubes: they add none of their own.
    let hosts = crate::embed::passenger_pieces::passenger_hosts(&grid, vertices, &piece_tris, &occ);
    for (cubes, host) in occ.iter_mut().zip(&hosts) {
        if host.is_some() {
            cubes.clear();
        }
    }
    Ok((grid, occ))
}

/// Chamfer distance (3-4-5 mask, two passes, in cells) of every occupied cube to the nearest
/// empty one; empty cubes are 0.
fn distance_to_outside(grid: &CubeGrid, occupied: &[bool]) -> Vec<f64> {
    let [nx, ny, nz] = grid.dims;
    let big = f64::INFINITY;
    let mut d: Vec<f64> = occupied.iter().map(|&o| if o { big } else { 0.0 }).collect();
    let offsets: Vec<([i64; 3], f64)> = (-1..=1i64)
        .flat_map(|z| (-1..=1i64).flat_map(move |y| (-1..=1i64).map(move |x| [x, y, z])))
        .filter(|o| *o != [0, 0, 0])
        .map(|o| {
            let k = o.iter().filter(|&&x| x != 0).count();
            (o, [0.0, 3.0, 4.0, 5.0][k] / 3.0)
        })
        .collect();
    // Forward neighbours precede the cube in index order, backward ones follow it.
    let before = |o: &[i64; 3]| (o[2], o[1], o[0]) < (0, 0, 0);
    let fwd: Vec<_> = offsets.iter().filter(|(o, _)| before(o)).cloned().collect();
    let bwd: Vec<_> = offsets.iter().filter(|(o, _)| !before(o)).cloned().collect();
    let idx = |x: i64, y: i64, z: i64| -> Option<usize> {
        (x >= 0 && y >= 0 && z >= 0 && (x as usize) < nx && (y as usize) < ny && (z as usize) < nz)
            .then(|| ((z as usize) * ny + y as usize) * nx + x as usize)
    };
    for pass in [&fwd, &bwd] {
        let forward = std::ptr::eq(pass, &fwd);
        let order: Box<dyn Iterator<Item = usize>> = if forward {
            Box::new(0..nx * ny * nz)
        } else {
            Box::new((0..nx * ny * nz).rev())
        };
        for k in order {
            if d[k] == 0.0 {
                continue;
            }
            let c = grid.coords(k);
            let mut best = d[k];
            for (o, w) in pass.iter() {
                // Out of the grid counts as empty (distance 0 there).
                let nb = idx(c[0] as i64 + o[0], c[1] as i64 + o[1], c[2] as i64 + o[2]);
                let dn = nb.map_or(0.0, |j| d[j]);
                best = best.min(dn + w);
            }
            d[k] = best;
        }
    }
    d
}

/// Local thickness (Hildebrand and Rüegsegger): for every occupied cube, the diameter of the
/// largest inscribed ball that contains it (the surface's units), from the ridge of the distance
/// transform `d` (cubes at least as far from the outside as their 6 neighbours, each the centre
/// of a ball of radius `(d − ½)·cell`); 0 outside.
fn local_thickness(grid: &CubeGrid, d: &[f64]) -> Vec<f64> {
    let dims = grid.dims;
    let mut ridge: Vec<(f64, usize)> = Vec::new();
    for k in 0..d.len() {
        if d[k] == 0.0 {
            continue;
        }
        let c = grid.coords(k);
        let is_max = (0..3).all(|axis| {
            [-1i64, 1].iter().all(|&step| {
                let x = c[axis] as i64 + step;
                if x < 0 || x >= dims[axis] as i64 {
                    return true;
                }
                let mut nb = c;
                nb[axis] = x as usize;
                d[grid.index(nb)] <= d[k]
            })
        });
        if is_max {
            ridge.push(((d[k] - 0.5).max(0.5), k));
        }
    }
    // Each cube takes the diameter of the largest ridge ball over it. Larger balls first, each
    // painting, row by row, only the cubes of its span no larger ball has painted: `next[j]`
    // leads from a cube to the first unpainted one at or after it (path halving), so a cube is
    // painted once and a row span costs little more than its unpainted cubes. On a bulky body
    // the balls are large and overlap deeply: painting every cube of every ball took 26-39% of
    // the C ABI test's CPU time (binds of an octahedron and two spheres), and it runs on every
    // bind (the body's size is measured under a set resolution too).
    ridge.sort_by(|a, b| b.0.total_cmp(&a.0));
    let len = d.len();
    let mut thick = vec![0.0; len];
    let mut next: Vec<usize> = (0..=len).collect();
    fn find(next: &mut [usize], mut j: usize) -> usize {
        while next[j] != j {
            next[j] = next[next[j]];
            j = next[j];
        }
        j
    }
    for &(r, k) in &ridge {
        let c = grid.coords(k);
        let ri = r.floor() as i64;
        let value = 2.0 * r * grid.cell;
        for dz in -ri..=ri {
            let z = c[2] as i64 + dz;
            if z < 0 || z >= dims[2] as i64 {
                continue;
            }
            for dy in -ri..=ri {
                let y = c[1] as i64 + dy;
                let rest = r * r - (dy * dy + dz * dz) as f64;
                if y < 0 || y >= dims[1] as i64 || rest < 0.0 {
                    continue;
                }
                // The cubes |dx| ≤ ⌊√rest⌋ of the row, clipped to the grid.
                let s = rest.sqrt().floor() as i64;
                let x0 = (c[0] as i64 - s).max(0) as usize;
                let x1 = (c[0] as i64 + s).min(dims[0] as i64 - 1) as usize;
                let row = grid.index([0, y as usize, z as usize]);
                let (first, last) = (row + x0, row + x1);
                let mut j = find(&mut next, first);
                while j <= last {
                    if d[j] > 0.0 {
                        thick[j] = value;
                    }
                    next[j] = j + 1;
                    j = find(&mut next, j + 1);
                }
            }
        }
    }
    thick
}

/// Chooses the lattice resolution of a surface (`vertices` `n × 3`, `triangles` `t × 3`) so
/// that its thin parts are [`CELLS_ACROSS_THIN_PARTS`] cells across and its bulk
/// [`CELLS_ACROSS_BULK`]:
///
/// 1. the surface is voxelised on a probe grid (128 cells along the longest side; every
///    surface piece by its own winding number, see [`crate::embed::embed_surface`]);
/// 2. a chamfer distance transform gives each occupied cube its distance to the outside, and
///    the local thickness of each cube is the diameter of the largest inscribed ball holding it
///    (balls centred on the ridge of the distance transform);
/// 3. the thin diameter `2 r_thin` is the [`THIN_QUANTILE`] of the thickness over the occupied
///    cubes (by volume), the bulk diameter `t_bulk` its median; the wanted cell size is the
///    smaller of `2 r_thin / CELLS_ACROSS_THIN_PARTS` and `t_bulk / CELLS_ACROSS_BULK`;
/// 4. the resolution is clamped to `[16, 128]` and lowered until the lattice has at most
///    [`MAX_AUTO_TETS`] tetrahedra.
pub(crate) fn choose_lattice_resolution(vertices: &[f64], triangles: &[usize]) -> Result<ResolutionChoice> {
    check_triangles(vertices, triangles)?;
    let (grid, occ) = occupancy(vertices, triangles, PROBE_RESOLUTION)?;
    crate::progress::check()?;
    let mut occupied = vec![false; grid.dims[0] * grid.dims[1] * grid.dims[2]];
    for piece in &occ {
        for &(k, _) in piece {
            occupied[k] = true;
        }
    }
    let d = distance_to_outside(&grid, &occupied);
    let thickness = local_thickness(&grid, &d);
    let mut values: Vec<f64> = thickness.iter().copied().filter(|&t| t > 0.0).collect();
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return Err(OvertoneError::setting(
            "surface",
            "empty",
            "encloses no volume on the probe grid",
        ));
    }
    let q = ((THIN_QUANTILE * values.len() as f64) as usize).min(values.len() - 1);
    let r_thin = 0.5 * values[q];
    let bulk = values[values.len() / 2];
    let (lo, hi) = crate::mesh::bounding_box(vertices);
    let longest = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max);
    let cell = f64::min(2.0 * r_thin / CELLS_ACROSS_THIN_PARTS, bulk / CELLS_ACROSS_BULK);
    let wanted = (longest / cell).ceil() as usize;
    let mut resolution = wanted.clamp(MIN_AUTO_RESOLUTION, MAX_AUTO_RESOLUTION);
    loop {
        crate::progress::check()?;
        let (_, occ) = occupancy(vertices, triangles, resolution)?;
        let tets = 6 * occ.iter().map(|p| p.len()).sum::<usize>();
        if tets <= MAX_AUTO_TETS || resolution <= MIN_AUTO_RESOLUTION {
            return Ok(ResolutionChoice {
                resolution,
                thin_diameter: 2.0 * r_thin,
                bulk_diameter: bulk,
                wanted,
                tets,
            });
        }
        // Tets grow between the square (thin shells) and the cube of the resolution.
        let shrink = (MAX_AUTO_TETS as f64 / tets as f64).powf(1.0 / 2.5);
        resolution = ((resolution as f64 * shrink).floor() as usize).clamp(MIN_AUTO_RESOLUTION, resolution - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed box `a × b × c` (12 triangles, outward).
    fn cuboid(c: [f64; 3], h: [f64; 3]) -> (Vec<f64>, Vec<usize>) {
        let mut v = Vec::new();
        for k in 0..8 {
            for i in 0..3 {
                v.push(c[i] + if (k >> i) & 1 == 1 { h[i] } else { -h[i] });
            }
        }
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let t = quads
            .iter()
            .flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]])
            .collect();
        (v, t)
    }

    /// The row-span painting gives every cube the diameter of the largest ridge ball over it,
    /// exactly as painting every cube of every ball does, on two overlapping balls of different
    /// radii and a thin plate (and on the grid's edges: the plate reaches them).
    #[test]
    fn span_painting_is_the_largest_ball_over_each_cube() {
        let (v, _) = cuboid([0.0; 3], [1.0, 0.6, 0.5]);
        let grid = CubeGrid::around(&v, 48).unwrap();
        let n = grid.dims[0] * grid.dims[1] * grid.dims[2];
        let occupied: Vec<bool> = (0..n)
            .map(|k| {
                let c = grid.coords(k);
                let p: Vec<f64> = (0..3)
                    .map(|i| grid.origin[i] + (c[i] as f64 + 0.5) * grid.cell)
                    .collect();
                let r2 = |q: [f64; 3]| (0..3).map(|i| (p[i] - q[i]).powi(2)).sum::<f64>();
                r2([-0.4, 0.0, 0.0]) < 0.25 || r2([0.5, 0.1, 0.0]) < 0.09 || (p[1] > 0.4 && p[2].abs() < 0.06)
            })
            .collect();
        let d = distance_to_outside(&grid, &occupied);
        let fast = local_thickness(&grid, &d);
        // Every ridge ball painted cube by cube, each cube keeping the largest.
        let dims = grid.dims;
        let mut plain = vec![0.0; n];
        for k in (0..n).filter(|&k| d[k] > 0.0) {
            let c = grid.coords(k);
            let on_ridge = (0..3).all(|a| {
                [-1i64, 1].iter().all(|&s| {
                    let x = c[a] as i64 + s;
                    let mut nb = c;
                    x < 0 || x >= dims[a] as i64 || {
                        nb[a] = x as usize;
                        d[grid.index(nb)] <= d[k]
                    }
                })
            });
            if !on_ridge {
                continue;
            }
            let r = (d[k] - 0.5).max(0.5);
            for j in (0..n).filter(|&j| d[j] > 0.0) {
                let q = grid.coords(j);
                let e2: f64 = (0..3).map(|a| (q[a] as f64 - c[a] as f64).powi(2)).sum();
                if e2 <= r * r {
                    plain[j] = f64::max(plain[j], 2.0 * r * grid.cell);
                }
            }
        }
        let cubes = occupied.iter().filter(|&&o| o).count();
        assert!(cubes > 5_000, "{cubes} cubes");
        assert_eq!(fast, plain);
    }

    /// A long thin bar (square section of side 0.1 against a length of 2): the thin and the bulk
    /// diameters are both its side, found within a probe cell, and the resolution puts
    /// `CELLS_ACROSS_BULK` cells across it (a body of uniform thickness is all bulk); a thicker
    /// bar gets a coarser lattice.
    #[test]
    fn thin_bars_get_finer_lattices() {
        let (v, t) = cuboid([0.0; 3], [1.0, 0.05, 0.05]);
        let c = choose_lattice_resolution(&v, &t).unwrap();
        let probe_cell = 2.0 / PROBE_RESOLUTION as f64;
        assert!((c.thin_diameter - 0.1).abs() < 1.5 * probe_cell, "{c:?}");
        assert!((c.bulk_diameter - 0.1).abs() < 1.5 * probe_cell, "{c:?}");
        let want = (2.0 / (c.bulk_diameter / CELLS_ACROSS_BULK)).ceil() as usize;
        assert_eq!(c.wanted, want);
        assert!(want > (2.0 / (c.thin_diameter / CELLS_ACROSS_THIN_PARTS)).ceil() as usize);
        assert_eq!(c.resolution, want.clamp(MIN_AUTO_RESOLUTION, MAX_AUTO_RESOLUTION));
        let (v2, t2) = cuboid([0.0; 3], [1.0, 0.2, 0.2]);
        let c2 = choose_lattice_resolution(&v2, &t2).unwrap();
        assert!(c2.resolution < c.resolution, "{c2:?} vs {c:?}");
        assert!(c.tets <= MAX_AUTO_TETS && c2.tets <= MAX_AUTO_TETS);
    }
}
