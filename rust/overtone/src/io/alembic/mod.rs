//! Alembic (`.abc`) caches: one `AbcGeom` PolyMesh with animated positions, in an Ogawa file.
//!
//! No Rust crate writes Alembic, so this module writes the subset of the AbcCoreOgawa layout a
//! deformation cache needs (what Alembic 1.8's own writer produces for the same mesh):
//!
//! * root group: file version (`i32` 0), library version (`i32`), the top object, the archive
//!   metadata (`_ai_Application=Overtone …`), the time samplings, the indexed metadata table;
//! * time samplings: the default one (index 0) and the bake's uniform one (index 1): time per
//!   cycle `1/fps`, first sample at `start_frame/fps` seconds, so frame `f` of a 24 fps scene
//!   reads sample `f − start_frame`;
//! * the top object has one child, the PolyMesh object named after the mesh, whose `.geom`
//!   compound holds `.selfBnds` (`box3d` per sample), `P` (`float32[3]` per vertex, one sample
//!   per frame), and the constant topology `.faceIndices` / `.faceCounts` (`int32`, triangles
//!   wound clockwise as Alembic expects, i.e. reversed from the counter-clockwise input).
//!
//! Every array sample is stored as a 16-byte key followed by its values; the key here is the
//! first 16 bytes of the blake3 hash of the values (readers use it only to share identical
//! samples). The two 16-byte hashes closing each object's header block are blake3 hashes of the
//! object's property headers and of its children's headers (readers only compare them).

mod ogawa;

use std::path::Path;

use crate::error::Result;
use crate::io::animated_mesh::{alembic_object_name, AnimatedMesh};
use crate::io::write_atomically;
use ogawa::OgawaWriter;

/// AbcCoreOgawa's layout version this writer follows.
const OGAWA_FILE_VERSION: i32 = 0;
/// The Alembic library version whose layout is reproduced (1.8.0 as `XXYYZZ`).
const LIBRARY_VERSION: i32 = 10800;

/// Plain-old-data codes of AbcCoreAbstract.
const POD_INT32: u32 = 6;
const POD_FLOAT32: u32 = 10;
const POD_FLOAT64: u32 = 11;

/// Indexed metadata (index 0 is the empty metadata, the table holds 1…).
const META_BOX: &str = "interpretation=box";
const META_POINT: &str = "geoScope=vtx;interpretation=point";
const META_GEOM: &str = "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1";
const META_OBJECT: &str =
    "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1;schemaObjTitle=AbcGeom_PolyMesh_v1:.geom";
const META_TABLE: [&str; 4] = [META_BOX, META_POINT, META_GEOM, META_OBJECT];

/// Writes `mesh` as an Alembic file, atomically (see the module documentation for the layout).
pub fn write_alembic(path: &Path, mesh: &AnimatedMesh) -> Result<()> {
    let bytes = alembic_bytes(mesh)?;
    write_atomically(path, &bytes)
}

