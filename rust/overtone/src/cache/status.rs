//! Where a precompute came from: loaded from its sidecar, rebuilt, or built without one.

/// Where the precompute came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheStatus {
    /// No sidecar path was given.
    NotRequested,
    /// Loaded from the sidecar.
    Loaded,
    /// Built and written; the string says why the sidecar could not be used.
    Rebuilt(String),
    /// Built, but the sidecar could not be written (the run goes on without it).
    WriteFailed(String),
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
