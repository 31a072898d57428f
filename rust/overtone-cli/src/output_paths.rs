//! Where a command may write. Before any work, every output path of a command is checked against
//! its inputs and its other outputs, so that no typo can destroy an asset:
//!
//! * an output that is an input file (after resolving `..` and symlinks; device and inode
//!   compared where both exist, so hard links count too) is refused, and so is an output that is
//!   a file an input scene refers to (a reference scene's mesh, weights or animation; a `.gltf`'s
//!   buffers);
//! * two outputs naming one file are refused;
//! * an output that is an existing folder is refused (unless the output is meant to be a folder),
//!   and so is an output whose folder does not exist;
//! * an existing file is overwritten only when it is a file of the kind being written (an earlier
//!   cache, report, picture, …, recognised by its content, not its name) or is empty; anything
//!   else (a glTF, a .blend, an OBJ, a scene, Alembic, USD, FBX, an image, unknown bytes) needs
//!   `--force`.
//!
//! Nothing is written when a check fails; the message names both paths.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// What an output holds, for the "same kind may be overwritten" rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PC2 point cache (`POINTCACHE2\0` header).
    Pc2,
    /// MDD point cache (big-endian frame count, point count, times, positions).
    Mdd,
    /// Overtone JSON report (`run` or `bake`).
    Report,
    /// `overtone-scene/1` JSON.
    Scene,
    /// PNG picture.
    Png,
    /// Animated GIF preview.
    Gif,
    /// Alembic (Ogawa) point cache.
    Alembic,
    /// USD layer (`.usda` text or `.usdc` crate).
    Usd,
    /// Fast-solver precompute sidecar (`OVTCACHE` header); also read back by the same run.
    Sidecar,
    /// The benchmark table (Markdown).
    Markdown,
    /// A folder the command fills with files (created when missing).
    Folder,
}

impl Kind {
    /// The kind of a point cache written to `path` (by its extension, as the writer chooses).
    pub fn cache(path: &Path) -> Kind {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("abc") => Kind::Alembic,
            Some("usd" | "usda" | "usdc") => Kind::Usd,
            Some("mdd") => Kind::Mdd,
            _ => Kind::Pc2,
        }
    }

    /// The kind of a preview picture written to `path`.
    pub fn picture(path: &Path) -> Kind {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("gif") => Kind::Gif,
            _ => Kind::Png,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Pc2 => "a PC2 point cache",
            Kind::Mdd => "an MDD point cache",
            Kind::Report => "an Overtone JSON report",
            Kind::Scene => "an Overtone scene (overtone-scene/1 JSON)",
            Kind::Png => "a PNG picture",
            Kind::Gif => "a GIF animation",
            Kind::Alembic => "an Alembic cache",
            Kind::Usd => "a USD cache",
            Kind::Sidecar => "an Overtone sidecar (.ovt)",
            Kind::Markdown => "an Overtone benchmark table",
            Kind::Folder => "a folder",
        }
    }
}

/// An output of a command: the flag that names it (for messages), its path and its kind.
pub struct Output<'a> {
    pub flag: &'static str,
    pub path: &'a Path,
    pub kind: Kind,
}

/// An input file of a command, named by its flag (or argument name) for messages.
pub struct Input<'a> {
    pub flag: &'static str,
    pub path: &'a Path,
}

/// Checks every output of one command against its inputs and the other outputs (see the module
/// documentation); `force` allows overwriting a file of another kind. Inputs that do not exist
/// (a built-in scene name, or a missing file the command will report itself) are skipped.
pub fn check(inputs: &[Input], outputs: &[Output], force: bool) -> Result<()> {
    let mut read: Vec<(String, PathBuf)> = Vec::new();
    for i in inputs {
        if !i.path.exists() {
            continue;
        }
        let what = if i.flag.starts_with("--") {
            format!("the {} input {}", i.flag, i.path.display())
        } else {
            format!("the {} {}", i.flag, i.path.display())
        };
        read.push((what, i.path.to_path_buf()));
        for (what, p) in referenced_files(i.path) {
            read.push((format!("{what} of the input {}", i.path.display()), p));
        }
    }
    for (k, o) in outputs.iter().enumerate() {
        let shown = o.path.display();
        if o.kind != Kind::Folder {
            let dir = o
                .path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !dir.is_dir() {
                bail!(
                    "output folder {} (of {} {shown}) does not exist; nothing was written",
                    dir.display(),
                    o.flag
                );
            }
            if o.path.is_dir() {
                bail!(
                    "{} {shown} is an existing folder; give a file name (e.g. {}); nothing was written",
                    o.flag,
                    o.path.join(example_name(o.kind)).display()
                );
            }
        } else if o.path.exists() && !o.path.is_dir() {
            bail!(
                "{} {shown} is an existing file, not a folder; nothing was written",
                o.flag
            );
        }
        for (what, p) in &read {
            if same_file(o.path, p) {
                bail!(
                    "{} {shown} is the same file as {what} (both are {}): writing would destroy it; choose another output path (nothing was written)",
                    o.flag,
                    normalized(p).display()
                );
            }
        }
        for other in &outputs[..k] {
            if same_file(o.path, other.path) {
                bail!(
                    "{} {} and {} {shown} name the same file ({}): give each output its own path (nothing was written)",
                    other.flag,
                    other.path.display(),
                    o.flag,
                    normalized(o.path).display()
                );
            }
        }
        if o.kind != Kind::Folder && !force && o.path.is_file() {
            let found = sniff(o.path);
            if !accepts(o.kind, found) {
                bail!(
                    "{} {shown} already exists and is {}, not {}: refusing to overwrite it; choose another path, or pass --force to replace it (nothing was written)",
                    o.flag,
                    found.describe(),
                    o.kind.describe()
                );
            }
        }
    }
    Ok(())
}

