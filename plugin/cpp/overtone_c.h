/* C ABI over overtone::Deformer, for hosts that load a shared library (Python ctypes in
 * Blender). Every function that can fail returns OVERTONE_OK (0) on success or the kind of the
 * failure (overtone_status), with a message in `err` (NUL-terminated, truncated to `err_len`).
 * Only these symbols are exported by libovertone_c.so. */
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
#include <stdbool.h>
typedef struct overtone_deformer overtone_deformer;
/* @generated begin c-types (from overtone::settings::SETTINGS: scripts/generate_host_files.sh) */
/* The choices of setting `rest`. */
typedef enum {
  OVERTONE_REST_SHAPE_RIG = 0, /* Rig Pose */
  OVERTONE_REST_SHAPE_BIND = 1, /* Bind Shape */
} overtone_rest_shape;
/* The choices of setting `solver`. */
typedef enum {
  OVERTONE_SOLVER_FAST = 0, /* Fast */
  OVERTONE_SOLVER_FULL = 1, /* Full */
} overtone_solver;
/* The choices of setting `integrator`. */
typedef enum {
  OVERTONE_INTEGRATOR_IMPLICIT_MIDPOINT = 0, /* Implicit Midpoint */
  OVERTONE_INTEGRATOR_BACKWARD_EULER = 1, /* Backward Euler */
} overtone_integrator;
/* What every function that can fail returns: 0, or the kind of failure (overtone::ErrorKind):
 * a host retries a STEP_FAILED (the state is unchanged) and reports the others. */
typedef enum {
  OVERTONE_OK = 0,
  OVERTONE_ERROR_INVALID_INPUT = 1,
  OVERTONE_ERROR_INVALID_SETTING = 2,
  OVERTONE_ERROR_STEP_FAILED = 3,
  OVERTONE_ERROR_NUMERICAL = 4,
  OVERTONE_ERROR_FILE = 5,
  OVERTONE_ERROR_UNSUPPORTED = 6,
  OVERTONE_ERROR_CANCELLED = 7,
  OVERTONE_ERROR_INTERNAL = 8,
} overtone_status;
/* Every setting, in the table's order (overtone::settings::SETTINGS; overtone_default_settings
 * fills the defaults). An optional setting is its use_ flag (false: automatic / none) and its
 * value. Only the animatable ones may change between frames (overtone_set_controls). */
typedef struct {
  double youngs_modulus; /* Young's modulus: lower is jigglier. (Pa; > 0; default 25000; changes the precompute) */
  double poisson_ratio; /* Poisson ratio: volume preservation (ARAP uses only the shear modulus E/(2(1+ν))). (in (-1, 0.5); default 0.4; changes the precompute) */
  double density; /* Mass density in the normalised frame. (kg/m³; > 0; default 1000; changes the precompute) */
  bool use_frequency; /* false: none: Young's modulus as given */
  double frequency; /* Jiggle frequency of the lowest mode: Young's modulus is rescaled to it at bind, so the same value gives a comparable jiggle on any character and with either solver. (Hz; > 0; default 5) */
  double damping; /* Damping ratio of the low jiggle modes: 0 rings on, 0.1 decays over a few swings, 1 settles without swinging. (0 to 10; default 0.1; animatable) */
  double strength; /* Multiplier of the secondary motion (0 none, 2 twice). (>= 0; default 1; animatable) */
  double time_scale; /* Physics seconds per animation second: 2 jiggles twice as fast. (> 0; default 1) */
  double preroll; /* Seconds the rig is held at the first pose before the first frame, so the body settles (gravity) before the shot starts. (s; 0 to 60; default 0) */
  bool use_cut_distance; /* false: never */
  double cut_distance; /* A rig jump between two frames larger than this fraction of the body's bounding-box diagonal restarts the simulation there (a camera cut, a teleport). (fraction of the body's diagonal; > 0; default 0.5) */
  bool use_max_displacement; /* false: none: no limit */
  double max_displacement; /* Largest displacement any vertex is shown with: a frame whose secondary motion exceeds it is scaled down as a whole (its shape kept) so a teleport or a violent move cannot fling the surface away. (fraction of the body's diagonal; > 0; default none) */
  overtone_rest_shape rest; /* The elastic reference shape. (default rig) */
  double gravity[3]; /* Gravity in the host's world frame (0, 0, -9.81 in a Z-up scene in metres). (world length units/s²; default 0,0,0) */
  double fps; /* Frames per second of the host's timeline: a frame advances 1/fps seconds. (1/s; > 0; default 24) */
  overtone_solver solver; /* The solver. (default fast; changes the precompute) */
  bool use_modes; /* false: automatic: 64 on a small body such as a prop or a tail, 16 otherwise */
  size_t modes; /* Skinning eigenmodes of the fast solver. (>= 1; default automatic; changes the precompute) */
  size_t clusters; /* Rotation clusters of the fast solver (at most the lattice's element count). (>= 1; default 100; changes the precompute) */
  bool use_lattice_resolution; /* false: automatic: from the mesh, so thin limbs are four cells across */
  size_t lattice_resolution; /* Cells of the tetrahedral lattice along the body's longest side. (>= 2; default automatic; changes the precompute) */
  overtone_integrator integrator; /* The time integrator. (default implicit_midpoint) */
  bool use_substeps; /* false: automatic: from the frame rate and the stiffness (at most 1/120 s each) */
  size_t substeps; /* Solver steps per frame (implicit midpoint). (1 to 64; default automatic) */
} overtone_settings;
/* X(field) for every field of overtone_settings in order (layout checks). */
#define OVERTONE_SETTINGS_FIELDS(X) \
  X(youngs_modulus) \
  X(poisson_ratio) \
  X(density) \
  X(use_frequency) \
  X(frequency) \
  X(damping) \
  X(strength) \
  X(time_scale) \
  X(preroll) \
  X(use_cut_distance) \
  X(cut_distance) \
  X(use_max_displacement) \
  X(max_displacement) \
  X(rest) \
  X(gravity) \
  X(fps) \
  X(solver) \
  X(use_modes) \
  X(modes) \
  X(clusters) \
  X(use_lattice_resolution) \
  X(lattice_resolution) \
  X(integrator) \
  X(use_substeps) \
  X(substeps)
