//! The seed's 2,025-particle cylinder (Fig. 9; Table 1: 2.0 ms shape matching, 3.1 ms total per
//! step) dropped on the floor, with twist / S-shaped examples about its axis.
//!
//! `cargo run --release -p overtone --example shape_matching_cylinder -- --examples s --out cylinder.pc2 --report cylinder.json`
//!
//! The body is a solid cylinder of radius 0.2 m and height 1.2 m along y: 25 layers of 81
//! particles (centre + rings of 8, 16, 24, 32), 1-ring regions. `--mesh` / `--example-file`
//! take your own.

mod common;

use clap::Parser;
use overtone::mesh::tet_cylinder;
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
        "cylinder",
        &cli.common,
        || Ok(Body::from_tet_mesh(&tet_cylinder(4, 25, 0.2, 1.2)?, density, rings)?),
        // The bar poses act along x; the cylinder stands along y.
        |rest, which| {
            common::bar_examples(&common::swap_xy(rest), which)
                .into_iter()
                .map(|(name, pose)| (name, common::swap_xy(&pose)))
                .collect()
        },
        (2.0, 3.1),
    )
}
