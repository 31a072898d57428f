//! Overlapping shape-matching regions: one region per particle, its `k`-ring neighbourhood.
//!
//! As in the seed (§4.1, after Rivers and James's FastLSM), region `r` belongs to particle `r`
//! and holds the particles within `k` edges of it (`k = 1`: the 1-ring), the particle itself
//! included. Edges come from the elements of a mesh (every pair of vertices of a triangle or
//! tetrahedron). Members are stored sorted, so every loop over a region runs in a fixed order.

use crate::error::{InputError, OvertoneError, Result, SettingError};
use crate::mesh::SimplexMesh;

/// Regions in compressed form: region `r` holds `members[start[r]..start[r + 1]]` (ascending
/// particle indices). A *slot* is one (region, member) pair, numbered by its position in
/// `members`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    n_particles: usize,
    start: Vec<usize>,
    members: Vec<usize>,
}

impl Regions {
    /// The `rings`-ring regions of the edge graph of a simplicial mesh (triangles or tets).
    pub(crate) fn from_mesh(mesh: &SimplexMesh, rings: usize) -> Result<Self> {
        Self::from_cells(mesh.n_vertices(), mesh.elements(), mesh.dim() + 1, rings)
    }

    /// The `rings`-ring regions of the edge graph of `cells` (`c × width` row-major vertex
    /// indices, `width ≥ 2`: edges, triangles, tetrahedra or polygons of equal size), over
    /// `n_particles` particles. Every particle must belong to at least one cell.
    pub(crate) fn from_cells(n_particles: usize, cells: &[usize], width: usize, rings: usize) -> Result<Self> {
        if rings == 0 {
            return Err(OvertoneError::setting(
                "rings",
                0,
                "a region needs at least the 1-ring of its particle",
            ));
        }
        if width < 2 || cells.len() % width != 0 || cells.is_empty() {
            return Err(OvertoneError::size(
                "cells",
                format!("a non-empty multiple of {width} (>= 2) indices"),
                cells.len(),
            ));
        }
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n_particles];
        for (c, cell) in cells.chunks_exact(width).enumerate() {
            for &v in cell {
                if v >= n_particles {
                    return Err(InputError::IndexOutOfRange {
                        element: c,
                        vertex: v,
                        n_vertices: n_particles,
                    }
                    .into());
                }
            }
            for a in 0..width {
                for b in 0..width {
                    if a != b {
                        adj[cell[a]].push(cell[b]);
                    }
                }
            }
        }
        for (v, list) in adj.iter_mut().enumerate() {
            list.sort_unstable();
            list.dedup();
            if list.is_empty() {
                return Err(SettingError {
                    name: "particles".into(),
                    value: format!("particle {v}"),
                    reason: "has no neighbour (no cell uses it); remove isolated vertices".into(),
                }
                .into());
            }
        }
        let mut start = Vec::with_capacity(n_particles + 1);
        let mut members = Vec::new();
        start.push(0);
        let mut mark = vec![usize::MAX; n_particles];
        let mut frontier = Vec::new();
        let mut next = Vec::new();
        for r in 0..n_particles {
            let first = members.len();
            mark[r] = r;
            members.push(r);
            frontier.clear();
            frontier.push(r);
            for _ in 0..rings {
                next.clear();
                for &u in &frontier {
                    for &w in &adj[u] {
                        if mark[w] != r {
                            mark[w] = r;
                            members.push(w);
                            next.push(w);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
            members[first..].sort_unstable();
            start.push(members.len());
        }
        Ok(Self {
            n_particles,
            start,
            members,
        })
    }

    /// Number of particles.
    pub fn n_particles(&self) -> usize {
        self.n_particles
    }
    /// Number of regions.
    pub fn n_regions(&self) -> usize {
        self.start.len() - 1
    }
    /// Number of slots (sum of region sizes).
    pub fn n_slots(&self) -> usize {
        self.members.len()
    }
    /// Members of region `r` (ascending particle indices).
    pub(crate) fn members(&self, r: usize) -> &[usize] {
        &self.members[self.start[r]..self.start[r + 1]]
    }
    /// Slot range of region `r`.
    pub(crate) fn slot_range(&self, r: usize) -> std::ops::Range<usize> {
        self.start[r]..self.start[r + 1]
    }
    /// All slots' particles, region after region.
    pub(crate) fn all_members(&self) -> &[usize] {
        &self.members
    }
    /// For each particle, the number of regions it belongs to.
    pub(crate) fn membership_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.n_particles];
        for &v in &self.members {
            c[v] += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::tet_grid;

    /// An interior vertex of the Kuhn-split grid has 14 edge neighbours, so its 1-ring region
    /// has 15 particles; a corner of the 2×2×2 grid touches everything.
    #[test]
    fn one_ring_of_a_kuhn_grid() {
        let mesh = tet_grid(3, 3, 3, 2.0, 2.0, 2.0).unwrap();
        let r = Regions::from_mesh(&mesh, 1).unwrap();
        assert_eq!(r.members(13).len(), 15);
        assert!(r.members(13).contains(&13));
        let r2 = Regions::from_mesh(&mesh, 2).unwrap();
        assert_eq!(r2.members(13).len(), 27);
        // Symmetric neighbourhoods: counts equal region sizes.
        let counts = r.membership_counts();
        for v in 0..27 {
            assert_eq!(counts[v], r.members(v).len());
        }
        assert!(Regions::from_mesh(&mesh, 0).is_err());
    }
}
