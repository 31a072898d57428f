// Implementation of overtone::Deformer over the cxx bridge (see overtone.hpp).
#include "rust/cxx.h"
#include "overtone-ffi/src/lib.rs.h"

#include "overtone.hpp"

#include <cstdint>
#include <exception>
#include <optional>
#include <vector>

namespace overtone {

struct Deformer::Impl {
  std::optional<rust::Box<ffi::Deformer>> handle;
};

namespace {
template <typename F>
Status guard(F&& f) noexcept {
  try {
    f();
    return {};
  } catch (const rust::Error& e) {
    return {false, e.what()};
  } catch (const std::exception& e) {
    return {false, std::string("unexpected C++ exception: ") + e.what()};
  } catch (...) {
    return {false, "unknown exception"};
  }
}
}  // namespace

namespace {
// Positional aggregate initialisation both ways: built with -Werror=missing-field-initializers
// (scripts/test_cpp.sh), a field missing on either side does not compile.
ffi::Settings to_ffi(const Settings& s) {
  return ffi::Settings{s.youngs_modulus, s.poisson_ratio, s.density, s.fps,
                       s.lattice_resolution, s.fast, s.modes, s.clusters,
                       s.integrator, s.substeps, s.damping, s.frequency,
                       s.rest, s.time_scale, s.preroll, s.strength,
                       s.cut_distance, {s.gravity[0], s.gravity[1], s.gravity[2]}};
}
}  // namespace

Settings Settings::defaults() noexcept {
  auto d = ffi::default_settings();
  return {d.youngs_modulus, d.poisson_ratio, d.density, d.fps, d.lattice_resolution,
          d.fast, d.modes, d.clusters, d.integrator, d.substeps, d.damping, d.frequency,
          d.rest, d.time_scale, d.preroll, d.strength, d.cut_distance,
          {d.gravity[0], d.gravity[1], d.gravity[2]}};
}

std::string Settings::field_list() noexcept {
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

Status Deformer::create(const Settings& s, const double* rest, std::size_t vertices,
                        const std::uint32_t* triangles, std::size_t triangle_count,
                        const double* weights, std::size_t bones, const double* leak,
                        const double* first_pose, const std::string& sidecar,
                        const double* stiffness) noexcept {
  return create(s, rest, vertices, triangles, triangle_count, weights, bones, nullptr, 0, nullptr,
                leak, first_pose, sidecar, stiffness);
}

Status Deformer::create(const Settings& s, const double* rest, std::size_t vertices,
                        const std::uint32_t* triangles, std::size_t triangle_count,
                        const double* weights, std::size_t bones, const double* morph_deltas,
                        std::size_t targets, const double* first_morph_weights, const double* leak,
                        const double* first_pose, const std::string& sidecar,
                        const double* stiffness) noexcept {
  if (!rest || !triangles || !weights || !first_pose || vertices == 0 || bones == 0) {
    return {false, "create: rest, triangles, weights and first_pose are required"};
  }
  if (targets > 0 && (!morph_deltas || !first_morph_weights)) {
    return {false, "create: blendshape targets need their deltas and first weights"};
  }
  auto fresh = std::make_unique<Impl>();
  Status st = guard([&] {
    ffi::Settings fs = to_ffi(s);
    const auto none = rust::Slice<const double>();
    fresh->handle.emplace(ffi::create_deformer(
        fs, rust::Slice<const double>(rest, vertices * 3),
        rust::Slice<const std::uint32_t>(triangles, triangle_count * 3),
        rust::Slice<const double>(weights, vertices * bones), bones,
        targets ? rust::Slice<const double>(morph_deltas, targets * vertices * 3) : none, targets,
        targets ? rust::Slice<const double>(first_morph_weights, targets) : none,
        leak ? rust::Slice<const double>(leak, vertices) : none,
        stiffness ? rust::Slice<const double>(stiffness, vertices) : none,
        rust::Slice<const double>(first_pose, bones * 12), rust::Str(sidecar)));
  });
  if (st) {  // Only a complete deformer replaces the previous one.
    impl_ = std::move(fresh);
    vertices_ = vertices;
    bones_ = bones;
    targets_ = targets;
  }
  return st;
}

Status Deformer::step(const double* pose, double* out, const double* morph_weights) noexcept {
  if (!valid()) return {false, "step: the deformer was not created"};
  if (!pose || !out) return {false, "step: pose and output are required"};
  if (targets_ > 0 && !morph_weights) return {false, "step: the blendshape weights are required"};
  return guard([&] {
    (*impl_->handle)->step(rust::Slice<const double>(pose, bones_ * 12),
                           targets_ ? rust::Slice<const double>(morph_weights, targets_)
                                    : rust::Slice<const double>(),
                           rust::Slice<double>(out, vertices_ * 3));
  });
}

Status Deformer::set_controls(double damping, double strength) noexcept {
  if (!valid()) return {false, "set_controls: the deformer was not created"};
  return guard([&] { (*impl_->handle)->set_controls(damping, strength); });
}

Status Deformer::reset(const double* pose, const double* morph_weights) noexcept {
  if (!valid()) return {false, "reset: the deformer was not created"};
  if (!pose) return {false, "reset: pose is required"};
  if (targets_ > 0 && !morph_weights) return {false, "reset: the blendshape weights are required"};
  return guard([&] {
    (*impl_->handle)->reset(rust::Slice<const double>(pose, bones_ * 12),
                            targets_ ? rust::Slice<const double>(morph_weights, targets_)
                                     : rust::Slice<const double>());
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

Status Binding::start(const Settings& s, const Part* parts, std::size_t part_count,
                      std::size_t bones, std::size_t targets, const double* first_morph_weights,
                      const double* first_pose, const std::string& sidecar) noexcept {
  if (!parts || part_count == 0 || !first_pose || bones == 0) {
    return {false, "start: parts, first_pose and at least one bone are required"};
  }
  if (targets > 0 && !first_morph_weights) {
    return {false, "start: blendshape targets need their first weights"};
  }
  bool leak = parts[0].leak != nullptr;
  bool stiff = parts[0].stiffness != nullptr;
  for (std::size_t p = 0; p < part_count; ++p) {
    const Part& q = parts[p];
    if (!q.rest || !q.triangles || !q.weights || q.vertices == 0 || q.triangle_count == 0) {
      return {false, "start: part " + std::to_string(p) +
                         " needs rest positions, triangles and weights"};
    }
    if (targets > 0 && !q.morph_deltas) {
      return {false, "start: part " + std::to_string(p) + " lacks its blendshape offsets"};
    }
    if ((q.leak != nullptr) != leak) {
      return {false, "start: a leak field must be given for every part or for none"};
    }
    if ((q.stiffness != nullptr) != stiff) {
      return {false, "start: a stiffness field must be given for every part or for none"};
    }
  }
  auto fresh = std::make_unique<Impl>();
  Status st = guard([&] {
    std::vector<double> rest, weights, deltas, leaks, stiffs;
    std::vector<std::uint32_t> tris;
    std::vector<std::size_t> pv, pt;
    for (std::size_t p = 0; p < part_count; ++p) {
      const Part& q = parts[p];
      rest.insert(rest.end(), q.rest, q.rest + q.vertices * 3);
      tris.insert(tris.end(), q.triangles, q.triangles + q.triangle_count * 3);
      weights.insert(weights.end(), q.weights, q.weights + q.vertices * bones);
      if (targets) deltas.insert(deltas.end(), q.morph_deltas, q.morph_deltas + targets * q.vertices * 3);
      if (leak) leaks.insert(leaks.end(), q.leak, q.leak + q.vertices);
      if (stiff) stiffs.insert(stiffs.end(), q.stiffness, q.stiffness + q.vertices);
      pv.push_back(q.vertices);
      pt.push_back(q.triangle_count);
    }
    ffi::Settings fs = to_ffi(s);
    using D = rust::Slice<const double>;
    using Z = rust::Slice<const std::size_t>;
    fresh->handle.emplace(ffi::start_bind(
        fs, D(rest.data(), rest.size()),
        rust::Slice<const std::uint32_t>(tris.data(), tris.size()), Z(pv.data(), pv.size()),
        Z(pt.data(), pt.size()), D(weights.data(), weights.size()), bones,
        D(deltas.data(), deltas.size()), targets,
        targets ? D(first_morph_weights, targets) : D(), D(leaks.data(), leaks.size()),
        D(stiffs.data(), stiffs.size()), D(first_pose, bones * 12), rust::Str(sidecar)));
  });
  if (st) {
    impl_ = std::move(fresh);
    bones_ = bones;
    targets_ = targets;
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
  return static_cast<State>((*impl_->handle)->state());
}

void Binding::cancel() noexcept {
  if (impl_ && impl_->handle) (*impl_->handle)->cancel();
}

Status Binding::take(Deformer& out) noexcept {
  if (!impl_ || !impl_->handle) return {false, "take: the bind was not started"};
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
  if (!valid()) return {false, "debug_panic: the deformer was not created"};
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
    return {false, "pull-back create: weights and at least one vertex and one bone are required"};
  }
  if (part_count > 0 && (!part_vertices || !part_linear)) {
    return {false, "pull-back create: " + std::to_string(part_count) +
                       " parts need their vertex counts and 3 x 3 matrices"};
  }
  if (vertices > SIZE_MAX / bones || vertices > SIZE_MAX / 3 || bones > SIZE_MAX / 12 ||
      part_count > SIZE_MAX / 9) {
    return {false, "pull-back create: the array sizes overflow (vertices " + std::to_string(vertices) + ", bones " + std::to_string(bones) + ")"};
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
  if (!valid()) return {false, "pull-back: it was not created"};
  if (!transforms || !u || !out) return {false, "pull-back: transforms, u and out are required"};
  return guard([&] {
    impl_->handle->pull_back(rust::Slice<const double>(transforms, bones_ * 12),
                             rust::Slice<const double>(u, vertices_ * 3),
                             rust::Slice<double>(out, vertices_ * 3));
  });
}

}  // namespace overtone
