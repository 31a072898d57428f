/* Calls the C ABI the way a Python/ctypes host does: create, step, an error path, destroy. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "overtone_c.h"

/* One-part bodies and poses over the ABI's structs (the test's call sites stay short). */
static overtone_part part_of(const double* rest, size_t n, const uint32_t* tris, size_t nt, const double* w,
                             const double* deltas, const double* stiffness) {
  overtone_part p = {rest, n, tris, nt, w, deltas, NULL, stiffness};
  return p;
}

static int create1(const overtone_settings* s, const double* rest, size_t n, const uint32_t* tris, size_t nt,
                   const double* w, size_t bones, const double* deltas, size_t targets, const double* first_morph,
                   const double* stiffness, const double* pose, const char* sidecar, overtone_deformer** out,
                   char* err, size_t err_len) {
  overtone_part p = part_of(rest, n, tris, nt, w, deltas, stiffness);
  overtone_body b = {&p, 1, bones, targets, {pose, first_morph}, sidecar};
  return overtone_create(s, &b, out, err, err_len);
}

static int step1(overtone_deformer* d, const double* pose, const double* morph, double* out, char* err,
                 size_t err_len) {
  overtone_pose p = {pose, morph};
  return overtone_step(d, &p, out, err, err_len);
}

/* set_controls with the bind's settings `base` but these damping and strength. */
static int controls1(overtone_deformer* d, const overtone_settings* base, double damping, double strength,
                     char* err, size_t err_len) {
  overtone_settings s = *base;
  s.damping = damping;
  s.strength = strength;
  return overtone_set_controls(d, &s, err, err_len);
}

static int bind1(const overtone_settings* s, const overtone_part* parts, size_t count, size_t bones,
                 const double* pose, const char* sidecar, overtone_bind** out, char* err, size_t err_len) {
  overtone_body b = {parts, count, bones, 0, {pose, NULL}, sidecar};
  return overtone_bind_start(s, &b, out, err, err_len);
}

/* A closed UV sphere (radius r, centre cx) with `rings` x `seg` quads; two bones blending along
 * x. Writes vertices, triangles and weights; returns the vertex count. */
static size_t sphere(double cx, double r, int rings, int seg, double* v, uint32_t* t, double* w,
                     size_t* tcount) {
  size_t n = 0, nt = 0;
  v[0] = cx; v[1] = 0; v[2] = -r; n = 1;
  for (int i = 1; i < rings; ++i) {
    double th = M_PI * i / rings;
    for (int j = 0; j < seg; ++j) {
      double ph = 2 * M_PI * j / seg;
      v[3 * n] = cx + r * sin(th) * cos(ph);
      v[3 * n + 1] = r * sin(th) * sin(ph);
      v[3 * n + 2] = -r * cos(th);
      ++n;
    }
  }
  v[3 * n] = cx; v[3 * n + 1] = 0; v[3 * n + 2] = r; ++n;
  for (int j = 0; j < seg; ++j) {
    uint32_t a = 1 + j, b = 1 + (j + 1) % seg;
    t[3 * nt] = 0; t[3 * nt + 1] = b; t[3 * nt + 2] = a; ++nt;
  }
  for (int i = 0; i < rings - 2; ++i) {
    for (int j = 0; j < seg; ++j) {
      uint32_t a = 1 + i * seg + j, b = 1 + i * seg + (j + 1) % seg;
      uint32_t c = a + seg, d = b + seg;
      t[3 * nt] = a; t[3 * nt + 1] = b; t[3 * nt + 2] = d; ++nt;
      t[3 * nt] = a; t[3 * nt + 1] = d; t[3 * nt + 2] = c; ++nt;
    }
  }
  uint32_t top = (uint32_t)(n - 1), base = 1 + (rings - 2) * seg;
  for (int j = 0; j < seg; ++j) {
    uint32_t a = base + j, b = base + (j + 1) % seg;
    t[3 * nt] = a; t[3 * nt + 1] = b; t[3 * nt + 2] = top; ++nt;
  }
  for (size_t k = 0; k < n; ++k) {
    double x = (v[3 * k] + 1.5) / 3.0;
    x = x < 0 ? 0 : (x > 1 ? 1 : x);
    w[2 * k] = 1 - x;
    w[2 * k + 1] = x;
  }
  *tcount = nt;
  return n;
}

