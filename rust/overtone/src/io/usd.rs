//! USD caches: one `UsdGeom.Mesh` with time-sampled `points`, as text (`.usda`) or in the binary
//! crate format (`.usdc`, `.usd`).
//!
//! The layer's metadata sets `timeCodesPerSecond` = `framesPerSecond` = the bake's fps, the start
//! and end time codes to the first and last frame, `upAxis` as given and `metersPerUnit` = 1
//! (glTF's metres; other scenes keep their own units). The mesh (the layer's `defaultPrim`) has
//! constant `faceVertexCounts` (all 3) and `faceVertexIndices` (counter-clockwise:
//! `orientation = "rightHanded"`), and `points` and `extent` sampled at time codes
//! `start_frame + k`. Positions are `float` (`point3f[]`) printed with the shortest text that
//! reads back to the same `f32`, so the text and binary caches hold identical values.
//!
//! The binary file is the same layer converted by the `openusd` crate's crate-file writer
//! (0.6.0, the last release that builds with rustc < 1.96), with one correction: that release
//! stores the children lists of the pseudo-root and of prims (`primChildren`, `properties`) as
//! `token[]` arrays, where Pixar's reader expects `TfTokenVector` values and otherwise sees a
//! layer without prims (fixed in openusd 0.8). [`children_as_token_vectors`] rewrites those
//! value representations.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{OvertoneError, Result};
use crate::io::animated_mesh::{usd_identifier, AnimatedMesh};
use crate::io::write_atomically;

/// The stage's up axis (USD's `upAxis` layer metadata).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpAxis {
    /// +Y up: glTF, Maya, Houdini.
    Y,
    /// +Z up: Blender.
    Z,
}

/// Writes `mesh` as a text USD layer, atomically.
pub fn write_usda(path: &Path, mesh: &AnimatedMesh, up: UpAxis) -> Result<()> {
    let text = usda_text(mesh, up)?;
    write_atomically(path, text.as_bytes())
}

/// Writes `mesh` as a binary (crate) USD layer, atomically.
pub fn write_usdc(path: &Path, mesh: &AnimatedMesh, up: UpAxis) -> Result<()> {
    let bytes = usdc_bytes(mesh, up)?;
    write_atomically(path, &bytes)
}

/// The crate-format bytes of `mesh`'s layer.
pub(crate) fn usdc_bytes(mesh: &AnimatedMesh, up: UpAxis) -> Result<Vec<u8>> {
    let text = usda_text(mesh, up)?;
    let fail = |stage: &str, e: &dyn std::fmt::Display| {
        OvertoneError::Unsupported(format!("USD crate writer failed while {stage} the layer: {e}"))
    };
    let data = openusd::usda::parse(&text).map_err(|e| fail("reading", &format!("{e:#}")))?;
    let mut out = std::io::Cursor::new(Vec::with_capacity(text.len() / 2));
    openusd::usdc::CrateWriter::write(&data, &mut out).map_err(|e| fail("writing", &format!("{e:#}")))?;
    children_as_token_vectors(out.into_inner())
}

/// Crate value type codes and value-representation bits (Pixar's `crateFile.h`).
const TYPE_TOKEN: u64 = 11;
const TYPE_TOKEN_VECTOR: u64 = 41;
const REP_ARRAY: u64 = 1 << 63;
const REP_INLINED: u64 = 1 << 62;
const REP_TYPE_SHIFT: u32 = 48;

