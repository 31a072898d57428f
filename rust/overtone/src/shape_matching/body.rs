//! A shape-matching body: particles (rest positions and masses), regions, and the surface to
//! draw, built from a tetrahedral mesh or read from a `.mesh` / `.obj` file.

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::fem::lumped_mass;
use crate::io::{read_medit, read_obj};
use crate::mesh::{boundary_facets, element_volumes, SimplexMesh};
use crate::shape_matching::Regions;

/// Particles and regions of a body.
#[derive(Clone, Debug)]
pub struct Body {
    /// `n × 3` row-major rest positions.
    pub rest: Vec<f64>,
    /// `n` particle masses.
    pub masses: Vec<f64>,
    /// The overlapping regions.
    pub regions: Regions,
    /// Surface triangles (`k × 3`, 0-based, outward), for drawing and caches.
    pub surface: Vec<usize>,
}

impl Body {
    /// Particles at the vertices of a tetrahedral mesh, masses lumped from the elements
    /// (`density × volume / 4` per tet corner), `rings`-ring regions over the mesh edges.
    pub fn from_tet_mesh(mesh: &SimplexMesh, density: f64, rings: usize) -> Result<Self> {
        if mesh.dim() != 3 {
            return Err(OvertoneError::Unsupported(
                "shape matching is implemented in 3D; give a tetrahedral mesh".into(),
            ));
        }
        if !(density.is_finite() && density > 0.0) {
            return Err(OvertoneError::setting(
                "density",
                density,
                "must be a finite number > 0",
            ));
        }
        let masses = lumped_mass(mesh, &element_volumes(mesh), density);
        Ok(Self {
            rest: mesh.vertices().to_vec(),
            masses,
            regions: Regions::from_mesh(mesh, rings)?,
            surface: boundary_facets(mesh).into_iter().flatten().collect(),
        })
    }

    /// Particles on a `nx × ny × nz` lattice over `[0, size_x] × [0, size_y] × [0, size_z]`
    /// (particle `(k·ny + j)·nx + i`, as [`crate::mesh::tet_grid`]), each lattice cube's mass
    /// `density × volume` shared equally by its eight corners, and the lattice regions of
    /// FastLSM (the seed's reference [10]): region `r` is the block of particles within `rings`
    /// cubes of particle `r` along every axis (3 × 3 × 3 inside the body for one ring).
    ///
    /// Unlike the edge rings of [`from_tet_mesh`](Self::from_tet_mesh), whose cube diagonals all
    /// run one way, these regions are mirror-symmetric, so a symmetric load does not twist the
    /// body (the held 9 × 5 × 5 cuboid: 7° of twist with tetrahedral rings, 0 with these).
    /// The surface is the lattice's tetrahedral boundary.
    pub fn from_lattice(nx: usize, ny: usize, nz: usize, size: [f64; 3], density: f64, rings: usize) -> Result<Self> {
        if !(density.is_finite() && density > 0.0) {
            return Err(OvertoneError::setting(
                "density",
                density,
                "must be a finite number > 0",
            ));
        }
        if nx < 2 || ny < 2 || nz < 2 || size.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(OvertoneError::setting(
                "lattice",
                format!("{nx} x {ny} x {nz} particles over {size:?}"),
                "needs at least 2 particles along each axis and finite sizes > 0",
            ));
        }
        let mesh = crate::mesh::tet_grid(nx, ny, nz, size[0], size[1], size[2])?;
        let index = |i: usize, j: usize, k: usize| (k * ny + j) * nx + i;
        let cube_mass = density * size[0] * size[1] * size[2] / ((nx - 1) * (ny - 1) * (nz - 1)) as f64;
        let mut masses = vec![0.0; nx * ny * nz];
        let mut cubes = Vec::with_capacity(8 * (nx - 1) * (ny - 1) * (nz - 1));
        for k in 0..nz - 1 {
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    for c in 0..8 {
                        let v = index(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2));
                        masses[v] += cube_mass / 8.0;
                        cubes.push(v);
                    }
                }
            }
        }
        Ok(Self {
            rest: mesh.vertices().to_vec(),
            masses,
            regions: Regions::from_cells(nx * ny * nz, &cubes, 8, rings)?,
            surface: boundary_facets(&mesh).into_iter().flatten().collect(),
        })
    }

    /// Particles at the vertices of a triangle surface, each of mass `particle_mass` (a surface
    /// has no volume to lump), `rings`-ring regions over the triangle edges. Flat patches make
    /// flat 1-rings, which are refused as degenerate regions: use 2 or more rings, or a
    /// tetrahedral mesh, for surfaces with flat parts.
    pub fn from_surface(vertices: &[f64], triangles: &[usize], particle_mass: f64, rings: usize) -> Result<Self> {
        if !(particle_mass.is_finite() && particle_mass > 0.0) {
            return Err(OvertoneError::setting(
                "particle mass",
                particle_mass,
                "must be a finite number > 0",
            ));
        }
        if vertices.is_empty() || vertices.len() % 3 != 0 {
            return Err(OvertoneError::size(
                "surface vertices",
                "a non-empty n x 3 array",
                vertices.len(),
            ));
        }
        let n = vertices.len() / 3;
        Ok(Self {
            rest: vertices.to_vec(),
            masses: vec![particle_mass; n],
            regions: Regions::from_cells(n, triangles, 3, rings)?,
            surface: triangles.to_vec(),
        })
    }

    /// Reads a body: a MEDIT `.mesh` with tetrahedra (volume masses from `density`), a `.mesh`
    /// with triangles only, or an `.obj` surface (then every particle weighs `density` mass
    /// units).
    pub fn load(path: &Path, density: f64, rings: usize) -> Result<Self> {
        match extension(path).as_str() {
            "mesh" => {
                let m = read_medit(path)?;
                if m.dim != 3 {
                    return Err(OvertoneError::parse(
                        path,
                        "shape matching needs a 3D mesh (Dimension 3)",
                    ));
                }
                if !m.tetrahedra.is_empty() {
                    let mesh = SimplexMesh::new(3, m.vertices, m.tetrahedra)
                        .map_err(|e| OvertoneError::parse(path, format!("invalid tetrahedral mesh: {e}")))?;
                    Self::from_tet_mesh(&mesh, density, rings)
                } else if !m.triangles.is_empty() {
                    Self::from_surface(&m.vertices, &m.triangles, density, rings)
                } else {
                    Err(OvertoneError::parse(path, "no Tetrahedra and no Triangles"))
                }
            }
            "obj" => {
                let m = read_obj(path)?;
                if m.triangles.is_empty() {
                    return Err(OvertoneError::parse(path, "no faces (`f` lines)"));
                }
                Self::from_surface(&m.vertices, &m.triangles, density, rings)
            }
            other => Err(OvertoneError::parse(
                path,
                format!("unknown extension `{other}`: give a .mesh or .obj file"),
            )),
        }
    }

    /// Number of particles.
    pub fn n_particles(&self) -> usize {
        self.masses.len()
    }
}

/// Reads only the vertex positions (`n × 3` row-major) of a `.mesh` or `.obj` file: an example
/// pose in the same vertex order as the body.
pub fn read_pose(path: &Path) -> Result<Vec<f64>> {
    match extension(path).as_str() {
        "mesh" => {
            let m = read_medit(path)?;
            if m.dim != 3 {
                return Err(OvertoneError::parse(path, "an example pose must be 3D"));
            }
            Ok(m.vertices)
        }
        "obj" => Ok(read_obj(path)?.vertices),
        other => Err(OvertoneError::parse(
            path,
            format!("unknown extension `{other}`: give a .mesh or .obj file"),
        )),
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}
