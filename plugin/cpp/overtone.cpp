// Implementation of overtone::Deformer over the cxx bridge (see overtone.hpp).
#include "rust/cxx.h"
#include "overtone-ffi/src/lib.rs.h"

#include "overtone.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

namespace overtone {

struct Deformer::Impl {
  std::optional<rust::Box<ffi::Deformer>> handle;
};

namespace {
Status invalid(std::string message) { return {false, OVERTONE_ERROR_INVALID_INPUT, std::move(message)}; }

template <typename F>
Status guard(F&& f) noexcept {
  try {
    f();
    return {};
  } catch (const rust::Error& e) {
    auto kind = static_cast<overtone_status>(static_cast<int>(ffi::last_error_kind()));
    return {false, kind == OVERTONE_OK ? OVERTONE_ERROR_INTERNAL : kind, e.what()};
  } catch (const std::exception& e) {
    return {false, OVERTONE_ERROR_INTERNAL, std::string("unexpected C++ exception: ") + e.what()};
  } catch (...) {
    return {false, OVERTONE_ERROR_INTERNAL, "unknown exception"};
  }
}

// The C struct to the bridge's and back, field by field by name (generated from the table).
// @generated begin cpp-conversions (from overtone::settings::SETTINGS: scripts/generate_host_files.sh)
ffi::Settings to_ffi(const Settings& s) {
  ffi::Settings out{};
  out.youngs_modulus = s.youngs_modulus;
  out.poisson_ratio = s.poisson_ratio;
  out.density = s.density;
  out.use_frequency = s.use_frequency;
  out.frequency = s.frequency;
  out.damping = s.damping;
  out.strength = s.strength;
  out.time_scale = s.time_scale;
  out.preroll = s.preroll;
  out.use_cut_distance = s.use_cut_distance;
  out.cut_distance = s.cut_distance;
  out.use_max_displacement = s.use_max_displacement;
  out.max_displacement = s.max_displacement;
  out.rest = static_cast<ffi::RestShape>(s.rest);
  for (int i = 0; i < 3; ++i) out.gravity[i] = s.gravity[i];
  out.fps = s.fps;
  out.solver = static_cast<ffi::Solver>(s.solver);
  out.use_modes = s.use_modes;
  out.modes = s.modes;
  out.clusters = s.clusters;
  out.use_lattice_resolution = s.use_lattice_resolution;
  out.lattice_resolution = s.lattice_resolution;
  out.integrator = static_cast<ffi::Integrator>(s.integrator);
  out.use_substeps = s.use_substeps;
  out.substeps = s.substeps;
  return out;
}

Settings from_ffi(const ffi::Settings& s) {
  Settings out{};
  out.youngs_modulus = s.youngs_modulus;
  out.poisson_ratio = s.poisson_ratio;
  out.density = s.density;
  out.use_frequency = s.use_frequency;
  out.frequency = s.frequency;
  out.damping = s.damping;
  out.strength = s.strength;
  out.time_scale = s.time_scale;
  out.preroll = s.preroll;
  out.use_cut_distance = s.use_cut_distance;
  out.cut_distance = s.cut_distance;
  out.use_max_displacement = s.use_max_displacement;
  out.max_displacement = s.max_displacement;
  out.rest = static_cast<overtone_rest_shape>(s.rest);
  for (int i = 0; i < 3; ++i) out.gravity[i] = s.gravity[i];
  out.fps = s.fps;
  out.solver = static_cast<overtone_solver>(s.solver);
  out.use_modes = s.use_modes;
  out.modes = s.modes;
  out.clusters = s.clusters;
  out.use_lattice_resolution = s.use_lattice_resolution;
  out.lattice_resolution = s.lattice_resolution;
  out.integrator = static_cast<overtone_integrator>(s.integrator);
  out.use_substeps = s.use_substeps;
  out.substeps = s.substeps;
  return out;
}
// @generated end cpp-conversions

using D = rust::Slice<const double>;

// A possibly-null array of `n` doubles as a slice (empty for null).
D slice(const double* p, std::size_t n) { return p ? D(p, n) : D(); }

// The body's arrays as the bridge's structs (views; `parts` must outlive the call). Checks the
// pointers and counts a slice needs; every other check is the core's.
Status bridge_body(const Body& body, std::vector<ffi::Part>& parts, std::optional<ffi::Body>& out) {
  if (!body.parts || body.part_count == 0 || body.bones == 0 || !body.first_pose.transforms) {
    return invalid("bind: parts, at least one bone and the first pose's transforms are required");
  }
  if (body.targets > 0 && !body.first_pose.morph_weights) {
    return invalid("bind: blendshape targets need the first pose's weights");
  }
  parts.clear();
  for (std::size_t p = 0; p < body.part_count; ++p) {
    const Part& q = body.parts[p];
    if (!q.rest || !q.triangles || !q.weights || q.vertices == 0 || q.triangle_count == 0) {
      return invalid("bind: part " + std::to_string(p) + " needs rest positions, triangles and weights");
    }
    if (body.targets > 0 && !q.morph_deltas) {
      return invalid("bind: part " + std::to_string(p) + " lacks its blendshape offsets");
    }
    if (q.vertices > SIZE_MAX / 3 / (body.bones + body.targets + 1)) {
      return invalid("bind: part " + std::to_string(p) + "'s array sizes overflow");
    }
    parts.push_back(ffi::Part{D(q.rest, q.vertices * 3),
                              rust::Slice<const std::uint32_t>(q.triangles, q.triangle_count * 3),
                              D(q.weights, q.vertices * body.bones),
                              slice(q.morph_deltas, body.targets * q.vertices * 3),
                              slice(q.leak, q.vertices), slice(q.stiffness, q.vertices)});
  }
  out.emplace(ffi::Body{rust::Slice<const ffi::Part>(parts.data(), parts.size()), body.bones, body.targets,
                        ffi::Pose{D(body.first_pose.transforms, body.bones * 12),
                                  slice(body.first_pose.morph_weights, body.targets)},
                        rust::Str(body.sidecar ? body.sidecar : "")});
  return {};
}
}  // namespace

Settings default_settings() noexcept { return from_ffi(ffi::default_settings()); }

std::string settings_field_list() noexcept {
  try {
    return std::string(ffi::settings_fields());
  } catch (...) {
    return std::string();
  }
}

Deformer::Deformer() noexcept : impl_(nullptr) {}
Deformer::~Deformer() = default;
Deformer::Deformer(Deformer&&) noexcept = default;
Deformer& Deformer::operator=(Deformer&&) noexcept = default;

bool Deformer::valid() const noexcept { return impl_ && impl_->handle.has_value(); }

Status Deformer::create(const Settings& s, const Body& body) noexcept {
  std::vector<ffi::Part> parts;
  std::optional<ffi::Body> fb;
  if (Status st = bridge_body(body, parts, fb); !st) return st;
  auto fresh = std::make_unique<Impl>();
  Status st = guard([&] { fresh->handle.emplace(ffi::create_deformer(to_ffi(s), *fb)); });
  if (st) {  // Only a complete deformer replaces the previous one.
    auto& h = *fresh->handle;
    vertices_ = h->vertex_count();
    bones_ = body.bones;
    targets_ = body.targets;
    impl_ = std::move(fresh);
  }
  return st;
}

Status Deformer::step(const Pose& pose, double* out) noexcept {
  if (!valid()) return invalid("step: the deformer was not created");
  if (!pose.transforms || !out) return invalid("step: the pose's transforms and the output are required");
  if (targets_ > 0 && !pose.morph_weights) return invalid("step: the blendshape weights are required");
  return guard([&] {
    (*impl_->handle)->step(ffi::Pose{D(pose.transforms, bones_ * 12), slice(pose.morph_weights, targets_)},
                           rust::Slice<double>(out, vertices_ * 3));
  });
}

Status Deformer::set_controls(const Settings& s) noexcept {
  if (!valid()) return invalid("set_controls: the deformer was not created");
  return guard([&] { (*impl_->handle)->set_controls(to_ffi(s)); });
}

Status Deformer::reset(const Pose& pose) noexcept {
  if (!valid()) return invalid("reset: the deformer was not created");
  if (!pose.transforms) return invalid("reset: the pose's transforms are required");
  if (targets_ > 0 && !pose.morph_weights) return invalid("reset: the blendshape weights are required");
  return guard([&] {
    (*impl_->handle)->reset(ffi::Pose{D(pose.transforms, bones_ * 12), slice(pose.morph_weights, targets_)});
  });
}

double Deformer::residual() const noexcept { return valid() ? (*impl_->handle)->residual() : 0.0; }

std::string Deformer::cache_status() const noexcept {
  if (!valid()) return "not created";
  try {
    return std::string((*impl_->handle)->cache_status());
  } catch (...) {
    return "unknown";
  }
}

CacheState Deformer::cache_state() const noexcept {
  if (!valid()) return CacheState::NotRequested;
  switch ((*impl_->handle)->cache_state()) {
    case ffi::CacheState::NotRequested: return CacheState::NotRequested;
    case ffi::CacheState::Loaded: return CacheState::Loaded;
    case ffi::CacheState::Built: return CacheState::Built;
    case ffi::CacheState::Unusable: return CacheState::Unusable;
    case ffi::CacheState::WriteFailed: return CacheState::WriteFailed;
  }
  return CacheState::NotRequested;
}

std::size_t Deformer::parts() const noexcept {
  return valid() ? (*impl_->handle)->part_count() : 0;
}

std::size_t Deformer::part_offset(std::size_t i) const noexcept {
  if (!valid()) return 0;
  auto n = (*impl_->handle)->part_count();
  return (*impl_->handle)->part_offset(i < n ? i : n);
}

struct Binding::Impl {
  std::optional<rust::Box<ffi::Binding>> handle;
};

Binding::Binding() noexcept : impl_(nullptr) {}
Binding::~Binding() = default;
Binding::Binding(Binding&&) noexcept = default;
Binding& Binding::operator=(Binding&&) noexcept = default;

Status Binding::start(const Settings& s, const Body& body) noexcept {
  std::vector<ffi::Part> parts;
  std::optional<ffi::Body> fb;
  if (Status st = bridge_body(body, parts, fb); !st) return st;
  auto fresh = std::make_unique<Impl>();
  // start_bind copies the arrays before it returns.
  Status st = guard([&] { fresh->handle.emplace(ffi::start_bind(to_ffi(s), *fb)); });
  if (st) {
    impl_ = std::move(fresh);
    bones_ = body.bones;
    targets_ = body.targets;
  }
  return st;
}

double Binding::fraction() const noexcept {
  return impl_ && impl_->handle ? (*impl_->handle)->fraction() : 0.0;
}

std::string Binding::stage() const noexcept {
  if (!impl_ || !impl_->handle) return "not started";
  try {
    return std::string((*impl_->handle)->stage());
  } catch (...) {
    return "unknown";
  }
}

Binding::State Binding::state() const noexcept {
  if (!impl_ || !impl_->handle) return State::NotStarted;
  return static_cast<State>(static_cast<int>((*impl_->handle)->state()));
}

void Binding::cancel() noexcept {
  if (impl_ && impl_->handle) (*impl_->handle)->cancel();
}

Status Binding::take(Deformer& out) noexcept {
  if (!impl_ || !impl_->handle) return invalid("take: the bind was not started");
  auto fresh = std::make_unique<Deformer::Impl>();
  Status st = guard([&] { fresh->handle.emplace((*impl_->handle)->take()); });
  if (st) {
    auto& h = *fresh->handle;
    out.vertices_ = h->vertex_count();
    out.bones_ = bones_;
    out.targets_ = targets_;
    out.impl_ = std::move(fresh);
  }
  return st;
}

Status Deformer::debug_panic() noexcept {
  if (!valid()) return invalid("debug_panic: the deformer was not created");
  return guard([&] { (*impl_->handle)->debug_panic(true); });
}

struct PullBack::Impl {
  rust::Box<ffi::PullBack> handle;
};

PullBack::PullBack() noexcept : impl_(nullptr) {}
PullBack::~PullBack() = default;
PullBack::PullBack(PullBack&&) noexcept = default;
PullBack& PullBack::operator=(PullBack&&) noexcept = default;

bool PullBack::valid() const noexcept { return impl_ != nullptr; }

Status PullBack::create(const double* weights, std::size_t vertices, std::size_t bones,
                        const std::size_t* part_vertices, const double* part_linear,
                        std::size_t part_count) noexcept {
  if (!weights || vertices == 0 || bones == 0) {
    return invalid("pull-back create: weights and at least one vertex and one bone are required");
  }
  if (part_count > 0 && (!part_vertices || !part_linear)) {
    return invalid("pull-back create: " + std::to_string(part_count) +
                       " parts need their vertex counts and 3 x 3 matrices");
  }
  if (vertices > SIZE_MAX / bones || vertices > SIZE_MAX / 3 || bones > SIZE_MAX / 12 ||
      part_count > SIZE_MAX / 9) {
    return invalid("pull-back create: the array sizes overflow (vertices " + std::to_string(vertices) + ", bones " + std::to_string(bones) + ")");
  }
  std::unique_ptr<Impl> fresh;
  Status st = guard([&] {
    using D = rust::Slice<const double>;
    using Z = rust::Slice<const std::size_t>;
    fresh.reset(new Impl{ffi::create_pull_back(
        D(weights, vertices * bones), vertices, bones,
        part_count ? Z(part_vertices, part_count) : Z(),
        part_count ? D(part_linear, part_count * 9) : D())});
  });
  if (st) {  // Only a complete pull-back replaces the previous one.
    impl_ = std::move(fresh);
    vertices_ = vertices;
    bones_ = bones;
  }
  return st;
}

Status PullBack::apply(const double* transforms, const double* u, double* out) const noexcept {
  if (!valid()) return invalid("pull-back: it was not created");
  if (!transforms || !u || !out) return invalid("pull-back: transforms, u and out are required");
  return guard([&] {
    impl_->handle->pull_back(rust::Slice<const double>(transforms, bones_ * 12),
                             rust::Slice<const double>(u, vertices_ * 3),
                             rust::Slice<double>(out, vertices_ * 3));
  });
}

}  // namespace overtone
