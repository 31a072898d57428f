"""``object.overtone``: the settings a TD edits, stored in the .blend."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from . import session

# The library's defaults (checked against the native library by the add-on tests).
DEFAULT_YOUNGS_MODULUS = 2e5
DEFAULT_POISSON_RATIO = 0.4
DEFAULT_DENSITY = 1000.0
DEFAULT_LATTICE_RESOLUTION = 0  # automatic: chosen from the mesh's thickness
DEFAULT_MODES = 16
DEFAULT_CLUSTERS = 100


# Blender 4.5 warns about "//" in path properties unless they declare blend-relative support (an
# option older versions do not know).
_PATH_OPTIONS = {'PATH_SUPPORTS_BLEND_RELATIVE'} if bpy.app.version >= (4, 5, 0) else set()


def _invalidate(self, context):
    """A setting changed: the running session no longer matches; the next frame rebuilds it."""
    ob = self.id_data
    session.drop(ob)


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


class OvertoneSettings(bpy.types.PropertyGroup):
    enabled: BoolProperty(name="Enabled", default=False,
                          description="Overtone is bound to this object (use Add / Remove)")
    youngs_modulus: FloatProperty(
        name="Young's Modulus", default=DEFAULT_YOUNGS_MODULUS, min=1e-3, soft_min=1e2, soft_max=1e8,
        description="Stiffness (Pa) in the character's normalised frame (longest half-extent 1): "
                    "lower is jigglier", update=_invalidate)
    poisson_ratio: FloatProperty(name="Poisson Ratio", default=DEFAULT_POISSON_RATIO, min=0.0, max=0.499,
                                 description="Volume preservation (0 to < 0.5)", update=_invalidate)
    density: FloatProperty(name="Density", default=DEFAULT_DENSITY, min=1e-6, soft_max=1e4,
                           description="Mass density (kg/m³) in the normalised frame", update=_invalidate)
    solver: EnumProperty(
        name="Solver", default='FAST', update=_invalidate,
        items=[('FAST', "Fast", "Reduced solver (skinning eigenmodes and rotation clusters): real time"),
               ('FULL', "Full", "Full-order solver on every lattice vertex: slower, the reference")])
    modes: IntProperty(name="Modes", default=DEFAULT_MODES, min=1, soft_max=64,
                       description="Skinning eigenmodes of the fast solver", update=_invalidate)
    clusters: IntProperty(name="Clusters", default=DEFAULT_CLUSTERS, min=1, soft_max=1000,
                          description="Rotation clusters of the fast solver", update=_invalidate)
    lattice_resolution: IntProperty(
        name="Lattice Resolution", default=DEFAULT_LATTICE_RESOLUTION, min=0, soft_max=96,
        description="Cells of the tetrahedral lattice along the longest side; 0 chooses them from "
                    "the mesh so thin limbs are three cells across", update=_invalidate)
    leak_group: StringProperty(
        name="Leak Group", default="", update=_invalidate,
        description="Vertex group painting where rig momentum leaks into the secondary motion "
                    "(empty: Overtone's default field)")
    sidecar: StringProperty(name="Sidecar", subtype='FILE_PATH', default="", update=_invalidate,
                            options=_PATH_OPTIONS, description="Precompute cache (.ovt); rebuilt whenever an input changes")
    cache_file: StringProperty(name="Point Cache", subtype='FILE_PATH', default="",
                               options=_PATH_OPTIONS, description="Baked PC2 file played by the Mesh Cache modifier")
    live_preview: BoolProperty(name="Live Preview", default=True, update=_live_changed,
                               description="Simulate while the timeline plays (a shape key); off "
                                           "plays the baked cache")
    bound_vertex_count: IntProperty(name="Bound Vertices", default=0, min=0,
                                    description="Vertex count when Overtone was added")
    created_basis: BoolProperty(default=False, options={'HIDDEN'})
    status: StringProperty(name="Status", default="", description="What Overtone last did")
