#!/usr/bin/env python3
"""Which top-level modules of the `overtone` crate import which, and the import cycles.

Reads every `.rs` file under `rust/overtone/src`, attributes it to its top-level module (the
first path component: `dynamics/fast/solver.rs` -> `dynamics`, `leak.rs` -> `leak`) and collects the
`crate::<module>` paths it mentions (in `use` items and in qualified paths). Prints

  * the edges `a -> b` with the files of `a` that import `b`;
  * every strongly connected component with more than one module (an import cycle), and for each
    two-module cycle the files on both sides.

Usage: scripts/module_graph.py [--src rust/overtone/src] [--edges]
Exit status 0 always: this is a report, not a check.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)
GROUP_HEAD = re.compile(r"(?:^|[,{]\s*)([a-z_][a-z0-9_]*)\s*(?:::|,|}|$)")


def top_module(src: str, path: str) -> str:
    rel = os.path.relpath(path, src)
    head = rel.split(os.sep)[0]
    return head[:-3] if head.endswith(".rs") else head


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def imports(text: str) -> set:
    text = strip_comments(text)
    found = set(CRATE_PATH.findall(text))
    for group in USE_GROUP.findall(text):
        # `use crate::{a::X, b, c::{d, e}}`: the heads at nesting depth 0 are modules.
        depth, token, heads = 0, "", []
        for ch in group:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                heads.append(token)
                token = ""
                continue
            if depth == 0 or (depth == 1 and ch == "{"):
                token += ch
        heads.append(token)
        for h in heads:
            name = h.strip().split("::")[0].strip("{} \n")
            if re.fullmatch(r"[a-z_][a-z0-9_]*", name or ""):
                found.add(name)
    return found


def strongly_connected(nodes, edges):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default="rust/overtone/src")
    ap.add_argument("--edges", action="store_true", help="also list every edge")
    a = ap.parse_args()
    modules = set()
    edge_files = defaultdict(set)
    for root, _, files in os.walk(a.src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = top_module(a.src, path)
            if mod == "lib":
                continue
            modules.add(mod)
            with open(path, encoding="utf-8") as fh:
                for target in imports(fh.read()):
                    if target != mod:
                        edge_files[(mod, target)].add(os.path.relpath(path, a.src))
    edges = defaultdict(set)
    for (src, dst) in edge_files:
        if dst in modules:
            edges[src].add(dst)
    if a.edges:
        for (src, dst), files in sorted(edge_files.items()):
            if dst in modules:
                print(f"{src} -> {dst}: {', '.join(sorted(files))}")
    cycles = [c for c in strongly_connected(modules, edges) if len(c) > 1]
    print(f"{len(modules)} top-level modules, {sum(len(v) for v in edges.values())} import edges, "
          f"{len(cycles)} import cycle(s)")
    for comp in cycles:
        print("cycle: " + " <-> ".join(comp))
        for x in comp:
            for y in comp:
                if x < y and y in edges.get(x, ()) and x in edges.get(y, ()):
                    print(f"  {x} -> {y}: {', '.join(sorted(edge_files[(x, y)]))}")
                    print(f"  {y} -> {x}: {', '.join(sorted(edge_files[(y, x)]))}")


if __name__ == "__main__":
    main()
