//! Point Cache 2 (`.pc2`) files, as read by Blender's Mesh Cache modifier and 3ds Max / Maya.
//!
//! Layout (little-endian): `char[12] "POINTCACHE2\0"`, `i32 version = 1`, `i32 num_points`,
//! `f32 start_frame`, `f32 sample_rate`, `i32 num_samples`, then
//! `num_samples × num_points × 3` `f32`, frame-major.

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::frame_stream::{header_counts, FrameStream};
use crate::io::AtomicFile;

const MAGIC: &[u8; 12] = b"POINTCACHE2\0";

/// A point cache in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Pc2 {
    pub start_frame: f32,
    pub sample_rate: f32,
    pub num_points: usize,
    /// `num_samples × num_points × 3`.
    pub positions: Vec<f32>,
}

impl Pc2 {
    /// Number of samples (frames).
    pub fn num_samples(&self) -> usize {
        self.positions.len() / (3 * self.num_points.max(1))
    }
}

/// Writes `frames` (each `num_points × 3` row-major, f64, converted to f32) atomically.
pub fn write_pc2(
    path: &Path,
    start_frame: f32,
    sample_rate: f32,
    num_points: usize,
    frames: &[Vec<f64>],
) -> Result<()> {
    let mut w = Pc2Writer::create(path, start_frame, sample_rate, num_points, frames.len())?;
    for frame in frames {
        w.push(frame)?;
    }
    w.finish()
}

/// A PC2 file written one frame at a time (memory flat in the frame count), replaced atomically
/// when [`finish`](Self::finish)ed with exactly the announced number of samples; dropped before
/// that, the target is untouched.
pub struct Pc2Writer {
    frames: FrameStream,
}

impl Pc2Writer {
    /// Opens the cache of `num_samples` frames of `num_points` points (header written).
    ///
    /// Errors: no frame or no point, or counts beyond the format's `i32`.
    pub fn create(
        path: &Path,
        start_frame: f32,
        sample_rate: f32,
        num_points: usize,
        num_samples: usize,
    ) -> Result<Self> {
        let (np, ns) = header_counts("pc2", num_points, num_samples)?;
        let mut file = AtomicFile::create(path)?;
        let mut header = Vec::with_capacity(32);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&1i32.to_le_bytes());
        header.extend_from_slice(&np.to_le_bytes());
        header.extend_from_slice(&start_frame.to_le_bytes());
        header.extend_from_slice(&sample_rate.to_le_bytes());
        header.extend_from_slice(&ns.to_le_bytes());
        file.write_all(&header)?;
        Ok(Self {
            frames: FrameStream::new(file, "pc2", num_points, num_samples, false)?,
        })
    }

    /// Appends one frame (`num_points × 3` row-major, converted to f32).
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

/// Reads a PC2 file, checking the magic, version and that the size matches the header.
pub fn read_pc2(path: &Path) -> Result<Pc2> {
    let b = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    parse_pc2(path, &b)
}

/// Parses the bytes of a PC2 file (`path` only names it in errors); see [`read_pc2`].
pub fn parse_pc2(path: &Path, b: &[u8]) -> Result<Pc2> {
    if b.len() < 32 || &b[..12] != MAGIC {
        return Err(OvertoneError::parse(path, "not a PC2 file (bad magic)"));
    }
    let i32_at = |o: usize| i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let f32_at = |o: usize| f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if i32_at(12) != 1 {
        return Err(OvertoneError::parse(
            path,
            format!("unsupported PC2 version {}", i32_at(12)),
        ));
    }
    let (np, ns) = (i32_at(16), i32_at(28));
    if np <= 0 || ns <= 0 {
        return Err(OvertoneError::parse(
            path,
            format!("header has {np} points and {ns} samples"),
        ));
    }
    let expected = (np as usize)
        .checked_mul(ns as usize)
        .and_then(|k| k.checked_mul(12))
        .map(|k| k + 32);
    if expected != Some(b.len()) {
        return Err(OvertoneError::parse(
            path,
            format!(
                "size {} does not match the header ({np} points x {ns} samples)",
                b.len()
            ),
        ));
    }
    let positions = b[32..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(Pc2 {
        start_frame: f32_at(20),
        sample_rate: f32_at(24),
        num_points: np as usize,
        positions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("overtone-pc2-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Everything in `dir` (temporary files included).
    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_streamed_cache_reads_back_frame_by_frame() {
        let dir = folder("stream");
        let path = dir.join("c.pc2");
        let frames: Vec<Vec<f64>> = (0..5)
            .map(|f| (0..6).map(|i| (f * 10 + i) as f64 * 0.25).collect())
            .collect();
        let mut w = Pc2Writer::create(&path, 3.0, 1.0, 2, frames.len()).unwrap();
        for f in &frames {
            w.push(f).unwrap();
        }
        w.finish().unwrap();
        let pc2 = read_pc2(&path).unwrap();
        assert_eq!((pc2.num_points, pc2.num_samples(), pc2.start_frame), (2, 5, 3.0));
        // Every value is a multiple of 1/4 below 2^24: exact in f32.
        let flat: Vec<f32> = frames.iter().flatten().map(|&x| x as f32).collect();
        assert_eq!(pc2.positions, flat);
        assert_eq!(entries(&dir), vec!["c.pc2".to_string()]);
    }

    #[test]
    fn an_unfinished_cache_leaves_the_old_file_and_no_temporary() {
        let dir = folder("unfinished");
        let path = dir.join("c.pc2");
        write_pc2(&path, 1.0, 1.0, 1, &[vec![1.0, 2.0, 3.0]]).unwrap();
        let old = std::fs::read(&path).unwrap();
        // Fewer frames than announced: refused at finish.
        let mut w = Pc2Writer::create(&path, 1.0, 1.0, 1, 3).unwrap();
        w.push(&[0.0; 3]).unwrap();
        let e = w.finish().unwrap_err().to_string();
        assert!(e.contains("pc2 frames"), "{e}");
        // A frame of the wrong size: refused, and the writer dropped (as a failed bake does).
        let mut w = Pc2Writer::create(&path, 1.0, 1.0, 1, 2).unwrap();
        assert!(w.push(&[0.0; 4]).is_err());
        drop(w);
        // One frame too many.
        let mut w = Pc2Writer::create(&path, 1.0, 1.0, 1, 1).unwrap();
        w.push(&[0.0; 3]).unwrap();
        assert!(w.push(&[0.0; 3]).is_err());
        drop(w);
        assert_eq!(std::fs::read(&path).unwrap(), old);
        assert_eq!(entries(&dir), vec!["c.pc2".to_string()]);
    }
}
