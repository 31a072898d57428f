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
/* Units and defaults as overtone.hpp's Settings (overtone_default_settings fills them). Only
 * damping and strength may change between frames (overtone_set_controls); the other controls
 * need a new create/bind, none of them changes the fast solver's sidecar. */
typedef struct {
  double youngs_modulus, poisson_ratio, density; /* Pa, -, kg/m^3 in the normalised frame */
  double fps;                /* frames per second of the host's timeline */
  size_t lattice_resolution; /* 0: from the mesh's thickness */
  int fast;                  /* 1 reduced solver, 0 full order */
  size_t modes, clusters;    /* modes 0: automatic (64 on a small body, 16 otherwise) */
  int integrator;            /* 0 implicit midpoint with substeps, 1 backward Euler */
  size_t substeps;           /* per frame 1-64, 0 automatic */
  double damping;            /* damping ratio of the lowest mode, >= 0 */
  double frequency;          /* Hz of the lowest mode (Young's modulus rescaled), 0 none */
  int rest;                  /* 0 rig pose (held pose at rest), 1 bind shape */
  double time_scale;         /* physics seconds per animation second, > 0 */
  double preroll;            /* seconds held at the first pose after create/bind/reset, 0-60 */
  double strength;           /* output multiplier, >= 0 */
  double cut_distance;       /* rig jump (fraction of the body's diagonal) that restarts, 0 never */
  double gravity[3];         /* world frame, world length units/s^2 */
} overtone_settings;

void overtone_default_settings(overtone_settings* out);
/* Layout check: the bridge's field list ("name:type,...", types f64 usize bool u8 f64x3) and this
 * library's compiled layout of overtone_settings ("name:offset:size,..."); each writes a
 * NUL-terminated string truncated to `len` and returns its full length. */
size_t overtone_settings_fields(char* buf, size_t len);
size_t overtone_settings_layout(char* buf, size_t len);
/* `stiffness` (optional): per vertex a multiplier of Young's modulus > 0 where painted (1 the
 * default, 10 ten times stiffer: less secondary motion) or -1 where unpainted; NULL: uniform. */
int overtone_create(const overtone_settings* s, const double* rest, size_t vertices,
                    const uint32_t* triangles, size_t triangle_count, const double* weights,
                    size_t bones, const double* leak, const double* stiffness,
                    const double* first_pose, const char* sidecar, overtone_deformer** out,
                    char* err, size_t err_len);
/* The keyframable controls, from the next step on, without a rebind: damping ratio (>= 0) and
 * strength (>= 0). On error (-1) nothing changes. */
int overtone_set_controls(overtone_deformer* d, double damping, double strength, char* err,
                          size_t err_len);
int overtone_step(overtone_deformer* d, const double* pose, double* out, char* err, size_t err_len);
int overtone_reset(overtone_deformer* d, const double* pose, char* err, size_t err_len);
/* Blendshape rigs (shape keys, morph targets): `morph_deltas` is targets x vertices x 3
 * bind-space offsets, `first_morph_weights` and each step's `morph_weights` hold `targets`
 * values. The displacement is orthogonal to the targets too; the rig pose is morph-then-skin. */
int overtone_create_with_morphs(const overtone_settings* s, const double* rest, size_t vertices,
                                const uint32_t* triangles, size_t triangle_count,
                                const double* weights, size_t bones, const double* morph_deltas,
                                size_t targets, const double* first_morph_weights,
                                const double* leak, const double* stiffness,
                                const double* first_pose, const char* sidecar,
                                overtone_deformer** out, char* err, size_t err_len);
int overtone_step_with_morphs(overtone_deformer* d, const double* pose, const double* morph_weights,
                              double* out, char* err, size_t err_len);
int overtone_reset_with_morphs(overtone_deformer* d, const double* pose,
                               const double* morph_weights, char* err, size_t err_len);
double overtone_residual(const overtone_deformer* d);
/* Where the precompute came from ("loaded from sidecar", "rebuilt (...) and saved", ...);
 * writes a NUL-terminated string truncated to `len`; returns 0, or -1 for a null deformer. */
int overtone_cache_status(const overtone_deformer* d, char* buf, size_t len);
/* Where the precompute came from, as a code to branch on (overtone_cache_status is the text to
 * show). BUILT is the silent first build; UNUSABLE (the sidecar was unreadable or did not fit)
 * and WRITE_FAILED deserve a warning. */
enum {
  OVERTONE_CACHE_NOT_REQUESTED = 0, /* no sidecar path was given */
  OVERTONE_CACHE_LOADED = 1,        /* loaded from the sidecar */
  OVERTONE_CACHE_BUILT = 2,         /* built and written: no sidecar yet, or one for other inputs */
  OVERTONE_CACHE_UNUSABLE = 3,      /* built and written: the sidecar was unreadable or did not fit */
  OVERTONE_CACHE_WRITE_FAILED = 4   /* built, but the sidecar could not be written */
};
/* One of OVERTONE_CACHE_*, or -1 for a null deformer. */
int overtone_cache_state(const overtone_deformer* d);
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
  const double* stiffness; /* vertices values or NULL (every part or none) */
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

/* Rest-space pull-back of the displacement, for hosts that add it before their skinning
 * (Blender's Armature modifier skins X + d): per vertex d_v = M_p A_v^-1 u_v with
 * A_v = sum_b w_vb A_b (A_b the 3 x 3 linear part of bone b's pose row), so that skinning X + d
 * gives skin(X) + u; d_v = 0 where A_v is singular (|det| <= 1e-12 s^3, s the largest |entry|
 * of any A_b). Created once from the weights (vertices x bones, finite, >= 0; kept sparse);
 * `part_vertices` (part_count counts summing to vertices) and `part_linear` (part_count x 9,
 * row-major 3 x 3 M_p each) may be NULL with part_count 0 for M_p = identity.
 * overtone_pullback_apply: `transforms` bones x 12 (the step's pose), `u` vertices x 3 (world
 * units), `out` vertices x 3; allocates nothing, leaves `out` untouched on error. */
typedef struct overtone_pullback overtone_pullback;
int overtone_pullback_create(const double* weights, size_t vertices, size_t bones,
                             const size_t* part_vertices, const double* part_linear,
                             size_t part_count, overtone_pullback** out, char* err,
                             size_t err_len);
int overtone_pullback_apply(const overtone_pullback* p, const double* transforms, const double* u,
                            double* out, char* err, size_t err_len);
void overtone_pullback_destroy(overtone_pullback* p);
#ifdef __cplusplus
}
#endif
#endif
