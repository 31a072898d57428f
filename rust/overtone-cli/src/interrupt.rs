//! Ctrl-C, SIGTERM (a farm manager stopping a job) and SIGHUP: stop at once, leave no temporary
//! file behind, change no output that was not already complete, exit non-zero with a message.
//!
//! Every output is written to a registered temporary file, and all of them are renamed together
//! when the command has finished (`overtone::io::defer_commits` / `commit_deferred`). On a
//! signal, a watcher thread abandons the pending writes (deletes the temporary files and refuses
//! every later rename; a commit in progress finishes first), says so on stderr and exits with
//! `128 + signal` (130 for Ctrl-C, 143 for SIGTERM), the shell convention.

use std::time::Duration;

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Starts the watcher thread. Call once, before any work.
pub fn install() -> Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP]).context("installing the Ctrl-C/SIGTERM handler")?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let removed = overtone::io::abandon_pending_writes(Duration::from_secs(2));
            let name = match sig {
                SIGINT => "Ctrl-C (SIGINT)",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            if overtone::io::deferred_committed() {
                eprintln!("\nerror: interrupted by {name} after this run's outputs were written: they are complete");
            } else {
                eprintln!(
                    "\nerror: interrupted by {name}: stopped; every output is as it was before this run ({removed} temporary file(s) removed)"
                );
            }
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}
