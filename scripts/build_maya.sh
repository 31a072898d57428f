#!/usr/bin/env bash
# Builds the Maya plug-in (plugin/maya) where a Maya devkit exists (MAYA_LOCATION or
# DEVKIT_LOCATION); otherwise says that it was skipped and why, and succeeds.
set -euo pipefail
cd "$(dirname "$0")/.."
devkit="${MAYA_LOCATION:-${DEVKIT_LOCATION:-}}"
if ! command -v cmake >/dev/null 2>&1; then
  echo "Maya plug-in: skipped (cmake is not installed; the build needs cmake and a Maya devkit)"
  exit 0
fi
if [ -z "$devkit" ] || [ ! -f "$devkit/include/maya/MFnPlugin.h" ]; then
  echo "Maya plug-in: skipped (no Maya devkit: set MAYA_LOCATION to a folder with include/maya/MFnPlugin.h)"
  exit 0
fi
# The whole workspace, as the test suite builds it: one set of features, so the static library
# shares every compiled dependency with the tests and the demo (no second build of faer).
cargo build --release -q --workspace
cmake -S plugin/maya -B target/maya -DCMAKE_BUILD_TYPE=Release -DMAYA_LOCATION="$devkit"
cmake --build target/maya --config Release
echo "Maya plug-in: built in target/maya"
