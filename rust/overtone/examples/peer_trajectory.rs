//! Simulates a scene with the full-order (or fast) solver and writes every frame's positions in
//! double precision, for trajectory comparisons finer than the f32 of a PC2 cache
//! (`scripts/bench_peer.sh` compares them with simkit's).
//!
//! `cargo run --release -p overtone --example peer_trajectory -- SCENE OUT.f64 [full|fast]`
//!
//! Output (little-endian): `u64 frames`, `u64 vertices`, then `frames × vertices × 3` `f64`
//! (z = 0 in 2D), frame-major, frame 0 being the first pose.

use std::io::Write;
use std::path::Path;

use overtone::dynamics::FastParams;
use overtone::scene::{load_scene, simulate, SolverKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: peer_trajectory SCENE OUT.f64 [full|fast]".into());
    }
    let scene = load_scene(Path::new(&args[0]))?;
    let kind = match args.get(2).map(String::as_str).unwrap_or("full") {
        "full" => SolverKind::full_order(scene.model),
        "fast" => SolverKind::Fast(FastParams::default_for(scene.mesh.dim())),
        other => return Err(format!("unknown solver `{other}` (full|fast)").into()),
    };
    let sim = simulate(&scene, kind)?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(&args[1])?);
    out.write_all(&(sim.positions.len() as u64).to_le_bytes())?;
    out.write_all(&(scene.mesh.n_vertices() as u64).to_le_bytes())?;
    for frame in &sim.positions {
        for x in frame {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}