/// The bytes of the Alembic file of `mesh`.
pub(crate) fn alembic_bytes(mesh: &AnimatedMesh) -> Result<Vec<u8>> {
    mesh.validate()?;
    let n_samples = mesh.frames.len() as u32;
    let mut w = OgawaWriter::new();
    let version = w.data(&[&OGAWA_FILE_VERSION.to_le_bytes()]);
    let library = w.data(&[&LIBRARY_VERSION.to_le_bytes()]);

    // The .geom compound: .selfBnds, P, .faceIndices, .faceCounts, then their headers.
    let mut bounds = Vec::with_capacity(mesh.frames.len());
    let mut points = Vec::with_capacity(2 * mesh.frames.len());
    let mut keys = blake3::Hasher::new();
    for k in 0..mesh.frames.len() {
        let b: Vec<u8> = mesh.bounds(k).iter().flat_map(|x| x.to_le_bytes()).collect();
        let key = sample_key(&b);
        keys.update(&key);
        bounds.push(w.data(&[&key, &b]));
        let p: Vec<u8> = mesh.frames[k].iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        let key = sample_key(&p);
        keys.update(&key);
        points.push(w.data(&[&key, &p]));
        points.push(w.data(&[]));
    }
    let self_bounds = w.group(&bounds);
    let p = w.group(&points);
    let indices: Vec<u8> = mesh
        .triangles
        .chunks_exact(3)
        .flat_map(|t| [t[0], t[2], t[1]])
        .flat_map(|i| (i as i32).to_le_bytes())
        .collect();
    let counts: Vec<u8> = std::iter::repeat_n(3i32, mesh.triangles.len() / 3)
        .flat_map(|c| c.to_le_bytes())
        .collect();
    let (ki, kc) = (sample_key(&indices), sample_key(&counts));
    keys.update(&ki);
    keys.update(&kc);
    let face_indices = {
        let d = w.data(&[&ki, &indices]);
        let dims = w.data(&[]);
        w.group(&[d, dims])
    };
    let face_counts = {
        let d = w.data(&[&kc, &counts]);
        let dims = w.data(&[]);
        w.group(&[d, dims])
    };
    let mut headers = Vec::new();
    let sampled = |name: &'static str, kind, pod, extent, meta| Property {
        name,
        kind,
        pod,
        extent,
        n_samples,
        constant: n_samples == 1,
        meta,
    };
    property_header(
        &mut headers,
        &sampled(".selfBnds", Kind::Scalar, POD_FLOAT64, 6, META_BOX),
    );
    property_header(&mut headers, &sampled("P", Kind::Array, POD_FLOAT32, 3, META_POINT));
    for name in [".faceIndices", ".faceCounts"] {
        property_header(
            &mut headers,
            &Property {
                name,
                kind: Kind::Array,
                pod: POD_INT32,
                extent: 1,
                n_samples,
                constant: true,
                meta: "",
            },
        );
    }
    let geom_headers = w.data(&[&headers]);
    let geom = w.group(&[self_bounds, p, face_indices, face_counts, geom_headers]);

    // The mesh object: its properties (.geom) and, with no children, just the two hashes.
    let mut top_props = Vec::new();
    property_header(
        &mut top_props,
        &Property {
            name: ".geom",
            kind: Kind::Compound,
            pod: 0,
            extent: 0,
            n_samples: 0,
            constant: false,
            meta: META_GEOM,
        },
    );
    let props_headers = w.data(&[&top_props]);
    let props = w.group(&[geom, props_headers]);
    keys.update(&headers);
    keys.update(&top_props);
    let props_hash = digest(keys.finalize().as_bytes());
    let no_children = digest(blake3::hash(b"").as_bytes());
    let mesh_hashes = w.data(&[&props_hash, &no_children]);
    let mesh_object = w.group(&[props, mesh_hashes]);

    // The top object: no properties, the mesh as its one child.
    let name = alembic_object_name(mesh.name);
    let mut child = Vec::new();
    child.extend_from_slice(&(name.len() as u32).to_le_bytes());
    child.extend_from_slice(name.as_bytes());
    child.push(meta_index(META_OBJECT));
    let children_hash = digest(blake3::hash(&child).as_bytes());
    let top_props_hash = digest(blake3::hash(b"").as_bytes());
    let top_headers = w.data(&[&child, &top_props_hash, &children_hash]);
    let empty = w.group(&[]);
    let top = w.group(&[empty, mesh_object, top_headers]);

    let archive_meta = format!("_ai_Application=Overtone {}", env!("CARGO_PKG_VERSION"));
    let archive_meta = w.data(&[archive_meta.as_bytes()]);
    let mut samplings = Vec::new();
    time_sampling(&mut samplings, 0, 1.0, 0.0);
    time_sampling(&mut samplings, n_samples, 1.0 / mesh.fps, mesh.start_frame / mesh.fps);
    let samplings = w.data(&[&samplings]);
    let mut table = Vec::new();
    for m in META_TABLE {
        table.push(m.len() as u8);
        table.extend_from_slice(m.as_bytes());
    }
    let table = w.data(&[&table]);
    let root = w.group(&[version, library, top, archive_meta, samplings, table]);
    Ok(w.finish(root))
}

/// The 16-byte key stored before an array or scalar sample's values.
fn sample_key(values: &[u8]) -> [u8; 16] {
    digest(blake3::hash(values).as_bytes())
}

