//! libigl TGF reader: joints (or point handles) and bone edges.

use std::path::Path;

use crate::error::Result;
use crate::io::tokens::read_text;

/// Contents of a `.tgf` file, 0-based.
#[derive(Clone, Debug, PartialEq)]
pub struct Tgf {
    /// Joint / point-handle positions, `k × 3` row-major (2D files are padded with z = 0).
    pub joints: Vec<f64>,
    /// Bone edges `(start joint, end joint)` in file order (empty for point handles).
    pub bones: Vec<(usize, usize)>,
}

/// Reads lines `index x y z` up to a `#`, then bone lines `a b [flags…]` up to an optional `#`.
pub fn read_tgf(path: &Path) -> Result<Tgf> {
    parse_tgf(path, &read_text(path)?)
}

/// Parses the text of a TGF file (`path` only names it in errors); see [`read_tgf`].
pub(crate) fn parse_tgf(path: &Path, text: &str) -> Result<Tgf> {
    let err = |line: usize, reason: String| crate::OvertoneError::parse(path, format!("line {line}: {reason}"));
    let mut joints = Vec::new();
    let mut bones = Vec::new();
    let mut section = 0;
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            section += 1;
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        match section {
            0 => {
                if f.len() < 3 {
                    return Err(err(ln + 1, "a joint line needs `index x y [z]`".into()));
                }
                let mut xyz = [0.0; 3];
                for k in 0..(f.len() - 1).min(3) {
                    xyz[k] = f[k + 1]
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| err(ln + 1, format!("`{}` is not a finite number", f[k + 1])))?;
                }
                joints.extend(xyz);
            }
            1 => {
                if f.len() < 2 {
                    return Err(err(ln + 1, "a bone line needs `start end`".into()));
                }
                let idx = |s: &str| -> Result<usize> {
                    let i: usize = s
                        .parse()
                        .map_err(|_| err(ln + 1, format!("`{s}` is not a joint index")))?;
                    if i == 0 || i > joints.len() / 3 {
                        return Err(err(
                            ln + 1,
                            format!("joint {i} outside 1..={} (1-based)", joints.len() / 3),
                        ));
                    }
                    Ok(i - 1)
                };
                // A third field of 0 marks a non-bone edge (libigl); only bone edges count.
                if f.get(2).map(|s| *s != "0").unwrap_or(true) {
                    bones.push((idx(f[0])?, idx(f[1])?));
                }
            }
            _ => break,
        }
    }
    if joints.is_empty() {
        return Err(crate::OvertoneError::parse(path, "no joints or handles"));
    }
    Ok(Tgf { joints, bones })
}
