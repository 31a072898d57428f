#!/usr/bin/env bash
# Fingerprints of Overtone's outputs, to prove a restructuring changed no behaviour.
#
# Runs the CLI on a fixed set of jobs and prints one line per output: a name and the SHA-256 of
# the PC2 cache it wrote (f32 positions of every frame, so any change of the trajectory beyond
# float32 round-off changes the hash):
#   * seed tutorial 23's five metronome beams (40x5 … 180x10), full-order and fast solvers;
#   * the reference release's demo scenes (elephant, fish, frog, sphere; full order) and the
#     fast paper's cd_fish (fast solver);
#   * CesiumMan baked at the default settings (fast) and with the full-order solver.
#
# Usage:
#   scripts/output_fingerprints.sh --write FILE   record the fingerprints
#   scripts/output_fingerprints.sh --check FILE   exit 1 and list the jobs whose output changed
# OVERTONE_BIN: an already built binary (default: build and use target/release/overtone).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
manifest=${2:-}
if [ -z "$manifest" ] || { [ "$mode" != --write ] && [ "$mode" != --check ]; }; then
  echo "usage: $0 --write|--check MANIFEST" >&2
  exit 2
fi
if [ -z "${OVERTONE_BIN:-}" ]; then
  cargo build --release -q -p overtone-cli
fi
bin=${OVERTONE_BIN:-target/release/overtone}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=examples/data
cpp=$data/complementary-dynamics-cpp

# name | command arguments (the output path is appended as --out)
jobs=()
for size in 40x5 70x7 100x8 140x9 180x10; do
  jobs+=("beam-$size-full|run metronome:$size --solver full")
  jobs+=("beam-$size-fast|run metronome:$size --solver fast")
done
for s in elephant fish frog sphere; do
  jobs+=("$s-full|run $cpp/$s/$s.json --solver full")
done
jobs+=("cd_fish-fast|run $data/fast-complementary-dynamics/cd_fish/cd_fish_rig.json --solver fast")
jobs+=("CesiumMan-fast|bake $data/khronos-gltf-sample-assets/CesiumMan.glb")
jobs+=("CesiumMan-full|bake $data/khronos-gltf-sample-assets/CesiumMan.glb --solver full")

lines=$work/fingerprints.txt
: >"$lines"
for job in "${jobs[@]}"; do
  name=${job%%|*}
  # shellcheck disable=SC2086 # the arguments are split on purpose
  "$bin" ${job#*|} --out "$work/$name.pc2" >/dev/null 2>"$work/$name.log" || {
    echo "$name: overtone failed:" >&2
    cat "$work/$name.log" >&2
    exit 1
  }
  printf '%s %s\n' "$name" "$(sha256sum "$work/$name.pc2" | cut -d' ' -f1)" | tee -a "$lines"
done

if [ "$mode" = --write ]; then
  cp "$lines" "$manifest"
  echo "wrote $(wc -l <"$manifest") fingerprints to $manifest"
else
  if diff <(sort "$manifest") <(sort "$lines") >"$work/diff"; then
    echo "all $(wc -l <"$lines") outputs bit-identical to $manifest"
  else
    echo "outputs changed (< recorded, > now):" >&2
    cat "$work/diff" >&2
    exit 1
  fi
fi
