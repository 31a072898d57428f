"""Undo and redo (Ctrl-Z, Ctrl-Shift-Z) restore an object's Overtone settings, shape key and
modifiers but not the native sessions held in memory; after either, every session is dropped so
that the live preview rebuilds it from the restored settings (and the sidecar) on the next frame,
and Bake or Remove start from what the file now says."""

import bpy
from bpy.app.handlers import persistent

from . import session


@persistent
def on_undo_redo(*_args):
    session.drop_all()


_HANDLERS = (bpy.app.handlers.undo_post, bpy.app.handlers.redo_post)


def register():
    unregister_handlers()
    for h in _HANDLERS:
        h.append(on_undo_redo)


def unregister_handlers():
    for handlers in _HANDLERS:
        for h in list(handlers):
            if getattr(h, "__name__", "") == on_undo_redo.__name__ and getattr(h, "__module__", "") == __name__:
                handlers.remove(h)


def unregister():
    unregister_handlers()
