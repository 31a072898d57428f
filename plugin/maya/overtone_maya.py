"""Sets up an overtoneDeformer on a skinned Maya mesh (run inside Maya after loading the plug-in).

    import overtone_maya
    node = overtone_maya.create("body")   # the mesh (transform or shape) with a skinCluster

The node goes after the skinCluster, reads its weights and bind matrices through a message
connection, and its ``matrix[i]`` inputs are connected to the same joints as
``skinCluster.matrix[i]`` (same logical indices). Paint the leak field with Paint Attributes ▸
overtoneDeformer ▸ weights and turn on ``useLeakWeights``; paint the stiffness with Paint
Attributes ▸ overtoneDeformer ▸ stiffnessWeights (0.5 default, 1 = ``stiffnessRange`` times
stiffer, 0 = that many times softer) and turn on ``useStiffnessWeights``. ``damping`` and
``strength`` are keyable and change the result without a rebind.
"""

import maya.cmds as cmds


def skin_cluster_of(mesh):
    skins = cmds.ls(cmds.listHistory(mesh, pruneDagObjects=True) or [], type="skinCluster")
    if not skins:
        raise RuntimeError(f"{mesh} has no skinCluster: bind it to joints first (Skin > Bind Skin)")
    return skins[0]


def create(mesh, name="overtoneDeformer#"):
    """Creates and connects an overtoneDeformer on ``mesh``; returns the node name."""
    if not cmds.pluginInfo("overtoneDeformer", query=True, loaded=True):
        cmds.loadPlugin("overtoneDeformer")
    skin = skin_cluster_of(mesh)
    node = cmds.deformer(mesh, type="overtoneDeformer", after=True, name=name)[0]
    cmds.connectAttr(f"{skin}.message", f"{node}.skinCluster", force=True)
    for index in cmds.getAttr(f"{skin}.matrix", multiIndices=True) or []:
        src = cmds.listConnections(f"{skin}.matrix[{index}]", source=True, destination=False, plugs=True)
        if src:
            cmds.connectAttr(src[0], f"{node}.matrix[{index}]", force=True)
    cmds.connectAttr("time1.outTime", f"{node}.time", force=True)
    cmds.setAttr(f"{node}.startFrame", cmds.playbackOptions(query=True, minTime=True))
    return node


def rebind(node):
    """Re-reads the skinCluster (after editing weights or topology)."""
    cmds.setAttr(f"{node}.rebind", cmds.getAttr(f"{node}.rebind") + 1)
