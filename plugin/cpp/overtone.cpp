// Implementation of overtone::Deformer over the cxx bridge (see overtone.hpp).
#include "rust/cxx.h"
#include "overtone-ffi/src/lib.rs.h"

#include "overtone.hpp"

#include <exception>
#include <optional>

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

Settings Settings::defaults() noexcept {
  auto d = ffi::default_settings();
  return {d.youngs_modulus, d.poisson_ratio, d.density, d.fps, d.lattice_resolution,
          d.fast, d.modes, d.clusters};
}

Deformer::Deformer() noexcept : impl_(nullptr) {}
Deformer::~Deformer() = default;
Deformer::Deformer(Deformer&&) noexcept = default;
Deformer& Deformer::operator=(Deformer&&) noexcept = default;

bool Deformer::valid() const noexcept { return impl_ && impl_->handle.has_value(); }

Status Deformer::create(const Settings& s, const double* rest, std::size_t vertices,
                        const std::uint32_t* triangles, std::size_t triangle_count,
                        const double* weights, std::size_t bones, const double* leak,
                        const double* first_pose, const std::string& sidecar) noexcept {
  return create(s, rest, vertices, triangles, triangle_count, weights, bones, nullptr, 0, nullptr,
                leak, first_pose, sidecar);
}

Status Deformer::create(const Settings& s, const double* rest, std::size_t vertices,
                        const std::uint32_t* triangles, std::size_t triangle_count,
                        const double* weights, std::size_t bones, const double* morph_deltas,
                        std::size_t targets, const double* first_morph_weights, const double* leak,
                        const double* first_pose, const std::string& sidecar) noexcept {
  if (!rest || !triangles || !weights || !first_pose || vertices == 0 || bones == 0) {
    return {false, "create: rest, triangles, weights and first_pose are required"};
  }
  if (targets > 0 && (!morph_deltas || !first_morph_weights)) {
    return {false, "create: blendshape targets need their deltas and first weights"};
  }
  auto fresh = std::make_unique<Impl>();
  Status st = guard([&] {
    ffi::Settings fs{s.youngs_modulus, s.poisson_ratio, s.density, s.fps,
                     s.lattice_resolution, s.fast, s.modes, s.clusters};
    const auto none = rust::Slice<const double>();
    fresh->handle.emplace(ffi::create_deformer(
        fs, rust::Slice<const double>(rest, vertices * 3),
        rust::Slice<const std::uint32_t>(triangles, triangle_count * 3),
        rust::Slice<const double>(weights, vertices * bones), bones,
        targets ? rust::Slice<const double>(morph_deltas, targets * vertices * 3) : none, targets,
        targets ? rust::Slice<const double>(first_morph_weights, targets) : none,
        leak ? rust::Slice<const double>(leak, vertices) : none,
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

Status Deformer::debug_panic() noexcept {
  if (!valid()) return {false, "debug_panic: the deformer was not created"};
  return guard([&] { (*impl_->handle)->debug_panic(true); });
}

}  // namespace overtone
