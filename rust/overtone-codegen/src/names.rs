//! Names and literals shared by the generators.

use overtone::settings::{Spec, Value};

/// `youngs_modulus` → `YoungsModulus`.
pub fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect()
}

/// `youngs_modulus` → `youngsModulus` (Maya attribute names).
pub fn lower_camel(snake: &str) -> String {
    let c = camel(snake);
    let mut it = c.chars();
    it.next()
        .map_or(String::new(), |f| f.to_lowercase().chain(it).collect())
}

/// `RestShape` → `rest_shape`.
pub fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, ch) in camel.chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(ch.to_lowercase());
    }
    out
}

/// The enum type name of a choice setting (its Rust type: `Integrator`, `RestShape`).
pub fn enum_name(s: &Spec) -> &'static str {
    s.rust_type
}

/// The C name of a choice setting's enum (`overtone_rest_shape`).
pub fn c_enum(s: &Spec) -> String {
    format!("overtone_{}", snake(enum_name(s)))
}

/// The C constant of choice `choice` of `s` (`OVERTONE_REST_SHAPE_RIG`).
pub fn c_constant(s: &Spec, choice: &str) -> String {
    format!(
        "OVERTONE_{}_{}",
        snake(enum_name(s)).to_uppercase(),
        choice.to_uppercase()
    )
}

/// The flag field of an optional setting.
pub fn use_flag(s: &Spec) -> String {
    format!("use_{}", s.name)
}

/// A floating-point literal every target language reads back exactly (`25000.0`, `0.1`, `1e-12`).
pub fn float(x: f64) -> String {
    let t = format!("{x:?}");
    if t.contains('.') || t.contains('e') || t.contains("inf") || t.contains("NaN") {
        t
    } else {
        format!("{t}.0")
    }
}

/// The default of `s` as a number (choices: the index; booleans 0/1; optional: the value shown
/// while unset), and whether an optional setting is set by default.
pub fn default_number(s: &Spec) -> (f64, bool) {
    match s.default_value() {
        Value::F64(x) => (x, true),
        Value::Count(n) => (n as f64, true),
        Value::Bool(b) => (if b { 1.0 } else { 0.0 }, true),
        Value::Choice(i) => (i as f64, true),
        Value::Vec3(_) => (0.0, true),
        Value::Unset => (s.unset_value, false),
    }
}

/// One line of the doc for a comment: the doc's first sentence.
pub fn first_sentence(doc: &str) -> String {
    let d = doc.trim();
    match d.find(". ") {
        Some(i) => d[..=i].to_string(),
        None => d.to_string(),
    }
}

/// The doc with the unit and what "unset" means, for tooltips and the docs page.
pub fn full_doc(s: &Spec) -> String {
    let mut d = s.doc.trim().to_string();
    if !s.unset.is_empty() {
        d.push_str(&format!(" Unset: {}.", s.unset));
    }
    d
}
