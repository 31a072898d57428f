// The C ABI (overtone_c.h) over overtone::Deformer.
#include "overtone_c.h"

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "overtone.hpp"

#define OVERTONE_EXPORT extern "C" __attribute__((visibility("default")))

struct overtone_deformer {
  overtone::Deformer d;
};

struct overtone_bind {
  overtone::Binding b;
};

struct overtone_pullback {
  overtone::PullBack p;
};

namespace {
int fail(const std::string& msg, char* err, size_t err_len) {
  if (err && err_len > 0) {
    std::strncpy(err, msg.c_str(), err_len - 1);
    err[err_len - 1] = '\0';
  }
  return -1;
}

// Positional aggregate initialisation both ways (built with -Werror=missing-field-initializers):
// a field missing on either side does not compile.
overtone::Settings to_cpp(const overtone_settings& s) {
  return {s.youngs_modulus, s.poisson_ratio, s.density, s.fps, s.lattice_resolution,
          s.fast != 0, s.modes, s.clusters, static_cast<std::uint8_t>(s.integrator),
          s.substeps, s.damping, s.frequency, static_cast<std::uint8_t>(s.rest), s.time_scale,
          s.preroll, s.strength, s.cut_distance, {s.gravity[0], s.gravity[1], s.gravity[2]}};
}

// Codes outside 0/1 must reach the core's check, not wrap around in the narrowing above.
bool codes_in_range(const overtone_settings& s, char* err, size_t err_len) {
  if (s.integrator != 0 && s.integrator != 1) {
    fail("setting `integrator` = " + std::to_string(s.integrator) +
             " is invalid: 0 (implicit midpoint) or 1 (backward Euler)",
         err, err_len);
    return false;
  }
  if (s.rest != 0 && s.rest != 1) {
    fail("setting `rest` = " + std::to_string(s.rest) + " is invalid: 0 (rig pose) or 1 (bind shape)",
         err, err_len);
    return false;
  }
  return true;
}

size_t copy_out(const std::string& text, char* buf, size_t len) {
  if (buf && len > 0) {
    std::strncpy(buf, text.c_str(), len - 1);
    buf[len - 1] = '\0';
  }
  return text.size();
}
}  // namespace

OVERTONE_EXPORT void overtone_default_settings(overtone_settings* out) {
  if (!out) return;
  auto s = overtone::Settings::defaults();
  *out = {s.youngs_modulus, s.poisson_ratio, s.density, s.fps, s.lattice_resolution,
          s.fast ? 1 : 0, s.modes, s.clusters, s.integrator, s.substeps, s.damping,
          s.frequency, s.rest, s.time_scale, s.preroll, s.strength, s.cut_distance,
          {s.gravity[0], s.gravity[1], s.gravity[2]}};
}

OVERTONE_EXPORT size_t overtone_settings_fields(char* buf, size_t len) {
  return copy_out(overtone::Settings::field_list(), buf, len);
}

