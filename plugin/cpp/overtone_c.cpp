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
void write_message(const std::string& msg, char* err, size_t err_len) {
  if (err && err_len > 0) {
    std::strncpy(err, msg.c_str(), err_len - 1);
    err[err_len - 1] = '\0';
  }
}

// A refused call at this layer (a null handle or output): bad input.
int fail(const std::string& msg, char* err, size_t err_len) {
  write_message(msg, err, err_len);
  return OVERTONE_ERROR_INVALID_INPUT;
}

// The outcome of a C++ call as the C ABI's return value.
int status(const overtone::Status& st, char* err, size_t err_len) {
  if (st) return OVERTONE_OK;
  write_message(st.message, err, err_len);
  return st.kind;
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
  if (out) *out = overtone::default_settings();
}

OVERTONE_EXPORT size_t overtone_settings_fields(char* buf, size_t len) {
  return copy_out(overtone::settings_field_list(), buf, len);
}

OVERTONE_EXPORT size_t overtone_settings_layout(char* buf, size_t len) {
#define OVERTONE_FIELD(name) \
  {#name, offsetof(overtone_settings, name), sizeof(static_cast<overtone_settings*>(nullptr)->name)},
  struct Field {
    const char* name;
    size_t offset, size;
  };
  static const Field fields[] = {OVERTONE_SETTINGS_FIELDS(OVERTONE_FIELD)};
#undef OVERTONE_FIELD
  std::string text;
  for (const Field& f : fields) {
    if (!text.empty()) text += ",";
    text += std::string(f.name) + ":" + std::to_string(f.offset) + ":" + std::to_string(f.size);
  }
  text += ",sizeof:" + std::to_string(sizeof(overtone_settings));
  return copy_out(text, buf, len);
}

OVERTONE_EXPORT int overtone_set_controls(overtone_deformer* d, const overtone_settings* s,
                                          char* err, size_t err_len) {
  if (!d || !s) return fail("overtone_set_controls: deformer and settings are required", err, err_len);
  return status(d->d.set_controls(*s), err, err_len);
}

OVERTONE_EXPORT int overtone_create(const overtone_settings* s, const overtone_body* body,
                                    overtone_deformer** out, char* err, size_t err_len) {
  if (!s || !body || !out) return fail("overtone_create: settings, body and out are required", err, err_len);
  *out = nullptr;
  auto* h = new (std::nothrow) overtone_deformer();
  if (!h) return fail("overtone_create: out of memory", err, err_len);
  auto st = h->d.create(*s, *body);
  if (!st) {
    delete h;
    return status(st, err, err_len);
  }
  *out = h;
  return OVERTONE_OK;
}

OVERTONE_EXPORT int overtone_step(overtone_deformer* d, const overtone_pose* pose, double* out,
                                  char* err, size_t err_len) {
  if (!d || !pose) return fail("overtone_step: deformer and pose are required", err, err_len);
  return status(d->d.step(*pose, out), err, err_len);
}

OVERTONE_EXPORT int overtone_reset(overtone_deformer* d, const overtone_pose* pose, char* err,
                                   size_t err_len) {
  if (!d || !pose) return fail("overtone_reset: deformer and pose are required", err, err_len);
  return status(d->d.reset(*pose), err, err_len);
}

OVERTONE_EXPORT double overtone_residual(const overtone_deformer* d) {
  return d ? d->d.residual() : 0.0;
}

OVERTONE_EXPORT int overtone_cache_status(const overtone_deformer* d, char* buf, size_t len) {
  if (!d) return fail("overtone_cache_status: null deformer", buf, len);
  write_message(d->d.cache_status(), buf, len);
  return OVERTONE_OK;
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
  return status(d->d.debug_panic(), err, err_len);
}

OVERTONE_EXPORT void overtone_destroy(overtone_deformer* d) { delete d; }

OVERTONE_EXPORT size_t overtone_part_count(const overtone_deformer* d) {
  return d ? d->d.parts() : 0;
}

OVERTONE_EXPORT size_t overtone_part_offset(const overtone_deformer* d, size_t i) {
  return d ? d->d.part_offset(i) : 0;
}

OVERTONE_EXPORT int overtone_bind_start(const overtone_settings* s, const overtone_body* body,
                                        overtone_bind** out, char* err, size_t err_len) {
  if (!s || !body || !out) return fail("overtone_bind_start: settings, body and out are required", err, err_len);
  *out = nullptr;
  auto* h = new (std::nothrow) overtone_bind();
  if (!h) return fail("overtone_bind_start: out of memory", err, err_len);
  auto st = h->b.start(*s, *body);
  if (!st) {
    delete h;
    return status(st, err, err_len);
  }
  *out = h;
  return OVERTONE_OK;
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
    return status(st, err, err_len);
  }
  *out = h;
  return OVERTONE_OK;
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
    return status(st, err, err_len);
  }
  *out = h;
  return OVERTONE_OK;
}

OVERTONE_EXPORT int overtone_pullback_apply(const overtone_pullback* p, const double* transforms,
                                            const double* u, double* out, char* err,
                                            size_t err_len) {
  if (!p) return fail("overtone_pullback_apply: null pull-back", err, err_len);
  return status(p->p.apply(transforms, u, out), err, err_len);
}

OVERTONE_EXPORT void overtone_pullback_destroy(overtone_pullback* p) { delete p; }
