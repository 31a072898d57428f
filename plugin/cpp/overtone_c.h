/* C ABI over overtone::Deformer, for hosts that load a shared library (Python ctypes in
 * Blender). Every function returns 0 on success or -1 with a message in `err` (NUL-terminated,
 * truncated to `err_len`). Only these symbols are exported by libovertone_c.so. */
/* Spaces (as overtone.hpp): `rest` is in world space at bind (Mo_bind · X), each pose row is the
 * bone's 3 x 4 world-from-bind transform (W_b · Mo_bind⁻¹), the displacement comes back in world
 * units. `leak` (optional) holds per vertex a painted momentum weight >= 0 (0: follows the rig,
 * 1: resists it) or -1 for an unpainted vertex (the default field there). */
#ifndef OVERTONE_C_H
#define OVERTONE_C_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct overtone_deformer overtone_deformer;
typedef struct {
  double youngs_modulus, poisson_ratio, density, fps;
  size_t lattice_resolution;
  int fast;
  size_t modes, clusters;
} overtone_settings;

void overtone_default_settings(overtone_settings* out);
int overtone_create(const overtone_settings* s, const double* rest, size_t vertices,
                    const uint32_t* triangles, size_t triangle_count, const double* weights,
                    size_t bones, const double* leak, const double* first_pose,
                    const char* sidecar, overtone_deformer** out, char* err, size_t err_len);
int overtone_step(overtone_deformer* d, const double* pose, double* out, char* err, size_t err_len);
int overtone_reset(overtone_deformer* d, const double* pose, char* err, size_t err_len);
/* Blendshape rigs (shape keys, morph targets): `morph_deltas` is targets x vertices x 3
 * bind-space offsets, `first_morph_weights` and each step's `morph_weights` hold `targets`
 * values. The displacement is orthogonal to the targets too; the rig pose is morph-then-skin. */
int overtone_create_with_morphs(const overtone_settings* s, const double* rest, size_t vertices,
                                const uint32_t* triangles, size_t triangle_count,
                                const double* weights, size_t bones, const double* morph_deltas,
                                size_t targets, const double* first_morph_weights,
                                const double* leak, const double* first_pose, const char* sidecar,
                                overtone_deformer** out, char* err, size_t err_len);
int overtone_step_with_morphs(overtone_deformer* d, const double* pose, const double* morph_weights,
                              double* out, char* err, size_t err_len);
int overtone_reset_with_morphs(overtone_deformer* d, const double* pose,
                               const double* morph_weights, char* err, size_t err_len);
double overtone_residual(const overtone_deformer* d);
/* Where the precompute came from ("loaded from sidecar", "rebuilt (...) and saved", ...);
 * writes a NUL-terminated string truncated to `len`; returns 0, or -1 for a null deformer. */
int overtone_cache_status(const overtone_deformer* d, char* buf, size_t len);
/* Surface vertices and bones the deformer was created with (0 for a null deformer). */
size_t overtone_vertex_count(const overtone_deformer* d);
size_t overtone_bone_count(const overtone_deformer* d);
size_t overtone_target_count(const overtone_deformer* d);
/* Test hook: forces a Rust panic inside the core; returns -1 with the message (the host lives). */
int overtone_debug_panic(overtone_deformer* d, char* err, size_t err_len);
void overtone_destroy(overtone_deformer* d);

/* Several meshes bound to one skeleton, bound as one body. A part's triangles index its own
 * vertices; `morph_deltas` (targets x vertices x 3) may be NULL without blendshapes, `leak`
 * (vertices values) NULL for the default (given for every part or for none). The deformer's
 * step output holds the parts in order; part i starts at overtone_part_offset(d, i). */
typedef struct {
  const double* rest;
  size_t vertices;
  const uint32_t* triangles;
  size_t triangle_count;
  const double* weights;
  const double* morph_deltas;
  const double* leak;
} overtone_part;
size_t overtone_part_count(const overtone_deformer* d);
/* First vertex of part i in the step output; i == overtone_part_count(d) gives the total. */
size_t overtone_part_offset(const overtone_deformer* d, size_t i);

/* Asynchronous bind: overtone_bind_start copies the input, starts the precompute on a worker
 * thread and returns at once. Poll it (fraction in [0, 1], never decreasing; stage text; state),
 * cancel it, then overtone_bind_take the deformer (waits for the worker; -1 with the message of
 * a failed bind, or "cancelled by the host"). overtone_bind_destroy cancels a running bind and
 * waits for its worker; every handle must be destroyed, taken or not. */
typedef struct overtone_bind overtone_bind;
enum {
  OVERTONE_BIND_RUNNING = 0,
  OVERTONE_BIND_DONE = 1,
  OVERTONE_BIND_FAILED = 2,
  OVERTONE_BIND_CANCELLED = 3
};
int overtone_bind_start(const overtone_settings* s, const overtone_part* parts, size_t part_count,
                        size_t bones, size_t targets, const double* first_morph_weights,
                        const double* first_pose, const char* sidecar, overtone_bind** out,
                        char* err, size_t err_len);
/* Returns the state (OVERTONE_BIND_*) or -1 for a null handle; `fraction` and `stage` may be
 * NULL. */
int overtone_bind_poll(const overtone_bind* b, double* fraction, char* stage, size_t stage_len);
void overtone_bind_cancel(overtone_bind* b);
int overtone_bind_take(overtone_bind* b, overtone_deformer** out, char* err, size_t err_len);
void overtone_bind_destroy(overtone_bind* b);
#ifdef __cplusplus
}
#endif
#endif
