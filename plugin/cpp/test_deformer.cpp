// Drives a skinned tube through overtone::Deformer: the rig contract holds every frame, bad
// input comes back as a status (state unchanged), and a Rust panic inside the bridge is an
// error status while the process survives. Exit code 0 on success.
// `test_deformer --settings-layout` instead prints the settings layouts for
// scripts/check_settings_layout.py: the Rust bridge's (`rust ...`) and overtone::Settings's
// (`c++ ...`), each `name:type:offset:size,...,sizeof:N` (Rust without the type).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "rust/cxx.h"
#include "overtone-ffi/src/lib.rs.h"
#include "overtone.hpp"

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

struct Tube {
  std::vector<double> rest, weights;
  std::vector<std::uint32_t> tris;
};

Tube tube() {
  const int rings = 16, seg = 12;
  Tube t;
  for (int r = 0; r < rings; ++r) {
    double y = 3.0 * r / (rings - 1);
    double w = std::fmin(std::fmax(y - 1.0, 0.0), 1.0);
    for (int s = 0; s < seg; ++s) {
      double a = 2.0 * M_PI * s / seg;
      t.rest.insert(t.rest.end(), {0.25 * std::cos(a), y, 0.25 * std::sin(a)});
      t.weights.insert(t.weights.end(), {1.0 - w, w});
    }
  }
  for (int r = 0; r + 1 < rings; ++r)
    for (int s = 0; s < seg; ++s) {
      std::uint32_t a = r * seg + s, b = r * seg + (s + 1) % seg;
      t.tris.insert(t.tris.end(), {a, a + seg, b, b, a + seg, b + static_cast<std::uint32_t>(seg)});
    }
  std::uint32_t bottom = t.rest.size() / 3, top = bottom + 1;
  t.rest.insert(t.rest.end(), {0, 0, 0, 0, 3, 0});
  t.weights.insert(t.weights.end(), {1, 0, 0, 1});
  for (int s = 0; s < seg; ++s) {
    t.tris.insert(t.tris.end(), {bottom, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>((s + 1) % seg)});
    std::uint32_t a = (rings - 1) * seg + s, b = (rings - 1) * seg + (s + 1) % seg;
    t.tris.insert(t.tris.end(), {top, b, a});
  }
  return t;
}

std::vector<double> pose(double angle) {
  double c = std::cos(angle), s = std::sin(angle);
  double tx = -(c * 0.0 - s * 1.5), ty = 1.5 - (s * 0.0 + c * 1.5);
  return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, c, -s, 0, tx, s, c, 0, ty, 0, 0, 1, 0};
}
// The type of a settings field in the bridge's names (f64 usize bool u8 f64x3), "?" otherwise.
template <typename T>
const char* type_name() {
  if (std::is_same<T, double>::value) return "f64";
  if (std::is_same<T, std::size_t>::value) return "usize";
  if (std::is_same<T, bool>::value) return "bool";
  if (std::is_same<T, std::uint8_t>::value) return "u8";
  if (std::is_same<T, double[3]>::value) return "f64x3";
  return "?";
}

