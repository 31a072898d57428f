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
