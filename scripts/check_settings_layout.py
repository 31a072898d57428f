#!/usr/bin/env python3
"""One check that the compiled copies of the deformer settings agree field by field.

All three are generated from the Rust settings table (scripts/generate_host_files.sh; a Rust test
fails when a generated file is stale); this checks what was compiled and loaded:
* Rust: the cxx bridge's ``Settings``: the field list ``name:type`` (via the C ABI,
  ``overtone_settings_fields``).
* C (and C++, which uses the same struct): ``overtone_settings`` as compiled into the library
  (``overtone_settings_layout``: offsetof, sizeof).
* Python: the ctypes mirror ``Settings`` in ``plugin/blender/overtone/native.py``.

Names, order, offsets, sizes and types must agree (types: f64 -> c_double, usize -> c_size_t,
bool -> c_bool, enum -> c_int, f64x3 -> c_double * 3). Every disagreement is reported with the
field's name.

Usage (scripts/test_cpp.sh runs it; plain python3, no numpy needed):
    OVERTONE_LIBRARY=target/cpp/libovertone_c.so python3 scripts/check_settings_layout.py

The add-on's test (plugin/blender/tests/test_controls.py) calls :func:`problems` with what it
can reach inside Blender (the library and the ctypes mirror).
"""

import ctypes
import importlib.util
import os
import subprocess
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE_PY = os.path.join(REPO, "plugin", "blender", "overtone", "native.py")

# The ctypes type of each Rust type in the C ABI (an enum crosses as a C enum: int).
CTYPES = {
    "f64": ctypes.c_double,
    "usize": ctypes.c_size_t,
    "bool": ctypes.c_bool,
    "enum": ctypes.c_int,
    "f64x3": ctypes.c_double * 3,
}


def _ctype_name(t):
    if isinstance(t, type) and issubclass(t, ctypes.Array):
        return f"{t._type_.__name__} * {t._length_}"
    if t is ctypes.c_size_t:
        return "c_size_t"
    return getattr(t, "__name__", repr(t))


def _same_ctype(a, b):
    if isinstance(a, type) and issubclass(a, ctypes.Array):
        return (isinstance(b, type) and issubclass(b, ctypes.Array) and a._type_ is b._type_
                and a._length_ == b._length_)
    return a is b


def parse_layout(text):
    """``name[:type]:offset:size,...,sizeof:N`` -> ``([(name, type or None, offset, size)], N)``."""
    fields, size = [], None
    for entry in text.strip().split(","):
        parts = entry.split(":")
        if parts[0] == "sizeof":
            size = int(parts[1])
        elif len(parts) == 3:
            fields.append((parts[0], None, int(parts[1]), int(parts[2])))
        else:
            fields.append((parts[0], parts[1], int(parts[2]), int(parts[3])))
    return fields, size


def _compare_names(problems, what, names, rust_names):
    for i in range(max(len(names), len(rust_names))):
        mine = names[i] if i < len(names) else None
        want = rust_names[i] if i < len(rust_names) else None
        if mine != want:
            if want is None:
                problems.append(f"{what}: extra field `{mine}` at position {i} (Rust has {len(rust_names)} fields)")
            elif mine is None:
                problems.append(f"{what}: field `{want}` (position {i} in Rust) is missing")
            else:
                problems.append(f"{what}: field {i} is `{mine}`, Rust's is `{want}`")
            return False
    return True


def problems(settings_cls, rust_fields, c_layout, c_size):
    """The disagreements between the settings layouts, as messages naming the field ([] when all agree).

    ``settings_cls``: the ctypes mirror. ``rust_fields``: ``[(name, type)]`` of the bridge.
    ``c_layout``: ``[(name, offset, size)]`` of the library's C struct, ``c_size`` its sizeof.
    """
    out = []
    rust_names = [n for n, _ in rust_fields]
    rust_type = dict(rust_fields)
    for n, t in rust_fields:
        if t not in CTYPES:
            out.append(f"Rust field `{n}` has type `{t}`, which has no C ABI mapping here")
    # ctypes mirror: names and order, types, offsets and sizes against the compiled C struct.
    py = list(settings_cls._fields_)
    if _compare_names(out, "ctypes Settings", [n for n, _ in py], rust_names):
        for n, t in py:
            want = CTYPES.get(rust_type[n])
            if want is not None and not _same_ctype(t, want):
                out.append(f"ctypes Settings.{n} is {_ctype_name(t)}, Rust's {rust_type[n]} needs {_ctype_name(want)}")
    # The compiled C struct: names and order, sizes per the Rust type, then the ctypes layout.
    if _compare_names(out, "C overtone_settings", [n for n, _, _ in c_layout], rust_names):
        c = {n: (o, s) for n, o, s in c_layout}
        for n, o, s in c_layout:
            want = CTYPES.get(rust_type[n])
            if want is not None and s != ctypes.sizeof(want):
                out.append(f"C overtone_settings.{n} is {s} bytes, Rust's {rust_type[n]} needs {ctypes.sizeof(want)}")
        for n, _ in py:
            if n in c:
                f = getattr(settings_cls, n)
                if (f.offset, f.size) != c[n]:
                    out.append(f"field `{n}`: ctypes at offset {f.offset} ({f.size} bytes), "
                               f"C at {c[n][0]} ({c[n][1]} bytes)")
    if ctypes.sizeof(settings_cls) != c_size:
        out.append(f"sizeof: ctypes Settings {ctypes.sizeof(settings_cls)} bytes, C overtone_settings {c_size}")
    return out


def load_native(path=NATIVE_PY):
    """Imports native.py by path. Without numpy (plain python3) a placeholder module stands in:
    native.py uses numpy only inside its functions, never for the Settings mirror."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        sys.modules.setdefault("numpy", types.ModuleType("numpy"))
    spec = importlib.util.spec_from_file_location("overtone_native_layout_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    native = load_native()
    rust_fields = native.settings_fields()
    c_layout, c_size = native.settings_layout()
    found = problems(native.Settings, rust_fields, c_layout, c_size)
    if found:
        print("settings layouts disagree (Rust bridge, C/C++ overtone_settings, ctypes):")
        for p in found:
            print(f"  FAIL: {p}")
        return 1
    print(f"settings layout ok: {len(rust_fields)} fields, C {c_size} bytes; Rust, C/C++ and ctypes agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
