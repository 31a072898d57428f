// overtone::Deformer — the host-neutral C++17 face of Overtone's core.
//
// Every member is noexcept: errors (bad input, a failed factorization, even a Rust panic inside
// the core) come back as a Status with a message a TD can act on; nothing is thrown into the
// host. Arrays are row-major doubles: rest positions n x 3, weights n x bones, poses bones x 12
// (3 x 4 skin transforms, bind space to posed world space), displacement n x 3 (world units).
//
// Spaces: "bind space" must be the posed world's metric — give the rest positions in WORLD space
// at bind (rest = Mo_bind · X for a mesh with object matrix Mo, Maya's geomMatrix) and each
// bone's transform as world-from-bind, W_b · Mo_bind⁻¹ (Blender: Ma·P_b·R_b⁻¹·Ma⁻¹·Mo·Mo_bind⁻¹;
// Maya: jointWorld_b · bindPreMatrix_b, bindPreMatrix being the joint's inverse world matrix at
// bind). Object-space rest with world-space transforms makes an object scale of 0.01 shrink the
// body 100x between rest and pose and the simulation explodes. A mirrored Mo_bind (negative
// determinant) turns the triangles inside out: flip them. The core normalises bind space
// (centre, longest half-extent 1), so units and object scale do not change the material's
// meaning. The displacement comes back in world units; to write it in object space, multiply by
// the linear part of Mo(t)⁻¹ (after skinning) or pull it back through the blended skin matrix
// (before skinning).
// Leak field: one value per vertex, >= 0 where painted (0: the secondary motion may carry the
// rig's momentum, 1: it may not) and -1 where unpainted (the default field there).
// Stiffness field: one value per vertex, a multiplier of Young's modulus > 0 where painted (1:
// the default, 10: ten times stiffer there, so less secondary motion) and -1 where unpainted
// (1); null for a uniform material. It changes the precompute (a new sidecar key).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "overtone_c.h"

namespace overtone {

// The settings, body, part and pose structs are the C ABI's (overtone_c.h: generated from the
// core's settings table, so a field is written once). Settings: call default_settings() and
// change what differs; an optional setting is its use_ flag (false: automatic / none) and value.
using Settings = ::overtone_settings;
using Part = ::overtone_part;
using Pose = ::overtone_pose;
using Body = ::overtone_body;

// The core's defaults (the settings table's).
Settings default_settings() noexcept;
// The bridge's field list ("name:type,..." in declaration order), for layout tests.
std::string settings_field_list() noexcept;

// A call's outcome: ok, or the kind of failure (the C ABI's overtone_status values; a host
// retries kStepFailed, whose state is unchanged, and reports the others) and a message a TD can
// act on.
struct Status {
  bool ok = true;
  overtone_status kind = OVERTONE_OK;
  std::string message;
  explicit operator bool() const noexcept { return ok; }
};

// Where a deformer's precompute came from; hosts branch on this, and show cache_status() (the
// text) as the detail. Same values as the C ABI's OVERTONE_CACHE_* and Python's CacheState.
enum class CacheState : std::uint8_t {
  NotRequested = 0,  // no sidecar path was given
  Loaded = 1,        // loaded from the sidecar
  Built = 2,         // built and written: no sidecar yet, or one for other inputs (silent)
  Unusable = 3,      // built and written: the sidecar was unreadable or did not fit (warn)
  WriteFailed = 4,   // built, but the sidecar could not be written (warn)
};

class Binding;

class Deformer {
 public:
  Deformer() noexcept;
  ~Deformer();
  Deformer(Deformer&&) noexcept;
  Deformer& operator=(Deformer&&) noexcept;
  Deformer(const Deformer&) = delete;
  Deformer& operator=(const Deformer&) = delete;

