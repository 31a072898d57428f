//! The fast solver's dense kernels: the rig rows of the right-hand side, rows times
//! coordinates, the per-cluster rotations, the cluster-space iteration and the dense Cholesky
//! factor of the reduced system. None allocates per call except the constructors.

use faer::{Mat, Side};

use crate::error::{NumericalError, Result};
use crate::math::kernels::{add_transposed_product3, dot, dot2, dot3, dots};
use crate::math::polar::{closest_rotation_2d, closest_rotation_3d, closest_rotation_3d_x4};
use serde::{Deserialize, Serialize};

/// Accuracy (radians) of the per-cluster rotations.
const CLUSTER_ROTATION_ACCURACY: f64 = 1e-12;

/// `out[i·m + q] = (add[i·m + q] +) M_q · x_i` for coordinates `i < d` and rows `q < m`: the
/// `m × n` row-major matrix `M` applied to the `d` coordinate blocks of `x` (`d × n`,
/// coordinate-major), i.e. `out = (add +) (M X)ᵀ` with `X` the `n × d` matrix of coordinates.
/// Every output is one [`dot`]; in 3D and 2D the coordinates share each read of a row of `M`
/// ([`dot3`], [`dot2`], bit-identical to [`dot`]s). Does not allocate.
pub(super) fn rows_times_coordinates(
    d: usize,
    m_rows: &[f64],
    m: usize,
    n: usize,
    x: &[f64],
    add: Option<&[f64]>,
    out: &mut [f64],
) {
    match d {
        3 => return rows_times::<3>(m_rows, m, n, x, add, None, out),
        2 => return rows_times::<2>(m_rows, m, n, x, add, None, out),
        _ => {}
    }
    for i in 0..d {
        let xi = &x[i * n..(i + 1) * n];
        for q in 0..m {
            let v = dot(&m_rows[q * n..(q + 1) * n], xi);
            out[i * m + q] = match add {
                Some(a) => a[i * m + q] + v,
                None => v,
            };
        }
    }
}

/// The chunks of four (entries `4c..4c + 4`) of each row of an `m × n` row-major matrix that
/// hold a non-zero, for [`chunk_rows_times_coordinates3`]: the clustered rig gradients `K̂ᴶ` of a
/// many-bone character touch few bones a cluster (the mannequin: 19% of the entries are
/// non-zero; a row's bones are not contiguous, its first to last non-zero spans 94%).
#[derive(Clone, Debug, Default)]
pub(super) struct NonzeroChunks {
    /// Row `q`'s chunk indices are `chunks[starts[q]..starts[q + 1]]`, ascending.
    chunks: Vec<u32>,
    starts: Vec<usize>,
}

impl NonzeroChunks {
    /// The non-zero chunks of `m_rows` (`m × n`), or `None` when `n` is not a multiple of four
    /// or the chunks are not sparse enough to pay (more than half of them non-zero).
    pub(super) fn of(m_rows: &[f64], m: usize, n: usize) -> Option<Self> {
        if n % 4 != 0 || n == 0 {
            return None;
        }
        let mut chunks = Vec::new();
        let mut starts = Vec::with_capacity(m + 1);
        starts.push(0);
        for q in 0..m {
            let row = &m_rows[q * n..(q + 1) * n];
            chunks.extend(
                (0..n / 4)
                    .filter(|&c| row[4 * c..4 * c + 4].iter().any(|&x| x != 0.0))
                    .map(|c| c as u32),
            );
            starts.push(chunks.len());
        }
        (2 * chunks.len() <= m * (n / 4)).then_some(Self { chunks, starts })
    }
}

/// [`rows_times_coordinates`] in 3D (without `add`) over the non-zero chunks of each row of
/// `M`: bit-identical to it (see [`dots`]). Does not allocate.
pub(super) fn chunk_rows_times_coordinates3(
    m_rows: &[f64],
    nonzero: &NonzeroChunks,
    m: usize,
    n: usize,
    x: &[f64],
    out: &mut [f64],
) {
    rows_times::<3>(m_rows, m, n, x, None, Some(nonzero), out)
}

/// [`rows_times_coordinates`] for `D` = 2 or 3 coordinates sharing each row read, over every
/// entry of a row or over its non-zero chunks ([`dots`]).
fn rows_times<const D: usize>(
    m_rows: &[f64],
    m: usize,
    n: usize,
    x: &[f64],
    add: Option<&[f64]>,
    nonzero: Option<&NonzeroChunks>,
    out: &mut [f64],
) {
    let xs: [&[f64]; D] = std::array::from_fn(|i| &x[i * n..(i + 1) * n]);
    for q in 0..m {
        let row = &m_rows[q * n..(q + 1) * n];
        let v = dots(row, xs, nonzero.map(|nz| &nz.chunks[nz.starts[q]..nz.starts[q + 1]]));
        for (i, vi) in v.into_iter().enumerate() {
            out[i * m + q] = match add {
                Some(a) => a[i * m + q] + vi,
                None => vi,
            };
        }
    }
}

