//! A regular tetrahedral lattice around a surface, and the surface's barycentric coordinates.

use rayon::prelude::*;

use crate::embed::memory::{available_memory, check_lattice_memory, LatticeSolver};
use crate::embed::passenger_pieces::{anchored_positions, passenger_hosts};
use crate::embed::{winding_number, WindingTree};
use crate::error::{OvertoneError, Result};
use crate::mesh::{signed_volume, SimplexMesh};

/// The lattice resolution setting that asks for the automatic choice
/// ([`crate::embed::choose_lattice_resolution`]: thin parts four cells across, within a budget).
pub(crate) const AUTO_LATTICE_RESOLUTION: usize = 0;

/// Default lattice resolution setting: automatic. (Before it was a fixed 32 cells, which left
/// the secondary motion of thin-limbed characters dependent on the lattice: peaks varying 10x
/// between 16 and 48 cells.)
pub(crate) const DEFAULT_LATTICE_RESOLUTION: usize = AUTO_LATTICE_RESOLUTION;

/// A surface embedded in a lattice: each surface vertex is a barycentric combination of the
/// four corners of the lattice tetrahedron that contains it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    /// Connected pieces of the surface (each has its own lattice copy, except passengers).
    pub pieces: usize,
    /// Pieces that ride in another piece's lattice (layered clothing, eyes, hair cards: see
    /// [`super::passenger_pieces`]); they have no lattice vertices of their own.
    pub passengers: usize,
    /// Per piece (numbered as [`surface_pieces`] numbers them), the piece whose lattice it
    /// rides in, `None` for a piece with its own.
    pub passenger_of: Vec<Option<usize>>,
    /// Lattice vertices duplicated at hinges (cubes touching only along an edge or a corner).
    pub hinge_splits: usize,
    /// The surface piece of every lattice vertex.
    pub lattice_piece: Vec<usize>,
    /// Per lattice vertex, whether it lies outside its piece's surface (generalized winding
    /// number `|w| ≤ ½`): corners of the cubes the surface crosses that stick out of the body.
    /// The body's own boundary, on which the default leak is zero, is the surface, not the
    /// lattice's boundary (see [`crate::leak::default_momentum_weights_in_body`]).
    pub outside_surface: Vec<bool>,
    /// Per lattice vertex, the share of the body's material it stands for (see
    /// [`super::material_share`]): 1 inside, `½ + s/h` near the surface, down to
    /// [`super::MIN_MATERIAL_SHARE`] outside it.
    pub material_share: Vec<f64>,
}

impl Embedding {
    /// `out_s = Σ_k b_k u_{c_k}` for every surface vertex: a lattice field (`n_l × 3`
    /// row-major) mapped to the surface (`n_s × 3` row-major), added into `out`.
    pub(crate) fn add_to_surface(&self, lattice_field: &[f64], out: &mut [f64]) {
        add_embedded(&self.corners, &self.barycentric, 3, lattice_field, out);
    }
}

/// `out_p += Σ_c b_c field(corner_c)` for points embedded at `corners` with barycentric
/// weights `barycentric`; `field` is `n × d` and `out` `m × d`, both row-major.
pub(crate) fn add_embedded(corners: &[[usize; 4]], barycentric: &[[f64; 4]], d: usize, field: &[f64], out: &mut [f64]) {
    for (s, (c, b)) in corners.iter().zip(barycentric).enumerate() {
        for i in 0..d {
            out[d * s + i] += (0..4).map(|k| b[k] * field[d * c[k] + i]).sum::<f64>();
        }
    }
}

/// The cube grid of a lattice: `dims` cubes of side `cell` from `origin`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CubeGrid {
    pub origin: [f64; 3],
    pub cell: f64,
    pub dims: [usize; 3],
}