  // Builds (or loads from the body's sidecar, may be null or empty) the precompute on the
  // calling thread. Only a complete deformer replaces the previous one.
  Status create(const Settings& settings, const Body& body) noexcept;
  // The host's settings between frames: the animatable ones (damping, strength) apply from the
  // next step on without a rebind; any other that differs from the bind's is refused (rebind).
  // On error nothing changes.
  Status set_controls(const Settings& settings) noexcept;
  // One frame; `out` receives vertices x 3 doubles. On error nothing changes.
  Status step(const Pose& pose, double* out) noexcept;
  Status reset(const Pose& pose) noexcept;
  std::size_t targets() const noexcept { return targets_; }
  double residual() const noexcept;
  // Where the precompute came from: the text for a TD ("loaded from sidecar", ...) and the state
  // to branch on (NotRequested for a deformer that was not created).
  std::string cache_status() const noexcept;
  CacheState cache_state() const noexcept;
  std::size_t vertices() const noexcept { return vertices_; }
  std::size_t bones() const noexcept { return bones_; }
  bool valid() const noexcept;
  // Meshes the deformer was bound with; step's output holds them in order, part i starting at
  // vertex part_offset(i) (part_offset(parts()) == vertices()).
  std::size_t parts() const noexcept;
  std::size_t part_offset(std::size_t i) const noexcept;
  // Test hook: forces a Rust panic inside the bridge; must come back as an error status.
  Status debug_panic() noexcept;

 private:
  friend class Binding;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t vertices_ = 0;
  std::size_t bones_ = 0;
  std::size_t targets_ = 0;
};

// An asynchronous bind: start() copies the input, starts the precompute on a worker thread and
// returns at once; the host polls fraction(), stage() and state() (e.g. from a UI timer), may
// cancel(), and take()s the finished deformer (take waits for the worker; a failed or cancelled
// bind returns its message and leaves `out` untouched). Destroying a Binding cancels a running
// bind and waits for its worker (within one check: a sparse solve or a short loop).
class Binding {
 public:
  enum class State { Running = 0, Done = 1, Failed = 2, Cancelled = 3, NotStarted = 4 };
  Binding() noexcept;
  ~Binding();
  Binding(Binding&&) noexcept;
  Binding& operator=(Binding&&) noexcept;
  Binding(const Binding&) = delete;
  Binding& operator=(const Binding&) = delete;

  Status start(const Settings& settings, const Body& body) noexcept;
  double fraction() const noexcept;
  std::string stage() const noexcept;
  State state() const noexcept;
  void cancel() noexcept;
  Status take(Deformer& out) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t bones_ = 0;
  std::size_t targets_ = 0;
};

// The rest-space pull-back of the displacement, for hosts that add it BEFORE their skinning
// (Blender's Armature modifier skins X + d): per vertex d_v = M_p · A_v⁻¹ · u_v with the blended
// linear part A_v = Σ_b w_vb A_b (A_b the 3 x 3 of bone b's 3 x 4 transform), so that skinning
// X + d gives skin(X) + u exactly (LBS is affine per vertex); d_v = 0 where A_v is singular
// (|det| <= 1e-12 s^3, s the largest |entry| of any A_b). M_p is a per-part 3 x 3 (e.g. the
// linear part of Mo_bind⁻¹, to land in each mesh's object space), identity without parts.
// Built once from the weights (kept sparse: their positive entries); apply() allocates nothing.
class PullBack {
 public:
  PullBack() noexcept;
  ~PullBack();
  PullBack(PullBack&&) noexcept;
  PullBack& operator=(PullBack&&) noexcept;
  PullBack(const PullBack&) = delete;
  PullBack& operator=(const PullBack&) = delete;

  // `weights` vertices x bones row-major (finite, >= 0). `part_vertices` (part_count counts
  // summing to vertices) and `part_linear` (part_count x 9, row-major 3 x 3 each) may be null
  // with part_count 0 for the identity.
  Status create(const double* weights, std::size_t vertices, std::size_t bones,
                const std::size_t* part_vertices, const double* part_linear,
                std::size_t part_count) noexcept;
  // `transforms` bones x 12 (3 x 4 row-major, as Deformer::step's pose), `u` vertices x 3 (world
  // units), `out` vertices x 3 (rest/object units). On error `out` is untouched.
  Status apply(const double* transforms, const double* u, double* out) const noexcept;
  std::size_t vertices() const noexcept { return vertices_; }
  std::size_t bones() const noexcept { return bones_; }
  bool valid() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t vertices_ = 0;
  std::size_t bones_ = 0;
};

}  // namespace overtone
