//! Wavefront OBJ reader: vertex positions and faces (polygons fan-triangulated).

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::tokens::read_text;

/// Contents of an OBJ file, 0-based.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjMesh {
    /// `n × 3`, row-major (a fourth `w` coordinate, if present, is ignored).
    pub vertices: Vec<f64>,
    /// `m × 3`, row-major: each face with `k` corners becomes `k − 2` triangles (fan from the
    /// first corner).
    pub triangles: Vec<usize>,
}

/// Reads `v` and `f` lines; corners may be `i`, `i/t`, `i//n` or `i/t/n`, 1-based or negative
/// (relative to the vertices read so far). Other statements (`vn`, `vt`, `o`, `g`, `s`,
/// `usemtl`, `mtllib`, comments) are ignored.
pub fn read_obj(path: &Path) -> Result<ObjMesh> {
    parse_obj(path, &read_text(path)?)
}

/// Parses the text of an OBJ file (`path` only names it in errors); see [`read_obj`].
pub(crate) fn parse_obj(path: &Path, text: &str) -> Result<ObjMesh> {
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let mut it = line.split_whitespace();
        let err = |reason: String| OvertoneError::parse(path, format!("line {}: {reason}", ln + 1));
        match it.next() {
            Some("v") => {
                for k in 0..3 {
                    let t = it
                        .next()
                        .ok_or_else(|| err(format!("vertex needs 3 coordinates, found {k}")))?;
                    let x: f64 = t.parse().map_err(|_| err(format!("`{t}` is not a number")))?;
                    if !x.is_finite() {
                        return Err(err(format!("coordinate `{t}` is not finite")));
                    }
                    vertices.push(x);
                }
            }
            Some("f") => {
                let n = vertices.len() / 3;
                let mut corners = Vec::new();
                for t in it {
                    let head = t.split('/').next().unwrap_or("");
                    let i: i64 = head
                        .parse()
                        .map_err(|_| err(format!("face corner `{t}` has no vertex index")))?;
                    let idx = if i > 0 {
                        i as usize - 1
                    } else if i < 0 && (-i) as usize <= n {
                        (n as i64 + i) as usize
                    } else {
                        return Err(err(format!(
                            "face corner index {i} is invalid (1-based, or negative relative)"
                        )));
                    };
                    if idx >= n {
                        return Err(err(format!(
                            "face uses vertex {} but only {n} are defined so far",
                            idx + 1
                        )));
                    }
                    corners.push(idx);
                }
                if corners.len() < 3 {
                    return Err(err(format!("a face needs at least 3 corners, found {}", corners.len())));
                }
                for k in 1..corners.len() - 1 {
                    triangles.extend([corners[0], corners[k], corners[k + 1]]);
                }
            }
            _ => {}
        }
    }
    if vertices.is_empty() {
        return Err(OvertoneError::parse(path, "no vertices (`v` lines)"));
    }
    Ok(ObjMesh { vertices, triangles })
}
