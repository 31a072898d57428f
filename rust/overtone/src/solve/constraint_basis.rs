//! Orthonormal basis of the row space of a constraint matrix (rank revelation), by the Gram
//! matrix of its sparse rows with the poorly resolved directions settled by a small SVD.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par, Side};
use rayon::prelude::*;

use crate::error::{NumericalError, Result};

/// Singular values of the row-normalised constraint matrix below this fraction of the largest
/// mark redundant constraints (rank revelation). Dropping such a direction leaves a violation of
/// at most this fraction of `‖Â‖‖u‖`.
pub(crate) const CONSTRAINT_RANK_TOLERANCE: f64 = 1e-12;

/// Two unit-norm constraint rows closer than this (largest entry of their difference) are one
/// constraint: well below [`CONSTRAINT_RANK_TOLERANCE`]'s scale of what the SVD would drop.
const DUPLICATE_ROW_TOLERANCE: f64 = 1e-14;

/// Eigenvalues of the Gram matrix `G = ÂÂᵀ` above this fraction of the largest are resolved to
/// a relative accuracy of about `ε / GRAM_RESOLVED` (`1e-8`) in double precision: their
/// directions `Âᵀq/√λ` form the first part of the basis. Below it (`σ < 10⁻⁴ σ_max`, among them
/// the exact dependencies) the Gram matrix cannot tell `σ = 10⁻⁹ σ_max` from `0`, so those
/// directions go through an SVD of their own.
const GRAM_RESOLVED: f64 = 1e-8;

/// A constraint whose nonzeros are at least this fraction of its entries is treated as dense
/// (dense products instead of sparse row sums).
const DENSE_FRACTION: f64 = 0.125;