/* Two spheres as two parts of one body, bound asynchronously: a bind cancelled mid-way returns
 * "cancelled" and writes no sidecar; a full bind reports non-decreasing fractions (several
 * distinct values) and stage texts, then steps with the contract kept and the parts' offsets. */
static int async_bind(void) {
  enum { RINGS = 24, SEG = 40, MAXV = 2 + 23 * 40, MAXT = 2 * 24 * 40 };
  static double v1[3 * MAXV], v2[3 * MAXV], w1[2 * MAXV], w2[2 * MAXV];
  static uint32_t t1[3 * MAXT], t2[3 * MAXT];
  size_t nt1, nt2;
  size_t n1 = sphere(-0.7, 0.6, RINGS, SEG, v1, t1, w1, &nt1);
  size_t n2 = sphere(0.7, 0.6, RINGS, SEG, v2, t2, w2, &nt2);
  overtone_part parts[2] = {{v1, n1, t1, nt1, w1, NULL, NULL, NULL}, {v2, n2, t2, nt2, w2, NULL, NULL, NULL}};
  double pose[24] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  overtone_settings s;
  overtone_default_settings(&s);
  s.use_lattice_resolution = true;
  s.lattice_resolution = 48;
  char err[512], stage[128];
  char sidecar[256];
  snprintf(sidecar, sizeof sidecar, "/tmp/overtone-c-abi-%d.ovt", (int)getpid());
  unlink(sidecar);
  overtone_bind* b = NULL;
  struct timespec nap = {0, 1000000};
  /* Cancelled mid-bind. */
  if (bind1(&s, parts, 2, 2, pose, sidecar, &b, err, sizeof err) != 0) {
    printf("FAIL bind_start: %s\n", err);
    return 1;
  }
  double f = 0.0;
  int st;
  while ((st = overtone_bind_poll(b, &f, stage, sizeof stage)) == OVERTONE_BIND_RUNNING && f < 0.3) {
    nanosleep(&nap, NULL);
  }
  if (st != OVERTONE_BIND_RUNNING) {
    printf("FAIL: the bind finished (state %d) before it could be cancelled\n", st);
    return 1;
  }
  printf("C ABI: cancelling at %.2f (%s)\n", f, stage);
  overtone_bind_cancel(b);
  overtone_deformer* d = NULL;
  if (overtone_bind_take(b, &d, err, sizeof err) == 0 || d != NULL || strstr(err, "cancelled") == NULL) {
    printf("FAIL: a cancelled bind gave a deformer or the message %s\n", err);
    return 1;
  }
  if (overtone_bind_poll(b, NULL, NULL, 0) != OVERTONE_BIND_CANCELLED || access(sidecar, F_OK) == 0) {
    printf("FAIL: state after cancel, or the sidecar was written\n");
    return 1;
  }
  overtone_bind_destroy(b);
  /* Full bind, polled. */
  if (bind1(&s, parts, 2, 2, pose, sidecar, &b, err, sizeof err) != 0) {
    printf("FAIL bind_start: %s\n", err);
    return 1;
  }
  double last = -1.0;
  int distinct = 0, polls = 0;
  while ((st = overtone_bind_poll(b, &f, stage, sizeof stage)) == OVERTONE_BIND_RUNNING) {
    if (f < last) {
      printf("FAIL: fraction decreased %.4f -> %.4f\n", last, f);
      return 1;
    }
    if (f > last) ++distinct;
    last = f;
    ++polls;
    nanosleep(&nap, NULL);
  }
  overtone_bind_poll(b, &f, stage, sizeof stage);
  if (st != OVERTONE_BIND_DONE || f != 1.0 || distinct < 3) {
    printf("FAIL: state %d, final fraction %.3f, %d distinct fractions in %d polls\n", st, f, distinct, polls);
    return 1;
  }
  if (overtone_bind_take(b, &d, err, sizeof err) != 0) {
    printf("FAIL bind_take: %s\n", err);
    return 1;
  }
  overtone_bind_destroy(b);
  if (overtone_part_count(d) != 2 || overtone_part_offset(d, 1) != n1 || overtone_part_offset(d, 2) != n1 + n2 ||
      overtone_vertex_count(d) != n1 + n2 || access(sidecar, F_OK) != 0) {
    printf("FAIL: parts / sizes / sidecar after the bind\n");
    return 1;
  }
  static double out[3 * 2 * MAXV];
  double worst = 0.0, peak = 0.0;
  for (int k = 1; k < 12; ++k) {
    double a = 0.6 * sin(0.5 * k), c = cos(a), sn = sin(a);
    /* bone 1 rotates about z through the origin */
    double p[24] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, c, -sn, 0, 0, sn, c, 0, 0, 0, 0, 1, 0};
    if (step1(d, p, NULL, out, err, sizeof err) != 0) {
      printf("FAIL step after async bind: %s\n", err);
      return 1;
    }
    if (overtone_residual(d) > worst) worst = overtone_residual(d);
    for (size_t i = 0; i < 3 * (n1 + n2); ++i) peak = fabs(out[i]) > peak ? fabs(out[i]) : peak;
  }
  if (worst > 1e-8 || !(peak > 1e-5)) {
    printf("FAIL: async-bound deformer residual %.2e, peak %.2e\n", worst, peak);
    return 1;
  }
  printf("C ABI async bind ok: %d distinct fractions in %d polls, residual %.2e, peak %.3f\n", distinct, polls,
         worst, peak);
  overtone_destroy(d);
  /* Bad input is refused at start (a part without triangles), and NULL handles are harmless. */
  overtone_part bad = {v1, n1, t1, 0, w1, NULL, NULL, NULL};
  if (bind1(&s, &bad, 1, 2, pose, "", &b, err, sizeof err) == 0 || b != NULL) {
    printf("FAIL: a part without triangles was accepted\n");
    return 1;
  }
  if (overtone_bind_poll(NULL, NULL, NULL, 0) != -1) return 1;
  overtone_bind_cancel(NULL);
  overtone_bind_destroy(NULL);
  unlink(sidecar);
  return 0;
}

