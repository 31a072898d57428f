"""OpenCue (PyOutline) job: bake Overtone's secondary motion of a shot, then let render layers
depend on it.

    python overtone_bake_opencue.py /shows/x/shot010/shot010.blend [Body,Belly]

submits one frame (the bake runs the whole range in order inside one Blender process) that
fails when any object fails (Blender exits 1 and prints ``overtone: FAILED <object>: ...``).
Add ``render_layer.depend_all(bake)`` to a render layer of the same outline to order them.
Needs Blender with the Overtone extension enabled on the render hosts ($BLENDER or `blender`).
"""

import json
import os
import sys

from outline import Outline, cuerun
from outline.modules.shell import Shell


def bake_layer(blend, objects=None, module="bl_ext.user_default.overtone"):
    """A one-frame Shell layer running the headless bake of ``blend``."""
    names = json.dumps(objects) if objects else "None"
    expr = f"import {module} as o; o.batch.bake_all({names})"
    blender = os.environ.get("BLENDER", "blender")
    return Shell("overtone_bake", command=[blender, "-b", blend, "--python-expr", expr],
                 range="1", chunk=1, cores=2)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    blend = os.path.abspath(argv[1])
    objects = [n for n in argv[2].split(",") if n] if len(argv) > 2 else None
    shot = os.path.splitext(os.path.basename(blend))[0]
    ol = Outline(f"{shot}_overtone_bake")
    ol.add_layer(bake_layer(blend, objects))
    cuerun.launch(ol, use_pycuerun=False)


if __name__ == "__main__":
    main(sys.argv)
