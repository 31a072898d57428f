"""The Overtone panel in the Properties editor's Physics tab, laid out as Cloth and Soft Body are:
the main panel holds the buttons and the state, sub-panels hold the settings (read top to bottom:
Motion, Material, Weights, Cache, then the expert Solver settings, closed by default). Settings
use Blender's property split with keyframe decorators (only the animatable ones can be keyed) and
can be set before the first Add, which binds with them."""

import bpy

from . import cache_modifier, presets, properties, session

# The optional settings of the table (drawn with their use_ switch).
_OPTIONAL = {row["name"] for row in properties.ROWS if row["optional"]}


def _setting(layout, props, name):
    """Draws a table setting: an optional one as its ``use_`` checkbox with the value beside it,
    greyed out while the switch is off (the library then uses its automatic value or none)."""
    if name not in _OPTIONAL:
        layout.prop(props, name)
        return
    use = f"use_{name}"
    row = layout.row(align=True, heading=props.bl_rna.properties[name].name)
    row.use_property_decorate = False
    row.prop(props, use, text="")
    sub = row.row(align=True)
    sub.active = getattr(props, use)
    sub.prop(props, name, text="")
    row.prop_decorator(props, name)


def baked(ob):
    """The body of ``ob`` plays a bake (a cache modifier, live preview off): as with a baked
    Cloth, the settings that made the bake are locked until *Free Bake*."""
    p = ob.overtone
    return p.enabled and not p.live_preview and cache_modifier.has_cache(ob)


def _split(layout, ob=None):
    """A property-split column; greyed out (not editable) while ``ob`` plays a bake."""
    layout.use_property_split = True
    layout.use_property_decorate = True
    col = layout.column()
    if ob is not None and baked(ob):
        col.enabled = False
    return col


def _unassigned(counts, default):
    """The Weights hint for a group: how many vertices are not in it and what they get (a vertex
    not in the group differs from one at weight 0; Blender's Clean removes weight-0 vertices from
    a group, which marks the bind outdated)."""
    if counts is None:
        return f"Vertices not in the group keep {default}"
    inside, total = counts
    return f"{total - inside} of {total} vertices are not in the group: they keep {default}"


class _Sub:
    """A sub-panel of the Overtone panel (shown for every mesh, also before Add)."""

    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "physics"
    bl_parent_id = "PHYSICS_PT_overtone"

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type == 'MESH'


class PHYSICS_PT_overtone(bpy.types.Panel):
    bl_label = "Overtone"
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "physics"
    poll = classmethod(lambda cls, context: _Sub.poll(context))

    def draw(self, context):
        layout = self.layout
        ob = context.object
        props = ob.overtone
        if not props.enabled:
            layout.operator("object.overtone_add", icon='MOD_ARMATURE')
            if props.status:
                layout.label(text=props.status, icon='ERROR')
            return
        if props.body:
            others = [o.name for o in session.members(context.scene, ob) if o is not ob]
            box = layout.box()
            box.label(text=f"One body with {', '.join(others) or 'no other mesh'}", icon='LINKED')
            box.label(text="Settings are shared; Remove takes only this mesh out")
        row = layout.row()
        row.operator("object.overtone_bake", icon='REC')
        row.operator("object.overtone_add", text="Rebind", icon='FILE_REFRESH')
        layout.operator("object.overtone_remove", icon='X')
        if baked(ob):
            layout.label(text="Baked: the settings are locked until Free Bake (Cache)", icon='LOCKED')
        if props.status:
            layout.label(text=props.status, icon='ERROR' if props.status.startswith(("error", "Outdated")) else 'INFO')


class PHYSICS_PT_overtone_motion(_Sub, bpy.types.Panel):
    bl_label = "Motion"

    def draw_header_preset(self, context):
        if not baked(context.object):
            presets.OVERTONE_PT_motion_presets.draw_panel_header(self.layout)

    def draw(self, context):
        props = context.object.overtone
        col = _split(self.layout, context.object)
        for name in ("damping", "strength", "frequency", "time_scale", "preroll"):
            _setting(col, props, name)
        col.prop(props, "use_gravity")
        for name in ("cut_distance", "max_displacement", "rest"):
            _setting(col, props, name)


