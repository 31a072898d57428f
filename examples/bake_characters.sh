#!/usr/bin/env bash
# Bakes the bundled glTF characters (CesiumMan, Fox, RiggedSimple) with the fast solver:
# a PC2 cache of each file's own vertices, an MDD, a preview PNG, a report and a sidecar, in
# OUT (default target/characters). Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/characters}
mkdir -p "$out"
cargo build --release -q -p overtone-cli
for name in CesiumMan Fox RiggedSimple; do
  target/release/overtone bake "examples/data/khronos-gltf-sample-assets/$name.glb" \
    --out "$out/$name.pc2" --mdd "$out/$name.mdd" --preview "$out/$name.png" \
    --report "$out/$name.json" --sidecar "$out/$name.ovt"
done
echo "baked into $out (a second run loads the sidecars)"
