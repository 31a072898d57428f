//! The errors of the core library, one enum per area, and their sum [`OvertoneError`].
//!
//! Every public entry point validates its input and answers with an [`OvertoneError`]; its
//! variant says the area ([`InputError`], [`SettingError`], [`NumericalError`], [`FileError`],
//! unsupported, cancelled) and [`OvertoneError::kind`] the [`ErrorKind`] a host branches on.
//! Messages are written for a technical director: they name the offending item (vertex,
//! element, bone, frame, file) or the failing stage (which matrix, which solve, which step).
//! Advice that depends on the caller's context (what a TD can change: a lattice resolution, a
//! mode count) is written by the caller that knows it ([`OvertoneError::with_advice`]), never
//! by a generic solver.

use std::fmt;
use std::path::PathBuf;

/// What was wrong with an input (arrays, meshes, weights, regions, example poses,
/// blendshapes): each variant names the offending item. [`ErrorKind::InvalidInput`].
#[derive(Debug, thiserror::Error)]
pub enum InputError {
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
}

/// A physical or numerical setting outside its meaningful range: its name, the value given
/// (as text) and why it is refused. [`ErrorKind::InvalidSetting`].
#[derive(Debug, thiserror::Error)]
#[error("setting `{name}` = {value} is invalid: {reason}")]
pub struct SettingError {
    pub name: String,
    pub value: String,
    pub reason: String,
}

/// A numerical stage that failed on valid input; each variant names the stage (which matrix
/// was factored, which eigenproblem or iterative solve, which time step).
/// [`ErrorKind::StepFailed`] for [`StepFailed`](Self::StepFailed), [`ErrorKind::Numerical`]
/// for the others.
#[derive(Debug, thiserror::Error)]
pub enum NumericalError {
    /// A sparse or dense factorization of `matrix` failed (e.g. it is not positive definite).
    #[error("factorization of {matrix} failed: {reason}")]
    Factorization { matrix: String, reason: String },
    /// A dense eigen-solve for `problem` failed or found no usable eigenpair (e.g. no
    /// positive eigenvalue where a vibration mode was expected).
    #[error("eigen-solve for {problem} failed: {reason}")]
    Eigensolve { problem: String, reason: String },
    /// An iterative `solve` that did not converge within its iteration cap, after its
    /// fallbacks. `advice` is what to change, written by the caller that knows the context
    /// (see [`OvertoneError::with_advice`]); the solver itself leaves it `None`.
    #[error("{solve} did not converge: {reason}{}", AdviceSuffix(*.advice))]
    NotConverged {
        solve: String,
        reason: String,
        advice: Option<&'static str>,
    },
    /// A time `step` (or the minimisation inside it) that could not be completed. The solver's
    /// state (positions, velocities, displacement, warm starts) is exactly what it was before
    /// the step, so the host may retry, e.g. with a smaller time step.
    #[error("{step} failed: {reason}; the solver state is unchanged (retry with a smaller time step or a smaller pose change)")]
    StepFailed { step: String, reason: String },
    /// A host frame's physics step after the frame's first could not be completed: the steps
    /// before it had moved the state on, so the simulation was restarted at rest in the frame's
    /// pose (as at a cut) rather than left half-way through the frame.
    #[error("{step} failed part-way through a frame: {reason}; the simulation restarted at rest in this pose (a smaller pose change per frame avoids it)")]
    StepRestarted { step: String, reason: String },
}

/// Writes `; advice` after a message, or nothing.
struct AdviceSuffix(Option<&'static str>);

impl fmt::Display for AdviceSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(advice) => write!(f, "; {advice}"),
            None => Ok(()),
        }
    }
}

/// A file that could not be read, written or parsed; names the path. [`ErrorKind::File`].
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
    /// A file was read but its content is not what the format requires.
    #[error("{path}: {reason}")]
    Parse { path: PathBuf, reason: String },
}

/// Everything that can go wrong in Overtone's core: the sum of the areas' errors. Its message
/// is the area error's own.
#[derive(Debug, thiserror::Error)]
pub enum OvertoneError {
    /// An input array, mesh, weight, region, example or blendshape is wrong.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A setting is outside its range.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// A factorization, eigen-solve, iterative solve or time step failed.
    #[error(transparent)]
    Numerical(#[from] NumericalError),
    /// A file could not be read, written or parsed.
    #[error(transparent)]
    File(#[from] FileError),
    /// A feature the scene asks for that this build does not provide.
    #[error("{0}")]
    Unsupported(String),
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
            Self::Input(_) => ErrorKind::InvalidInput,
            Self::Setting(_) => ErrorKind::InvalidSetting,
            Self::Numerical(NumericalError::StepFailed { .. }) => ErrorKind::StepFailed,
            Self::Numerical(
                NumericalError::Factorization { .. }
                | NumericalError::Eigensolve { .. }
                | NumericalError::NotConverged { .. }
                | NumericalError::StepRestarted { .. },
            ) => ErrorKind::Numerical,
            Self::File(_) => ErrorKind::File,
            Self::Unsupported(_) => ErrorKind::Unsupported,
            Self::Cancelled => ErrorKind::Cancelled,
        }
    }

