//! The cache format of `--out`, chosen by its extension, and the one call that writes it.

use std::path::Path;

use anyhow::{bail, Result};
use overtone::io::{AnimatedMesh, UpAxis};

/// The formats a bake writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheFormat {
    /// Point Cache 2 (Blender's Mesh Cache modifier, 3ds Max, Maya).
    Pc2,
    /// LightWave MDD (Blender's Mesh Cache modifier).
    Mdd,
    /// Alembic, Ogawa container, one AbcGeom PolyMesh (Blender's Mesh Sequence Cache, Maya's
    /// AbcImport, Houdini).
    Alembic,
    /// USD as text.
    Usda,
    /// USD in the binary crate format (`.usdc`, and `.usd`).
    Usdc,
}

/// The extensions `--out` accepts, for messages.
pub const EXTENSIONS: &str = ".pc2, .mdd, .abc, .usda, .usdc, .usd (binary)";

impl CacheFormat {
    /// The format named by `path`'s extension (case-insensitive); anything else is refused
    /// with the list, before any work is done.
    pub fn of(path: &Path) -> Result<Self> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "pc2" => Self::Pc2,
            "mdd" => Self::Mdd,
            "abc" => Self::Alembic,
            "usda" => Self::Usda,
            "usdc" | "usd" => Self::Usdc,
            _ => bail!(
                "{}: unknown cache format `.{ext}`; the extension of --out chooses it: {EXTENSIONS}",
                path.display()
            ),
        })
    }
}

/// Writes `mesh` to `path` in the format of its extension, atomically. PC2 caches say
/// `start_frame` and one sample per frame; the others carry `mesh.fps` as their time base.
pub fn write_cache(path: &Path, mesh: &AnimatedMesh) -> Result<()> {
    let n = mesh.n_points();
    match CacheFormat::of(path)? {
        CacheFormat::Pc2 => overtone::io::write_pc2(path, mesh.start_frame as f32, 1.0, n, mesh.frames)?,
        CacheFormat::Mdd => overtone::io::write_mdd(path, mesh.fps, n, mesh.frames)?,
        CacheFormat::Alembic => overtone::io::write_alembic(path, mesh)?,
        CacheFormat::Usda => overtone::io::write_usda(path, mesh, UpAxis::Y)?,
        CacheFormat::Usdc => overtone::io::write_usdc(path, mesh, UpAxis::Y)?,
    }
    Ok(())
}

/// The surface of a simulation mesh as triangles: a 2D mesh's own triangles, a tet mesh's
/// boundary faces (oriented outward).
pub fn surface_triangles(mesh: &overtone::mesh::SimplexMesh) -> Vec<usize> {
    if mesh.dim() == 2 {
        mesh.elements().to_vec()
    } else {
        overtone::mesh::boundary_facets(mesh).concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_choose_the_format() {
        assert_eq!(CacheFormat::of(Path::new("a/c.PC2")).unwrap(), CacheFormat::Pc2);
        assert_eq!(CacheFormat::of(Path::new("c.abc")).unwrap(), CacheFormat::Alembic);
        assert_eq!(CacheFormat::of(Path::new("c.usd")).unwrap(), CacheFormat::Usdc);
        assert_eq!(CacheFormat::of(Path::new("c.usda")).unwrap(), CacheFormat::Usda);
        let e = CacheFormat::of(Path::new("c.fbx")).unwrap_err().to_string();
        assert!(e.contains(".fbx") && e.contains(EXTENSIONS), "{e}");
        assert!(CacheFormat::of(Path::new("cache")).is_err());
    }
}
