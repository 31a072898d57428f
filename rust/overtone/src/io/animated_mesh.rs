//! A triangle mesh of constant topology with positions per frame: what the Alembic and USD
//! cache writers take (the PC2/MDD writers need only the positions).

use crate::error::{InputError, OvertoneError, Result};

/// Largest count a cache may hold: Alembic and USD store face indices and counts as `int32`.
const MAX_I32: usize = i32::MAX as usize;

/// An animated mesh, borrowed from the bake that produced it.
///
/// * `triangles`: `t × 3` vertex indices, counter-clockwise seen from outside (glTF's and
///   Blender's convention; the Alembic writer reverses them to Alembic's clockwise winding);
/// * `frames`: one entry per sample, each `n × 3` positions row-major in the scene's units;
/// * sample `k` is frame `start_frame + k`, at time `(start_frame + k) / fps` seconds.
#[derive(Clone, Copy, Debug)]
pub struct AnimatedMesh<'a> {
    /// The mesh's name; each writer turns it into a valid object/prim name ([`usd_identifier`],
    /// [`alembic_object_name`]).
    pub name: &'a str,
    pub triangles: &'a [usize],
    pub frames: &'a [Vec<f64>],
    /// Frames per second of the samples (> 0).
    pub fps: f64,
    /// Frame number of the first sample (PC2's start frame: 1 for a bake of the whole clip).
    pub start_frame: f64,
}

impl AnimatedMesh<'_> {
    /// Number of points (vertices) of every frame.
    pub fn n_points(&self) -> usize {
        self.frames.first().map_or(0, |f| f.len() / 3)
    }

    /// Checks everything a cache file needs: at least one frame and one triangle, every frame
    /// `n × 3` and finite, every index below `n`, counts that fit `int32`, fps > 0 and a finite
    /// start frame.
    pub fn validate(&self) -> Result<()> {
        let n = self.n_points();
        if self.frames.is_empty() || n == 0 {
            return Err(OvertoneError::setting(
                "cache",
                "empty",
                "a cache needs at least one frame and one point",
            ));
        }
        if !(self.fps.is_finite() && self.fps > 0.0) {
            return Err(OvertoneError::setting("fps", self.fps, "frames per second must be > 0"));
        }
        if !self.start_frame.is_finite() {
            return Err(OvertoneError::setting(
                "start frame",
                self.start_frame,
                "must be finite",
            ));
        }
        if self.triangles.is_empty() || self.triangles.len() % 3 != 0 {
            return Err(OvertoneError::size(
                "cache triangles",
                "a non-empty multiple of 3 indices",
                self.triangles.len(),
            ));
        }
        if self.triangles.len() > MAX_I32 || n > MAX_I32 / 3 || self.frames.len() > MAX_I32 {
            return Err(OvertoneError::setting(
                "cache",
                format!("{n} points, {} triangles", self.triangles.len() / 3),
                "Alembic and USD count with 32-bit integers; split the mesh",
            ));
        }
        if let Some((t, &v)) = self.triangles.iter().enumerate().find(|(_, &v)| v >= n) {
            return Err(InputError::IndexOutOfRange {
                element: t / 3,
                vertex: v,
                n_vertices: n,
            }
            .into());
        }
        for (k, f) in self.frames.iter().enumerate() {
            if f.len() != 3 * n {
                return Err(OvertoneError::size(format!("cache frame {k}"), 3 * n, f.len()));
            }
            if let Some(i) = f.iter().position(|x| !x.is_finite() || x.abs() > f32::MAX as f64) {
                return Err(InputError::NonFinite {
                    what: format!("cache frame {k} (as 32-bit floats)"),
                    location: format!("vertex {}", i / 3),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Per frame, the axis-aligned bounds `[min x, min y, min z, max x, max y, max z]` of the
    /// positions as stored (`f32`).
    pub fn bounds(&self, frame: usize) -> [f64; 6] {
        let mut b = [
            f64::INFINITY,
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        for p in self.frames[frame].chunks_exact(3) {
            for a in 0..3 {
                let x = p[a] as f32 as f64;
                b[a] = b[a].min(x);
                b[a + 3] = b[a + 3].max(x);
            }
        }
        b
    }
}

/// A USD prim name for `name`: letters, digits and `_` only, not starting with a digit (other
/// characters become `_`; an empty name becomes `mesh`).
pub(crate) fn usd_identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() {
        s = "mesh".into();
    }
    if s.as_bytes()[0].is_ascii_digit() {
        s.insert(0, '_');
    }
    s
}

/// An Alembic object name for `name`: `/` (the path separator) and control characters become
/// `_`; an empty name becomes `mesh`.
pub(crate) fn alembic_object_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect();
    if s.is_empty() {
        "mesh".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_valid() {
        assert_eq!(usd_identifier("Cesium Man.001"), "Cesium_Man_001");
        assert_eq!(usd_identifier("3d"), "_3d");
        assert_eq!(usd_identifier(""), "mesh");
        assert_eq!(alembic_object_name("a/b"), "a_b");
        assert_eq!(alembic_object_name(""), "mesh");
    }

    #[test]
    fn validation_names_the_fault() {
        let frames = vec![vec![0.0; 9]];
        let ok = AnimatedMesh {
            name: "t",
            triangles: &[0, 1, 2],
            frames: &frames,
            fps: 24.0,
            start_frame: 1.0,
        };
        assert!(ok.validate().is_ok());
        let bad_index = AnimatedMesh {
            triangles: &[0, 1, 3],
            ..ok
        };
        assert!(matches!(
            bad_index.validate(),
            Err(OvertoneError::Input(InputError::IndexOutOfRange { vertex: 3, .. }))
        ));
        let nan = vec![vec![0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
        let bad_value = AnimatedMesh { frames: &nan, ..ok };
        assert!(matches!(
            bad_value.validate(),
            Err(OvertoneError::Input(InputError::NonFinite { .. }))
        ));
        let bad_fps = AnimatedMesh { fps: 0.0, ..ok };
        assert!(matches!(bad_fps.validate(), Err(OvertoneError::Setting(_))));
        let ragged = vec![vec![0.0; 9], vec![0.0; 6]];
        let bad_frame = AnimatedMesh { frames: &ragged, ..ok };
        assert!(matches!(
            bad_frame.validate(),
            Err(OvertoneError::Input(InputError::Size { .. }))
        ));
    }
}
