//! Where a precompute came from: loaded from its sidecar, rebuilt (and why), or built without
//! one; and [`load_or_build`], the one read-check-build-write sequence every sidecar user runs.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cache::{read_sidecar, SidecarMiss};
use crate::error::Result;

/// Where the precompute came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheStatus {
    /// No sidecar path was given.
    #[default]
    NotRequested,
    /// Loaded from the sidecar.
    Loaded,
    /// Built and written, because the sidecar could not be used.
    Rebuilt(RebuildReason),
    /// Built, but the sidecar could not be written (the run goes on without it).
    WriteFailed(String),
}

/// Why a sidecar was not used and its payload rebuilt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RebuildReason {
    /// The file was missing, or its header or payload did not match (see [`SidecarMiss`]).
    Miss(SidecarMiss),
    /// The payload decoded but does not fit the body it is loaded for (the message says how).
    DoesNotFit(String),
}

/// The kind of a [`CacheStatus`], as it crosses to the hosts (C++, C, Python): a code with fixed
/// values that hosts branch on instead of matching the text.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheState {
    /// No sidecar path was given.
    NotRequested = 0,
    /// Loaded from the sidecar.
    Loaded = 1,
    /// Built and written because there was no sidecar yet or it was built for other inputs:
    /// the expected, silent case.
    Built = 2,
    /// Built and written because the sidecar was unreadable (corrupt, truncated, foreign
    /// version) or did not fit: a host shows a warning.
    Unusable = 3,
    /// Built, but the sidecar could not be written: a host shows a warning.
    WriteFailed = 4,
}

impl CacheStatus {
    /// The kind of this status (see [`CacheState`]).
    pub fn state(&self) -> CacheState {
        match self {
            Self::NotRequested => CacheState::NotRequested,
            Self::Loaded => CacheState::Loaded,
            Self::Rebuilt(RebuildReason::Miss(SidecarMiss::Missing | SidecarMiss::Key)) => CacheState::Built,
            Self::Rebuilt(_) => CacheState::Unusable,
            Self::WriteFailed(_) => CacheState::WriteFailed,
        }
    }
}

impl std::fmt::Display for RebuildReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Miss(miss) => write!(f, "{miss}"),
            Self::DoesNotFit(why) => write!(f, "payload does not fit this body: {why}"),
        }
    }
}

impl std::fmt::Display for CacheStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRequested => write!(f, "no sidecar"),
            Self::Loaded => write!(f, "loaded from sidecar"),
            Self::Rebuilt(why) => write!(f, "rebuilt ({why}) and saved"),
            Self::WriteFailed(why) => write!(f, "built; sidecar not written: {why}"),
        }
    }
}

/// Serialised as its text (reports and JSON show what a TD reads).
impl Serialize for CacheStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Loads the payload of `kind` from the sidecar at `path` if it matches `key` and passes `check`
/// (which says why a decoded payload does not fit the body); otherwise runs `build` and writes
/// the result there as that kind's record (the file's records of other kinds are kept). Without
/// a path it only builds. A sidecar that cannot be written is reported in the status, not as an
/// error: the run goes on without it. Errors come from `build` only.
pub(crate) fn load_or_build<T: Serialize + DeserializeOwned>(
    path: Option<&Path>,
    kind: &str,
    key: &[u8; 32],
    check: impl FnOnce(&T) -> std::result::Result<(), String>,
    build: impl FnOnce() -> Result<T>,
) -> Result<(T, CacheStatus)> {
    let (payload, status, pending) = load_or_build_deferred(path, kind, key, check, build)?;
    Ok((payload, pending.map_or(status, PendingRecord::save)))
}

/// A record built but not yet written (see [`load_or_build_deferred`]).
#[derive(Clone, Debug)]
pub struct PendingRecord {
    path: std::path::PathBuf,
    kind: String,
    key: [u8; 32],
    body: Vec<u8>,
    why: RebuildReason,
}

impl PendingRecord {
    /// Writes the record (keeping the file's records of other kinds) and returns the status it
    /// leaves: rebuilt and saved, or not written and why.
    pub fn save(self) -> CacheStatus {
        match crate::cache::sidecar::write_sidecar_bytes(&self.path, &self.kind, &self.key, &self.body) {
            Ok(()) => CacheStatus::Rebuilt(self.why),
            Err(e) => CacheStatus::WriteFailed(e.to_string()),
        }
    }
}