fn example_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Pc2 => "cache.pc2",
        Kind::Mdd => "cache.mdd",
        Kind::Report => "report.json",
        Kind::Scene => "scene.json",
        Kind::Png => "preview.png",
        Kind::Gif => "preview.gif",
        Kind::Alembic => "cache.abc",
        Kind::Usd => "cache.usdc",
        Kind::Sidecar => "precompute.ovt",
        Kind::Markdown => "bench.md",
        Kind::Folder => "out",
    }
}

/// Device and inode of an existing file (symlinks followed).
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &Path) -> Option<(u64, u64)> {
    None
}

/// The absolute path with `..`, `.` and symlinks resolved: the file itself when it exists, else
/// its (resolved) folder joined with its name; lexically absolute when the folder is missing too.
fn normalized(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let parent = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(parent), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
    }
}

/// Whether two paths name one file: same device and inode when both exist (hard links, symlinks,
/// `..`), else the same resolved path.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(x), Some(y)) => x == y,
        _ => normalized(a) == normalized(b),
    }
}

/// Files an input reads besides itself: a reference-release scene's four files, a fast_cody
/// rig's mesh and animation, a `.gltf`'s external buffers. Empty when the input is none of these.
fn referenced_files(input: &Path) -> Vec<(String, PathBuf)> {
    let is_json = matches!(input.extension().and_then(|e| e.to_str()), Some("json") | Some("gltf"));
    let meta = std::fs::metadata(input);
    if !is_json || meta.map(|m| m.len() > 256 << 20).unwrap_or(true) {
        return Vec::new();
    }
    let Some(v) = std::fs::read(input)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Vec::new();
    };
    let dir = input.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for key in ["mesh_file", "handle_file", "weight_file", "anim_file"] {
        if let Some(name) = v.get(key).and_then(|n| n.as_str()) {
            out.push((format!("the {key}"), dir.join(name)));
        }
    }
    if let Some(buffers) = v.get("buffers").and_then(|b| b.as_array()) {
        for b in buffers {
            if let Some(uri) = b
                .get("uri")
                .and_then(|u| u.as_str())
                .filter(|u| !u.starts_with("data:"))
            {
                out.push(("a buffer".to_string(), dir.join(uri)));
            }
        }
    }
    if v.get("rig_type").is_some() {
        if let Ok((mesh, anim)) = overtone::scene::fast_cody_files(input) {
            out.push(("the mesh".to_string(), mesh));
            out.push(("the animation".to_string(), anim));
        }
    }
    out
}

/// What an existing file is, recognised by its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Empty,
    Pc2,
    Mdd,
    Sidecar,
    Png,
    Gif,
    Jpeg,
    Exr,
    Glb,
    Gltf,
    OvertoneScene,
    ReferenceScene,
    Report,
    Json,
    Blend,
    Compressed,
    Obj,
    Alembic,
    Usd,
    Fbx,
    Zip,
    TetMesh,
    Markdown,
    Other,
}

