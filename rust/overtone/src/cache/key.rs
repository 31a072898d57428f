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

    /// Adds a slice of `f64` (hashed as its exact bit patterns, whole slice at once).
    pub(crate) fn f64s(mut self, name: &str, v: &[f64]) -> Self {
        self.frame(name, v.len() * 8);
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect();
        self.hasher.update(&bytes);
        self
    }

    /// Adds a slice of indices.
    pub(crate) fn usizes(mut self, name: &str, v: &[usize]) -> Self {
        self.frame(name, v.len() * 8);
        let bytes: Vec<u8> = v.iter().flat_map(|x| (*x as u64).to_le_bytes()).collect();
        self.hasher.update(&bytes);
        self
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