class PHYSICS_PT_overtone_material(_Sub, bpy.types.Panel):
    bl_label = "Material"

    def draw(self, context):
        props = context.object.overtone
        col = _split(self.layout, context.object)
        sub = col.column()
        # With a frequency set, Young's modulus is only the starting value that gets rescaled.
        sub.active = not props.use_frequency
        _setting(sub, props, "youngs_modulus")
        _setting(col, props, "poisson_ratio")
        _setting(col, props, "density")


class PHYSICS_PT_overtone_weights(_Sub, bpy.types.Panel):
    bl_label = "Weights"

    def draw(self, context):
        ob = context.object
        props = ob.overtone
        col = _split(self.layout, ob)
        s = session.get(ob)
        painted = s.painted.get(ob.name, {}) if s is not None else {}
        col.prop_search(props, "leak_group", ob, "vertex_groups")
        hint = col.column(align=True)
        if props.leak_group:
            hint.label(text="Painted: 0 follows the rig, 1 resists it (lags)")
            hint.label(text=_unassigned(painted.get("leak"), "the default field"))
        else:
            hint.label(text="None: the default field (rigid at the bones, free in the flesh)")
        col.prop_search(props, "stiffness_group", ob, "vertex_groups")
        if props.stiffness_group:
            col.prop(props, "stiffness_range")
            hint = col.column(align=True)
            r = props.stiffness_range
            hint.label(text=f"Painted: 0.5 default, 1 is {r:g}x stiffer (less jiggle), 0 is {r:g}x softer")
            hint.label(text=_unassigned(painted.get("stiffness"), "the default stiffness"))


class PHYSICS_PT_overtone_cache(_Sub, bpy.types.Panel):
    bl_label = "Cache"

    def draw(self, context):
        ob = context.object
        props = ob.overtone
        col = _split(self.layout)
        col.prop(props, "live_preview")
        s = session.get(ob)
        if s is not None and props.live_preview:
            col.label(text=s.cache_info(), icon='ERROR' if s.outdated else 'FILE_CACHE')
        col.prop(props, "cache_format")
        col.prop(props, "cache_file")
        col.prop(props, "use_scene_frame_range")
        sub = col.column(align=True)
        sub.active = not props.use_scene_frame_range
        sub.prop(props, "bake_frame_start")
        sub.prop(props, "bake_frame_end")
        scene = context.scene
        if not props.use_scene_frame_range and (props.bake_frame_start > scene.frame_start or
                                                 props.bake_frame_end < scene.frame_end):
            col.label(text="Outside Start-End the cache holds its first and last frames", icon='INFO')
        if props.enabled:
            row = col.row(align=True)
            row.operator("object.overtone_bake", text="Bake", icon='REC')
            row.operator("object.overtone_free_bake", icon='TRASH')
            col.operator("object.overtone_bake_all", icon='SCENE_DATA')
            col.operator("object.overtone_cache_to_bake", icon='EXPORT')
            if cache_modifier.has_cache(ob):
                col.label(text=props.status or "baked", icon='FILE_TICK')
            # A render mutes the live preview (live.on_render_init): it shows what is baked.
            if props.live_preview:
                col.label(text="Renders show the bake" if cache_modifier.has_cache(ob)
                          else "Renders show the plain rig until baked", icon='RESTRICT_RENDER_OFF')


class PHYSICS_PT_overtone_solver(_Sub, bpy.types.Panel):
    bl_label = "Solver"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        props = context.object.overtone
        col = _split(self.layout, context.object)
        col.prop(props, "solver")
        sub = col.column()
        sub.enabled = props.solver == 'FAST'
        _setting(sub, props, "modes")
        _setting(sub, props, "clusters")
        _setting(col, props, "lattice_resolution")
        _setting(col, props, "integrator")
        sub = col.column()
        sub.enabled = props.integrator == 'IMPLICIT_MIDPOINT'
        _setting(sub, props, "substeps")
        col.prop(props, "sidecar")


classes = (
    PHYSICS_PT_overtone,
    PHYSICS_PT_overtone_motion,
    PHYSICS_PT_overtone_material,
    PHYSICS_PT_overtone_weights,
    PHYSICS_PT_overtone_cache,
    PHYSICS_PT_overtone_solver,
)
