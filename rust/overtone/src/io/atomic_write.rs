//! Atomic file replacement that an interrupt can abandon cleanly.
//!
//! Every output goes to a temporary file beside its target (`.overtone-tmp.PID.N.NAME`, the
//! target's extension kept so format-sniffing writers still work) and is renamed over the target
//! once complete, so the target is either the old file or the whole new one. The temporary files
//! being written are registered; [`abandon_pending_writes`] (called by a host's signal handler,
//! e.g. the CLI on Ctrl-C or SIGTERM) deletes them and makes every later commit fail, so after an
//! interrupt no output changes and no temporary file is left behind.
//!
//! A program that writes several outputs per run (the CLI: cache, MDD, report, picture, sidecar)
//! calls [`defer_commits`] first: completed temporary files then wait, and [`commit_deferred`]
//! renames them all at the end under the same lock an interrupt takes, so an interrupt leaves
//! either every output of the run new or every one as it was ([`discard_deferred`] after a
//! failure).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{OvertoneError, Result};

/// Temporary files created and not yet renamed or removed. Creating one, renaming one and
/// abandoning them all happen under this lock, so an abandon never races a rename.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set once by [`abandon_pending_writes`]; no temporary file is created or committed afterwards.
static ABANDONED: AtomicBool = AtomicBool::new(false);
static COUNTER: AtomicU64 = AtomicU64::new(0);
/// Set by [`defer_commits`]: completed writes are staged in [`STAGED`] instead of renamed.
static DEFER: AtomicBool = AtomicBool::new(false);
/// Set when [`commit_deferred`] has renamed every staged file.
static COMMITTED: AtomicBool = AtomicBool::new(false);
/// Completed temporary files and their targets, waiting for [`commit_deferred`] (their temporary
/// paths stay in [`PENDING`] until renamed, so an interrupt deletes them).
static STAGED: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn staged() -> std::sync::MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    STAGED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn interrupted(path: &Path) -> OvertoneError {
    OvertoneError::io(
        path,
        "not written: the run was interrupted (the previous file is unchanged)",
    )
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so the
/// target is either the old file or the complete new one, never a partial write.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |tmp| {
        let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(tmp)?;
        f.write_all(bytes)
    })
}

/// Like [`write_atomically`] for writers that open the file themselves: `write` receives the
/// path of an empty temporary file (same folder and extension as `path`) and fills it; the file
/// is then synced and renamed over `path`. On any failure, or after
/// [`abandon_pending_writes`], the temporary file is removed and `path` is untouched.
pub(crate) fn write_atomically_with<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&Path) -> std::io::Result<()>,
{
    let file = AtomicFile::create(path)?;
    match write(&file.tmp) {
        Ok(()) => file.commit(),
        Err(e) => Err(OvertoneError::io(path, format!("cannot write: {e}"))),
    }
}

/// A file written piece by piece and replaced atomically: the bytes go to a registered
/// temporary file beside `path` (as [`write_atomically`]'s), and [`commit`](Self::commit) syncs
/// it and renames it over `path` (or stages it, see [`defer_commits`]). Dropped without a commit
/// (an error, a panic, an early return) the temporary file is removed and `path` is untouched,
/// so a long bake that streams its frames leaves either the old file or the whole new one.
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Creates the temporary file for `path` (refused after [`abandon_pending_writes`]).
    pub fn create(path: &Path) -> Result<Self> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| OvertoneError::io(path, "not a file path"))?
            .to_string_lossy();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".overtone-tmp.{}.{n}.{name}", std::process::id()));
        let mut list = pending();
        if ABANDONED.load(Ordering::SeqCst) {
            return Err(interrupted(path));
        }
        let file = std::fs::File::create(&tmp).map_err(|e| OvertoneError::io(path, format!("cannot write: {e}")))?;
        list.push(tmp.clone());
        Ok(Self {
            target: path.to_path_buf(),
            tmp,
            out: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// The path this file will replace.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Appends `bytes` (buffered). Fails once the run's writes were abandoned (the temporary
    /// file is gone: a long stream stops at once instead of writing on into a deleted file).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        if ABANDONED.load(Ordering::Relaxed) {
            return Err(interrupted(&self.target));
        }
        let out = self.out.as_mut().expect("an uncommitted atomic file is open");
        out.write_all(bytes)
            .map_err(|e| OvertoneError::io(&self.target, format!("cannot write: {e}")))
    }

    /// Flushes and syncs the temporary file and renames it over the target (or stages it when
    /// commits are deferred). On failure, or after an interrupt, the temporary file is removed
    /// and the target is untouched.
    pub fn commit(mut self) -> Result<()> {
        let written = match self.out.take() {
            Some(out) => out.into_inner().map_err(|e| e.into_error()).map(drop),
            None => Ok(()),
        }
        .and_then(|()| std::fs::File::open(&self.tmp)?.sync_all());
        let (path, tmp) = (self.target.clone(), self.tmp.clone());
        let mut list = pending();
        let result = match written {
            Err(e) => Err(OvertoneError::io(&path, format!("cannot write: {e}"))),
            Ok(()) if ABANDONED.load(Ordering::SeqCst) => Err(interrupted(&path)),
            Ok(()) if DEFER.load(Ordering::SeqCst) => {
                let mut st = staged();
                // A second write to the same target in one run replaces the first.
                if let Some(k) = st.iter().position(|(_, target)| target == &path) {
                    let (old_tmp, _) = st.remove(k);
                    let _ = std::fs::remove_file(&old_tmp);
                    list.retain(|p| p != &old_tmp);
                }
                st.push((tmp.clone(), path.clone()));
                // Staged: the temporary file now belongs to the staging list.
                self.tmp = PathBuf::new();
                return Ok(());
            }
            Ok(()) => std::fs::rename(&tmp, &path).map_err(|e| OvertoneError::io(&path, format!("cannot write: {e}"))),
        };
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        list.retain(|p| p != &tmp);
        self.tmp = PathBuf::new();
        result
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file: its temporary file is closed, removed and forgotten.
    fn drop(&mut self) {
        if self.tmp.as_os_str().is_empty() {
            return;
        }
        drop(self.out.take());
        let mut list = pending();
        let _ = std::fs::remove_file(&self.tmp);
        list.retain(|p| p != &self.tmp);
    }
}

