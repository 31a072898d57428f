"""The Mesh Cache modifier that plays a baked PC2 right after the Armature modifier (and the Mesh
Sequence Cache modifier of an Alembic/USD bake)."""

MODIFIER = "Overtone Cache"


def get(ob):
    m = ob.modifiers.get(MODIFIER)
    return m if m is not None and m.type == 'MESH_CACHE' else None


def ensure(ob, armature_index, filepath, frame_start):
    """Adds (or updates) the modifier so that it overwrites the armature's output with the file's
    positions, sample ``i`` at scene frame ``frame_start + i``. Removes the Mesh Sequence Cache
    modifier of an Alembic/USD bake, if any."""
    remove_sequence(ob)
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
    # Linear between frames: a render's motion blur samples sub-frames (at whole frames it is
    # the sample itself).
    m.interpolation = 'LINEAR'
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
    """Shows the bake in the viewport (``enabled``, live preview off) or hides it there for the
    live preview. Renders always show the bake: a render mutes the live preview's shape key
    (``live.on_render_init``), so with the live preview on a render shows the bake, not the
    plain rig."""
    for m in (get(ob), get_sequence(ob)):
        if m is not None:
            m.show_viewport = enabled
            m.show_render = True


def remove(ob):
    m = get(ob)
    if m is not None:
        ob.modifiers.remove(m)


SEQUENCE_MODIFIER = "Overtone Sequence Cache"


def get_sequence(ob):
    m = ob.modifiers.get(SEQUENCE_MODIFIER)
    return m if m is not None and m.type == 'MESH_SEQUENCE_CACHE' else None


def ensure_sequence(ob, armature_index, filepath, object_path):
    """Plays an Alembic or USD cache (``cache_formats``) with a Mesh Sequence Cache modifier right
    after the armature: it replaces positions only (the file holds the object's own polygons),
    sample ``i`` at scene frame ``frame_start + i`` (the file's times are frames / fps). Removes
    the PC2 Mesh Cache modifier, if any; the cache file is reloaded from disk."""
    import bpy

    remove(ob)
    m = get_sequence(ob)
    if m is None:
        m = ob.modifiers.new(SEQUENCE_MODIFIER, 'MESH_SEQUENCE_CACHE')
    cf = m.cache_file
    if cf is None or bpy.path.abspath(cf.filepath) != bpy.path.abspath(filepath):
        before = set(bpy.data.cache_files)
        bpy.ops.cachefile.open(filepath=bpy.path.abspath(filepath))
        cf = next(c for c in bpy.data.cache_files if c not in before)
        cf.filepath = filepath
        m.cache_file = cf
    else:
        cf.filepath = filepath  # reloads the file written by this bake
    cf.is_sequence = False
    cf.override_frame = False
    cf.frame_offset = 0.0
    cf.scale = 1.0
    m.object_path = object_path
    m.read_data = {'VERT'}
    current = list(ob.modifiers).index(m)
    if current != armature_index + 1:
        ob.modifiers.move(current, armature_index + 1)
    m.show_viewport = True
    m.show_render = True
    return m


def remove_sequence(ob):
    m = get_sequence(ob)
    if m is not None:
        ob.modifiers.remove(m)


def free(ob):
    """Removes every cache modifier a bake added to ``ob``; ``True`` if there was one."""
    had = has_cache(ob)
    remove(ob)
    remove_sequence(ob)
    return had


def has_cache(ob):
    return get(ob) is not None or get_sequence(ob) is not None
