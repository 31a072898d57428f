//! A character's lattice preparation: the lattice around its surface, the surface's embedding,
//! and the bone weights carried into the lattice. It depends only on the surface (in its body
//! frame), its triangles and weights and the lattice resolution setting, costs seconds on a
//! large character (the winding numbers of the embedding, the nearest-vertex search, a harmonic
//! solve per bone) and is kept in the sidecar beside the fast solver's reduced model, so a
//! warm bind skips it.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cache::{load_or_build_deferred, CacheKey, CacheStatus, PendingRecord};
use crate::embed::{available_memory, check_lattice_memory, embed_surface, Embedding, LatticeSolver, ResolutionChoice};
use crate::error::Result;
use crate::scene::extend_weights_inward;

/// The sidecar record kind of a lattice preparation.
pub const LATTICE_PREPARATION_KIND: &str = "lattice-preparation";

/// What [`prepare_lattice`] computes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatticePreparation {
    /// The lattice and the surface's barycentric coordinates in it (normalised frame).
    pub embedding: Embedding,
    /// Cells along the longest side used, the automatic choice behind it (when automatic) and
    /// the automatic lattice's tetrahedra (see [`crate::scene::Character::automatic_tets`]).
    pub lattice_resolution: usize,
    pub resolution_choice: Option<ResolutionChoice>,
    pub automatic_tets: usize,
    /// Per lattice vertex of the surface cubes (`embedding.surface_lattice_vertices`), the
    /// nearest surface vertex of its own piece.
    pub near: Vec<usize>,
    /// Bone weights on every lattice vertex, `n_l × m` row-major: the nearest surface vertex's
    /// on the surface cubes, harmonic inside (rows sum to one).
    pub host_weights: Vec<f64>,
}

/// The key of a lattice preparation: the surface in its body frame (`n_s × 3`), its triangles,
/// its weights (`n_s × m`), the bone count and the resolution setting (0: automatic).
fn preparation_key(normalised: &[f64], triangles: &[usize], weights: &[f64], m: usize, resolution: usize) -> [u8; 32] {
    CacheKey::new()
        .text("payload", LATTICE_PREPARATION_KIND)
        .text(
            "method",
            "Kuhn lattice, winding-number inside test, passengers, hinge splits, material shares; nearest vertex per piece; harmonic weights",
        )
        .f64s("surface in the body frame", normalised)
        .usizes("triangles", triangles)
        .f64s("weights", weights)
        .usizes("bones, resolution setting", &[m, resolution])
        .finish()
}

/// The lattice preparation of a surface (`normalised`: `n_s × 3` in its body frame, `triangles`,
/// `weights`: `n_s × m`) at the resolution setting `resolution` (0: automatic): read from the
/// `sidecar`'s [`LATTICE_PREPARATION_KIND`] record when it was made from the same inputs and
/// fits them (a loaded lattice is checked against the machine's memory as a built one is),
/// built otherwise; a built preparation comes with its record, for the caller to write once
/// the bind it is part of has completed (see [`crate::scene::Character::save_preparation`]).
/// Reports
/// its stages to this thread's [`crate::progress`] scope (fractions 0 to 0.7) and stops with
/// [`crate::OvertoneError::Cancelled`] when cancelled.
pub fn prepare_lattice(
    sidecar: Option<&std::path::Path>,
    normalised: &[f64],
    triangles: &[usize],
    weights: &[f64],
    m: usize,
    resolution: usize,
) -> Result<(LatticePreparation, CacheStatus, Option<PendingRecord>)> {
    let ns = normalised.len() / 3;
    let key = preparation_key(normalised, triangles, weights, m, resolution);
    let fits = |p: &LatticePreparation| -> std::result::Result<(), String> {
        let e = &p.embedding;
        let nl = e.lattice.n_vertices();
        let ok = e.corners.len() == ns
            && e.barycentric.len() == ns
            && p.near.len() == e.surface_lattice_vertices.len()
            && p.near.iter().all(|&s| s < ns)
            && e.corners.iter().flatten().all(|&c| c < nl)
            && e.surface_lattice_vertices.iter().all(|&v| v < nl)
            && e.lattice_piece.len() == nl
            && e.lattice_piece.iter().all(|&q| q < e.pieces.max(1))
            && e.passenger_of.len() <= e.pieces.max(1)
            && e.barycentric.iter().flatten().all(|b| b.is_finite())
            && e.outside_surface.len() == nl
            && e.material_share.len() == nl
            && p.host_weights.len() == nl * m
            && p.host_weights.iter().all(|w| w.is_finite());
        if ok {
            Ok(())
        } else {
            Err(format!(
                "the lattice preparation does not match a surface of {ns} vertices and {m} bones"
            ))
        }
    };
    // A miss is renamed by the build's first stage.
    crate::progress::report(0.0, "reading the lattice preparation (sidecar)");
    let (prepared, status, pending) = load_or_build_deferred(sidecar, LATTICE_PREPARATION_KIND, &key, fits, || {
        let (embedding, lattice_resolution, resolution_choice, automatic_tets) =
            embed_normalised(resolution, normalised, triangles)?;
        let near = nearest_surface_vertices(&embedding, normalised, triangles)?;
        let known: Vec<f64> = near
            .iter()
            .flat_map(|&s| weights[s * m..(s + 1) * m].iter().copied())
            .collect();
        crate::progress::check()?;
        crate::progress::report(0.7, "harmonic weights inside the lattice");
        let host_weights = extend_weights_inward(&embedding.lattice, &embedding.surface_lattice_vertices, &known, m)?;
        Ok(LatticePreparation {
            embedding,
            lattice_resolution,
            resolution_choice,
            automatic_tets,
            near,
            host_weights,
        })
    })?;
    if status == CacheStatus::Loaded {
        // A sidecar made on a larger machine (a farm node): its lattice is refused here as it
        // would have been before it was built.
        let lat = &prepared.embedding.lattice;
        check_lattice_memory(
            lat.n_vertices(),
            lat.n_elements(),
            prepared.lattice_resolution,
            LatticeSolver::Fast,
            available_memory(),
        )?;
    }
    Ok((prepared, status, pending))
}

