// overtoneDeformer: Overtone's complementary dynamics as a Maya deformer placed after a skinCluster.
//
// The node reads, once per bind, the skinCluster's rest geometry, weights, geomMatrix and
// bindPreMatrix, and per frame the joints' world matrices (its `matrix[]` array, connected from
// the same joints as skinCluster.matrix[], logical indices kept); it adds the complementary
// displacement to the skinned points it receives.
//
// Spaces (see plugin/cpp/overtone.hpp): the library simulates in world space at bind. The rest
// surface is `p · geomMatrix` (the shape's world matrix at bind, row vectors), each bone's
// transform is `bindPreMatrix_b · matrix_b` (bind world to posed world), and the world
// displacement is brought to the shape's object space with the inverse of its current world
// matrix. Rest in object space with world transforms would shrink a 0.01-scaled character 100x
// between rest and pose. The leak field is the node's own paintable
// deformer weights when `useLeakWeights` is on. The stiffness field is a second paintable map,
// `stiffnessList[geometry].stiffnessWeights[vertex]` (default 0.5), used when `useStiffnessWeights`
// is on: a painted weight w multiplies Young's modulus by stiffnessRange^(2w-1) (0.5: the
// default, 1: stiffnessRange times stiffer, 0: that many times softer).
// Art-direction controls (units in plugin/cpp/overtone.hpp): `damping` and `strength` are keyable
// and reach the simulation at the next frame without a rebind; `integrator`, `substeps`,
// `frequency`, `restShape`, `timeScale`, `preroll`, `useGravity`/`gravity` (world units/s^2, Maya's
// internal cm: default (0, -981, 0), off) and `cutDistance` rebind (the sidecar is kept). Time going backwards (or to `startFrame`) resets
// the simulation; every failure is shown with MGlobal::displayError and leaves the points as the
// skinCluster made them.
#include <maya/MArrayDataHandle.h>
#include <maya/MDagPath.h>
#include <maya/MDagPathArray.h>
#include <maya/MDataBlock.h>
#include <maya/MDataHandle.h>
#include <maya/MFnCompoundAttribute.h>
#include <maya/MDoubleArray.h>
#include <maya/MFileIO.h>
#include <maya/MFnEnumAttribute.h>
#include <maya/MFnMatrixAttribute.h>
#include <maya/MFnMatrixData.h>
#include <maya/MFnMesh.h>
#include <maya/MFnMessageAttribute.h>
#include <maya/MFnNumericAttribute.h>
#include <maya/MFnPlugin.h>
#include <maya/MFnSingleIndexedComponent.h>
#include <maya/MFnSkinCluster.h>
#include <maya/MFnTypedAttribute.h>
#include <maya/MFnUnitAttribute.h>
#include <maya/MGlobal.h>
#include <maya/MIntArray.h>
#include <maya/MItGeometry.h>
#include <maya/MMatrix.h>
#include <maya/MObjectArray.h>
#include <maya/MPlug.h>
#include <maya/MPlugArray.h>
#include <maya/MPointArray.h>
#include <maya/MPxDeformerNode.h>
#include <maya/MString.h>
#include <maya/MTime.h>
#include <maya/MTypeId.h>
#include <maya/MVector.h>

#include <algorithm>
#include <utility>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "overtone.hpp"
#include "settings_attributes.inc"

namespace {

// Maya's block for plug-ins developed in house (0x00000 - 0x7ffff); register a permanent id with
// Autodesk before distributing outside a studio.
const MTypeId kNodeId(0x0007A1F0);

// One skin transform in the library's layout: 3 x 4 row-major, x' = A x + t (column vectors),
// from Maya's row-vector matrix m (p' = p m).
void to_rows(const MMatrix& m, double* out) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) out[4 * r + c] = m(c, r);
}

MMatrix plug_matrix(const MPlug& plug) {
  MObject o = plug.asMObject();
  return o.isNull() ? MMatrix() : MFnMatrixData(o).matrix();
}

}  // namespace

