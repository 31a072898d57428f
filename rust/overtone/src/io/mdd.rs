//! MDD point caches (LightWave / Blender Mesh Cache): big-endian frame count, point count,
//! one `f32` time per frame, then `frames × points × 3` big-endian `f32`.

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::frame_stream::{header_counts, FrameStream};
use crate::io::AtomicFile;

/// Writes `frames` (each `num_points × 3` row-major) sampled every `1/fps` seconds, atomically.
pub fn write_mdd(path: &Path, fps: f64, num_points: usize, frames: &[Vec<f64>]) -> Result<()> {
    let mut w = MddWriter::create(path, fps, num_points, frames.len())?;
    for frame in frames {
        w.push(frame)?;
    }
    w.finish()
}

/// An MDD file written one frame at a time (memory flat in the frame count), replaced atomically
/// when [`finish`](Self::finish)ed with exactly the announced number of frames; dropped before
/// that, the target is untouched.
pub struct MddWriter {
    frames: FrameStream,
}

impl MddWriter {
    /// Opens the cache of `num_frames` frames of `num_points` points, `1/fps` seconds apart
    /// (header and frame times written).
    ///
    /// Errors: no frame or no point, `fps` not > 0, or counts beyond the format's `i32`.
    pub fn create(path: &Path, fps: f64, num_points: usize, num_frames: usize) -> Result<Self> {
        if !(fps > 0.0 && fps.is_finite()) {
            return Err(OvertoneError::setting("mdd", fps, "a point cache needs fps > 0"));
        }
        let (np, nf) = header_counts("mdd", num_points, num_frames)?;
        let mut file = AtomicFile::create(path)?;
        let mut header = Vec::with_capacity(8 + 4 * num_frames);
        header.extend_from_slice(&nf.to_be_bytes());
        header.extend_from_slice(&np.to_be_bytes());
        for f in 0..num_frames {
            header.extend_from_slice(&((f as f64 / fps) as f32).to_be_bytes());
        }
        file.write_all(&header)?;
        Ok(Self {
            frames: FrameStream::new(file, "mdd", num_points, num_frames, true)?,
        })
    }

    /// Appends one frame (`num_points × 3` row-major, converted to big-endian f32).
    ///
    /// Errors: a frame of the wrong size, or more frames than announced.
    pub fn push(&mut self, frame: &[f64]) -> Result<()> {
        self.frames.push(frame)
    }

    /// Completes the file (atomically replacing the target).
    ///
    /// Errors: fewer frames than announced (the target is untouched), or the write fails.
    pub fn finish(self) -> Result<()> {
        self.frames.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_cache_has_the_header_times_and_frames_in_big_endian() {
        let dir = std::env::temp_dir().join(format!("overtone-mdd-stream-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.mdd");
        let mut w = MddWriter::create(&path, 4.0, 1, 3).unwrap();
        for f in 0..3 {
            w.push(&[f as f64, 0.5, -1.0]).unwrap();
        }
        w.finish().unwrap();
        let b = std::fs::read(&path).unwrap();
        let f32_at = |o: usize| f32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        assert_eq!(b.len(), 8 + 3 * 4 + 3 * 12);
        assert_eq!(i32::from_be_bytes([b[0], b[1], b[2], b[3]]), 3);
        assert_eq!(i32::from_be_bytes([b[4], b[5], b[6], b[7]]), 1);
        // Times 0, 1/4, 1/2 s; then frame 2's first coordinate is 2.
        assert_eq!((f32_at(8), f32_at(12), f32_at(16)), (0.0, 0.25, 0.5));
        assert_eq!((f32_at(20 + 24), f32_at(20 + 28), f32_at(20 + 32)), (2.0, 0.5, -1.0));
        // Too few frames: refused, nothing written.
        let other = dir.join("d.mdd");
        let w = MddWriter::create(&other, 4.0, 1, 3).unwrap();
        assert!(w.finish().is_err());
        assert!(!other.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }
}
