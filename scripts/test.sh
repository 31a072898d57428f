#!/usr/bin/env bash
# The whole test suite. Release mode: faer's sparse solves are ~100x slower in debug builds, and
# one profile means every dependency compiles once (CI, demo and bench share target/).
# Prints the wall time of each phase, and the total, at the end (issue 33: a newcomer's run).
set -euo pipefail
cd "$(dirname "$0")/.."
TIMES=()
START=$SECONDS
phase() {  # phase NAME COMMAND...: runs the command and records its wall time
  local name=$1 t0=$SECONDS
  shift
  "$@"
  TIMES+=("$name: $((SECONDS - t0)) s")
}
phase "format check" cargo fmt --all -- --check
phase "Rust build and tests" cargo test --release --workspace
# The C++ host layer: deformer class over the cxx bridge, C ABI shared library.
phase "C/C++" bash scripts/test_cpp.sh
# The Blender add-on in real (headless) Blender: the bpy wheel in a cached venv.
phase "Blender" bash scripts/test_blender.sh
# Alembic/USD caches read back by PyAlembic, usd-core and Blender's importers (cached venv).
phase "caches" bash scripts/test_caches.sh
# The Maya node builds where a devkit exists; elsewhere this says why it was skipped.
phase "Maya" bash scripts/build_maya.sh
# The two README commands must stay true: the demo runs end to end.
phase "demo" cargo run --release -q -p overtone-cli -- demo --out-dir target/demo-check
echo "test suite phases (wall time):"
printf '  %s\n' "${TIMES[@]}"
echo "  total: $((SECONDS - START)) s"
