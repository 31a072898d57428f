//! Lowest eigenpairs of `K w = λ M w` subject to `C w = 0`, by shift-invert Krylov–Schur.

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::matrix_free::eigen::{partial_self_adjoint_eigen, partial_self_adjoint_eigen_scratch, PartialEigenParams};
use faer::matrix_free::LinOp;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Col, Mat, MatMut, MatRef, Par};

use crate::error::{OvertoneError, Result};
use crate::solve::ConstrainedSolve;

/// Relative accuracy requested from Krylov–Schur (residual of the shifted-inverted eigenpairs).
const KRYLOV_TOLERANCE: f64 = 1e-12;

/// Meshes up to this many vertices are solved densely (null-space basis and a dense
/// symmetric eigensolver); Krylov–Schur needs a search space smaller than `n`.
const DENSE_MAX_VERTICES: usize = 128;

/// Eigenpairs, ascending.
#[derive(Clone, Debug)]
pub struct ConstrainedEigenpairs {
    /// `λ_1 ≤ … ≤ λ_k`.
    pub values: Vec<f64>,
    /// `n × k`, `M`-orthonormal columns (`Wᵀ M W = I`), each with `C w = 0`.
    pub vectors: Mat<f64>,
    /// Independent constraint rows kept (rank of `C`).
    pub constraint_rank: usize,
}

/// The operator `M^½ P M^½` with `P b = argmin ½uᵀ(K − σM)u − bᵀu s.t. Cu = 0`; its largest
/// eigenvalues `μ` give the constrained eigenvalues nearest above `σ` as `λ = σ + 1/μ`.
struct ShiftInvert {
    solve: Mutex<(ConstrainedSolve, Vec<f64>)>,
    sqrt_mass: Vec<f64>,
}

impl std::fmt::Debug for ShiftInvert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShiftInvert(n = {})", self.sqrt_mass.len())
    }
}

impl LinOp<f64> for ShiftInvert {
    fn apply_scratch(&self, _rhs_ncols: usize, _par: Par) -> StackReq {
        StackReq::EMPTY
    }
    fn nrows(&self) -> usize {
        self.sqrt_mass.len()
    }
    fn ncols(&self) -> usize {
        self.sqrt_mass.len()
    }
    fn apply(&self, mut out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, _par: Par, _stack: &mut MemStack) {
        let mut guard = self.solve.lock().expect("shift-invert solve poisoned");
        let (solve, buf) = &mut *guard;
        for col in 0..rhs.ncols() {
            for (v, b) in buf.iter_mut().enumerate() {
                *b = self.sqrt_mass[v] * rhs[(v, col)];
            }
            solve.solve_field_in_place(buf);
            for (v, b) in buf.iter().enumerate() {
                out[(v, col)] = self.sqrt_mass[v] * b;
            }
        }
    }
    fn conj_apply(&self, out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, par: Par, stack: &mut MemStack) {
        self.apply(out, rhs, par, stack)
    }
}

