#!/usr/bin/env bash
# Headless Blender tests of the add-on: builds it, installs the bpy wheel into a cached venv
# (first run ~30 s and ~1 GB; $OVERTONE_BPY_VENV overrides the location) and runs
# plugin/blender/tests/test_addon.py under a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
BPY_VERSION=4.5.15
VENV="${OVERTONE_BPY_VENV:-$HOME/.cache/overtone/bpy-$BPY_VERSION}"
if ! "$VENV/bin/python" -c "import bpy" >/dev/null 2>&1; then
  echo "installing bpy==$BPY_VERSION into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "bpy==$BPY_VERSION"
fi
bash scripts/build_blender_addon.sh >/dev/null
RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
  timeout 900 "$VENV/bin/python" plugin/blender/tests/test_addon.py
# Art-direction controls: settings layout, strength/damping without a rebind (keyframed), Stiffness Group.
RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
  timeout 600 "$VENV/bin/python" plugin/blender/tests/test_controls.py
# Cache formats (PC2/Alembic/USD playback) and the farm entry (batch bake of a saved .blend).
RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
  timeout 600 "$VENV/bin/python" plugin/blender/tests/test_pipeline.py
# Data safety: protected paths, a cancelled modal bake, undo after Add / Bake / Remove.
RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
  timeout 300 "$VENV/bin/python" plugin/blender/tests/test_safety.py
# Imported and transformed rigs (any object transform, several meshes as one body, unsaved bakes).
RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
  timeout 600 "$VENV/bin/python" plugin/blender/tests/test_imported_rigs.py
# The zip as a user installs it, into a throw-away user folder.
INSTALL_HOME=$(mktemp -d)
trap 'rm -rf "$INSTALL_HOME"' EXIT
HOME="$INSTALL_HOME" RUST_BACKTRACE=0 timeout 300 "$VENV/bin/python" plugin/blender/tests/test_install.py \
  target/blender/overtone-0.1.0-linux-x64.zip