/// `y_i ← y_i − Mᵀ w_i` for coordinates `i < d`: `M` is `m × n` row-major, `w` is `d × m` and
/// `y` is `d × n` (coordinate-major); accumulated row by row of `M`, so each entry of `y` gets
/// its `m` subtractions in row order (in 3D the coordinates share each read of a row, with the
/// same arithmetic per coordinate). Does not allocate.
pub(super) fn subtract_transposed_product(d: usize, m_rows: &[f64], m: usize, n: usize, w: &[f64], y: &mut [f64]) {
    if d == 3 {
        let (y0, rest) = y.split_at_mut(n);
        let (y1, y2) = rest.split_at_mut(n);
        // x − r·k == x + (−r)·k exactly.
        let (w0, w1, w2) = (&w[..m], &w[m..2 * m], &w[2 * m..3 * m]);
        add_transposed_product3(m_rows, m, n, -1.0, [w0, w1, w2], [y0, y1, &mut y2[..n]]);
        return;
    }
    for i in 0..d {
        let yi = &mut y[i * n..(i + 1) * n];
        for q in 0..m {
            let r = w[i * m + q];
            for (x, k) in yi.iter_mut().zip(&m_rows[q * n..(q + 1) * n]) {
                *x -= r * k;
            }
        }
    }
}

/// One rotation per cluster, closest to the cluster gradient in `f` (`f[i·n_c d + c·d + j]`),
/// written to `r` in the same layout; `warm` holds the 3D warm starts. In 3D four clusters at a
/// time share one [`closest_rotation_3d_x4`] (bit-identical to one at a time).
///
/// On x86-64 with AVX the same code is compiled for 256-bit registers (chosen at run time): the
/// four-cluster batches are laid out as structure of arrays, one register per entry; Rust does
/// not reassociate or fuse floating-point operations, so the bits are the same either way.
pub(super) fn rotations_into(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the processor supports AVX (checked just above).
        return unsafe { rotations_into_avx(d, n_clusters, f, warm, r) };
    }
    rotations_into_portable(d, n_clusters, f, warm, r)
}

/// [`rotations_into_portable`] compiled with AVX enabled.
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn rotations_into_avx(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    rotations_into_portable(d, n_clusters, f, warm, r)
}

/// The body of [`rotations_into`].
#[inline(always)]
fn rotations_into_portable(d: usize, n_clusters: usize, f: &[f64], warm: &mut [[f64; 4]], r: &mut [f64]) {
    let nq = n_clusters * d;
    let mut first = 0;
    if d == 2 {
        // Each cluster's 2 × 2 gradient `[f00 f01; f10 f11]` lies at `f[i·nq + 2cl + j]`.
        let (f0, f1) = f.split_at(nq);
        let (r0, r1) = r.split_at_mut(nq);
        for cl in 0..n_clusters {
            let q = 2 * cl;
            let fc = [f0[q], f0[q + 1], f1[q], f1[q + 1]];
            let mut rc = [0.0; 4];
            closest_rotation_2d(&fc, &mut rc);
            r0[q..q + 2].copy_from_slice(&rc[..2]);
            r1[q..q + 2].copy_from_slice(&rc[2..]);
        }
        return;
    }
    if d == 3 {
        for c4 in 0..n_clusters / 4 {
            let cl0 = 4 * c4;
            let fc: [[f64; 9]; 4] =
                std::array::from_fn(|l| std::array::from_fn(|k| f[(k / 3) * nq + (cl0 + l) * 3 + k % 3]));
            let mut w4: [[f64; 4]; 4] = std::array::from_fn(|l| warm[cl0 + l]);
            let mut r4 = [[0.0; 9]; 4];
            closest_rotation_3d_x4(&fc, &mut w4, &mut r4, CLUSTER_ROTATION_ACCURACY);
            for l in 0..4 {
                warm[cl0 + l] = w4[l];
                for k in 0..9 {
                    r[(k / 3) * nq + (cl0 + l) * 3 + k % 3] = r4[l][k];
                }
            }
        }
        first = 4 * (n_clusters / 4);
    }
    for cl in first..n_clusters {
        let mut fc = [0.0; 9];
        for i in 0..d {
            for j in 0..d {
                fc[i * d + j] = f[i * nq + cl * d + j];
            }
        }
        let mut rc = [0.0; 9];
        if d == 2 {
            closest_rotation_2d(&fc[..4], &mut rc[..4]);
        } else {
            closest_rotation_3d(&fc, &mut warm[cl], &mut rc, CLUSTER_ROTATION_ACCURACY);
        }
        for i in 0..d {
            for j in 0..d {
                r[i * nq + cl * d + j] = rc[i * d + j];
            }
        }
    }
}

