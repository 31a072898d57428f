//! The subspace spanned by skinning weight fields, `u = B z`, and its reconstruction.

use faer::{Mat, Side};
use rayon::prelude::*;

use crate::error::{NumericalError, OvertoneError, Result};
use crate::math::kernels::{dot, dot2, dot3};
use crate::rig::lbs_basis;

/// Vertex count from which reconstruction runs on several threads.
const PARALLEL_MIN_VERTICES: usize = 2048;
/// Largest `k(d+1)` reconstructed with a stack buffer (64 modes in 3D).
const MAX_STACK_COLUMNS: usize = 256;
/// Gram eigenvalues below this fraction of the largest mark dependent columns.
const GRAM_RANK_TOLERANCE: f64 = 1e-13;

/// `u = B z` with `B = I_d ⊗ (B̂ T)`, `B̂ = [w_l ⊙ X̂_j]` (`n × k(d+1)`, column `l(d+1) + j`,
/// `X̂ = [X, 1]`) for `k` weight fields `w_l`, and `T` (`k(d+1) × r̂`) chosen so that the columns
/// of `B̂ T` are orthonormal in the mass inner product (`(B̂T)ᵀ M̂ (B̂T) = I`).
///
/// Reduced coordinates `z` are coordinate-major: `z[i·r̂ + a]`, `r = d·r̂` in all.
/// Reconstruction uses the weight structure: per vertex and coordinate,
/// `u_i(v) = Σ_l w_l(v) Σ_j X̂_j(v) c_i[l(d+1)+j]` with `c_i = T z_i`, i.e. `k·(d+1)·d`
/// multiply-adds per vertex instead of a dense `n·d × r` product.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SkinningBasis {
    dim: usize,
    n_fields: usize,
    /// `n × k`, row-major.
    weights: Vec<f64>,
    /// `n × d`, row-major.
    rest: Vec<f64>,
    /// `T`, `k(d+1) × r̂`, row-major.
    coefficients: Vec<f64>,
    reduced: usize,
}

impl SkinningBasis {
    /// Builds the basis from weight fields `w` (`n × k`), rest positions (`n × d` row-major) and
    /// lumped masses (`n`): `B̂ = `[`lbs_basis`]`(d, X, w)` (`n × k(d+1)`), then `T` from the
    /// eigendecomposition of the mass Gram matrix `B̂ᵀ M̂ B̂ = U S Uᵀ`, `T = U_keep S_keep^{-½}`.
    /// Columns of `B̂` that are dependent in the mass inner product are dropped (eigenvalues of
    /// `B̂ᵀM̂B̂` below 1e-13 of the largest). `rest` must hold exactly `n` rows.
    pub fn new(weights: &Mat<f64>, rest: &[f64], dim: usize, mass: &[f64]) -> Result<Self> {
        let (n, k) = (weights.nrows(), weights.ncols());
        let cols = k * (dim + 1);
        let bhat = lbs_basis(dim, rest, k, |v, l| weights[(v, l)]);
        let mut gram = Mat::<f64>::zeros(cols, cols);
        for a in 0..cols {
            for b in 0..=a {
                let s: f64 = (0..n).map(|v| bhat[(v, a)] * mass[v] * bhat[(v, b)]).sum();
                gram[(a, b)] = s;
                gram[(b, a)] = s;
            }
        }
        let eig = gram
            .self_adjoint_eigen(Side::Lower)
            .map_err(|e| NumericalError::Factorization {
                matrix: "skinning subspace Gram matrix".into(),
                reason: format!("{e:?}"),
            })?;
        let lmax = (0..cols).map(|i| eig.S()[i]).fold(0.0, f64::max);
        let keep: Vec<usize> = (0..cols).filter(|&i| eig.S()[i] > GRAM_RANK_TOLERANCE * lmax).collect();
        if keep.is_empty() {
            return Err(OvertoneError::setting(
                "modes",
                k,
                "the weight fields span no displacement",
            ));
        }
        let reduced = keep.len();
        let mut coefficients = vec![0.0; cols * reduced];
        for (c, &i) in keep.iter().enumerate() {
            let s = 1.0 / eig.S()[i].sqrt();
            for a in 0..cols {
                coefficients[a * reduced + c] = eig.U()[(a, i)] * s;
            }
        }
        let mut w = vec![0.0; n * k];
        for v in 0..n {
            for l in 0..k {
                w[v * k + l] = weights[(v, l)];
            }
        }
        Ok(Self {
            dim,
            n_fields: k,
            weights: w,
            rest: rest.to_vec(),
            coefficients,
            reduced,
        })
    }