/* @generated end c-types */

/* One skinned mesh of a body (several meshes bound to one skeleton are bound as one body): `rest`
 * vertices x 3, `triangles` triangle_count x 3 (indices into this part's vertices), `weights`
 * vertices x bones, `morph_deltas` targets x vertices x 3 bind-space offsets (NULL without
 * blendshapes), `leak` and `stiffness` vertices values each or NULL (given for every part or for
 * none; see the top of this file). */
typedef struct {
  const double* rest;
  size_t vertices;
  const uint32_t* triangles;
  size_t triangle_count;
  const double* weights;
  const double* morph_deltas;
  const double* leak;
  const double* stiffness;
} overtone_part;

/* One frame's rig: `transforms` bones x 12 (3 x 4 row-major skin transforms), `morph_weights`
 * targets values (NULL without blendshapes). */
typedef struct {
  const double* transforms;
  const double* morph_weights;
} overtone_pose;

/* A body to bind: its parts, bone and blendshape counts, the first frame and a sidecar path
 * (NULL or "" for none). The displacement of a step holds the parts' vertices in order; part i
 * starts at overtone_part_offset(d, i). */
typedef struct {
  const overtone_part* parts;
  size_t part_count;
  size_t bones;
  size_t targets;
  overtone_pose first_pose;
  const char* sidecar;
} overtone_body;

void overtone_default_settings(overtone_settings* out);
/* Layout check: the bridge's field list ("name:type,...", types f64 usize bool enum f64x3) and this
 * library's compiled layout of overtone_settings ("name:offset:size,..."); each writes a
 * NUL-terminated string truncated to `len` and returns its full length. */
size_t overtone_settings_fields(char* buf, size_t len);
size_t overtone_settings_layout(char* buf, size_t len);
/* Every function below that can fail returns OVERTONE_OK (0) or the kind of failure
 * (overtone_status), with the message in `err` (NUL-terminated, truncated to `err_len`). */
/* Binds `body` with `settings` on the calling thread (see overtone_bind_start for a worker). */
int overtone_create(const overtone_settings* s, const overtone_body* body, overtone_deformer** out,
                    char* err, size_t err_len);
/* Takes the host's settings between frames: the animatable ones (damping, strength) apply from
 * the next step on without a rebind; any other setting that differs from the bind's is refused
 * (OVERTONE_ERROR_INVALID_SETTING: rebind). On error nothing changes. */
int overtone_set_controls(overtone_deformer* d, const overtone_settings* s, char* err,
                          size_t err_len);
/* One frame: `out` receives vertices x 3 doubles (world units). On error nothing changes; an
 * OVERTONE_ERROR_STEP_FAILED may be retried. */
int overtone_step(overtone_deformer* d, const overtone_pose* pose, double* out, char* err,
                  size_t err_len);
/* Back to rest in `pose`, then the pre-roll. */
int overtone_reset(overtone_deformer* d, const overtone_pose* pose, char* err, size_t err_len);
double overtone_residual(const overtone_deformer* d);
/* Where the precompute came from ("loaded from sidecar", "rebuilt (...) and saved", ...);
 * writes a NUL-terminated string truncated to `len`; returns 0, or OVERTONE_ERROR_INVALID_INPUT for a null deformer. */
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
/* Test hook: forces a Rust panic inside the core; returns OVERTONE_ERROR_INTERNAL with the message
 * (the host lives). */
int overtone_debug_panic(overtone_deformer* d, char* err, size_t err_len);
void overtone_destroy(overtone_deformer* d);

size_t overtone_part_count(const overtone_deformer* d);
/* First vertex of part i in the step output; i == overtone_part_count(d) gives the total. */
size_t overtone_part_offset(const overtone_deformer* d, size_t i);

/* Asynchronous bind: overtone_bind_start copies the input, starts the precompute on a worker
 * thread and returns at once. Poll it (fraction in [0, 1], never decreasing; stage text; state),
 * cancel it, then overtone_bind_take the deformer (waits for the worker; the failure kind and the message of
 * a failed bind, or "cancelled by the host"). overtone_bind_destroy cancels a running bind and
 * waits for its worker; every handle must be destroyed, taken or not. */
typedef struct overtone_bind overtone_bind;
enum {
  OVERTONE_BIND_RUNNING = 0,
  OVERTONE_BIND_DONE = 1,
  OVERTONE_BIND_FAILED = 2,
  OVERTONE_BIND_CANCELLED = 3
};
int overtone_bind_start(const overtone_settings* s, const overtone_body* body, overtone_bind** out,
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