/// The local/global iteration rewritten on cluster gradients: with `P = K̂ H⁻¹ K̂ᵀ` and
/// `K̂H⁻¹` precomputed, the gradients after a global step are `F = F_rig + K̂H⁻¹ base + P R`, so
/// intermediate iterations never form `z`; one solve after the last local step recovers it.
/// Identical in exact arithmetic; used when `(n_c d)² < 2 n_c d r̂ + r̂²` (few clusters, as in
/// the 2D defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ClusterSpace {
    /// `K̂ H⁻¹`, `n_c d × r̂` row-major.
    pub(super) kh: Vec<f64>,
    /// `P`, `n_c d × n_c d` row-major.
    pub(super) p: Vec<f64>,
}

impl ClusterSpace {
    pub(super) fn new_if_cheaper(k: &[f64], nq: usize, rr: usize, chol: &DenseCholesky) -> Option<Self> {
        if nq * nq >= 2 * nq * rr + rr * rr {
            return None;
        }
        let mut kh = k.to_vec();
        for q in 0..nq {
            chol.solve_in_place(&mut kh[q * rr..(q + 1) * rr]);
        }
        let mut p = vec![0.0; nq * nq];
        for a in 0..nq {
            for b in 0..nq {
                p[a * nq + b] = dot(&kh[a * rr..(a + 1) * rr], &k[b * rr..(b + 1) * rr]);
            }
        }
        Some(Self { kh, p })
    }
}

/// A dense Cholesky factor `H = L Lᵀ` stored for contiguous forward and backward substitution.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct DenseCholesky {
    n: usize,
    /// `L`, row-major (row `i` holds `L[i, ..i]` then the diagonal).
    lower: Vec<f64>,
    /// `Lᵀ`, row-major (row `i` holds `L[i+1.., i]` after the diagonal).
    upper: Vec<f64>,
    inv_diag: Vec<f64>,
}

impl DenseCholesky {
    pub(super) fn new(h: &Mat<f64>) -> Result<Self> {
        let n = h.nrows();
        let llt = h.llt(Side::Lower).map_err(|e| NumericalError::Factorization {
            matrix: "reduced system matrix".into(),
            reason: format!("{e:?}; the subspace stiffness is not positive definite"),
        })?;
        let l = llt.L();
        let lower = (0..n * n)
            .map(|k| if k % n <= k / n { l[(k / n, k % n)] } else { 0.0 })
            .collect();
        let upper = (0..n * n)
            .map(|k| if k % n >= k / n { l[(k % n, k / n)] } else { 0.0 })
            .collect();
        let inv_diag = (0..n).map(|i| 1.0 / l[(i, i)]).collect();
        Ok(Self {
            n,
            lower,
            upper,
            inv_diag,
        })
    }

    /// `bᵢ ← H⁻¹ bᵢ` for three right-hand sides in place, sharing each read of a row of `L`
    /// and `Lᵀ`; each `bᵢ` gets exactly [`solve_in_place`](Self::solve_in_place)'s arithmetic.
    /// Does not allocate.
    pub(super) fn solve3_in_place(&self, b0: &mut [f64], b1: &mut [f64], b2: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot3(&self.lower[i * n..i * n + i], &b0[..i], &b1[..i], &b2[..i]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
            b2[i] = (b2[i] - s[2]) * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let u = &self.upper[i * n + i + 1..(i + 1) * n];
            let s = dot3(u, &b0[i + 1..n], &b1[i + 1..n], &b2[i + 1..n]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
            b2[i] = (b2[i] - s[2]) * self.inv_diag[i];
        }
    }

    /// `bᵢ ← H⁻¹ bᵢ` for two right-hand sides in place (the 2D counterpart of
    /// [`solve3_in_place`](Self::solve3_in_place)); each `bᵢ` gets exactly
    /// [`solve_in_place`](Self::solve_in_place)'s arithmetic. Does not allocate.
    pub(super) fn solve2_in_place(&self, b0: &mut [f64], b1: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot2(&self.lower[i * n..i * n + i], &b0[..i], &b1[..i]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let u = &self.upper[i * n + i + 1..(i + 1) * n];
            let s = dot2(u, &b0[i + 1..n], &b1[i + 1..n]);
            b0[i] = (b0[i] - s[0]) * self.inv_diag[i];
            b1[i] = (b1[i] - s[1]) * self.inv_diag[i];
        }
    }

    /// `b ← H⁻¹ b` in place. Does not allocate.
    pub(super) fn solve_in_place(&self, b: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot(&self.lower[i * n..i * n + i], &b[..i]);
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
        for i in (0..n).rev() {
            let s = dot(&self.upper[i * n + i + 1..(i + 1) * n], &b[i + 1..]);
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
    }
}
