//! Equality-constrained SPD solve by a Schur complement over a prefactored sparse Cholesky.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

use crate::error::{NumericalError, OvertoneError, Result};
use crate::solve::constraint_basis::orthonormal_constraint_basis;
#[cfg(doc)]
use crate::solve::constraint_basis::CONSTRAINT_RANK_TOLERANCE;
use crate::solve::SparseCholesky;

/// Solves `min ½ uᵀĤu − bᵀu  s.t.  Â u = 0` for each column `b` of an `n × d` right-hand side.
///
/// `Ĥ` is a sparse SPD `n × n` matrix and `Â` a dense `c × n` constraint (`c ≪ n`). With
/// the constraint first replaced by an orthonormal basis `U_r` (`n × r`) of the row space of
/// `Â` (rows scaled to unit norm, singular values above [`CONSTRAINT_RANK_TOLERANCE`]·σ_max
/// kept: [`orthonormal_constraint_basis`]), so that dependent or empty rows (bones without
/// influence, zero leak) are dropped instead of making the Schur complement singular:
/// with `Z = Ĥ⁻¹U_r` and `S = U_rᵀ Z = V Λ Vᵀ` (SPD), the KKT solution is
/// `u = u₀ − Z S⁻¹ U_rᵀ u₀`, `u₀ = Ĥ⁻¹ b`, applied as `t = U_rᵀu₀`, `t ← W(Wᵀt)` with
/// `W = V Λ^{-1/2}` (`r × r`), `u = u₀ − Z t`: `2nr + 2r²` per column. Building it costs the
/// `r` sparse solves for `Z`, the `nr²` of `S` and an `r × r` eigensolve; the `n × r` factors
/// are `U_r` and `Z` themselves (no `n × r × r` products: on a large character's lattice,
/// 25,035 vertices and `r` = 492, those were half the bind's constraint setup).
/// The eigensolve rather than a Cholesky factor of `S`: with `L⁻ᵀL⁻¹`, a converged Newton step
/// of the frog (step 9e-8) lost its descent slope to round-off one iteration earlier and the
/// Newton test's quadratic tail failed.
/// No indefinite KKT matrix is ever factored. [`solve_field_in_place`] does not allocate.
///
/// [`solve_field_in_place`]: ConstrainedSolve::solve_field_in_place
#[derive(Debug)]
pub struct ConstrainedSolve {
    chol: SparseCholesky,
    /// `Z = Ĥ⁻¹U_r`, `n × r`.
    z: Mat<f64>,
    /// `W = V Λ^{-1/2}` for `S = U_rᵀ Z = V Λ Vᵀ` (`r × r`), so that `S⁻¹ = W Wᵀ`.
    w: Mat<f64>,
    /// `2r` values of workspace per right-hand side.
    tmp: Vec<Vec<f64>>,
    rank: usize,
    n_constraints: usize,
    /// `U_r`, `n × r`.
    basis: Mat<f64>,
    what: String,
}

impl ConstrainedSolve {
    /// Prefactors. `h` is `Ĥ` (`n × n`), `a` is `Â` (`c × n`, row-major), `max_rhs` the largest
    /// number of columns later solved at once.
    pub fn new(h: &faer::sparse::SparseColMat<usize, f64>, a: &[f64], max_rhs: usize, what: &str) -> Result<Self> {
        Self::build(h, a, max_rhs, what, false)
    }

    /// [`new`](Self::new) with the supernodal sparse Cholesky forced (see
    /// [`SparseCholesky::new_supernodal`]); for the vector Hessians of Newton's method.
    pub fn new_supernodal(
        h: &faer::sparse::SparseColMat<usize, f64>,
        a: &[f64],
        max_rhs: usize,
        what: &str,
    ) -> Result<Self> {
        Self::build(h, a, max_rhs, what, true)
    }

    fn build(
        h: &faer::sparse::SparseColMat<usize, f64>,
        a: &[f64],
        max_rhs: usize,
        what: &str,
        supernodal: bool,
    ) -> Result<Self> {
        let n = h.nrows();
        if a.len() % n.max(1) != 0 {
            return Err(OvertoneError::size(
                "constraint matrix",
                format!("a multiple of {n}"),
                a.len(),
            ));
        }
        let c = a.len() / n;
        let chol = if supernodal {
            SparseCholesky::new_supernodal(h.as_ref(), max_rhs.max(c), what)?
        } else {
            SparseCholesky::new(h, max_rhs.max(c), what)?
        };
        let basis = orthonormal_constraint_basis(a, n, c, what)?;
        let (z, w) = schur_factors(&chol, &basis, what)?;
        let rank = basis.ncols();
        Ok(Self {
            chol,
            tmp: vec![vec![0.0; 2 * rank]; max_rhs.max(1)],
            z,
            w,
            rank,
            n_constraints: c,
            basis,
            what: what.to_string(),
        })
    }