class OvertoneDeformer : public MPxDeformerNode {
 public:
  static void* creator() { return new OvertoneDeformer(); }
  static MStatus initialize();
  MStatus deform(MDataBlock& block, MItGeometry& iter, const MMatrix& local_to_world,
                 unsigned int multi_index) override;
  SchedulingType schedulingType() const override { return SchedulingType::kUntrusted; }

  // One attribute per row of the generated settings table (and its use<Name> switch for an
  // optional setting; null otherwise), then the node's own.
  static MObject aSetting[overtone_maya::kSettingCount], aUseSetting[overtone_maya::kSettingCount];
  static MObject aSidecar, aUseLeak, aTime, aStartFrame, aMatrix, aSkinCluster, aRebind;
  static MObject aUseGravity, aGravity, aUseStiffness, aStiffnessRange, aStiffnessList, aStiffnessWeights;

 private:
  struct Bind {
    std::vector<unsigned> logical;  // skinCluster.matrix[] logical index of each bone
    std::vector<MMatrix> pre;       // bindPreMatrix per bone (world at bind -> joint space)
    std::size_t vertices = 0;
  };
  MStatus bind(MDataBlock& block, unsigned multi_index);
  bool read_pose(MDataBlock& block);
  void fail(const MString& what);
  std::string settings_signature(MDataBlock& block, const overtone::Settings& now) const;
  overtone::Settings read_settings(MDataBlock& block);

  overtone::Deformer deformer_;
  Bind bind_;
  std::string signature_;
  std::vector<double> pose_, disp_;
  double last_frame_ = 0.0;
  // Per row of the settings table, the attribute's value as read this frame and as the deformer
  // runs with it (keyable rows as last handed over).
  double row_value_[overtone_maya::kSettingCount] = {};
  double running_value_[overtone_maya::kSettingCount] = {};
  bool started_ = false;
  MString last_error_;
};

MObject OvertoneDeformer::aSetting[overtone_maya::kSettingCount];
MObject OvertoneDeformer::aUseSetting[overtone_maya::kSettingCount];
MObject OvertoneDeformer::aSidecar, OvertoneDeformer::aUseLeak, OvertoneDeformer::aTime;
MObject OvertoneDeformer::aStartFrame, OvertoneDeformer::aMatrix, OvertoneDeformer::aSkinCluster;
MObject OvertoneDeformer::aRebind, OvertoneDeformer::aUseGravity, OvertoneDeformer::aGravity;
MObject OvertoneDeformer::aUseStiffness, OvertoneDeformer::aStiffnessRange, OvertoneDeformer::aStiffnessList;
MObject OvertoneDeformer::aStiffnessWeights;

