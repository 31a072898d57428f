//! MEDIT `.mesh` (ASCII) reader: vertices and tetrahedra (or triangles for 2D meshes).

use std::path::Path;

use crate::error::Result;
use crate::io::tokens::{plausible_limit, read_text, Tokens};

/// Contents of a MEDIT file, 0-based.
#[derive(Clone, Debug, PartialEq)]
pub struct MeditMesh {
    /// Spatial dimension (the `Dimension` keyword; 3 if absent).
    pub dim: usize,
    /// `n × dim`, row-major.
    pub vertices: Vec<f64>,
    /// `m × 4`, row-major (may be empty).
    pub tetrahedra: Vec<usize>,
    /// `k × 3`, row-major, as listed (may include interior faces; may be empty).
    pub triangles: Vec<usize>,
}

/// Reads `MeshVersionFormatted`, `Dimension`, `Vertices`, `Triangles`, `Tetrahedra` (1-based
/// indices, one trailing reference number per entry); other keywords with a count are skipped
/// only if known (`Edges`, `Corners`, `Ridges`, `RequiredVertices`); `End` is optional. One
/// `Vertices` block, and `Dimension` (if any) before it.
pub fn read_medit(path: &Path) -> Result<MeditMesh> {
    parse_medit(path, &read_text(path)?)
}

/// Parses the text of a MEDIT file (`path` only names it in errors); see [`read_medit`].
pub fn parse_medit(path: &Path, text: &str) -> Result<MeditMesh> {
    let limit = plausible_limit(text);
    let mut t = Tokens::new(path, text);
    let mut mesh = MeditMesh {
        dim: 3,
        vertices: Vec::new(),
        tetrahedra: Vec::new(),
        triangles: Vec::new(),
    };
    let mut n_vertices = None;
    while let Some(kw) = t.peek() {
        t.next_str("keyword")?;
        match kw {
            "MeshVersionFormatted" => {
                t.usize("MeshVersionFormatted version")?;
            }
            "Dimension" => {
                if n_vertices.is_some() {
                    return Err(t.error("`Dimension` after `Vertices` (the coordinates were read with the old one)"));
                }
                mesh.dim = t.usize("Dimension")?;
                if mesh.dim != 2 && mesh.dim != 3 {
                    return Err(t.error(format!("Dimension {} is not supported (2 or 3)", mesh.dim)));
                }
            }
            "Vertices" => {
                if n_vertices.is_some() {
                    return Err(t.error("a second `Vertices` block"));
                }
                let n = t.count("number of vertices", limit)?;
                mesh.vertices.reserve(n * mesh.dim);
                for v in 0..n {
                    for _ in 0..mesh.dim {
                        mesh.vertices.push(t.f64(&format!("a coordinate of vertex {}", v + 1))?);
                    }
                    t.usize(&format!("the reference number of vertex {}", v + 1))?;
                }
                n_vertices = Some(n);
            }
            "Triangles" | "Tetrahedra" | "Edges" => {
                let k = match kw {
                    "Triangles" => 3,
                    "Tetrahedra" => 4,
                    _ => 2,
                };
                let c = t.count(&format!("number of {kw}"), limit)?;
                let n = n_vertices.ok_or_else(|| t.error(format!("`{kw}` appears before `Vertices`")))?;
                let mut out = Vec::with_capacity(c * k);
                for e in 0..c {
                    for _ in 0..k {
                        let i = t.usize(&format!("a vertex index of {kw} entry {}", e + 1))?;
                        if i == 0 || i > n {
                            return Err(t.error(format!(
                                "{kw} entry {} uses vertex {i}, outside 1..={n} (indices are 1-based)",
                                e + 1
                            )));
                        }
                        out.push(i - 1);
                    }
                    t.usize(&format!("the reference number of {kw} entry {}", e + 1))?;
                }
                match kw {
                    "Triangles" => mesh.triangles = out,
                    "Tetrahedra" => mesh.tetrahedra = out,
                    _ => {}
                }
            }
            "Corners" | "Ridges" | "RequiredVertices" => {
                let c = t.count(&format!("number of {kw}"), limit)?;
                for _ in 0..c {
                    t.usize(kw)?;
                }
            }
            "End" => break,
            other => return Err(t.error(format!("unknown MEDIT keyword `{other}`"))),
        }
    }
    if n_vertices.is_none() {
        return Err(t.error("no `Vertices` block"));
    }
    Ok(mesh)
}