    /// Columns per coordinate, `r̂`.
    pub(crate) fn reduced_dim(&self) -> usize {
        self.reduced
    }
    /// Number of weight fields `k`.
    pub fn n_fields(&self) -> usize {
        self.n_fields
    }
    /// Number of vertices `n` (0 for a basis whose dimension is 0, which only a corrupt
    /// sidecar can hold; [`Self::shapes_consistent`] refuses it).
    pub fn n_vertices(&self) -> usize {
        self.rest.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether the stored arrays have the lengths their counts imply (`d ∈ {2, 3}`, rest
    /// `n × d`, weights `n × k`, coefficients `k(d+1) × r̂`) and hold finite numbers; a basis
    /// decoded from a file is used only when this holds.
    pub(crate) fn shapes_consistent(&self) -> bool {
        let (d, k, r) = (self.dim, self.n_fields, self.reduced);
        (d == 2 || d == 3)
            && self.rest.len() % d == 0
            && Some(self.weights.len()) == self.n_vertices().checked_mul(k)
            && Some(self.coefficients.len()) == k.checked_mul(d + 1).and_then(|x| x.checked_mul(r))
            && r > 0
            && self
                .rest
                .iter()
                .chain(&self.weights)
                .chain(&self.coefficients)
                .all(|x| x.is_finite())
    }

    /// The scalar basis `B̂ T` as a dense `n × r̂` matrix (for precomputation only).
    pub fn dense(&self) -> Mat<f64> {
        let (d, k, r) = (self.dim, self.n_fields, self.reduced);
        let n = self.n_vertices();
        let mut out = Mat::<f64>::zeros(n, r);
        for v in 0..n {
            for l in 0..k {
                let w = self.weights[v * k + l];
                for j in 0..=d {
                    let xh = if j < d { self.rest[v * d + j] } else { 1.0 };
                    let row = &self.coefficients[(l * (d + 1) + j) * r..(l * (d + 1) + j + 1) * r];
                    for (c, t) in row.iter().enumerate() {
                        out[(v, c)] += w * xh * t;
                    }
                }
            }
        }
        out
    }

    /// `c_i = T z_i` for each coordinate, written into `c` (`d × k(d+1)`, row-major).
    pub(crate) fn field_coefficients(&self, z: &[f64], c: &mut [f64]) {
        let (d, r) = (self.dim, self.reduced);
        let cols = self.n_fields * (d + 1);
        for i in 0..d {
            let zi = &z[i * r..(i + 1) * r];
            for a in 0..cols {
                let t = &self.coefficients[a * r..(a + 1) * r];
                c[i * cols + a] = dot(t, zi);
            }
        }
    }

    /// The field products of vertex `v`, `q = [w_l(v) X̂_j(v)]` (`k(d+1)`, entry `l(d+1) + j`,
    /// `X̂ = [X, 1]`), so that `u_i(v) = q · c_i`, written into `q`.
    fn field_products(&self, v: usize, q: &mut [f64]) {
        let (d, k) = (self.dim, self.n_fields);
        let w = &self.weights[v * k..(v + 1) * k];
        let x = &self.rest[v * d..(v + 1) * d];
        for l in 0..k {
            for j in 0..d {
                q[l * (d + 1) + j] = w[l] * x[j];
            }
            q[l * (d + 1) + d] = w[l];
        }
    }

    /// The field products of points embedded in the mesh (`m × k(d+1)`, row-major): per point
    /// `p` with vertices `corners[p]` and barycentric weights `barycentric[p]`,
    /// `q_p = Σ_c b_c q(corner_c)`. The reconstruction is linear in `q`, so
    /// [`add_embedded_reconstruction`](Self::add_embedded_reconstruction) gives
    /// `Σ_c b_c u(corner_c)` without reconstructing the mesh.
    ///
    /// Errors: a corner index `≥ n`, or a weight that is not finite.
    pub(crate) fn embedded_products(&self, corners: &[[usize; 4]], barycentric: &[[f64; 4]]) -> Result<Vec<f64>> {
        self.check_embedded(corners, barycentric)?;
        let cols = self.n_fields * (self.dim + 1);
        let mut out = vec![0.0; corners.len() * cols];
        let mut q = vec![0.0; cols];
        for ((c, b), row) in corners.iter().zip(barycentric).zip(out.chunks_exact_mut(cols.max(1))) {
            for (&v, &bc) in c.iter().zip(b) {
                if bc == 0.0 {
                    continue;
                }
                self.field_products(v, &mut q);
                for (r, x) in row.iter_mut().zip(&q) {
                    *r += bc * x;
                }
            }
        }
        Ok(out)
    }

    /// Checks points embedded in the mesh: as many weight rows as corner rows, corners `< n`,
    /// finite weights.
    pub(crate) fn check_embedded(&self, corners: &[[usize; 4]], barycentric: &[[f64; 4]]) -> Result<()> {
        let n = self.n_vertices();
        if corners.len() != barycentric.len() {
            return Err(OvertoneError::size(
                "embedded points' barycentric weights",
                corners.len(),
                barycentric.len(),
            ));
        }
        if let Some((p, _)) = corners.iter().enumerate().find(|(_, c)| c.iter().any(|&v| v >= n)) {
            return Err(OvertoneError::size(
                format!("embedded point {p}'s corner (a mesh vertex)"),
                format!("< {n}"),
                corners[p].iter().max().copied().unwrap_or(0),
            ));
        }
        for b in barycentric {
            crate::error::check_finite("embedded points' barycentric weights", b, 4)?;
        }
        Ok(())
    }

    /// `out_p = u(p)` (overwritten; `m × d` row-major) for the embedded points whose products
    /// `q` came from [`embedded_products`](Self::embedded_products), with `c` from
    /// [`field_coefficients`](Self::field_coefficients): `u_i(p) = q_p · c_i`, `k(d+1)·d`
    /// multiply-adds a point. Parallel over points on large sets (each point independent: the
    /// result does not depend on the thread count). Does not allocate.
    pub(crate) fn embedded_reconstruction(&self, q: &[f64], c: &[f64], out: &mut [f64]) {
        let (d, cols) = (self.dim, self.n_fields * (self.dim + 1));
        let coordinate = |i: usize| &c[i * cols..(i + 1) * cols];
        // The coordinates share each read of a point's products (bit-identical to one `dot`
        // each).
        let point = |qp: &[f64], o: &mut [f64]| match d {
            3 => o.copy_from_slice(&dot3(qp, coordinate(0), coordinate(1), coordinate(2))),
            2 => o.copy_from_slice(&dot2(qp, coordinate(0), coordinate(1))),
            _ => {
                for i in 0..d {
                    o[i] = dot(qp, coordinate(i));
                }
            }
        };
        if out.len() / d.max(1) >= PARALLEL_MIN_VERTICES {
            out.par_chunks_mut(d)
                .zip(q.par_chunks(cols.max(1)))
                .for_each(|(o, qp)| point(qp, o));
        } else {
            out.chunks_mut(d)
                .zip(q.chunks(cols.max(1)))
                .for_each(|(o, qp)| point(qp, o));
        }
    }

    /// `out_v += u(v)` for every vertex, with `c` from [`field_coefficients`](Self::field_coefficients);
    /// `out` is `n × d` row-major. Parallel over vertices on large meshes (each vertex is
    /// independent, so the result does not depend on the thread count). Does not allocate.
    pub(crate) fn add_reconstruction(&self, c: &[f64], out: &mut [f64]) {
        let (d, k) = (self.dim, self.n_fields);
        let cols = k * (d + 1);
        let vertex = |v: usize, o: &mut [f64]| {
            let w = &self.weights[v * k..(v + 1) * k];
            let x = &self.rest[v * d..(v + 1) * d];
            if cols <= MAX_STACK_COLUMNS {
                // q = [w_l · X̂_j], then u_i = q · c_i: contiguous dot products.
                let mut q = [0.0; MAX_STACK_COLUMNS];
                self.field_products(v, &mut q[..cols]);
                for i in 0..d {
                    o[i] += dot(&q[..cols], &c[i * cols..(i + 1) * cols]);
                }
            } else {
                for i in 0..d {
                    let ci = &c[i * cols..(i + 1) * cols];
                    let mut s = 0.0;
                    for l in 0..k {
                        let cl = &ci[l * (d + 1)..(l + 1) * (d + 1)];
                        let mut t = cl[d];
                        for j in 0..d {
                            t += cl[j] * x[j];
                        }
                        s += w[l] * t;
                    }
                    o[i] += s;
                }
            }
        };
        if self.n_vertices() >= PARALLEL_MIN_VERTICES {
            out.par_chunks_mut(d).enumerate().for_each(|(v, o)| vertex(v, o));
        } else {
            out.chunks_mut(d).enumerate().for_each(|(v, o)| vertex(v, o));
        }
    }
}