/// The bytes `path` will hold once this run's writes are committed: its staged write when there
/// is one (see [`defer_commits`]), else the file as it is; `None` when neither can be read. For
/// a writer that updates part of a file it may already have written in this run.
pub(crate) fn read_latest(path: &Path) -> Option<Vec<u8>> {
    let staged_tmp = staged()
        .iter()
        .rev()
        .find(|(_, target)| target == path)
        .map(|(tmp, _)| tmp.clone());
    std::fs::read(staged_tmp.as_deref().unwrap_or(path)).ok()
}

/// From now on (for the whole process), completed writes are staged and only renamed over their
/// targets by [`commit_deferred`].
pub fn defer_commits() {
    DEFER.store(true, Ordering::SeqCst);
}

/// Renames every staged temporary file over its target, all under the lock an interrupt takes:
/// either all of them are committed or, after an interrupt, none. Fails (committing nothing)
/// when the run was interrupted; a rename that fails (e.g. the target was replaced by a folder
/// meanwhile) is reported and the remaining staged files are discarded.
pub fn commit_deferred() -> Result<()> {
    let mut list = pending();
    let mut st = staged();
    if ABANDONED.load(Ordering::SeqCst) {
        let (_, target) = st.first().cloned().unwrap_or_default();
        drop(st);
        drop(list);
        discard_deferred();
        return Err(interrupted(&target));
    }
    let mut result = Ok(());
    for (tmp, target) in st.drain(..) {
        if result.is_ok() {
            result =
                std::fs::rename(&tmp, &target).map_err(|e| OvertoneError::io(&target, format!("cannot write: {e}")));
        }
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        list.retain(|p| p != &tmp);
    }
    if result.is_ok() {
        COMMITTED.store(true, Ordering::SeqCst);
    }
    result
}

/// Whether [`commit_deferred`] has committed this run's outputs (an interrupt after that point
/// changes nothing).
pub fn deferred_committed() -> bool {
    COMMITTED.load(Ordering::SeqCst)
}

/// Whether [`abandon_pending_writes`] was called (an interrupt is stopping the run: a command
/// that fails because of it should let the signal handler report and exit).
pub fn writes_abandoned() -> bool {
    ABANDONED.load(Ordering::SeqCst)
}

/// Deletes every staged temporary file (after a failed run): no target changes.
pub fn discard_deferred() {
    let mut list = pending();
    for (tmp, _) in staged().drain(..) {
        let _ = std::fs::remove_file(&tmp);
        list.retain(|p| p != &tmp);
    }
}

/// Deletes every temporary file being written and refuses all later commits; returns how many
/// were deleted. Called once from a signal handler thread before the process exits: a rename in
/// progress finishes first (it holds the same lock) and none starts afterwards. Writers still
/// filling a temporary file notice at their commit and remove it themselves; this waits for
/// them up to `grace`, then deletes whatever is still registered.
pub fn abandon_pending_writes(grace: std::time::Duration) -> usize {
    let sweep = |list: &Vec<PathBuf>| {
        for p in list {
            let _ = std::fs::remove_file(p);
        }
        list.len()
    };
    let n = {
        let mut list = pending();
        ABANDONED.store(true, Ordering::SeqCst);
        let n = sweep(&list);
        // Staged files are complete and nobody waits on them: forget them now.
        for (tmp, _) in staged().drain(..) {
            list.retain(|p| p != &tmp);
        }
        n
    };
    let t0 = std::time::Instant::now();
    while !pending().is_empty() && t0.elapsed() < grace {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    sweep(&pending());
    n
}
