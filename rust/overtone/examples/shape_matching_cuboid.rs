//! The seed's 225-particle cuboid (Fig. 1, 8; Table 1: 0.21 ms shape matching, 0.33 ms total
//! per step) dropped on the floor, with a twist example, an S-shaped example, both or none.
//!
//! `cargo run --release -p overtone --example shape_matching_cuboid -- --examples twist --out cuboid.pc2 --report cuboid.json`
//!
//! The body is 9 × 5 × 5 particles over 1.0 × 0.5 × 0.5 m (Kuhn-split cubes, 1-ring regions),
//! or `--mesh your.mesh` with `--example-file pose.mesh` for your own.

mod common;

use clap::Parser;
use overtone::mesh::tet_grid;
use overtone::shape_matching::Body;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    common: common::Common,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let rings = cli.common.rings;
    let density = cli.common.density;
    common::run(
        "cuboid",
        &cli.common,
        || Ok(Body::from_tet_mesh(&tet_grid(9, 5, 5, 1.0, 0.5, 0.5)?, density, rings)?),
        common::bar_examples,
        (0.21, 0.33),
    )
}
