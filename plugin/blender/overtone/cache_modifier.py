"""The Mesh Cache modifier that plays a baked PC2 right after the Armature modifier."""

MODIFIER = "Overtone Cache"


def get(ob):
    m = ob.modifiers.get(MODIFIER)
    return m if m is not None and m.type == 'MESH_CACHE' else None


def ensure(ob, armature_index, filepath, frame_start):
    """Adds (or updates) the modifier so that it overwrites the armature's output with the file's
    positions, sample ``i`` at scene frame ``frame_start + i``."""
    m = get(ob)
    if m is None:
        m = ob.modifiers.new(MODIFIER, 'MESH_CACHE')
    m.cache_format = 'PC2'
    m.filepath = filepath
    m.deform_mode = 'OVERWRITE'
    m.play_mode = 'SCENE'
    m.time_mode = 'FRAME'
    m.frame_start = float(frame_start)
    m.frame_scale = 1.0
    m.interpolation = 'NONE'
    m.forward_axis = 'POS_Y'
    m.up_axis = 'POS_Z'
    m.factor = 1.0
    current = list(ob.modifiers).index(m)
    if current != armature_index + 1:
        ob.modifiers.move(current, armature_index + 1)
    m.show_viewport = True
    m.show_render = True
    return m


def set_enabled(ob, enabled):
    m = get(ob)
    if m is not None:
        m.show_viewport = enabled
        m.show_render = enabled


def remove(ob):
    m = get(ob)
    if m is not None:
        ob.modifiers.remove(m)
