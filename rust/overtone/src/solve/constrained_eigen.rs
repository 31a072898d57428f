//! Lowest eigenpairs of `K w = λ M w` subject to `C w = 0`, by shift-invert thick-restart
//! Lanczos (bounded, with fallbacks, cancellable through [`crate::progress`]).

use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, MatMut, MatRef};

use crate::error::{NumericalError, OvertoneError, Result};
use crate::solve::thick_restart_lanczos::{largest_eigenpairs, LanczosParams, LanczosResult};
use crate::solve::ConstrainedSolve;

/// Relative accuracy requested from Lanczos (residual of the shifted-inverted eigenpairs,
/// relative to the largest shift-inverted eigenvalue).
const KRYLOV_TOLERANCE: f64 = 1e-10;

/// Vectors the constrained solve is applied to at once: the sparse factor and the dense
/// projection factors (`2 n r` numbers, hundreds of MB on a large character's lattice) are read
/// once per block of this many vectors instead of once per vector.
const KRYLOV_BLOCK: usize = 8;

/// Pairs whose relative residual stays below this after every attempt are still used (their
/// fields satisfy `C w = 0` to round-off whatever their residual: the Krylov vectors lie in the
/// constrained operator's range); above it the dense fallback or an error follows.
const ACCEPTABLE_RESIDUAL: f64 = 1e-6;

/// The dense fallback (null-space basis, dense eigensolver: `O(n³)`) is tried up to this size.
const DENSE_FALLBACK_MAX_VERTICES: usize = 3000;

/// Meshes up to this many vertices are solved densely (null-space basis and a dense
/// symmetric eigensolver); the Lanczos iteration needs a search space smaller than `n`.
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
    /// Largest `‖A y − θ y‖ / θ_1` of the shift-inverted pairs (0 for the dense path).
    pub max_relative_residual: f64,
    /// Sparse constrained solves spent by Lanczos (0 for the dense path).
    pub operator_applications: usize,
}

/// The `k` lowest eigenpairs of `K w = λ M w` with `C w = 0`.
///
/// * `stiffness`: `K`, `n × n` sparse symmetric positive semi-definite.
/// * `mass`: the diagonal of `M` (`n`, positive).
/// * `constraint`: `C`, row-major `rows × n` (dependent rows allowed).
///
/// The shift `σ = −10⁻⁴ · tr K / tr M` lies below the spectrum, so `K − σM` is positive definite
/// and is factored once (sparse Cholesky); the constraint enters through the Schur complement
/// of [`ConstrainedSolve`], never as a dense `n × n` matrix. The largest eigenvalues `μ` of
/// `M^½ P M^½` (`P b = argmin ½uᵀ(K − σM)u − bᵀu s.t. Cu = 0`) give `λ = σ + 1/μ`; they come from
/// [thick-restart Lanczos](super::thick_restart_lanczos) with a capped number of solves, retried
/// with a larger basis from the best vectors found; pairs with a relative residual up to
/// `1e-6` are accepted, then a dense solve for small meshes, then
/// [`NumericalError::NotConverged`]. Progress and cancellation go through this thread's
/// [`crate::progress`] scope.
pub(crate) fn lowest_constrained_eigenpairs(
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
    let shifted = SparseColMat::try_new_from_triplets(n, n, &trip).map_err(|e| NumericalError::Factorization {
        matrix: "shifted stiffness K - sigma M".into(),
        reason: format!("{e:?}"),
    })?;
    crate::progress::report(
        0.0,
        "skinning eigenmodes (factoring K - sigma M and the constraint's Schur complement)",
    );
    let mut solve = ConstrainedSolve::new(&shifted, constraint, 1, "shifted stiffness K - sigma M")?;
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
    let sqrt_mass: Vec<f64> = mass.iter().map(|m| m.sqrt()).collect();
    // Y = M^½ P M^½ X for a block X, with P the constrained solve of (K − σM).
    let apply = |x: MatRef<'_, f64>, mut y: MatMut<'_, f64>| {
        for c in 0..x.ncols() {
            for v in 0..n {
                y[(v, c)] = sqrt_mass[v] * x[(v, c)];
            }
        }
        solve.solve_block(y.as_mut());
        for c in 0..x.ncols() {
            for v in 0..n {
                y[(v, c)] *= sqrt_mass[v];
            }
        }
    };
    let mut apply = apply;
    // A deterministic start vector with components along every smooth mode.
    let mut v0: Vec<f64> = (0..n)
        .map(|v| 1.0 + 0.5 * ((v as f64) * 0.618_033_988_749_895).fract())
        .collect();
    let progress = crate::progress::Current;
    let mut best: Option<LanczosResult> = None;
    let attempts = lanczos_attempts(n, k);
    let total_budget: usize = attempts.iter().map(|a| a.max_applies).sum();
    let mut spent = 0usize;
    for (i, params) in attempts.iter().enumerate() {
        let lo = spent as f64 / total_budget as f64;
        let hi = (spent + params.max_applies) as f64 / total_budget as f64;
        let stage = format!("skinning eigenmodes (Lanczos, attempt {} of {})", i + 1, attempts.len());
        let r = crate::progress::within(lo, hi, || {
            largest_eigenpairs(&mut apply, n, k, &v0, *params, &progress, &stage)
        })?;
        spent += params.max_applies;
        crate::progress::report(hi, &stage);
        let better = best.as_ref().map_or(true, |b| max_residual(&r) < max_residual(b));
        // The next attempt starts from the sum of the best Ritz vectors found so far.
        if better {
            v0 = (0..n).map(|v| (0..k).map(|c| r.vectors[(v, c)]).sum()).collect();
            best = Some(r);
        }
        if best.as_ref().is_some_and(|b| b.converged) {
            break;
        }
    }
    let best = best.expect("at least one attempt ran");
    let worst = max_residual(&best);
    // Fewer pairs than asked (the Krylov space ran out) count as not converged.
    let worst = if best.values.len() < k { f64::INFINITY } else { worst };
    if !best.converged && worst > ACCEPTABLE_RESIDUAL {
        if n <= DENSE_FALLBACK_MAX_VERTICES {
            crate::progress::report(1.0, "skinning eigenmodes (dense fallback)");
            crate::progress::check()?;
            return dense_constrained_eigenpairs(stiffness, mass, constraint, k, rank);
        }
        return Err(NumericalError::NotConverged {
            solve: "the skinning eigenmodes (shift-invert Lanczos)".into(),
            reason: format!(
                "after {} operator applications in {} attempts the largest relative residual is {worst:.1e} (tolerance {KRYLOV_TOLERANCE:.0e}, accepted up to {ACCEPTABLE_RESIDUAL:.0e}) on a mesh of {n} vertices",
                best.applies,
                attempts.len()
            ),
            advice: None,
        }
        .into());
    }
    let mus = &best.values;
    let vecs = &best.vectors;
    let mut values = Vec::with_capacity(k);
    let mut vectors = Mat::<f64>::zeros(n, k);
    for i in 0..k {
        if !(mus[i] > 0.0) {
            return Err(NumericalError::Eigensolve {
                problem: "skinning eigenmodes".into(),
                reason: format!("shift-inverted eigenvalue {} is not positive", mus[i]),
            }
            .into());
        }
        values.push(sigma + 1.0 / mus[i]);
        // Sign convention: the largest-magnitude entry is positive (deterministic output).
        let big = (0..n)
            .max_by(|&a, &b| vecs[(a, i)].abs().total_cmp(&vecs[(b, i)].abs()))
            .unwrap_or(0);
        let sign = if vecs[(big, i)] < 0.0 { -1.0 } else { 1.0 };
        for v in 0..n {
            vectors[(v, i)] = sign * vecs[(v, i)] / sqrt_mass[v];
        }
    }
    refine_constrained_basis(&mut solve, mass, &mut vectors);
    Ok(ConstrainedEigenpairs {
        values,
        vectors,
        constraint_rank: rank,
        max_relative_residual: worst,
        operator_applications: best.applies,
    })
}

