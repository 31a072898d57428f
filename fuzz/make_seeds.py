#!/usr/bin/env python3
"""Writes the fuzz corpus seeds into fuzz/corpus/<target>/.

Small files are copied from the licensed data folders (../examples/data, /work/shared/data style
layout; see corpus/NOTICE); the rest are synthetic inputs written here (a unit cube of five
tetrahedra in every mesh format, a tiny skinned GLB, a point cache, scene bundles).
Run from the repository root: python3 fuzz/make_seeds.py [DATA_DIR] [SIDECAR_SEED_DIR]
"""
import json
import os
import shutil
import struct
import sys

root = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "examples", "data")
extra = sys.argv[2] if len(sys.argv) > 2 else None
corpus = os.path.join(root, "corpus")

V = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1)]
T = [(0, 1, 2, 4), (1, 3, 2, 7), (1, 4, 5, 7), (2, 4, 7, 6), (1, 2, 4, 7)]  # positively oriented
SEP = "\n%%\n"


def put(target, name, content):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(os.path.join(d, name), mode) as f:
        f.write(content)


def copy(target, rel, prefix=b""):
    src = os.path.join(data, rel)
    if not os.path.exists(src):
        print("missing", src)
        return
    with open(src, "rb") as f:
        put(target, os.path.basename(rel), prefix + f.read())


def medit():
    s = "MeshVersionFormatted 1\nDimension 3\nVertices\n8\n"
    s += "".join(f"{x} {y} {z} 0\n" for x, y, z in V)
    s += "Tetrahedra\n5\n" + "".join(" ".join(str(i + 1) for i in t) + " 0\n" for t in T)
    s += "Triangles\n2\n1 2 3 0\n2 4 3 0\nEdges\n1\n1 2 0\nCorners\n1\n1\nEnd\n"
    return s


def msh_ascii():
    s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 \"body\"\n$EndPhysicalNames\n"
    s += "$Nodes\n8\n" + "".join(f"{k + 1} {x} {y} {z}\n" for k, (x, y, z) in enumerate(V)) + "$EndNodes\n"
    s += "$Elements\n6\n1 15 2 0 1 1\n"
    s += "".join(f"{k + 2} 4 2 0 1 " + " ".join(str(i + 1) for i in t) + "\n" for k, t in enumerate(T))
    s += "$EndElements\n"
    return s


def msh_binary():
    b = b"$MeshFormat\n2.2 1 8\n" + struct.pack("<i", 1) + b"\n$EndMeshFormat\n$Nodes\n8\n"
    for k, (x, y, z) in enumerate(V):
        b += struct.pack("<iddd", k + 1, x, y, z)
    b += b"\n$EndNodes\n$Elements\n6\n"
    b += struct.pack("<iii", 15, 1, 2) + struct.pack("<iiii", 1, 0, 1, 1)
    b += struct.pack("<iii", 4, 5, 2)
    for k, t in enumerate(T):
        b += struct.pack("<iii", k + 2, 0, 1) + struct.pack("<iiii", *[i + 1 for i in t])
    b += b"\n$EndElements\n"
    return b


def pc2():
    b = b"POINTCACHE2\0" + struct.pack("<iiffi", 1, 2, 1.0, 1.0, 2)
    b += struct.pack("<12f", *[0.5 * i for i in range(12)])
    return b


