//! `--preview OUT.png|OUT.gif`: the bake drawn the way a TD looks at it — the character shaded,
//! the rig alone beside rig + secondary motion, the surface coloured by the size of the
//! secondary displacement `|u|` with a scale bar.
//!
//! A small software rasteriser, no system libraries: an orthographic camera turned 25° about
//! the up axis (+Y, glTF's) and tilted 10° down frames the character; triangles are filled
//! with a z-buffer, flat Lambert shading (two-sided, `0.25 + 0.75 |n·l|`) times a colour that
//! interpolates `|u|` over the triangle (viridis ramp from 0 to the 99th percentile of `|u|` over
//! the bake;
//! the rig alone is grey). The PNG shows three frames of largest motion (at least an eighth of
//! the clip apart); the GIF animates every frame (at most 50 images per second of animation).
//!
//! Secondary motion of a few millimetres on a body of almost two metres cannot be seen in the
//! shape, only in the colour: when the motion (99th percentile of `|u|`) is under 2.5% of the
//! body's height, a third panel draws the rig plus the motion magnified by a 1-2-5 factor
//! ([`magnification`]), labelled with the factor, beside the true-size one.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use overtone::io::AnimatedMesh;
use plotters::prelude::*;

static FONT: &[u8] = include_bytes!("../../overtone/examples/assets/DejaVuSans.ttf");

/// The picture formats `--preview` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviewKind {
    /// A still: rig alone and rig + secondary motion at the frames of largest motion.
    Png,
    /// The whole bake animated.
    Gif,
}

impl PreviewKind {
    /// The kind named by `path`'s extension; anything else is refused before any work.
    pub fn of(path: &Path) -> Result<Self> {
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("png") => Ok(Self::Png),
            Some("gif") => Ok(Self::Gif),
            other => bail!(
                "{}: --preview draws .png or .gif, not `.{}`",
                path.display(),
                other.unwrap_or("")
            ),
        }
    }
}

/// Draws the preview of `mesh` (final positions) with `displacements[k]` the secondary motion
/// of frame `k` (`n × 3`, same units); the rig alone is their difference. Written atomically.
pub fn write_preview(path: &Path, title: &str, mesh: &AnimatedMesh, displacements: &[Vec<f64>]) -> Result<()> {
    mesh.validate()?;
    anyhow::ensure!(
        displacements.len() == mesh.frames.len() && displacements.iter().all(|u| u.len() == 3 * mesh.n_points()),
        "preview: one displacement of {} values per frame expected",
        3 * mesh.n_points()
    );
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| anyhow!("bundled font failed to load"))?;
    let scene = Scene::new(mesh, displacements);
    let bytes = match PreviewKind::of(path)? {
        PreviewKind::Png => scene.png(title)?,
        PreviewKind::Gif => scene.gif(title)?,
    };
    overtone::io::write_atomically(path, &bytes)?;
    Ok(())
}

/// Up to `count` frames of largest motion, pairwise at least `gap` frames apart, in time order.
pub fn frames_of_largest_motion(magnitude: &[f64], count: usize, gap: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..magnitude.len()).collect();
    order.sort_by(|&a, &b| magnitude[b].total_cmp(&magnitude[a]).then(a.cmp(&b)));
    let mut picks: Vec<usize> = Vec::new();
    for k in order {
        if picks.len() == count {
            break;
        }
        if picks.iter().all(|&p| p.abs_diff(k) >= gap) {
            picks.push(k);
        }
    }
    picks.sort_unstable();
    picks
}

