"""Saving. The live preview's shape keys are written muted (value 0) and put back after the save,
so a file opened without the add-on (a render node, a linked library) shows the plain rig or the
bake, not the offsets of the last frame played. Caches baked in an unsaved file live in Blender's temporary folder; when the file is saved they
move next to it (to the object's ``//`` cache path), before the file is written, so the saved
file already points at them. The precompute sidecars of an unsaved file (``//`` sidecar paths
resolve to the temporary folder too) move with them, so the first frame after reopening loads
the precompute instead of rebuilding it."""

import glob
import os
import shutil

import bpy
from bpy.app.handlers import persistent

from . import cache_modifier


def _destination(relative, blend_path):
    return os.path.join(os.path.dirname(os.path.abspath(blend_path)), relative[2:])


def move_temporary_caches(blend_path):
    """Moves every temporary cache to its ``//`` path beside ``blend_path`` and points the Mesh
    Cache modifier there; returns the moved destinations. A cache that cannot be moved stays where
    it is and says so in the object's status."""
    moved = []
    for ob in bpy.data.objects:
        if ob.type != 'MESH' or not ob.overtone.cache_in_temp:
            continue
        props = ob.overtone
        mod = cache_modifier.get(ob)
        src = bpy.path.abspath(mod.filepath) if mod is not None else ""
        if not props.cache_file.startswith("//") or not os.path.isfile(src):
            props.cache_in_temp = False
            continue
        dst = _destination(props.cache_file, blend_path)
        try:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.move(src, dst)
        except OSError as e:
            props.status = f"error: the baked cache stays in {src}: cannot move it beside the .blend ({e})"
            continue
        mod.filepath = props.cache_file
        props.cache_in_temp = False
        if props.status.startswith("baked"):
            props.status = props.status.replace(src, dst).replace(
                " (temporary folder until the .blend is saved)", "")
        moved.append(dst)
    return moved


def move_temporary_sidecars(blend_path):
    """On the first save of a file: moves the kept sidecars of every ``//`` sidecar path from the
    temporary folder beside ``blend_path``; returns the moved destinations."""
    if bpy.data.filepath:
        return []
    moved = []
    bases = {ob.overtone.sidecar for ob in bpy.data.objects
             if ob.type == 'MESH' and ob.overtone.sidecar.startswith("//")}
    for base in sorted(bases):
        src_root = os.path.join(bpy.app.tempdir, base[2:])
        src_root = src_root[:-4] if src_root.endswith(".ovt") else src_root
        dst_root = _destination(base, blend_path)
        dst_root = dst_root[:-4] if dst_root.endswith(".ovt") else dst_root
        for src in glob.glob(glob.escape(src_root) + ".*.ovt"):
            dst = dst_root + src[len(src_root):]
            try:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.move(src, dst)
                moved.append(dst)
            except OSError as e:
                print(f"Overtone: the precompute {src} stays in the temporary folder ({e})")
    return moved


# The Overtone shape keys muted for the file being written: (object name, value), put back after.
_muted = []
# An object property marking a key muted by a save or a render: a file saved that way holds it,
# and the live preview turns the key back on (only then) when it next writes.
MUTED = "overtone_key_muted"


def mute_live_offsets():
    """Sets every Overtone shape key to value 0 and returns what it was: a saved file, a render
    node or a linked file without the add-on then shows the plain rig (or the bake), never the
    offsets of whatever frame the live preview last showed."""
    from . import shape_key

    muted = []
    for ob in bpy.data.objects:
        if ob.type != 'MESH' or not ob.overtone.enabled:
            continue
        try:
            kb = shape_key.get(ob)
            if kb is not None and kb.value != 0.0:
                value = kb.value
                kb.value = 0.0
                ob[MUTED] = True
                muted.append((ob.name, value))
        except (AttributeError, RuntimeError, TypeError) as e:  # linked, read-only data
            print(f"Overtone: cannot mute the live shape key of '{ob.name}': {e}")
    return muted


def unmute_live_offsets(muted):
    from . import shape_key

    for name, value in muted:
        ob = bpy.data.objects.get(name)
        try:
            kb = shape_key.get(ob) if ob is not None else None
            if kb is not None:
                kb.value = value
            if ob is not None and MUTED in ob:
                del ob[MUTED]
        except (AttributeError, RuntimeError, TypeError) as e:
            print(f"Overtone: cannot unmute the live shape key of '{name}': {e}")


@persistent
def on_save_pre(filepath="", *_args):
    path = filepath if isinstance(filepath, str) and filepath else bpy.data.filepath
    if path:
        move_temporary_caches(path)
        move_temporary_sidecars(path)
    _muted[:] = mute_live_offsets()


@persistent
def on_save_post(*_args):
    unmute_live_offsets(_muted)
    _muted.clear()


def _remove(handlers, fn):
    for h in list(handlers):
        if getattr(h, "__name__", "") == fn.__name__ and getattr(h, "__module__", "") == fn.__module__:
            handlers.remove(h)


def register():
    _remove(bpy.app.handlers.save_pre, on_save_pre)
    _remove(bpy.app.handlers.save_post, on_save_post)
    bpy.app.handlers.save_pre.append(on_save_pre)
    bpy.app.handlers.save_post.append(on_save_post)


def unregister():
    _remove(bpy.app.handlers.save_pre, on_save_pre)
    _remove(bpy.app.handlers.save_post, on_save_post)