MStatus OvertoneDeformer::initialize() {
  using overtone_maya::kNoBound;
  using overtone_maya::SettingAttribute;
  MFnNumericAttribute n;
  MFnEnumAttribute e;
  std::vector<MObject*> settings;
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    const SettingAttribute& r = overtone_maya::kSettingAttributes[i];
    const MString shortName = r.short_name;
    if (r.type == SettingAttribute::Enum) {
      aSetting[i] = e.create(r.long_name, shortName, static_cast<short>(r.default_value));
      for (short k = 0; r.enum_fields[k] != nullptr; ++k) e.addField(r.enum_fields[k], k);
      e.setKeyable(r.keyable);
    } else {
      const auto type = r.type == SettingAttribute::Double ? MFnNumericData::kDouble
                        : r.type == SettingAttribute::Int  ? MFnNumericData::kInt
                                                           : MFnNumericData::kBoolean;
      aSetting[i] = n.create(r.long_name, shortName, type, r.default_value);
      if (r.min != kNoBound) n.setMin(r.min);
      if (r.max != kNoBound) n.setMax(r.max);
      if (r.soft_min != kNoBound) n.setSoftMin(r.soft_min);
      if (r.soft_max != kNoBound) n.setSoftMax(r.soft_max);
      n.setKeyable(r.keyable);
    }
    settings.push_back(&aSetting[i]);
    if (r.optional) {
      std::string use = std::string("use") + r.long_name;
      use[3] = static_cast<char>(std::toupper(static_cast<unsigned char>(use[3])));
      aUseSetting[i] = n.create(use.c_str(), (MString("u") + shortName), MFnNumericData::kBoolean, r.default_set);
      settings.push_back(&aUseSetting[i]);
    }
  }
  aUseLeak = n.create("useLeakWeights", "ulw", MFnNumericData::kBoolean, false);
  aStartFrame = n.create("startFrame", "sf", MFnNumericData::kDouble, 1.0);
  aRebind = n.create("rebind", "rb", MFnNumericData::kInt, 0);
  aUseGravity = n.create("useGravity", "ugr", MFnNumericData::kBoolean, false);
  aGravity = n.create("gravity", "grv", MFnNumericData::k3Double);
  n.setDefault(0.0, -981.0, 0.0);  // cm/s^2, Maya's internal length unit, +Y up
  aUseStiffness = n.create("useStiffnessWeights", "usw", MFnNumericData::kBoolean, false);
  aStiffnessRange = n.create("stiffnessRange", "sra", MFnNumericData::kDouble, 10.0);
  n.setMin(1.0);
  aStiffnessWeights = n.create("stiffnessWeights", "stw", MFnNumericData::kFloat, 0.5);
  n.setMin(0.0);
  n.setMax(1.0);
  n.setArray(true);
  n.setUsesArrayDataBuilder(true);
  MFnCompoundAttribute c;
  aStiffnessList = c.create("stiffnessList", "stl");
  c.addChild(aStiffnessWeights);
  c.setArray(true);
  c.setUsesArrayDataBuilder(true);
  MFnTypedAttribute t;
  aSidecar = t.create("sidecar", "sc", MFnData::kString);
  MFnUnitAttribute u;
  aTime = u.create("time", "tm", MFnUnitAttribute::kTime, 0.0);
  MFnMatrixAttribute m;
  aMatrix = m.create("matrix", "ma");
  m.setArray(true);
  m.setUsesArrayDataBuilder(true);
  MFnMessageAttribute msg;
  aSkinCluster = msg.create("skinCluster", "skc");
  std::vector<MObject*> own = {&aSidecar, &aUseLeak, &aTime, &aStartFrame, &aMatrix, &aSkinCluster, &aRebind,
                               &aUseGravity, &aGravity, &aUseStiffness, &aStiffnessRange, &aStiffnessList};
  for (std::vector<MObject*>* list : {&settings, &own}) {
    for (MObject* a : *list) {
      MStatus s = addAttribute(*a);
      if (!s) return s;
    }
  }
  for (std::vector<MObject*>* list : {&settings, &own}) {
    for (MObject* a : *list) {
      if (a == &aSkinCluster) continue;
      attributeAffects(*a, outputGeom);
    }
  }
  attributeAffects(aStiffnessWeights, outputGeom);
  MGlobal::executeCommand("makePaintable -attrType multiFloat -sm deformer overtoneDeformer weights");
  MGlobal::executeCommand("makePaintable -attrType multiFloat -sm deformer overtoneDeformer stiffnessWeights");
  return MS::kSuccess;
}

void OvertoneDeformer::fail(const MString& what) {
  if (what != last_error_) {
    const std::string text = std::string("overtoneDeformer ") + name().asChar() + ": " + what.asChar();
    MGlobal::displayError(text.c_str());
  }
  last_error_ = what;
}

// The settings from the table's attributes (frame rate and gravity from the scene); keeps each
// row's value in row_value_.
overtone::Settings OvertoneDeformer::read_settings(MDataBlock& block) {
  overtone::Settings s = overtone::default_settings();
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    const auto& r = overtone_maya::kSettingAttributes[i];
    MDataHandle h = block.inputValue(aSetting[i]);
    row_value_[i] = r.type == overtone_maya::SettingAttribute::Double ? h.asDouble()
                    : r.type == overtone_maya::SettingAttribute::Int  ? static_cast<double>(h.asInt())
                    : r.type == overtone_maya::SettingAttribute::Bool ? (h.asBool() ? 1.0 : 0.0)
                                                                      : static_cast<double>(h.asShort());
    const bool use = r.optional ? block.inputValue(aUseSetting[i]).asBool() : true;
    overtone_maya::apply_setting(i, row_value_[i], use, s);
  }
  s.fps = MTime(1.0, MTime::kSeconds).as(MTime::uiUnit());
  if (block.inputValue(aUseGravity).asBool()) {
    const double3& g = block.inputValue(aGravity).asDouble3();
    for (int i = 0; i < 3; ++i) s.gravity[i] = g[i];
  }
  return s;
}

