//! The precompute sidecar (`.ovt`): expensive precomputation stored next to a scene, keyed by
//! a hash of everything it depends on, rebuilt when anything is off. Generic over the payload,
//! one record per kind: a character's lattice preparation (`scene::lattice_preparation`) and the fast
//! solver's whole reduced model (`dynamics::fast`); this module knows nothing of either.

mod key;
pub(crate) mod sidecar;
mod status;

pub use key::CacheKey;
pub(crate) use sidecar::read_sidecar;
pub use sidecar::{
    decode_sidecar, payload_checksum, read_sidecar_header, record_checksum, sidecar_records, SidecarHeader,
    SidecarMiss, FORMAT_VERSION, LIBRARY_VERSION, MAGIC,
};
pub(crate) use status::{load_or_build, load_or_build_deferred};
pub use status::{CacheState, CacheStatus, PendingRecord, RebuildReason};
