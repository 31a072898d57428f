"""Where the add-on may write. A point cache or sidecar path is refused, before anything is
computed or written, when it is

* the open .blend file, a linked library, or any file a datablock reads (images, movie clips,
  sounds, fonts, volumes, Alembic/USD caches, text files);
* another object's Overtone point cache or sidecar, or the file a Mesh Cache modifier plays
  (other than this object's own Overtone cache), or this object's other Overtone file;
* an existing folder;
* an existing file that is not of the kind written (a PC2 cache, an Alembic archive or a USD
  file for the point cache of that format, an Overtone sidecar for the sidecar) — re-baking over
  an earlier cache stays silent. Every bake format gets the same checks; the one file a
  datablock reads that a bake may replace is this object's own Alembic/USD cache (its Mesh
  Sequence Cache modifier reads it).

"Same file" compares device and inode when both files exist (symlinks and hard links), else the
resolved absolute paths (``..`` and symlinked folders).
"""

import os

import bpy

from .session import SettingsError

PC2 = "pc2"
ABC = "abc"
USD = "usd"
SIDECAR = "sidecar"

# The kind of file each output may replace: its first bytes and what it is called.
_MAGIC = {PC2: ((b"POINTCACHE2\0",), "a PC2 point cache"), ABC: ((b"Ogawa",), "an Alembic (Ogawa) cache"),
          USD: ((b"#usda", b"PXR-USDC"), "a USD file"), SIDECAR: ((b"OVTCACHE",), "an Overtone sidecar")}
# The kind of a point cache of each bake format.
FORMAT_KIND = {'PC2': PC2, 'ABC': ABC, 'USD': USD}


def same_file(a, b):
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _abspath(path, library=None):
    if not path:
        return None
    try:
        return os.path.abspath(bpy.path.abspath(path, library=library))
    except Exception:
        return None


def _datablock_files(own=()):
    """``(description, absolute path)`` of every file the open .blend reads, but the Alembic/USD
    cache-file datablocks in ``own`` (those this object's own bake plays)."""
    out = []
    if bpy.data.filepath:
        out.append(("the open .blend file", bpy.data.filepath))
    for lib in bpy.data.libraries:
        out.append((f"the linked library '{lib.name}'", _abspath(lib.filepath)))
    for coll, what in ((bpy.data.images, "image"), (bpy.data.movieclips, "movie clip"),
                       (bpy.data.sounds, "sound"), (bpy.data.fonts, "font"), (bpy.data.volumes, "volume"),
                       (bpy.data.cache_files, "cache file (Alembic/USD)"), (bpy.data.texts, "text")):
        for d in coll:
            if d in own:
                continue
            fp = getattr(d, "filepath", "")
            if not fp or fp == "<builtin>" or (what == "image" and d.source not in {'FILE', 'SEQUENCE', 'MOVIE', 'TILED'}):
                continue
            out.append((f"the {what} '{d.name}'", _abspath(fp, d.library)))
    return out


def _overtone_files(ob, what):
    """Files other Overtone objects and Mesh Cache modifiers use, and ``ob``'s other file."""
    from . import cache_modifier
    out = []
    for other in bpy.data.objects:
        if other.type != 'MESH':
            continue
        props = other.overtone
        # Another object's files count while Overtone is on it (Remove keeps its paths but
        # no longer uses them); this object's other file always counts.
        for prop, label in (("cache_file", "point cache"), ("sidecar", "sidecar")) if props.enabled or other == ob else ():
            fp = getattr(props, prop)
            if not fp:
                continue
            if other == ob and label == what:
                continue
            owner = "this object" if other == ob else f"'{other.name}'"
            out.append((f"the Overtone {label} of {owner}", _resolve(fp)))
            if prop == "sidecar":
                # The precomputes actually written: <base>.<hash>.ovt beside the base name.
                import glob
                import re
                stem, ext = os.path.splitext(_resolve(fp))
                keyed = re.compile(re.escape(os.path.basename(stem)) + r"\.[0-9a-f]{16}" + re.escape(ext) + "$")
                for kept in glob.glob(glob.escape(stem) + ".*" + ext):
                    if keyed.match(os.path.basename(kept)):
                        out.append((f"the Overtone {label} of {owner}", kept))
        for m in other.modifiers:
            if m.type != 'MESH_CACHE' or not m.filepath:
                continue
            if other == ob and m.name == cache_modifier.MODIFIER and what == "point cache":
                continue
            out.append((f"the file of Mesh Cache modifier '{m.name}' on '{other.name}'", _resolve(m.filepath)))
    return out


def _resolve(fp):
    if fp.startswith("//") and not bpy.data.filepath:
        return os.path.join(bpy.app.tempdir, fp[2:])
    return _abspath(fp)


def _sniff(path):
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        return None, f"cannot be read ({e.strerror})"
    return head, None


def check_output(path, what, ob, kind):
    """Raises :class:`SettingsError` naming both files when ``path`` (absolute) may not be written
    as ``what`` ("point cache" or "sidecar") of ``ob``; ``kind`` is :data:`PC2`, :data:`ABC`,
    :data:`USD` (``FORMAT_KIND[cache_format]``) or :data:`SIDECAR`."""
    from . import cache_modifier
    if os.path.isdir(path):
        raise SettingsError(f"the {what} path {path} is a folder; give a file name")
    # Re-baking over this object's own Alembic/USD cache: its Mesh Sequence Cache reads it.
    seq = cache_modifier.get_sequence(ob) if what == "point cache" else None
    own = (seq.cache_file,) if seq is not None and seq.cache_file is not None else ()
    for desc, other in _datablock_files(own) + _overtone_files(ob, what):
        if other and same_file(path, other):
            raise SettingsError(f"the {what} path {path} is {desc} ({other}); writing there would "
                                f"destroy it: choose another path")
    if os.path.isfile(path):
        head, err = _sniff(path)
        if err:
            raise SettingsError(f"the {what} path {path} {err}")
        magic, desc = _MAGIC[kind]
        if head and not head.startswith(magic):
            raise SettingsError(f"the {what} path {path} is an existing file that is not {desc}; "
                                f"Overtone will not overwrite it: choose another path or delete it")
