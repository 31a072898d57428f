#!/usr/bin/env bash
# Side-by-side benchmark against simkit 0.1.8 (the package the seed tutorials run on), in one run.
#
#   scripts/bench_peer.sh [--sizes 40x5,70x7] [--steps 200] [--repeats 3] [--skip-cantilever]
#
# Creates or reuses a Python venv with simkit and its needs (pinned below; PEER_VENV overrides the
# place, default target/peer-venv), builds Overtone (release), then scripts/peer/bench_peer.py:
# at each of seed tutorial 23's five metronome-beam resolutions it runs simkit's full-order and
# fast complementary dynamics, exports the same mesh, leak field D and rig motion as an
# overtone-scene/1 file, runs Overtone on it (both solvers), and compares the full-order
# trajectories; then tutorial 17's cantilever eval/solve timings with simkit. Prints the tables
# and writes target/peer/{table.md,results.json,ms_per_step.png}. Not part of scripts/test.sh:
# it needs PyPI and takes 3-4 minutes. docs/benchmarks.md has a run and what it means.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${PEER_VENV:-target/peer-venv}"
OUT="${PEER_OUT:-target/peer}"
PY="${PYTHON:-python3}"
PINS="simkit==0.1.8 numpy==2.4.6 scipy==1.17.1 libigl==2.6.3 cvxopt==1.3.3 matplotlib==3.11.2 threadpoolctl==3.8.0"

if [ ! -x "$VENV/bin/python" ]; then
    echo "creating venv $VENV"
    "$PY" -m venv "$VENV"
fi
if [ "$(cat "$VENV/.overtone-pins" 2>/dev/null || true)" != "$PINS" ]; then
    echo "installing $PINS"
    # shellcheck disable=SC2086
    "$VENV/bin/pip" install -q $PINS
    echo "$PINS" > "$VENV/.overtone-pins"
fi

cargo build --release -q -p overtone-cli
cargo build --release -q -p overtone --example peer_trajectory

# Tutorial 17's Overtone side is the neo-Hookean cantilever example of the tutorial's own crate
# (overtone-tutorial17), when this tree has it: its summary to .txt, its numbers to .json.
CANTILEVER="pending (no \`cantilever\` example in this tree)"
if [ -f rust/overtone-tutorial17/examples/cantilever.rs ]; then
    mkdir -p "$OUT"
    cargo run --release -q -p overtone-tutorial17 --example cantilever -- \
        --json "$OUT/overtone_cantilever.json" > "$OUT/overtone_cantilever.txt"
    CANTILEVER="see $OUT/overtone_cantilever.txt"
fi

# simkit is measured at its best: without the OpenBLAS tuning variables that some machines here
# set for old builds (they slow a current numpy), and with one BLAS thread unless the caller says
# otherwise (on 2 shared cores, two BLAS threads made a 240x240 dense solve 4.5x slower; the
# metronome timings do not change). This command only.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" \
    "$VENV/bin/python" scripts/peer/bench_peer.py \
    --out-dir "$OUT" \
    --overtone target/release/overtone \
    --trajectory target/release/examples/peer_trajectory \
    --cantilever "$CANTILEVER" "$@"
