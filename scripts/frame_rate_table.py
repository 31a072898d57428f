#!/usr/bin/env python3
"""Frame-rate independence of a bake: bakes a glTF character at several frame rates (and once
with --strength 0, the rig alone), and prints, at the instants all rates share, the largest
difference of the secondary motion to the highest rate's, relative to the largest secondary
motion. Usage: scripts/frame_rate_table.py CHARACTER.glb [--solver fast|full] [--fps 24,30,60,96]
[--overtone target/release/overtone] [--interpolation-check] [extra bake flags...]

With the default integrator every rate runs the same physics (a fixed 240 Hz clock, see
rust/overtone-cli/src/physics_clock.rs), so at the instants the rates share — all of them
physics samples for 24, 30, 60 and 96 fps — the bakes agree exactly. What remains is the
interpolation of the displacement to output instants between physics samples (96 fps: every
other frame). --interpolation-check estimates it: a bake stepped at 1920 Hz and sampled at
480 Hz (--fps 480 --substeps 4), its 240 Hz samples interpolated (cubic, as the bake does) to
the 96 fps instants between them, against its own samples there."""
import argparse, os, struct, subprocess, sys, tempfile
from fractions import Fraction

def read_pc2(path):
    with open(path, "rb") as f:
        head = f.read(32)
        _, _, n, start, rate, samples = struct.unpack("<12siiffi", head)
        data = f.read()
    vals = struct.unpack(f"<{samples * n * 3}f", data)
    return [vals[k * n * 3:(k + 1) * n * 3] for k in range(samples)]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("character")
    ap.add_argument("--solver", default="fast")
    ap.add_argument("--fps", default="24,30,60,96")
    ap.add_argument("--overtone", default="target/release/overtone")
    ap.add_argument("--interpolation-check", action="store_true")
    args, extra = ap.parse_known_args()
    rates = [int(r) for r in args.fps.split(",")]
    tmp = tempfile.mkdtemp()
    motion, rig = {}, {}
    # The rig alone (--strength 0) does not depend on the solver: the fast solver bakes it, and
    # one sidecar per solver serves every rate (the precompute does not depend on the rate).
    runs = [(r, None, args.solver, motion) for r in rates] + [(r, "0", "fast", rig) for r in rates]
    for r, strength, solver, store in runs:
        out = os.path.join(tmp, f"{r}_{strength}.pc2")
        cmd = [args.overtone, "bake", args.character, "--out", out, "--fps", str(r), "--solver", solver] + extra
        if solver == "fast":
            cmd += ["--sidecar", os.path.join(tmp, "precompute.ovt")]
        if strength is not None:
            cmd += ["--strength", strength]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        store[r] = read_pc2(out)
    ref = max(rates)
    def disp(r, k):
        return [a - b for a, b in zip(motion[r][k], rig[r][k])]
    size = max(max(abs(x) for x in disp(ref, k)) for k in range(len(motion[ref])))
    print(f"{os.path.basename(args.character)} ({args.solver}): largest secondary motion {size:.4g} (file units) at {ref} fps")
    for r in rates:
        if r == ref:
            continue
        worst = 0.0
        for k in range(len(motion[r])):
            t = Fraction(k, r)
            kr = t * ref
            if kr.denominator != 1 or kr >= len(motion[ref]):
                continue
            a, b = disp(r, k), disp(ref, int(kr))
            worst = max(worst, max(abs(x - y) for x, y in zip(a, b)))
        print(f"  {r} fps vs {ref} fps: max difference at common instants {worst:.4g} = {100 * worst / size:.2f}% of the motion")
    if args.interpolation_check:
        interpolation_check(args, extra, tmp)

def lagrange(nodes, values, x):
    """Value at x of the polynomial through (nodes[a], values[a]) (lists of equal-length rows)."""
    out = [0.0] * len(values[0])
    for a, xa in enumerate(nodes):
        w = 1.0
        for b, xb in enumerate(nodes):
            if b != a:
                w *= (x - xb) / (xa - xb)
        out = [o + w * v for o, v in zip(out, values[a])]
    return out

def interpolation_check(args, extra, tmp):
    """Cubic interpolation of 240 Hz displacement samples to 96 fps instants (see the docstring)."""
    fine = {}
    for strength in (None, "0"):
        out = os.path.join(tmp, f"fine_{strength}.pc2")
        cmd = [args.overtone, "bake", args.character, "--out", out, "--fps", "480", "--substeps", "4",
               "--solver", args.solver if strength is None else "fast", "--sidecar", os.path.join(tmp, "precompute.ovt")] + extra
        if strength is not None:
            cmd += ["--strength", strength]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fine[strength] = read_pc2(out)
    d = [[a - b for a, b in zip(m, r)] for m, r in zip(fine[None], fine["0"])]
    size = max(max(abs(x) for x in f) for f in d)
    coarse = list(range(0, len(d), 2))  # 240 Hz samples
    worst = 0.0
    for k in range(0, len(d), 5):  # 96 fps instants
        if k % 2 == 0:
            continue
        j = k // 2  # coarse sample below
        first = min(max(j - 1, 0), len(coarse) - 4)
        nodes = list(range(first, first + 4))
        est = lagrange(nodes, [d[coarse[n]] for n in nodes], k / 2)
        worst = max(worst, max(abs(x - y) for x, y in zip(est, d[k])))
    print(f"  interpolation of 240 Hz samples to 96 fps instants (1920 Hz stepping): max error {100 * worst / size:.2f}% of the motion")

if __name__ == "__main__":
    main()
