#!/usr/bin/env bash
# The per-character table of issue 13: for CesiumMan, Fox, RiggedFigure, RiggedFigure re-keyed with
# a hop and a hold (RiggedFigure-keyed) and the two thin-limbed humanoids in
# examples/data/characters, bakes at the default settings and at a 1.5x finer lattice, and binds
# at lattice 32, 48 and 64; prints a Markdown table:
#
#   peak/diag   largest secondary displacement of any vertex over the clip / rig bounding-box diagonal
#   hold/diag   largest secondary displacement once the rig has held still for 1 s (n/a: no such hold)
#   finer       peak at the default / peak at the 1.5x finer lattice, and the per-frame difference
#               ‖m_default − m_finer‖₂ / ‖m_finer‖₂ of the per-frame maxima m
#   bind 32/48/64  seconds from reading the file to a ready solver (prepare + precompute)
#   max residual   largest relative residual ‖JᵀMD u_c‖/(‖JᵀMD‖ ‖u_c‖) of any step (both bakes)
#   orthogonality  structural orthogonality ‖(JᵀMD) B‖/(‖JᵀMD‖ ‖B‖) of the fast subspace (larger of both)
#
# Usage: scripts/character_table.sh [OUT_DIR] [NAMES...]   (OUT_DIR default target/character_table)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/character_table}
shift || true
mkdir -p "$out"
# OVERTONE_BIN: an already built binary (default: build and use target/release/overtone).
if [ -z "${OVERTONE_BIN:-}" ]; then
  cargo build --release -q -p overtone-cli
fi
bin=${OVERTONE_BIN:-target/release/overtone}
declare -A file=(
  [CesiumMan]=examples/data/khronos-gltf-sample-assets/CesiumMan.glb
  [Fox]=examples/data/khronos-gltf-sample-assets/Fox.glb
  [RiggedFigure]=examples/data/khronos-gltf-sample-assets/RiggedFigure.glb
  [RiggedFigure-keyed]=examples/data/characters/riggedfigure_keyed.glb
  [mannequin]=examples/data/characters/mannequin.glb
  [robot]=examples/data/characters/robot.glb
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(CesiumMan Fox RiggedFigure RiggedFigure-keyed mannequin robot)
for n in "${names[@]}"; do
  f=${file[$n]}
  "$bin" bake "$f" --out "$out/$n.pc2" --report "$out/$n.default.json" >/dev/null 2>"$out/$n.default.log"
  r=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['lattice']['resolution'])" "$out/$n.default.json")
  fine=$(( (3 * r + 1) / 2 ))
  "$bin" bake "$f" --out "$out/$n.fine.pc2" --report "$out/$n.fine.json" --lattice-resolution "$fine" \
    >/dev/null 2>"$out/$n.fine.log"
  for b in 32 48 64; do
    "$bin" bake "$f" --out "$out/$n.$b.pc2" --report "$out/$n.bind$b.json" --lattice-resolution "$b" \
      --frames 0..1 >/dev/null 2>"$out/$n.bind$b.log"
  done
  rm -rf "$out/$n".*.pc2
done
python3 - "$out" "${names[@]}" <<'EOF'
import json, math, sys
out, names = sys.argv[1], sys.argv[2:]
def load(p):
    return json.load(open(p))
print("| character | lattice (default, finer) | peak/diag | hold/diag | peak default/finer | per-frame diff | bind 32 / 48 / 64 s | max residual | orthogonality |")
print("|---|---|---|---|---|---|---|---|---|")
for n in names:
    d, f = load(f"{out}/{n}.default.json"), load(f"{out}/{n}.fine.json")
    diag = d["diagonal"]
    md = [p["max_surface_displacement"] for p in d["per_frame"]]
    mf = [p["max_surface_displacement"] for p in f["per_frame"]]
    rig = [p["rig_motion"] for p in d["per_frame"]]
    # Frames after the rig has been still (motion below 1e-6 of the diagonal) for 1 s.
    need = int(round(d["fps"]))
    still, hold = 0, []
    for u, r in zip(md, rig):
        still = still + 1 if r <= 1e-6 * diag else 0
        if still > need:
            hold.append(u)
    hold_s = f"{max(hold) / diag:.4f}" if hold else "n/a"
    diff = math.sqrt(sum((a - b) ** 2 for a, b in zip(md, mf)) / max(sum(b * b for b in mf), 1e-300))
    binds = []
    for b in (32, 48, 64):
        r = load(f"{out}/{n}.bind{b}.json")
        binds.append(f"{(r['prepare_ms'] + r['precompute_ms']) / 1e3:.1f}")
    res = max(d["max_relative_residual"], f["max_relative_residual"])
    orth = [r.get("structural_orthogonality") for r in (d, f)]
    orth_s = f"{max(orth):.1e}" if all(o is not None for o in orth) else "n/a"
    print(f"| {n} | {d['lattice']['resolution']} ({d['lattice']['tets']} tets), {f['lattice']['resolution']} ({f['lattice']['tets']}) "
          f"| {max(md) / diag:.4f} | {hold_s} | {max(md) / max(max(mf), 1e-300):.2f} | {diff:.2f} | {' / '.join(binds)} | {res:.1e} | {orth_s} |")
EOF