/// [`load_or_build`] for a payload whose record may only be written once the work it is part
/// of has completed (a bind that a host may still cancel): a built payload comes back with the
/// record to write, encoded, and the status says why it was rebuilt.
pub(crate) fn load_or_build_deferred<T: Serialize + DeserializeOwned>(
    path: Option<&Path>,
    kind: &str,
    key: &[u8; 32],
    check: impl FnOnce(&T) -> std::result::Result<(), String>,
    build: impl FnOnce() -> Result<T>,
) -> Result<(T, CacheStatus, Option<PendingRecord>)> {
    let Some(path) = path else {
        return Ok((build()?, CacheStatus::NotRequested, None));
    };
    let why = match read_sidecar::<T>(path, kind, key) {
        Ok(payload) => match check(&payload) {
            Ok(()) => return Ok((payload, CacheStatus::Loaded, None)),
            Err(e) => RebuildReason::DoesNotFit(e),
        },
        Err(miss) => RebuildReason::Miss(miss),
    };
    let payload = build()?;
    match crate::cache::sidecar::encode_payload(path, &payload) {
        Ok(body) => {
            let pending = PendingRecord {
                path: path.to_path_buf(),
                kind: kind.to_string(),
                key: *key,
                body,
                why: why.clone(),
            };
            Ok((payload, CacheStatus::Rebuilt(why), Some(pending)))
        }
        Err(e) => Ok((payload, CacheStatus::WriteFailed(e.to_string()), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_texts_are_the_ones_hosts_read() {
        let cases = [
            (
                CacheStatus::NotRequested,
                CacheState::NotRequested,
                "no sidecar".to_string(),
            ),
            (
                CacheStatus::Loaded,
                CacheState::Loaded,
                "loaded from sidecar".to_string(),
            ),
            (
                CacheStatus::Rebuilt(RebuildReason::Miss(SidecarMiss::Missing)),
                CacheState::Built,
                "rebuilt (no sidecar yet) and saved".to_string(),
            ),
            (
                CacheStatus::Rebuilt(RebuildReason::Miss(SidecarMiss::Key)),
                CacheState::Built,
                format!("rebuilt ({}) and saved", SidecarMiss::Key),
            ),
            (
                CacheStatus::Rebuilt(RebuildReason::Miss(SidecarMiss::Checksum)),
                CacheState::Unusable,
                "rebuilt (payload checksum does not match (corrupt)) and saved".to_string(),
            ),
            (
                CacheStatus::Rebuilt(RebuildReason::DoesNotFit("3 vertices".into())),
                CacheState::Unusable,
                "rebuilt (payload does not fit this body: 3 vertices) and saved".to_string(),
            ),
            (
                CacheStatus::WriteFailed("disk full".into()),
                CacheState::WriteFailed,
                "built; sidecar not written: disk full".to_string(),
            ),
        ];
        for (status, state, text) in cases {
            assert_eq!(status.state(), state, "{status:?}");
            assert_eq!(status.to_string(), text);
            assert_eq!(
                serde_json::to_string(&status).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
        }
        for miss in [
            SidecarMiss::NotASidecar,
            SidecarMiss::FormatVersion(1),
            SidecarMiss::LibraryVersion("0.0.0".into()),
            SidecarMiss::Length,
            SidecarMiss::Decode("eof".into()),
        ] {
            assert_eq!(
                CacheStatus::Rebuilt(RebuildReason::Miss(miss)).state(),
                CacheState::Unusable
            );
        }
    }

    #[test]
    fn load_or_build_loads_what_it_wrote_and_rebuilds_what_does_not_fit() {
        let dir = std::env::temp_dir().join(format!("overtone-status-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.ovt");
        let _ = std::fs::remove_file(&path);
        let key = [7u8; 32];
        let (v, s) = load_or_build(Some(&path), "test", &key, |_: &Vec<f64>| Ok(()), || Ok(vec![1.0, 2.0])).unwrap();
        assert_eq!((v.clone(), s.state()), (vec![1.0, 2.0], CacheState::Built));
        let (v2, s2) = load_or_build(Some(&path), "test", &key, |_: &Vec<f64>| Ok(()), || Ok(vec![9.0])).unwrap();
        assert_eq!((v2, s2), (v, CacheStatus::Loaded));
        let (v3, s3) = load_or_build(
            Some(&path),
            "test",
            &key,
            |p: &Vec<f64>| Err(format!("{} values", p.len())),
            || Ok(vec![3.0]),
        )
        .unwrap();
        assert_eq!(v3, vec![3.0]);
        assert_eq!(s3, CacheStatus::Rebuilt(RebuildReason::DoesNotFit("2 values".into())));
        assert_eq!(s3.state(), CacheState::Unusable);
        let (_, s4) = load_or_build(None, "test", &key, |_: &Vec<f64>| Ok(()), || Ok(vec![0.0])).unwrap();
        assert_eq!(s4, CacheStatus::NotRequested);
        // A second kind in the same file: missing at first, then both records load, and
        // rewriting one (new key) keeps the other.
        let other = [8u8; 32];
        let (_, s5) = load_or_build(Some(&path), "other", &other, |_: &Vec<f64>| Ok(()), || Ok(vec![5.0])).unwrap();
        assert_eq!(s5, CacheStatus::Rebuilt(RebuildReason::Miss(SidecarMiss::Missing)));
        let fail = || -> Result<Vec<f64>> { panic!("a record that is in the file was rebuilt") };
        let (a, sa) = load_or_build(Some(&path), "test", &key, |_: &Vec<f64>| Ok(()), fail).unwrap();
        let (b, sb) = load_or_build(Some(&path), "other", &other, |_: &Vec<f64>| Ok(()), fail).unwrap();
        assert_eq!(
            (a, sa, b, sb),
            (vec![3.0], CacheStatus::Loaded, vec![5.0], CacheStatus::Loaded)
        );
        let (_, s6) = load_or_build(Some(&path), "test", &[9u8; 32], |_: &Vec<f64>| Ok(()), || Ok(vec![6.0])).unwrap();
        assert_eq!(s6.state(), CacheState::Built);
        let (b2, sb2) = load_or_build(Some(&path), "other", &other, |_: &Vec<f64>| Ok(()), fail).unwrap();
        assert_eq!((b2, sb2), (vec![5.0], CacheStatus::Loaded));
        let records = crate::cache::sidecar_records(&std::fs::read(&path).unwrap());
        let kinds: Vec<&str> = records.iter().map(|(h, _)| h.kind.as_str()).collect();
        assert_eq!(kinds, ["other", "test"]);
        // A damaged kind is damage, not a missing record: the checksum covers the kind.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(5).position(|w| w == b"other").unwrap();
        bytes[at] = b'x';
        assert_eq!(
            crate::cache::decode_sidecar::<Vec<f64>>(&bytes, "other", &other),
            Err(SidecarMiss::Checksum)
        );
        assert_eq!(
            crate::cache::decode_sidecar::<Vec<f64>>(&bytes, "test", &[9u8; 32]),
            Ok(vec![6.0])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
