//! The tests' seeded pseudo-random numbers: a 64-bit linear congruential generator (Knuth's
//! MMIX constants), its top 53 bits taken as a fraction.

/// Advances `state` and returns a number uniform in [0, 1).
pub fn uniform(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// Advances `state` and returns a number uniform in [-1, 1).
pub fn lcg(state: &mut u64) -> f64 {
    uniform(state) * 2.0 - 1.0
}

/// `len` numbers uniform in [-1, 1) from the stream seeded with `seed`.
pub fn noise(seed: u64, len: usize) -> Vec<f64> {
    let mut s = seed;
    (0..len).map(|_| lcg(&mut s)).collect()
}
