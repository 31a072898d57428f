//! A display surface (e.g. the reference release's `.obj`) driven by a scene's tet mesh.

use crate::embed::{embed_points_in_tets, TetEmbedding};
use crate::error::{OvertoneError, Result};
use crate::scene::{Normalisation, Scene};

/// Largest accepted distance of a display vertex from the tet mesh, as a fraction of the tet
/// mesh's bounding-box diagonal. The reference scenes' surfaces stay within 0.1 % of it.
pub(crate) const DISPLAY_SURFACE_MAX_DISTANCE: f64 = 0.02;

/// Display vertices carried by the scene's tets: each vertex `s` is written as
/// `X_s = Σ_k b_k X_{c_k}` in its containing tet (or, slightly outside, its closest tet, whose
/// barycentric coordinates extend that tet's affine map), and every frame's final positions
/// `x = J p + u_c` and displacements `u_c` are carried by the same weights. The display vertices
/// are given in the file units of the scene's sources; they are mapped into the scene's
/// normalised frame for the embedding and back for the output, so a point cache plays on the
/// `.obj` as it is.
#[derive(Clone, Debug)]
pub struct DisplaySurface {
    pub embedding: TetEmbedding,
    normalisation: Normalisation,
    /// Things a TD should know (vertices outside the tet mesh), for the report.
    pub warnings: Vec<String>,
}

impl DisplaySurface {
    /// Embeds `vertices` (`n_s × 3` row-major, the units of the files the scene was read from)
    /// in the scene's tet mesh. Refuses 2D scenes and vertices farther than
    /// [`DISPLAY_SURFACE_MAX_DISTANCE`] × the mesh's diagonal.
    pub fn new(scene: &Scene, vertices: &[f64]) -> Result<Self> {
        if scene.mesh.dim() != 3 {
            return Err(OvertoneError::Unsupported(format!(
                "scene `{}` is 2D; a display surface needs a 3D tet mesh",
                scene.name
            )));
        }
        let normalisation = scene.normalisation.unwrap_or(Normalisation::similarity([0.0; 3], 1.0));
        let mut local = vec![0.0; vertices.len()];
        for (x, o) in vertices.chunks_exact(3).zip(local.chunks_exact_mut(3)) {
            normalisation.to_scene(x, o);
        }
        let (lo, hi) = crate::mesh::bounding_box(scene.mesh.vertices());
        let diag = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
        let embedding = embed_points_in_tets(&scene.mesh, &local, DISPLAY_SURFACE_MAX_DISTANCE * diag)?;
        let mut warnings = Vec::new();
        if embedding.outside > 0 {
            warnings.push(format!(
                "{} of {} display vertices lie outside the tet mesh (at most {:.2e} of its diagonal); each follows its closest tet",
                embedding.outside,
                embedding.n_points(),
                embedding.max_distance / diag
            ));
        }
        Ok(Self {
            embedding,
            normalisation,
            warnings,
        })
    }

    /// Number of display vertices.
    pub fn n_vertices(&self) -> usize {
        self.embedding.n_points()
    }

    /// Display positions (file units, `n_s × 3`) from the scene's final positions of one frame
    /// (`n × 3` row-major, scene units).
    pub fn positions(&self, frame: &[f64], out: &mut [f64]) {
        self.embedding.interpolate(frame, 3, 3, out);
        for x in out.chunks_exact_mut(3) {
            let v = [x[0], x[1], x[2]];
            self.normalisation.to_file(&v, x);
        }
    }

    /// Display displacements (file units, `n_s × 3`) from the scene's complementary
    /// displacement of one frame (`n × 3` row-major, scene units).
    pub fn displacements(&self, disp: &[f64], out: &mut [f64]) {
        self.embedding.interpolate(disp, 3, 3, out);
        for x in out.chunks_exact_mut(3) {
            let u = [x[0], x[1], x[2]];
            self.normalisation.vector_to_file(&u, x);
        }
    }
}