fn digest(h: &[u8; 32]) -> [u8; 16] {
    let mut d = [0u8; 16];
    d.copy_from_slice(&h[..16]);
    d
}

/// Index of `meta` in the indexed metadata table (1-based; 0 is the empty metadata).
fn meta_index(meta: &str) -> u8 {
    if meta.is_empty() {
        return 0;
    }
    META_TABLE
        .iter()
        .position(|&m| m == meta)
        .map(|i| i as u8 + 1)
        .expect("metadata strings are from the table")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Compound = 0,
    Scalar = 1,
    Array = 2,
}

/// A property header as AbcCoreOgawa encodes it.
struct Property {
    name: &'static str,
    kind: Kind,
    pod: u32,
    extent: u32,
    /// Samples the property answers for (all frames, also when only one is stored).
    n_samples: u32,
    /// One stored sample stands for all (topology, or a one-frame cache).
    constant: bool,
    meta: &'static str,
}

/// Appends the header of `p`: a 32-bit info word (bits 0-1 property kind, 2-3 the byte width of
/// the counts that follow — 1, 2 or 4 bytes —, 4-7 the POD, 8 "has a time sampling index",
/// 10 homogeneous, 11 constant, 12-19 extent, 20-27 metadata index), then for non-compounds the
/// sample count and the time sampling index (1), then the name's length and the name.
fn property_header(out: &mut Vec<u8>, p: &Property) {
    const TIME_SAMPLING: u32 = 1;
    let widest = [p.meta.len() as u32, p.name.len() as u32, p.n_samples, TIME_SAMPLING]
        .into_iter()
        .max()
        .unwrap_or(0);
    let hint = match widest {
        0..=255 => 0u32,
        256..=65535 => 1,
        _ => 2,
    };
    let mut info = (hint << 2) | ((meta_index(p.meta) as u32) << 20);
    if p.kind != Kind::Compound {
        info |= p.kind as u32 | (p.pod << 4) | 0x100 | 0x400 | ((p.extent & 0xff) << 12);
        if p.constant {
            info |= 0x800;
        }
    }
    out.extend_from_slice(&info.to_le_bytes());
    let push = |out: &mut Vec<u8>, v: u32| match hint {
        0 => out.push(v as u8),
        1 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        _ => out.extend_from_slice(&v.to_le_bytes()),
    };
    if p.kind != Kind::Compound {
        push(out, p.n_samples);
        push(out, TIME_SAMPLING);
    }
    push(out, p.name.len() as u32);
    out.extend_from_slice(p.name.as_bytes());
}

/// Appends a uniform time sampling: the samples it covers, the time per cycle (s), one stored
/// time (the first sample's, s).
fn time_sampling(out: &mut Vec<u8>, max_samples: u32, time_per_cycle: f64, start: f64) {
    out.extend_from_slice(&max_samples.to_le_bytes());
    out.extend_from_slice(&time_per_cycle.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_header_matches_alembic_encoding() {
        // The bytes Alembic 1.8 writes for `P` over 3 samples at time sampling 1.
        let mut out = Vec::new();
        let p = Property {
            name: "P",
            kind: Kind::Array,
            pod: POD_FLOAT32,
            extent: 3,
            n_samples: 3,
            constant: false,
            meta: META_POINT,
        };
        property_header(&mut out, &p);
        let info = u32::from_le_bytes(out[..4].try_into().unwrap());
        assert_eq!(info & 3, 2, "array");
        assert_eq!((info >> 4) & 0xf, 10, "float32");
        assert_eq!((info >> 12) & 0xff, 3, "extent");
        assert_eq!((info >> 20) & 0xff, 2, "metadata index");
        assert_eq!(&out[4..], &[3, 1, 1, b'P']);
        // More than 255 samples widen the counts to 2 bytes.
        let mut out = Vec::new();
        property_header(&mut out, &Property { n_samples: 300, ..p });
        assert_eq!((u32::from_le_bytes(out[..4].try_into().unwrap()) >> 2) & 3, 1);
        assert_eq!(&out[4..], &[44, 1, 1, 0, 1, 0, b'P']);
    }
}
