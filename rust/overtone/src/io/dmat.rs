//! libigl ASCII DMAT reader.

use std::path::Path;

use crate::error::Result;
use crate::io::tokens::{plausible_limit, read_text, Tokens};

/// A dense matrix, stored row-major here (the file is column-major).
#[derive(Clone, Debug, PartialEq)]
pub struct Dmat {
    pub rows: usize,
    pub cols: usize,
    /// `rows × cols`, row-major.
    pub data: Vec<f64>,
}

/// Reads `ncols nrows` followed by `ncols·nrows` values in column-major order.
pub fn read_dmat(path: &Path) -> Result<Dmat> {
    parse_dmat(path, &read_text(path)?)
}

/// Parses the text of a DMAT file (`path` only names it in errors); see [`read_dmat`].
pub(crate) fn parse_dmat(path: &Path, text: &str) -> Result<Dmat> {
    let limit = plausible_limit(text);
    let mut t = Tokens::new(path, text);
    let cols = t.count("number of columns", limit)?;
    let rows = t.count("number of rows", limit)?;
    if rows.saturating_mul(cols) > limit {
        return Err(t.error(format!(
            "header {cols} x {rows} promises more values than the file holds"
        )));
    }
    let mut data = vec![0.0; rows * cols];
    for c in 0..cols {
        for r in 0..rows {
            data[r * cols + c] = t.f64(&format!("entry ({r}, {c})"))?;
        }
    }
    if !t.is_empty() {
        return Err(t.error(format!("more values than the header's {cols} x {rows}")));
    }
    Ok(Dmat { rows, cols, data })
}