fn norm(v: &[f64]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Viridis, sampled at five points and interpolated linearly; `t` in [0, 1].
fn viridis(t: f64) -> [f64; 3] {
    const KEYS: [[f64; 3]; 5] = [
        [68.0, 1.0, 84.0],
        [59.0, 82.0, 139.0],
        [33.0, 145.0, 140.0],
        [94.0, 201.0, 98.0],
        [253.0, 231.0, 37.0],
    ];
    let x = t.clamp(0.0, 1.0) * 4.0;
    let i = (x.floor() as usize).min(3);
    let f = x - i as f64;
    [0, 1, 2].map(|c| KEYS[i][c] + f * (KEYS[i + 1][c] - KEYS[i][c]))
}

const RIG_GREY: [f64; 3] = [190.0, 190.0, 196.0];
const BACKGROUND: [u8; 3] = [246, 246, 248];

/// Share of the body's height the magnified panel shows the motion at (99th percentile of
/// `|u|`, before rounding the factor down to a 1-2-5 step).
const MAGNIFIED_SHARE: f64 = 0.05;

/// The factor of the magnified panel for motion of size `motion` (99th percentile of `|u|`) on a
/// body `height` tall: the largest of 2, 5, 10, 20, 50, … at most `MAGNIFIED_SHARE · height /
/// motion`, or `None` when that is under 2 (the motion shows as it is) or there is no motion.
pub fn magnification(motion: f64, height: f64) -> Option<f64> {
    if !(motion > 0.0 && height > 0.0) {
        return None;
    }
    let wanted = MAGNIFIED_SHARE * height / motion;
    let decade = 10f64.powf(wanted.log10().floor());
    let step = [5.0, 2.0, 1.0]
        .into_iter()
        .find(|m| m * decade <= wanted * (1.0 + 1e-12))?;
    let factor = step * decade;
    (factor >= 2.0).then_some(factor)
}

/// What a panel draws.
#[derive(Clone, Copy, PartialEq)]
enum View {
    /// The rig alone, grey.
    Rig,
    /// Rig + secondary motion, coloured by `|u|`.
    Final,
    /// Rig + the secondary motion times the scene's magnification, coloured by `|u|`.
    Magnified,
}

/// The bake in view coordinates: per frame, the final and the rig-alone points turned by the
/// camera rotation, and `|u|` per vertex.
struct Scene<'a> {
    mesh: &'a AnimatedMesh<'a>,
    final_view: Vec<Vec<[f64; 3]>>,
    rig_view: Vec<Vec<[f64; 3]>>,
    /// The factor and the rig + factor × secondary points, when the motion is too small to see.
    magnified: Option<(f64, Vec<Vec<[f64; 3]>>)>,
    magnitude: Vec<Vec<f64>>,
    /// `|u|` at the top of the colour scale (99th percentile; larger values take its colour).
    max_magnitude: f64,
    /// Largest width and height of any frame in view space, and the common vertical centre.
    extent: [f64; 2],
    centre_y: f64,
}

