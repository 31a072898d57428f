//! The scene-file readers: Overtone's own JSON, the reference C++ release's scenes and the fast
//! paper's `fast_cody` rigs. They live under `scene` (not `io`) because they build a [`Scene`],
//! which holds solver settings; `io` stays free of solver types.

mod fast_cody;
mod overtone_json;
mod reference_release;

pub(crate) use fast_cody::read_fast_cody_scene;
pub use fast_cody::{fast_cody_files, parse_fast_cody_scene};
pub use overtone_json::{read_overtone_scene, scene_to_json, write_overtone_scene, SCENE_FORMAT};
pub(crate) use reference_release::read_reference_scene;
pub use reference_release::{parse_reference_scene, NamedText, ReferenceSceneTexts};

use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::scene::Scene;

/// Loads a scene file, telling the formats apart by content: Overtone's own JSON (with
/// `"format": "overtone-scene/1"`), the reference C++ release's scene JSON (with `mesh_file`),
/// or a `fast_cody` rig (`NAME_rig.json` with `rig_type`, beside `NAME.msh` and its animation).
pub fn load_scene(path: &Path) -> Result<Scene> {
    let text = std::fs::read_to_string(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| OvertoneError::parse(path, format!("not valid JSON: {e}")))?;
    if value.get("format").is_some() {
        read_overtone_scene(path, &text)
    } else if value.get("mesh_file").is_some() {
        read_reference_scene(path, &value)
    } else if value.get("rig_type").is_some() {
        let (mesh, anim) = fast_cody_files(path)?;
        read_fast_cody_scene(&mesh, path, &anim)
    } else {
        Err(OvertoneError::parse(
            path,
            format!("neither an Overtone scene (no \"format\": \"{SCENE_FORMAT}\") nor a reference-release scene (no \"mesh_file\")"),
        ))
    }
}
