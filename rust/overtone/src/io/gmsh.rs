//! gmsh MSH 2.2 reader (ASCII and binary): nodes and tetrahedra.

use std::path::Path;

use crate::error::{OvertoneError, Result};

/// Nodes and tetrahedra of a gmsh file, 0-based (node ids remapped in file order).
#[derive(Clone, Debug, PartialEq)]
pub struct GmshMesh {
    /// `n × 3`, row-major.
    pub vertices: Vec<f64>,
    /// `m × 4`, row-major (elements of type 4); other element types are skipped.
    pub tetrahedra: Vec<usize>,
}

/// Nodes per element for the MSH 2.2 element types (0 for unknown types).
fn nodes_per_element(kind: i32) -> usize {
    match kind {
        1 => 2,
        2 => 3,
        3 => 4,
        4 => 4,
        5 => 8,
        6 => 6,
        7 => 5,
        8 => 3,
        9 => 6,
        10 => 9,
        11 => 10,
        15 => 1,
        _ => 0,
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn err(&self, reason: impl Into<String>) -> OvertoneError {
        OvertoneError::parse(self.path, format!("byte {}: {}", self.pos, reason.into()))
    }
    fn line(&mut self) -> Result<&'a str> {
        let rest = &self.b[self.pos.min(self.b.len())..];
        let end = rest
            .iter()
            .position(|&c| c == b'\n')
            .ok_or_else(|| self.err("file ends inside a line"))?;
        self.pos += end + 1;
        std::str::from_utf8(&rest[..end])
            .map(|s| s.trim())
            .map_err(|_| self.err("text line is not UTF-8"))
    }
    /// Binary blocks may or may not be followed by a newline before the end tag.
    fn skip_newline(&mut self) {
        if self.b.get(self.pos) == Some(&b'\n') {
            self.pos += 1;
        }
    }
    fn expect(&mut self, tag: &str) -> Result<()> {
        let l = self.line()?;
        if l != tag {
            return Err(self.err(format!("expected `{tag}`, found `{l}`")));
        }
        Ok(())
    }
    fn bytes(&mut self, k: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(k)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| self.err("file ends inside binary data"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i32(&mut self) -> Result<i32> {
        let s = self.bytes(4)?;
        Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn f64(&mut self) -> Result<f64> {
        let s = self.bytes(8)?;
        let v = f64::from_le_bytes(s.try_into().expect("8 bytes"));
        if !v.is_finite() {
            return Err(self.err("non-finite coordinate"));
        }
        Ok(v)
    }
}

/// Reads `$MeshFormat` (version 2.x, ASCII or little-endian binary with 8-byte doubles),
/// one `$Nodes` and one `$Elements` section; other sections are skipped. Tetrahedra (type 4) are kept with node
/// ids mapped to 0-based indices in the order of `$Nodes`.
pub fn read_gmsh(path: &Path) -> Result<GmshMesh> {
    let b = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    parse_gmsh(path, &b)
}

/// Parses the bytes of a gmsh file (`path` only names it in errors); see [`read_gmsh`].
pub fn parse_gmsh(path: &Path, b: &[u8]) -> Result<GmshMesh> {
    let mut c = Cursor { b, pos: 0, path };
    c.expect("$MeshFormat")?;
    let header = c.line()?;
    let f: Vec<&str> = header.split_whitespace().collect();
    if f.len() != 3 || !f[0].starts_with("2.") || f[2] != "8" {
        return Err(c.err(format!("unsupported MeshFormat `{header}` (need `2.x 0|1 8`)")));
    }
    let binary = match f[1] {
        "0" => false,
        "1" => true,
        other => return Err(c.err(format!("file-type `{other}` is neither ASCII (0) nor binary (1)"))),
    };
    if binary {
        if c.i32()? != 1 {
            return Err(c.err("binary file is not little-endian"));
        }
        c.skip_newline();
    }
    c.expect("$EndMeshFormat")?;
    let mut ids: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut vertices = Vec::new();
    let mut tetrahedra = Vec::new();
    let (mut seen_nodes, mut seen_elements) = (false, false);
    while c.pos < b.len() {
        let tag = c.line()?;
        if tag.is_empty() {
            continue;
        }
        match tag {
            "$Nodes" => {
                if seen_nodes {
                    return Err(c.err("a second $Nodes section"));
                }
                let n: usize = c.line()?.parse().map_err(|_| c.err("bad node count"))?;
                if n > b.len() / 4 {
                    return Err(c.err(format!("node count {n} exceeds the file size")));
                }
                vertices.reserve(3 * n);
                for k in 0..n {
                    let (id, xyz) = if binary {
                        (c.i32()? as i64, [c.f64()?, c.f64()?, c.f64()?])
                    } else {
                        let l = c.line()?;
                        let t: Vec<&str> = l.split_whitespace().collect();
                        let parse = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
                        match (t.len(), t.first().and_then(|s| s.parse::<i64>().ok())) {
                            (4, Some(id)) => (
                                id,
                                [
                                    parse(t[1]).ok_or_else(|| c.err(format!("bad node line `{l}`")))?,
                                    parse(t[2]).ok_or_else(|| c.err(format!("bad node line `{l}`")))?,
                                    parse(t[3]).ok_or_else(|| c.err(format!("bad node line `{l}`")))?,
                                ],
                            ),
                            _ => return Err(c.err(format!("bad node line `{l}`"))),
                        }
                    };
                    if ids.insert(id, k).is_some() {
                        return Err(c.err(format!("node id {id} appears twice")));
                    }
                    vertices.extend(xyz);
                }
                if binary {
                    c.skip_newline();
                }
                c.expect("$EndNodes")?;
                seen_nodes = true;
            }
            "$Elements" => {
                if !seen_nodes {
                    return Err(c.err("$Elements before $Nodes"));
                }
                if seen_elements {
                    return Err(c.err("a second $Elements section"));
                }
                seen_elements = true;
                let m: usize = c.line()?.parse().map_err(|_| c.err("bad element count"))?;
                if m > b.len() / 4 {
                    return Err(c.err(format!("element count {m} exceeds the file size")));
                }
                let node = |id: i64, c: &Cursor| {
                    ids.get(&id)
                        .copied()
                        .ok_or_else(|| c.err(format!("element uses unknown node {id}")))
                };
                if binary {
                    let mut read = 0;
                    while read < m {
                        let (kind, count, ntags) = (c.i32()?, c.i32()?, c.i32()?);
                        let k = nodes_per_element(kind);
                        if k == 0 || count <= 0 || ntags < 0 || read + count as usize > m {
                            return Err(c.err(format!(
                                "bad element block (type {kind}, {count} elements, {ntags} tags)"
                            )));
                        }
                        for _ in 0..count {
                            c.i32()?;
                            for _ in 0..ntags {
                                c.i32()?;
                            }
                            let mut el = [0usize; 4];
                            for a in 0..k {
                                let v = node(c.i32()? as i64, &c)?;
                                if a < 4 {
                                    el[a] = v;
                                }
                            }
                            if kind == 4 {
                                tetrahedra.extend(el);
                            }
                        }
                        read += count as usize;
                    }
                    c.skip_newline();
                } else {
                    for _ in 0..m {
                        let l = c.line()?;
                        let t: Vec<i64> = l
                            .split_whitespace()
                            .map(|s| s.parse::<i64>())
                            .collect::<std::result::Result<_, _>>()
                            .map_err(|_| c.err(format!("bad element line `{l}`")))?;
                        if t.len() < 3 {
                            return Err(c.err(format!("bad element line `{l}`")));
                        }
                        let (kind, ntags) = (t[1] as i32, t[2].max(0) as usize);
                        let k = nodes_per_element(kind);
                        if t.len() != 3 + ntags + k || k == 0 {
                            return Err(c.err(format!("bad element line `{l}`")));
                        }
                        if kind == 4 {
                            for &id in &t[3 + ntags..] {
                                tetrahedra.push(node(id, &c)?);
                            }
                        }
                    }
                }
                c.expect("$EndElements")?;
            }
            other if other.starts_with('$') && !other.starts_with("$End") => {
                // Skip an unknown section up to its end tag.
                let end = format!("$End{}", &other[1..]);
                let rest = &b[c.pos..];
                let needle = end.as_bytes();
                let at = rest
                    .windows(needle.len())
                    .position(|w| w == needle)
                    .ok_or_else(|| c.err(format!("section {other} has no {end}")))?;
                c.pos += at;
                c.expect(&end)?;
            }
            other => return Err(c.err(format!("unexpected line `{other}`"))),
        }
    }
    if !seen_nodes {
        return Err(OvertoneError::parse(path, "no $Nodes section"));
    }
    Ok(GmshMesh { vertices, tetrahedra })
}
