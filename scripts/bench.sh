#!/usr/bin/env bash
# Benchmark table (ms/step) of the full-order solver: the seed's metronome beams at five
# resolutions and the reference release's 3D scenes. Writes target/bench/full_order.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/bench
cargo run --release -q -p overtone-cli -- bench --out target/bench/full_order.md "$@"
