"""Farm bakes: bake every Overtone body of a saved .blend headless, in order, each over its frame
range (the scene's, or the body's own), and exit non-zero when any object fails.

    blender -b shot.blend --python-expr "import bl_ext.user_default.overtone as o; o.batch.bake_all()"
    blender -b shot.blend --python-expr "...; o.batch.bake_all(['Body', 'Belly'])"
    blender -b shot.blend --python <extension folder>/farm_bake.py -- --objects Body,Belly

One line per baked frame goes to stdout (``overtone: Body frame 12 (12/48)``), one summary line
per object; a failure prints ``overtone: FAILED Body: <reason>`` to stderr, the other objects
are still baked, and the process exits 1 (0 when every object baked). Nothing is written for a
failed object (each cache is written atomically once all its frames succeeded). The caches go
where each object's *Point Cache* path says (``//`` is relative to the .blend, i.e. shared
storage when the .blend is there).
"""

import os
import sys

import bpy

from . import bake, session
from .rig_binding import BindError


def overtone_objects(scene, names=None):
    """The scene's mesh objects with Overtone enabled, in name order, or exactly ``names``
    (each must exist, be a mesh and have Overtone enabled; a missing one is a failure)."""
    if names is None:
        # One object per body (a bake writes every object of its body).
        return sorted(bake.bodies(scene), key=lambda o: o.name), []
    found, missing = [], []
    for n in names:
        ob = scene.objects.get(n)
        if ob is None or ob.type != 'MESH' or not ob.overtone.enabled:
            why = "no such object in the scene" if ob is None else (
                "not a mesh" if ob.type != 'MESH' else "Overtone is not enabled on it (Add Overtone first)")
            missing.append((n, why))
        else:
            found.append(ob)
    return found, missing


def _say(line, err=False):
    stream = sys.stderr if err else sys.stdout
    stream.write(line + "\n")
    stream.flush()


def bake_all(names=None, exit=True, scene=None):
    """Bakes the Overtone objects of ``scene`` (default: the current scene) — all of them, or
    the ``names`` given — printing one line per frame. Returns ``{name: error or None}``; with
    ``exit`` (the farm entry), ends Blender with status 0 when all succeeded, else 1."""
    scene = scene or bpy.context.scene
    session.split_copies(scene)
    obs, missing = overtone_objects(scene, names)
    results = {}
    for n, why in missing:
        results[n] = why
        _say(f"overtone: FAILED {n}: {why}", err=True)
    if not obs and not missing:
        results[""] = f"no object of scene '{scene.name}' has Overtone enabled"
        _say(f"overtone: FAILED: {results['']}", err=True)
    _say(f"overtone: baking {len(obs)} object(s) of '{bpy.data.filepath or 'unsaved file'}'")
    for ob in obs:
        name = ob.name
        first, last = bake.frame_range(session.members(scene, ob)[0], scene)
        _say(f"overtone: {name} over frames {first}..{last}")

        def progress(done, total, name=name, first=first):
            _say(f"overtone: {name} frame {first + done - 1} ({done}/{total})")

        try:
            r = bake.bake(ob, scene, progress)
        except (session.SettingsError, BindError, RuntimeError, OSError, ValueError) as e:
            results[name] = str(e)
            _say(f"overtone: FAILED {name}: {e}", err=True)
            continue
        except Exception as e:  # an internal error: still name the object, keep going
            results[name] = f"internal error ({type(e).__name__}: {e})"
            _say(f"overtone: FAILED {name}: {results[name]}", err=True)
            continue
        results[name] = None
        _say(f"overtone: {name} baked {r['frames']} frames of {r['vertices']} vertices to {r['path']} "
             f"in {r['seconds']:.2f} s")
    failed = [n for n, e in results.items() if e is not None]
    _say(f"overtone: {len(results) - len(failed)} baked, {len(failed)} failed" +
         (f" ({', '.join(n or '<scene>' for n in failed)})" if failed else ""))
    if exit:
        os._exit(1 if failed else 0)
    return results


def main(argv=None):
    """The shipped script's entry: ``-- --objects A,B`` after Blender's own arguments."""
    argv = sys.argv if argv is None else argv
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    names = None
    if "--objects" in args:
        i = args.index("--objects")
        if i + 1 >= len(args) or not args[i + 1].strip():
            _say("overtone: FAILED: --objects needs a comma-separated list of object names", err=True)
            os._exit(2)
        names = [n for n in args[i + 1].split(",") if n]
    bake_all(names)