// Everything a bind depends on except the keyable settings (applied per frame without a
// rebind): the other rows of `now` as read by read_settings, gravity, frame rate and the node's
// own attributes.
std::string OvertoneDeformer::settings_signature(MDataBlock& block, const overtone::Settings& now) const {
  std::string s;
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    const auto& r = overtone_maya::kSettingAttributes[i];
    if (r.keyable) continue;
    s += std::to_string(row_value_[i]) + ";";
    if (r.optional) s += std::to_string(block.inputValue(aUseSetting[i]).asBool()) + ";";
  }
  for (int i = 0; i < 3; ++i) s += std::to_string(now.gravity[i]) + ";";
  s += std::to_string(block.inputValue(aRebind).asInt()) + ";";
  s += std::to_string(block.inputValue(aUseLeak).asBool()) + ";";
  s += std::to_string(block.inputValue(aStiffnessRange).asDouble()) + ";";
  s += std::to_string(block.inputValue(aUseStiffness).asBool()) + ";";
  s += block.inputValue(aSidecar).asString().asChar();
  s += ";" + std::to_string(now.fps);
  return s;
}

// Reads the skinCluster (rest mesh, weights, bind matrices) and creates the native deformer.
MStatus OvertoneDeformer::bind(MDataBlock& block, unsigned multi_index) {
  MPlugArray src;
  MPlug(thisMObject(), aSkinCluster).connectedTo(src, true, false);
  if (src.length() == 0 || !src[0].node().hasFn(MFn::kSkinClusterFilter)) {
    fail("connect a skinCluster's message to .skinCluster (overtone_maya.create() does this)");
    return MS::kFailure;
  }
  MStatus st;
  MFnSkinCluster skin(src[0].node(), &st);
  MDagPath shape;
  if (!skin.getPathAtIndex(0, shape)) {
    fail("the skinCluster deforms no shape");
    return MS::kFailure;
  }
  MObjectArray inputs;
  skin.getInputGeometry(inputs);
  if (inputs.length() == 0 || !inputs[0].hasFn(MFn::kMeshData)) {
    fail("the skinCluster's input is not a polygon mesh");
    return MS::kFailure;
  }
  MFnMesh rest_mesh(inputs[0]);
  MPointArray rest_points;
  rest_mesh.getPoints(rest_points, MSpace::kObject);
  MIntArray tri_counts, tri_vertices;
  rest_mesh.getTriangles(tri_counts, tri_vertices);
  const unsigned n = rest_points.length();
  MDagPathArray influences;
  const unsigned m = skin.influenceObjects(influences);
  MFnSingleIndexedComponent comp;
  MObject all = comp.create(MFn::kMeshVertComponent);
  comp.setCompleteData(static_cast<int>(n));
  MDoubleArray w;
  unsigned count = 0;
  if (!skin.getWeights(shape, all, w, count) || count != m || w.length() != n * m) {
    fail("cannot read the skinCluster's weights");
    return MS::kFailure;
  }
  // Keep the influences that weigh something; normalise each vertex as the skinCluster does.
  std::vector<unsigned> used;
  for (unsigned b = 0; b < m; ++b) {
    double total = 0.0;
    for (unsigned v = 0; v < n; ++v) total += w[v * m + b];
    if (total > 0.0) used.push_back(b);
  }
  const MMatrix geom = plug_matrix(skin.findPlug("geomMatrix", true));
  const MPlug bind_pre = skin.findPlug("bindPreMatrix", true);
  Bind b;
  b.vertices = n;
  std::vector<double> weights(static_cast<std::size_t>(n) * used.size());
  for (unsigned v = 0; v < n; ++v) {
    double total = 0.0;
    for (unsigned k = 0; k < used.size(); ++k) total += w[v * m + used[k]];
    if (!(total > 0.0)) {
      fail(("vertex " + std::to_string(v) + " has no skin weight; paint or prune weights and rebind").c_str());
      return MS::kFailure;
    }
    for (unsigned k = 0; k < used.size(); ++k) weights[v * used.size() + k] = w[v * m + used[k]] / total;
  }
  for (unsigned k : used) {
    const unsigned logical = skin.indexForInfluenceObject(influences[k]);
    b.logical.push_back(logical);
    b.pre.push_back(plug_matrix(bind_pre.elementByLogicalIndex(logical)));
  }
  // Rest in world space at bind; a mirroring geomMatrix turns the triangles inside out: flip them.
  std::vector<double> rest(3 * static_cast<std::size_t>(n));
  for (unsigned v = 0; v < n; ++v) {
    const MPoint world = rest_points[v] * geom;
    for (int i = 0; i < 3; ++i) rest[3 * v + i] = world[i];
  }
  std::vector<std::uint32_t> tris(tri_vertices.length());
  for (unsigned i = 0; i < tri_vertices.length(); ++i) tris[i] = static_cast<std::uint32_t>(tri_vertices[i]);
  if (geom.det3x3() < 0.0)
    for (std::size_t t = 0; t + 2 < tris.size(); t += 3) std::swap(tris[t + 1], tris[t + 2]);
  std::vector<double> leak;
  if (block.inputValue(aUseLeak).asBool()) {
    leak.resize(n);
    for (unsigned v = 0; v < n; ++v) leak[v] = weightValue(block, multi_index, v);
  }
  // Painted stiffness: stiffnessList[multi_index].stiffnessWeights[v], 0.5 where never painted.
  std::vector<double> stiffness;
  if (block.inputValue(aUseStiffness).asBool()) {
    const double range = block.inputValue(aStiffnessRange).asDouble();
    stiffness.assign(n, 1.0);
    MArrayDataHandle list = block.inputArrayValue(aStiffnessList);
    if (list.jumpToElement(multi_index)) {
      MArrayDataHandle w(list.inputValue().child(aStiffnessWeights));
      for (unsigned k = 0; k < w.elementCount(); ++k) {
        w.jumpToArrayElement(k);
        const unsigned v = w.elementIndex();
        const double painted = std::clamp(static_cast<double>(w.inputValue().asFloat()), 0.0, 1.0);
        if (v < n) stiffness[v] = std::pow(range, 2.0 * painted - 1.0);
      }
    }
  }
  bind_ = b;
  pose_.assign(12 * b.logical.size(), 0.0);
  if (!read_pose(block)) return MS::kFailure;
  const overtone::Settings s = read_settings(block);
  std::string sidecar = block.inputValue(aSidecar).asString().asChar();
  if (sidecar.empty()) {
    std::string scene = MFileIO::currentFile().asChar();
    const auto slash = scene.find_last_of("/\\");
    if (slash != std::string::npos) sidecar = scene.substr(0, slash) + "/overtone/" + name().asChar() + ".ovt";
  }
  overtone::Deformer fresh;
  overtone::Part part{};
  part.rest = rest.data();
  part.vertices = n;
  part.triangles = tris.data();
  part.triangle_count = tris.size() / 3;
  part.weights = weights.data();
  part.leak = leak.empty() ? nullptr : leak.data();
  part.stiffness = stiffness.empty() ? nullptr : stiffness.data();
  overtone::Body body{};
  body.parts = &part;
  body.part_count = 1;
  body.bones = used.size();
  body.first_pose.transforms = pose_.data();
  body.sidecar = sidecar.c_str();
  auto status = fresh.create(s, body);
  if (!status) {
    fail(MString(status.message.c_str()));
    return MS::kFailure;
  }
  deformer_ = std::move(fresh);
  std::copy(std::begin(row_value_), std::end(row_value_), std::begin(running_value_));
  disp_.assign(3 * static_cast<std::size_t>(n), 0.0);
  started_ = false;
  last_error_ = "";
  const std::string info = std::string("overtoneDeformer ") + name().asChar() + ": bound " + std::to_string(n) +
                           " vertices, " + std::to_string(used.size()) + " joints; " + deformer_.cache_status();
  MGlobal::displayInfo(info.c_str());
  return MS::kSuccess;
}