impl<'a> Scene<'a> {
    fn new(mesh: &'a AnimatedMesh<'a>, displacements: &[Vec<f64>]) -> Self {
        let (yaw, pitch) = (25f64.to_radians(), (-10f64).to_radians());
        let turn = |p: [f64; 3]| {
            let (x, z) = (
                yaw.cos() * p[0] + yaw.sin() * p[2],
                -yaw.sin() * p[0] + yaw.cos() * p[2],
            );
            let (y, z) = (
                pitch.cos() * p[1] - pitch.sin() * z,
                pitch.sin() * p[1] + pitch.cos() * z,
            );
            [x, y, z]
        };
        let mut final_view = Vec::new();
        let mut rig_view = Vec::new();
        let mut magnitude = Vec::new();
        for (f, u) in mesh.frames.iter().zip(displacements) {
            final_view.push(f.chunks_exact(3).map(|p| turn([p[0], p[1], p[2]])).collect::<Vec<_>>());
            rig_view.push(
                f.chunks_exact(3)
                    .zip(u.chunks_exact(3))
                    .map(|(p, d)| turn([p[0] - d[0], p[1] - d[1], p[2] - d[2]]))
                    .collect::<Vec<_>>(),
            );
            magnitude.push(u.chunks_exact(3).map(norm).collect::<Vec<_>>());
        }
        // The colour scale ends at the 99th percentile of |u| over the bake, so a few extreme
        // vertices (a foot at a contact) do not leave the rest of the body one colour.
        let mut all: Vec<f64> = magnitude.iter().flatten().cloned().collect();
        all.sort_by(f64::total_cmp);
        let max_magnitude = all.get((all.len() * 99) / 100).copied().unwrap_or(0.0);
        let height = rig_view
            .iter()
            .map(|pts| {
                let b = bounds(pts);
                b[3] - b[2]
            })
            .fold(0.0, f64::max);
        // The camera turn is linear: rig + k·u in view space is rig_view + k·(final − rig).
        let magnified = magnification(max_magnitude, height).map(|k| {
            let views = rig_view
                .iter()
                .zip(&final_view)
                .map(|(rig, fin)| {
                    rig.iter()
                        .zip(fin)
                        .map(|(r, f)| [0, 1, 2].map(|i| r[i] + k * (f[i] - r[i])))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>();
            (k, views)
        });
        let (mut w, mut h) = (0.0f64, 0.0f64);
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        let magnified_views = magnified.iter().flat_map(|(_, v)| v.iter());
        for pts in final_view.iter().chain(&rig_view).chain(magnified_views) {
            let b = bounds(pts);
            w = w.max(b[1] - b[0]);
            h = h.max(b[3] - b[2]);
            y0 = y0.min(b[2]);
            y1 = y1.max(b[3]);
        }
        Scene {
            mesh,
            final_view,
            rig_view,
            magnified,
            magnitude,
            max_magnitude,
            extent: [w.max(1e-12), (y1 - y0).max(h).max(1e-12)],
            centre_y: 0.5 * (y0 + y1),
        }
    }

    /// Pixels per unit so that every frame fits a `w × h` panel with a margin.
    fn scale(&self, w: usize, h: usize) -> f64 {
        0.9 * (w as f64 / self.extent[0]).min(h as f64 / self.extent[1])
    }

    /// The panels drawn for each frame and their captions (after `frame N: ` in the still).
    fn views(&self) -> Vec<(View, String)> {
        let mut v = vec![
            (View::Rig, "rig alone".to_string()),
            (View::Final, "rig + secondary".to_string()),
        ];
        if let Some((factor, _)) = &self.magnified {
            v.push((View::Magnified, format!("rig + {factor}× secondary (magnified)")));
        }
        v
    }

    /// Draws frame `k` in the view `view` into the panel at `(x0, y0)`.
    fn draw(&self, c: &mut Canvas, k: usize, view: View, x0: usize, y0: usize, w: usize, h: usize) {
        let with_secondary = view != View::Rig;
        let pts = match (view, &self.magnified) {
            (View::Rig, _) => &self.rig_view[k],
            (View::Magnified, Some((_, views))) => &views[k],
            _ => &self.final_view[k],
        };
        let b = bounds(pts);
        let s = self.scale(w, h);
        let cx = 0.5 * (b[0] + b[1]);
        let to_px = |p: &[f64; 3]| {
            [
                x0 as f64 + 0.5 * w as f64 + (p[0] - cx) * s,
                y0 as f64 + 0.5 * h as f64 - (p[1] - self.centre_y) * s,
                p[2],
            ]
        };
        let px: Vec<[f64; 3]> = pts.iter().map(to_px).collect();
        let light = {
            let l = [-0.35, 0.55, 0.75];
            let n = norm(&l);
            [l[0] / n, l[1] / n, l[2] / n]
        };
        for t in self.mesh.triangles.chunks_exact(3) {
            let (a, b2, c2) = (pts[t[0]], pts[t[1]], pts[t[2]]);
            let e1 = [b2[0] - a[0], b2[1] - a[1], b2[2] - a[2]];
            let e2 = [c2[0] - a[0], c2[1] - a[1], c2[2] - a[2]];
            let n = [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ];
            let nn = norm(&n);
            if nn == 0.0 {
                continue;
            }
            let shade = 0.25 + 0.75 * ((n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / nn).abs();
            let m = if with_secondary && self.max_magnitude > 0.0 {
                Some([t[0], t[1], t[2]].map(|v| self.magnitude[k][v] / self.max_magnitude))
            } else {
                None
            };
            let fill = m.map_or(Fill::Grey, Fill::Magnitude);
            c.triangle([px[t[0]], px[t[1]], px[t[2]]], shade, fill, (x0, y0, w, h));
        }
    }

    /// The still: three frames of largest motion, each as rig alone | rig + secondary.
    fn png(&self, title: &str) -> Result<Vec<u8>> {
        let n = self.mesh.frames.len();
        let magnitude = largest_motion_of(&self.magnitude);
        let picks = frames_of_largest_motion(&magnitude, 3, (n / 8).max(1));
        let views = self.views();
        let (pw, ph) = (if views.len() > 2 { 220usize } else { 260 }, 400usize);
        let group = views.len() * pw + 20;
        let (w, h) = (group * picks.len() - 20, ph + 150);
        let mut c = Canvas::new(w, h);
        let mut labels: Vec<(String, i32, i32)> = Vec::new();
        for (i, &k) in picks.iter().enumerate() {
            let t = (self.mesh.start_frame + k as f64) as i64;
            for (j, (view, caption)) in views.iter().enumerate() {
                let x = i * group + j * pw;
                self.draw(&mut c, k, *view, x, 50, pw, ph);
                let text = if j == 0 {
                    format!("frame {t}: {caption}")
                } else {
                    caption.clone()
                };
                labels.push((text, x as i32 + 15, 50 + ph as i32));
            }
        }
        c.annotate(title, &labels, self.max_magnitude)?;
        c.png()
    }

    /// The animation: every frame (strided to at most 50 images per second), rig alone | rig +
    /// secondary, with the frame number and the scale bar.
    fn gif(&self, title: &str) -> Result<Vec<u8>> {
        let views = self.views();
        let (pw, ph) = (240usize, 340usize);
        let (w, h) = (views.len() * pw, ph + 140);
        let stride = (self.mesh.fps / 50.0).ceil().max(1.0) as usize;
        let delay = (100.0 * stride as f64 / self.mesh.fps).round().max(2.0) as u16;
        let mut out = Vec::new();
        {
            let mut enc = gif::Encoder::new(&mut out, w as u16, h as u16, &[]).map_err(|e| anyhow!("GIF: {e}"))?;
            enc.set_repeat(gif::Repeat::Infinite).map_err(|e| anyhow!("GIF: {e}"))?;
            for k in (0..self.mesh.frames.len()).step_by(stride) {
                let mut c = Canvas::new(w, h);
                let t = (self.mesh.start_frame + k as f64) as i64;
                let mut labels = Vec::new();
                for (j, (view, caption)) in views.iter().enumerate() {
                    self.draw(&mut c, k, *view, j * pw, 45, pw, ph);
                    let text = if j == 0 {
                        format!("frame {t}: {caption}")
                    } else {
                        caption.clone()
                    };
                    labels.push((text, (j * pw) as i32 + 20, 45 + ph as i32));
                }
                c.annotate(title, &labels, self.max_magnitude)?;
                let mut frame = gif::Frame::from_rgb_speed(w as u16, h as u16, &c.rgb, 10);
                frame.delay = delay;
                enc.write_frame(&frame).map_err(|e| anyhow!("GIF: {e}"))?;
            }
        }
        Ok(out)
    }
}

/// One row of a figure still: a body drawn at the figure's instants.
pub struct FigureRow<'a> {
    /// Written above the row.
    pub label: String,
    /// Surface triangles (`k × 3`).
    pub triangles: &'a [usize],
    /// Positions (`n × 3` row-major) at each instant (one panel each).
    pub frames: Vec<&'a [f64]>,
    /// Written under each panel.
    pub captions: Vec<String>,
    /// RGB colour (0-255) of the body.
    pub colour: [f64; 3],
}

/// Draws a figure: one row per body, one panel per instant, every panel at the same scale and
/// camera (turned 30° about +Y and tilted 20° down, centred on the body), with the plane
/// `n · x = offset` drawn under the body when `floor` is given. Written atomically.
pub fn write_figure_png(
    path: &Path,
    title: &str,
    rows: &[FigureRow<'_>],
    floor: Option<([f64; 3], f64)>,
) -> Result<()> {
    anyhow::ensure!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| !r.frames.is_empty() && r.frames.len() == r.captions.len()),
        "figure: every row needs at least one frame and one caption per frame"
    );
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| anyhow!("bundled font failed to load"))?;
    let (yaw, pitch) = (30f64.to_radians(), 20f64.to_radians());
    let turn = |p: [f64; 3]| {
        let (x, z) = (
            yaw.cos() * p[0] + yaw.sin() * p[2],
            -yaw.sin() * p[0] + yaw.cos() * p[2],
        );
        [
            x,
            pitch.cos() * p[1] - pitch.sin() * z,
            pitch.sin() * p[1] + pitch.cos() * z,
        ]
    };
    let view = |x: &[f64]| -> Vec<[f64; 3]> { x.chunks_exact(3).map(|p| turn([p[0], p[1], p[2]])).collect() };
    let (mut ew, mut eh) = (1e-12f64, 1e-12f64);
    for r in rows {
        for f in &r.frames {
            let b = bounds(&view(f));
            ew = ew.max(b[1] - b[0]);
            eh = eh.max(b[3] - b[2]);
        }
    }
    let cols = rows.iter().map(|r| r.frames.len()).max().unwrap_or(1);
    let (pw, ph, row_h, top) = (300usize, 230usize, 290usize, 50usize);
    let (w, h) = (cols * pw, top + rows.len() * row_h + 10);
    let scale = 0.8 * (pw as f64 / ew).min(ph as f64 / eh);
    let light = {
        let l = [-0.35, 0.55, 0.75];
        let n = norm(&l);
        [l[0] / n, l[1] / n, l[2] / n]
    };
    let mut c = Canvas::new(w, h);
    let mut labels = Vec::new();
    for (ri, r) in rows.iter().enumerate() {
        let y0 = top + ri * row_h + 25;
        labels.push((r.label.clone(), 12, (y0 - 25) as i32));
        for (k, (f, caption)) in r.frames.iter().zip(&r.captions).enumerate() {
            let x0 = k * pw;
            let pts = view(f);
            let b = bounds(&pts);
            let (cx, cy) = (0.5 * (b[0] + b[1]), 0.5 * (b[2] + b[3]));
            let to_px = |p: &[f64; 3]| {
                [
                    x0 as f64 + 0.5 * pw as f64 + (p[0] - cx) * scale,
                    y0 as f64 + 0.5 * ph as f64 - (p[1] - cy) * scale,
                    p[2],
                ]
            };
            let clip = (x0, y0, pw, ph);
            let mut fill = |tri: [[f64; 3]; 3], colour: [f64; 3]| {
                let e1 = [tri[1][0] - tri[0][0], tri[1][1] - tri[0][1], tri[1][2] - tri[0][2]];
                let e2 = [tri[2][0] - tri[0][0], tri[2][1] - tri[0][1], tri[2][2] - tri[0][2]];
                let n = [
                    e1[1] * e2[2] - e1[2] * e2[1],
                    e1[2] * e2[0] - e1[0] * e2[2],
                    e1[0] * e2[1] - e1[1] * e2[0],
                ];
                let nn = norm(&n);
                if nn > 0.0 {
                    let shade = 0.25 + 0.75 * ((n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / nn).abs();
                    c.triangle(tri.map(|p| to_px(&p)), shade, Fill::Solid(colour), clip);
                }
            };
            if let Some((n, offset)) = floor {
                // A 4 m square of the plane around the body's centroid's foot.
                let m = f
                    .chunks_exact(3)
                    .fold([0.0; 3], |a, p| [a[0] + p[0], a[1] + p[1], a[2] + p[2]]);
                let m = m.map(|v| v * 3.0 / f.len() as f64);
                let d = n[0] * m[0] + n[1] * m[1] + n[2] * m[2] - offset;
                let foot = [m[0] - d * n[0], m[1] - d * n[1], m[2] - d * n[2]];
                let t1 = {
                    // n × (the axis along which n is smallest): never zero.
                    let k = (0..3).min_by(|&a, &b| n[a].abs().total_cmp(&n[b].abs())).unwrap_or(0);
                    let mut e = [0.0; 3];
                    e[k] = 1.0;
                    let t = [
                        n[1] * e[2] - n[2] * e[1],
                        n[2] * e[0] - n[0] * e[2],
                        n[0] * e[1] - n[1] * e[0],
                    ];
                    let l = norm(&t).max(1e-12);
                    t.map(|v| v / l)
                };
                let t2 = [
                    n[1] * t1[2] - n[2] * t1[1],
                    n[2] * t1[0] - n[0] * t1[2],
                    n[0] * t1[1] - n[1] * t1[0],
                ];
                let corner = |a: f64, b: f64| turn([0, 1, 2].map(|i| foot[i] + 2.0 * (a * t1[i] + b * t2[i])));
                let q = [
                    corner(-1.0, -1.0),
                    corner(1.0, -1.0),
                    corner(1.0, 1.0),
                    corner(-1.0, 1.0),
                ];
                fill([q[0], q[1], q[2]], FLOOR);
                fill([q[0], q[2], q[3]], FLOOR);
            }
            for t in r.triangles.chunks_exact(3) {
                fill([pts[t[0]], pts[t[1]], pts[t[2]]], r.colour);
            }
            labels.push((caption.clone(), (x0 + 12) as i32, (y0 + ph) as i32));
        }
    }
    let err = |e: &dyn std::fmt::Debug| anyhow!("drawing the figure labels: {e:?}");
    {
        let root = BitMapBackend::with_buffer(&mut c.rgb, (w as u32, h as u32)).into_drawing_area();
        root.draw(&Text::new(
            title.to_string(),
            (12, 12),
            ("sans-serif", 20).into_font().color(&BLACK),
        ))
        .map_err(|e| err(&e))?;
        let style = ("sans-serif", 15).into_font().color(&BLACK);
        for (text, x, y) in &labels {
            root.draw(&Text::new(text.clone(), (*x, *y + 4), style.clone()))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    overtone::io::write_atomically(path, &c.png()?)?;
    Ok(())
}

/// The floor's colour in figures.
const FLOOR: [f64; 3] = [214.0, 206.0, 190.0];

fn largest_motion_of(magnitude: &[Vec<f64>]) -> Vec<f64> {
    magnitude
        .iter()
        .map(|m| m.iter().cloned().fold(0.0, f64::max))
        .collect()
}

/// `[min x, max x, min y, max y]`.
fn bounds(pts: &[[f64; 3]]) -> [f64; 4] {
    pts.iter().fold(
        [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY],
        |b, p| [b[0].min(p[0]), b[1].max(p[0]), b[2].min(p[1]), b[3].max(p[1])],
    )
}

/// The colour of a triangle before shading.
#[derive(Clone, Copy)]
enum Fill {
    /// The rig alone.
    Grey,
    /// `|u|/max` at the three corners, interpolated and mapped through viridis.
    Magnitude([f64; 3]),
    /// One RGB colour (0-255).
    Solid([f64; 3]),
}

/// An RGB image with a z-buffer (larger z is nearer the camera).
struct Canvas {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
    depth: Vec<f64>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Self {
        Canvas {
            w,
            h,
            rgb: BACKGROUND.iter().copied().cycle().take(3 * w * h).collect(),
            depth: vec![f64::NEG_INFINITY; w * h],
        }
    }

    /// Fills a triangle given in pixels (`x`, `y`, depth) inside the panel `clip`, with shade
    /// `shade` times its fill colour.
    fn triangle(&mut self, p: [[f64; 3]; 3], shade: f64, fill: Fill, clip: (usize, usize, usize, usize)) {
        let area = (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
        if area.abs() < 1e-12 {
            return;
        }
        let (cx0, cy0, cw, ch) = clip;
        let xmin = p
            .iter()
            .map(|q| q[0])
            .fold(f64::INFINITY, f64::min)
            .floor()
            .max(cx0 as f64) as usize;
        let xmax = (p.iter().map(|q| q[0]).fold(f64::NEG_INFINITY, f64::max).ceil() as isize)
            .min((cx0 + cw).min(self.w) as isize - 1);
        let ymin = p
            .iter()
            .map(|q| q[1])
            .fold(f64::INFINITY, f64::min)
            .floor()
            .max(cy0 as f64) as usize;
        let ymax = (p.iter().map(|q| q[1]).fold(f64::NEG_INFINITY, f64::max).ceil() as isize)
            .min((cy0 + ch).min(self.h) as isize - 1);
        if xmax < 0 || ymax < 0 {
            return;
        }
        for y in ymin..=ymax as usize {
            for x in xmin..=xmax as usize {
                let (sx, sy) = (x as f64 + 0.5, y as f64 + 0.5);
                let w0 = ((p[1][0] - sx) * (p[2][1] - sy) - (p[2][0] - sx) * (p[1][1] - sy)) / area;
                let w1 = ((p[2][0] - sx) * (p[0][1] - sy) - (p[0][0] - sx) * (p[2][1] - sy)) / area;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = w0 * p[0][2] + w1 * p[1][2] + w2 * p[2][2];
                let i = y * self.w + x;
                if z <= self.depth[i] {
                    continue;
                }
                self.depth[i] = z;
                let base = match fill {
                    Fill::Magnitude(m) => viridis(w0 * m[0] + w1 * m[1] + w2 * m[2]),
                    Fill::Grey => RIG_GREY,
                    Fill::Solid(c) => c,
                };
                for c in 0..3 {
                    self.rgb[3 * i + c] = (base[c] * shade).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
    }

    /// The title, the panel labels and the scale bar (0 … `max` scene units) at the bottom.
    fn annotate(&mut self, title: &str, labels: &[(String, i32, i32)], max: f64) -> Result<()> {
        let (w, h) = (self.w, self.h);
        let (bx, by, bw, bh) = (40usize, h - 62, (w - 80).min(420), 14usize);
        for y in by..by + bh {
            for x in bx..bx + bw {
                let c = viridis((x - bx) as f64 / (bw - 1) as f64);
                for k in 0..3 {
                    self.rgb[3 * (y * w + x) + k] = c[k] as u8;
                }
            }
        }
        let err = |e: &dyn std::fmt::Debug| anyhow!("drawing the preview labels: {e:?}");
        let root = BitMapBackend::with_buffer(&mut self.rgb, (w as u32, h as u32)).into_drawing_area();
        let style = ("sans-serif", 15).into_font().color(&BLACK);
        root.draw(&Text::new(
            title.to_string(),
            (12, 12),
            ("sans-serif", 20).into_font().color(&BLACK),
        ))
        .map_err(|e| err(&e))?;
        for (text, x, y) in labels {
            root.draw(&Text::new(text.clone(), (*x, *y + 4), style.clone()))
                .map_err(|e| err(&e))?;
        }
        let by = by as i32;
        root.draw(&Text::new("|u| 0".to_string(), (bx as i32, by + 18), style.clone()))
            .map_err(|e| err(&e))?;
        root.draw(&Text::new(
            format!(">= {max:.3} units"),
            ((bx + bw) as i32 - 90, by + 18),
            style.clone(),
        ))
        .map_err(|e| err(&e))?;
        let legend = "colour: secondary displacement |u|; grey: the rig alone";
        // Beside the bar when it fits (the still), else under it (the narrower animation).
        let at = if bx + bw + 440 <= w {
            ((bx + bw) as i32 + 20, by - 1)
        } else {
            (bx as i32, by + 38)
        };
        root.draw(&Text::new(legend.to_string(), at, style))
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }

    fn png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.w as u32, self.h as u32);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc.write_header().map_err(|e| anyhow!("PNG: {e}"))?;
            wr.write_image_data(&self.rgb).map_err(|e| anyhow!("PNG: {e}"))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_png_and_gif_are_drawn() {
        assert_eq!(PreviewKind::of(Path::new("a/b.PNG")).unwrap(), PreviewKind::Png);
        assert_eq!(PreviewKind::of(Path::new("b.gif")).unwrap(), PreviewKind::Gif);
        let e = PreviewKind::of(Path::new("b.jpg")).unwrap_err().to_string();
        assert!(e.contains(".png or .gif") && e.contains(".jpg"), "{e}");
    }

    /// The factor is the 1-2-5 step at or under 5% of the height over the motion: CesiumMan's
    /// default bake (5 mm on 1.78 m: 17.8) gets 10, the Soft Belly preset's (18 mm: 4.9) 2,
    /// motion of 5% of the height or more none.
    #[test]
    fn magnification_is_a_one_two_five_step_under_the_share() {
        assert_eq!(magnification(0.005, 1.78), Some(10.0));
        assert_eq!(magnification(0.018, 1.78), Some(2.0));
        assert_eq!(magnification(0.01, 1.0), Some(5.0));
        assert_eq!(magnification(1e-4, 1.0), Some(500.0));
        assert_eq!(magnification(0.03, 1.0), None);
        assert_eq!(magnification(0.0, 1.0), None);
        assert_eq!(magnification(f64::NAN, 1.0), None);
    }

    #[test]
    fn picks_are_the_largest_and_apart() {
        let m = [0.0, 5.0, 4.9, 1.0, 0.0, 3.0, 0.0, 0.0, 2.0];
        assert_eq!(frames_of_largest_motion(&m, 3, 2), vec![1, 5, 8]);
    }

    #[test]
    fn a_triangle_fills_its_pixels_nearest_first() {
        let mut c = Canvas::new(10, 10);
        c.triangle(
            [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0]],
            1.0,
            Fill::Grey,
            (0, 0, 10, 10),
        );
        assert_eq!(&c.rgb[..3], &[190, 190, 196], "inside: rig grey");
        assert_eq!(&c.rgb[3 * 99..3 * 100], &BACKGROUND, "outside: background");
        // A nearer triangle wins; a farther one drawn later does not.
        c.triangle(
            [[0.0, 0.0, 1.0], [10.0, 0.0, 1.0], [0.0, 10.0, 1.0]],
            0.5,
            Fill::Grey,
            (0, 0, 10, 10),
        );
        c.triangle(
            [[0.0, 0.0, -1.0], [10.0, 0.0, -1.0], [0.0, 10.0, -1.0]],
            1.0,
            Fill::Grey,
            (0, 0, 10, 10),
        );
        assert_eq!(&c.rgb[..3], &[95, 95, 98]);
        let filled = c.depth.iter().filter(|d| d.is_finite()).count();
        // Pixel centres (x + ½, y + ½) with x + y + 1 ≤ 10 (the hypotenuse counts as inside).
        assert_eq!(filled, 55, "pixel centres on or inside x + y = 10");
    }
}
