//! How much memory a lattice will need, estimated before its tetrahedra are built, and the check
//! that refuses a request beyond the machine's means.
//!
//! The estimate is affine in the lattice vertex count `V` (the tet count is close to `5 V` for
//! these lattices, and the sparse factors of a 3D grid Laplacian grow close to linearly over the
//! range used):
//!
//! `bytes = base + per_vertex · V`, with `(base, per_vertex)` = (16 MiB, 28 000 B) for the fast
//! solver (modal precompute, clusters, weight-space factor) and (8 MiB, 17 000 B) for the full
//! solver (ARAP factor, rotations).
//!
//! The constants are an upper envelope of the peak resident set size (`/usr/bin/time -v`) of
//! `overtone bake --frames 0..3` on CesiumMan, Fox and RiggedFigure at lattice resolutions 16 to
//! 128, and Fox at 192 (462 to 233,259 lattice vertices, 32 runs): measured / estimate is
//! 0.72–0.97 (fast) and 0.72–0.93 (full). The ratio creeps up with size (factor fill grows a
//! little faster than `V`): beyond ~250k vertices (resolution ~200 on a compact character) the
//! estimate is an extrapolation. Per-frame storage of the caches is not included.

use crate::error::{OvertoneError, Result};

/// Which solver the lattice is for (the fast solver's precompute is the larger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatticeSolver {
    Fast,
    Full,
}

/// Estimated peak memory (bytes) of simulating a lattice of `n_vertices` vertices.
pub(crate) fn lattice_memory_estimate(n_vertices: usize, solver: LatticeSolver) -> u64 {
    let (base, per_vertex): (u64, u64) = match solver {
        LatticeSolver::Fast => (16 << 20, 28_000),
        LatticeSolver::Full => (8 << 20, 17_000),
    };
    base + per_vertex * n_vertices as u64
}

/// Memory available to this process (bytes): `MemAvailable` of `/proc/meminfo`, lowered to the
/// cgroup (v2) limit minus current use when one is set. `None` where neither can be read
/// (non-Linux): no check is made then.
pub(crate) fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let mut available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)?;
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    if let (Some(max), Some(current)) = (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current")) {
        available = available.min(max.saturating_sub(current));
    }
    Some(available)
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

/// Refuses a lattice of `n_vertices` vertices / `n_tets` tetrahedra at `resolution` when its
/// estimated memory exceeds `available` bytes (typically [`available_memory`]); the message
/// gives both figures and a resolution that would fit (memory grows like resolution³).
pub(crate) fn check_lattice_memory(
    n_vertices: usize,
    n_tets: usize,
    resolution: usize,
    solver: LatticeSolver,
    available: Option<u64>,
) -> Result<()> {
    let Some(available) = available else {
        return Ok(());
    };
    let need = lattice_memory_estimate(n_vertices, solver);
    if need <= available {
        return Ok(());
    }
    let other = match solver {
        LatticeSolver::Fast => LatticeSolver::Full,
        LatticeSolver::Full => LatticeSolver::Fast,
    };
    let fits = ((resolution as f64) * (0.9 * available as f64 / need as f64).cbrt()).floor() as usize;
    Err(OvertoneError::setting(
        "lattice_resolution",
        resolution,
        format!(
            "a lattice of {n_vertices} vertices / {n_tets} tets needs about {} ({:?} solver; {} with the {:?} solver) but only {} of memory is available; lower the lattice resolution (about {} would fit) or free memory",
            gib(need),
            solver,
            gib(lattice_memory_estimate(n_vertices, other)),
            other,
            gib(available),
            fits.max(2)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured peaks (lattice vertices, fast KB, full KB; `/usr/bin/time -v`, see the
    /// module documentation) stay below the estimate and above 0.7 of it.
    #[test]
    fn estimate_envelopes_measured_peaks() {
        const MEASURED: [(usize, u64, Option<u64>); 9] = [
            (4983, 114_528, Some(65_612)),
            (5783, 143_880, Some(80_480)),
            (27091, 576_700, Some(351_064)),
            (34694, 844_620, Some(544_692)),
            (37784, 792_488, Some(502_460)),
            (57807, 1_209_660, Some(753_372)),
            (74277, 1_782_508, Some(1_084_444)),
            (82509, 1_672_768, Some(1_044_516)),
            (233259, 6_227_072, None),
        ];
        for (v, fast_kb, full_kb) in MEASURED {
            for (solver, kb) in [(LatticeSolver::Fast, Some(fast_kb)), (LatticeSolver::Full, full_kb)] {
                let Some(kb) = kb else { continue };
                let est = lattice_memory_estimate(v, solver) as f64;
                let ratio = (kb * 1024) as f64 / est;
                assert!(
                    (0.7..=1.0).contains(&ratio),
                    "{v} vertices {solver:?}: measured/estimate {ratio:.2}"
                );
            }
        }
    }

    #[test]
    fn refuses_beyond_available_and_suggests_a_resolution() {
        let v = 74277;
        let need = lattice_memory_estimate(v, LatticeSolver::Fast);
        assert!(check_lattice_memory(v, 390_552, 128, LatticeSolver::Fast, Some(need)).is_ok());
        assert!(check_lattice_memory(v, 390_552, 128, LatticeSolver::Fast, None).is_ok());
        let e = check_lattice_memory(v, 390_552, 128, LatticeSolver::Fast, Some(need / 8))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("2.10 GB") && e.contains("0.26 GB") && e.contains("about 61 would fit"),
            "{e}"
        );
        assert!(available_memory().is_none_or(|a| a > 0));
    }
}
