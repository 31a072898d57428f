//! The precompute sidecar (`.ovt`): expensive precomputation stored next to a scene, keyed by
//! a hash of everything it depends on, rebuilt when anything is off. The fast solver stores its
//! whole reduced model ([`crate::dynamics::ReducedModel`]).

mod fast_precompute;
mod key;
mod sidecar;

pub use fast_precompute::{build_fast_precompute, fast_precompute_key, CacheStatus, FastPrecomputeData};
pub use key::CacheKey;
pub use sidecar::{
    decode_sidecar, payload_checksum, read_sidecar, read_sidecar_header, write_sidecar, SidecarHeader, SidecarMiss,
    FORMAT_VERSION, LIBRARY_VERSION, MAGIC,
};