    /// This error with `advice` (what to change, e.g. "try a coarser lattice resolution or
    /// fewer modes") attached where advice belongs: a [`NumericalError::NotConverged`]. Written
    /// by the caller that knows what the TD can change; an outer caller's advice replaces an
    /// inner one's (it knows more of the context). Every other error is returned unchanged.
    pub(crate) fn with_advice(self, advice: &'static str) -> Self {
        match self {
            Self::Numerical(NumericalError::NotConverged { solve, reason, .. }) => {
                Self::Numerical(NumericalError::NotConverged {
                    solve,
                    reason,
                    advice: Some(advice),
                })
            }
            other => other,
        }
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = OvertoneError> = std::result::Result<T, E>;

impl OvertoneError {
    /// [`InputError::Size`]: `what` had `got` entries (or rows, columns) where `expected` were
    /// needed.
    pub fn size(what: impl Into<String>, expected: impl ToString, got: impl ToString) -> Self {
        Self::Input(InputError::Size {
            what: what.into(),
            expected: expected.to_string(),
            got: got.to_string(),
        })
    }

    /// [`SettingError`]: the setting `name` has the refused `value`; `reason` says what it must
    /// be.
    pub fn setting(name: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        Self::Setting(SettingError {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, err: impl ToString) -> Self {
        Self::File(FileError::Io {
            path: path.into(),
            reason: err.to_string(),
        })
    }

    pub(crate) fn parse(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::File(FileError::Parse {
            path: path.into(),
            reason: reason.into(),
        })
    }
}

/// Fails with [`InputError::NonFinite`] if any value is NaN or infinite. `values` is read as
/// rows of `stride` entries (the error names the row and column when `stride > 1`, the index
/// otherwise); `what` names the quantity in the message.
pub fn check_finite(what: &str, values: &[f64], stride: usize) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(InputError::NonFinite {
            what: what.to_string(),
            location: if stride > 1 {
                format!("row {}, column {}", i / stride, i % stride)
            } else {
                format!("index {i}")
            },
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use crate::solve::thick_restart_lanczos::{largest_eigenpairs, LanczosParams};

    /// One error of every variant of every area, built as the library builds them, with the
    /// kind [`ErrorKind`]'s documentation gives it.
    fn one_of_each() -> Vec<(OvertoneError, ErrorKind)> {
        let input = |e: InputError| (OvertoneError::from(e), ErrorKind::InvalidInput);
        let numerical = |e: NumericalError, kind| (OvertoneError::from(e), kind);
        vec![
            (OvertoneError::size("rest positions", 9, 6), ErrorKind::InvalidInput),
            (
                check_finite("weights", &[0.0, f64::NAN], 2).unwrap_err(),
                ErrorKind::InvalidInput,
            ),
            input(InputError::IndexOutOfRange {
                element: 2,
                vertex: 7,
                n_vertices: 5,
            }),
            input(InputError::DegenerateElement {
                element: 3,
                volume: 0.0,
            }),
            input(InputError::InvertedElement {
                element: 4,
                volume: -0.5,
            }),
            input(InputError::Weights {
                vertex: 1,
                reason: "they sum to 0.5".into(),
            }),
            input(InputError::DegenerateRegion {
                region: 6,
                reason: "its particles are coplanar".into(),
            }),
            input(InputError::Example {
                example: 0,
                reason: "it repeats example 1".into(),
            }),
            input(InputError::Blendshape {
                target: 1,
                reason: "its deltas are zero".into(),
            }),
            (
                OvertoneError::setting("dt", -1.0, "must be > 0"),
                ErrorKind::InvalidSetting,
            ),
            numerical(
                NumericalError::StepFailed {
                    step: "ARAP step".into(),
                    reason: "a non-finite displacement".into(),
                },
                ErrorKind::StepFailed,
            ),
            numerical(
                NumericalError::StepRestarted {
                    step: "ARAP step".into(),
                    reason: "a non-finite displacement".into(),
                },
                ErrorKind::Numerical,
            ),
            numerical(
                NumericalError::Factorization {
                    matrix: "global step matrix".into(),
                    reason: "not positive definite".into(),
                },
                ErrorKind::Numerical,
            ),
            numerical(
                NumericalError::Eigensolve {
                    problem: "lowest vibration mode".into(),
                    reason: "no positive eigenvalue".into(),
                },
                ErrorKind::Numerical,
            ),
            numerical(
                NumericalError::NotConverged {
                    solve: "skinning eigenmodes".into(),
                    reason: "residual 1e-3".into(),
                    advice: None,
                },
                ErrorKind::Numerical,
            ),
            (OvertoneError::io("/no/such/file.obj", "not found"), ErrorKind::File),
            (
                OvertoneError::parse("bad.obj", "line 3: expected 3 numbers"),
                ErrorKind::File,
            ),
            (OvertoneError::Unsupported("a feature".into()), ErrorKind::Unsupported),
            (OvertoneError::Cancelled, ErrorKind::Cancelled),
        ]
    }

    /// Every area maps to its documented kind, and every kind but `Internal` (the bridge's, for
    /// a caught panic: no core error is one) is reached by some error.
    #[test]
    fn every_kind_is_reachable_and_each_area_maps_as_documented() {
        let all = one_of_each();
        for (e, want) in &all {
            assert_eq!(e.kind(), *want, "{e:?}");
            let area_kind = match e {
                OvertoneError::Input(_) => ErrorKind::InvalidInput,
                OvertoneError::Setting(_) => ErrorKind::InvalidSetting,
                OvertoneError::Numerical(NumericalError::StepFailed { .. }) => ErrorKind::StepFailed,
                OvertoneError::Numerical(_) => ErrorKind::Numerical,
                OvertoneError::File(_) => ErrorKind::File,
                OvertoneError::Unsupported(_) => ErrorKind::Unsupported,
                OvertoneError::Cancelled => ErrorKind::Cancelled,
            };
            assert_eq!(e.kind(), area_kind, "{e:?}");
        }
        for kind in ErrorKind::ALL {
            let reached = all.iter().any(|(e, _)| e.kind() == kind);
            assert_eq!(reached, kind != ErrorKind::Internal, "{kind:?}");
        }
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*kind as u8 as usize, i + 1, "{kind:?}");
        }
    }

    /// The sum's message is the area error's own, word for word.
    #[test]
    fn messages_are_the_area_errors() {
        for (e, _) in one_of_each() {
            let inner = match &e {
                OvertoneError::Input(a) => a.to_string(),
                OvertoneError::Setting(a) => a.to_string(),
                OvertoneError::Numerical(a) => a.to_string(),
                OvertoneError::File(a) => a.to_string(),
                OvertoneError::Unsupported(s) => s.clone(),
                OvertoneError::Cancelled => "cancelled by the host".into(),
            };
            assert_eq!(e.to_string(), inner);
        }
        assert_eq!(
            OvertoneError::setting("dt", -1.0, "must be > 0").to_string(),
            "setting `dt` = -1 is invalid: must be > 0"
        );
        assert_eq!(
            OvertoneError::size("rest positions", 9, 6).to_string(),
            "rest positions: expected 9, got 6"
        );
        let step: OvertoneError = NumericalError::StepFailed {
            step: "ARAP step".into(),
            reason: "a non-finite displacement".into(),
        }
        .into();
        assert!(step.to_string().contains("the solver state is unchanged"), "{step}");
    }

    /// The eigensolver's not-converged error carries no advice (it knows nothing of lattices
    /// or modes); a character's bind attaches the lattice/modes advice, a later caller's advice
    /// replaces an earlier one's, and advice leaves every other error as it was.
    #[test]
    fn not_converged_advice_is_written_by_the_caller() {
        let n = 20;
        let mut zero = |_: faer::MatRef<'_, f64>, mut y: faer::MatMut<'_, f64>| y.fill(0.0);
        let params = LanczosParams {
            basis: 8,
            max_applies: 50,
            tolerance: 1e-10,
            block: 1,
        };
        let e = largest_eigenpairs(&mut zero, n, 2, &vec![1.0; n], params, &NoProgress, "test eigenpairs").unwrap_err();
        assert!(
            matches!(
                &e,
                OvertoneError::Numerical(NumericalError::NotConverged { advice: None, .. })
            ),
            "{e:?}"
        );
        let generic = e.to_string();
        assert!(generic.starts_with("test eigenpairs did not converge: "), "{generic}");
        for word in ["lattice", "modes", "try"] {
            assert!(!generic.contains(word), "{generic}");
        }

        let bound = e.with_advice(crate::scene::lattice_advice(true));
        assert_eq!(bound.kind(), ErrorKind::Numerical);
        assert_eq!(
            bound.to_string(),
            format!("{generic}; try a coarser lattice resolution or fewer modes")
        );
        let full = bound.with_advice(crate::scene::lattice_advice(false));
        assert_eq!(full.to_string(), format!("{generic}; try a coarser lattice resolution"));

        let setting = OvertoneError::setting("modes", 0, "at least one mode is needed");
        let before = setting.to_string();
        let after = setting.with_advice(crate::scene::lattice_advice(true));
        assert!(matches!(after, OvertoneError::Setting(_)));
        assert_eq!(after.to_string(), before);
    }
}
