"""``object.overtone``: the settings a TD edits, stored in the .blend.

The deformer's settings are built from ``settings_table.SETTINGS`` (generated from the Rust
table, like the library's own defaults and ranges), so a setting added to the table appears here
with its label, default, range and description; the add-on's own properties (vertex groups,
paths, the live preview, bookkeeping) are declared by hand below."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, StringProperty

from . import session, settings_table

# Blender 4.5 warns about "//" in path properties unless they declare blend-relative support (an
# option older versions do not know).
_PATH_OPTIONS = {'PATH_SUPPORTS_BLEND_RELATIVE'} if bpy.app.version >= (4, 5, 0) else set()

# The table's settings that are object properties: the HOST ones (gravity, fps) come from the
# scene when the session is built (session.native_settings).
ROWS = tuple(row for row in settings_table.SETTINGS if row["group"] != "HOST")


def property_names(row):
    """The properties of one table row: ``use_<name>`` first for an optional setting, then the value."""
    return (f"use_{row['name']}", row["name"]) if row["optional"] else (row["name"],)


# Settings one body shares: editing one on any of its objects sets it on the others (every table
# setting and its use_ switch, and the add-on's own body-wide ones).
SHARED = tuple(n for row in ROWS for n in property_names(row)) + (
    "sidecar", "live_preview", "use_gravity", "stiffness_range", "use_scene_frame_range", "bake_frame_start",
    "bake_frame_end")

# The keyframable controls: the running session applies them at its next frame (no rebind, no new
# sidecar); every other setting rebuilds the session at the next frame and is not animatable.
CONTROLS = tuple(n for row in ROWS if row["animatable"] for n in property_names(row))


def _sync(self, name):
    """Copies setting ``name`` to the other objects of this object's body (each copy triggers
    their own update, which finds nothing left to copy)."""
    ob = self.id_data
    if not self.body:
        return
    value = getattr(self, name)
    for other in bpy.data.objects:
        if other is not ob and other.type == 'MESH' and other.overtone.body == self.body:
            if getattr(other.overtone, name) != value:
                setattr(other.overtone, name, value)


def _stale_status(ob):
    """A setting changed: what the panel said about the last bind or bake no longer holds."""
    st = ob.overtone.status
    if st and not st.startswith("error"):
        ob.overtone.status = "settings changed: the precompute is rebuilt at the next frame; bake again"


def _invalidate_named(name):
    def update(self, context):
        """A setting changed: the running session no longer matches; the next frame rebuilds it."""
        ob = self.id_data
        session.drop(ob)
        _stale_status(ob)
        if name in SHARED:
            _sync(self, name)
    return update


def _control_changed(name):
    def update(self, context):
        """A keyframable control changed: the session picks it up at its next frame."""
        _sync(self, name)
    return update


def _invalidate(self, context):
    ob = self.id_data
    session.drop(ob)
    _stale_status(ob)


def _live_changed(self, context):
    from . import cache_modifier, shape_key
    ob = self.id_data
    kb = shape_key.get(ob)
    if kb is not None:
        kb.value = 1.0 if self.live_preview else 0.0
    cache_modifier.set_enabled(ob, not self.live_preview)
    s = session.get(ob)
    if s is not None:
        s.last_frame = None
    _sync(self, "live_preview")


def _format_changed(self, context):
    """Keeps the cache path's extension in step with the format (a path without a cache
    extension is left as it is; the bake refuses a mismatch)."""
    import os

    base, ext = os.path.splitext(self.cache_file)
    if ext.lower() in (".pc2", ".abc", ".usda", ".usd"):
        self.cache_file = base + {'PC2': ".pc2", 'ABC': ".abc", 'USD': ".usda"}[self.cache_format]


# Exclusive bounds (a setting that must be > 0, a Poisson ratio < 0.5): Blender only has inclusive
# hard limits, so the hard limit is put just inside the open bound, by this fraction of the bound's
# magnitude (at least of 1): > 0 becomes >= 0.001, < 0.5 becomes <= 0.499, > -1 becomes >= -0.999.
# Every value Blender then accepts is one the library accepts; the soft range (what the slider
# spans) is the table's.
_EXCLUSIVE_MARGIN = 1e-3

# Blender units of the table's units ('TIME_ABSOLUTE' shows seconds, 'FREQUENCY' hertz where this
# Blender has it); the other units (Pa, kg/m³, fractions of the body's diagonal) have none.
_UNIT_ITEMS = {e.identifier for e in bpy.types.FloatProperty.bl_rna.properties["unit"].enum_items}
_UNITS = {u: b for u, b in (("s", 'TIME_ABSOLUTE'), ("Hz", 'FREQUENCY')) if b in _UNIT_ITEMS}


def _hard_bound(row, side):
    """The hard ``min`` or ``max`` of a numeric row (None: unbounded), inside an exclusive bound."""
    value = row[side]
    if value is None:
        return None
    if row[f"{side}_exclusive"]:
        step = 1 if row["type"] == "INT" else _EXCLUSIVE_MARGIN * max(1.0, abs(value))
        value = value + step if side == "min" else value - step
    return value


def _numeric_options(row):
    """``min``/``max``/``soft_min``/``soft_max`` keywords of a FLOAT or INT row (ints for INT); a
    soft bound outside the hard range is clamped into it."""
    cast = int if row["type"] == "INT" else float
    kw = {}
    lo, hi = _hard_bound(row, "min"), _hard_bound(row, "max")
    if lo is not None:
        kw["min"] = cast(lo)
    if hi is not None:
        kw["max"] = cast(hi)
    for soft in ("soft_min", "soft_max"):
        v = row[soft]
        if v is not None:
            if lo is not None:
                v = max(v, lo)
            if hi is not None:
                v = min(v, hi)
            kw[soft] = cast(v)
    return kw


def _table_property(row):
    """The Blender properties of one table row: ``{name: property}``, the ``use_`` switch of an
    optional row included. An animatable row (damping, strength) is keyframable and its change
    reaches the running session at the next frame without a rebind; any other row is not
    animatable (only the animatable settings are honoured per frame: an F-curve on another one
    would be ignored) and its change drops the session, rebuilt at the next frame."""
    name = row["name"]
    animatable = row["animatable"]
    update = _control_changed if animatable else _invalidate_named
    options = {'ANIMATABLE'} if animatable else set()
    description = row["description"]
    if animatable:
        description += " Keyframable; changing it does not rebind."
    kw = dict(name=row["label"], description=description, options=options, update=update(name))
    kind = row["type"]
    if kind == "FLOAT":
        prop = FloatProperty(default=float(row["default"]), unit=_UNITS.get(row["unit"], 'NONE'),
                             **_numeric_options(row), **kw)
    elif kind == "INT":
        prop = IntProperty(default=int(row["default"]), **_numeric_options(row), **kw)
    elif kind == "BOOL":
        prop = BoolProperty(default=bool(row["default"]), **kw)
    elif kind == "ENUM":
        items = [tuple(item) for item in row["items"]]
        prop = EnumProperty(items=items, default=items[row["default"]][0], **kw)
    else:
        raise TypeError(f"setting {name}: a {kind} setting has no Blender property here (only HOST "
                        "settings may be vectors)")
    out = {}
    if row["optional"]:
        use = f"use_{name}"
        out[use] = BoolProperty(
            name=f"Use {row['label']}", default=bool(row["default_set"]), options=options, update=update(use),
            description=f"Set {row['label']} (off: {row['unset']})")
    out[name] = prop
    return out


def table_properties():
    """Every table setting's Blender properties in table order (see :func:`_table_property`)."""
    out = {}
    for row in ROWS:
        out.update(_table_property(row))
    return out


