//! Sidecar file layout and atomic I/O.
//!
//! A sidecar holds one record per kind of precompute (the lattice preparation of a character,
//! the fast solver's reduced model), one after the other. A record:
//!
//! ```text
//! offset    size  field
//! 0         8     magic "OVTCACHE"
//! 8         4     format version (u32 LE)
//! 12        4     length L of the library version string (u32 LE)
//! 16        L     library version (UTF-8)
//! 16+L      4     length K of the record's kind (u32 LE)
//! 20+L      K     kind (UTF-8, e.g. "fast-precompute")
//! 20+L+K    32    key (blake3 of every input of the precompute)
//! 52+L+K    8     payload length P (u64 LE)
//! 60+L+K    32    checksum (blake3 of the kind, the key and the payload: [`record_checksum`])
//! 92+L+K    P     payload (bincode 2, standard configuration)
//! ```
//! A record is trusted only when magic, format version, library version, kind, key, payload
//! length and checksum all match and the payload decodes completely (the checksum covers the
//! kind and the key too, so a damaged kind is seen as damage, not as another record);
//! otherwise the caller rebuilds it. Writing a record keeps the file's sound records of other
//! kinds and drops the rest (a record of the same kind, anything after a damaged header).

use std::path::Path;

use serde::{de::DeserializeOwned, Serialize};

use crate::error::{OvertoneError, Result};
use crate::io::write_atomically;

/// File magic.
pub const MAGIC: &[u8; 8] = b"OVTCACHE";
/// Version of the layout and of every payload type; bump on any change.
pub const FORMAT_VERSION: u32 = 9;
/// The library version a sidecar written by this build names (the crate's version).
pub const LIBRARY_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Longest library version or kind string accepted in a header.
const MAX_VERSION_LEN: usize = 256;

/// The header of a sidecar record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarHeader {
    pub format_version: u32,
    pub library_version: String,
    /// What the payload is (e.g. `"fast-precompute"`, `"lattice-preparation"`).
    pub kind: String,
    pub key: [u8; 32],
    pub payload_len: u64,
    /// [`record_checksum`] of the kind, the key and the payload.
    pub checksum: [u8; 32],
    /// Bytes before the payload.
    pub header_len: usize,
}

/// Parses the header of the record at the start of `bytes` (a file's first record); `None` when
/// the bytes are not a record header (wrong magic, truncated, absurd lengths).
pub fn read_sidecar_header(bytes: &[u8]) -> Option<SidecarHeader> {
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return None;
    }
    let format_version = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    let vlen = u32::from_le_bytes(bytes[12..16].try_into().ok()?) as usize;
    if vlen > MAX_VERSION_LEN || bytes.len() < 20 + vlen {
        return None;
    }
    let library_version = std::str::from_utf8(&bytes[16..16 + vlen]).ok()?.to_string();
    let klen = u32::from_le_bytes(bytes[16 + vlen..20 + vlen].try_into().ok()?) as usize;
    let at = 20 + vlen + klen;
    if klen > MAX_VERSION_LEN || bytes.len() < at + 72 {
        return None;
    }
    let kind = std::str::from_utf8(&bytes[20 + vlen..at]).ok()?.to_string();
    let key: [u8; 32] = bytes[at..at + 32].try_into().ok()?;
    let payload_len = u64::from_le_bytes(bytes[at + 32..at + 40].try_into().ok()?);
    let checksum: [u8; 32] = bytes[at + 40..at + 72].try_into().ok()?;
    Some(SidecarHeader {
        format_version,
        library_version,
        kind,
        key,
        payload_len,
        checksum,
        header_len: at + 72,
    })
}

/// The records of a sidecar file in order, each as its header and its byte range in `bytes`,
/// up to the first one whose header is damaged or whose payload runs past the end (returned
/// with the range cut at the end of the file).
pub fn sidecar_records(bytes: &[u8]) -> Vec<(SidecarHeader, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let Some(h) = read_sidecar_header(&bytes[at..]) else {
            break;
        };
        let end = (at + h.header_len).saturating_add(usize::try_from(h.payload_len).unwrap_or(usize::MAX));
        let whole = end <= bytes.len();
        out.push((h, at..end.min(bytes.len())));
        if !whole {
            break;
        }
        at = end;
    }
    out
}

/// One record's bytes.
fn encode_record(kind: &str, key: &[u8; 32], body: &[u8]) -> Vec<u8> {
    let version = LIBRARY_VERSION.as_bytes();
    let mut bytes = Vec::with_capacity(92 + version.len() + kind.len() + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(version.len() as u32).to_le_bytes());
    bytes.extend_from_slice(version);
    bytes.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    bytes.extend_from_slice(kind.as_bytes());
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&record_checksum(kind, key, body));
    bytes.extend_from_slice(body);
    bytes
}

/// A payload's bytes as a record holds them (bincode 2, standard configuration); `path` names
/// the sidecar in the error.
pub(crate) fn encode_payload<T: Serialize>(path: &Path, payload: &T) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(payload, bincode::config::standard())
        .map_err(|e| OvertoneError::io(path, format!("cannot encode the precompute: {e}")))
}

