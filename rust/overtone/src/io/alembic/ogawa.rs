//! The Ogawa container that Alembic files (`.abc`) are stored in.
//!
//! Layout (little-endian): the 16-byte header `"Ogawa"`, a frozen byte (`0xff` once the file is
//! complete), the format version `0x00 0x01`, then the `u64` offset of the root group. Every
//! other item is a *data* block (`u64` size, then the bytes) or a *group* (`u64` child count,
//! then one `u64` per child: the child's offset, with the top bit set when the child is data).
//! An empty data block is the offset 0 with the top bit set; an empty group is the offset 0.
//! Children are written before the group that lists them, so one forward pass builds the file.

/// The top bit of a child offset: the child is a data block.
const DATA_BIT: u64 = 1 << 63;

/// A reference to a written data block or group, to be listed in a parent group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Child(u64);

/// An Ogawa file being built in memory.
pub struct OgawaWriter {
    bytes: Vec<u8>,
}

impl OgawaWriter {
    /// A writer holding just the header (root offset still 0).
    pub fn new() -> Self {
        let mut bytes = Vec::with_capacity(1 << 16);
        bytes.extend_from_slice(b"Ogawa");
        bytes.extend_from_slice(&[0xff, 0x00, 0x01]);
        bytes.extend_from_slice(&0u64.to_le_bytes());
        Self { bytes }
    }

    /// Appends a data block made of `parts` concatenated (an Alembic sample is its 16-byte key
    /// followed by the values).
    pub fn data(&mut self, parts: &[&[u8]]) -> Child {
        let size: usize = parts.iter().map(|p| p.len()).sum();
        if size == 0 {
            return Child(DATA_BIT);
        }
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&(size as u64).to_le_bytes());
        for p in parts {
            self.bytes.extend_from_slice(p);
        }
        Child(at | DATA_BIT)
    }

    /// Appends a group listing `children` in order.
    pub fn group(&mut self, children: &[Child]) -> Child {
        if children.is_empty() {
            return Child(0);
        }
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&(children.len() as u64).to_le_bytes());
        for c in children {
            self.bytes.extend_from_slice(&c.0.to_le_bytes());
        }
        Child(at)
    }

    /// The finished file with `root` (a group) as its root.
    pub fn finish(mut self, root: Child) -> Vec<u8> {
        debug_assert_eq!(root.0 & DATA_BIT, 0, "the root must be a group");
        self.bytes[8..16].copy_from_slice(&root.0.to_le_bytes());
        self.bytes
    }
}

impl Default for OgawaWriter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u64_at(b: &[u8], o: u64) -> u64 {
        u64::from_le_bytes(b[o as usize..o as usize + 8].try_into().unwrap())
    }

    #[test]
    fn layout_matches_the_format() {
        let mut w = OgawaWriter::new();
        let d = w.data(&[b"ab", b"c"]);
        let e = w.data(&[]);
        let inner = w.group(&[]);
        let root = w.group(&[d, e, inner]);
        let b = w.finish(root);
        assert_eq!(&b[..8], b"Ogawa\xff\x00\x01");
        assert_eq!(u64_at(&b, 8), 27);
        assert_eq!(u64_at(&b, 16), 3, "data size");
        assert_eq!(&b[24..27], b"abc");
        assert_eq!(u64_at(&b, 27), 3, "root child count");
        assert_eq!(u64_at(&b, 35), 16 | DATA_BIT);
        assert_eq!(u64_at(&b, 43), DATA_BIT, "empty data");
        assert_eq!(u64_at(&b, 51), 0, "empty group");
        assert_eq!(b.len(), 59);
    }
}
