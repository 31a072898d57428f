#!/usr/bin/env bash
# Headless Blender tests of the add-on: builds it, installs the bpy wheel into a cached venv
# (first run ~30 s and ~1 GB; $OVERTONE_BPY_VENV overrides the location) and runs the test
# scripts of plugin/blender/tests, each in its own Blender process under a timeout, in two lanes
# side by side (the machine has two cores; each script's output is printed whole, in a fixed
# order, once both lanes are done). Fails if any script fails.
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
LOGS=$(mktemp -d)
INSTALL_HOME=$(mktemp -d)
CONTROLS_HOME=$(mktemp -d)
trap 'rm -rf "$LOGS" "$INSTALL_HOME" "$CONTROLS_HOME"' EXIT

# run NAME TIMEOUT [ARGS...]: one test script; its output goes to $LOGS/NAME.log, its exit status
# and wall time to $LOGS/NAME.status.
run() {
  local name=$1 limit=$2 t0=$SECONDS status=0
  shift 2
  RUST_BACKTRACE=0 OVERTONE_ADDON_DIR="$PWD/target/blender" \
    timeout "$limit" "$VENV/bin/python" "plugin/blender/tests/$name.py" "$@" >"$LOGS/$name.log" 2>&1 || status=$?
  echo "$status $((SECONDS - t0))" >"$LOGS/$name.status"
}

# Imported and transformed rigs (any object transform, several meshes as one body, unsaved
# bakes, library overrides): the longest script, a lane of its own.
lane_rigs() {
  run test_imported_rigs 900
}
# The add-on's behaviour; art-direction controls (settings layout, strength/damping without a
# rebind, presets, Stiffness Group); cache formats and the farm entry; data safety (protected
# paths, a cancelled modal bake, undo); and the zip as a user installs it, into a throw-away
# user folder.
lane_addon() {
  run test_addon 900
  # Its presets test writes into the user's preset folder: a throw-away one.
  HOME="$CONTROLS_HOME" run test_controls 600
  run test_pipeline 600
  run test_safety 300
  HOME="$INSTALL_HOME" run test_install 300 target/blender/overtone-0.1.0-linux-x64.zip
}
lane_rigs &
RIGS=$!
lane_addon &
ADDON=$!
wait "$RIGS" "$ADDON" || true

failed=0
for name in test_addon test_controls test_pipeline test_safety test_imported_rigs test_install; do
  echo "=== $name"
  cat "$LOGS/$name.log" 2>/dev/null || true
  if [[ -f "$LOGS/$name.status" ]]; then
    read -r status seconds <"$LOGS/$name.status"
  else
    status="not run" seconds=0
  fi
  echo "=== $name: exit $status after $seconds s"
  [[ "$status" == "0" ]] || failed=1
done
exit "$failed"
