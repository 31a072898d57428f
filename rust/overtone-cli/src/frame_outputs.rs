//! A bake's caches, written as its frames arrive. PC2 and MDD files (and a folder of per-mesh
//! PC2 files) are streamed frame by frame, so a long bake's memory does not grow with its length;
//! Alembic and USD files, and the preview pictures, are written at the end from frames kept in
//! memory (only when one of them is asked for). Every file is replaced atomically when the bake
//! completes; a bake that fails or is interrupted leaves the previous files untouched. The
//! report's per-frame motion is measured on the way.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use overtone::io::{MddWriter, Pc2Writer};

use crate::cache_format::CacheFormat;

/// What a bake writes and how its frames are laid out.
pub struct Layout<'a> {
    /// `--out`: a cache file, or a folder of `.pc2` files (one per mesh).
    pub out: &'a std::path::Path,
    /// With a folder: per file name, its range of points.
    pub mesh_outputs: &'a [(String, Range<usize>)],
    /// `--mdd`.
    pub mdd: Option<&'a std::path::Path>,
    /// Preview pictures asked for (the frames are then kept in memory).
    pub previews: bool,
    pub n_frames: usize,
    pub n_points: usize,
    /// Output frames per second (MDD times, Alembic/USD time base).
    pub fps: f64,
    /// The first frame's number (PC2 start frame, Alembic/USD first sample).
    pub start_frame: f64,
}

/// The streams of one bake.
pub struct FrameOutputs {
    pc2: Option<Pc2Writer>,
    mdd_out: Option<MddWriter>,
    parts: Vec<(Pc2Writer, Range<usize>)>,
    mdd: Option<MddWriter>,
    /// Whether the frames are kept (Alembic/USD `--out`, previews).
    keep: bool,
    frames: Vec<Vec<f64>>,
    displacements: Vec<Vec<f64>>,
    written: Vec<String>,
    n_frames: usize,
    count: usize,
    diagonal: f64,
    motion: Vec<(f64, f64)>,
    /// The previous frame's rig-only positions (`n × 3`), for the rig's motion per frame.
    prev_rig: Vec<f64>,
    rig: Vec<f64>,
    write_ms: f64,
    /// The folder `open` created for per-mesh files, removed again when the bake does not
    /// complete (`None` once finished, or when it existed).
    created: Option<PathBuf>,
}