/// Orthonormal basis (`n × r`) of the row space of `Â` (`c × n`, row-major): rows scaled to unit
/// norm (empty rows skipped), rows equal to an earlier one within [`DUPLICATE_ROW_TOLERANCE`]
/// dropped (see [`distinct_rows`]), and the directions with `σ > CONSTRAINT_RANK_TOLERANCE ·
/// σ_max` of the remaining `m × n` matrix (the left singular vectors of `Âᵀ` span the same
/// space as the basis returned; the columns themselves may differ by a rotation).
///
/// With `G = ÂÂᵀ = QΛQᵀ` (`m × m`, from the sparse rows: `Σ_v` of each vertex's nonzeros
/// squared; on the mannequin's lattice, 25,035 × 516 at 6% nonzeros, the whole basis took
/// 0.8-1.3 s where the thin SVD of the transpose took 2.0-2.5 s):
/// 1. `U₁ = Âᵀ Q₁ Λ₁^{-1/2}` for the eigenvalues `λ > GRAM_RESOLVED · λ_max`, then
///    re-orthonormalised once (`U₁ ← U₁ L⁻ᵀ`, `U₁ᵀU₁ = LLᵀ`; before it the columns are
///    orthonormal to about `ε/GRAM_RESOLVED`);
/// 2. `Y = (I − U₁U₁ᵀ)² Âᵀ Q₂` for the other eigenvectors (Q orthogonal, so `[U₁, Y]` spans the
///    row space), whose thin SVD keeps the left singular vectors with
///    `σ > CONSTRAINT_RANK_TOLERANCE · √λ_max`.
///
/// The result is `[U₁, U₂]`. Should the Cholesky factor of `U₁ᵀU₁` fail (it cannot for a
/// finite `Â`), the thin SVD of the whole `n × m` transpose is used instead.
pub fn orthonormal_constraint_basis(a: &[f64], n: usize, c: usize, what: &str) -> Result<Mat<f64>> {
    let rows: Vec<(usize, f64)> = (0..c)
        .map(|k| (k, a[k * n..(k + 1) * n].iter().map(|v| v * v).sum::<f64>().sqrt()))
        .filter(|&(_, norm)| norm > 0.0)
        .collect();
    let rows = distinct_rows(a, n, rows);
    if rows.is_empty() {
        return Ok(Mat::zeros(n, 0));
    }
    let rows = UnitRows::gather(a, n, &rows);
    let m = rows.len();
    let factor_error = |stage: &str, e: String| NumericalError::Factorization {
        matrix: format!("{what}: constraint rank revelation ({stage})"),
        reason: e,
    };
    let eig = rows
        .gram()
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| factor_error("Gram matrix", format!("{e:?}")))?;
    let lambda: Vec<f64> = (0..m).map(|i| eig.S()[i]).collect();
    let lambda_max = lambda.iter().cloned().fold(0.0, f64::max);
    let resolved: Vec<usize> = (0..m).filter(|&i| lambda[i] > GRAM_RESOLVED * lambda_max).collect();
    let unresolved: Vec<usize> = (0..m).filter(|&i| !(lambda[i] > GRAM_RESOLVED * lambda_max)).collect();
    let q = eig.U();
    // The basis is built transposed (`r × n`, each vertex's coefficients contiguous).
    let scaled = Mat::from_fn(resolved.len(), m, |j, i| {
        q[(i, resolved[j])] / lambda[resolved[j]].sqrt()
    });
    let mut u1t = rows.transpose_times(scaled.as_ref());
    if !reorthonormalise(&mut u1t) {
        return by_thin_svd(&rows, what);
    }
    let r1 = u1t.nrows();
    let mut yt = {
        let q2 = Mat::from_fn(unresolved.len(), m, |j, i| q[(i, unresolved[j])]);
        rows.transpose_times(q2.as_ref())
    };
    for _ in 0..2 {
        let mut t = Mat::<f64>::zeros(r1, yt.nrows());
        matmul(
            t.as_mut(),
            Accum::Replace,
            u1t.as_ref(),
            yt.transpose(),
            1.0,
            Par::rayon(0),
        );
        matmul(
            yt.as_mut(),
            Accum::Add,
            t.transpose(),
            u1t.as_ref(),
            -1.0,
            Par::rayon(0),
        );
    }
    let (mut kept, mut u2) = (0, Mat::<f64>::zeros(n, 0));
    if yt.nrows() > 0 {
        let svd = yt
            .transpose()
            .thin_svd()
            .map_err(|e| factor_error("small directions", format!("{e:?}")))?;
        let cut = CONSTRAINT_RANK_TOLERANCE * lambda_max.sqrt();
        let keep: Vec<usize> = (0..yt.nrows().min(n)).filter(|&i| svd.S()[i] > cut).collect();
        kept = keep.len();
        u2 = Mat::zeros(n, kept);
        for (j, &i) in keep.iter().enumerate() {
            u2.col_mut(j).copy_from(svd.U().col(i));
        }
    }
    let mut basis = Mat::<f64>::zeros(n, r1 + kept);
    basis.as_mut().subcols_mut(0, r1).copy_from(u1t.transpose());
    basis.as_mut().subcols_mut(r1, kept).copy_from(u2.as_ref());
    Ok(basis)
}

/// `U ← U L⁻ᵀ` with `UᵀU = LLᵀ` (one Cholesky–QR pass) for `ut = Uᵀ` (`r × n`); false when the
/// Gram matrix of the columns is not numerically positive definite.
fn reorthonormalise(ut: &mut Mat<f64>) -> bool {
    let r = ut.nrows();
    if r == 0 {
        return true;
    }
    let mut g = Mat::<f64>::zeros(r, r);
    matmul(
        g.as_mut(),
        Accum::Replace,
        ut.as_ref(),
        ut.transpose(),
        1.0,
        Par::rayon(0),
    );
    let Ok(llt) = g.llt(Side::Lower) else {
        return false;
    };
    // Uᵀ ← L⁻¹Uᵀ.
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(llt.L(), ut.as_mut(), Par::rayon(0));
    true
}

