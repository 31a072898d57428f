//! Sidecar file layout and atomic I/O.
//!
//! ```text
//! offset  size  field
//! 0       8     magic "OVTCACHE"
//! 8       4     format version (u32 LE)
//! 12      4     length L of the library version string (u32 LE)
//! 16      L     library version (UTF-8)
//! 16+L    32    key (blake3 of every input of the precompute)
//! 48+L    8     payload length P (u64 LE)
//! 56+L    32    payload checksum (blake3 of the payload bytes)
//! 88+L    P     payload (bincode 2, standard configuration)
//! ```
//! A file is trusted only when magic, format version, library version, key, payload length and
//! checksum all match and the payload decodes completely; otherwise the caller rebuilds.

use std::path::Path;

use serde::{de::DeserializeOwned, Serialize};

use crate::error::{OvertoneError, Result};
use crate::io::write_atomically;

/// File magic.
pub const MAGIC: &[u8; 8] = b"OVTCACHE";
/// Version of the layout and of every payload type; bump on any change.
pub const FORMAT_VERSION: u32 = 8;
/// The library version a sidecar written by this build names (the crate's version).
pub(crate) const LIBRARY_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Longest library version string accepted in a header.
const MAX_VERSION_LEN: usize = 256;

/// The header of a sidecar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarHeader {
    pub format_version: u32,
    pub library_version: String,
    pub key: [u8; 32],
    pub payload_len: u64,
    /// blake3 of the payload.
    pub checksum: [u8; 32],
    /// Bytes before the payload.
    pub header_len: usize,
}

/// Parses the header from the first bytes of a file; `None` when the bytes are not a sidecar
/// header (wrong magic, truncated, absurd lengths).
pub fn read_sidecar_header(bytes: &[u8]) -> Option<SidecarHeader> {
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return None;
    }
    let format_version = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    let vlen = u32::from_le_bytes(bytes[12..16].try_into().ok()?) as usize;
    if vlen > MAX_VERSION_LEN || bytes.len() < 88 + vlen {
        return None;
    }
    let library_version = std::str::from_utf8(&bytes[16..16 + vlen]).ok()?.to_string();
    let key: [u8; 32] = bytes[16 + vlen..48 + vlen].try_into().ok()?;
    let payload_len = u64::from_le_bytes(bytes[48 + vlen..56 + vlen].try_into().ok()?);
    let checksum: [u8; 32] = bytes[56 + vlen..88 + vlen].try_into().ok()?;
    Some(SidecarHeader {
        format_version,
        library_version,
        key,
        payload_len,
        checksum,
        header_len: 88 + vlen,
    })
}

/// Writes `payload` under `key` atomically (temporary file, then rename).
pub(crate) fn write_sidecar<T: Serialize>(path: &Path, key: &[u8; 32], payload: &T) -> Result<()> {
    let body = bincode::serde::encode_to_vec(payload, bincode::config::standard())
        .map_err(|e| OvertoneError::io(path, format!("cannot encode the precompute: {e}")))?;
    let version = LIBRARY_VERSION.as_bytes();
    let mut bytes = Vec::with_capacity(88 + version.len() + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(version.len() as u32).to_le_bytes());
    bytes.extend_from_slice(version);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&payload_checksum(&body));
    bytes.extend_from_slice(&body);
    write_atomically(path, &bytes)
}

/// Why a sidecar was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SidecarMiss {
    Missing,
    NotASidecar,
    FormatVersion(u32),
    LibraryVersion(String),
    Key,
    Length,
    Checksum,
    Decode(String),
}

impl std::fmt::Display for SidecarMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => write!(f, "no sidecar yet"),
            Self::NotASidecar => write!(f, "not an Overtone sidecar (bad magic or truncated header)"),
            Self::FormatVersion(v) => write!(f, "format version {v} (this build writes {FORMAT_VERSION})"),
            Self::LibraryVersion(v) => write!(f, "written by Overtone {v} (this is {LIBRARY_VERSION})"),
            Self::Key => write!(
                f,
                "built for different inputs (mesh, weights, leak, material or settings changed)"
            ),
            Self::Length => write!(f, "payload length does not match the header (truncated or corrupt)"),
            Self::Checksum => write!(f, "payload checksum does not match (corrupt)"),
            Self::Decode(e) => write!(f, "payload does not decode ({e})"),
        }
    }
}

/// Reads a sidecar and returns its payload if everything matches `key`; otherwise why not.
/// Never panics on a corrupt file.
pub(crate) fn read_sidecar<T: DeserializeOwned>(path: &Path, key: &[u8; 32]) -> std::result::Result<T, SidecarMiss> {
    let bytes = std::fs::read(path).map_err(|_| SidecarMiss::Missing)?;
    decode_sidecar(&bytes, key)
}

/// Decodes the bytes of a sidecar file and returns its payload if everything matches `key`;
/// otherwise why not (see [`read_sidecar`]). Never panics on corrupt bytes.
pub fn decode_sidecar<T: DeserializeOwned>(bytes: &[u8], key: &[u8; 32]) -> std::result::Result<T, SidecarMiss> {
    let h = read_sidecar_header(bytes).ok_or(SidecarMiss::NotASidecar)?;
    if h.format_version != FORMAT_VERSION {
        return Err(SidecarMiss::FormatVersion(h.format_version));
    }
    if h.library_version != LIBRARY_VERSION {
        return Err(SidecarMiss::LibraryVersion(h.library_version));
    }
    if &h.key != key {
        return Err(SidecarMiss::Key);
    }
    if (bytes.len() - h.header_len) as u64 != h.payload_len {
        return Err(SidecarMiss::Length);
    }
    if payload_checksum(&bytes[h.header_len..]) != h.checksum {
        return Err(SidecarMiss::Checksum);
    }
    let (value, used) = bincode::serde::decode_from_slice::<T, _>(&bytes[h.header_len..], bincode::config::standard())
        .map_err(|e| SidecarMiss::Decode(e.to_string()))?;
    if used != bytes.len() - h.header_len {
        return Err(SidecarMiss::Decode(format!(
            "{} trailing bytes",
            bytes.len() - h.header_len - used
        )));
    }
    Ok(value)
}

/// The checksum stored in a header for `payload`.
pub fn payload_checksum(payload: &[u8]) -> [u8; 32] {
    *blake3::hash(payload).as_bytes()
}