impl Drop for FrameOutputs {
    /// A bake that did not complete: its temporary files go (the writers' own drop) and a
    /// folder it created for them is removed again, empty.
    fn drop(&mut self) {
        self.pc2 = None;
        self.mdd_out = None;
        self.parts.clear();
        self.mdd = None;
        if let Some(dir) = self.created.take() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// What the streams wrote and measured.
pub struct Written {
    /// The cache files written (the `.mdd` of `--mdd` not included).
    pub files: Vec<String>,
    /// Milliseconds spent writing caches (streamed and final).
    pub write_ms: f64,
    pub n_frames: usize,
    /// The diagonal of the rig-only surface's bounding box in the first frame (world units).
    pub diagonal: f64,
    /// Per frame: the largest complementary displacement of a point and the largest motion of
    /// a rig-only position since the previous frame (0 for the first), world units.
    pub motion: Vec<(f64, f64)>,
    /// The frames and displacements, when kept (previews).
    pub frames: Vec<Vec<f64>>,
    pub displacements: Vec<Vec<f64>>,
}

impl FrameOutputs {
    /// Opens the streams of `layout` (their temporary files; nothing is replaced yet).
    pub fn open(layout: &Layout) -> Result<Self> {
        let (n, start) = (layout.n_points, layout.start_frame as f32);
        let mut s = Self {
            pc2: None,
            mdd_out: None,
            parts: Vec::new(),
            mdd: None,
            keep: layout.previews,
            frames: Vec::new(),
            displacements: Vec::new(),
            written: Vec::new(),
            n_frames: layout.n_frames,
            count: 0,
            diagonal: 0.0,
            motion: Vec::with_capacity(layout.n_frames),
            prev_rig: vec![0.0; 3 * n],
            rig: vec![0.0; 3 * n],
            write_ms: 0.0,
            created: None,
        };
        if layout.mesh_outputs.is_empty() {
            anyhow::ensure!(
                !layout.out.is_dir(),
                "--out {} is a folder; one mesh is written to a file",
                layout.out.display()
            );
            match CacheFormat::of(layout.out)? {
                CacheFormat::Pc2 => {
                    s.pc2 = Some(Pc2Writer::create(layout.out, start, 1.0, n, layout.n_frames)?);
                }
                CacheFormat::Mdd => {
                    s.mdd_out = Some(MddWriter::create(layout.out, layout.fps, n, layout.n_frames)?);
                }
                CacheFormat::Alembic | CacheFormat::Usda | CacheFormat::Usdc => s.keep = true,
            }
            s.written.push(layout.out.display().to_string());
        } else {
            if !layout.out.exists() {
                s.created = Some(layout.out.to_path_buf());
            }
            std::fs::create_dir_all(layout.out)
                .with_context(|| format!("creating the folder {}", layout.out.display()))?;
            for (file, range) in layout.mesh_outputs {
                let path: PathBuf = layout.out.join(file);
                s.parts.push((
                    Pc2Writer::create(&path, start, 1.0, range.len(), layout.n_frames)?,
                    range.clone(),
                ));
                s.written.push(path.display().to_string());
            }
        }
        if let Some(m) = layout.mdd {
            s.mdd = Some(MddWriter::create(m, layout.fps, n, layout.n_frames)?);
        }
        Ok(s)
    }

    /// Writes the next frame: final positions `x` and complementary displacement `u` (both
    /// `n × 3`, world units).
    pub fn push(&mut self, x: &[f64], u: &[f64]) -> Result<()> {
        anyhow::ensure!(
            x.len() == self.rig.len() && u.len() == self.rig.len(),
            "frame {} has {} positions and {} displacements, not {}",
            self.count,
            x.len(),
            u.len(),
            self.rig.len()
        );
        self.measure(x, u);
        let t = Instant::now();
        if let Some(w) = &mut self.pc2 {
            w.push(x)?;
        }
        if let Some(w) = &mut self.mdd_out {
            w.push(x)?;
        }
        for (w, r) in &mut self.parts {
            w.push(&x[3 * r.start..3 * r.end])?;
        }
        if let Some(w) = &mut self.mdd {
            w.push(x)?;
        }
        self.write_ms += t.elapsed().as_secs_f64() * 1e3;
        if self.keep {
            self.frames.push(x.to_vec());
            self.displacements.push(u.to_vec());
        }
        self.count += 1;
        Ok(())
    }

    /// The report's figures of frame `count`: the diagonal (first frame), the largest
    /// displacement and the rig's largest motion since the previous frame.
    fn measure(&mut self, x: &[f64], u: &[f64]) {
        let norm = |v: &[f64]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        for ((r, x), u) in self.rig.iter_mut().zip(x).zip(u) {
            *r = x - u;
        }
        if self.count == 0 {
            let (lo, hi) = overtone::mesh::bounding_box(&self.rig);
            self.diagonal = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f64>().sqrt();
        }
        let umax = u.chunks_exact(3).map(norm).fold(0.0, f64::max);
        let rig_motion = if self.count == 0 {
            0.0
        } else {
            self.rig
                .chunks_exact(3)
                .zip(self.prev_rig.chunks_exact(3))
                .map(|(a, b)| norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]]))
                .fold(0.0, f64::max)
        };
        self.motion.push((umax, rig_motion));
        std::mem::swap(&mut self.rig, &mut self.prev_rig);
    }

    /// Completes every stream and writes the kept formats (`name`, `triangles`: the written
    /// mesh). Errors when fewer frames arrived than announced (nothing is replaced).
    pub fn finish(mut self, name: &str, triangles: &[usize], fps: f64, start_frame: f64) -> Result<Written> {
        anyhow::ensure!(
            self.count == self.n_frames,
            "{} of {} frames were baked",
            self.count,
            self.n_frames
        );
        let t = Instant::now();
        let kept_format = self.pc2.is_none() && self.mdd_out.is_none() && self.parts.is_empty();
        if let Some(w) = self.pc2.take() {
            w.finish()?;
        }
        if let Some(w) = self.mdd_out.take() {
            w.finish()?;
        }
        for (w, _) in std::mem::take(&mut self.parts) {
            w.finish()?;
        }
        if kept_format {
            let path = PathBuf::from(&self.written[0]);
            let mesh = overtone::io::AnimatedMesh {
                name,
                triangles,
                frames: &self.frames,
                fps,
                start_frame,
            };
            crate::cache_format::write_cache(&path, &mesh)?;
        }
        if let Some(w) = self.mdd.take() {
            w.finish()?;
        }
        // Complete: the folder stays.
        self.created = None;
        Ok(Written {
            files: std::mem::take(&mut self.written),
            write_ms: self.write_ms + t.elapsed().as_secs_f64() * 1e3,
            n_frames: self.count,
            diagonal: self.diagonal,
            motion: std::mem::take(&mut self.motion),
            frames: std::mem::take(&mut self.frames),
            displacements: std::mem::take(&mut self.displacements),
        })
    }
}