/// The exact route: the left singular vectors of the whole `n × m` transpose with
/// `σ > CONSTRAINT_RANK_TOLERANCE · σ_max`.
fn by_thin_svd(rows: &UnitRows, what: &str) -> Result<Mat<f64>> {
    let at = rows.dense_transpose();
    let svd = at.thin_svd().map_err(|e| NumericalError::Factorization {
        matrix: format!("{what}: constraint rank revelation"),
        reason: format!("{e:?}"),
    })?;
    let sigma: Vec<f64> = (0..at.ncols().min(at.nrows())).map(|i| svd.S()[i]).collect();
    let smax = sigma.iter().cloned().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..sigma.len())
        .filter(|&i| sigma[i] > CONSTRAINT_RANK_TOLERANCE * smax)
        .collect();
    Ok(Mat::from_fn(at.nrows(), keep.len(), |v, j| svd.U()[(v, keep[j])]))
}

/// The distinct unit-norm rows of `Â` (`m × n`), compressed by row (CSR).
struct UnitRows {
    n: usize,
    start: Vec<usize>,
    column: Vec<usize>,
    value: Vec<f64>,
}

impl UnitRows {
    fn gather(a: &[f64], n: usize, rows: &[(usize, f64)]) -> Self {
        let mut start = Vec::with_capacity(rows.len() + 1);
        let (mut column, mut value) = (Vec::new(), Vec::new());
        start.push(0);
        for &(k, norm) in rows {
            for (v, x) in a[k * n..(k + 1) * n].iter().enumerate() {
                if *x != 0.0 {
                    column.push(v);
                    value.push(x / norm);
                }
            }
            start.push(column.len());
        }
        Self {
            n,
            start,
            column,
            value,
        }
    }

    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn dense(&self) -> bool {
        self.value.len() as f64 >= DENSE_FRACTION * (self.len() * self.n) as f64
    }

    /// `Âᵀ`, `n × m` dense.
    fn dense_transpose(&self) -> Mat<f64> {
        let mut at = Mat::<f64>::zeros(self.n, self.len());
        for i in 0..self.len() {
            for p in self.start[i]..self.start[i + 1] {
                at[(self.column[p], i)] = self.value[p];
            }
        }
        at
    }

    /// The transpose's compression (CSC of `Â`).
    fn by_column(&self) -> ByColumn {
        let mut start = vec![0usize; self.n + 1];
        for &v in &self.column {
            start[v + 1] += 1;
        }
        for v in 0..self.n {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut row = vec![0usize; self.column.len()];
        let mut value = vec![0.0; self.column.len()];
        for i in 0..self.len() {
            for p in self.start[i]..self.start[i + 1] {
                let slot = &mut fill[self.column[p]];
                row[*slot] = i;
                value[*slot] = self.value[p];
                *slot += 1;
            }
        }
        ByColumn { start, row, value }
    }

    /// `G = ÂÂᵀ` (`m × m`): per column of `Â`, the products of its nonzeros (in a fixed order).
    fn gram(&self) -> Mat<f64> {
        let m = self.len();
        if self.dense() {
            let at = self.dense_transpose();
            let mut g = Mat::<f64>::zeros(m, m);
            matmul(
                g.as_mut(),
                Accum::Replace,
                at.transpose(),
                at.as_ref(),
                1.0,
                Par::rayon(0),
            );
            return g;
        }
        let columns = self.by_column();
        let mut g = Mat::<f64>::zeros(m, m);
        for v in 0..self.n {
            let (rows, values) = (columns.rows(v), columns.values(v));
            for (a, (&i, &x)) in rows.iter().zip(values).enumerate() {
                for (&j, &y) in rows[..=a].iter().zip(values) {
                    // Rows are listed in increasing order, so i ≥ j: the lower triangle.
                    g[(i, j)] += x * y;
                }
            }
        }
        for i in 0..m {
            for j in 0..i {
                g[(j, i)] = g[(i, j)];
            }
        }
        g
    }

    /// `(Âᵀ B)ᵀ = BᵀÂ` (`k × n`) for a dense block given as `bt = Bᵀ` (`k × m`): column `v` is
    /// the sum of the columns of `bt` of the rows that touch vertex `v`, weighted by their entries.
    fn transpose_times(&self, bt: MatRef<'_, f64>) -> Mat<f64> {
        let k = bt.nrows();
        let mut out = Mat::<f64>::zeros(k, self.n);
        if self.dense() {
            let at = self.dense_transpose();
            matmul(out.as_mut(), Accum::Replace, bt, at.transpose(), 1.0, Par::rayon(0));
            return out;
        }
        let columns = self.by_column();
        let bt = bt.to_owned();
        out.par_col_iter_mut().enumerate().for_each(|(v, col)| {
            let col = col
                .try_as_col_major_mut()
                .expect("a new matrix has contiguous columns")
                .as_slice_mut();
            for (&i, &x) in columns.rows(v).iter().zip(columns.values(v)) {
                let b = bt.col_as_slice(i);
                for (o, &y) in col.iter_mut().zip(b) {
                    *o += x * y;
                }
            }
        });
        out
    }
}

/// `Â` compressed by column (CSC): for each vertex, the rows that touch it (increasing) and
/// their entries.
struct ByColumn {
    start: Vec<usize>,
    row: Vec<usize>,
    value: Vec<f64>,
}

impl ByColumn {
    fn rows(&self, v: usize) -> &[usize] {
        &self.row[self.start[v]..self.start[v + 1]]
    }

