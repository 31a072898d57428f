//! Structured meshes: triangulated rectangles and tetrahedralised boxes.

use crate::error::Result;
use crate::mesh::{signed_volume, SimplexMesh};

/// A `nx × ny` vertex grid over `[0, sx] × [0, sy]` (vertex `j·nx + i`), each cell split along
/// its `(i+1, j)–(i, j+1)` diagonal into two counter-clockwise triangles.
pub fn triangle_grid(nx: usize, ny: usize, sx: f64, sy: f64) -> Result<SimplexMesh> {
    let mut v = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            v.extend([
                sx * i as f64 / (nx - 1).max(1) as f64,
                sy * j as f64 / (ny - 1).max(1) as f64,
            ]);
        }
    }
    let mut t = Vec::new();
    for j in 0..ny.saturating_sub(1) {
        for i in 0..nx.saturating_sub(1) {
            let a = j * nx + i;
            t.extend([a, a + 1, a + nx, a + 1, a + nx + 1, a + nx]);
        }
    }
    SimplexMesh::new(2, v, t)
}

/// A `nx × ny × nz` vertex grid over `[0, sx] × [0, sy] × [0, sz]` (vertex
/// `(k·ny + j)·nx + i`), each cube split into the six tetrahedra around its main diagonal
/// (Kuhn subdivision, conforming across cubes), positively oriented.
pub fn tet_grid(nx: usize, ny: usize, nz: usize, sx: f64, sy: f64, sz: f64) -> Result<SimplexMesh> {
    let idx = |i: usize, j: usize, k: usize| (k * ny + j) * nx + i;
    let mut v = Vec::with_capacity(3 * nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                v.extend([
                    sx * i as f64 / (nx - 1).max(1) as f64,
                    sy * j as f64 / (ny - 1).max(1) as f64,
                    sz * k as f64 / (nz - 1).max(1) as f64,
                ]);
            }
        }
    }
    const PATHS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut t = Vec::new();
    for k in 0..nz.saturating_sub(1) {
        for j in 0..ny.saturating_sub(1) {
            for i in 0..nx.saturating_sub(1) {
                for path in PATHS {
                    let mut c = [i, j, k];
                    let mut tet = [idx(c[0], c[1], c[2]), 0, 0, 0];
                    for (s, &axis) in path.iter().enumerate() {
                        c[axis] += 1;
                        tet[s + 1] = idx(c[0], c[1], c[2]);
                    }
                    t.extend(tet);
                }
            }
        }
    }
    // Fix orientation with a provisional mesh (all tets have |vol| > 0 by construction).
    let n_tets = t.len() / 4;
    let probe = SimplexMesh::unchecked(3, v.clone(), t.clone());
    for e in 0..n_tets {
        if signed_volume(&probe, e) < 0.0 {
            t.swap(4 * e + 2, 4 * e + 3);
        }
    }
    SimplexMesh::new(3, v, t)
}

/// A `nx × ny` vertex grid over `[−w/2, w/2] × [−h/2, h/2]` (vertex `j·nx + i`, `nx, ny ≥ 2`),
/// each cell split along its `(i, j)–(i+1, j+1)` diagonal into the counter-clockwise triangles
/// `[v₀₀, v₁₀, v₁₁]` and `[v₀₀, v₁₁, v₀₁]` (`v_ab` = vertex `(i+a, j+b)`): the layout of
/// simkit's `triangulated_grid`, used by seed tutorial 17.
pub fn centered_triangle_grid(nx: usize, ny: usize, width: f64, height: f64) -> Result<SimplexMesh> {
    if nx < 2 || ny < 2 {
        return Err(crate::error::OvertoneError::setting(
            "grid",
            format!("{nx} x {ny}"),
            "needs at least 2 x 2 vertices",
        ));
    }
    let mut v = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            v.extend([
                -0.5 * width + width * i as f64 / (nx - 1) as f64,
                -0.5 * height + height * j as f64 / (ny - 1) as f64,
            ]);
        }
    }
    let mut t = Vec::with_capacity(6 * (nx - 1) * (ny - 1));
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            let a = j * nx + i;
            t.extend([a, a + 1, a + nx + 1, a, a + nx + 1, a + nx]);
        }
    }
    SimplexMesh::new(2, v, t)
}
