//! The one error type of the core library.
//!
//! Every public entry point validates its input and answers with one of these variants; messages
//! are written for a technical director: they name the offending item (vertex, element, bone,
//! frame, file) and say what to change.

use std::path::PathBuf;

/// Everything that can go wrong in Overtone's core.
#[derive(Debug, thiserror::Error)]
pub enum OvertoneError {
    /// An input array does not have the size the rest of the input implies.
    #[error("{what}: expected {expected}, got {got}")]
    Size {
        what: String,
        expected: String,
        got: String,
    },
    /// A NaN or infinite number in the input.
    #[error("{what} contains a non-finite value (NaN or Inf) at {location}")]
    NonFinite { what: String, location: String },
    /// An element refers to a vertex that does not exist.
    #[error(
        "element {element} refers to vertex {vertex}, but the mesh has {n_vertices} vertices (indices are 0-based)"
    )]
    IndexOutOfRange {
        element: usize,
        vertex: usize,
        n_vertices: usize,
    },
    /// An element of (near) zero volume; the FEM operators would divide by zero.
    #[error("element {element} is degenerate (signed volume {volume:e} relative to its edge length^d); remove it or repair the mesh")]
    DegenerateElement { element: usize, volume: f64 },
    /// An element with negative orientation in the rest pose.
    #[error("element {element} is inverted in the rest pose (signed volume {volume:e}); reorder its vertices")]
    InvertedElement { element: usize, volume: f64 },
    /// Skinning weights that are negative or do not sum to one.
    #[error("skinning weights of vertex {vertex} are invalid: {reason}")]
    Weights { vertex: usize, reason: String },
    /// A physical or numerical setting outside its meaningful range.
    #[error("setting `{name}` = {value} is invalid: {reason}")]
    Setting {
        name: String,
        value: String,
        reason: String,
    },
    /// A sparse or dense factorization failed (the matrix is not positive definite).
    #[error("factorization of {what} failed: {reason}")]
    Factorization { what: String, reason: String },
    /// A time step (or the minimisation inside it) that could not be completed. The solver's
    /// state (positions, velocities, displacement, warm starts) is exactly what it was before
    /// the step, so the host may retry, e.g. with a smaller time step.
    #[error("{what} failed: {reason}; the solver state is unchanged (retry with a smaller time step or a smaller pose change)")]
    StepFailed { what: String, reason: String },
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
    /// A file was read but its content is not what the format requires.
    #[error("{path}: {reason}")]
    Parse { path: PathBuf, reason: String },
    /// A feature the scene asks for that this build does not provide.
    #[error("{0}")]
    Unsupported(String),
    /// A shape-matching region whose rest particles do not span the space (flat or too small):
    /// its moment matrix `Σ m q qᵀ` cannot be inverted.
    #[error("shape-matching region {region} (around particle {region}) is degenerate: {reason}")]
    DegenerateRegion { region: usize, reason: String },
    /// An example pose that cannot be used.
    #[error("example pose {example} is unusable: {reason}")]
    Example { example: usize, reason: String },
    /// A blendshape (morph target) that cannot be used.
    #[error("blendshape {target} is unusable: {reason}")]
    Blendshape { target: usize, reason: String },
    /// An iterative solve that did not converge within its iteration cap, after its fallbacks.
    #[error("{what} did not converge: {reason}; try a coarser lattice resolution or fewer modes")]
    NotConverged { what: String, reason: String },
    /// The host cancelled the precompute (see [`crate::progress::Progress`]); nothing was kept.
    #[error("cancelled by the host")]
    Cancelled,
}

/// What kind of failure an error is: what a host branches on (retry, report the input, ...).
/// Crosses the C++ bridge and the C ABI with these values (0 is success there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ErrorKind {
    /// An input array, mesh, weight or pose is wrong (sizes, NaN/Inf, degenerate or inverted
    /// elements, invalid weights, unusable blendshapes or examples): fix the input.
    InvalidInput = 1,
    /// A setting is outside its range: change the setting.
    InvalidSetting = 2,
    /// A time step could not be completed; the solver state is unchanged, so the host may retry
    /// (a smaller time step, a smaller pose change) or reset.
    StepFailed = 3,
    /// A precompute stage failed numerically (a factorization, an eigensolve that did not
    /// converge): the input is valid but the problem is ill-posed at these settings.
    Numerical = 4,
    /// A file could not be read, written or parsed.
    File = 5,
    /// The input asks for something this build does not provide.
    Unsupported = 6,
    /// The host cancelled the precompute.
    Cancelled = 7,
    /// A bug inside Overtone (a caught panic): please report it.
    Internal = 8,
}

impl ErrorKind {
    /// Every kind, in value order.
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::InvalidInput,
        ErrorKind::InvalidSetting,
        ErrorKind::StepFailed,
        ErrorKind::Numerical,
        ErrorKind::File,
        ErrorKind::Unsupported,
        ErrorKind::Cancelled,
        ErrorKind::Internal,
    ];
}

impl OvertoneError {
    /// The kind of this error (what a host branches on).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Size { .. }
            | Self::NonFinite { .. }
            | Self::IndexOutOfRange { .. }
            | Self::DegenerateElement { .. }
            | Self::InvertedElement { .. }
            | Self::Weights { .. }
            | Self::DegenerateRegion { .. }
            | Self::Example { .. }
            | Self::Blendshape { .. } => ErrorKind::InvalidInput,
            Self::Setting { .. } => ErrorKind::InvalidSetting,
            Self::StepFailed { .. } => ErrorKind::StepFailed,
            Self::Factorization { .. } | Self::NotConverged { .. } => ErrorKind::Numerical,
            Self::Io { .. } | Self::Parse { .. } => ErrorKind::File,
            Self::Unsupported(_) => ErrorKind::Unsupported,
            Self::Cancelled => ErrorKind::Cancelled,
        }
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = OvertoneError> = std::result::Result<T, E>;

impl OvertoneError {
    /// [`OvertoneError::Size`]: `what` had `got` entries (or rows, columns) where `expected` were
    /// needed.
    pub fn size(what: impl Into<String>, expected: impl ToString, got: impl ToString) -> Self {
        Self::Size {
            what: what.into(),
            expected: expected.to_string(),
            got: got.to_string(),
        }
    }

    /// [`OvertoneError::Setting`]: the setting `name` has the refused `value`; `reason` says
    /// what it must be.
    pub fn setting(name: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        Self::Setting {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, err: impl ToString) -> Self {
        Self::Io {
            path: path.into(),
            reason: err.to_string(),
        }
    }

    pub(crate) fn parse(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::Parse {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// Fails with [`OvertoneError::NonFinite`] if any value is NaN or infinite. `values` is read as
/// rows of `stride` entries (the error names the row and column when `stride > 1`, the index
/// otherwise); `what` names the quantity in the message.
pub fn check_finite(what: &str, values: &[f64], stride: usize) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(OvertoneError::NonFinite {
            what: what.to_string(),
            location: if stride > 1 {
                format!("row {}, column {}", i / stride, i % stride)
            } else {
                format!("index {i}")
            },
        }),
    }
}