/// Embeds the normalised surface in its lattice at the set resolution (chosen from the
/// geometry when automatic). Returns the embedding, the resolution used, how it was chosen
/// (when automatic) and the automatic lattice's tetrahedra (always: the body's size).
fn embed_normalised(
    lattice_resolution_setting: usize,
    normalised: &[f64],
    triangles: &[usize],
) -> Result<(Embedding, usize, Option<ResolutionChoice>, usize)> {
    crate::progress::report(0.0, "choosing the lattice resolution");
    let resolution_choice = if lattice_resolution_setting == crate::embed::AUTO_LATTICE_RESOLUTION {
        Some(crate::embed::choose_lattice_resolution(normalised, triangles)?)
    } else {
        None
    };
    // The body's size, also under a set resolution; a surface the probe grid cannot measure
    // (it embeds at the set resolution all the same) counts as large. A cancel is caught below.
    let automatic_tets = match &resolution_choice {
        Some(c) => c.tets,
        None => crate::embed::choose_lattice_resolution(normalised, triangles).map_or(usize::MAX, |c| c.tets),
    };
    let lattice_resolution = resolution_choice
        .as_ref()
        .map_or(lattice_resolution_setting, |c| c.resolution);
    crate::progress::check()?;
    crate::progress::report(0.1, "embedding the surface in the lattice");
    let embedding = embed_surface(normalised, triangles, lattice_resolution)?;
    Ok((embedding, lattice_resolution, resolution_choice, automatic_tets))
}

/// Squared distances within this fraction of each other count as a tie (see
/// `nearest_surface_vertices`).
const NEAREST_TIE: f64 = 1e-6;

/// Per lattice vertex of the surface cubes (`embedding.surface_lattice_vertices`), the nearest
/// surface vertex of its own piece (overlapping pieces, e.g. a joint inside a limb, do not mix),
/// in the normalised frame.
fn nearest_surface_vertices(embedding: &Embedding, normalised: &[f64], triangles: &[usize]) -> Result<Vec<usize>> {
    let ns = normalised.len() / 3;
    let lat = &embedding.lattice;
    // Surface vertices of each piece: a lattice vertex takes the weights of the nearest
    // vertex of its own piece (overlapping pieces, e.g. a joint inside a limb, do not mix).
    let (surface_piece, _) = crate::embed::surface_pieces(ns, triangles);
    let mut by_piece: Vec<Vec<usize>> = vec![Vec::new(); embedding.pieces.max(1)];
    for (v, &p) in surface_piece.iter().enumerate() {
        by_piece[if p == usize::MAX { 0 } else { p }].push(v);
    }
    let nearest = |lv: usize| -> usize {
        let p = lat.vertex(lv);
        let piece = embedding.lattice_piece.get(lv).copied().unwrap_or(0);
        let candidates = if by_piece[piece].is_empty() {
            &by_piece[0]
        } else {
            &by_piece[piece]
        };
        // The nearest, ties (equal to round-off: a symmetric body has many) to the lowest
        // index, so that the same body in another placement, whose distances differ by
        // round-off, picks the same vertex.
        let mut best = (f64::INFINITY, usize::MAX);
        for &c in candidates {
            let d: f64 = (0..3).map(|i| (normalised[3 * c + i] - p[i]).powi(2)).sum();
            if d < best.0 * (1.0 - NEAREST_TIE) || (d <= best.0 * (1.0 + NEAREST_TIE) && c < best.1) {
                best = (d.min(best.0), c);
            }
        }
        assert!(best.1 != usize::MAX, "non-empty surface");
        best.1
    };
    let fixed = &embedding.surface_lattice_vertices;
    // Nearest surface vertex of each lattice vertex on the surface cubes, in chunks (a
    // cancellation is seen between them).
    let mut near: Vec<usize> = Vec::with_capacity(fixed.len());
    for chunk in fixed.chunks(512) {
        crate::progress::check()?;
        crate::progress::report(
            0.2 + 0.5 * near.len() as f64 / fixed.len().max(1) as f64,
            "carrying the weights to the lattice",
        );
        near.extend(chunk.par_iter().map(|&v| nearest(v)).collect::<Vec<_>>());
    }
    Ok(near)
}
