#!/usr/bin/env bash
# Overtone inside headless Blender: live-preview cost per frame on CesiumMan (with and without
# Overtone) and a bake against Blender's Soft Body on a skinned tube. Writes
# target/blender-bench/{table.md,results.json}. Uses the venv of scripts/test_blender.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${OVERTONE_BPY_VENV:-$HOME/.cache/overtone/bpy-4.5.15}"
if ! "$VENV/bin/python" -c "import bpy" >/dev/null 2>&1; then
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "bpy==4.5.15"
fi
bash scripts/build_blender_addon.sh >/dev/null
OVERTONE_ADDON_DIR="$PWD/target/blender" OVERTONE_BENCH_OUT="$PWD/target/blender-bench" \
  timeout 1200 "$VENV/bin/python" plugin/blender/bench/bench_host.py
