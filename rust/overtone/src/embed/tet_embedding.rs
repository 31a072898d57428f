//! Points (a display surface) carried by a tetrahedral mesh through barycentric coordinates.

use crate::error::{check_finite, OvertoneError, Result};
use crate::math::vec3::{cross, dot, sub};
use crate::mesh::SimplexMesh;

/// Barycentric coordinates below `−INSIDE_TOLERANCE` mark a point outside a tet.
const INSIDE_TOLERANCE: f64 = 1e-10;

/// Each point `p` of a point set written as `p = Σ_k b_k X_{c_k}` over the four vertices `c_k`
/// of one tetrahedron: the tet containing it, or for a point outside the mesh the closest tet
/// (its barycentric coordinates then extend that tet's affine map: some are negative, all sum
/// to one, and the rest position is still reproduced exactly). A field on the tet vertices
/// (positions, displacements) is carried to the points by the same weights.
#[derive(Clone, Debug)]
pub struct TetEmbedding {
    /// Per point, the tet's four vertex indices.
    pub corners: Vec<[usize; 4]>,
    /// Per point, the barycentric coordinates (sum 1).
    pub barycentric: Vec<[f64; 4]>,
    /// Points outside every tet (placed by their closest tet).
    pub outside: usize,
    /// Largest distance of an outside point to the mesh (mesh units; 0 if none).
    pub max_distance: f64,
}

impl TetEmbedding {
    /// Number of embedded points.
    pub fn n_points(&self) -> usize {
        self.corners.len()
    }

    /// `out_p = Σ_k b_k f_{c_k}` for a field `f` on the tet vertices (`n × stride` row-major,
    /// the first `width ≤ stride` components used); `out` is `points × width` row-major.
    pub fn interpolate(&self, field: &[f64], stride: usize, width: usize, out: &mut [f64]) {
        for (p, (c, b)) in self.corners.iter().zip(&self.barycentric).enumerate() {
            for i in 0..width {
                out[p * width + i] = (0..4).map(|k| b[k] * field[c[k] * stride + i]).sum();
            }
        }
    }
}

/// Embeds `points` (`p × 3` row-major, the mesh's units) in the tetrahedral `mesh`.
///
/// Points inside a tet (barycentric coordinates ≥ −1e-10) take it; points outside take the
/// closest tet (point–tet distance over a uniform grid of tet bounding boxes, searched in
/// growing shells). A point farther than `max_distance` from the mesh is refused with its index
/// and distance (a display surface in other units, or not aligned with the mesh).
pub(crate) fn embed_points_in_tets(mesh: &SimplexMesh, points: &[f64], max_distance: f64) -> Result<TetEmbedding> {
    if mesh.dim() != 3 || mesh.n_elements() == 0 {
        return Err(OvertoneError::Unsupported(
            "embedding a display surface needs a 3D tetrahedral mesh".into(),
        ));
    }
    if points.is_empty() || points.len() % 3 != 0 {
        return Err(OvertoneError::size(
            "surface points",
            "a non-empty multiple of 3 numbers",
            points.len(),
        ));
    }
    check_finite("surface points", points, 3)?;
    if !(max_distance >= 0.0) {
        return Err(OvertoneError::setting("max_distance", max_distance, "must be >= 0"));
    }
    let grid = TetGrid::new(mesh);
    let np = points.len() / 3;
    let mut out = TetEmbedding {
        corners: Vec::with_capacity(np),
        barycentric: Vec::with_capacity(np),
        outside: 0,
        max_distance: 0.0,
    };
    let mut stamp = vec![usize::MAX; mesh.n_elements()];
    for (ip, p) in points.chunks_exact(3).enumerate() {
        let p = [p[0], p[1], p[2]];
        // Inside: the candidate tet with the largest smallest barycentric coordinate.
        let mut best: Option<(usize, [f64; 4], f64)> = None;
        if let Some(cell) = grid.cell_of(&p) {
            for &t in &grid.cells[cell] {
                let b = barycentric(mesh, t, &p);
                let lo = b.iter().cloned().fold(f64::INFINITY, f64::min);
                if lo >= -INSIDE_TOLERANCE && best.map(|(_, _, l)| lo > l).unwrap_or(true) {
                    best = Some((t, b, lo));
                }
            }
        }
        let (t, b) = match best {
            Some((t, b, _)) => (t, b),
            None => {
                let box_distance = grid.distance_to_box(&p);
                if box_distance > max_distance {
                    return Err(far_error(ip, box_distance, max_distance));
                }
                let (t, dist) = grid.closest_tet(mesh, &p, ip, &mut stamp);
                if dist > max_distance {
                    return Err(far_error(ip, dist, max_distance));
                }
                out.outside += 1;
                out.max_distance = out.max_distance.max(dist);
                (t, barycentric(mesh, t, &p))
            }
        };
        let e = mesh.element(t);
        out.corners.push([e[0], e[1], e[2], e[3]]);
        out.barycentric.push(b);
    }
    Ok(out)
}