    fn values(&self, v: usize) -> &[f64] {
        &self.value[self.start[v]..self.start[v + 1]]
    }
}

/// `rows` (index into `a`, row norm) without the rows that repeat an earlier one after
/// normalisation (within [`DUPLICATE_ROW_TOLERANCE`]), order kept. The rig constraint on weight
/// fields repeats most of its moments (`w X̂_i X̂_j` for `i ≠ j` appears twice: 6 of every 16
/// rows of a 3D rig); removing them first does not change the span. Candidates are found by
/// sorting a random projection of each row, then compared entry by entry.
fn distinct_rows(a: &[f64], n: usize, rows: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    let probe: Vec<f64> = (0..n)
        .map(|v| 1.0 + ((v as f64) * 0.618_033_988_749_895).fract())
        .collect();
    let row = |&(k, norm): &(usize, f64)| a[k * n..(k + 1) * n].iter().map(move |x| x / norm);
    let print: Vec<f64> = rows
        .iter()
        .map(|r| row(r).zip(&probe).map(|(x, p)| x * p).sum())
        .collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&i, &j| print[i].total_cmp(&print[j]).then(i.cmp(&j)));
    let scale = probe.iter().sum::<f64>().max(1.0);
    let mut duplicate = vec![false; rows.len()];
    for (pos, &i) in order.iter().enumerate() {
        for &j in &order[pos + 1..] {
            if print[j] - print[i] > DUPLICATE_ROW_TOLERANCE * scale {
                break;
            }
            let (first, later) = (i.min(j), i.max(j));
            if !duplicate[first]
                && !duplicate[later]
                && row(&rows[first])
                    .zip(row(&rows[later]))
                    .all(|(x, y)| (x - y).abs() <= DUPLICATE_ROW_TOLERANCE)
            {
                duplicate[later] = true;
            }
        }
    }
    rows.into_iter()
        .zip(duplicate)
        .filter(|(_, dup)| !dup)
        .map(|(r, _)| r)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{by_thin_svd, distinct_rows, orthonormal_constraint_basis, UnitRows};
    use faer::Mat;