/// The `k` lowest eigenpairs of `K w = λ M w` with `C w = 0`.
///
/// * `stiffness`: `K`, `n × n` sparse symmetric positive semi-definite.
/// * `mass`: the diagonal of `M` (`n`, positive).
/// * `constraint`: `C`, row-major `rows × n` (dependent rows allowed).
///
/// The shift `σ = −10⁻⁴ · tr K / tr M` lies below the spectrum, so `K − σM` is positive definite
/// and is factored once (sparse Cholesky); the constraint enters through the Schur complement
/// of [`ConstrainedSolve`], never as a dense `n × n` matrix.
pub fn lowest_constrained_eigenpairs(
    stiffness: &SparseColMat<usize, f64>,
    mass: &[f64],
    constraint: &[f64],
    k: usize,
) -> Result<ConstrainedEigenpairs> {
    let n = mass.len();
    if k == 0 {
        return Err(OvertoneError::setting("modes", 0, "at least one mode is needed"));
    }
    let trace_k: f64 = (0..n).map(|v| diagonal(stiffness, v)).sum();
    let trace_m: f64 = mass.iter().sum();
    let sigma = -1e-4 * trace_k / trace_m;
    let mut trip = Vec::with_capacity(stiffness.compute_nnz() + n);
    for col in 0..n {
        let rows = stiffness.row_idx_of_col_raw(col);
        let vals = stiffness.val_of_col(col);
        for (r, v) in rows.iter().zip(vals) {
            trip.push(Triplet::new(*r, col, *v));
        }
        trip.push(Triplet::new(col, col, -sigma * mass[col]));
    }
    let shifted = SparseColMat::try_new_from_triplets(n, n, &trip).map_err(|e| OvertoneError::Factorization {
        what: "shifted stiffness K - sigma M".into(),
        reason: format!("{e:?}"),
    })?;
    let solve = ConstrainedSolve::new(&shifted, constraint, 1, "shifted stiffness K - sigma M")?;
    let rank = solve.rank();
    if n <= rank + k {
        return Err(OvertoneError::setting(
            "modes",
            k,
            format!(
                "the rig's constraint fixes {rank} of the {n} weight-field degrees of freedom, leaving {} free; ask for fewer modes or a finer mesh",
                n.saturating_sub(rank)
            ),
        ));
    }
    if n <= DENSE_MAX_VERTICES.max(4 * k) {
        return dense_constrained_eigenpairs(stiffness, mass, constraint, k, rank);
    }
    let op = ShiftInvert {
        solve: Mutex::new((solve, vec![0.0; n])),
        sqrt_mass: mass.iter().map(|m| m.sqrt()).collect(),
    };
    let params = PartialEigenParams {
        max_restarts: 1000,
        ..Default::default()
    };
    let mut buffer = MemBuffer::new(partial_self_adjoint_eigen_scratch(&op, k, Par::Seq, params));
    let mut vecs = Mat::<f64>::zeros(n, k);
    let mut mus = vec![0.0; k];
    // A deterministic start vector with components along every smooth mode.
    let v0 = Col::<f64>::from_fn(n, |v| 1.0 + 0.5 * ((v as f64) * 0.618_033_988_749_895).fract());
    let info = partial_self_adjoint_eigen(
        vecs.as_mut(),
        &mut mus,
        &op,
        v0.as_ref(),
        KRYLOV_TOLERANCE,
        Par::Seq,
        MemStack::new(&mut buffer),
        params,
    );
    if info.n_converged_eigen < k {
        return Err(OvertoneError::Factorization {
            what: "skinning eigenmodes".into(),
            reason: format!("Krylov-Schur converged {} of {k} eigenpairs", info.n_converged_eigen),
        });
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| mus[b].total_cmp(&mus[a]));
    let mut values = Vec::with_capacity(k);
    let mut vectors = Mat::<f64>::zeros(n, k);
    for (out, &i) in order.iter().enumerate() {
        if !(mus[i] > 0.0) {
            return Err(OvertoneError::Factorization {
                what: "skinning eigenmodes".into(),
                reason: format!("shift-inverted eigenvalue {} is not positive", mus[i]),
            });
        }
        values.push(sigma + 1.0 / mus[i]);
        // Sign convention: the largest-magnitude entry is positive (deterministic output).
        let big = (0..n)
            .max_by(|&a, &b| vecs[(a, i)].abs().total_cmp(&vecs[(b, i)].abs()))
            .unwrap_or(0);
        let sign = if vecs[(big, i)] < 0.0 { -1.0 } else { 1.0 };
        for v in 0..n {
            vectors[(v, out)] = sign * vecs[(v, i)] / op.sqrt_mass[v];
        }
    }
    Ok(ConstrainedEigenpairs {
        values,
        vectors,
        constraint_rank: rank,
    })
}

fn diagonal(a: &SparseColMat<usize, f64>, v: usize) -> f64 {
    a.row_idx_of_col_raw(v)
        .iter()
        .zip(a.val_of_col(v))
        .filter(|(r, _)| **r == v)
        .map(|(_, x)| *x)
        .sum()
}

/// Dense solve for tiny meshes: with `N` a basis of `ker C` (from the SVD of `C`), `Y` an
/// `M`-orthonormal basis of `range N` (QR of `M^½ N`), the eigenpairs of `YᵀKY` give the
/// constrained ones, `w = Y y`.
fn dense_constrained_eigenpairs(
    stiffness: &SparseColMat<usize, f64>,
    mass: &[f64],
    constraint: &[f64],
    k: usize,
    rank: usize,
) -> Result<ConstrainedEigenpairs> {
    let n = mass.len();
    let rows = constraint.len() / n;
    let fail = |what: &str, e: String| OvertoneError::Factorization {
        what: format!("skinning eigenmodes ({what})"),
        reason: e,
    };
    let null = if rows == 0 {
        Mat::<f64>::identity(n, n)
    } else {
        let c = Mat::from_fn(rows, n, |i, v| constraint[i * n + v]);
        let svd = c.svd().map_err(|e| fail("constraint SVD", format!("{e:?}")))?;
        svd.V().subcols(rank, n - rank).to_owned()
    };
    let scaled = Mat::from_fn(n, null.ncols(), |v, j| mass[v].sqrt() * null[(v, j)]);
    let q = scaled.qr().compute_thin_Q();
    let y = Mat::from_fn(n, q.ncols(), |v, j| q[(v, j)] / mass[v].sqrt());
    let kd = stiffness.to_dense();
    let reduced = y.transpose() * &kd * &y;
    let eig = reduced
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| fail("dense eigensolver", format!("{e:?}")))?;
    let values: Vec<f64> = (0..k).map(|i| eig.S()[i]).collect();
    let mut vectors = &y * eig.U().subcols(0, k);
    for i in 0..k {
        let big = (0..n)
            .max_by(|&a, &b| vectors[(a, i)].abs().total_cmp(&vectors[(b, i)].abs()))
            .unwrap_or(0);
        if vectors[(big, i)] < 0.0 {
            for v in 0..n {
                vectors[(v, i)] = -vectors[(v, i)];
            }
        }
    }
    Ok(ConstrainedEigenpairs {
        values,
        vectors,
        constraint_rank: rank,
    })
}
