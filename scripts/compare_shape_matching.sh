#!/usr/bin/env bash
# Per-step timings of the shape-matching examples of two builds, run alternately in the same
# session (so machine load affects both alike), as a table with the new/old ratio.
#
#   scripts/compare_shape_matching.sh OLD_DIR NEW_DIR [ROUNDS]
#
# OLD_DIR and NEW_DIR each hold `shape_matching_cuboid` and `shape_matching_cylinder` binaries
# (e.g. copies of target/release/examples/ built at two commits). The fastest round is kept.
set -euo pipefail
old=${1:?old binaries folder}
new=${2:?new binaries folder}
rounds=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs=(
  "cuboid|--examples none"
  "cuboid|--examples twist"
  "cuboid|--examples both"
  "cuboid|--examples both --manifold per-region"
  "cylinder|--examples none"
  "cylinder|--examples twist"
  "cylinder|--examples both"
  "cylinder|--examples both --manifold per-region"
)
t_tot() { # binary, args -> t_tot in µs
  "$1" $2 --out "$tmp/c.pc2" --report "$tmp/r.json" >/dev/null
  python3 -c "import json;print(json.load(open('$tmp/r.json'))['summary']['t_tot_ms']*1000)"
}
echo "| scene | options | old µs/step | new µs/step | new/old |"
echo "|---|---|---|---|---|"
for c in "${configs[@]}"; do
  scene=${c%%|*}
  args=${c#*|}
  best_old=inf
  best_new=inf
  for _ in $(seq "$rounds"); do
    o=$(t_tot "$old/shape_matching_$scene" "$args")
    n=$(t_tot "$new/shape_matching_$scene" "$args")
    best_old=$(python3 -c "print(min(float('$best_old'), $o))")
    best_new=$(python3 -c "print(min(float('$best_new'), $n))")
  done
  python3 -c "print(f'| $scene | \`$args\` | {$best_old:.1f} | {$best_new:.1f} | {$best_new/$best_old:.2f} |')"
done