OVERTONE_EXPORT size_t overtone_settings_layout(char* buf, size_t len) {
#define OVERTONE_FIELD(name) \
  {#name, offsetof(overtone_settings, name), sizeof(static_cast<overtone_settings*>(nullptr)->name)}
  struct Field {
    const char* name;
    size_t offset, size;
  };
  static const Field fields[] = {
      OVERTONE_FIELD(youngs_modulus), OVERTONE_FIELD(poisson_ratio), OVERTONE_FIELD(density),
      OVERTONE_FIELD(fps),            OVERTONE_FIELD(lattice_resolution), OVERTONE_FIELD(fast),
      OVERTONE_FIELD(modes),          OVERTONE_FIELD(clusters),      OVERTONE_FIELD(integrator),
      OVERTONE_FIELD(substeps),       OVERTONE_FIELD(damping),       OVERTONE_FIELD(frequency),
      OVERTONE_FIELD(rest),           OVERTONE_FIELD(time_scale),    OVERTONE_FIELD(preroll),
      OVERTONE_FIELD(strength),       OVERTONE_FIELD(cut_distance),  OVERTONE_FIELD(gravity)};
#undef OVERTONE_FIELD
  std::string text;
  for (const Field& f : fields) {
    if (!text.empty()) text += ",";
    text += std::string(f.name) + ":" + std::to_string(f.offset) + ":" + std::to_string(f.size);
  }
  text += ",sizeof:" + std::to_string(sizeof(overtone_settings));
  return copy_out(text, buf, len);
}

OVERTONE_EXPORT int overtone_set_controls(overtone_deformer* d, double damping, double strength,
                                          char* err, size_t err_len) {
  if (!d) return fail("overtone_set_controls: null deformer", err, err_len);
  auto st = d->d.set_controls(damping, strength);
  return st ? 0 : fail(st.message, err, err_len);
}

OVERTONE_EXPORT int overtone_create_with_morphs(
    const overtone_settings* s, const double* rest, size_t vertices, const uint32_t* triangles,
    size_t triangle_count, const double* weights, size_t bones, const double* morph_deltas,
    size_t targets, const double* first_morph_weights, const double* leak,
    const double* stiffness, const double* first_pose, const char* sidecar,
    overtone_deformer** out, char* err, size_t err_len) {
  if (!s || !out) return fail("overtone_create: settings and out are required", err, err_len);
  *out = nullptr;
  if (!codes_in_range(*s, err, err_len)) return -1;
  auto* h = new (std::nothrow) overtone_deformer();
  if (!h) return fail("overtone_create: out of memory", err, err_len);
  auto st = h->d.create(to_cpp(*s), rest, vertices, triangles, triangle_count, weights, bones,
                        morph_deltas, targets, first_morph_weights, leak, first_pose,
                        sidecar ? std::string(sidecar) : std::string(), stiffness);
  if (!st) {
    delete h;
    return fail(st.message, err, err_len);
  }
  *out = h;
  return 0;
}

OVERTONE_EXPORT int overtone_create(const overtone_settings* s, const double* rest, size_t vertices,
                                    const uint32_t* triangles, size_t triangle_count,
                                    const double* weights, size_t bones, const double* leak,
                                    const double* stiffness, const double* first_pose,
                                    const char* sidecar, overtone_deformer** out, char* err,
                                    size_t err_len) {
  return overtone_create_with_morphs(s, rest, vertices, triangles, triangle_count, weights, bones,
                                     nullptr, 0, nullptr, leak, stiffness, first_pose, sidecar, out,
                                     err, err_len);
}

OVERTONE_EXPORT int overtone_step_with_morphs(overtone_deformer* d, const double* pose,
                                              const double* morph_weights, double* out, char* err,
                                              size_t err_len) {
  if (!d) return fail("overtone_step: null deformer", err, err_len);
  auto st = d->d.step(pose, out, morph_weights);
  return st ? 0 : fail(st.message, err, err_len);
}

OVERTONE_EXPORT int overtone_step(overtone_deformer* d, const double* pose, double* out, char* err,
                                  size_t err_len) {
  return overtone_step_with_morphs(d, pose, nullptr, out, err, err_len);
}

OVERTONE_EXPORT int overtone_reset_with_morphs(overtone_deformer* d, const double* pose,
                                               const double* morph_weights, char* err,
                                               size_t err_len) {
  if (!d) return fail("overtone_reset: null deformer", err, err_len);
  auto st = d->d.reset(pose, morph_weights);
  return st ? 0 : fail(st.message, err, err_len);
}

OVERTONE_EXPORT int overtone_reset(overtone_deformer* d, const double* pose, char* err,
                                   size_t err_len) {
  return overtone_reset_with_morphs(d, pose, nullptr, err, err_len);
}

OVERTONE_EXPORT double overtone_residual(const overtone_deformer* d) {
  return d ? d->d.residual() : 0.0;
}

OVERTONE_EXPORT int overtone_cache_status(const overtone_deformer* d, char* buf, size_t len) {
  if (!d) return fail("overtone_cache_status: null deformer", buf, len);
  if (buf && len > 0) {
    std::strncpy(buf, d->d.cache_status().c_str(), len - 1);
    buf[len - 1] = '\0';
  }
  return 0;
}

static_assert(static_cast<int>(overtone::CacheState::NotRequested) == OVERTONE_CACHE_NOT_REQUESTED &&
                  static_cast<int>(overtone::CacheState::Loaded) == OVERTONE_CACHE_LOADED &&
                  static_cast<int>(overtone::CacheState::Built) == OVERTONE_CACHE_BUILT &&
                  static_cast<int>(overtone::CacheState::Unusable) == OVERTONE_CACHE_UNUSABLE &&
                  static_cast<int>(overtone::CacheState::WriteFailed) == OVERTONE_CACHE_WRITE_FAILED,
              "the C ABI's cache states are overtone::CacheState's values");

OVERTONE_EXPORT int overtone_cache_state(const overtone_deformer* d) {
  return d ? static_cast<int>(d->d.cache_state()) : -1;
}

OVERTONE_EXPORT size_t overtone_vertex_count(const overtone_deformer* d) {
  return d ? d->d.vertices() : 0;
}

OVERTONE_EXPORT size_t overtone_bone_count(const overtone_deformer* d) {
  return d ? d->d.bones() : 0;
}

OVERTONE_EXPORT size_t overtone_target_count(const overtone_deformer* d) {
  return d ? d->d.targets() : 0;
}

OVERTONE_EXPORT int overtone_debug_panic(overtone_deformer* d, char* err, size_t err_len) {
  if (!d) return fail("overtone_debug_panic: null deformer", err, err_len);
  auto st = d->d.debug_panic();
  return st ? 0 : fail(st.message, err, err_len);
}

OVERTONE_EXPORT void overtone_destroy(overtone_deformer* d) { delete d; }

OVERTONE_EXPORT size_t overtone_part_count(const overtone_deformer* d) {
  return d ? d->d.parts() : 0;
}

OVERTONE_EXPORT size_t overtone_part_offset(const overtone_deformer* d, size_t i) {
  return d ? d->d.part_offset(i) : 0;
}

OVERTONE_EXPORT int overtone_bind_start(const overtone_settings* s, const overtone_part* parts,
                                        size_t part_count, size_t bones, size_t targets,
                                        const double* first_morph_weights,
                                        const double* first_pose, const char* sidecar,
                                        overtone_bind** out, char* err, size_t err_len) {
  if (!s || !out) return fail("overtone_bind_start: settings and out are required", err, err_len);
  *out = nullptr;
  if (!parts || part_count == 0) return fail("overtone_bind_start: no parts", err, err_len);
  auto* h = new (std::nothrow) overtone_bind();
  if (!h) return fail("overtone_bind_start: out of memory", err, err_len);
  if (!codes_in_range(*s, err, err_len)) {
    delete h;
    return -1;
  }
  std::vector<overtone::Part> ps(part_count);
  for (size_t p = 0; p < part_count; ++p) {
    ps[p] = {parts[p].rest,    parts[p].vertices,     parts[p].triangles, parts[p].triangle_count,
             parts[p].weights, parts[p].morph_deltas, parts[p].leak,      parts[p].stiffness};
  }
  auto st = h->b.start(to_cpp(*s), ps.data(), part_count, bones, targets, first_morph_weights, first_pose,
                       sidecar ? std::string(sidecar) : std::string());
  if (!st) {
    delete h;
    return fail(st.message, err, err_len);
  }
  *out = h;
  return 0;
}

OVERTONE_EXPORT int overtone_bind_poll(const overtone_bind* b, double* fraction, char* stage,
                                       size_t stage_len) {
  if (!b) return -1;
  if (fraction) *fraction = b->b.fraction();
  if (stage && stage_len > 0) {
    std::strncpy(stage, b->b.stage().c_str(), stage_len - 1);
    stage[stage_len - 1] = '\0';
  }
  return static_cast<int>(b->b.state());
}

OVERTONE_EXPORT void overtone_bind_cancel(overtone_bind* b) {
  if (b) b->b.cancel();
}

OVERTONE_EXPORT int overtone_bind_take(overtone_bind* b, overtone_deformer** out, char* err,
                                       size_t err_len) {
  if (!b || !out) return fail("overtone_bind_take: handle and out are required", err, err_len);
  *out = nullptr;
  auto* h = new (std::nothrow) overtone_deformer();
  if (!h) return fail("overtone_bind_take: out of memory", err, err_len);
  auto st = b->b.take(h->d);
  if (!st) {
    delete h;
    return fail(st.message, err, err_len);
  }
  *out = h;
  return 0;
}

OVERTONE_EXPORT void overtone_bind_destroy(overtone_bind* b) { delete b; }

OVERTONE_EXPORT int overtone_pullback_create(const double* weights, size_t vertices, size_t bones,
                                             const size_t* part_vertices, const double* part_linear,
                                             size_t part_count, overtone_pullback** out, char* err,
                                             size_t err_len) {
  if (!out) return fail("overtone_pullback_create: out is required", err, err_len);
  *out = nullptr;
  auto* h = new (std::nothrow) overtone_pullback();
  if (!h) return fail("overtone_pullback_create: out of memory", err, err_len);
  auto st = h->p.create(weights, vertices, bones, part_vertices, part_linear, part_count);
  if (!st) {
    delete h;
    return fail(st.message, err, err_len);
  }
  *out = h;
  return 0;
}

OVERTONE_EXPORT int overtone_pullback_apply(const overtone_pullback* p, const double* transforms,
                                            const double* u, double* out, char* err,
                                            size_t err_len) {
  if (!p) return fail("overtone_pullback_apply: null pull-back", err, err_len);
  auto st = p->p.apply(transforms, u, out);
  return st ? 0 : fail(st.message, err, err_len);
}

OVERTONE_EXPORT void overtone_pullback_destroy(overtone_pullback* p) { delete p; }
