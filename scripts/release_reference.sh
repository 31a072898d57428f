#!/usr/bin/env bash
# Reference trajectories of the Complementary Dynamics C++ release's scenes, from an independent
# implementation of its demo step (scripts/peer/release_peer.py), for the test that Overtone reads
# the release's scenes with the release's conventions
# (rust/overtone/tests/physics/release_conventions.rs).
#
#   scripts/release_reference.sh [--write] [SCENE[:FRAMES]]...   (default: sphere:30 elephant:20)
#
# For each scene: the rig's positions from `overtone run SCENE --strength 0` (scene units), the
# peer's secondary displacement u_c for the first FRAMES frames, and Overtone's (`--solver full`),
# then prints the per-frame difference (frames 1-10 and 11-20, as a fraction of the peer's peak)
# and the peak ratio. --write stores the peer's u_c in rust/overtone/tests/data/release_reference/.
# Needs PyPI (numpy, scipy: a venv in target/release-peer-venv, RELEASE_PEER_VENV overrides).
# Not part of scripts/test.sh. Also runs frog:20 and fish:20 when named (minutes for the fish).
set -euo pipefail
cd "$(dirname "$0")/.."
write=0
scenes=()
for a in "$@"; do
  case $a in
    --write) write=1 ;;
    *) scenes+=("$a") ;;
  esac
done
[ ${#scenes[@]} -gt 0 ] || scenes=(sphere:30 elephant:20)
VENV="${RELEASE_PEER_VENV:-target/release-peer-venv}"
PINS="numpy==2.4.6 scipy==1.17.1"
if [ ! -x "$VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$VENV"
fi
if [ "$(cat "$VENV/.overtone-pins" 2>/dev/null || true)" != "$PINS" ]; then
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install -q $PINS
  echo "$PINS" >"$VENV/.overtone-pins"
fi
cargo build --release -q -p overtone-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=rust/overtone/tests/data/release_reference
for item in "${scenes[@]}"; do
  name=${item%%:*}
  frames=${item#*:}
  [ "$frames" != "$item" ] || frames=20
  scene=examples/data/complementary-dynamics-cpp/$name/$name.json
  target/release/overtone run "$scene" --solver full --strength 0 --out "$work/rig.pc2" >/dev/null
  target/release/overtone run "$scene" --solver full --out "$work/overtone.pc2" >/dev/null
  "$VENV/bin/python" scripts/peer/release_peer.py "$scene" "$work/rig.pc2" "$frames" "$work/$name.pc2"
  "$VENV/bin/python" - "$work/$name.pc2" "$work/overtone.pc2" "$work/rig.pc2" <<'PY'
import sys
sys.path.insert(0, "scripts/peer")
import numpy as np
from release_peer import read_pc2
peer, ov, rig = (read_pc2(p) for p in sys.argv[1:4])
f = len(peer)
uc = ov[:f] - rig[:f]
peak = np.linalg.norm(peer, axis=2).max()
for a, b in [(1, 11), (11, 21)]:
    if a < f:
        d = np.linalg.norm(uc[a:min(b, f)] - peer[a:min(b, f)], axis=2).max()
        print(f"  frames {a}-{min(b, f) - 1}: max |difference| {d / peak:.2e} of the peak")
print(f"  peak |u_c| peer {peak:.4g}, overtone {np.linalg.norm(uc, axis=2).max():.4g} "
      f"(ratio {np.linalg.norm(uc, axis=2).max() / peak:.4f})")
PY
  if [ $write = 1 ]; then
    mkdir -p "$data"
    cp "$work/$name.pc2" "$data/$name.pc2"
    echo "  wrote $data/$name.pc2"
  fi
done
