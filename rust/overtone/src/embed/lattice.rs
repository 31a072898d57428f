//! A regular tetrahedral lattice around a surface, and the surface's barycentric coordinates.

use rayon::prelude::*;

use crate::embed::memory::{available_memory, check_lattice_memory, LatticeSolver};
use crate::embed::winding_number;
use crate::error::{OvertoneError, Result};
use crate::mesh::{signed_volume, SimplexMesh};

/// Default lattice resolution: cells along the longest side of the bounding box. For the
/// bundled characters this gives roughly 4-8k tetrahedra. Coarser lattices glue limbs that pass
/// through the same cube (CesiumMan at 24 cells: secondary motion 4x larger than at 48).
pub const DEFAULT_LATTICE_RESOLUTION: usize = 32;

/// A surface embedded in a lattice: each surface vertex is a barycentric combination of the
/// four corners of the lattice tetrahedron that contains it.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// The lattice (6 Kuhn tetrahedra per kept cube).
    pub lattice: SimplexMesh,
    /// Per surface vertex, the four lattice vertices.
    pub corners: Vec<[usize; 4]>,
    /// Per surface vertex, the barycentric weights (non-negative, summing to one).
    pub barycentric: Vec<[f64; 4]>,
    /// Lattice vertices of cubes that touch the surface (carry weights from the surface).
    pub surface_lattice_vertices: Vec<usize>,
    /// Cell size.
    pub cell: f64,
}

impl Embedding {
    /// `out_s = Σ_k b_k u_{c_k}` for every surface vertex: a lattice field (`n_l × 3`
    /// row-major) mapped to the surface (`n_s × 3` row-major), added into `out`.
    pub fn add_to_surface(&self, lattice_field: &[f64], out: &mut [f64]) {
        for (s, (c, b)) in self.corners.iter().zip(&self.barycentric).enumerate() {
            for i in 0..3 {
                out[3 * s + i] += (0..4).map(|k| b[k] * lattice_field[3 * c[k] + i]).sum::<f64>();
            }
        }
    }
}

