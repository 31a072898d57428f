//! `--preview OUT.png`: the picture a TD looks at after a bake — the rig alone against rig +
//! secondary motion at a few frames, and the size of the secondary motion over time.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

static FONT: &[u8] = include_bytes!("../../overtone/examples/assets/DejaVuSans.ttf");
const RIG: RGBColor = RGBColor(0x99, 0x99, 0x99);
const FINAL: RGBColor = RGBColor(0x1f, 0x77, 0xb4);

/// Draws the preview. `frames[k]` are final positions (`n × 3`), `displacements[k]` the
/// secondary motion of the same points; the rig alone is their difference. Silhouettes are the
/// points projected on the x–y plane (front view for +Y-up assets).
pub fn write_preview(
    path: &Path,
    title: &str,
    frames: &[Vec<f64>],
    displacements: &[Vec<f64>],
    fps: f64,
) -> Result<()> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| anyhow!("bundled font failed to load"))?;
    let err = |e: &dyn std::fmt::Debug| anyhow!("drawing the preview: {e:?}");
    let magnitude: Vec<f64> = displacements
        .iter()
        .map(|u| {
            u.chunks_exact(3)
                .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
                .fold(0.0, f64::max)
        })
        .collect();
    // Four frames: the largest secondary motion, and three spread over the clip.
    let peak = (0..magnitude.len())
        .max_by(|&a, &b| magnitude[a].total_cmp(&magnitude[b]))
        .unwrap_or(0);
    let mut picks: Vec<usize> = vec![frames.len() / 4, frames.len() / 2, 3 * frames.len() / 4, peak];
    picks.sort_unstable();
    picks.dedup();
    let root = BitMapBackend::new(path, (1500, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root.titled(title, ("sans-serif", 24)).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(950);
    // Silhouettes side by side, each frame shifted by the width of the widest one.
    let bounds = |f: &Vec<f64>| {
        f.chunks_exact(3).fold(
            [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY],
            |b, p| [b[0].min(p[0]), b[1].max(p[0]), b[2].min(p[1]), b[3].max(p[1])],
        )
    };
    let bs: Vec<[f64; 4]> = picks.iter().map(|&k| bounds(&frames[k])).collect();
    let width = bs.iter().map(|b| b[1] - b[0]).fold(0.0, f64::max) * 1.25 + 1e-9;
    let (y0, y1) = bs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, c), b| {
        (a.min(b[2]), c.max(b[3]))
    });
    let span_y = (y1 - y0).max(1e-9);
    let total_w = width * picks.len() as f64;
    let mut chart = ChartBuilder::on(&left)
        .margin(20)
        .caption("rig alone (grey) and rig + secondary motion (blue)", ("sans-serif", 18))
        .build_cartesian_2d(0.0..total_w, y0 - 0.06 * span_y..y1 + 0.03 * span_y)
        .map_err(|e| err(&e))?;
    for (slot, &k) in picks.iter().enumerate() {
        let label = format!("frame {k}{}", if k == peak { " (peak)" } else { "" });
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (slot as f64 * width + 0.3 * width, y0 - 0.04 * span_y),
                ("sans-serif", 16),
            )))
            .map_err(|e| err(&e))?;
        let shift = slot as f64 * width + 0.5 * width - 0.5 * (bs[slot][0] + bs[slot][1]);
        let rig = frames[k]
            .chunks_exact(3)
            .zip(displacements[k].chunks_exact(3))
            .map(|(p, u)| (p[0] - u[0] + shift, p[1] - u[1]));
        chart
            .draw_series(rig.map(|p| Circle::new(p, 1, RIG.filled())))
            .map_err(|e| err(&e))?;
        let fin = frames[k].chunks_exact(3).map(|p| (p[0] + shift, p[1]));
        chart
            .draw_series(fin.map(|p| Circle::new(p, 1, FINAL.filled())))
            .map_err(|e| err(&e))?;
    }
    // Secondary-motion magnitude over time.
    let t1 = (magnitude.len().max(2) - 1) as f64 / fps;
    let m1 = magnitude.iter().cloned().fold(0.0, f64::max).max(1e-12);
    let mut chart = ChartBuilder::on(&right)
        .margin(20)
        .caption("largest secondary displacement", ("sans-serif", 18))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..t1, 0.0..m1 * 1.1)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("max |u| (scene units)")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            magnitude.iter().enumerate().map(|(k, &m)| (k as f64 / fps, m)),
            FINAL.stroke_width(3),
        ))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