fn far_error(point: usize, dist: f64, max: f64) -> OvertoneError {
    OvertoneError::setting(
        "surface",
        format!("vertex {point}"),
        format!(
            "it is {dist:.4} from the tet mesh, more than the {max:.4} allowed; is the surface in the mesh's units and position?"
        ),
    )
}

/// Barycentric coordinates of `p` in tet `t` (sum 1; negative outside).
fn barycentric(mesh: &SimplexMesh, t: usize, p: &[f64; 3]) -> [f64; 4] {
    let e = mesh.element(t);
    let x: [&[f64]; 4] = std::array::from_fn(|k| mesh.vertex(e[k]));
    let col = |k: usize| [x[k][0] - x[0][0], x[k][1] - x[0][1], x[k][2] - x[0][2]];
    let (a, b, c) = (col(1), col(2), col(3));
    let r = [p[0] - x[0][0], p[1] - x[0][1], p[2] - x[0][2]];
    let det = dot(&a, &cross(&b, &c));
    let l1 = dot(&r, &cross(&b, &c)) / det;
    let l2 = dot(&a, &cross(&r, &c)) / det;
    let l3 = dot(&a, &cross(&b, &r)) / det;
    [1.0 - l1 - l2 - l3, l1, l2, l3]
}

/// Distance from `p` to tet `t`: 0 inside, else the nearest of its four faces.
fn tet_distance(mesh: &SimplexMesh, t: usize, p: &[f64; 3]) -> f64 {
    let b = barycentric(mesh, t, p);
    if b.iter().all(|&x| x >= 0.0) {
        return 0.0;
    }
    let e = mesh.element(t);
    let x: [[f64; 3]; 4] = std::array::from_fn(|k| {
        let v = mesh.vertex(e[k]);
        [v[0], v[1], v[2]]
    });
    [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]
        .iter()
        .map(|f| triangle_distance(p, &x[f[0]], &x[f[1]], &x[f[2]]))
        .fold(f64::INFINITY, f64::min)
}