class OvertoneSettings(bpy.types.PropertyGroup):
    """One object's Overtone settings: the deformer's (from the settings table, added below the
    class) and the add-on's own."""

    enabled: BoolProperty(name="Enabled", default=False,
                          description="Overtone is bound to this object (use Add / Remove)")
    leak_group: StringProperty(
        name="Leak Group", default="", update=_invalidate_named('leak_group'),
        description="Vertex group adjusting the leak field where painted (unpainted vertices keep "
                    "Overtone's default). Weight 0: the secondary motion may carry the rig's momentum "
                    "there (the tissue rides along with the bones); 1: it may not (the tissue resists "
                    "the rig's motion and lags)")
    stiffness_group: StringProperty(
        name="Stiffness Group", default="", update=_invalidate_named('stiffness_group'),
        description="Vertex group scaling the stiffness where painted (unpainted vertices keep "
                    "Overtone's default). Weight 0.5: the default; 1: Stiffness Range times stiffer "
                    "(less jiggle there); 0: that many times softer")
    stiffness_range: FloatProperty(
        name="Stiffness Range", default=10.0, min=1.0, soft_max=100.0, update=_invalidate_named('stiffness_range'),
        description="The Stiffness Group's weight w multiplies Young's modulus by Range^(2w-1): "
                    "1 at w = 0.5, Range at w = 1, 1/Range at w = 0")
    use_gravity: BoolProperty(name="Gravity", default=False, update=_invalidate_named('use_gravity'),
                              description="Apply the scene's gravity (Scene ▸ Gravity) to the secondary motion")
    sidecar: StringProperty(name="Sidecar", subtype='FILE_PATH', default="", update=_invalidate_named('sidecar'),
                            options=_PATH_OPTIONS, description="Precompute cache (.ovt); rebuilt whenever an input changes")
    cache_file: StringProperty(name="Point Cache", subtype='FILE_PATH', default="",
                               options=_PATH_OPTIONS, description="Baked PC2 file played by the Mesh Cache modifier")
    cache_format: EnumProperty(
        name="Cache Format", default='PC2',
        items=[('PC2', "PC2", "Point Cache 2 (.pc2) played by a Mesh Cache modifier"),
               ('ABC', "Alembic", "Alembic (.abc) played by a Mesh Sequence Cache modifier; Maya, Houdini read it"),
               ('USD', "USD", "USD text (.usda) played by a Mesh Sequence Cache modifier")],
        description="File format of the bake (the Point Cache path's extension follows it)",
        update=_format_changed)
    use_scene_frame_range: BoolProperty(
        name="Scene Frame Range", default=True, update=lambda self, ctx: _sync(self, "use_scene_frame_range"),
        description="Bake the scene's frame range (off: the Start and End frames below, as a Cloth "
                    "cache's own range; outside it the cache holds its first and last frames)")
    bake_frame_start: IntProperty(name="Start", default=1, update=lambda self, ctx: _sync(self, "bake_frame_start"),
                                  description="First frame baked (the simulation starts at rest there)")
    bake_frame_end: IntProperty(name="End", default=250, update=lambda self, ctx: _sync(self, "bake_frame_end"),
                                description="Last frame baked")
    live_preview: BoolProperty(name="Live Preview", default=True, update=_live_changed,
                               description="Simulate while the timeline plays (a shape key); off "
                                           "plays the baked cache")
    bound_vertex_count: IntProperty(name="Bound Vertices", default=0, min=0,
                                    description="Vertex count when Overtone was added")
    created_basis: BoolProperty(default=False, options={'HIDDEN'})
    status: StringProperty(name="Status", default="", description="What Overtone last did")
    body: StringProperty(default="", options={'HIDDEN'},
                         description="Objects with the same id are simulated as one body")
    body_index: IntProperty(default=0, min=0, options={'HIDDEN'},
                            description="This object's place in its body (the order of the vertices)")
    bind_matrix: FloatVectorProperty(size=16, default=(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1),
                                     options={'HIDDEN'},
                                     description="World matrix when Overtone was added (row-major): "
                                                 "the simulation runs in world space at bind")
    has_bind_matrix: BoolProperty(default=False, options={'HIDDEN'})
    cache_in_temp: BoolProperty(default=False, options={'HIDDEN'},
                                description="The baked cache is in Blender's temporary folder (unsaved file); "
                                            "saving moves it next to the .blend")


def _overridable(annotations):
    """The same properties, each library-overridable: on a library override of a linked
    character (the usual way a shot uses a rigged asset) the settings, the bind's bookkeeping and
    the cache paths are the shot's own and are saved with it."""
    return {name: prop.function(**{**prop.keywords, "override": {'LIBRARY_OVERRIDABLE'}})
            for name, prop in annotations.items()}


# The deformer's settings from the table, first (Blender reads the annotations at registration).
OvertoneSettings.__annotations__ = _overridable({**table_properties(), **OvertoneSettings.__annotations__})
