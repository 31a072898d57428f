"""Headless farm bake, shipped with the extension:

    blender -b shot.blend --python <extension folder>/overtone/farm_bake.py [-- --objects A,B]

bakes every Overtone object (or the named ones) over the scene's range; exit status 0 when all
baked, 1 when any failed (see ``batch.py``)."""

import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_pkg = os.path.basename(_here)
# The add-on is enabled in the user's Blender as bl_ext.<repository>.overtone; find it loaded,
# else import the folder this script sits in.
_mod = next((m for n, m in sys.modules.items() if (n == _pkg or n.endswith("." + _pkg)) and hasattr(m, "batch")), None)
if _mod is None:
    sys.path.insert(0, os.path.dirname(_here))
    _mod = importlib.import_module(_pkg)
    import bpy

    if not hasattr(bpy.types.Object, "overtone"):
        _mod.register()
importlib.import_module(_mod.__name__ + ".batch").main()