    /// Rows of a constraint with the structure of the rig's (sparse, overlapping supports),
    /// then exact combinations of them (dependent) and combinations perturbed by `1e-9` and
    /// `1e-6` (independent, with singular values far below what the Gram matrix resolves).
    fn constraint(n: usize, independent: usize, support: usize) -> Vec<Vec<f64>> {
        let mut rows: Vec<Vec<f64>> = (0..independent)
            .map(|k| {
                let first = (k * 7919) % n;
                (0..n)
                    .map(|v| {
                        let d = (v + n - first) % n;
                        if d < support {
                            1.0 + ((k * 31 + v) as f64 * 0.618_033_988_749_895).fract()
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        let combine = |rows: &[Vec<f64>], a: usize, b: usize| -> Vec<f64> {
            rows[a].iter().zip(&rows[b]).map(|(x, y)| 0.3 * x - 1.7 * y).collect()
        };
        for k in 0..4 {
            rows.push(combine(&rows, k, k + 5));
        }
        for (k, eps) in [(1, 1e-9), (2, 1e-6)] {
            let mut r = combine(&rows, k, k + 3);
            r[(k * 13) % n] += eps;
            rows.push(r);
        }
        rows
    }

    /// The basis is orthonormal, has the rank of the exact thin-SVD route, and contains every
    /// row of the constraint (its residual outside the span ≤ 1e-12 of the row's norm): on a
    /// sparse constraint (the Gram route) and a dense one (dense products).
    #[test]
    fn gram_basis_spans_the_rows_with_the_svd_rank() {
        for (n, independent, support) in [(600, 40, 60), (300, 24, 200)] {
            let rows = constraint(n, independent, support);
            let a: Vec<f64> = rows.concat();
            let u = orthonormal_constraint_basis(&a, n, rows.len(), "test").unwrap();
            let with_norms: Vec<(usize, f64)> = (0..rows.len())
                .map(|k| (k, rows[k].iter().map(|x| x * x).sum::<f64>().sqrt()))
                .collect();
            let unit = UnitRows::gather(&a, n, &distinct_rows(&a, n, with_norms));
            assert_eq!(unit.dense(), support * 8 >= n, "n {n}: the route tested");
            let exact = by_thin_svd(&unit, "test").unwrap();
            assert_eq!(u.ncols(), exact.ncols(), "n {n}: rank");
            assert_eq!(u.ncols(), independent + 2, "n {n}: rank");
            let gram = u.transpose() * &u;
            let off = (0..u.ncols())
                .flat_map(|i| (0..u.ncols()).map(move |j| (i, j)))
                .map(|(i, j)| (gram[(i, j)] - if i == j { 1.0 } else { 0.0 }).abs())
                .fold(0.0, f64::max);
            assert!(off < 1e-13, "n {n}: UᵀU − I = {off:e}");
            for (k, row) in rows.iter().enumerate() {
                let x = Mat::from_fn(n, 1, |v, _| row[v]);
                let inside = &u * (u.transpose() * &x);
                let rest = (0..n).map(|v| (x[(v, 0)] - inside[(v, 0)]).powi(2)).sum::<f64>().sqrt();
                let norm = x.norm_l2();
                assert!(
                    rest <= 1e-12 * norm,
                    "n {n}, row {k}: {:e} of the row outside the span",
                    rest / norm
                );
            }
        }
    }

    /// A row repeated (also scaled, or off by round-off) is dropped, the first copy kept; a row
    /// that differs by more than round-off stays, and so does the order.
    #[test]
    fn repeated_constraint_rows_are_dropped_first() {
        let n = 50;
        let base: Vec<f64> = (0..n).map(|v| (v as f64 * 0.37).sin()).collect();
        let other: Vec<f64> = (0..n).map(|v| (v as f64 * 0.11).cos()).collect();
        let mut rows: Vec<Vec<f64>> = vec![base.clone(), other.clone()];
        rows.push(base.iter().map(|x| 2.5 * x).collect()); // a multiple: the same constraint
        rows.push(base.iter().map(|x| x * (1.0 + 1e-16)).collect()); // round-off apart
        let mut near = base.clone();
        near[7] += 1e-9; // a different constraint, however close
        rows.push(near);
        rows.push(other.clone());
        let a: Vec<f64> = rows.concat();
        let with_norms: Vec<(usize, f64)> = (0..rows.len())
            .map(|k| (k, rows[k].iter().map(|x| x * x).sum::<f64>().sqrt()))
            .collect();
        let kept: Vec<usize> = distinct_rows(&a, n, with_norms).into_iter().map(|(k, _)| k).collect();
        assert_eq!(kept, vec![0, 1, 4]);
    }
}
