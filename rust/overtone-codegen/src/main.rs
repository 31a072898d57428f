//! Writes the host files generated from the settings table (`overtone_ffi::codegen`), or with
//! `--check` lists the stale ones and exits 1.

use std::path::PathBuf;

fn main() -> std::process::ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    if std::env::args().any(|a| a == "--check") {
        let stale = overtone_codegen::stale(&root);
        for s in &stale {
            eprintln!("{s}");
        }
        return if stale.is_empty() {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::FAILURE
        };
    }
    match overtone_codegen::write(&root) {
        Ok(changed) => {
            for c in changed {
                println!("wrote {c}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