/// Rewrites every non-inlined `token[]` value representation of a crate file to `TfTokenVector`
/// (same payload: a `u64` count and `u32` token indices). The layers written here author no
/// `token[]` attribute, so those values are exactly the children lists.
///
/// Crate layout used: bootstrap `"PXR-USDC"`, version (8 bytes), `u64` table-of-contents offset;
/// the table: `u64` count, then per section a 16-byte name, `u64` start and size; the `FIELDS`
/// section: `u64` field count, the token indices (`u64` size + compressed bytes), the value
/// representations (`u64` size + a chunk-count byte 0 + one LZ4 block of `count` `u64`s). The
/// corrected `FIELDS` section and a new table are appended and the bootstrap points at the new
/// table; the old section stays unreferenced.
pub(crate) fn children_as_token_vectors(mut b: Vec<u8>) -> Result<Vec<u8>> {
    let bad =
        |what: &str| OvertoneError::Unsupported(format!("USD crate writer produced an unexpected layout: {what}"));
    let u64_at = |b: &[u8], o: usize| -> Result<u64> {
        b.get(o..o + 8)
            .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
            .ok_or_else(|| bad("offset past the end"))
    };
    if b.get(..8) != Some(b"PXR-USDC".as_slice()) {
        return Err(bad("no PXR-USDC bootstrap"));
    }
    let toc = u64_at(&b, 16)? as usize;
    let n_sections = u64_at(&b, toc)? as usize;
    let entry = |i: usize| toc + 8 + i * 32;
    let fields = (0..n_sections.min(64))
        .find(|&i| b.get(entry(i)..entry(i) + 7) == Some(b"FIELDS\0".as_slice()))
        .ok_or_else(|| bad("no FIELDS section"))?;
    let start = u64_at(&b, entry(fields) + 16)? as usize;
    let n_fields = u64_at(&b, start)? as usize;
    let tokens_size = u64_at(&b, start + 8)? as usize;
    let reps_at = start + 16 + tokens_size;
    let reps_size = u64_at(&b, reps_at)? as usize;
    let block = b
        .get(reps_at + 8..reps_at + 8 + reps_size)
        .ok_or_else(|| bad("FIELDS overruns the file"))?;
    if block.first() != Some(&0) {
        return Err(bad("multi-chunk LZ4 value representations"));
    }
    let mut reps = lz4_flex::block::decompress(&block[1..], n_fields * 8).map_err(|e| bad(&format!("LZ4: {e}")))?;
    if reps.len() != n_fields * 8 {
        return Err(bad("value representation count"));
    }
    for r in reps.chunks_exact_mut(8) {
        let rep = u64::from_le_bytes(r.try_into().expect("8 bytes"));
        let ty = (rep >> REP_TYPE_SHIFT) & 0xff;
        if ty == TYPE_TOKEN && rep & REP_ARRAY != 0 && rep & REP_INLINED == 0 {
            let fixed = (rep & !REP_ARRAY & !(0xff << REP_TYPE_SHIFT)) | (TYPE_TOKEN_VECTOR << REP_TYPE_SHIFT);
            r.copy_from_slice(&fixed.to_le_bytes());
        }
    }
    let mut compressed = vec![0u8];
    compressed.extend_from_slice(&lz4_flex::block::compress(&reps));
    let new_start = b.len();
    let head = b[start..start + 16 + tokens_size].to_vec();
    b.extend_from_slice(&head);
    b.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
    b.extend_from_slice(&compressed);
    let new_size = b.len() - new_start;
    let new_toc = b.len();
    let table = b[toc..toc + 8 + n_sections * 32].to_vec();
    b.extend_from_slice(&table);
    let e = new_toc + 8 + fields * 32;
    b[e + 16..e + 24].copy_from_slice(&(new_start as u64).to_le_bytes());
    b[e + 24..e + 32].copy_from_slice(&(new_size as u64).to_le_bytes());
    b[16..24].copy_from_slice(&(new_toc as u64).to_le_bytes());
    Ok(b)
}

