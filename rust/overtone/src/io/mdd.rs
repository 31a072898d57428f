//! MDD point caches (LightWave / Blender Mesh Cache): big-endian frame count, point count,
//! one `f32` time per frame, then `frames × points × 3` big-endian `f32`.

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::write_atomically;

/// Writes `frames` (each `num_points × 3` row-major) sampled every `1/fps` seconds, atomically.
pub fn write_mdd(path: &Path, fps: f64, num_points: usize, frames: &[Vec<f64>]) -> Result<()> {
    if frames.is_empty() || num_points == 0 || !(fps > 0.0) {
        return Err(OvertoneError::setting(
            "mdd",
            "empty",
            "a point cache needs frames, points and fps > 0",
        ));
    }
    let mut bytes = Vec::with_capacity(8 + frames.len() * (4 + num_points * 12));
    bytes.extend_from_slice(&(frames.len() as i32).to_be_bytes());
    bytes.extend_from_slice(&(num_points as i32).to_be_bytes());
    for f in 0..frames.len() {
        bytes.extend_from_slice(&((f as f64 / fps) as f32).to_be_bytes());
    }
    for (f, frame) in frames.iter().enumerate() {
        if frame.len() != num_points * 3 {
            return Err(OvertoneError::size(
                format!("mdd frame {f}"),
                num_points * 3,
                frame.len(),
            ));
        }
        for &x in frame {
            bytes.extend_from_slice(&(x as f32).to_be_bytes());
        }
    }
    write_atomically(path, &bytes)
}
