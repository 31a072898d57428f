"""Overtone for Blender: complementary-dynamics secondary motion on top of an Armature modifier.

Add it to a skinned mesh (Physics tab ▸ Overtone ▸ Add, or ``bpy.ops.object.overtone_add()``),
play the timeline for a live preview, bake to a point cache for rendering. The physics lives in
the native library ``lib/libovertone_c.so`` (Overtone's Rust core behind a C ABI)."""

bl_info = {
    "name": "Overtone",
    "author": "Overtone developers",
    "version": (0, 1, 0),
    "blender": (4, 2, 0),
    "location": "Properties ▸ Physics ▸ Overtone",
    "description": "Complementary-dynamics secondary motion on top of an Armature modifier",
    "category": "Animation",
}

import bpy

from . import batch, live, operators, panel, presets, properties, saving, setup_check, undo  # noqa: F401 (batch: the farm entry)

_classes = (properties.OvertoneSettings,) + operators.classes + presets.classes + panel.classes


def register():
    for c in _classes:
        bpy.utils.register_class(c)
    bpy.types.Object.overtone = bpy.props.PointerProperty(type=properties.OvertoneSettings,
                                                          override={'LIBRARY_OVERRIDABLE'})
    presets.install_bundled()
    live.register()
    undo.register()
    saving.register()
    setup_check.register()


def unregister():
    setup_check.unregister()
    saving.unregister()
    undo.unregister()
    live.unregister()
    del bpy.types.Object.overtone
    for c in reversed(_classes):
        bpy.utils.unregister_class(c)