impl CubeGrid {
    /// `resolution` cells along the longest side of the bounding box of `vertices`, padded by
    /// one and a half cells on every side: the surface's extreme points then lie mid-cell, not
    /// on a cube face, so float rounding of the input (a host's float32 positions through an
    /// object transform, ~1e-7 relative) never moves them into another cube and the lattice
    /// built around a surface is the same for inputs that differ by rounding (with one cell of
    /// padding the lowest point sat exactly on the face between the first two layers of cubes).
    pub fn around(vertices: &[f64], resolution: usize) -> Result<Self> {
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
        Ok(Self {
            origin: [lo[0] - 1.5 * cell, lo[1] - 1.5 * cell, lo[2] - 1.5 * cell],
            cell,
            dims: std::array::from_fn(|i| ((hi[i] - lo[i]) / cell).ceil() as usize + 3),
        })
    }
    pub fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }
    pub(crate) fn coords(&self, k: usize) -> [usize; 3] {
        let d = self.dims;
        [k % d[0], (k / d[0]) % d[1], k / (d[0] * d[1])]
    }
    /// Calls `f` with every cube of the grid at Chebyshev distance exactly `r` from cube `c`
    /// (`r = 0`: `c` itself), in z, y, x order.
    pub(crate) fn for_each_in_shell(&self, c: [usize; 3], r: usize, mut f: impl FnMut([usize; 3])) {
        let r = r as isize;
        for dz in -r..=r {
            for dy in -r..=r {
                for dx in -r..=r {
                    if dx.abs().max(dy.abs()).max(dz.abs()) != r {
                        continue;
                    }
                    let q = [c[0] as isize + dx, c[1] as isize + dy, c[2] as isize + dz];
                    if (0..3).any(|i| q[i] < 0 || q[i] >= self.dims[i] as isize) {
                        continue;
                    }
                    f([q[0] as usize, q[1] as usize, q[2] as usize]);
                }
            }
        }
    }

    /// The cube holding point `p` (clamped to the grid).
    pub(crate) fn locate(&self, p: &[f64]) -> [usize; 3] {
        std::array::from_fn(|i| (((p[i] - self.origin[i]) / self.cell).floor().max(0.0) as usize).min(self.dims[i] - 1))
    }
}

/// The cubes a closed (or nearly closed) surface piece occupies, restricted to the sub-box
/// `lo..hi` (cube coordinates, inclusive) of the grid: `(cube index, touches the surface)`.
///
/// A cube is kept when the bounding box of one of the piece's triangles overlaps it, or when it
/// lies inside: the other cubes of the box form connected components (6-neighbourhood), and a
/// component is inside when the generalized winding number of the piece (|w| > ½, so open or
/// inconsistently oriented meshes still work) at a majority of up to seven of its cube centres
/// says so.
pub(crate) fn occupied_cubes(
    grid: &CubeGrid,
    vertices: &[f64],
    triangles: &[usize],
    lo: [usize; 3],
    hi: [usize; 3],
) -> Vec<(usize, bool)> {
    let sd: [usize; 3] = std::array::from_fn(|i| hi[i] - lo[i] + 1);
    let local = |c: [usize; 3]| ((c[2] - lo[2]) * sd[1] + (c[1] - lo[1])) * sd[0] + (c[0] - lo[0]);
    let n_local = sd[0] * sd[1] * sd[2];
    let mut touching = vec![false; n_local];
    for t in triangles.chunks_exact(3) {
        let mut a = [f64::INFINITY; 3];
        let mut b = [f64::NEG_INFINITY; 3];
        for &v in t {
            for i in 0..3 {
                a[i] = a[i].min(vertices[3 * v + i]);
                b[i] = b[i].max(vertices[3 * v + i]);
            }
        }
        let (ca, cb) = (grid.locate(&a), grid.locate(&b));
        for z in ca[2]..=cb[2] {
            for y in ca[1]..=cb[1] {
                for x in ca[0]..=cb[0] {
                    touching[local([x, y, z])] = true;
                }
            }
        }
    }
    let coords = |k: usize| -> [usize; 3] {
        [
            lo[0] + k % sd[0],
            lo[1] + (k / sd[0]) % sd[1],
            lo[2] + k / (sd[0] * sd[1]),
        ]
    };
    let mut component = vec![usize::MAX; n_local];
    let mut members: Vec<Vec<usize>> = Vec::new();
    for seed in 0..n_local {
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
            let c = coords(k);
            for axis in 0..3 {
                for step in [-1i64, 1] {
                    let x = c[axis] as i64 + step;
                    if x < lo[axis] as i64 || x > hi[axis] as i64 {
                        continue;
                    }
                    let mut nb = c;
                    nb[axis] = x as usize;
                    let kn = local(nb);
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
                    let c = coords(k);
                    let p = std::array::from_fn(|i| grid.origin[i] + (c[i] as f64 + 0.5) * grid.cell);
                    winding_number(vertices, triangles, p).abs() > 0.5
                })
                .count();
            2 * votes > picks.len()
        })
        .collect();
    (0..n_local)
        .filter(|&k| touching[k] || component_inside[component[k]])
        .map(|k| (grid.index(coords(k)), touching[k]))
        .collect()
}

