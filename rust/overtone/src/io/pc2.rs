//! Point Cache 2 (`.pc2`) files, as read by Blender's Mesh Cache modifier and 3ds Max / Maya.
//!
//! Layout (little-endian): `char[12] "POINTCACHE2\0"`, `i32 version = 1`, `i32 num_points`,
//! `f32 start_frame`, `f32 sample_rate`, `i32 num_samples`, then
//! `num_samples × num_points × 3` `f32`, frame-major.

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::write_atomically;

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
    if frames.is_empty() || num_points == 0 {
        return Err(OvertoneError::setting(
            "pc2",
            "empty",
            "a point cache needs at least one frame and one point",
        ));
    }
    let mut bytes = Vec::with_capacity(32 + frames.len() * num_points * 12);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&1i32.to_le_bytes());
    bytes.extend_from_slice(&(num_points as i32).to_le_bytes());
    bytes.extend_from_slice(&start_frame.to_le_bytes());
    bytes.extend_from_slice(&sample_rate.to_le_bytes());
    bytes.extend_from_slice(&(frames.len() as i32).to_le_bytes());
    for (f, frame) in frames.iter().enumerate() {
        if frame.len() != num_points * 3 {
            return Err(OvertoneError::size(
                format!("pc2 frame {f}"),
                num_points * 3,
                frame.len(),
            ));
        }
        for &x in frame {
            bytes.extend_from_slice(&(x as f32).to_le_bytes());
        }
    }
    write_atomically(path, &bytes)
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
