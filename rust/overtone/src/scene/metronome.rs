//! The metronome beam of seed tutorial 23.

use crate::dynamics::Material;
use crate::mesh::SimplexMesh;
use crate::scene::{ElasticModel, Scene};

/// Settings of the metronome scene; the defaults are the seed's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetronomeBeam {
    /// Grid vertices along the beam (default 40).
    pub w: usize,
    /// Grid vertices across the beam (default 5).
    pub h: usize,
    /// Handle sweep amplitude in x (default 3).
    pub amplitude: f64,
    /// Sweep period in steps (default 80).
    pub period: f64,
    /// Number of steps (default 200); the scene has `steps + 1` frames.
    pub steps: usize,
}

impl Default for MetronomeBeam {
    fn default() -> Self {
        Self {
            w: 40,
            h: 5,
            amplitude: 3.0,
            period: 80.0,
            steps: 200,
        }
    }
}

/// Builds the beam: a `w × h` vertex grid on the unit square (vertex `j·w + i` at
/// `(i/(w−1), j/(h−1))`, each cell split along its `(i+1,j)–(i,j+1)` diagonal), squeezed to 0.1
/// across, rotated upright (`x ← −y, y ← x`), centred on the vertex mean and scaled to height 2
/// (a 0.2 × 2 beam). One affine handle with weight 1 everywhere; frame `i` translates it by
/// `amplitude·sin(2π i / period)` in x. `E = 1e5, ν = 0, ρ = 1e3, h = 0.01`, no gravity, default
/// (diffusion) leak field.
pub fn metronome_beam(cfg: MetronomeBeam) -> crate::Result<Scene> {
    let (w, h) = (cfg.w, cfg.h);
    if w < 2 || h < 2 {
        return Err(crate::OvertoneError::setting(
            "beam grid",
            format!("{w}x{h}"),
            "needs at least 2 x 2 vertices",
        ));
    }
    let mut v = Vec::with_capacity(2 * w * h);
    for j in 0..h {
        for i in 0..w {
            let (x, y) = (i as f64 / (w - 1) as f64, 0.1 * j as f64 / (h - 1) as f64);
            v.extend([-y, x]);
        }
    }
    let n = w * h;
    let mean = [
        (0..n).map(|k| v[2 * k]).sum::<f64>() / n as f64,
        (0..n).map(|k| v[2 * k + 1]).sum::<f64>() / n as f64,
    ];
    let mut ext = [0.0f64; 2];
    for i in 0..2 {
        let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), k| {
            (a.min(v[2 * k + i]), b.max(v[2 * k + i]))
        });
        ext[i] = hi - lo;
    }
    let scale = 2.0 / ext[0].max(ext[1]);
    for k in 0..n {
        for i in 0..2 {
            v[2 * k + i] = (v[2 * k + i] - mean[i]) * scale;
        }
    }
    let mut t = Vec::with_capacity(6 * (w - 1) * (h - 1));
    for j in 0..h - 1 {
        for i in 0..w - 1 {
            let a = j * w + i;
            t.extend([a, a + 1, a + w, a + 1, a + w + 1, a + w]);
        }
    }
    let mesh = SimplexMesh::new(2, v, t)?;
    let frames = (0..=cfg.steps)
        .map(|i| {
            let tx = cfg.amplitude * (2.0 * std::f64::consts::PI * i as f64 / cfg.period).sin();
            vec![1.0, 0.0, tx, 0.0, 1.0, 0.0]
        })
        .collect();
    Ok(Scene {
        name: format!("metronome-{w}x{h}"),
        mesh,
        weights: vec![1.0; n],
        n_bones: 1,
        frames,
        momentum_weights: None,
        model: ElasticModel::Arap,
        material: Material {
            youngs_modulus: 1e5,
            poisson_ratio: 0.0,
            density: 1e3,
        },
        dt: 0.01,
        gravity: vec![0.0, 0.0],
        examples: None,
        blendshapes: None,
        normalisation: None,
        dynamics: crate::scene::SceneDynamics::default(),
    })
}