// One list of overtone::Settings's fields in declaration order (a field missing here is caught
// by the script: the Rust list then has a name this one lacks).
int print_settings_layout() {
  std::printf("rust %s\n", std::string(overtone::ffi::settings_layout()).c_str());
  std::string text;
#define OVERTONE_FIELD(name)                                                              \
  text += std::string(text.empty() ? "" : ",") + #name + ":" +                            \
          type_name<decltype(overtone::Settings::name)>() + ":" +                        \
          std::to_string(offsetof(overtone::Settings, name)) + ":" +                      \
          std::to_string(sizeof(overtone::Settings::name));
  OVERTONE_FIELD(youngs_modulus)
  OVERTONE_FIELD(poisson_ratio)
  OVERTONE_FIELD(density)
  OVERTONE_FIELD(fps)
  OVERTONE_FIELD(lattice_resolution)
  OVERTONE_FIELD(fast)
  OVERTONE_FIELD(modes)
  OVERTONE_FIELD(clusters)
  OVERTONE_FIELD(integrator)
  OVERTONE_FIELD(substeps)
  OVERTONE_FIELD(damping)
  OVERTONE_FIELD(frequency)
  OVERTONE_FIELD(rest)
  OVERTONE_FIELD(time_scale)
  OVERTONE_FIELD(preroll)
  OVERTONE_FIELD(strength)
  OVERTONE_FIELD(cut_distance)
  OVERTONE_FIELD(gravity)
#undef OVERTONE_FIELD
  std::printf("c++ %s,sizeof:%zu\n", text.c_str(), sizeof(overtone::Settings));
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--settings-layout") return print_settings_layout();
  Tube t = tube();
  const std::size_t n = t.rest.size() / 3;
  overtone::Deformer d;
  auto settings = overtone::Settings::defaults();

  // Bad input at creation: a triangle index out of range.
  auto bad_tris = t.tris;
  bad_tris[4] = 100000;
  auto st = d.create(settings, t.rest.data(), n, bad_tris.data(), bad_tris.size() / 3,
                     t.weights.data(), 2, nullptr, pose(0).data(), "");
  check(!st.ok && !d.valid(), "out-of-range triangle refused");
  std::printf("refused as expected: %s\n", st.message.c_str());

  st = d.create(settings, t.rest.data(), n, t.tris.data(), t.tris.size() / 3, t.weights.data(), 2,
                nullptr, pose(0).data(), "");
  check(st.ok && d.valid(), st.message.c_str());
  std::vector<double> out(3 * n);
  double peak = 0;
  for (int k = 1; k < 40; ++k) {
    auto p = pose(0.8 * std::sin(0.3 * k));
    st = d.step(p.data(), out.data());
    check(st.ok, st.message.c_str());
    check(d.residual() <= 1e-8, "rig-orthogonality residual");
    for (double x : out) {
      check(std::isfinite(x), "finite displacement");
      peak = std::fmax(peak, std::fabs(x));
    }
  }
  check(peak > 1e-4, "secondary motion present");

  // A NaN pose is refused and changes nothing.
  auto bad = pose(0.1);
  bad[5] = NAN;
  auto before = out;
  st = d.step(bad.data(), out.data());
  check(!st.ok, "NaN pose refused");
  std::printf("refused as expected: %s\n", st.message.c_str());

  // A panic inside Rust comes back as a status; the deformer still works afterwards.
  st = d.debug_panic();
  check(!st.ok, "panic reported as an error");
  std::printf("panic contained: %s\n", st.message.c_str());
  st = d.step(pose(0.2).data(), out.data());
  check(st.ok, "deformer usable after a contained panic");

  // Controls: strength 0.5 halves the output of the next frame relative to a twin at 1 (same
  // state), damping can change mid-run, bad values are refused; a painted stiffness binds.
  check(settings.strength == 1.0 && settings.substeps == 0 && settings.gravity[2] == 0.0,
        "default controls");
  check(overtone::Settings::field_list().find("gravity:f64x3") != std::string::npos, "field list");
  std::vector<double> stiff(n, -1.0);
  for (std::size_t v = n / 2; v < n; ++v) stiff[v] = 10.0;
  overtone::Deformer e, f;
  st = e.create(settings, t.rest.data(), n, t.tris.data(), t.tris.size() / 3, t.weights.data(), 2,
                nullptr, pose(0).data(), "", stiff.data());
  check(st.ok, st.message.c_str());
  st = f.create(settings, t.rest.data(), n, t.tris.data(), t.tris.size() / 3, t.weights.data(), 2,
                nullptr, pose(0).data(), "", stiff.data());
  check(st.ok, st.message.c_str());
  std::vector<double> ue(3 * n), uf(3 * n);
  double worst = 0, top = 0;
  for (int k = 1; k < 20; ++k) {
    if (k == 8) {
      check(e.set_controls(0.4, 1.0).ok && f.set_controls(0.4, 0.5).ok, "set_controls");
      check(!f.set_controls(0.4, -1.0).ok && !f.set_controls(NAN, 1.0).ok, "bad controls refused");
    }
    auto p = pose(0.8 * std::sin(0.3 * k));
    check(e.step(p.data(), ue.data()).ok && f.step(p.data(), uf.data()).ok, "step with controls");
    for (std::size_t i = 0; i < 3 * n; ++i) {
      double want = k >= 8 ? 0.5 * ue[i] : ue[i];
      worst = std::fmax(worst, std::fabs(uf[i] - want));
      top = std::fmax(top, std::fabs(ue[i]));
    }
  }
  check(top > 1e-4 && worst <= 1e-12 * top, "strength 0.5 halves the output");
  std::printf("controls: strength 0.5 off by %.2e of %.3e\n", worst, top);

  // Cache states: none without a sidecar; built, then loaded from the same sidecar; unusable
  // (rebuilt, the text says why) once the file is corrupt; write failed where it cannot be written.
  check(d.cache_state() == overtone::CacheState::NotRequested, "no sidecar: NotRequested");
  check(overtone::Deformer().cache_state() == overtone::CacheState::NotRequested,
        "a deformer that was not created: NotRequested");
  const std::string sidecar = std::string(argv[0]) + ".cache.ovt";
  std::remove(sidecar.c_str());
  auto with_sidecar = [&](const std::string& path) {
    overtone::Deformer c;
    auto cst = c.create(settings, t.rest.data(), n, t.tris.data(), t.tris.size() / 3,
                        t.weights.data(), 2, nullptr, pose(0).data(), path);
    check(cst.ok, cst.message.c_str());
    std::printf("cache %d: %s\n", static_cast<int>(c.cache_state()), c.cache_status().c_str());
    return c.cache_state();
  };
  check(with_sidecar(sidecar) == overtone::CacheState::Built, "first create with a sidecar: Built");
  check(with_sidecar(sidecar) == overtone::CacheState::Loaded, "same sidecar again: Loaded");
  if (std::FILE* fp = std::fopen(sidecar.c_str(), "wb")) {
    std::fputs("not a sidecar", fp);
    std::fclose(fp);
  }
  check(with_sidecar(sidecar) == overtone::CacheState::Unusable, "corrupt sidecar: Unusable");
  check(with_sidecar(sidecar) == overtone::CacheState::Loaded, "rewritten sidecar: Loaded");
  std::remove(sidecar.c_str());
  check(with_sidecar(std::string(argv[0]) + ".no-such-dir/cache.ovt") ==
            overtone::CacheState::WriteFailed,
        "sidecar in a missing directory: WriteFailed");

  std::printf("%s: %zu vertices, peak displacement %.4g, residual %.2e, cache: %s\n",
              failures ? "FAILED" : "ok", n, peak, d.residual(), d.cache_status().c_str());
  return failures ? 1 : 0;
}
