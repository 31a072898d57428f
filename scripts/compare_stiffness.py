#!/usr/bin/env python3
"""Before/after of the fast solver's cost against stiffness, from bakes of two (or more) builds
of `overtone`, interleaved so that every figure is taken under the same load.

    python3 scripts/compare_stiffness.py CHARACTER.glb before=/path/to/old/overtone \
        after=target/release/overtone [--scales 1,10,100] [--rounds 2] [--out table.md]

Per build and stiffness (multiples of the default Young's modulus of glTF characters, 2.5e4 in
the normalised frame): the physics steps' wall time per output frame (the bake report's
`physics_ms.steps` over its frames; the smallest over the rounds), the automatic substeps per
physics step, the worst relative residual, the motion's peak (largest distance of a surface
point from its rig position, from a bake at strength 0, as a share of the diagonal) and the
largest per-point difference from the first build's bake at the same stiffness, as a share of
that bake's peak. Only the standard library: runs with the machine's Python 3.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

DEFAULT_MODULUS = 2.5e4


def read_pc2(path):
    """Frames of a PC2 cache: a list of flat [x, y, z, ...] lists."""
    with open(path, "rb") as f:
        data = f.read()
    points, frames = struct.unpack("<i", data[16:20])[0], struct.unpack("<i", data[28:32])[0]
    values = struct.unpack("<%df" % (points * frames * 3), data[32 : 32 + 12 * points * frames])
    return [values[k * 3 * points : (k + 1) * 3 * points] for k in range(frames)]


def bake(binary, glb, modulus, workdir, sidecar, strength=None):
    tag = "%s-%g-%s" % (abs(hash(binary)), modulus, strength)
    out, report = os.path.join(workdir, tag + ".pc2"), os.path.join(workdir, tag + ".json")
    cmd = [binary, "bake", glb, "--out", out, "--report", report, "--youngs-modulus", repr(modulus),
           "--sidecar", sidecar, "--force"]
    if strength is not None:
        cmd += ["--strength", repr(strength)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as f:
        return read_pc2(out), json.load(f)


def emit(table, path=None):
    """Prints the table and, with a path, writes it there too."""
    print(table)
    if path:
        with open(path, "w") as f:
            f.write(table)


def distances(a, b):
    """Per frame and point, |a − b|."""
    return [[math.dist(fa[i : i + 3], fb[i : i + 3]) for i in range(0, len(fa), 3)] for fa, fb in zip(a, b)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("glb")
    ap.add_argument("builds", nargs="+", help="name=path of an overtone binary; the first is the baseline")
    ap.add_argument("--scales", default="1,10,100")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    scales = [float(s) for s in args.scales.split(",")]
    with tempfile.TemporaryDirectory() as work:
        sidecar = os.path.join(work, "character.ovt")
        rig, _ = bake(builds[0][1], args.glb, DEFAULT_MODULUS, work, sidecar, strength=0)
        best = {}
        for _ in range(args.rounds):
            for scale in scales:
                for name, path in builds:
                    frames, report = bake(path, args.glb, DEFAULT_MODULUS * scale, work, sidecar)
                    ms = report["physics_ms"]["steps"] / max(report["frames"] - 1, 1)
                    if (name, scale) not in best or ms < best[(name, scale)][0]:
                        best[(name, scale)] = (ms, frames, report)
    rows = ["%s: fast solver, default damping; physics ms per output frame (best of %d rounds)" % (
        os.path.basename(args.glb), args.rounds), "",
        "| build | Young's modulus | physics ms/frame | × %s at 1x | substeps | iterations/frame | worst residual | peak / diagonal | difference from %s / its peak |" % (builds[0][0], builds[0][0]),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    base_ms = best[(builds[0][0], scales[0])][0]
    for scale in scales:
        ref = best[(builds[0][0], scale)][1]
        ref_peak = max(max(f) for f in distances(ref, rig))
        for name, _ in builds:
            ms, frames, report = best[(name, scale)]
            peak = max(max(f) for f in distances(frames, rig))
            diff = max(max(f) for f in distances(frames, ref)) / ref_peak
            dyn = report["dynamics"]
            it = dyn.get("iterations")
            rows.append("| %s | %gx | %.3f | %.2f | %s | %s | %.1e | %.2e | %.3f |" % (
                name, scale, ms, ms / base_ms, dyn.get("substeps"),
                "%.1f" % (it / max(report["frames"] - 1, 1)) if it is not None else "n/a",
                report["max_relative_residual"], peak / report["diagonal"], diff))
    table = "\n".join(rows) + "\n"
    emit(table, args.out)


if __name__ == "__main__":
    sys.exit(main())
