/* Calls the C ABI the way a Python/ctypes host does: create, step, an error path, destroy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "overtone_c.h"

int main(void) {
  /* A single tetrahedron-like closed surface: an octahedron with one bone. */
  double rest[] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1.3, 0, 0, -1.3};
  uint32_t tris[] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
  double weights[] = {1, 1, 1, 1, 1, 1};
  double pose[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  char err[512];
  overtone_settings s;
  overtone_default_settings(&s);
  s.lattice_resolution = 8;
  s.clusters = 20;
  s.modes = 4;
  overtone_deformer* d = NULL;
  if (overtone_create(&s, rest, 6, tris, 8, weights, 1, NULL, pose, "", &d, err, sizeof err) != 0) {
    printf("FAIL create: %s\n", err);
    return 1;
  }
  double out[18];
  for (int k = 1; k < 10; ++k) {
    pose[3] = 0.2 * sin(0.5 * k);
    if (overtone_step(d, pose, out, err, sizeof err) != 0) {
      printf("FAIL step: %s\n", err);
      return 1;
    }
  }
  pose[0] = NAN;
  if (overtone_step(d, pose, out, err, sizeof err) == 0) {
    printf("FAIL: a NaN pose was accepted\n");
    return 1;
  }
  printf("C ABI: refused as expected: %s\n", err);
  char status[256];
  if (overtone_cache_status(d, status, sizeof status) != 0 || overtone_vertex_count(d) != 6 ||
      overtone_bone_count(d) != 1) {
    printf("FAIL: cache status / sizes\n");
    return 1;
  }
  if (overtone_debug_panic(d, err, sizeof err) == 0) {
    printf("FAIL: the forced panic was not reported\n");
    return 1;
  }
  pose[0] = 1.0;
  if (overtone_step(d, pose, out, err, sizeof err) != 0) {
    printf("FAIL: the deformer stopped working after a contained panic: %s\n", err);
    return 1;
  }
  printf("C ABI ok (residual %.2e, cache: %s); panic contained: %s\n", overtone_residual(d), status, err);
  overtone_destroy(d);

  /* A blendshape rig: one target lifting the top vertex; only the target weight animates. */
  double delta[18] = {0};
  delta[3 * 4 + 2] = 0.4;
  double bw = 0.0;
  pose[0] = 1.0;
  pose[3] = 0.0;
  if (overtone_create_with_morphs(&s, rest, 6, tris, 8, weights, 1, delta, 1, &bw, NULL, pose, "", &d, err,
                                  sizeof err) != 0) {
    printf("FAIL create_with_morphs: %s\n", err);
    return 1;
  }
  if (overtone_target_count(d) != 1) {
    printf("FAIL: target count\n");
    return 1;
  }
  double worst = 0.0;
  for (int k = 1; k < 10; ++k) {
    bw = fabs(sin(0.7 * k));
    if (overtone_step_with_morphs(d, pose, &bw, out, err, sizeof err) != 0) {
      printf("FAIL step_with_morphs: %s\n", err);
      return 1;
    }
    if (overtone_residual(d) > worst) worst = overtone_residual(d);
  }
  if (worst > 1e-8) {
    printf("FAIL: blendshape rig residual %.2e\n", worst);
    return 1;
  }
  if (overtone_step(d, pose, out, err, sizeof err) == 0) {
    printf("FAIL: a step without the blendshape weights was accepted\n");
    return 1;
  }
  printf("C ABI blendshapes ok (residual %.2e); refused as expected: %s\n", worst, err);
  overtone_destroy(d);
  return 0;
}
