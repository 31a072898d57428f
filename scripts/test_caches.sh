#!/usr/bin/env bash
# The Alembic and USD caches read back by the reference readers: PyAlembic (`alembic3d`) and
# Pixar's `usd-core` in a cached venv (first run installs them: ~420 MB, $OVERTONE_READERS_VENV
# overrides the location), and Blender's own importers (the bpy venv of test_blender.sh).
# CesiumMan and RiggedFigure are baked to .pc2/.abc/.usda/.usdc; every cache must equal the PC2.
# Prints the file sizes, the cache write times (the report's cache_write_ms) and the differences.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${OVERTONE_READERS_VENV:-$HOME/.cache/overtone/readers-py311}"
if ! "$VENV/bin/python" -c "import alembic3d, pxr, numpy" >/dev/null 2>&1; then
  echo "installing alembic3d, usd-core and numpy into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "alembic3d==1.8.12.1" "usd-core==26.11" "numpy<3"
fi
BPY="${OVERTONE_BPY_VENV:-$HOME/.cache/overtone/bpy-4.5.15}"
cargo build --release -q -p overtone-cli
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for name in CesiumMan RiggedFigure; do
  glb="examples/data/khronos-gltf-sample-assets/$name.glb"
  for ext in pc2 abc usda usdc; do
    target/release/overtone bake "$glb" --out "$OUT/$name.$ext" --sidecar "$OUT/$name.ovt" \
      --report "$OUT/$name.$ext.json" >/dev/null 2>&1
    printf '%s.%s: written in %s ms\n' "$name" "$ext" \
      "$(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['cache_write_ms'], 2))" "$OUT/$name.$ext.json")"
  done
  "$VENV/bin/python" scripts/caches/check_readers.py "$name" 24 "$OUT/$name.pc2" \
    "$OUT/$name.abc" "$OUT/$name.usda" "$OUT/$name.usdc"
  if "$BPY/bin/python" -c "import bpy" >/dev/null 2>&1; then
    timeout 300 "$BPY/bin/python" plugin/blender/tests/test_caches.py "$name" 24 "$OUT/$name.pc2" \
      "$OUT/$name.abc" "$OUT/$name.usda" "$OUT/$name.usdc" | grep -v -e '^$' -e 'import.*took'
  else
    echo "bpy venv missing at $BPY: run scripts/test_blender.sh first" >&2
    exit 1
  fi
done
# A format the bake cannot write is refused before any work, naming the ones it can.
if target/release/overtone bake examples/data/khronos-gltf-sample-assets/RiggedSimple.glb --out "$OUT/x.fbx" 2>"$OUT/err"; then
  echo "FAILED: --out x.fbx was accepted" >&2; exit 1
fi
grep -q ".abc, .usda, .usdc" "$OUT/err" || { echo "FAILED: refusal does not list the formats" >&2; exit 1; }
test ! -e "$OUT/x.fbx"
echo "caches: 8 checks passed, 0 failed"
