//! The manual, the READMEs and the examples' notes name only what exists (issue 33): every
//! relative link resolves, every source file named (`.rs`, `.py`, `.sh`, `.toml`) exists, every
//! command-line flag, scene key (`"key":`) and Rust path (`a::b`) quoted in code is still in the
//! sources. A rename or a removal without the docs following fails here with the page and line.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Files under `dir` (recursively) whose name passes `keep`, skipping build output and data.
fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | ".git" | "data" | "__pycache__" | "corpus" | "node_modules"
            ) {
                files(&p, keep, out);
            }
        } else if keep(&p) {
            out.push(p);
        }
    }
}

/// Every file of the tree, example data included (not build output or git's).
fn tree(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != ".git" {
                tree(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// Tools other than Overtone whose flags the docs quote (cargo, Blender, pip, mdBook, ...).
const EXTERNAL_FLAGS: &[&str] = &[
    "release",
    "workspace",
    "bin",
    "example",
    "examples",
    "lib",
    "test",
    "tests",
    "no-run",
    "features",
    "all",
    "check",
    "help",
    "version",
    "background",
    "python",
    "python-expr",
    "factory-startup",
    "upgrade",
    "depth",
    "open",
    "dest-dir",
    "serve",
    "locked",
    "quiet",
    "nocapture",
    "test-threads",
    "manifest-path",
    "target-dir",
    "jobs",
    "verbose",
    "noaudio",
    "addons",
    "command",
    "format",
    "output",
];

/// What the sources define, as the docs may name it.
struct Sources {
    root: PathBuf,
    /// Every identifier-like word of the sources (Rust, Python, shell, CMake, C/C++).
    words: HashSet<String>,
    /// Every `--flag` written literally in the sources.
    flags: HashSet<String>,
    /// Every double-quoted string literal's content of the Rust and Python sources.
    strings: HashSet<String>,
    /// Every file name in the tree (for a bare `name.rs`).
    file_names: HashSet<String>,
    /// Every file's path in the tree, from the root (`/rust/overtone/src/leak.rs`).
    paths: Vec<String>,
}

impl Sources {
    fn read(root: &Path) -> Self {
        let mut paths = Vec::new();
        let code = |p: &Path| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("rs" | "py" | "sh" | "toml" | "txt" | "cpp" | "h" | "hpp" | "cmake" | "yaml" | "js" | "json")
            ) || p.file_name().is_some_and(|n| n == "run")
        };
        for dir in ["rust", "scripts", "plugin", "examples", "fuzz", ".ci"] {
            files(&root.join(dir), &code, &mut paths);
        }
        // This file quotes stale names on purpose (the checker's own test).
        paths.retain(|p| !p.ends_with("tests/end_to_end/docs_names.rs"));
        let (mut words, mut flags, mut strings) = (HashSet::new(), HashSet::new(), HashSet::new());
        for p in &paths {
            let Ok(text) = std::fs::read_to_string(p) else { continue };
            if text.len() > 2_000_000 {
                continue;
            }
            for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if !w.is_empty() {
                    words.insert(w.to_string());
                }
            }
            for f in text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')) {
                if let Some(rest) = f.strip_prefix("--") {
                    flags.insert(rest.trim_end_matches('-').to_string());
                }
            }
            for (i, s) in text.split('"').enumerate() {
                if i % 2 == 1 && s.len() < 80 {
                    strings.insert(s.to_string());
                }
            }
        }
        let mut all = Vec::new();
        tree(root, &mut all);
        let file_names = all
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
            .collect();
        let paths = all
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok().map(|r| format!("/{}", r.display())))
            .collect();
        Sources {
            root: root.to_path_buf(),
            words,
            flags,
            strings,
            file_names,
            paths,
        }
    }

    /// Whether `--flag` is one of Overtone's (written literally, or the field or settings row
    /// clap and the settings table derive it from) or of a tool the docs quote.
    fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(flag) || self.words.contains(&flag.replace('-', "_")) || EXTERNAL_FLAGS.contains(&flag)
    }

    /// Whether a source file named in `page` exists: relative to the page or the repository, or
    /// as the tail of a path in the tree (`physics/stress.rs` for `rust/overtone/tests/...`, a
    /// crate's `src/...`); a bare name anywhere in the tree.
    fn has_file(&self, page: &Path, name: &str) -> bool {
        let name = name.trim_start_matches("./").trim_start_matches('/');
        if !name.contains('/') {
            return self.file_names.contains(name);
        }
        let tail = format!("/{name}");
        page.parent().is_some_and(|d| d.join(name).exists())
            || self.root.join(name).exists()
            || self.paths.iter().any(|p| p.ends_with(&tail))
    }
}

/// The spans a page quotes as code: inline `code` and fenced blocks, with their line numbers.
fn code_spans(text: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            spans.push((n + 1, line.to_string()));
            continue;
        }
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 1 {
                spans.push((n + 1, part.to_string()));
            }
        }
    }
    spans
}

/// The relative link targets of a page (`](target)` outside code), with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split('#').next().unwrap_or("").trim().to_string();
            rest = &rest[end..];
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push((n + 1, target));
            }
        }
    }
    out
}

