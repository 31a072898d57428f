"""``object.overtone``: the settings a TD edits, stored in the .blend."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, StringProperty

from . import session

# The library's defaults (checked against the native library by the add-on tests).
DEFAULT_YOUNGS_MODULUS = 2.5e4
DEFAULT_POISSON_RATIO = 0.4
DEFAULT_DENSITY = 1000.0
DEFAULT_LATTICE_RESOLUTION = 0  # automatic: chosen from the mesh's thickness
DEFAULT_MODES = 0  # automatic: 64 on a small body (a prop, a tail), 16 otherwise
DEFAULT_CLUSTERS = 100
DEFAULT_DAMPING = 0.1
DEFAULT_TIME_SCALE = 1.0
DEFAULT_PREROLL = 0.0
DEFAULT_STRENGTH = 1.0
DEFAULT_CUT_DISTANCE = 0.5
DEFAULT_SUBSTEPS = 0  # automatic
DEFAULT_FREQUENCY = 0.0  # none: Young's modulus as given


# Blender 4.5 warns about "//" in path properties unless they declare blend-relative support (an
# option older versions do not know).
_PATH_OPTIONS = {'PATH_SUPPORTS_BLEND_RELATIVE'} if bpy.app.version >= (4, 5, 0) else set()


# Settings one body shares: editing one on any of its objects sets it on the others.
SHARED = ("youngs_modulus", "poisson_ratio", "density", "solver", "modes", "clusters",
          "lattice_resolution", "sidecar", "live_preview", "integrator", "substeps", "damping", "frequency",
          "rest", "time_scale", "preroll", "use_gravity", "strength", "cut_distance", "stiffness_range")

# The keyframable controls: the running session applies them at its next frame (no rebind, no new
# sidecar); every other setting rebuilds the session at the next frame.
CONTROLS = ("damping", "strength")


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


class OvertoneSettings(bpy.types.PropertyGroup):
    enabled: BoolProperty(name="Enabled", default=False,
                          description="Overtone is bound to this object (use Add / Remove)")
    youngs_modulus: FloatProperty(
        name="Young's Modulus", default=DEFAULT_YOUNGS_MODULUS, min=1e-3, soft_min=1e2, soft_max=1e8,
        description="Stiffness (Pa) in the character's normalised frame (longest half-extent 1): "
                    "lower is jigglier. Used as given only when Frequency is 0; otherwise it is "
                    "rescaled so the lowest mode rings at Frequency", update=_invalidate_named('youngs_modulus'))
    poisson_ratio: FloatProperty(name="Poisson Ratio", default=DEFAULT_POISSON_RATIO, min=0.0, max=0.499,
                                 description="Volume preservation (0 to < 0.5)", update=_invalidate_named('poisson_ratio'))
    density: FloatProperty(name="Density", default=DEFAULT_DENSITY, min=1e-6, soft_max=1e4,
                           description="Mass density (kg/m³) in the normalised frame", update=_invalidate_named('density'))
    solver: EnumProperty(
        name="Solver", default='FAST', update=_invalidate_named('solver'),
        items=[('FAST', "Fast", "Reduced solver (skinning eigenmodes and rotation clusters): real time"),
               ('FULL', "Full", "Full-order solver on every lattice vertex: slower, the reference")])
    modes: IntProperty(name="Modes", default=DEFAULT_MODES, min=0, soft_max=64,
                       description="Skinning eigenmodes of the fast solver; 0: automatic (64 on a small "
                                   "body such as a prop or a tail, 16 otherwise)", update=_invalidate_named('modes'))
    clusters: IntProperty(name="Clusters", default=DEFAULT_CLUSTERS, min=1, soft_max=1000,
                          description="Rotation clusters of the fast solver", update=_invalidate_named('clusters'))
    lattice_resolution: IntProperty(
        name="Lattice Resolution", default=DEFAULT_LATTICE_RESOLUTION, min=0, soft_max=128,
        description="Cells of the tetrahedral lattice along the longest side; 0 chooses them from "
                    "the mesh so thin limbs are four cells across", update=_invalidate_named('lattice_resolution'))
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
    integrator: EnumProperty(
        name="Integrator", default='MIDPOINT', update=_invalidate_named('integrator'),
        items=[('MIDPOINT', "Implicit Midpoint", "Substepped, keeps the motion: the look does not depend on the "
                                                 "frame rate"),
               ('BACKWARD_EULER', "Backward Euler", "One step per frame (the paper's scheme): damps the motion "
                                                    "more at low frame rates")])
    substeps: IntProperty(name="Substeps", default=DEFAULT_SUBSTEPS, min=0, max=64,
                          update=_invalidate_named('substeps'),
                          description="Solver steps per frame; 0 chooses them from the frame rate and the "
                                      "stiffness (at most 1/120 s each)")
    damping: FloatProperty(
        name="Damping", default=DEFAULT_DAMPING, min=0.0, soft_max=1.0, update=_control_changed('damping'),
        description="Damping ratio of the low jiggle modes: 0 rings on, 0.1 decays over a few swings, "
                    "1 settles without swinging. Keyframable; changing it does not rebind")
    frequency: FloatProperty(
        name="Frequency", default=DEFAULT_FREQUENCY, min=0.0, soft_max=20.0, unit='NONE',
        update=_invalidate_named('frequency'),
        description="Jiggle frequency (Hz) of the lowest mode; Young's modulus is rescaled to it, so "
                    "the same value gives a comparable jiggle on any character. 0 keeps Young's modulus")
    rest: EnumProperty(
        name="Rest Shape", default='RIG', update=_invalidate_named('rest'),
        items=[('RIG', "Rig Pose", "The skinned pose is the elastic reference: a held pose shows no jiggle"),
               ('BIND', "Bind Shape", "The bind shape is the reference (the paper's): physics may reshape a bad "
                                      "pose and keep an offset")])
    time_scale: FloatProperty(name="Time Scale", default=DEFAULT_TIME_SCALE, min=1e-3, soft_min=0.1, soft_max=4.0,
                              update=_invalidate_named('time_scale'),
                              description="Physics seconds per animation second: 2 jiggles twice as fast")
    preroll: FloatProperty(name="Pre-roll", default=DEFAULT_PREROLL, min=0.0, max=60.0, unit='TIME_ABSOLUTE',
                           update=_invalidate_named('preroll'),
                           description="Seconds the rig is held at the first frame's pose before it, so the "
                                       "body settles (gravity) before the shot starts")
    use_gravity: BoolProperty(name="Gravity", default=False, update=_invalidate_named('use_gravity'),
                              description="Apply the scene's gravity (Scene ▸ Gravity) to the secondary motion")
    strength: FloatProperty(
        name="Strength", default=DEFAULT_STRENGTH, min=0.0, soft_max=3.0, update=_control_changed('strength'),
        description="Multiplier of the secondary motion (0 none, 2 twice). Keyframable; changing it does "
                    "not rebind")
    cut_distance: FloatProperty(
        name="Cut Distance", default=DEFAULT_CUT_DISTANCE, min=0.0, soft_max=2.0, update=_invalidate_named('cut_distance'),
        description="A rig jump between two frames larger than this fraction of the body's size restarts "
                    "the simulation (a camera cut, a teleport); 0 never")
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