// Per bone W = bindPreMatrix * world (row vectors: bind world to posed world), into the library's layout.
bool OvertoneDeformer::read_pose(MDataBlock& block) {
  MArrayDataHandle h = block.inputArrayValue(aMatrix);
  for (std::size_t k = 0; k < bind_.logical.size(); ++k) {
    if (!h.jumpToElement(bind_.logical[k])) {
      const std::string i = std::to_string(bind_.logical[k]);
      fail(("matrix[" + i + "] is not connected (connect it to the joint driving skinCluster.matrix[" + i + "])")
               .c_str());
      return false;
    }
    to_rows(bind_.pre[k] * h.inputValue().asMatrix(), &pose_[12 * k]);
  }
  return true;
}

MStatus OvertoneDeformer::deform(MDataBlock& block, MItGeometry& iter, const MMatrix& local_to_world,
                                 unsigned int multi_index) {
  const overtone::Settings now = read_settings(block);
  const std::string sig = settings_signature(block, now);
  if (!deformer_.valid() || sig != signature_) {
    signature_ = sig;
    if (!bind(block, multi_index)) return MS::kSuccess;  // points stay as the skinCluster made them
  }
  if (static_cast<std::size_t>(iter.count()) != bind_.vertices) {
    fail(("the mesh has " + std::to_string(iter.count()) + " vertices but had " + std::to_string(bind_.vertices) +
          " when bound; set .rebind to a new value")
             .c_str());
    return MS::kSuccess;
  }
  if (!read_pose(block)) return MS::kSuccess;
  // The keyable settings: handed over when they change, no rebind (the others are in the
  // signature, whose change rebinds above).
  bool keyed_changed = false;
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    keyed_changed |= overtone_maya::kSettingAttributes[i].keyable && row_value_[i] != running_value_[i];
  }
  if (keyed_changed) {
    const overtone::Status cs = deformer_.set_controls(now);
    if (!cs) {
      fail(MString(cs.message.c_str()));
      return MS::kSuccess;
    }
    std::copy(std::begin(row_value_), std::end(row_value_), std::begin(running_value_));
  }
  const double frame = block.inputValue(aTime).asTime().as(MTime::uiUnit());
  const double start = block.inputValue(aStartFrame).asDouble();
  overtone::Status st;
  if (!started_ || frame <= start || frame < last_frame_) {
    overtone::Pose pose{};
    pose.transforms = pose_.data();
    st = deformer_.reset(pose);
    std::fill(disp_.begin(), disp_.end(), 0.0);
    started_ = st.ok;
    last_frame_ = frame;
  } else if (frame > last_frame_) {
    overtone::Pose pose{};
    pose.transforms = pose_.data();
    st = deformer_.step(pose, disp_.data());
    last_frame_ = frame;
  }
  if (!st) {
    fail(MString(st.message.c_str()));
    std::fill(disp_.begin(), disp_.end(), 0.0);
    started_ = false;
    return MS::kSuccess;
  }
  const float env = block.inputValue(envelope).asFloat();
  const MMatrix world_to_local = local_to_world.inverse();
  for (iter.reset(); !iter.isDone(); iter.next()) {
    const std::size_t v = static_cast<std::size_t>(iter.index());
    const MVector u(disp_[3 * v], disp_[3 * v + 1], disp_[3 * v + 2]);
    iter.setPosition(iter.position() + (u * world_to_local) * env);
  }
  return MS::kSuccess;
}

MStatus initializePlugin(MObject obj) {
  MFnPlugin plugin(obj, "Overtone", "0.1.0", "Any");
  return plugin.registerNode("overtoneDeformer", kNodeId, OvertoneDeformer::creator, OvertoneDeformer::initialize,
                             MPxNode::kDeformerNode);
}

MStatus uninitializePlugin(MObject obj) {
  MFnPlugin plugin(obj);
  return plugin.deregisterNode(kNodeId);
}