def glb():
    """One triangle skinned to two joints, inverse bind matrices and a three-channel animation."""
    blob = b""
    views, accessors = [], []

    def add(fmt, values, comp, typ, count, extra=None):
        nonlocal blob
        while len(blob) % 4:
            blob += b"\0"
        off = len(blob)
        raw = struct.pack("<" + fmt * len(values), *values)
        blob += raw
        views.append({"buffer": 0, "byteOffset": off, "byteLength": len(raw)})
        a = {"bufferView": len(views) - 1, "componentType": comp, "count": count, "type": typ}
        a.update(extra or {})
        accessors.append(a)
        return len(accessors) - 1

    pos = add("f", [0, 0, 0, 1, 0, 0, 0, 1, 0], 5126, "VEC3", 3, {"min": [0, 0, 0], "max": [1, 1, 0]})
    jnt = add("H", [0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0], 5123, "VEC4", 3)
    wts = add("f", [0.5, 0.5, 0, 0, 0.2, 0.8, 0, 0, 1, 0, 0, 0], 5126, "VEC4", 3)
    idx = add("H", [0, 1, 2], 5123, "SCALAR", 3)
    ident = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    shifted = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1]
    ibm = add("f", ident + shifted, 5126, "MAT4", 2)
    times = add("f", [0.0, 0.5, 1.0], 5126, "SCALAR", 3, {"min": [0.0], "max": [1.0]})
    rot = add("f", [0, 0, 0, 1, 0, 0, 0.3826834, 0.9238795, 0, 0, 0.7071068, 0.7071068], 5126, "VEC4", 3)
    tra = add("f", [0, 1, 0, 0.2, 1, 0, 0, 1.5, 0], 5126, "VEC3", 3)
    sca = add("f", [0, 0, 0, 1, 1, 1, 0, 0, 0] * 3, 5126, "VEC3", 9)
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"name": "root", "children": [2]},
            {"name": "body", "mesh": 0, "skin": 0},
            {"name": "tip", "translation": [0, 1, 0]},
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": jnt, "WEIGHTS_0": wts},
                                    "indices": idx}]}],
        "skins": [{"joints": [0, 2], "inverseBindMatrices": ibm}],
        "animations": [{
            "name": "wave",
            "samplers": [
                {"input": times, "output": rot, "interpolation": "LINEAR"},
                {"input": times, "output": tra, "interpolation": "STEP"},
                {"input": times, "output": sca, "interpolation": "CUBICSPLINE"},
            ],
            "channels": [
                {"sampler": 0, "target": {"node": 2, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 2, "path": "translation"}},
                {"sampler": 2, "target": {"node": 0, "path": "scale"}},
            ],
        }],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    while len(blob) % 4:
        blob += b"\0"
    js = json.dumps(doc, separators=(",", ":")).encode()
    while len(js) % 4:
        js += b" "
    body = struct.pack("<I4s", len(js), b"JSON") + js + struct.pack("<I4s", len(blob), b"BIN\0") + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def main():
    if os.path.isdir(corpus):
        for d in os.listdir(corpus):
            if os.path.isdir(os.path.join(corpus, d)):
                shutil.rmtree(os.path.join(corpus, d))
    cd = "complementary-dynamics-cpp"
    # Readers of single files.
    put("medit", "cube.mesh", medit())
    put("medit", "square2d.mesh", "MeshVersionFormatted 1\nDimension 2\nVertices\n4\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"
        "Triangles\n2\n1 2 3 0\n2 4 3 0\nEnd\n")
    copy("medit", f"{cd}/sphere/sphere.mesh")
    put("gmsh", "cube_ascii.msh", msh_ascii())
    put("gmsh", "cube_binary.msh", msh_binary())
    for t in ["sphere/sphere.tgf", "frog/frog.tgf", "fish/fish.tgf", "elephant/elephant.tgf"]:
        copy("tgf", f"{cd}/{t}")
    put("dmat", "small.dmat", "2 3\n0.1 0.2 0.3\n0.9 0.8 0.7\n")
    copy("dmat", f"{cd}/sphere/sphere.dmat")
    put("obj", "quad.obj", "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0 1\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\n"
        "f -1 -2 -3\nf 1/1/1 2/2/2 3/3/3\n")
    copy("obj", f"{cd}/sphere/sphere.obj")
    put("pc2", "two_points.pc2", pc2())
    # Animations: the first byte selects the rig the harness builds.
    put("anim_point_handles", "two_handles.txt",
        b"\x02" + b"2 2\n0 0.8 0 0 0 0\n0 -0.8 0 0 0 0\n0 0.8 0 0 0 10\n0 -0.8 0 5 0 0\n"
        b"0 0.9 0 0 0 20\n0 -0.7 0 10 0 0\n")
    copy("anim_point_handles", f"{cd}/sphere/sphere_anim.txt", b"\x02")
    copy("anim_point_handles", f"{cd}/frog/frog_anim.txt", b"\x01")
    put("anim_skeleton", "chain3.txt", b"\x0b" + b"3 2\n0 0 0\n0 -90 0\n0 -90 0\n90 0 -90\n0 0 90\n"
        b"0 0 0\n0 0 0\n10 0 0\n0 20 0\n0 0 30\n5 5 5\n0.1 0 0\n1 2 3\n4 5 6\n7 8 9\n")
    put("anim_skeleton", "star2.txt", b"\x02" + b"2 1\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n0 0 45\n1 0 0\n10 0 0\n0 10 0\n")
    glb_bytes = glb()
    put("gltf", "tiny_skinned.glb", glb_bytes)
    copy("gltf", "khronos-gltf-sample-assets/RiggedSimple.glb")
    # Scenes.
    if extra:
        for name in ["beam.json", "beam_examples.json"]:
            p = os.path.join(extra, name)
            if os.path.exists(p):
                shutil.copy(p, os.path.join(corpus, "scene_overtone_json", name)) if os.path.isdir(
                    os.path.join(corpus, "scene_overtone_json")) else put("scene_overtone_json", name, open(p).read())
        p = os.path.join(extra, "beam.ovt")
        if os.path.exists(p):
            raw = open(p, "rb").read()
            put("sidecar", "beam_file.ovt", b"\x00" + raw)
            vlen = struct.unpack("<I", raw[12:16])[0]
            klen = struct.unpack("<I", raw[16 + vlen:20 + vlen])[0]
            put("sidecar", "beam_payload.bin", b"\x01" + raw[92 + vlen + klen:])
    scene = {"mesh_file": "m.mesh", "handle_file": "h.tgf", "weight_file": "w.dmat", "anim_file": "a.txt",
             "dt": 0.01, "YM": 5e4, "pr": 0.4, "scale": 1, "model": "arap"}
    tgf = "1 0.2 0.2 0.2\n2 0.8 0.8 0.8\n#\n#\n"
    w = "2 8\n" + "".join(f"{1 - x * 0.9}\n" for x, _, _ in V) + "".join(f"{x * 0.9}\n" for x, _, _ in V)
    anim = "2 2\n0 0 0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n0 0.1 0 0 0 10\n0 0 0 0 0 0\n0 0.2 0 0 0 20\n"
    put("scene_reference", "cube_handles.txt", SEP.join([json.dumps(scene), medit(), tgf, w, anim]))
    sk_tgf = "1 0.1 0.1 0.1\n2 0.5 0.5 0.5\n3 0.9 0.9 0.9\n#\n1 2 1 0 0 0\n2 3 1 0 0 0\n#\n"
    sk_anim = "2 2\n" + "0 0 0\n" * 8 + "0 0 10\n0 0.1 0\n5 0 0\n0 5 0\n"
    put("scene_reference", "cube_skeleton.txt",
        SEP.join([json.dumps(dict(scene, model="neohookean")), medit(), sk_tgf, w, sk_anim]))
    p0 = [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], [[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0]]]
    rig = {"rig_type": "surface", "V": [list(v) for v in V],
           "W": [[1 - 0.8 * x, 0.8 * x] for x, _, _ in V], "p0": p0, "pI": [-1, 0]}
    moved = [[[1, 0, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, 0]], [[0, -1, 0, 0.5], [1, 0, 0, 0], [0, 0, 1, 0]]]
    anim_fc = {"P": [p0, moved]}
    for name, mesh in [("cube_ascii.txt", msh_ascii().encode()), ("cube_binary.txt", msh_binary())]:
        put("scene_fast_cody", name, mesh + SEP.encode() + json.dumps(rig).encode() + SEP.encode()
            + json.dumps(anim_fc).encode())


main()