/// Embeds a triangle surface (`vertices` `n × 3`, `triangles` `t × 3`) in a lattice with
/// `resolution` cells along the longest side of its bounding box (padded by one cell).
///
/// A cube is kept when the bounding box of some triangle overlaps it (so every surface point
/// lies in a kept cube) or when it lies inside: the other cubes form connected components, and a
/// component is inside when the generalized winding number (|w| > ½, so open or inconsistently
/// oriented meshes still work) at a majority of up to seven of its cube centres says so. Cubes are split into the six
/// tetrahedra around their main diagonal, which conform across faces.
pub fn embed_surface(vertices: &[f64], triangles: &[usize], resolution: usize) -> Result<Embedding> {
    if !(2..=400).contains(&resolution) {
        return Err(OvertoneError::setting(
            "lattice_resolution",
            resolution,
            "must be between 2 and 400 cells",
        ));
    }
    let n = vertices.len() / 3;
    if n == 0 || triangles.len() < 3 || triangles.len() % 3 != 0 || triangles.iter().any(|&i| i >= n) {
        return Err(OvertoneError::setting(
            "surface",
            "empty or invalid",
            "needs triangles over its vertices",
        ));
    }
    let (lo, hi) = crate::mesh::bounding_box(vertices);
    let longest = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max);
    if !(longest > 0.0) || !longest.is_finite() {
        return Err(OvertoneError::setting(
            "surface",
            "degenerate",
            "has zero or non-finite extent",
        ));
    }
    let cell = longest / resolution as f64;
    let origin = [lo[0] - cell, lo[1] - cell, lo[2] - cell];
    let dims: [usize; 3] = std::array::from_fn(|i| ((hi[i] - lo[i]) / cell).ceil() as usize + 2);
    let cube_index = |c: [usize; 3]| (c[2] * dims[1] + c[1]) * dims[0] + c[0];
    let n_cubes = dims[0] * dims[1] * dims[2];
    let locate = |p: &[f64]| -> [usize; 3] {
        std::array::from_fn(|i| (((p[i] - origin[i]) / cell).floor().max(0.0) as usize).min(dims[i] - 1))
    };
    // Cubes touched by triangle bounding boxes.
    let mut keep = vec![false; n_cubes];
    for t in triangles.chunks_exact(3) {
        let ps: Vec<&[f64]> = t.iter().map(|&v| &vertices[3 * v..3 * v + 3]).collect();
        let a = locate(&[
            ps[0][0].min(ps[1][0]).min(ps[2][0]),
            ps[0][1].min(ps[1][1]).min(ps[2][1]),
            ps[0][2].min(ps[1][2]).min(ps[2][2]),
        ]);
        let b = locate(&[
            ps[0][0].max(ps[1][0]).max(ps[2][0]),
            ps[0][1].max(ps[1][1]).max(ps[2][1]),
            ps[0][2].max(ps[1][2]).max(ps[2][2]),
        ]);
        for z in a[2]..=b[2] {
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    keep[cube_index([x, y, z])] = true;
                }
            }
        }
    }
    let touching = keep.clone();
    // Inside cubes: the cubes not touching the surface fall into connected components (6-
    // neighbourhood); a component is inside when the generalized winding number at a few of its
    // cube centres says so (majority). For a closed surface each component is wholly inside or
    // outside; for open or messy surfaces the winding number still decides per component.
    let mut component = vec![usize::MAX; n_cubes];
    let mut members: Vec<Vec<usize>> = Vec::new();
    for seed in 0..n_cubes {
        if touching[seed] || component[seed] != usize::MAX {
            continue;
        }
        let id = members.len();
        let mut list = vec![seed];
        component[seed] = id;
        let mut head = 0;
        while head < list.len() {
            let k = list[head];
            head += 1;
            let c = [k % dims[0], (k / dims[0]) % dims[1], k / (dims[0] * dims[1])];
            for axis in 0..3 {
                for step in [-1i64, 1] {
                    let x = c[axis] as i64 + step;
                    if x < 0 || x >= dims[axis] as i64 {
                        continue;
                    }
                    let mut nb = c;
                    nb[axis] = x as usize;
                    let kn = cube_index(nb);
                    if !touching[kn] && component[kn] == usize::MAX {
                        component[kn] = id;
                        list.push(kn);
                    }
                }
            }
        }
        members.push(list);
    }
    const SAMPLES: usize = 7;
    let component_inside: Vec<bool> = members
        .par_iter()
        .map(|list| {
            let picks: Vec<usize> = (0..SAMPLES.min(list.len()))
                .map(|s| list[s * list.len() / SAMPLES.min(list.len())])
                .collect();
            let votes = picks
                .iter()
                .filter(|&&k| {
                    let c = [k % dims[0], (k / dims[0]) % dims[1], k / (dims[0] * dims[1])];
                    let p = std::array::from_fn(|i| origin[i] + (c[i] as f64 + 0.5) * cell);
                    winding_number(vertices, triangles, p).abs() > 0.5
                })
                .count();
            2 * votes > picks.len()
        })
        .collect();
    let inside: Vec<bool> = (0..n_cubes)
        .map(|k| !touching[k] && component_inside[component[k]])
        .collect();
    for k in 0..n_cubes {
        keep[k] |= inside[k];
    }

    // Lattice vertices (corners of kept cubes) and Kuhn tetrahedra.
    let corner_dims = [dims[0] + 1, dims[1] + 1, dims[2] + 1];
    let corner_key = |c: [usize; 3]| (c[2] * corner_dims[1] + c[1]) * corner_dims[0] + c[0];
    // Before building anything large: count the lattice and refuse it if its simulation would
    // not fit in memory (estimated for the fast solver, the larger of the two).
    {
        let mut corner = vec![false; corner_dims[0] * corner_dims[1] * corner_dims[2]];
        let mut kept = 0;
        for k in (0..n_cubes).filter(|&k| keep[k]) {
            kept += 1;
            let c = [k % dims[0], (k / dims[0]) % dims[1], k / (dims[0] * dims[1])];
            for corner_offset in 0..8 {
                let d = [corner_offset & 1, (corner_offset >> 1) & 1, corner_offset >> 2];
                corner[corner_key([c[0] + d[0], c[1] + d[1], c[2] + d[2]])] = true;
            }
        }
        let n_vertices = corner.iter().filter(|&&b| b).count();
        check_lattice_memory(
            n_vertices,
            6 * kept,
            resolution,
            LatticeSolver::Fast,
            available_memory(),
        )?;
    }
    let mut corner_id = vec![usize::MAX; corner_dims[0] * corner_dims[1] * corner_dims[2]];
    let mut lattice_vertices = Vec::new();
    let mut tets = Vec::new();
    let mut surface_corner = Vec::new();
    const PATHS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut id_of = |c: [usize; 3], lv: &mut Vec<f64>| -> usize {
        let key = corner_key(c);
        if corner_id[key] == usize::MAX {
            corner_id[key] = lv.len() / 3;
            lv.extend((0..3).map(|i| origin[i] + c[i] as f64 * cell));
        }
        corner_id[key]
    };
    for k in 0..n_cubes {
        if !keep[k] {
            continue;
        }
        let c0 = [k % dims[0], (k / dims[0]) % dims[1], k / (dims[0] * dims[1])];
        for path in PATHS {
            let mut c = c0;
            let mut tet = [id_of(c, &mut lattice_vertices), 0, 0, 0];
            for (s, &axis) in path.iter().enumerate() {
                c[axis] += 1;
                tet[s + 1] = id_of(c, &mut lattice_vertices);
            }
            tets.extend(tet);
        }
        if touching[k] {
            for dz in 0..2 {
                for dy in 0..2 {
                    for dx in 0..2 {
                        surface_corner.push(id_of([c0[0] + dx, c0[1] + dy, c0[2] + dz], &mut lattice_vertices));
                    }
                }
            }
        }
    }
    let probe = SimplexMesh::unchecked(3, lattice_vertices.clone(), tets.clone());
    for e in 0..tets.len() / 4 {
        if signed_volume(&probe, e) < 0.0 {
            tets.swap(4 * e + 2, 4 * e + 3);
        }
    }
    let lattice = SimplexMesh::new(3, lattice_vertices, tets)?;
    surface_corner.sort_unstable();
    surface_corner.dedup();

    // Barycentric coordinates: in the cube of p, the Kuhn tet follows the axes sorted by
    // descending local coordinate.
    let mut corners = Vec::with_capacity(n);
    let mut barycentric = Vec::with_capacity(n);
    for p in vertices.chunks_exact(3) {
        let c0 = locate(p);
        let f: [f64; 3] = std::array::from_fn(|i| ((p[i] - origin[i]) / cell - c0[i] as f64).clamp(0.0, 1.0));
        let mut axes = [0usize, 1, 2];
        axes.sort_by(|&a, &b| f[b].total_cmp(&f[a]).then(a.cmp(&b)));
        let mut c = c0;
        let mut ids = [0usize; 4];
        ids[0] = corner_id[corner_key(c)];
        for (s, &axis) in axes.iter().enumerate() {
            c[axis] += 1;
            ids[s + 1] = corner_id[corner_key(c)];
        }
        if ids.iter().any(|&i| i == usize::MAX) {
            return Err(OvertoneError::setting(
                "surface",
                "not embedded",
                "a surface vertex fell outside the lattice",
            ));
        }
        let w = [
            1.0 - f[axes[0]],
            f[axes[0]] - f[axes[1]],
            f[axes[1]] - f[axes[2]],
            f[axes[2]],
        ];
        corners.push(ids);
        barycentric.push(w);
    }
    Ok(Embedding {
        lattice,
        corners,
        barycentric,
        surface_lattice_vertices: surface_corner,
        cell,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every surface vertex is reproduced exactly by its barycentric combination.
    #[test]
    fn barycentric_coordinates_reproduce_the_surface() {
        // An octahedron.
        let v = vec![
            1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.3, 0.0, 0.0, -1.3,
        ];
        let t = vec![0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        let e = embed_surface(&v, &t, 8).unwrap();
        let lv = e.lattice.vertices();
        for (s, (c, b)) in e.corners.iter().zip(&e.barycentric).enumerate() {
            assert!(b.iter().all(|&x| x >= -1e-15) && (b.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            for i in 0..3 {
                let x: f64 = (0..4).map(|k| b[k] * lv[3 * c[k] + i]).sum();
                assert!((x - v[3 * s + i]).abs() < 1e-12);
            }
        }
        assert!(e.lattice.n_elements() > 0);
    }
}
