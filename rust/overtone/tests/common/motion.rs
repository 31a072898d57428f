//! Sizes of a baked secondary motion.

/// The largest per-point displacement length over all frames (`frames × n × 3`, world units).
pub fn largest_displacement(frames: &[Vec<f64>]) -> f64 {
    frames
        .iter()
        .flat_map(|u| u.chunks_exact(3))
        .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
        .fold(0.0, f64::max)
}
