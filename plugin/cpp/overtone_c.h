/* C ABI over overtone::Deformer, for hosts that load a shared library (Python ctypes in
 * Blender). Every function returns 0 on success or -1 with a message in `err` (NUL-terminated,
 * truncated to `err_len`). Only these symbols are exported by libovertone_c.so. */
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
double overtone_residual(const overtone_deformer* d);
void overtone_destroy(overtone_deformer* d);
#ifdef __cplusplus
}
#endif
#endif
