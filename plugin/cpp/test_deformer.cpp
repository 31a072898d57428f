// Drives a skinned tube through overtone::Deformer: the rig contract holds every frame, bad
// input comes back as a status (state unchanged), and a Rust panic inside the bridge is an
// error status while the process survives. Exit code 0 on success.
// It also checks the Maya node's generated attribute table against the library's defaults.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "overtone.hpp"
#include "settings_attributes.inc"

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
// One mesh as a body of one part, with an optional stiffness field.
overtone::Part part_of(const Tube& t, const std::uint32_t* tris, const double* stiffness = nullptr) {
  overtone::Part p{};
  p.rest = t.rest.data();
  p.vertices = t.rest.size() / 3;
  p.triangles = tris;
  p.triangle_count = t.tris.size() / 3;
  p.weights = t.weights.data();
  p.stiffness = stiffness;
  return p;
}

overtone::Body body_of(const overtone::Part& part, const std::vector<double>& first_pose,
                       const char* sidecar = "") {
  overtone::Body b{};
  b.parts = &part;
  b.part_count = 1;
  b.bones = 2;
  b.first_pose.transforms = first_pose.data();
  b.sidecar = sidecar;
  return b;
}

overtone::Pose pose_of(const std::vector<double>& transforms) {
  overtone::Pose p{};
  p.transforms = transforms.data();
  return p;
}

