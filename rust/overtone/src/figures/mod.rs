//! Runnable figures: the example-based shape-matching paper's set-ups (Koyama et al. 2013,
//! Fig. 8, 9 and 12) and one scene of example-aware complementary dynamics, each body beside
//! its twin without examples, measured with [`BarShape`] (twist, bend and S-bend with the rigid
//! motion removed) and the distance to the rest shape and to each example.
//!
//! [`run_figure`] runs every body of a figure; `overtone figures` draws and reports them.

mod cd_swing;
mod shape_matching_setups;

pub use shape_matching_setups::{figure as shape_matching_setup, run_body, FigureBody, FigureSetup};

use crate::error::Result;
use crate::shape_matching::{rigid_residual, BarAngles, BarShape, Floor};

/// The figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaperFigure {
    /// Fig. 12: the cuboid held at one end under gravity.
    HeldTwist,
    /// Fig. 8: cuboids dropped onto a slope.
    Slope,
    /// Fig. 9: four cylinders with different examples.
    Cylinders,
    /// Example-aware complementary dynamics: a bar swung by its rig, with and without examples.
    CdSwing,
}

impl PaperFigure {
    /// Every figure.
    pub const ALL: [PaperFigure; 4] = [Self::Slope, Self::Cylinders, Self::HeldTwist, Self::CdSwing];

    /// Short name (file stems, command line): `fig8-slope`, `fig9-cylinders`,
    /// `fig12-held-twist`, `cd-swing`.
    pub fn name(self) -> &'static str {
        match self {
            Self::HeldTwist => "fig12-held-twist",
            Self::Slope => "fig8-slope",
            Self::Cylinders => "fig9-cylinders",
            Self::CdSwing => "cd-swing",
        }
    }

    /// What the figure shows, one line.
    pub fn title(self) -> &'static str {
        match self {
            Self::HeldTwist => "Fig. 12 set-up: a cuboid held at one end sags under gravity",
            Self::Slope => "Fig. 8 set-up: cuboids dropped onto a 35 degree slope",
            Self::Cylinders => "Fig. 9 set-up: four cylinders dropped on the floor",
            Self::CdSwing => "Example-aware complementary dynamics: a bar swung by its rig for 1 s, then held",
        }
    }
}

/// The measured run of one body: positions and measures every 1/60 s (the start included).
#[derive(Clone, Debug, Default)]
pub struct FigureRun {
    /// Sample times (s).
    pub times: Vec<f64>,
    /// Positions per sample (`n × 3` row-major).
    pub frames: Vec<Vec<f64>>,
    /// Twist, bend and S-bend per sample.
    pub angles: Vec<BarAngles>,
    /// Per sample, the distance from the rest shape: the mass-weighted RMS distance after the
    /// best rigid fit ([`rigid_residual`], length).
    pub distance_to_rest: Vec<f64>,
    /// Per sample, the same distance from each example pose.
    pub distance_to_examples: Vec<Vec<f64>>,
}

/// What a [`FigureRun`] measures against: the bar's stations, the rest shape, the examples and
/// the masses.
pub(crate) struct Measures<'a> {
    pub bar: BarShape,
    pub rest: Vec<[f64; 3]>,
    pub examples: Vec<Vec<[f64; 3]>>,
    pub masses: &'a [f64],
}

fn rows(x: &[f64]) -> Vec<[f64; 3]> {
    x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

impl<'a> Measures<'a> {
    /// Measures for a bar of rest pose `rest` (`n × 3`) along rest axis `axes.0`, bending about
    /// `axes.1`.
    pub fn new(rest: &[f64], axes: (usize, usize), examples: &[Vec<f64>], masses: &'a [f64]) -> Result<Self> {
        Ok(Self {
            bar: BarShape::new(rest, axes.0, axes.1)?,
            rest: rows(rest),
            examples: examples.iter().map(|e| rows(e)).collect(),
            masses,
        })
    }

    /// Appends the sample of positions `x` at time `t`.
    pub fn sample(&self, run: &mut FigureRun, t: f64, x: &[[f64; 3]]) {
        run.times.push(t);
        run.frames.push(x.as_flattened().to_vec());
        run.angles.push(self.bar.measure(x));
        run.distance_to_rest.push(rigid_residual(&self.rest, x, self.masses));
        run.distance_to_examples.push(
            self.examples
                .iter()
                .map(|e| rigid_residual(e, x, self.masses))
                .collect(),
        );
    }
}

/// One body of a figure after its run.
pub struct BodyOutcome {
    /// Label.
    pub name: String,
    /// How it is simulated (method, examples, manifold, `β`, goal), one line.
    pub method: String,
    /// Number of example poses.
    pub examples: usize,
    /// Particles (or vertices).
    pub n_particles: usize,
    /// Surface triangles (`k × 3`) for drawing.
    pub surface: Vec<usize>,
    /// The measured run.
    pub run: FigureRun,
}

/// A figure's bodies after their runs.
pub struct FigureOutcome {
    /// Which figure.
    pub figure: PaperFigure,
    /// The ground, if any.
    pub floor: Option<Floor>,
    /// Settings worth reporting (name, value).
    pub settings: Vec<(&'static str, f64)>,
    /// The bodies, the twin without examples first.
    pub bodies: Vec<BodyOutcome>,
}

/// Runs every body of `figure`.
pub fn run_figure(figure: PaperFigure) -> Result<FigureOutcome> {
    if figure == PaperFigure::CdSwing {
        return cd_swing::run();
    }
    let setup = shape_matching_setup(figure)?;
    let mut bodies = Vec::with_capacity(setup.bodies.len());
    for b in &setup.bodies {
        bodies.push(BodyOutcome {
            name: b.name.clone(),
            method: if b.examples.is_empty() {
                "shape matching, no example".into()
            } else {
                format!(
                    "shape matching, {} manifold, beta {}, goal {:?}",
                    b.scope.name(),
                    b.beta,
                    b.goal
                )
            },
            examples: b.examples.len(),
            n_particles: b.body.n_particles(),
            surface: b.body.surface.clone(),
            run: run_body(&setup, b)?,
        });
    }
    let p = &setup.params;
    Ok(FigureOutcome {
        figure,
        floor: p.floor,
        settings: vec![
            ("dt_s", p.dt),
            ("alpha", p.alpha),
            ("damping", p.damping),
            ("steps", setup.steps as f64),
            ("held_particles", setup.bodies[0].held.len() as f64),
        ],
        bodies,
    })
}