/* The settings layout: the bridge's field list (exported by the Rust side) and the library's
 * compiled layout name the same fields in the same order; this program's own offsetof/sizeof
 * (compiled as C) agree with the library's; each field's size is its type's; the fields cover
 * the struct up to alignment padding. Prints the layout for the ctypes check. */
#define FIELD(name) {#name, offsetof(overtone_settings, name), sizeof(((overtone_settings*)0)->name)},
static int settings_layout(void) {
  struct {
    const char* name;
    size_t offset, size;
  } mine[] = {OVERTONE_SETTINGS_FIELDS(FIELD)};
  const size_t count = sizeof mine / sizeof mine[0];
  char fields[2048], layout[2048];
  if (overtone_settings_fields(fields, sizeof fields) >= sizeof fields ||
      overtone_settings_layout(layout, sizeof layout) >= sizeof layout) {
    printf("FAIL: layout strings truncated\n");
    return 1;
  }
  printf("settings fields (Rust): %s\nsettings layout (C): %s\n", fields, layout);
  char* fs = fields;
  char* ls = layout;
  size_t end = 0;
  for (size_t i = 0; i <= count; ++i) {
    char* f = strsep(&fs, ",");
    char* l = strsep(&ls, ",");
    if (i == count) {
      /* Both lists end here: the library's sizeof entry, no further Rust field. */
      size_t size = 0;
      if (f != NULL || l == NULL || sscanf(l, "sizeof:%zu", &size) != 1 || size != sizeof(overtone_settings) ||
          end > size || size - end >= 8) {
        printf("FAIL: field count or struct size (Rust extra field %s, C %s, end %zu, sizeof %zu)\n",
               f ? f : "-", l ? l : "-", end, sizeof(overtone_settings));
        return 1;
      }
      break;
    }
    if (f == NULL || l == NULL) {
      printf("FAIL: the lists end before field %s\n", mine[i].name);
      return 1;
    }
    char* kind = strchr(f, ':');
    char lname[64];
    size_t off = 0, size = 0;
    if (kind == NULL || sscanf(l, "%63[^:]:%zu:%zu", lname, &off, &size) != 3) {
      printf("FAIL: malformed entries %s / %s\n", f, l);
      return 1;
    }
    *kind++ = '\0';
    size_t want = strcmp(kind, "f64") == 0     ? sizeof(double)
                  : strcmp(kind, "usize") == 0 ? sizeof(size_t)
                  : strcmp(kind, "bool") == 0  ? sizeof(bool)
                  : strcmp(kind, "enum") == 0  ? sizeof(overtone_solver)
                  : strcmp(kind, "f64x3") == 0 ? 3 * sizeof(double)
                                               : 0;
    if (strcmp(f, mine[i].name) != 0 || strcmp(lname, mine[i].name) != 0 || off != mine[i].offset ||
        size != mine[i].size || size != want || off < end) {
      printf("FAIL: field %zu is %s:%s in Rust, %s at %zu (%zu bytes) in the library, %s at %zu (%zu) here\n",
             i, f, kind, lname, off, size, mine[i].name, mine[i].offset, mine[i].size);
      return 1;
    }
    end = off + size;
  }
  printf("settings layout ok: %zu fields, %zu bytes\n", count, sizeof(overtone_settings));
  return 0;
}

