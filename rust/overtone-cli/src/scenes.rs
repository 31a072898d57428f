//! Scene lookup for the CLI: files and built-in scenes.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use overtone::scene::{load_scene, metronome_beam, MetronomeBeam, Scene};

/// Path of a file under the repository's `examples/data` folder.
pub fn example_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data")
        .join(rel)
}

/// Loads `metronome`, `metronome:WxH`, `metronome:WxH:STEPS` or a scene file.
pub fn load(spec: &str) -> Result<Scene> {
    if let Some(rest) = spec.strip_prefix("metronome") {
        let mut cfg = MetronomeBeam::default();
        if let Some(spec) = rest.strip_prefix(':') {
            let (dims, steps) = spec.split_once(':').unwrap_or((spec, ""));
            let (w, h) = dims
                .split_once('x')
                .context("built-in beam size must look like metronome:40x5[:STEPS]")?;
            cfg.w = w.parse().context("beam width")?;
            cfg.h = h.parse().context("beam height")?;
            if !steps.is_empty() {
                cfg.steps = steps.parse().context("beam steps")?;
            }
        } else if !rest.is_empty() {
            bail!("unknown built-in scene `{spec}` (try `metronome` or `metronome:40x5`)");
        }
        return Ok(metronome_beam(cfg)?);
    }
    Ok(load_scene(&PathBuf::from(spec))?)
}
