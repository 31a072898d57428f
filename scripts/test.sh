#!/usr/bin/env bash
# The whole test suite. Release mode: faer's sparse solves are ~100x slower in debug builds, and
# one profile means every dependency compiles once (CI, demo and bench share target/).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo test --release --workspace
# The C++ host layer: deformer class over the cxx bridge, C ABI shared library.
bash scripts/test_cpp.sh
# The Blender add-on in real (headless) Blender: the bpy wheel in a cached venv.
bash scripts/test_blender.sh
# Alembic/USD caches read back by PyAlembic, usd-core and Blender's importers (cached venv).
bash scripts/test_caches.sh
# The Maya node builds where a devkit exists; elsewhere this says why it was skipped.
bash scripts/build_maya.sh
# The two README commands must stay true: the demo runs end to end.
cargo run --release -q -p overtone-cli -- demo --out-dir target/demo-check