/* Damping and strength change between frames without a rebind: strength 2 doubles the output
 * (to 1e-12 relative), a damping change keeps the deformer working and is refused when
 * negative (nothing changes then), and a bad stiffness field is refused at create. */
static int controls(const overtone_settings* base, const double* rest, const uint32_t* tris,
                    const double* weights) {
  char err[512];
  overtone_settings s = *base;
  double pose[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  double stiff[6] = {-1, -1, 10, 10, -1, -1};
  overtone_deformer *a = NULL, *b = NULL;
  if (create1(&s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, stiff, pose, "", &a, err, sizeof err) != 0 ||
      create1(&s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, stiff, pose, "", &b, err, sizeof err) != 0) {
    printf("FAIL create with stiffness: %s\n", err);
    return 1;
  }
  if (controls1(b, &s, s.damping, 2.0, err, sizeof err) != 0 ||
      controls1(b, &s, -0.5, 1.0, err, sizeof err) == 0) {
    printf("FAIL: set_controls: %s\n", err);
    return 1;
  }
  double ua[18], ub[18], worst = 0.0, peak = 0.0;
  for (int k = 1; k < 12; ++k) {
    pose[3] = 0.3 * sin(0.6 * k);
    if (step1(a, pose, NULL, ua, err, sizeof err) != 0 || step1(b, pose, NULL, ub, err, sizeof err) != 0) {
      printf("FAIL step: %s\n", err);
      return 1;
    }
    for (int i = 0; i < 18; ++i) {
      worst = fmax(worst, fabs(ub[i] - 2.0 * ua[i]));
      peak = fmax(peak, fabs(ua[i]));
    }
  }
  if (peak <= 0.0 || worst > 1e-12 * peak) {
    printf("FAIL: strength 2 gives %.3e off twice strength 1 (peak %.3e)\n", worst, peak);
    return 1;
  }
  if (controls1(a, &s, 0.6, 1.0, err, sizeof err) != 0 || step1(a, pose, NULL, ua, err, sizeof err) != 0) {
    printf("FAIL: damping change mid-run: %s\n", err);
    return 1;
  }
  overtone_destroy(a);
  overtone_destroy(b);
  double bad[6] = {1, 1, 0, 1, 1, 1};
  overtone_deformer* c = NULL;
  if (create1(&s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, bad, pose, "", &c, err, sizeof err) == 0 || c) {
    printf("FAIL: a zero stiffness was accepted\n");
    return 1;
  }
  printf("C ABI controls ok: strength 2 = 2 x strength 1 to %.1e (peak %.3e); refused: %s\n", worst, peak, err);
  s.integrator = (overtone_integrator)7;
  if (create1(&s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, NULL, pose, "", &c, err, sizeof err) == 0) {
    printf("FAIL: integrator 7 accepted\n");
    return 1;
  }
  printf("refused as expected: %s\n", err);
  return 0;
}

/* The pull-back: two bones (a uniform scale by 2, a quarter turn about z), four vertices in two
 * parts (M = I, M = 2 I); A_v (M_p^-1 d_v) must give u_v back, a bone scaled to zero gives 0 for
 * the vertices weighted to it alone, bad input is refused with `out` untouched. */
static int pull_back(void) {
  double w[] = {1, 0, 0, 1, 0.25, 0.75, 0.5, 0.5};
  double t[24] = {2, 0, 0, 5, 0, 2, 0, 6, 0, 0, 2, 7, 0, -1, 0, 1, 1, 0, 0, 2, 0, 0, 1, 3};
  size_t pv[] = {2, 2};
  double pm[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0, 0, 2};
  double u[12] = {0.1, -0.2, 0.3, 1, 2, 3, -1, 0.5, 0.25, 0.7, -0.7, 0.1}, d[12];
  char err[512];
  overtone_pullback* p = NULL;
  if (overtone_pullback_create(w, 4, 2, pv, pm, 2, &p, err, sizeof err) != 0) {
    printf("FAIL pullback_create: %s\n", err);
    return 1;
  }
  if (overtone_pullback_apply(p, t, u, d, err, sizeof err) != 0) {
    printf("FAIL pullback_apply: %s\n", err);
    return 1;
  }
  double worst = 0.0;
  for (int v = 0; v < 4; ++v) {
    double m = v < 2 ? 1.0 : 2.0;
    for (int i = 0; i < 3; ++i) {
      double s = 0.0;
      for (int j = 0; j < 3; ++j) {
        double a = w[2 * v] * t[4 * i + j] + w[2 * v + 1] * t[12 + 4 * i + j];
        s += a * d[3 * v + j] / m;
      }
      if (fabs(s - u[3 * v + i]) > worst) worst = fabs(s - u[3 * v + i]);
    }
  }
  if (worst > 1e-14) {
    printf("FAIL: pull-back residual %.2e\n", worst);
    return 1;
  }
  t[0] = t[5] = t[10] = 0.0; /* bone 0 scaled to zero: vertex 0 (bone 0 alone) is singular */
  if (overtone_pullback_apply(p, t, u, d, err, sizeof err) != 0 || d[0] != 0.0 || d[1] != 0.0 ||
      d[2] != 0.0 || d[3] == 0.0) {
    printf("FAIL: singular blend %g %g %g (%s)\n", d[0], d[1], d[2], err);
    return 1;
  }
  u[4] = NAN;
  d[0] = 42.0;
  if (overtone_pullback_apply(p, t, u, d, err, sizeof err) == 0 || d[0] != 42.0) {
    printf("FAIL: a NaN displacement was accepted\n");
    return 1;
  }
  printf("C ABI pull-back ok (residual %.2e); refused as expected: %s\n", worst, err);
  overtone_pullback_destroy(p);
  w[3] = -1.0;
  if (overtone_pullback_create(w, 4, 2, NULL, NULL, 0, &p, err, sizeof err) == 0 || p != NULL) {
    printf("FAIL: a negative weight was accepted\n");
    return 1;
  }
  w[3] = 1.0;
  pv[1] = 3;
  if (overtone_pullback_create(w, 4, 2, pv, pm, 2, &p, err, sizeof err) == 0 || p != NULL) {
    printf("FAIL: part vertex counts that do not sum to the vertices were accepted\n");
    return 1;
  }
  if (overtone_pullback_apply(NULL, t, u, d, err, sizeof err) == 0) return 1;
  overtone_pullback_destroy(NULL);
  return 0;
}

/* Creates a deformer with `sidecar` and returns its cache state (-2 if the create failed). */
static int create_with_sidecar(const overtone_settings* s, const double* rest, const uint32_t* tris,
                               const double* weights, const double* pose, const char* sidecar) {
  char err[512], status[256];
  overtone_deformer* d = NULL;
  if (create1(s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, NULL, pose, sidecar, &d, err, sizeof err) != 0) {
    printf("FAIL create with sidecar %s: %s\n", sidecar, err);
    return -2;
  }
  int state = overtone_cache_state(d);
  overtone_cache_status(d, status, sizeof status);
  printf("C ABI cache %d: %s\n", state, status);
  overtone_destroy(d);
  return state;
}

/* BUILT on the first create with a sidecar, LOADED on the second, UNUSABLE once the file is
 * corrupt, WRITE_FAILED where it cannot be written. */
static int cache_states(const overtone_settings* s, const double* rest, const uint32_t* tris,
                        const double* weights, const double* pose) {
  const char* path = "target/cpp/test_c_abi.cache.ovt";
  remove(path);
  int built = create_with_sidecar(s, rest, tris, weights, pose, path);
  int loaded = create_with_sidecar(s, rest, tris, weights, pose, path);
  FILE* f = fopen(path, "wb");
  if (f) {
    fputs("not a sidecar", f);
    fclose(f);
  }
  int unusable = create_with_sidecar(s, rest, tris, weights, pose, path);
  remove(path);
  int write_failed = create_with_sidecar(s, rest, tris, weights, pose, "target/cpp/no-such-dir/cache.ovt");
  if (built != OVERTONE_CACHE_BUILT || loaded != OVERTONE_CACHE_LOADED || unusable != OVERTONE_CACHE_UNUSABLE ||
      write_failed != OVERTONE_CACHE_WRITE_FAILED) {
    printf("FAIL: cache states %d %d %d %d, expected %d %d %d %d\n", built, loaded, unusable, write_failed,
           OVERTONE_CACHE_BUILT, OVERTONE_CACHE_LOADED, OVERTONE_CACHE_UNUSABLE, OVERTONE_CACHE_WRITE_FAILED);
    return 1;
  }
  return 0;
}

int main(void) {
  if (settings_layout() != 0) return 1;
  if (pull_back() != 0) return 1;
  if (async_bind() != 0) return 1;
  /* A single tetrahedron-like closed surface: an octahedron with one bone. */
  double rest[] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1.3, 0, 0, -1.3};
  uint32_t tris[] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
  double weights[] = {1, 1, 1, 1, 1, 1};
  double pose[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  char err[512];
  overtone_settings s;
  overtone_default_settings(&s);
  s.use_lattice_resolution = true;
  s.lattice_resolution = 8;
  s.clusters = 20;
  s.modes = 4;
  if (controls(&s, rest, tris, weights) != 0) return 1;
  overtone_deformer* d = NULL;
  if (create1(&s, rest, 6, tris, 8, weights, 1, NULL, 0, NULL, NULL, pose, "", &d, err, sizeof err) != 0) {
    printf("FAIL create: %s\n", err);
    return 1;
  }
  double out[18];
  for (int k = 1; k < 10; ++k) {
    pose[3] = 0.2 * sin(0.5 * k);
    if (step1(d, pose, NULL, out, err, sizeof err) != 0) {
      printf("FAIL step: %s\n", err);
      return 1;
    }
  }
  pose[0] = NAN;
  if (step1(d, pose, NULL, out, err, sizeof err) == 0) {
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
  if (step1(d, pose, NULL, out, err, sizeof err) != 0) {
    printf("FAIL: the deformer stopped working after a contained panic: %s\n", err);
    return 1;
  }
  printf("C ABI ok (residual %.2e, cache: %s); panic contained: %s\n", overtone_residual(d), status, err);
  if (overtone_cache_state(d) != OVERTONE_CACHE_NOT_REQUESTED || overtone_cache_state(NULL) != -1) {
    printf("FAIL: cache state without a sidecar %d, of null %d\n", overtone_cache_state(d),
           overtone_cache_state(NULL));
    return 1;
  }
  overtone_destroy(d);
  if (cache_states(&s, rest, tris, weights, pose) != 0) return 1;

  /* A blendshape rig: one target lifting the top vertex; only the target weight animates. */
  double delta[18] = {0};
  delta[3 * 4 + 2] = 0.4;
  double bw = 0.0;
  pose[0] = 1.0;
  pose[3] = 0.0;
  if (create1(&s, rest, 6, tris, 8, weights, 1, delta, 1, &bw, NULL, pose, "", &d, err,
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
    if (step1(d, pose, &bw, out, err, sizeof err) != 0) {
      printf("FAIL step_with_morphs: %s\n", err);
      return 1;
    }
    if (overtone_residual(d) > worst) worst = overtone_residual(d);
  }
  if (worst > 1e-8) {
    printf("FAIL: blendshape rig residual %.2e\n", worst);
    return 1;
  }
  if (step1(d, pose, NULL, out, err, sizeof err) == 0) {
    printf("FAIL: a step without the blendshape weights was accepted\n");
    return 1;
  }
  printf("C ABI blendshapes ok (residual %.2e); refused as expected: %s\n", worst, err);
  overtone_destroy(d);
  return 0;
}
