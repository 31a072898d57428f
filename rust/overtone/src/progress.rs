//! Progress reports and cancellation of long precomputes (the bind of a character).
//!
//! A host hands a [`Progress`] to a constructor ([`crate::deformer::SurfaceDeformer::bind`],
//! [`crate::scene::Character::from_parts`]); the precompute reports a fraction in `[0, 1]` with
//! the name of the current stage, and checks [`Progress::cancelled`] between stages and inside
//! its long loops (the eigen solve's iterations, nearest-vertex searches), where
//! it stops with [`OvertoneError::Cancelled`]. [`AtomicProgress`] is the thread-safe
//! implementation a host polls from its UI thread while a worker thread binds.
//!
//! Code deeper in the crate that has no `Progress` argument (the fast solver's precompute is
//! reached through [`crate::dynamics::FastSolver::with_sidecar`]) sees the progress installed on
//! its thread by [`scoped`]; [`report`] and [`check`] talk to it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{OvertoneError, Result};

/// Where a precompute is, and whether the host wants it to stop.
pub trait Progress: Sync {
    /// The precompute has done `fraction` (in `[0, 1]`, never decreasing) of its work and is in
    /// stage `stage` (a short text a host can show).
    fn report(&self, fraction: f64, stage: &str);
    /// True once the host asked to stop; the precompute then returns
    /// [`OvertoneError::Cancelled`] at its next check.
    fn cancelled(&self) -> bool;
}

/// Reports nothing and is never cancelled.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _: f64, _: &str) {}
    fn cancelled(&self) -> bool {
        false
    }
}

/// Thread-safe progress: the worker writes, any thread reads [`fraction`](Self::fraction) and
/// [`stage`](Self::stage) and may call [`cancel`](Self::cancel). The fraction is kept
/// monotone (a report below the current value is ignored).
#[derive(Debug, Default)]
pub struct AtomicProgress {
    fraction_bits: AtomicU64,
    stage: Mutex<String>,
    cancel: AtomicBool,
}

impl AtomicProgress {
    /// A fresh progress at fraction 0, stage "", not cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// The last fraction reported, in `[0, 1]`.
    pub fn fraction(&self) -> f64 {
        f64::from_bits(self.fraction_bits.load(Ordering::Acquire))
    }
    /// The last stage reported.
    pub fn stage(&self) -> String {
        self.stage.lock().map(|s| s.clone()).unwrap_or_default()
    }
    /// Asks the precompute to stop at its next check.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Release);
    }
}

impl Progress for AtomicProgress {
    fn report(&self, fraction: f64, stage: &str) {
        let f = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        // Monotone maximum (f64 bits of non-negative numbers order like the numbers).
        self.fraction_bits.fetch_max(f.to_bits(), Ordering::AcqRel);
        if let Ok(mut s) = self.stage.lock() {
            if s.as_str() != stage {
                s.clear();
                s.push_str(stage);
            }
        }
    }
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }
}

/// The part `[lo, hi]` of a parent's range: a sub-task reporting `f` reports `lo + f·(hi − lo)`
/// to the parent.
pub struct SubProgress<'a> {
    parent: &'a dyn Progress,
    lo: f64,
    hi: f64,
}

impl<'a> SubProgress<'a> {
    /// The range `[lo, hi]` (`0 ≤ lo ≤ hi ≤ 1`) of `parent`.
    pub fn new(parent: &'a dyn Progress, lo: f64, hi: f64) -> Self {
        Self { parent, lo, hi }
    }
}

impl Progress for SubProgress<'_> {
    fn report(&self, fraction: f64, stage: &str) {
        self.parent
            .report(self.lo + fraction.clamp(0.0, 1.0) * (self.hi - self.lo), stage);
    }
    fn cancelled(&self) -> bool {
        self.parent.cancelled()
    }
}

/// `Err(Cancelled)` if `progress` was cancelled.
pub(crate) fn check_cancelled(progress: &dyn Progress) -> Result<()> {
    if progress.cancelled() {
        Err(OvertoneError::Cancelled)
    } else {
        Ok(())
    }
}

thread_local! {
    /// The progress installed by [`scoped`] on this thread (lifetime erased; valid while the
    /// `scoped` call that installed it runs).
    static CURRENT: Cell<Option<*const (dyn Progress + 'static)>> = const { Cell::new(None) };
}

/// Runs `f` with `progress` installed as this thread's current progress (nested calls stack and
/// restore the previous one, also on panic).
pub fn scoped<R>(progress: &dyn Progress, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const (dyn Progress + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    // SAFETY: the pointer is only dereferenced by `with_current` while this call frame (which
    // borrows `progress`) is alive: `Restore` uninstalls it before `scoped` returns or unwinds.
    let erased: *const (dyn Progress + '_) = progress;
    let erased: *const (dyn Progress + 'static) = unsafe { std::mem::transmute(erased) };
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(erased))));
    f()
}

fn with_current<R>(f: impl FnOnce(&dyn Progress) -> R) -> R {
    match CURRENT.with(|c| c.get()) {
        // SAFETY: see `scoped`: installed pointers outlive their installation.
        Some(p) => f(unsafe { &*p }),
        None => f(&NoProgress),
    }
}

/// Reports to this thread's current progress (nothing without one).
pub fn report(fraction: f64, stage: &str) {
    with_current(|p| p.report(fraction, stage))
}

/// `Err(Cancelled)` if this thread's current progress was cancelled.
pub fn check() -> Result<()> {
    with_current(check_cancelled)
}

/// This thread's current progress as a [`Progress`] value (forwards to [`report`] and
/// [`check`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Current;

impl Progress for Current {
    fn report(&self, fraction: f64, stage: &str) {
        report(fraction, stage)
    }
    fn cancelled(&self) -> bool {
        check().is_err()
    }
}

/// Runs `f` with this thread's current progress narrowed to `[lo, hi]` of its range.
pub fn within<R>(lo: f64, hi: f64, f: impl FnOnce() -> R) -> R {
    match CURRENT.with(|c| c.get()) {
        None => f(),
        Some(p) => {
            // SAFETY: see `scoped`.
            let parent: &dyn Progress = unsafe { &*p };
            let sub = SubProgress::new(parent, lo, hi);
            scoped(&sub, f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fractions are monotone and clamped, sub-ranges map linearly, cancellation reaches the
    /// scoped checks and the previous progress is restored after a scope.
    #[test]
    fn atomic_sub_and_scoped() {
        let p = AtomicProgress::new();
        p.report(0.5, "a");
        p.report(0.25, "b");
        assert_eq!(p.fraction(), 0.5);
        assert_eq!(p.stage(), "b");
        p.report(7.0, "c");
        assert_eq!(p.fraction(), 1.0);
        let q = AtomicProgress::new();
        let sub = SubProgress::new(&q, 0.2, 0.6);
        sub.report(0.5, "half");
        assert!((q.fraction() - 0.4).abs() < 1e-15);
        scoped(&q, || {
            within(0.6, 1.0, || report(0.5, "inner"));
            assert!((q.fraction() - 0.8).abs() < 1e-15);
            assert!(check().is_ok());
            q.cancel();
            assert!(matches!(check(), Err(OvertoneError::Cancelled)));
        });
        assert!(check().is_ok(), "no progress is installed after the scope");
    }
}
