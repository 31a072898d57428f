#!/usr/bin/env bash
# Writes the host files generated from the settings table (rust/overtone/src/settings/table.rs):
# the cxx bridge's struct and enums, the C header's, the C++ conversions, the ctypes mirror, the
# Blender property table, the Maya attribute table and docs/reference/settings.md.
# `--check`: list the stale ones and exit 1 (the Rust test generated_host_files_are_current
# checks the same).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p overtone-codegen --bin generate-host-files -- "$@"
