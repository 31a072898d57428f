//! The C header's settings struct and enums, the C++ conversions between it and the bridge's
//! struct (by field name), and the C layout list.

use overtone::settings::{Base, Spec, SETTINGS};
use overtone::ErrorKind;

use super::names::{c_constant, c_enum, enum_name, first_sentence, snake, use_flag};

fn c_field(s: &Spec) -> String {
    match s.kind.base {
        Base::F64 => format!("double {};", s.name),
        Base::Count => format!("size_t {};", s.name),
        Base::Bool => format!("bool {};", s.name),
        Base::Vec3 => format!("double {}[3];", s.name),
        Base::Choice(_) => format!("{} {};", c_enum(s), s.name),
    }
}

/// A short comment for a field: unit, default, range, unset meaning.
fn c_comment(s: &Spec) -> String {
    let mut parts = Vec::new();
    if !s.unit.is_empty() {
        parts.push(s.unit.to_string());
    }
    let r = s.range_text();
    if !r.is_empty() {
        parts.push(r);
    }
    parts.push(format!("default {}", s.format(&s.default_value())));
    if s.animatable {
        parts.push("animatable".into());
    }
    if s.precompute {
        parts.push("changes the precompute".into());
    }
    format!("{} ({})", first_sentence(s.doc), parts.join("; "))
}

/// The enums and `overtone_settings` of `overtone_c.h`.
pub fn header_types() -> String {
    let mut o = String::new();
    for s in SETTINGS.iter().filter(|s| !s.choices().is_empty()) {
        o += &format!("/* The choices of setting `{}`. */\ntypedef enum {{\n", s.name);
        for (i, c) in s.choices().iter().enumerate() {
            o += &format!("  {} = {i}, /* {} */\n", c_constant(s, c.name), c.label);
        }
        o += &format!("}} {};\n", c_enum(s));
    }
    o += "/* What every function that can fail returns: 0, or the kind of failure (overtone::ErrorKind):\n";
    o += " * a host retries a STEP_FAILED (the state is unchanged) and reports the others. */\n";
    o += "typedef enum {\n  OVERTONE_OK = 0,\n";
    for k in ErrorKind::ALL {
        o += &format!(
            "  OVERTONE_ERROR_{} = {},\n",
            snake(&format!("{k:?}")).to_uppercase(),
            k as i32
        );
    }
    o += "} overtone_status;\n";
    o += "/* Every setting, in the table's order (overtone::settings::SETTINGS; overtone_default_settings\n";
    o += " * fills the defaults). An optional setting is its use_ flag (false: automatic / none) and its\n";
    o += " * value. Only the animatable ones may change between frames (overtone_set_controls). */\n";
    o += "typedef struct {\n";
    for s in SETTINGS {
        if s.kind.optional {
            o += &format!("  bool {}; /* false: {} */\n", use_flag(s), s.unset);
        }
        o += &format!("  {} /* {} */\n", c_field(s), c_comment(s));
    }
    o += "} overtone_settings;\n";
    o += "/* X(field) for every field of overtone_settings in order (layout checks). */\n";
    o += "#define OVERTONE_SETTINGS_FIELDS(X)";
    for s in SETTINGS {
        if s.kind.optional {
            o += &format!(" \\\n  X({})", use_flag(s));
        }
        o += &format!(" \\\n  X({})", s.name);
    }
    o += "\n";
    o
}

/// `to_ffi` / `from_ffi` of `overtone.cpp`: the C struct to the bridge's and back, by name.
pub fn cpp_conversions() -> String {
    let to_ffi = copy_function("ffi::Settings to_ffi(const Settings& s)", "ffi::Settings", |s| {
        format!("ffi::{}", enum_name(s))
    });
    let from_ffi = copy_function("Settings from_ffi(const ffi::Settings& s)", "Settings", c_enum);
    format!("{to_ffi}\n{from_ffi}")
}

/// A C++ function `signature` that copies every field of `s` into a value-initialised `out`
/// (`out_type`), casting a choice to `enum_type` of its row.
fn copy_function(signature: &str, out_type: &str, enum_type: impl Fn(&Spec) -> String) -> String {
    let mut o = format!("{signature} {{\n  {out_type} out{{}};\n");
    for s in SETTINGS {
        if s.kind.optional {
            let f = use_flag(s);
            o += &format!("  out.{f} = s.{f};\n");
        }
        let n = s.name;
        o += &match s.kind.base {
            Base::Vec3 => format!("  for (int i = 0; i < 3; ++i) out.{n}[i] = s.{n}[i];\n"),
            Base::Choice(_) => format!("  out.{n} = static_cast<{}>(s.{n});\n", enum_type(s)),
            _ => format!("  out.{n} = s.{n};\n"),
        };
    }
    o + "  return out;\n}\n"
}

/// The C++ type of a field of the settings struct (for the Maya table).
pub fn cpp_value_type(s: &Spec) -> String {
    match s.kind.base {
        Base::F64 | Base::Vec3 => "double".into(),
        Base::Count => "std::size_t".into(),
        Base::Bool => "bool".into(),
        Base::Choice(_) => c_enum(s),
    }
}