    /// Numeric refactorization for a new matrix `Ĥ` with the same sparsity pattern (the
    /// symbolic analysis and the constraint basis are reused); recomputes `Z = Ĥ⁻¹U_r` and the
    /// Schur complement. For Newton's method, whose Hessian changes every iteration.
    pub fn refactor(&mut self, h: faer::sparse::SparseColMatRef<'_, usize, f64>) -> Result<()> {
        if h.nrows() != self.chol.n() || h.ncols() != self.chol.n() {
            return Err(OvertoneError::size(
                "matrix to refactor",
                format!("{0} x {0}", self.chol.n()),
                format!("{} x {}", h.nrows(), h.ncols()),
            ));
        }
        self.chol.refactor_ref(h)?;
        let (z, w) = schur_factors(&self.chol, &self.basis, &self.what)?;
        self.z = z;
        self.w = w;
        Ok(())
    }

    /// Number of independent constraints kept.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Number of constraint rows given.
    pub(crate) fn n_constraints(&self) -> usize {
        self.n_constraints
    }
    /// `U_r`, the orthonormal basis (`n × r`) of the constraint rows' span.
    pub fn basis(&self) -> &Mat<f64> {
        &self.basis
    }

    /// Overwrites the coordinate-major field `x` (`n·k`, `k ≤ max_rhs`) with the constrained
    /// minimiser for each of its `k` columns. Columns are independent and run in parallel on
    /// large meshes (bit-identical to the sequential result). Does not allocate.
    pub(crate) fn solve_field_in_place(&mut self, x: &mut [f64]) {
        let n = self.chol.n();
        let factors = SchurFactors::of(&self.basis, &self.z, &self.w);
        if n >= PARALLEL_MIN_VERTICES {
            self.chol.par_for_each_column(
                x,
                |solve, col, t| {
                    solve(col);
                    factors.project_column(col, t);
                },
                &mut self.tmp,
            );
        } else {
            // Small systems: one multi-column solve has less per-call overhead.
            self.chol.solve_in_place(field_mut(x, n));
            self.project_field_in_place(x);
        }
    }

    /// Overwrites each column of `x` (`n × k`, any `k`) with the constrained minimiser, as
    /// [`solve_field_in_place`](Self::solve_field_in_place) does, for a block of columns: the
    /// sparse solves in one multi-column solve per rayon thread, the projection
    /// `X ← X − Z W Wᵀ(U_rᵀ X)` as four matrix products, so the
    /// factor, `U_r` and `Z` are read once per block instead of once per column. Allocates
    /// (for precomputes such as a Krylov block, not per-step solves); the result depends only
    /// on the thread count.
    pub(crate) fn solve_block(&self, mut x: MatMut<'_, f64>) {
        let (r, k) = (self.rank, x.ncols());
        self.chol.solve_columns_in_parallel(x.as_mut());
        if r == 0 || k == 0 {
            return;
        }
        let mut t = Mat::<f64>::zeros(r, k);
        matmul(
            t.as_mut(),
            Accum::Replace,
            self.basis.transpose(),
            x.as_ref(),
            1.0,
            Par::rayon(0),
        );
        let mut s = Mat::<f64>::zeros(r, k);
        SchurFactors::of(&self.basis, &self.z, &self.w).schur_solve(t.as_mut(), s.as_mut(), Par::rayon(0));
        matmul(x, Accum::Add, self.z.as_ref(), t.as_ref(), -1.0, Par::rayon(0));
    }

    /// Applies the oblique projector `u ← u − Z S⁻¹(U_rᵀ u)` onto `{Â u = 0}` (along `Ĥ⁻¹Âᵀ`)
    /// to each column of the coordinate-major field `x`.
    ///
    /// [`solve_field_in_place`](Self::solve_field_in_place) already ends with it; applying it once
    /// more to a converged solution is one step of iterative refinement, which brings `‖Â u‖`
    /// down to round-off relative to `‖u‖` even when `u` is the small difference of large terms.
    pub(crate) fn project_field_in_place(&mut self, x: &mut [f64]) {
        let n = self.chol.n();
        let factors = SchurFactors::of(&self.basis, &self.z, &self.w);
        for (col, t) in x.chunks_exact_mut(n).zip(self.tmp.iter_mut()) {
            factors.project_column(col, t);
        }
    }
}