/// Distance from `p` to the triangle `(a, b, c)` (closest point by Voronoi regions).
pub(crate) fn triangle_distance(p: &[f64; 3], a: &[f64; 3], b: &[f64; 3], c: &[f64; 3]) -> f64 {
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(&ab, &ap), dot(&ac, &ap));
    let at = |s: f64, t: f64| -> f64 {
        let q = [
            a[0] + s * ab[0] + t * ac[0],
            a[1] + s * ab[1] + t * ac[1],
            a[2] + s * ab[2] + t * ac[2],
        ];
        dot(&sub(p, &q), &sub(p, &q)).sqrt()
    };
    if d1 <= 0.0 && d2 <= 0.0 {
        return at(0.0, 0.0);
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(&ab, &bp), dot(&ac, &bp));
    if d3 >= 0.0 && d4 <= d3 {
        return at(1.0, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return at(d1 / (d1 - d3), 0.0);
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(&ab, &cp), dot(&ac, &cp));
    if d6 >= 0.0 && d5 <= d6 {
        return at(0.0, 1.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return at(0.0, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return at(1.0 - w, w);
    }
    let denom = 1.0 / (va + vb + vc);
    at(vb * denom, vc * denom)
}

/// A uniform grid over the mesh's bounding box; each cell lists the tets whose bounding boxes
/// meet it.
struct TetGrid {
    lo: [f64; 3],
    hi: [f64; 3],
    size: [f64; 3],
    dims: [usize; 3],
    cells: Vec<Vec<usize>>,
}

impl TetGrid {
    fn new(mesh: &SimplexMesh) -> Self {
        let (lo, hi) = crate::mesh::bounding_box(mesh.vertices());
        let per_axis = ((mesh.n_elements() as f64).cbrt().ceil() as usize).clamp(1, 64);
        let dims = [per_axis; 3];
        let size: [f64; 3] = std::array::from_fn(|i| ((hi[i] - lo[i]) / per_axis as f64).max(f64::MIN_POSITIVE));
        let mut grid = Self {
            lo,
            hi,
            size,
            dims,
            cells: vec![Vec::new(); per_axis * per_axis * per_axis],
        };
        for t in 0..mesh.n_elements() {
            let mut a = [f64::INFINITY; 3];
            let mut b = [f64::NEG_INFINITY; 3];
            for &v in mesh.element(t) {
                let x = mesh.vertex(v);
                for i in 0..3 {
                    a[i] = a[i].min(x[i]);
                    b[i] = b[i].max(x[i]);
                }
            }
            let (ca, cb) = (grid.clamped_index(&a), grid.clamped_index(&b));
            for k in ca[2]..=cb[2] {
                for j in ca[1]..=cb[1] {
                    for i in ca[0]..=cb[0] {
                        let c = grid.flat([i, j, k]);
                        grid.cells[c].push(t);
                    }
                }
            }
        }
        grid
    }

    fn clamped_index(&self, p: &[f64; 3]) -> [usize; 3] {
        std::array::from_fn(|i| (((p[i] - self.lo[i]) / self.size[i]).floor().max(0.0) as usize).min(self.dims[i] - 1))
    }
    fn flat(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }
    /// The cell holding `p`, if `p` is in the bounding box.
    fn cell_of(&self, p: &[f64; 3]) -> Option<usize> {
        if (0..3).all(|i| p[i] >= self.lo[i] && p[i] <= self.hi[i]) {
            Some(self.flat(self.clamped_index(p)))
        } else {
            None
        }
    }
    fn distance_to_box(&self, p: &[f64; 3]) -> f64 {
        (0..3)
            .map(|i| (self.lo[i] - p[i]).max(p[i] - self.hi[i]).max(0.0).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// The closest tet to `p` and its distance: shells of cells around `p`'s (clamped) cell,
    /// stopping once the next shell is farther than the best distance found.
    fn closest_tet(&self, mesh: &SimplexMesh, p: &[f64; 3], id: usize, stamp: &mut [usize]) -> (usize, f64) {
        let centre = self.clamped_index(p);
        let min_size = self.size.iter().cloned().fold(f64::INFINITY, f64::min);
        let max_ring = *self.dims.iter().max().expect("three axes");
        let mut best = (usize::MAX, f64::INFINITY);
        for ring in 0..=max_ring {
            let lo: [usize; 3] = std::array::from_fn(|i| centre[i].saturating_sub(ring));
            let hi: [usize; 3] = std::array::from_fn(|i| (centre[i] + ring).min(self.dims[i] - 1));
            for k in lo[2]..=hi[2] {
                for j in lo[1]..=hi[1] {
                    for i in lo[0]..=hi[0] {
                        let on_shell = [i, j, k].iter().zip(&centre).any(|(&a, &c)| a.abs_diff(c) == ring);
                        if !on_shell {
                            continue;
                        }
                        for &t in &self.cells[self.flat([i, j, k])] {
                            if stamp[t] == id {
                                continue;
                            }
                            stamp[t] = id;
                            let d = tet_distance(mesh, t, p);
                            if d < best.1 || (d == best.1 && t < best.0) {
                                best = (t, d);
                            }
                        }
                    }
                }
            }
            // A tet first met in a later shell lies in cells at least `ring + 1` cells from
            // p's (clamped) cell, so at least `ring · min_size` from p.
            if best.0 != usize::MAX && best.1 <= ring as f64 * min_size {
                break;
            }
        }
        best
    }
}