/// Connected pieces of a triangle surface (triangles sharing a vertex): the piece of every
/// vertex (`usize::MAX` for a vertex no triangle uses) and the number of pieces.
pub fn surface_pieces(n_vertices: usize, triangles: &[usize]) -> (Vec<usize>, usize) {
    let mut parent: Vec<usize> = (0..n_vertices).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for t in triangles.chunks_exact(3) {
        for k in 1..3 {
            let (a, b) = (find(&mut parent, t[0]), find(&mut parent, t[k]));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut used = vec![false; n_vertices];
    triangles.iter().for_each(|&v| used[v] = true);
    let mut label = vec![usize::MAX; n_vertices];
    let mut root_label = vec![usize::MAX; n_vertices];
    let mut count = 0;
    for v in 0..n_vertices {
        if !used[v] {
            continue;
        }
        let r = find(&mut parent, v);
        if root_label[r] == usize::MAX {
            root_label[r] = count;
            count += 1;
        }
        label[v] = root_label[r];
    }
    (label, count)
}

/// Embeds a triangle surface (`vertices` `n × 3`, `triangles` `t × 3`) in a lattice with
/// `resolution` cells along the longest side of its bounding box (padded by one and a half cells, see [`CubeGrid::around`]).
///
/// Each connected piece of the surface (triangles sharing vertices) gets its own copy of every
/// cube it occupies (see [`occupied_cubes`]: touched by one of its triangles' bounding boxes,
/// or inside it by generalized winding number): a cube holding two pieces is duplicated, one
/// copy per piece (virtual nodes), so separate pieces (the parts of a robot) are never glued by
/// the lattice. Copies of the same piece share their corners; cubes are split into the six
/// tetrahedra around their main diagonal, which conform across faces. Every surface vertex is
/// embedded in its own piece's copy, except the vertices of passengers (open shells, overlapping
/// or small pieces near a larger one: clothing, eyes, hair cards, see
/// [`super::passenger_pieces`]), which are embedded in their host's copy.
pub(crate) fn embed_surface(vertices: &[f64], triangles: &[usize], resolution: usize) -> Result<Embedding> {
    check_surface(vertices, triangles, resolution)?;
    let n = vertices.len() / 3;
    let grid = CubeGrid::around(vertices, resolution)?;
    let (piece, piece_tris) = piece_triangles(n, triangles);
    let n_pieces = piece_tris.len();
    // Occupied cubes of each piece, in the piece's bounding box padded by one cube.
    let mut occupied = occupied_cubes_per_piece(&grid, vertices, &piece_tris);
    let hosts = passenger_hosts(&grid, vertices, &piece_tris, &occupied);
    for (cubes, host) in occupied.iter_mut().zip(&hosts) {
        if host.is_some() {
            cubes.clear();
        }
    }
    // The piece whose lattice copy embeds each vertex (a vertex no triangle uses goes with
    // piece 0's: it only needs some enclosing cube).
    let embed_piece: Vec<usize> = piece
        .iter()
        .map(|&p| {
            let p = if p == usize::MAX { 0 } else { p };
            hosts.get(p).copied().flatten().unwrap_or(p)
        })
        .collect();
    crate::progress::check()?;

    let cell = grid.cell;
    // Before building anything large: count the lattice and refuse it if its simulation would
    // not fit in memory (estimated for the fast solver, the larger of the two).
    check_lattice_budget(&grid, &occupied, resolution)?;
    // Lattice vertices (corners of kept cubes, one set per piece) and Kuhn tetrahedra.
    let mut kuhn = kuhn_lattice(&grid, &occupied);
    let (lattice_piece, hinges, surface_corner) = split_hinges_by_piece(&mut kuhn);
    let anchored = anchored_positions(&grid, vertices, &piece, &piece_tris, &hosts);
    let (corners, barycentric) = barycentric_coordinates(&anchored, &embed_piece, &grid, &kuhn)?;
    let lattice = oriented_lattice(kuhn.vertices, kuhn.tets)?;
    crate::progress::check()?;
    let outside_surface = outside_flags(&lattice, &surface_corner, &lattice_piece, vertices, &piece_tris);
    let material_share = super::material_share::material_shares(
        lattice.vertices(),
        cell,
        &surface_corner,
        &outside_surface,
        &lattice_piece,
        &piece_tris,
        vertices,
    );
    Ok(Embedding {
        outside_surface,
        material_share,
        lattice,
        corners,
        barycentric,
        surface_lattice_vertices: surface_corner,
        cell,
        pieces: n_pieces,
        passengers: hosts.iter().filter(|h| h.is_some()).count(),
        passenger_of: hosts,
        hinge_splits: hinges,
        lattice_piece,
    })
}

/// Refuses a `resolution` outside 2..=400 cells, then a surface that is not triangles over its
/// vertices ([`check_triangles`]).
fn check_surface(vertices: &[f64], triangles: &[usize], resolution: usize) -> Result<()> {
    if !(2..=400).contains(&resolution) {
        return Err(OvertoneError::setting(
            "lattice_resolution",
            resolution,
            "must be between 2 and 400 cells",
        ));
    }
    check_triangles(vertices, triangles)
}

/// Refuses a surface without vertices, without a complete triangle, or with an index outside
/// its vertices (`vertices` `n × 3`, `triangles` `t × 3`).
pub(crate) fn check_triangles(vertices: &[f64], triangles: &[usize]) -> Result<()> {
    let n = vertices.len() / 3;
    if n == 0 || triangles.len() < 3 || triangles.len() % 3 != 0 || triangles.iter().any(|&i| i >= n) {
        return Err(OvertoneError::setting(
            "surface",
            "empty or invalid",
            "needs triangles over its vertices",
        ));
    }
    Ok(())
}

/// Each vertex's connected piece ([`surface_pieces`], of `n` vertices) and the triangles of
/// every piece (`t_p × 3` each, in surface order).
pub(crate) fn piece_triangles(n: usize, triangles: &[usize]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let (piece, n_pieces) = surface_pieces(n, triangles);
    let mut piece_tris: Vec<Vec<usize>> = vec![Vec::new(); n_pieces];
    for t in triangles.chunks_exact(3) {
        piece_tris[piece[t[0]]].extend_from_slice(t);
    }
    (piece, piece_tris)
}

/// The occupied cubes ([`occupied_cubes`]: `(cube index, touches the surface)`) of every
/// piece (its triangles `piece_tris[p]`), each searched in the piece's bounding box padded by
/// one cube; pieces in parallel.
pub(crate) fn occupied_cubes_per_piece(
    grid: &CubeGrid,
    vertices: &[f64],
    piece_tris: &[Vec<usize>],
) -> Vec<Vec<(usize, bool)>> {
    piece_tris
        .par_iter()
        .map(|tris| {
            let mut lo = [usize::MAX; 3];
            let mut hi = [0usize; 3];
            for &v in tris {
                let c = grid.locate(&vertices[3 * v..3 * v + 3]);
                for i in 0..3 {
                    lo[i] = lo[i].min(c[i].saturating_sub(1));
                    hi[i] = hi[i].max((c[i] + 1).min(grid.dims[i] - 1));
                }
            }
            occupied_cubes(grid, vertices, tris, lo, hi)
        })
        .collect()
}

/// The six Kuhn tetrahedra of a cube: the axis order of the path from its corner 0 to 7.
const PATHS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];

/// Index of the grid corner `c` (corner coordinates, `dims + 1` per axis).
fn corner_key(grid: &CubeGrid, c: [usize; 3]) -> usize {
    let cd = [grid.dims[0] + 1, grid.dims[1] + 1, grid.dims[2] + 1];
    (c[2] * cd[1] + c[1]) * cd[0] + c[0]
}

/// Refuses the lattice of `occupied` (kept cubes per piece) when its simulation would not fit
/// in memory: counts its vertices (corners, one set per piece) and tetrahedra (6 per cube) and
/// asks [`check_lattice_memory`] for the fast solver.
fn check_lattice_budget(grid: &CubeGrid, occupied: &[Vec<(usize, bool)>], resolution: usize) -> Result<()> {
    let mut corners: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    let mut kept = 0;
    for (p, cubes) in occupied.iter().enumerate() {
        for &(k, _) in cubes {
            kept += 1;
            let c = grid.coords(k);
            for o in 0..8 {
                corners.insert((
                    corner_key(grid, [c[0] + (o & 1), c[1] + ((o >> 1) & 1), c[2] + (o >> 2)]),
                    p,
                ));
            }
        }
    }
    check_lattice_memory(
        corners.len(),
        6 * kept,
        resolution,
        LatticeSolver::Fast,
        available_memory(),
    )
}

/// The lattice before hinge splitting and orientation.
struct KuhnLattice {
    /// Lattice vertex positions, `n_l × 3` row-major.
    vertices: Vec<f64>,
    /// Kuhn tetrahedra, `e × 4` (6 per kept cube, in [`PATHS`] order, corners unswapped).
    tets: Vec<usize>,
    /// (corner key, piece) -> lattice vertex.
    corner_id: std::collections::HashMap<(usize, usize), usize>,
    /// (cube, piece) -> its first tet.
    first_tet: std::collections::HashMap<(usize, usize), usize>,
    /// Tets of the cubes that touch the surface.
    touched_tets: Vec<usize>,
}

/// Lattice vertices (corners of the kept cubes `occupied`, one set per piece, at
/// `origin + corner · cell`) and the six Kuhn tetrahedra of every kept cube.
fn kuhn_lattice(grid: &CubeGrid, occupied: &[Vec<(usize, bool)>]) -> KuhnLattice {
    let cell = grid.cell;
    let mut corner_id: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
    let mut lattice_vertices = Vec::new();
    let mut tets = Vec::new();
    let origin = grid.origin;
    let mut id_of = |c: [usize; 3], p: usize, lv: &mut Vec<f64>| -> usize {
        *corner_id.entry((corner_key(grid, c), p)).or_insert_with(|| {
            lv.extend((0..3).map(|i| origin[i] + c[i] as f64 * cell));
            lv.len() / 3 - 1
        })
    };
    // (cube, piece) -> its first tet (6 Kuhn tets in PATHS order, corners unswapped).
    let mut first_tet: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
    let mut touched_tets: Vec<usize> = Vec::new();
    for (p, cubes) in occupied.iter().enumerate() {
        for &(k, touching) in cubes {
            let c0 = grid.coords(k);
            first_tet.insert((k, p), tets.len() / 4);
            if touching {
                touched_tets.extend(tets.len() / 4..tets.len() / 4 + 6);
            }
            for path in PATHS {
                let mut c = c0;
                let mut tet = [id_of(c, p, &mut lattice_vertices), 0, 0, 0];
                for (s, &axis) in path.iter().enumerate() {
                    c[axis] += 1;
                    tet[s + 1] = id_of(c, p, &mut lattice_vertices);
                }
                tets.extend(tet);
            }
        }
    }
    KuhnLattice {
        vertices: lattice_vertices,
        tets,
        corner_id,
        first_tet,
        touched_tets,
    }
}

/// Splits the lattice's hinges ([`split_hinges`]) and returns the piece of every lattice
/// vertex (a copy made at a hinge goes with the tets that use it), the number of copies, and
/// the sorted corners of the tets that touch the surface.
fn split_hinges_by_piece(kuhn: &mut KuhnLattice) -> (Vec<usize>, usize, Vec<usize>) {
    let KuhnLattice {
        vertices: lattice_vertices,
        tets,
        corner_id,
        touched_tets,
        ..
    } = kuhn;
    // Piece of every lattice vertex (corners are created per piece).
    let mut lattice_piece = vec![0usize; lattice_vertices.len() / 3];
    for (&(_, p), &id) in corner_id.iter() {
        lattice_piece[id] = p;
    }
    let before = lattice_vertices.len() / 3;
    let hinges = split_hinges(lattice_vertices, tets);
    // A copy made at a hinge belongs to the piece of the tets that use it.
    lattice_piece.resize(lattice_vertices.len() / 3, 0);
    for e in 0..tets.len() / 4 {
        let owner = tets[4 * e..4 * e + 4]
            .iter()
            .find(|&&v| v < before)
            .map(|&v| lattice_piece[v]);
        if let Some(p) = owner {
            for &v in &tets[4 * e..4 * e + 4] {
                if v >= before {
                    lattice_piece[v] = p;
                }
            }
        }
    }
    let mut surface_corner: Vec<usize> = touched_tets
        .iter()
        .flat_map(|&e| tets[4 * e..4 * e + 4].to_vec())
        .collect();
    surface_corner.sort_unstable();
    surface_corner.dedup();
    (lattice_piece, hinges, surface_corner)
}

/// Per surface vertex (`vertices` `n × 3`, `embed_piece`: the piece whose lattice copy holds
/// it), the four corners of the Kuhn tet of that piece's copy of its cube, and its barycentric
/// weights there. A vertex whose cube that piece does not occupy (a passenger's vertex off its
/// host) takes the host cube nearest to it, its coordinates clamped into that cube: it moves
/// with the nearest point of the host's lattice.
fn barycentric_coordinates(
    vertices: &[f64],
    embed_piece: &[usize],
    grid: &CubeGrid,
    kuhn: &KuhnLattice,
) -> Result<(Vec<[usize; 4]>, Vec<[f64; 4]>)> {
    let n = vertices.len() / 3;
    let (origin, cell) = (grid.origin, grid.cell);
    let (first_tet, tets) = (&kuhn.first_tet, &kuhn.tets);
    // Barycentric coordinates: in the cube of p (its piece's copy), the Kuhn tet follows the
    // axes sorted by descending local coordinate; its corners are read from the tet itself (so
    // a corner split at a hinge is the copy this tet uses).
    let mut corners = Vec::with_capacity(n);
    let mut barycentric = Vec::with_capacity(n);
    for (v, p) in vertices.chunks_exact(3).enumerate() {
        let pc = embed_piece[v];
        let mut c0 = grid.locate(p);
        if !first_tet.contains_key(&(grid.index(c0), pc)) {
            if let Some(c) = nearest_cube_of(grid, first_tet, pc, p) {
                c0 = c;
            }
        }
        let f: [f64; 3] = std::array::from_fn(|i| ((p[i] - origin[i]) / cell - c0[i] as f64).clamp(0.0, 1.0));
        let mut axes = [0usize, 1, 2];
        axes.sort_by(|&a, &b| f[b].total_cmp(&f[a]).then(a.cmp(&b)));
        let path = PATHS
            .iter()
            .position(|q| *q == axes)
            .expect("every axis order is a path");
        let Some(&base) = first_tet.get(&(grid.index(c0), pc)) else {
            return Err(OvertoneError::setting(
                "surface",
                "not embedded",
                format!("surface vertex {v} fell outside the lattice (a vertex used by no triangle, away from the surface?)"),
            ));
        };
        let e = base + path;
        let ids = [tets[4 * e], tets[4 * e + 1], tets[4 * e + 2], tets[4 * e + 3]];
        let w = [
            1.0 - f[axes[0]],
            f[axes[0]] - f[axes[1]],
            f[axes[1]] - f[axes[2]],
            f[axes[2]],
        ];
        corners.push(ids);
        barycentric.push(w);
    }
    Ok((corners, barycentric))
}

/// The cube of `piece`'s lattice copy nearest to point `p` (distance from `p` to the cube),
/// searched in growing shells of cubes around `p`'s cube (ties: lower cube index); `None` when
/// the piece has no cube.
fn nearest_cube_of(
    grid: &CubeGrid,
    first_tet: &std::collections::HashMap<(usize, usize), usize>,
    piece: usize,
    p: &[f64],
) -> Option<[usize; 3]> {
    let c = grid.locate(p);
    let dist2 = |q: [usize; 3]| -> f64 {
        (0..3)
            .map(|i| {
                let lo = grid.origin[i] + q[i] as f64 * grid.cell;
                let d = (lo - p[i]).max(p[i] - (lo + grid.cell)).max(0.0);
                d * d
            })
            .sum()
    };
    let max_r = grid.dims.iter().copied().max().unwrap_or(0);
    let mut best: Option<(f64, usize, [usize; 3])> = None;
    for r in 1..=max_r {
        grid.for_each_in_shell(c, r, |q| {
            let k = grid.index(q);
            if first_tet.contains_key(&(k, piece)) {
                let d = dist2(q);
                if best.is_none_or(|(bd, bk, _)| d < bd || (d == bd && k < bk)) {
                    best = Some((d, k, q));
                }
            }
        });
        // A cube in a later shell is at least r cells away along one axis.
        if let Some((bd, _, q)) = best {
            let next = r as f64 * grid.cell;
            if bd <= next * next {
                return Some(q);
            }
        }
    }
    best.map(|(_, _, q)| q)
}

/// The lattice mesh, each tet's last two corners swapped where its signed volume is negative.
fn oriented_lattice(lattice_vertices: Vec<f64>, mut tets: Vec<usize>) -> Result<SimplexMesh> {
    let probe = SimplexMesh::unchecked(3, lattice_vertices.clone(), tets.clone());
    for e in 0..tets.len() / 4 {
        if signed_volume(&probe, e) < 0.0 {
            tets.swap(4 * e + 2, 4 * e + 3);
        }
    }
    SimplexMesh::new(3, lattice_vertices, tets)
}

/// Per lattice vertex, whether it lies outside its piece's surface (winding number `|w| ≤ ½`
/// against `piece_tris` of its piece), checked for the corners of cubes the surface crosses
/// (`surface_corner`); the others are inside by construction.
fn outside_flags(
    lattice: &SimplexMesh,
    surface_corner: &[usize],
    lattice_piece: &[usize],
    vertices: &[f64],
    piece_tris: &[Vec<usize>],
) -> Vec<bool> {
    let n_pieces = piece_tris.len();
    let mut out = vec![false; lattice.n_vertices()];
    let trees: Vec<WindingTree> = piece_tris
        .par_iter()
        .map(|tris| WindingTree::new(vertices, tris))
        .collect();
    let flags: Vec<bool> = surface_corner
        .par_iter()
        .map(|&v| {
            let p = lattice.vertex(v);
            let tree = &trees[lattice_piece[v].min(n_pieces.saturating_sub(1))];
            tree.winding_number([p[0], p[1], p[2]]).abs() <= 0.5
        })
        .collect();
    for (&v, f) in surface_corner.iter().zip(flags) {
        out[v] = f;
    }
    out
}

/// Splits lattice vertices at hinges: the tets around a vertex fall into groups connected
/// through faces that contain the vertex; a vertex with several groups (cubes that touch only
/// along an edge or at a corner) gets one copy per group, so no two parts of the lattice are
/// joined by a single edge or vertex, a joint of zero stiffness. Returns the copies made.
fn split_hinges(vertices: &mut Vec<f64>, tets: &mut [usize]) -> usize {
    let nv = vertices.len() / 3;
    let ne = tets.len() / 4;
    let mut start = vec![0usize; nv + 1];
    for &v in tets.iter() {
        start[v + 1] += 1;
    }
    for v in 0..nv {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut incident = vec![0usize; tets.len()];
    for e in 0..ne {
        for k in 0..4 {
            let v = tets[4 * e + k];
            incident[fill[v]] = e;
            fill[v] += 1;
        }
    }
    let mut copies = 0;
    let mut parent: Vec<usize> = Vec::new();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for v in 0..nv {
        let around = &incident[start[v]..start[v + 1]];
        let m = around.len();
        if m < 2 {
            continue;
        }
        parent.clear();
        parent.extend(0..m);
        let mut faces: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        for (i, &e) in around.iter().enumerate() {
            let others: Vec<usize> = tets[4 * e..4 * e + 4].iter().copied().filter(|&w| w != v).collect();
            for (a, b) in [(others[0], others[1]), (others[0], others[2]), (others[1], others[2])] {
                let key = (a.min(b), a.max(b));
                match faces.get(&key) {
                    Some(&j) => {
                        let (ra, rb) = (find(&mut parent, i), find(&mut parent, j));
                        if ra != rb {
                            parent[ra.max(rb)] = ra.min(rb);
                        }
                    }
                    None => {
                        faces.insert(key, i);
                    }
                }
            }
        }
        let roots: Vec<usize> = (0..m).map(|i| find(&mut parent, i)).collect();
        let main = roots[0];
        let mut new_id: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for (i, &e) in around.iter().enumerate() {
            if roots[i] == main {
                continue;
            }
            let id = *new_id.entry(roots[i]).or_insert_with(|| {
                let x = [vertices[3 * v], vertices[3 * v + 1], vertices[3 * v + 2]];
                vertices.extend_from_slice(&x);
                copies += 1;
                vertices.len() / 3 - 1
            });
            for k in 0..4 {
                if tets[4 * e + k] == v {
                    tets[4 * e + k] = id;
                }
            }
        }
    }
    copies
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

    /// Two octahedra that overlap in space but share no vertex are two pieces: each has its
    /// own lattice copy (no lattice vertex or tet is shared), so the lattice is two connected
    /// components, each reproducing its own surface exactly.
    #[test]
    fn separate_pieces_are_not_glued() {
        let oct = |dx: f64| -> Vec<f64> {
            vec![
                1.0 + dx,
                0.0,
                0.0,
                -1.0 + dx,
                0.0,
                0.0,
                dx,
                1.0,
                0.0,
                dx,
                -1.0,
                0.0,
                dx,
                0.0,
                1.3,
                dx,
                0.0,
                -1.3,
            ]
        };
        let t1 = vec![0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        let mut v = oct(0.0);
        v.extend(oct(0.5));
        let mut t = t1.clone();
        t.extend(t1.iter().map(|&i| i + 6));
        let (piece, count) = surface_pieces(12, &t);
        assert_eq!(count, 2);
        assert!(piece[..6].iter().all(|&p| p == 0) && piece[6..].iter().all(|&p| p == 1));
        let e = embed_surface(&v, &t, 8).unwrap();
        assert_eq!(e.pieces, 2);
        let one = embed_surface(&oct(0.0), &t1, 8).unwrap();
        let two = embed_surface(&oct(0.5), &t1, 8).unwrap();
        // Same grid cell; together the copies hold exactly the vertices and tets of both.
        assert!(one.lattice.n_vertices() + two.lattice.n_vertices() >= e.lattice.n_vertices());
        assert!(e.lattice.n_elements() > one.lattice.n_elements().max(two.lattice.n_elements()));
        let a: std::collections::HashSet<usize> = e.corners[..6].iter().flatten().copied().collect();
        let b: std::collections::HashSet<usize> = e.corners[6..].iter().flatten().copied().collect();
        assert!(a.is_disjoint(&b));
        // No tet mixes the copies: label lattice vertices through the tets from piece 0.
        let lv = e.lattice.vertices();
        for (s, (c, w)) in e.corners.iter().zip(&e.barycentric).enumerate() {
            for i in 0..3 {
                let x: f64 = (0..4).map(|k| w[k] * lv[3 * c[k] + i]).sum();
                assert!((x - v[3 * s + i]).abs() < 1e-12);
            }
        }
        let mut side = vec![usize::MAX; e.lattice.n_vertices()];
        a.iter().for_each(|&i| side[i] = 0);
        b.iter().for_each(|&i| side[i] = 1);
        let mut changed = true;
        while changed {
            changed = false;
            for el in 0..e.lattice.n_elements() {
                let tet = e.lattice.element(el);
                let known: Vec<usize> = tet.iter().map(|&i| side[i]).filter(|&s| s != usize::MAX).collect();
                if let Some(&s0) = known.first() {
                    assert!(known.iter().all(|&s| s == s0), "a tet joins the two pieces");
                    for &i in tet {
                        if side[i] == usize::MAX {
                            side[i] = s0;
                            changed = true;
                        }
                    }
                }
            }
        }
    }

    /// Layered pieces ride in the body's lattice: an open cap 5% outside an octahedron (a
    /// shirt) and a small closed octahedron inside it (an eye) add no lattice of their own, and
    /// every cap vertex is embedded at the nearest point of the body's surface (the cap's apex
    /// at the body's apex, to 1e-12); the body alone gives the same lattice.
    #[test]
    fn layered_pieces_ride_in_the_body_lattice() {
        let oct = |s: f64, c: [f64; 3]| -> Vec<f64> {
            [
                [1.0, 0.0, 0.0],
                [-1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, -1.0, 0.0],
                [0.0, 0.0, 1.3],
                [0.0, 0.0, -1.3],
            ]
            .iter()
            .flat_map(|p| [c[0] + s * p[0], c[1] + s * p[1], c[2] + s * p[2]])
            .collect()
        };
        let faces = [0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        // Body (vertices 0-5), cap: the upper four faces of a 1.05x octahedron (6-11, the
        // lower apex unused by the cap is left out of the triangles), eye (12-17).
        let mut v = oct(1.0, [0.0; 3]);
        v.extend(oct(1.05, [0.0; 3]));
        v.extend(oct(0.08, [0.3, 0.0, 0.6]));
        let mut t: Vec<usize> = faces.to_vec();
        t.extend(faces[..12].iter().map(|&i| i + 6));
        t.extend(faces.iter().map(|&i| i + 12));
        // The cap's lower apex (vertex 11) is used by no triangle: drop it.
        let v: Vec<f64> = v[..33].iter().chain(&v[36..]).copied().collect();
        let t: Vec<usize> = t.iter().map(|&i| if i > 11 { i - 1 } else { i }).collect();
        let e = embed_surface(&v, &t, 12).unwrap();
        assert_eq!((e.pieces, e.passengers), (3, 2));
        // The lattice of the body alone, on the same grid (the grid comes from the bounding
        // box of all vertices: the cap is the largest; embed the body with the cap's extent).
        let body_only = embed_surface(&v, &faces, 12).unwrap();
        assert_eq!(e.lattice.n_vertices(), body_only.lattice.n_vertices());
        assert_eq!(e.lattice.n_elements(), body_only.lattice.n_elements());
        let lv = e.lattice.vertices();
        let at = |s: usize| -> [f64; 3] {
            std::array::from_fn(|i| (0..4).map(|k| e.barycentric[s][k] * lv[3 * e.corners[s][k] + i]).sum())
        };
        let apex = at(6 + 4);
        assert!(
            (apex[0]).abs() < 1e-12 && apex[1].abs() < 1e-12 && (apex[2] - 1.3).abs() < 1e-12,
            "{apex:?}"
        );
        // Cap vertices land on the body's surface: |x| + |y| + |z|/1.3 = 1 (the octahedron).
        for s in 6..11 {
            let p = at(s);
            let f = p[0].abs() + p[1].abs() + p[2].abs() / 1.3;
            assert!((f - 1.0).abs() < 1e-9, "cap vertex {s}: {p:?}");
        }
        // The eye's vertices are embedded where they are (inside the body).
        for s in 11..17 {
            let p = at(s);
            assert!((0..3).all(|i| (p[i] - v[3 * s + i]).abs() < 1e-9), "eye vertex {s}");
        }
    }
}