/// Mutable view of a coordinate-major field as an `n × d` faer matrix.
pub(crate) fn field_mut(x: &mut [f64], n: usize) -> MatMut<'_, f64> {
    let d = x.len() / n;
    MatMut::from_column_major_slice_mut(x, n, d)
}

/// Vertex count from which the columns of a field are solved on separate threads.
pub(crate) const PARALLEL_MIN_VERTICES: usize = 1000;

/// The factors of the projection `u ← u − Z S⁻¹(U_rᵀ u)`, borrowed (`U_r`, `Z`: `n × r`; `W`:
/// `r × r` with `S⁻¹ = W Wᵀ`).
#[derive(Clone, Copy)]
struct SchurFactors<'a> {
    basis: MatRef<'a, f64>,
    z: MatRef<'a, f64>,
    w: MatRef<'a, f64>,
}

impl<'a> SchurFactors<'a> {
    fn of(basis: &'a Mat<f64>, z: &'a Mat<f64>, w: &'a Mat<f64>) -> Self {
        Self {
            basis: basis.as_ref(),
            z: z.as_ref(),
            w: w.as_ref(),
        }
    }

    /// `t ← S⁻¹ t = W (Wᵀ t)` for the columns of `t` (`r × k`; `s`: `r × k` of workspace).
    fn schur_solve(&self, mut t: MatMut<'_, f64>, mut s: MatMut<'_, f64>, par: Par) {
        matmul(s.as_mut(), Accum::Replace, self.w.transpose(), t.as_ref(), 1.0, par);
        matmul(t.as_mut(), Accum::Replace, self.w, s.as_ref(), 1.0, par);
    }

    /// `u ← u − Z S⁻¹(U_rᵀ u)` for one column (`t`: `2r` values of workspace): four SIMD
    /// matrix-vector products (faer, sequential: the same sums in the same order on every
    /// call). Does not allocate.
    fn project_column(&self, u: &mut [f64], t: &mut [f64]) {
        let (n, r) = (u.len(), self.basis.ncols());
        if r == 0 {
            return;
        }
        let mut um = MatMut::from_column_major_slice_mut(u, n, 1);
        let (t, s) = t[..2 * r].split_at_mut(r);
        let mut tm = MatMut::from_column_major_slice_mut(t, r, 1);
        matmul(
            tm.as_mut(),
            Accum::Replace,
            self.basis.transpose(),
            um.as_ref(),
            1.0,
            Par::Seq,
        );
        self.schur_solve(tm.as_mut(), MatMut::from_column_major_slice_mut(s, r, 1), Par::Seq);
        matmul(um.as_mut(), Accum::Add, self.z, tm.as_ref(), -1.0, Par::Seq);
    }
}

/// `Z = Ĥ⁻¹U_r` (`n × r`) and `W = V Λ^{-1/2}` (`r × r`) for `S = U_rᵀ Z = V Λ Vᵀ`.
fn schur_factors(chol: &SparseCholesky, basis: &Mat<f64>, what: &str) -> Result<(Mat<f64>, Mat<f64>)> {
    let r = basis.ncols();
    if r == 0 {
        return Ok((Mat::zeros(basis.nrows(), 0), Mat::zeros(0, 0)));
    }
    // The r solves and the product on rayon's pool (the same result for a given thread count).
    let par = Par::rayon(0);
    let mut z = basis.clone();
    chol.solve_columns_in_parallel(z.as_mut());
    // S is SPD (U_r has full column rank); its two triangles are averaged.
    let mut s = Mat::<f64>::zeros(r, r);
    matmul(s.as_mut(), Accum::Replace, basis.transpose(), z.as_ref(), 1.0, par);
    for i in 0..r {
        for j in 0..i {
            let m = 0.5 * (s[(i, j)] + s[(j, i)]);
            s[(i, j)] = m;
            s[(j, i)] = m;
        }
    }
    // S = V Λ Vᵀ; the factor W = V Λ^{-1/2} gives S⁻¹ = W Wᵀ.
    let eig = s
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| NumericalError::Factorization {
            matrix: format!("{what}: constraint Schur complement"),
            reason: format!("{e:?}"),
        })?;
    let mut w = Mat::<f64>::zeros(r, r);
    for col in 0..r {
        let lam = eig.S()[col];
        if !(lam > 0.0) {
            return Err(NumericalError::Factorization {
                matrix: format!("{what}: constraint Schur complement"),
                reason: format!("eigenvalue {lam:e} is not positive"),
            }
            .into());
        }
        for row in 0..r {
            w[(row, col)] = eig.U()[(row, col)] / lam.sqrt();
        }
    }
    Ok((z, w))
}