// The Maya node's generated attribute table agrees with the library: writing every row's
// default into the library's defaults changes nothing, and a row is keyable exactly where the
// bound deformer `d` takes a (valid) change of it per frame; every other change needs a rebind.
// `defaults` are the settings `d` was bound with (the library's, but for a fixed lattice).
void check_maya_table(overtone::Deformer& d, const overtone::Settings& defaults) {
  const overtone::Settings library = overtone::default_settings();
  overtone::Settings s = library;
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    const auto& a = overtone_maya::kSettingAttributes[i];
    overtone_maya::apply_setting(i, a.default_value, a.default_set, s);
  }
  check(std::memcmp(&s, &library, sizeof s) == 0, "Maya table defaults are the library's");
  for (std::size_t i = 0; i < overtone_maya::kSettingCount; ++i) {
    const auto& a = overtone_maya::kSettingAttributes[i];
    overtone::Settings changed = defaults;
    if (a.optional) {
      overtone_maya::apply_setting(i, a.default_value, !a.default_set, changed);
    } else if (a.type == overtone_maya::SettingAttribute::Enum) {
      overtone_maya::apply_setting(i, 1.0 - a.default_value, true, changed);
    } else {
      const double v = a.default_value == 0.0 ? 1.0 : 0.5 * a.default_value;
      overtone_maya::apply_setting(i, a.type == overtone_maya::SettingAttribute::Int ? std::floor(v) : v, true,
                                   changed);
    }
    auto st = d.set_controls(changed);
    const bool rebind = !st.ok && st.kind == OVERTONE_ERROR_INVALID_SETTING &&
                        st.message.find("needs a new bind") != std::string::npos;
    check(a.keyable ? st.ok : rebind, a.long_name);
    if (!st.ok && !rebind) std::printf("  %s: %s\n", a.long_name, st.message.c_str());
    check(d.set_controls(defaults).ok, "back to the defaults");
  }
}
}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  Tube t = tube();
  const std::size_t n = t.rest.size() / 3;
  overtone::Deformer d;
  // The library's defaults but a fixed, coarse lattice: the automatic one puts eight cells across
  // the tube (48 along it) and each of the seven binds below would take seconds.
  auto settings = overtone::default_settings();
  settings.use_lattice_resolution = true;
  settings.lattice_resolution = 12;
  const auto p0 = pose(0);

  // Bad input at creation: a triangle index out of range.
  auto bad_tris = t.tris;
  bad_tris[4] = 100000;
  auto bad_part = part_of(t, bad_tris.data());
  auto st = d.create(settings, body_of(bad_part, p0));
  check(!st.ok && !d.valid() && st.kind == OVERTONE_ERROR_INVALID_INPUT, "out-of-range triangle refused as bad input");
  std::printf("refused as expected (kind %d): %s\n", st.kind, st.message.c_str());

  // A setting outside its range is refused by the core, with its kind.
  auto bad_settings = settings;
  bad_settings.damping = -1.0;
  auto part = part_of(t, t.tris.data());
  st = d.create(bad_settings, body_of(part, p0));
  check(!st.ok && st.kind == OVERTONE_ERROR_INVALID_SETTING && st.message.find("damping") != std::string::npos,
        "damping -1 refused as an invalid setting");
  bad_settings = settings;
  bad_settings.integrator = static_cast<overtone_integrator>(7);
  st = d.create(bad_settings, body_of(part, p0));
  check(!st.ok && st.kind == OVERTONE_ERROR_INVALID_SETTING, "unknown integrator code refused");

  st = d.create(settings, body_of(part, p0));
  check(st.ok && d.valid(), st.message.c_str());
  std::vector<double> out(3 * n);
  double peak = 0;
  for (int k = 1; k < 40; ++k) {
    auto p = pose(0.8 * std::sin(0.3 * k));
    st = d.step(pose_of(p), out.data());
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
  st = d.step(pose_of(bad), out.data());
  check(!st.ok && st.kind == OVERTONE_ERROR_INVALID_INPUT, "NaN pose refused as bad input");
  std::printf("refused as expected: %s\n", st.message.c_str());

  // A panic inside Rust comes back as a status; the deformer still works afterwards.
  st = d.debug_panic();
  check(!st.ok && st.kind == OVERTONE_ERROR_INTERNAL, "panic reported as an internal error");
  std::printf("panic contained: %s\n", st.message.c_str());
  st = d.step(pose_of(pose(0.2)), out.data());
  check(st.ok, "deformer usable after a contained panic");

  // Controls: strength 0.5 halves the output of the next frame relative to a twin at 1 (same
  // state), damping can change mid-run, bad values and non-animatable changes are refused; a
  // painted stiffness binds.
  check(settings.strength == 1.0 && !settings.use_substeps && settings.gravity[2] == 0.0 &&
            settings.solver == OVERTONE_SOLVER_FAST && !settings.use_max_displacement,
        "default controls");
  check(overtone::settings_field_list().find("gravity:f64x3") != std::string::npos, "field list");
  check_maya_table(d, settings);
  std::vector<double> stiff(n, -1.0);
  for (std::size_t v = n / 2; v < n; ++v) stiff[v] = 10.0;
  auto stiff_part = part_of(t, t.tris.data(), stiff.data());
  overtone::Deformer e, f;
  st = e.create(settings, body_of(stiff_part, p0));
  check(st.ok, st.message.c_str());
  st = f.create(settings, body_of(stiff_part, p0));
  check(st.ok, st.message.c_str());
  std::vector<double> ue(3 * n), uf(3 * n);
  double worst = 0, top = 0;
  for (int k = 1; k < 20; ++k) {
    if (k == 8) {
      auto c = settings;
      c.damping = 0.4;
      auto half = c;
      half.strength = 0.5;
      check(e.set_controls(c).ok && f.set_controls(half).ok, "set_controls");
      auto negative = half;
      negative.strength = -1.0;
      auto nan = half;
      nan.damping = NAN;
      check(!f.set_controls(negative).ok && !f.set_controls(nan).ok, "bad controls refused");
      auto stiffer = half;
      stiffer.youngs_modulus *= 2.0;
      auto rs = f.set_controls(stiffer);
      check(!rs.ok && rs.kind == OVERTONE_ERROR_INVALID_SETTING &&
                rs.message.find("youngs_modulus") != std::string::npos,
            "a non-animatable change needs a rebind");
    }
    auto p = pose(0.8 * std::sin(0.3 * k));
    check(e.step(pose_of(p), ue.data()).ok && f.step(pose_of(p), uf.data()).ok, "step with controls");
    for (std::size_t i = 0; i < 3 * n; ++i) {
      double want = k >= 8 ? 0.5 * ue[i] : ue[i];
      worst = std::fmax(worst, std::fabs(uf[i] - want));
      top = std::fmax(top, std::fabs(ue[i]));
    }
  }
  check(top > 1e-4 && worst <= 1e-12 * top, "strength 0.5 halves the output");
  std::printf("controls: strength 0.5 off by %.2e of %.3e\n", worst, top);

  // max_displacement reaches the C++ host: with a limit below the free peak, no vertex moves
  // further than limit x the bind surface's diagonal (the tube: 0.5 x 0.5 x 3).
  {
    auto limited = settings;
    limited.use_max_displacement = true;
    limited.max_displacement = 0.1 * peak / std::sqrt(0.25 + 0.25 + 9.0);
    const double bound = limited.max_displacement * std::sqrt(0.25 + 0.25 + 9.0);
    overtone::Deformer g;
    st = g.create(limited, body_of(part, p0));
    check(st.ok, st.message.c_str());
    double largest = 0;
    for (int k = 1; k < 40; ++k) {
      check(g.step(pose_of(pose(0.8 * std::sin(0.3 * k))), out.data()).ok, "limited step");
      for (std::size_t v = 0; v < n; ++v) {
        largest = std::fmax(largest, std::sqrt(out[3 * v] * out[3 * v] + out[3 * v + 1] * out[3 * v + 1] +
                                               out[3 * v + 2] * out[3 * v + 2]));
      }
    }
    check(largest <= bound * (1 + 1e-12) && largest >= 0.5 * bound, "max_displacement limits the output");
    std::printf("max_displacement: largest %.4g, limit %.4g\n", largest, bound);
  }

  // Cache states: none without a sidecar; built, then loaded from the same sidecar; unusable
  // (rebuilt, the text says why) once the file is corrupt; write failed where it cannot be written.
  check(d.cache_state() == overtone::CacheState::NotRequested, "no sidecar: NotRequested");
  check(overtone::Deformer().cache_state() == overtone::CacheState::NotRequested,
        "a deformer that was not created: NotRequested");
  const std::string sidecar = std::string(argv[0]) + ".cache.ovt";
  std::remove(sidecar.c_str());
  auto with_sidecar = [&](const std::string& path) {
    overtone::Deformer c;
    auto cst = c.create(settings, body_of(part, p0, path.c_str()));
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
