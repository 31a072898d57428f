//! The precompute sidecar (`.ovt`): expensive precomputation stored next to a scene, keyed by
//! a hash of everything it depends on, rebuilt when anything is off. Generic over the payload:
//! the fast solver stores its whole reduced model there (`dynamics::fast`), but this module knows
//! nothing of solvers.

mod key;
mod sidecar;
mod status;

pub use key::CacheKey;
pub use sidecar::{
    decode_sidecar, payload_checksum, read_sidecar_header, SidecarHeader, SidecarMiss, FORMAT_VERSION, MAGIC,
};
pub(crate) use sidecar::{read_sidecar, write_sidecar};
pub(crate) use status::load_or_build;
pub use status::{CacheState, CacheStatus, RebuildReason};
