"""Motion presets, as Cloth's: a preset button in the Motion sub-panel's header lists the bundled
presets and the user's own (*+* saves the current values under a name, *-* deletes one).

A preset sets the motion settings an artist picks by feel, the jiggle's frequency, its damping
(the decay ratio of the lowest modes), the strength and the scene's gravity, on the active object
(and so on its whole body: the settings are shared). Presets are Blender preset files
(``presets/overtone/motion/*.py`` in the user's scripts folder); the bundled ones are written there
when the add-on registers, unless a file of that name is already there (a user's edit is kept).
"""

import os

import bpy
from bl_operators.presets import AddPresetBase
from bl_ui.utils import PresetPanel

from . import settings_table

SUBDIR = "overtone/motion"

#: The properties a motion preset stores, in order.
VALUES = ("use_frequency", "frequency", "damping", "strength", "use_gravity")

#: The bundled presets: name → values of :data:`VALUES`. The frequency is the lowest mode's (Hz)
#: and the damping its decay ratio; what a surface point shows follows them approximately (a
#: layered avatar at the default 5 Hz / 0.1 rang at 5.9 Hz with a ratio of 0.13).
#: *Default* is the library's own defaults (the settings table), not a copy of them.
def _table_defaults():
    rows = {row["name"]: row for row in settings_table.SETTINGS}
    f = rows["frequency"]
    return (bool(f["default_set"]), float(f["default"]), float(rows["damping"]["default"]),
            float(rows["strength"]["default"]), False)


BUNDLED = {
    "Soft Belly": (True, 3.0, 0.15, 1.0, False),
    "Firm Muscle": (True, 8.0, 0.3, 1.0, False),
    "Heavy Tail": (True, 1.5, 0.05, 1.0, True),
    "Default": _table_defaults(),
}


def _preset_text(values):
    lines = ["import bpy", "props = bpy.context.object.overtone", ""]
    lines += [f"props.{name} = {value!r}" for name, value in zip(VALUES, values)]
    return "\n".join(lines) + "\n"


def install_bundled():
    """Writes the bundled presets into the user's preset folder (files already there are kept);
    returns the folder. Fails quietly (returns ``None``) where the user folder cannot be written:
    the menu then lists what it finds."""
    try:
        folder = bpy.utils.user_resource('SCRIPTS', path=os.path.join("presets", SUBDIR), create=True)
    except (OSError, ValueError):
        return None
    if not folder:
        return None
    for name, values in BUNDLED.items():
        path = os.path.join(folder, bpy.path.clean_name(name) + ".py")
        if not os.path.exists(path):
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(_preset_text(values))
            except OSError:
                return None
    return folder


class OVERTONE_MT_motion_presets(bpy.types.Menu):
    bl_label = "Motion Presets"
    preset_subdir = SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset


class OBJECT_OT_overtone_motion_preset_add(AddPresetBase, bpy.types.Operator):
    """Save the current motion settings as a preset, or delete the chosen one"""
    bl_idname = "object.overtone_motion_preset_add"
    bl_label = "Add Overtone Motion Preset"
    preset_menu = "OVERTONE_MT_motion_presets"
    preset_subdir = SUBDIR
    preset_defines = ["props = bpy.context.object.overtone"]
    preset_values = [f"props.{name}" for name in VALUES]


class OVERTONE_PT_motion_presets(PresetPanel, bpy.types.Panel):
    bl_label = "Motion Presets"
    preset_subdir = SUBDIR
    preset_operator = "script.execute_preset"
    preset_add_operator = "object.overtone_motion_preset_add"


classes = (OVERTONE_MT_motion_presets, OBJECT_OT_overtone_motion_preset_add, OVERTONE_PT_motion_presets)
