//! The `--solver` flag: which algorithm runs a scene or a character.

use clap::ValueEnum;
use overtone::dynamics::{FastParams, LocalGlobalParams};
use overtone::scene::{Scene, SolverKind};

/// The solver a user names on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SolverChoice {
    /// The full-order solver of the scene's material: `local-global` for ARAP, `newton` for
    /// neo-Hookean.
    Full,
    /// Full-order ARAP, local/global iterations (the seed tutorials' solver).
    LocalGlobal,
    /// Full-order Newton's method on a hyperelastic (neo-Hookean) material.
    Newton,
    /// Fast complementary dynamics: rig-orthogonal skinning eigenmodes and rotation clusters.
    Fast,
}

/// The iteration controls given on the command line (each `None` when not given).
#[derive(Clone, Copy, Debug, Default)]
pub struct IterationFlags {
    /// `--iterations`: local/global iterations (default 10; up to 100 to convergence on a
    /// backward-Euler scene), or most Newton iterations (default 30).
    pub iterations: Option<usize>,
    /// `--tolerance`: the local/global relative update, or Newton's step length.
    pub tolerance: Option<f64>,
}

impl SolverChoice {
    /// The solver for `scene` (the full-order one of [`SolverKind::full_order_for`]); `fast` is
    /// the fast solver's size (its iterations are replaced by `flags`' when given).
    pub fn kind(self, scene: &Scene, fast: FastParams, flags: IterationFlags) -> SolverKind {
        let chosen = match self {
            SolverChoice::Full => SolverKind::full_order_for(scene),
            SolverChoice::LocalGlobal => match SolverKind::full_order_for(scene) {
                lg @ SolverKind::LocalGlobal(_) => lg,
                _ => SolverKind::LocalGlobal(LocalGlobalParams::default()),
            },
            SolverChoice::Newton => SolverKind::newton(),
            SolverChoice::Fast => SolverKind::Fast(fast),
        };
        match chosen {
            SolverKind::LocalGlobal(d) => SolverKind::LocalGlobal(LocalGlobalParams {
                iterations: flags.iterations.unwrap_or(d.iterations),
                tolerance: flags.tolerance.or(d.tolerance),
            }),
            SolverKind::Newton {
                max_iterations,
                tolerance,
            } => SolverKind::Newton {
                max_iterations: flags.iterations.unwrap_or(max_iterations),
                tolerance: flags.tolerance.unwrap_or(tolerance),
            },
            SolverKind::Fast(f) => SolverKind::Fast(FastParams {
                iterations: flags.iterations.unwrap_or(f.iterations),
                ..f
            }),
        }
    }
}
