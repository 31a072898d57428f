//! The cache key: a blake3 hash over every input of a precompute.

/// Accumulates the inputs of a precompute into a 32-byte blake3 key. Each input is framed by
/// its name and byte length, so different splits of the same bytes never collide.
pub struct CacheKey {
    hasher: blake3::Hasher,
}

impl Default for CacheKey {
    fn default() -> Self {
        Self::new()
    }
}

impl CacheKey {
    /// An empty key.
    pub fn new() -> Self {
        Self {
            hasher: blake3::Hasher::new(),
        }
    }

    fn frame(&mut self, name: &str, len: usize) {
        self.hasher.update(&(name.len() as u64).to_le_bytes());
        self.hasher.update(name.as_bytes());
        self.hasher.update(&(len as u64).to_le_bytes());
    }

    /// Adds a slice of `f64` (hashed as its exact bit patterns, little-endian).
    pub(crate) fn f64s(mut self, name: &str, v: &[f64]) -> Self {
        self.frame(name, v.len() * 8);
        self.words(v.iter().map(|x| x.to_bits()));
        self
    }

    /// Adds a slice of indices (as `u64`, little-endian).
    pub(crate) fn usizes(mut self, name: &str, v: &[usize]) -> Self {
        self.frame(name, v.len() * 8);
        self.words(v.iter().map(|&x| x as u64));
        self
    }

    /// Hashes 64-bit words through a fixed 8 KiB buffer: the same bytes as one update of the
    /// whole slice, without a copy of it (a lattice's inputs are tens of MB).
    fn words(&mut self, words: impl Iterator<Item = u64>) {
        let mut buf = [0u8; 8192];
        let mut len = 0;
        for w in words {
            buf[len..len + 8].copy_from_slice(&w.to_le_bytes());
            len += 8;
            if len == buf.len() {
                self.hasher.update(&buf);
                len = 0;
            }
        }
        self.hasher.update(&buf[..len]);
    }

    /// Adds a string.
    pub fn text(mut self, name: &str, s: &str) -> Self {
        self.frame(name, s.len());
        self.hasher.update(s.as_bytes());
        self
    }

    /// The 32-byte key.
    pub fn finish(self) -> [u8; 32] {
        *self.hasher.finalize().as_bytes()
    }
}
