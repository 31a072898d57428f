"""Installs the built zip the way a user does (Blender's extension installer into a throw-away
user folder, enabled on install) and drives the installed add-on once: the manifest is accepted,
the native library is found inside the package, and disabling the add-on cleans up its handler.
Run by scripts/test_blender.sh with HOME pointing at an empty temporary folder."""

import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402  (first: it makes Blender's own modules importable)
import addon_utils  # noqa: E402
import numpy as np  # noqa: E402

import scenes  # noqa: E402


def main(zip_path):
    scene = scenes.empty_scene()
    r = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    assert r == {'FINISHED'}, f"install returned {r}"
    enabled = [a.module for a in bpy.context.preferences.addons]
    assert "bl_ext.user_default.overtone" in enabled, f"not enabled after install: {enabled}"
    ob, _ = scenes.rigged_tube(rings=21, segments=12)
    ob.overtone.sidecar = os.path.join(bpy.app.tempdir, "install.ovt")
    assert bpy.ops.object.overtone_add() == {'FINISHED'}
    frames = scenes.play(scene, ob, range(1, 21))
    ob.overtone.live_preview = False
    rig = scenes.play(scene, ob, range(1, 21))
    moved = float(np.abs(frames - rig).max())
    assert moved > 1e-4, f"the installed add-on produced no secondary motion ({moved:.1e})"
    handlers = lambda: [h for h in bpy.app.handlers.frame_change_post if "overtone" in h.__module__]
    assert len(handlers()) == 1, "the installed add-on did not register its frame handler once"
    addon_utils.disable("bl_ext.user_default.overtone", default_set=True)
    assert not handlers(), "disabling the add-on left its frame handler"
    print(f"ok   installed {os.path.basename(zip_path)}, enabled, secondary motion {moved:.4f}, disabled cleanly")


if __name__ == "__main__":
    code = 1
    try:
        main(os.path.abspath(sys.argv[1]))
        code = 0
    except Exception:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        os._exit(code)