/// The text of `mesh`'s USD layer (see the module documentation).
pub(crate) fn usda_text(mesh: &AnimatedMesh, up: UpAxis) -> Result<String> {
    mesh.validate()?;
    let name = usd_identifier(mesh.name);
    let n_frames = mesh.frames.len();
    let (start, end) = (mesh.start_frame, mesh.start_frame + (n_frames - 1) as f64);
    let mut s = String::with_capacity(64 + n_frames * mesh.n_points() * 30);
    let up = match up {
        UpAxis::Y => "Y",
        UpAxis::Z => "Z",
    };
    let _ = write!(
        s,
        "#usda 1.0\n(\n    defaultPrim = \"{name}\"\n    doc = \"Overtone {} bake: {n_frames} frames at {} fps\"\n    endTimeCode = {}\n    framesPerSecond = {}\n    metersPerUnit = 1\n    startTimeCode = {}\n    timeCodesPerSecond = {}\n    upAxis = \"{up}\"\n)\n\ndef Mesh \"{name}\"\n{{\n",
        env!("CARGO_PKG_VERSION"),
        mesh.fps,
        number(end),
        number(mesh.fps),
        number(start),
        number(mesh.fps),
    );
    s.push_str("    uniform bool doubleSided = 0\n    float3[] extent.timeSamples = {\n");
    for k in 0..n_frames {
        let b = mesh.bounds(k);
        let _ = writeln!(
            s,
            "        {}: [({}, {}, {}), ({}, {}, {})],",
            number(start + k as f64),
            b[0] as f32,
            b[1] as f32,
            b[2] as f32,
            b[3] as f32,
            b[4] as f32,
            b[5] as f32
        );
    }
    s.push_str("    }\n    int[] faceVertexCounts = [");
    join(&mut s, (0..mesh.triangles.len() / 3).map(|_| 3usize));
    s.push_str("]\n    int[] faceVertexIndices = [");
    join(&mut s, mesh.triangles.iter().copied());
    s.push_str("]\n    uniform token orientation = \"rightHanded\"\n    point3f[] points.timeSamples = {\n");
    for (k, f) in mesh.frames.iter().enumerate() {
        let _ = write!(s, "        {}: [", number(start + k as f64));
        for (i, p) in f.chunks_exact(3).enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "({}, {}, {})", p[0] as f32, p[1] as f32, p[2] as f32);
        }
        s.push_str("],\n");
    }
    s.push_str("    }\n    uniform token subdivisionScheme = \"none\"\n}\n");
    Ok(s)
}

/// A double as USD text (integers without a fraction).
fn number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn join(s: &mut String, items: impl Iterator<Item = usize>) {
    for (i, v) in items.enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetra() -> (Vec<usize>, Vec<Vec<f64>>) {
        let tris = vec![0, 2, 1, 0, 1, 3, 1, 2, 3, 0, 3, 2];
        let frames = (0..3)
            .map(|k| {
                vec![
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                    0.0,
                    0.1 * k as f64,
                    0.0,
                    1.0 / 3.0,
                ]
            })
            .collect();
        (tris, frames)
    }

    #[test]
    fn text_and_crate_layers_hold_the_samples() {
        let (tris, frames) = tetra();
        let mesh = AnimatedMesh {
            name: "tet 1",
            triangles: &tris,
            frames: &frames,
            fps: 24.0,
            start_frame: 1.0,
        };
        let text = usda_text(&mesh, UpAxis::Y).unwrap();
        assert!(text.contains("defaultPrim = \"tet_1\""));
        assert!(text.contains("timeCodesPerSecond = 24"));
        assert!(text.contains("startTimeCode = 1") && text.contains("endTimeCode = 3"));
        assert!(text.contains("3: [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0.2, 0, 0.33333334)]"));
        // The crate file reads back (openusd's reader) with the same points at time code 3.
        let bytes = usdc_bytes(&mesh, UpAxis::Y).unwrap();
        assert_eq!(&bytes[..8], b"PXR-USDC");
        let data = openusd::usda::parse(&text).unwrap();
        let again = {
            let dir = std::env::temp_dir().join(format!("overtone-usd-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let p = dir.join("t.usdc");
            std::fs::write(&p, &bytes).unwrap();
            let d = openusd::usdc::read_file(&p).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            d
        };
        use openusd::sdf::AbstractData;
        let path = openusd::sdf::Path::new("/tet_1.points").unwrap();
        let a = format!("{:?}", data.get_field(&path, "timeSamples").unwrap());
        let b = format!("{:?}", again.get_field(&path, "timeSamples").unwrap());
        assert!(a.contains("0.33333334"), "{a}");
        assert_eq!(a, b, "text and crate layers differ");
    }
}
