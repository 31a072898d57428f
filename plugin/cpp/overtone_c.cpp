// The C ABI (overtone_c.h) over overtone::Deformer.
#include "overtone_c.h"

#include <cstring>
#include <new>
#include <vector>

#include "overtone.hpp"

#define OVERTONE_EXPORT extern "C" __attribute__((visibility("default")))

struct overtone_deformer {
  overtone::Deformer d;
};

struct overtone_bind {
  overtone::Binding b;
};

namespace {
int fail(const std::string& msg, char* err, size_t err_len) {
  if (err && err_len > 0) {
    std::strncpy(err, msg.c_str(), err_len - 1);
    err[err_len - 1] = '\0';
  }
  return -1;
}
}  // namespace

OVERTONE_EXPORT void overtone_default_settings(overtone_settings* out) {
  if (!out) return;
  auto s = overtone::Settings::defaults();
  *out = {s.youngs_modulus, s.poisson_ratio, s.density, s.fps, s.lattice_resolution,
          s.fast ? 1 : 0, s.modes, s.clusters};
}

OVERTONE_EXPORT int overtone_create_with_morphs(
    const overtone_settings* s, const double* rest, size_t vertices, const uint32_t* triangles,
    size_t triangle_count, const double* weights, size_t bones, const double* morph_deltas,
    size_t targets, const double* first_morph_weights, const double* leak,
    const double* first_pose, const char* sidecar, overtone_deformer** out, char* err,
    size_t err_len) {
  if (!s || !out) return fail("overtone_create: settings and out are required", err, err_len);
  *out = nullptr;
  auto* h = new (std::nothrow) overtone_deformer();
  if (!h) return fail("overtone_create: out of memory", err, err_len);
  overtone::Settings cs{s->youngs_modulus, s->poisson_ratio, s->density, s->fps,
                        s->lattice_resolution, s->fast != 0, s->modes, s->clusters};
  auto st = h->d.create(cs, rest, vertices, triangles, triangle_count, weights, bones, morph_deltas,
                        targets, first_morph_weights, leak, first_pose,
                        sidecar ? std::string(sidecar) : std::string());
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
                                    const double* first_pose, const char* sidecar,
                                    overtone_deformer** out, char* err, size_t err_len) {
  return overtone_create_with_morphs(s, rest, vertices, triangles, triangle_count, weights, bones,
                                     nullptr, 0, nullptr, leak, first_pose, sidecar, out, err,
                                     err_len);
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
  overtone::Settings cs{s->youngs_modulus, s->poisson_ratio, s->density, s->fps,
                        s->lattice_resolution, s->fast != 0, s->modes, s->clusters};
  std::vector<overtone::Part> ps(part_count);
  for (size_t p = 0; p < part_count; ++p) {
    ps[p] = {parts[p].rest, parts[p].vertices, parts[p].triangles, parts[p].triangle_count,
             parts[p].weights, parts[p].morph_deltas, parts[p].leak};
  }
  auto st = h->b.start(cs, ps.data(), part_count, bones, targets, first_morph_weights, first_pose,
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