/// Every name `page` quotes that the sources no longer have, as `page:line: what`.
fn stale_names(src: &Sources, page: &Path, text: &str) -> Vec<String> {
    let shown = page.strip_prefix(&src.root).unwrap_or(page).display().to_string();
    let mut stale = Vec::new();
    for (line, target) in links(text) {
        if !page.parent().unwrap_or(&src.root).join(&target).exists() {
            stale.push(format!("{shown}:{line}: link to a missing file `{target}`"));
        }
    }
    for (line, span) in code_spans(text) {
        let tokens = span.split(|c: char| c.is_whitespace() || "()[]{},;<>|'=`".contains(c));
        for raw in tokens {
            let token = raw.trim_matches(|c: char| c == '.' || c == ':' || c == '"' || c == '*');
            let ext = token.rsplit_once('.').map(|(_, e)| e);
            if matches!(ext, Some("rs" | "py" | "sh" | "toml")) && !token.contains('*') && !src.has_file(page, token) {
                stale.push(format!("{shown}:{line}: file `{token}` does not exist"));
            }
            if let Some(flag) = token.strip_prefix("--") {
                let flag = flag.split(['=', '.', '/']).next().unwrap_or("");
                let is_flag = flag.len() > 1
                    && flag
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
                if is_flag && !src.has_flag(flag) {
                    stale.push(format!("{shown}:{line}: flag `--{flag}` is not defined"));
                }
            }
            if token.contains("::") && !token.contains('<') {
                for seg in token.split("::") {
                    let seg = seg.trim_end_matches("()").trim_end_matches('!');
                    let ident = !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_');
                    if ident && seg.chars().any(|c| c.is_alphabetic()) && !src.words.contains(seg) {
                        stale.push(format!(
                            "{shown}:{line}: Rust name `{seg}` (in `{token}`) is not defined"
                        ));
                    }
                }
            }
        }
        // Scene and report keys: `"key":`.
        let mut rest = span.as_str();
        while let Some(i) = rest.find("\":") {
            let before = &rest[..i];
            if let Some(open) = before.rfind('"') {
                let key = &before[open + 1..];
                let is_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if is_key && !src.strings.contains(key) && !src.words.contains(key) {
                    stale.push(format!(
                        "{shown}:{line}: key `\"{key}\"` is not read or written anywhere"
                    ));
                }
            }
            rest = &rest[i + 2..];
        }
    }
    stale
}

/// The pages checked: the READMEs and everything under `docs/`.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![
        root.join("README.md"),
        root.join("plugin/README.md"),
        root.join("examples/README.md"),
    ];
    files(
        &root.join("docs"),
        &|p| p.extension().is_some_and(|e| e == "md"),
        &mut out,
    );
    out.retain(|p| p.exists());
    out
}

#[test]
fn the_docs_name_only_what_exists() {
    let root = root();
    let src = Sources::read(&root);
    let mut stale = Vec::new();
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).expect("read a page");
        stale.extend(stale_names(&src, &page, &text));
    }
    assert!(
        stale.is_empty(),
        "the docs name what does not exist:\n{}",
        stale.join("\n")
    );
}

/// The checker itself finds a renamed module, flag, key and file and a broken link (so the test
/// above cannot pass by checking nothing), and accepts their current names.
#[test]
fn the_docs_check_finds_stale_names() {
    let root = root();
    let src = Sources::read(&root);
    let page = root.join("docs/reference/example.md");
    let stale = "See [the solver](../../rust/overtone/src/dynamics/no_such_solver.rs), \
                 `dynamics::KrylovSchurEigen`, `overtone bake --no-such-flag 3`, \
                 `{\"no_such_scene_key\": 1}` and `scripts/no_such_script.sh`.\n";
    let found = stale_names(&src, &page, stale);
    assert_eq!(found.len(), 5, "{found:#?}");
    let current = "See [the solver](../../rust/overtone/src/dynamics/full_order.rs), \
                   `dynamics::CdSolver`, `overtone bake --damping 0.3 --cut-distance never`, \
                   `{\"youngs_modulus\": 1e5, \"dt\": 0.01}` and `scripts/test.sh`.\n";
    let found = stale_names(&src, &page, current);
    assert!(found.is_empty(), "{found:#?}");
}

/// The book's table of contents (`docs/SUMMARY.md`) lists every page of `docs/`, so no page is
/// left out of the built manual (a missing page is caught by the link check above).
#[test]
fn the_manual_lists_every_page() {
    let docs = root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).expect("docs/SUMMARY.md");
    let listed: HashSet<PathBuf> = links(&summary).into_iter().map(|(_, t)| docs.join(t)).collect();
    let mut pages = Vec::new();
    files(&docs, &|p| p.extension().is_some_and(|e| e == "md"), &mut pages);
    let missing: Vec<String> = pages
        .iter()
        .filter(|p| !p.ends_with("SUMMARY.md") && !listed.contains(*p))
        .map(|p| p.strip_prefix(&docs).unwrap_or(p).display().to_string())
        .collect();
    assert!(missing.is_empty(), "pages not in docs/SUMMARY.md: {missing:?}");
}
