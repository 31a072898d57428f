//! The host files generated from the settings table ([`overtone::settings::SETTINGS`]) and the
//! error kinds ([`overtone::ErrorKind`]): the cxx bridge's struct and enums, the C header's, the
//! C++ conversions, the ctypes mirror, the Blender property table, the Maya attribute table and
//! the docs' settings page.
//!
//! A generated part of a hand-written file sits between two marker lines holding
//! `@generated begin NAME` and `@generated end NAME`; a wholly generated file starts with a
//! `@generated` line. `scripts/generate_host_files.sh` (this crate's binary) writes them; the test
//! `generated_host_files_are_current` fails when any of them differs from what the table gives.

mod bridge;
mod c_abi;
mod docs;
mod maya;
mod names;
mod python;

use std::path::Path;

/// Where one piece of generated text goes.
pub struct Output {
    /// Path from the repository root.
    pub path: &'static str,
    /// The marked region's name in a hand-written file; `None`: the whole file.
    pub region: Option<&'static str>,
    pub text: String,
}

/// Every generated piece.
pub fn outputs() -> Vec<Output> {
    let region = |path, name, text| Output {
        path,
        region: Some(name),
        text,
    };
    let whole = |path, text| Output {
        path,
        region: None,
        text,
    };
    vec![
        region("rust/overtone-ffi/src/lib.rs", "bridge-types", bridge::types()),
        region(
            "rust/overtone-ffi/src/lib.rs",
            "bridge-conversions",
            bridge::conversions(),
        ),
        region("plugin/cpp/overtone_c.h", "c-types", c_abi::header_types()),
        region("plugin/cpp/overtone.cpp", "cpp-conversions", c_abi::cpp_conversions()),
        region(
            "plugin/blender/overtone/native.py",
            "ctypes-types",
            python::ctypes_types(),
        ),
        whole("plugin/blender/overtone/settings_table.py", python::blender_table()),
        whole("plugin/maya/settings_attributes.inc", maya::attribute_table()),
        whole("docs/reference/settings.md", docs::settings_page()),
    ]
}

/// The file at `root/out.path` with the output spliced in (`Err` says what is malformed); a
/// Rust file as `rustfmt` leaves it (with the repository's `rustfmt.toml`), so `cargo fmt`
/// and the generator agree.
pub fn rendered(root: &Path, out: &Output) -> Result<String, String> {
    let path = root.join(out.path);
    let text = match out.region {
        None => out.text.clone(),
        Some(name) => {
            let old = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", out.path))?;
            splice(&old, name, &out.text).map_err(|e| format!("{}: {e}", out.path))?
        }
    };
    if out.path.ends_with(".rs") {
        rustfmt(root, &text).map_err(|e| format!("{}: {e}", out.path))
    } else {
        Ok(text)
    }
}

/// `text` formatted by `rustfmt` (read from standard input, edition 2021, the repository's
/// configuration).
fn rustfmt(root: &Path, text: &str) -> Result<String, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout", "--config-path"])
        .arg(root.join("rustfmt.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no standard input")?
        .write_all(text.as_bytes())
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("rustfmt: {e}"))?;
    if !out.status.success() {
        return Err(format!("rustfmt failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt's output: {e}"))
}

/// Replaces the lines between the `@generated begin NAME` and `@generated end NAME` marker lines
/// of `file` with `text`.
pub fn splice(file: &str, name: &str, text: &str) -> Result<String, String> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let find = |what: &str| {
        let marker = format!("@generated {what} {name}");
        let hits: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                let l = lines[i].trim_end();
                l.ends_with(&marker) || l.contains(&format!("{marker} "))
            })
            .collect();
        match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(format!("no `{marker}` line")),
            _ => Err(format!("{} `{marker}` lines", hits.len())),
        }
    };
    let (b, e) = (find("begin")?, find("end")?);
    if e <= b {
        return Err(format!("the end marker of `{name}` comes before its begin marker"));
    }
    let mut out: String = lines[..=b].concat();
    out.push_str(text);
    out.push_str(&lines[e..].concat());
    Ok(out)
}

/// The outputs whose files differ from what the table gives, with a reason each.
pub fn stale(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for out in outputs() {
        let label = match out.region {
            Some(r) => format!("{} (region {r})", out.path),
            None => out.path.to_string(),
        };
        match rendered(root, &out) {
            Err(e) => problems.push(e),
            Ok(want) => match std::fs::read_to_string(root.join(out.path)) {
                Ok(have) if have == want => {}
                Ok(_) => problems.push(format!("{label} is out of date")),
                Err(e) => problems.push(format!("{label}: {e}")),
            },
        }
    }
    problems
}

/// Writes every output under `root`; returns the paths it changed.
pub fn write(root: &Path) -> Result<Vec<String>, String> {
    let mut changed = Vec::new();
    // Regions of one file are spliced one after the other: render each against the file as
    // the previous output left it.
    for out in outputs() {
        let path = root.join(out.path);
        let want = rendered(root, &out)?;
        if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&path, want).map_err(|e| format!("{}: {e}", out.path))?;
            changed.push(out.path.to_string());
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Every generated file and region equals what the table gives now
    /// (`scripts/generate_host_files.sh` rewrites them).
    #[test]
    fn generated_host_files_are_current() {
        let stale = stale(&repo_root());
        assert!(
            stale.is_empty(),
            "run scripts/generate_host_files.sh:\n{}",
            stale.join("\n")
        );
    }

    /// The check fails on a file edited by hand: a stale region, and two fields swapped.
    #[test]
    fn the_check_catches_a_stale_region_and_swapped_fields() {
        let out = outputs()
            .into_iter()
            .find(|o| o.path.ends_with("overtone_c.h"))
            .unwrap();
        let file = format!(
            "/* top */\n/* @generated begin c-types */\n{}/* @generated end c-types */\n",
            out.text
        );
        assert_eq!(splice(&file, "c-types", &out.text).unwrap(), file);
        let stale = file.replacen("double damping;", "double damping; /* edited */", 1);
        assert_ne!(splice(&stale, "c-types", &out.text).unwrap(), stale);
        let (a, b) = ("double youngs_modulus;", "double poisson_ratio;");
        assert!(file.contains(a) && file.contains(b));
        let swapped = file.replacen(a, "@@", 1).replacen(b, a, 1).replacen("@@", b, 1);
        assert_ne!(swapped, file);
        assert_ne!(splice(&swapped, "c-types", &out.text).unwrap(), swapped);
        assert!(splice("no markers\n", "c-types", "x").is_err());
    }
}
