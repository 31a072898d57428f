//! The cxx bridge's settings struct, its enums and the error kinds (inside `mod ffi`), and the
//! conversions to and from [`overtone::Settings`] by field name.

use overtone::settings::{Base, Spec, SETTINGS};
use overtone::ErrorKind;

use super::names::{camel, enum_name, first_sentence, use_flag};

fn rust_type(s: &Spec) -> String {
    match s.kind.base {
        Base::F64 => "f64".into(),
        Base::Count => "usize".into(),
        Base::Bool => "bool".into(),
        Base::Vec3 => "[f64; 3]".into(),
        Base::Choice(_) => enum_name(s).into(),
    }
}

/// The shared types, indented for the inside of `mod ffi`.
pub fn types() -> String {
    let mut o = String::new();
    for s in SETTINGS.iter().filter(|s| s.choices().len() > 0) {
        o += &format!(
            "    /// The choices of setting `{}` (same values in C, C++ and Python).\n",
            s.name
        );
        o += "    #[repr(i32)]\n";
        o += &format!("    enum {} {{\n", enum_name(s));
        for (i, c) in s.choices().iter().enumerate() {
            o += &format!("        /// {}\n        {} = {i},\n", c.doc, camel(c.name));
        }
        o += "    }\n\n";
    }
    o += "    /// What kind of failure the last call on this thread had (`overtone::ErrorKind`, 0 none).\n";
    o += "    #[repr(i32)]\n    enum ErrorKind {\n        NoError = 0,\n";
    for k in ErrorKind::ALL {
        o += &format!("        {k:?} = {},\n", k as i32);
    }
    o += "    }\n\n";
    o += "    /// Every setting (`overtone::settings::SETTINGS`: units, ranges, defaults); an optional\n";
    o += "    /// setting is its `use_` flag (false: automatic / none) and its value.\n";
    o += "    #[derive(Clone)]\n    struct Settings {\n";
    for s in SETTINGS {
        if s.kind.optional {
            o += &format!("        /// Whether `{}` is set (false: {}).\n", s.name, s.unset);
            o += &format!("        {}: bool,\n", use_flag(s));
        }
        o += &format!("        /// {}\n", first_sentence(s.doc));
        o += &format!("        {}: {},\n", s.name, rust_type(s));
    }
    o += "    }\n";
    o
}

fn value_expr(s: &Spec, field: &str) -> String {
    match s.kind.base {
        Base::F64 => format!("Value::F64({field})"),
        Base::Count => format!("Value::Count({field})"),
        Base::Bool => format!("Value::Bool({field})"),
        Base::Vec3 => format!("Value::Vec3({field})"),
        // A negative code becomes an index past the choices, which `set` refuses.
        Base::Choice(_) => format!("Value::Choice(usize::try_from({field}.repr).unwrap_or(usize::MAX))"),
    }
}

fn field_expr(s: &Spec) -> String {
    let get = format!("c.value(\"{}\")", s.name);
    match s.kind.base {
        Base::F64 => format!("number(&{get})"),
        Base::Count => format!("number(&{get}) as usize"),
        Base::Bool => format!("matches!({get}, Some(Value::Bool(true)))"),
        Base::Vec3 => format!("match {get} {{ Some(Value::Vec3(g)) => g, _ => [0.0; 3] }}"),
        Base::Choice(_) => format!(
            "ffi::{} {{ repr: match {get} {{ Some(Value::Choice(i)) => i as i32, _ => 0 }} }}",
            enum_name(s)
        ),
    }
}

/// `settings_from_bridge` and `settings_to_bridge`, by field name.
pub fn conversions() -> String {
    let mut o = String::new();
    o += "/// The core's settings from the bridge's, every value checked against the table.\n";
    o += "fn settings_from_bridge(s: &ffi::Settings) -> overtone::Result<overtone::Settings> {\n";
    o += "    let mut c = overtone::Settings::default();\n";
    for s in SETTINGS {
        let v = value_expr(s, &format!("s.{}", s.name));
        if s.kind.optional {
            o += &format!(
                "    c.set(\"{}\", &if s.{} {{ {v} }} else {{ Value::Unset }})?;\n",
                s.name,
                use_flag(s)
            );
        } else {
            o += &format!("    c.set(\"{}\", &{v})?;\n", s.name);
        }
    }
    o += "    Ok(c)\n}\n\n";
    o += "/// The bridge's settings from the core's (an unset optional setting shows its table's\n";
    o += "/// `unset_value`).\n";
    o += "fn settings_to_bridge(c: &overtone::Settings) -> ffi::Settings {\n";
    o += "    let unset = |name: &str| overtone::settings::spec(name).map_or(0.0, |s| s.unset_value);\n";
    o += "    let number = |v: &Option<Value>| match *v {\n";
    o += "        Some(Value::F64(x)) => x,\n        Some(Value::Count(n)) => n as f64,\n";
    o += "        _ => f64::NAN,\n    };\n";
    o += "    ffi::Settings {\n";
    for s in SETTINGS {
        if s.kind.optional {
            let get = format!("c.value(\"{}\")", s.name);
            o += &format!("        {}: !matches!({get}, Some(Value::Unset)),\n", use_flag(s));
            let num = format!(
                "match {get} {{ Some(Value::Unset) => unset(\"{}\"), v => number(&v) }}",
                s.name
            );
            let val = if s.kind.base == Base::Count {
                format!("({num}) as usize")
            } else {
                num
            };
            o += &format!("        {}: {val},\n", s.name);
        } else {
            o += &format!("        {}: {},\n", s.name, field_expr(s));
        }
    }
    o += "    }\n}\n";
    o
}
