//! Atomic file replacement.

use std::io::Write;
use std::path::Path;

use crate::error::{OvertoneError, Result};

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so the
/// target is either the old file or the complete new one, never a partial write.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| OvertoneError::io(path, "not a file path"))?
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        OvertoneError::io(path, format!("cannot write: {e}"))
    })
}