/// Writes the encoded payload `body` ([`encode_payload`]) as the record of `kind` under `key`,
/// atomically (temporary file, then rename). The file's other records are kept when they are
/// sound (this format and library version, whole, checksum matching) and of another kind.
pub(crate) fn write_sidecar_bytes(path: &Path, kind: &str, key: &[u8; 32], body: &[u8]) -> Result<()> {
    let existing = crate::io::read_latest(path).unwrap_or_default();
    let mut bytes = Vec::new();
    for (h, range) in sidecar_records(&existing) {
        let payload = &existing[range.start + h.header_len.min(range.len())..range.end];
        if record_fault(&h, payload).is_none() && h.kind != kind {
            bytes.extend_from_slice(&existing[range]);
        }
    }
    bytes.extend_from_slice(&encode_record(kind, key, body));
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

/// Reads a sidecar and returns the payload of its record of `kind` if everything matches `key`;
/// otherwise why not. Never panics on a corrupt file.
pub(crate) fn read_sidecar<T: DeserializeOwned>(
    path: &Path,
    kind: &str,
    key: &[u8; 32],
) -> std::result::Result<T, SidecarMiss> {
    let bytes = std::fs::read(path).map_err(|_| SidecarMiss::Missing)?;
    decode_sidecar(&bytes, kind, key)
}

/// Decodes the bytes of a sidecar file and returns the payload of its record of `kind` if
/// everything matches `key`; otherwise why not (see [`read_sidecar`]): a file with no record of
/// that kind (but sound records before) is [`SidecarMiss::Missing`] for it. Never panics on
/// corrupt bytes.
pub fn decode_sidecar<T: DeserializeOwned>(
    bytes: &[u8],
    kind: &str,
    key: &[u8; 32],
) -> std::result::Result<T, SidecarMiss> {
    // Another format's records cannot be walked: name the version (it was written by another
    // build), as a whole-file format check would.
    if bytes.len() >= 12 && &bytes[..8] == MAGIC {
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != FORMAT_VERSION {
            return Err(SidecarMiss::FormatVersion(version));
        }
    }
    let records = sidecar_records(bytes);
    let Some((_, range)) = records.iter().find(|(h, _)| h.kind == kind) else {
        // "Missing" only when every record walked is sound: a damaged one (its header is not
        // covered by its checksum) may have hidden ours.
        let Some((_, last)) = records.last() else {
            return Err(SidecarMiss::NotASidecar);
        };
        for (h, r) in &records {
            if let Some(fault) = record_fault(h, &bytes[(r.start + h.header_len).min(r.end)..r.end]) {
                return Err(fault);
            }
        }
        return Err(if last.end < bytes.len() {
            SidecarMiss::NotASidecar
        } else {
            SidecarMiss::Missing
        });
    };
    decode_record(&bytes[range.clone()], key)
}

/// Why the record with header `h` and payload bytes `payload` cannot be trusted whatever its
/// key (another format or library version, a payload of another length, a checksum that does
/// not match), or `None` when it is sound.
fn record_fault(h: &SidecarHeader, payload: &[u8]) -> Option<SidecarMiss> {
    if h.format_version != FORMAT_VERSION {
        return Some(SidecarMiss::FormatVersion(h.format_version));
    }
    if h.library_version != LIBRARY_VERSION {
        return Some(SidecarMiss::LibraryVersion(h.library_version.clone()));
    }
    if payload.len() as u64 != h.payload_len {
        return Some(SidecarMiss::Length);
    }
    if record_checksum(&h.kind, &h.key, payload) != h.checksum {
        return Some(SidecarMiss::Checksum);
    }
    None
}

/// One record's payload if its header matches this build and `key` and its payload is whole.
fn decode_record<T: DeserializeOwned>(bytes: &[u8], key: &[u8; 32]) -> std::result::Result<T, SidecarMiss> {
    let h = read_sidecar_header(bytes).ok_or(SidecarMiss::NotASidecar)?;
    // This build's record for other inputs: said before hashing its payload.
    if h.format_version == FORMAT_VERSION && h.library_version == LIBRARY_VERSION && &h.key != key {
        return Err(SidecarMiss::Key);
    }
    if let Some(fault) = record_fault(&h, &bytes[h.header_len..]) {
        return Err(fault);
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

/// blake3 of `bytes` (the hash the sidecar's checksums are made of).
pub fn payload_checksum(bytes: &[u8]) -> [u8; 32] {
    *blake3::hash(bytes).as_bytes()
}

/// The checksum a record's header holds: blake3 of the kind's length (u32 LE), the kind, the
/// key and the payload.
pub fn record_checksum(kind: &str, key: &[u8; 32], payload: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&(kind.len() as u32).to_le_bytes());
    h.update(kind.as_bytes());
    h.update(key);
    h.update(payload);
    *h.finalize().as_bytes()
}