impl Found {
    pub fn describe(self) -> &'static str {
        match self {
            Found::Empty => "an empty file",
            Found::Pc2 => "a PC2 point cache",
            Found::Mdd => "an MDD point cache",
            Found::Sidecar => "an Overtone sidecar (.ovt)",
            Found::Png => "a PNG image",
            Found::Jpeg => "a JPEG image",
            Found::Gif => "a GIF animation",
            Found::Exr => "an OpenEXR image",
            Found::Glb => "a glTF binary (.glb)",
            Found::Gltf => "a glTF file",
            Found::OvertoneScene => "an Overtone scene",
            Found::ReferenceScene => "a scene file",
            Found::Report => "an Overtone JSON report",
            Found::Json => "a JSON file",
            Found::Blend => "a Blender file (.blend)",
            Found::Compressed => "a compressed file (gzip/zstd, e.g. a compressed .blend)",
            Found::Obj => "an OBJ mesh",
            Found::Alembic => "an Alembic/HDF5 archive",
            Found::Usd => "a USD file",
            Found::Fbx => "an FBX file",
            Found::Zip => "a zip archive",
            Found::TetMesh => "a tet mesh (MEDIT/gmsh)",
            Found::Markdown => "an Overtone benchmark table",
            Found::Other => "a file of unknown content",
        }
    }
}

fn accepts(kind: Kind, found: Found) -> bool {
    found == Found::Empty
        || matches!(
            (kind, found),
            (Kind::Pc2, Found::Pc2)
                | (Kind::Mdd, Found::Mdd)
                | (Kind::Report, Found::Report)
                | (Kind::Scene, Found::OvertoneScene)
                | (Kind::Png, Found::Png)
                | (Kind::Gif, Found::Gif)
                | (Kind::Alembic, Found::Alembic)
                | (Kind::Usd, Found::Usd)
                | (Kind::Sidecar, Found::Sidecar)
                | (Kind::Markdown, Found::Markdown)
        )
}

/// Recognises a file by its first bytes (and, for headerless formats, its size or JSON keys).
pub fn sniff(path: &Path) -> Found {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return Found::Other;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = Vec::with_capacity(4096);
    if (&mut f).take(4096).read_to_end(&mut head).is_err() {
        return Found::Other;
    }
    if head.is_empty() {
        return Found::Empty;
    }
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(b"POINTCACHE2\0") {
        return Found::Pc2;
    }
    if starts(overtone::cache::MAGIC) {
        return Found::Sidecar;
    }
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Found::Png;
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return Found::Gif;
    }
    if starts(b"\xff\xd8\xff") {
        return Found::Jpeg;
    }
    if starts(b"\x76\x2f\x31\x01") {
        return Found::Exr;
    }
    if starts(b"glTF") {
        return Found::Glb;
    }
    if starts(b"BLENDER") {
        return Found::Blend;
    }
    if starts(b"\x28\xb5\x2f\xfd") || starts(b"\x1f\x8b") {
        return Found::Compressed;
    }
    if starts(b"Ogawa") || starts(b"\x89HDF\r\n\x1a\n") {
        return Found::Alembic;
    }
    if starts(b"PXR-USDC") || starts(b"#usda") {
        return Found::Usd;
    }
    if starts(b"Kaydara FBX Binary") || starts(b"; FBX") {
        return Found::Fbx;
    }
    if starts(b"PK\x03\x04") {
        return Found::Zip;
    }
    if head.len() >= 8 {
        // MDD: big-endian frames F and points P, then F times and F·P·3 floats.
        let fr = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let pts = u32::from_be_bytes([head[4], head[5], head[6], head[7]]) as u64;
        if fr > 0 && pts > 0 && 8 + 4 * fr + 12 * fr * pts == len {
            return Found::Mdd;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return sniff_json(path, len);
    }
    if trimmed.starts_with("MeshVersionFormatted") || trimmed.starts_with("$MeshFormat") {
        return Found::TetMesh;
    }
    if trimmed.starts_with("| scene |") {
        return Found::Markdown;
    }
    let obj_like = text
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(20)
        .any(|l| {
            ["v ", "vn ", "vt ", "f ", "o ", "g ", "mtllib "]
                .iter()
                .any(|p| l.starts_with(p))
        });
    if obj_like {
        return Found::Obj;
    }
    Found::Other
}

fn sniff_json(path: &Path, len: u64) -> Found {
    if len > 256 << 20 {
        return Found::Json;
    }
    let Some(v) = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Found::Json;
    };
    let has = |k: &str| v.get(k).is_some();
    if v.get("format").and_then(|f| f.as_str()) == Some(overtone::scene::SCENE_FORMAT) {
        Found::OvertoneScene
    } else if has("asset") {
        Found::Gltf
    } else if has("mesh_file") || has("rig_type") || has("format") {
        Found::ReferenceScene
    } else if (has("summary") && has("frames")) || (has("per_frame") && has("points")) {
        Found::Report
    } else {
        Found::Json
    }
}
