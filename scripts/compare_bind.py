#!/usr/bin/env python3
"""Before/after of a character's bind (everything a bake computes before its first step), cold and
warm, from bakes of two (or more) builds of `overtone`, interleaved so that every figure is taken
under the same load.

    python3 scripts/compare_bind.py CHARACTER.glb [MORE.glb ...] --build before=/path/to/old/overtone \
        --build after=target/release/overtone [--rounds 2] [--out table.md]

Per character and build: the bake report's preparation (reading, lattice, embedding, weights),
precompute (the solver's model: eigenmodes, clusters, factorizations) and their sum, cold (a new
sidecar) and warm (the sidecar the cold bake wrote), the smallest over the rounds; the stages of
the cold bake above 5% of it; and the largest difference of the baked positions from the first
build's, as a share of the body's diagonal. Only the
standard library: runs with the machine's Python 3.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_stiffness import emit, read_pc2  # noqa: E402


def bake(binary, glb, work, tag, sidecar):
    out, report = os.path.join(work, tag + ".pc2"), os.path.join(work, tag + ".json")
    cmd = [binary, "bake", glb, "--out", out, "--report", report, "--sidecar", sidecar, "--force"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as f:
        rep = json.load(f)
    return rep, read_pc2(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("glbs", nargs="+")
    ap.add_argument("--build", action="append", required=True, help="name=path of an overtone binary; the first is the baseline")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    rows = ["| character | build | cold: prepare s | precompute s | bind s | × %s | warm: prepare s | precompute s | bind s | output: max difference from %s / diagonal |" % (builds[0][0], builds[0][0]),
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    stage_rows = []
    with tempfile.TemporaryDirectory() as work:
        for glb in args.glbs:
            name = os.path.splitext(os.path.basename(glb))[0]
            best_cold, best_warm = {}, {}
            bind = lambda r: (r["prepare_ms"] + r["precompute_ms"]) / 1e3
            for rnd in range(args.rounds):
                for bname, path in builds:
                    sidecar = os.path.join(work, "%s-%s-%d.ovt" % (name, bname, rnd))
                    cold, cache = bake(path, glb, work, "%s-%s-cold" % (name, bname), sidecar)
                    warm, _ = bake(path, glb, work, "%s-%s-warm" % (name, bname), sidecar)
                    os.remove(sidecar)
                    if bname not in best_cold or bind(cold) < bind(best_cold[bname][0]):
                        best_cold[bname] = (cold, cache)
                    if bname not in best_warm or bind(warm) < bind(best_warm[bname]):
                        best_warm[bname] = warm
            base_bind = bind(best_cold[builds[0][0]][0])
            for bname, _ in builds:
                (cold, cache), warm = best_cold[bname], best_warm[bname]
                ref = best_cold[builds[0][0]][1]
                diff = max(abs(x - y) for fa, fb in zip(cache, ref) for x, y in zip(fa, fb)) / cold["diagonal"]
                rows.append("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e |" % (
                    name, bname, cold["prepare_ms"] / 1e3, cold["precompute_ms"] / 1e3, bind(cold),
                    bind(cold) / base_bind, warm["prepare_ms"] / 1e3, warm["precompute_ms"] / 1e3, bind(warm),
                    diff))
                total = sum(s["ms"] for s in cold["stage_ms"])
                big = ["%s %.2f s" % (s["stage"], s["ms"] / 1e3) for s in cold["stage_ms"] if s["ms"] > 0.05 * total]
                stage_rows.append("- %s, %s (cold bake %.1f s): %s" % (name, bname, cold["wall_ms"] / 1e3, "; ".join(big)))
    table = "\n".join(rows) + "\n\nStages of the cold bake above 5% of it:\n\n" + "\n".join(stage_rows) + "\n"
    emit(table, args.out)


if __name__ == "__main__":
    sys.exit(main())
