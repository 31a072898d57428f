"""The Overtone panel in the Properties editor's Physics tab."""

import bpy

from . import properties, session

# The optional settings of the table (drawn with their use_ switch).
_OPTIONAL = {row["name"] for row in properties.ROWS if row["optional"]}


def _setting(layout, props, name):
    """Draws a table setting: an optional one as its ``use_`` checkbox with the value beside it,
    greyed out while the switch is off (the library then uses its automatic value or none)."""
    if name not in _OPTIONAL:
        layout.prop(props, name)
        return
    use = f"use_{name}"
    row = layout.row(align=True)
    row.prop(props, use, text="")
    sub = row.row(align=True)
    sub.active = getattr(props, use)
    sub.prop(props, name)


class PHYSICS_PT_overtone(bpy.types.Panel):
    bl_label = "Overtone"
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type == 'MESH'

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
        col = layout.column()
        col.prop(props, "solver")
        sub = col.column()
        sub.enabled = props.solver == 'FAST'
        _setting(sub, props, "modes")
        _setting(sub, props, "clusters")
        col.separator()
        sub = col.column()
        # With a frequency set, Young's modulus is only the starting value that gets rescaled.
        sub.active = not props.use_frequency
        _setting(sub, props, "youngs_modulus")
        _setting(col, props, "poisson_ratio")
        _setting(col, props, "density")
        _setting(col, props, "lattice_resolution")
        col.prop_search(props, "leak_group", ob, "vertex_groups")
        if props.leak_group:
            hint = col.column(align=True)
            hint.label(text="Painted: 0 follows the rig, 1 resists it (lags)")
            hint.label(text="Unpainted vertices keep the default field")
        col.prop_search(props, "stiffness_group", ob, "vertex_groups")
        if props.stiffness_group:
            col.prop(props, "stiffness_range")
            hint = col.column(align=True)
            r = props.stiffness_range
            hint.label(text=f"Painted: 0.5 default, 1 is {r:g}x stiffer (less jiggle), 0 is {r:g}x softer")
            hint.label(text="Unpainted vertices keep the default stiffness")
        col.separator()
        col.label(text="Motion")
        for name in ("damping", "strength", "frequency", "time_scale", "preroll"):
            _setting(col, props, name)
        col.prop(props, "use_gravity")
        for name in ("cut_distance", "max_displacement", "rest", "integrator"):
            _setting(col, props, name)
        sub = col.column()
        sub.enabled = props.integrator == 'IMPLICIT_MIDPOINT'
        _setting(sub, props, "substeps")
        col.separator()
        col.prop(props, "sidecar")
        col.prop(props, "cache_format")
        col.prop(props, "cache_file")
        col.prop(props, "live_preview")
        row = layout.row()
        row.operator("object.overtone_bake", icon='REC')
        row.operator("object.overtone_add", text="Rebind", icon='FILE_REFRESH')
        layout.operator("object.overtone_remove", icon='X')
        if props.status:
            layout.label(text=props.status, icon='ERROR' if props.status.startswith("error") else 'INFO')
        s = session.get(ob)
        if s is not None and props.live_preview:
            layout.label(text=s.cache_info(), icon='ERROR' if s.outdated else 'FILE_CACHE')


classes = (PHYSICS_PT_overtone,)