/// One step of iterative refinement of the fields `w` (`n × k`): each projected once more onto
/// `C w = 0` ([`ConstrainedSolve::project_field_in_place`]), which brings `‖C w‖` from the
/// Krylov iteration's round-off (its start vectors' images are small differences of large
/// terms) down to round-off relative to `‖w‖`, then `M`-orthonormalised again (modified
/// Gram–Schmidt in the `M` inner product: a change of the order of that round-off, and every
/// combination keeps `C w = 0`).
fn refine_constrained_basis(solve: &mut ConstrainedSolve, mass: &[f64], w: &mut Mat<f64>) {
    let (n, k) = (w.nrows(), w.ncols());
    for i in 0..k {
        solve.project_field_in_place(w.col_as_slice_mut(i));
        for j in 0..i {
            let c: f64 = (0..n).map(|v| w[(v, j)] * mass[v] * w[(v, i)]).sum();
            for v in 0..n {
                let x = w[(v, j)];
                w[(v, i)] -= c * x;
            }
        }
        let norm = (0..n).map(|v| mass[v] * w[(v, i)] * w[(v, i)]).sum::<f64>().sqrt();
        for v in 0..n {
            w[(v, i)] /= norm;
        }
    }
}

fn max_residual(r: &LanczosResult) -> f64 {
    r.relative_residuals.iter().cloned().fold(0.0, f64::max)
}

/// The Lanczos runs tried in turn, each from the best vectors of the previous one: a basis of
/// `max(3k, 48)` vectors, then a larger one (`max(6k, 96)`), each with a cap on operator
/// applications (one constrained sparse solve each).
fn lanczos_attempts(n: usize, k: usize) -> Vec<LanczosParams> {
    let first = (3 * k).max(48).min(n - 1);
    let second = (6 * k).max(96).min(n - 1);
    vec![
        LanczosParams {
            basis: first,
            max_applies: 30 * first,
            tolerance: KRYLOV_TOLERANCE,
            block: KRYLOV_BLOCK,
        },
        LanczosParams {
            basis: second,
            max_applies: 20 * second,
            tolerance: KRYLOV_TOLERANCE,
            block: KRYLOV_BLOCK,
        },
    ]
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
    let fail = |what: &str, e: String| NumericalError::Factorization {
        matrix: format!("skinning eigenmodes ({what})"),
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
        max_relative_residual: 0.0,
        operator_applications: 0,
    })
}
