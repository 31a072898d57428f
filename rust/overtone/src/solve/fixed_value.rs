//! Quadratic minimisation with fixed values (Dirichlet conditions), split into a precompute and
//! a solve as libigl's `min_quad_with_fixed` does: the leak diffusion, the inward extension of
//! skinning weights and the harmonic extension of painted fields all run through it.

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;

use crate::error::{check_finite, NumericalError, OvertoneError, Result};
use crate::solve::SparseCholesky;

/// Minimiser of `½ xᵀ A x` over `x ∈ ℝⁿ` (one column per right-hand side) with `x_b` fixed at
/// given values on the vertices `b`: the free part solves `A_ff x_f = −A_fb x_b`.
///
/// [`new`](Self::new) splits `A` into its free–free block (factored once, sparse Cholesky) and
/// its free–fixed coupling; [`solve`](Self::solve) takes the fixed values and returns every
/// vertex's. `A_ff` must be symmetric positive definite (for a Laplacian: at least one fixed
/// vertex in each connected piece).
pub struct FixedValueSolve {
    n: usize,
    /// Free vertices, ascending.
    free: Vec<usize>,
    /// Per vertex, its position in the `fixed` list given to `new` (the last one if it is listed
    /// twice), or `usize::MAX` when free.
    fixed_slot: Vec<usize>,
    n_fixed: usize,
    /// Most right-hand sides per solve.
    max_rhs: usize,
    /// What the solved fields are, for errors.
    what: String,
    /// `(free row, fixed slot, A value)` in the order the entries of `A` were given.
    coupling: Vec<(usize, usize, f64)>,
    /// `A_ff` factored; `None` when no vertex is free.
    chol: Option<SparseCholesky>,
}

impl FixedValueSolve {
    /// Precomputes the solve for the `n × n` matrix `A` given by its entries `a` (duplicates
    /// are summed, in the given order) with the vertices `fixed` held. `max_rhs` is the largest
    /// number of right-hand sides [`solve`](Self::solve) will be given; `what` names the matrix
    /// in errors. Errors: a fixed or entry index `≥ n`; `A_ff` not positive definite.
    pub fn new(
        n: usize,
        a: impl IntoIterator<Item = Triplet<usize, usize, f64>>,
        fixed: &[usize],
        max_rhs: usize,
        what: &str,
    ) -> Result<Self> {
        let mut fixed_slot = vec![usize::MAX; n];
        for (k, &v) in fixed.iter().enumerate() {
            if v >= n {
                return Err(OvertoneError::size("fixed vertex", format!("< {n}"), v));
            }
            fixed_slot[v] = k;
        }
        let free: Vec<usize> = (0..n).filter(|&v| fixed_slot[v] == usize::MAX).collect();
        let mut free_index = vec![usize::MAX; n];
        for (k, &v) in free.iter().enumerate() {
            free_index[v] = k;
        }
        let (mut block, mut coupling) = (Vec::new(), Vec::new());
        for t in a {
            if t.row >= n || t.col >= n {
                return Err(OvertoneError::size(
                    what,
                    format!("entries inside {n} x {n}"),
                    format!("entry ({}, {})", t.row, t.col),
                ));
            }
            let r = free_index[t.row];
            if r == usize::MAX {
                continue;
            }
            match free_index[t.col] {
                usize::MAX => coupling.push((r, fixed_slot[t.col], t.val)),
                c => block.push(Triplet::new(r, c, t.val)),
            }
        }
        let chol = if free.is_empty() {
            None
        } else {
            let nf = free.len();
            let a_ff =
                SparseColMat::try_new_from_triplets(nf, nf, &block).map_err(|e| NumericalError::Factorization {
                    matrix: what.into(),
                    reason: format!("{e:?}"),
                })?;
            Some(SparseCholesky::new(&a_ff, max_rhs, what)?)
        };
        Ok(Self {
            n,
            free,
            fixed_slot,
            n_fixed: fixed.len(),
            max_rhs,
            what: what.to_string(),
            coupling,
            chol,
        })
    }

    /// Number of free vertices.
    #[cfg(test)]
    pub(crate) fn n_free(&self) -> usize {
        self.free.len()
    }

    /// The values of every vertex (`n × q`, row-major) given those of the fixed vertices
    /// (`known`: `|fixed| × q`, row-major, in the order of the `fixed` list given to `new`).
    /// Fixed rows are returned as given. Errors: wrong sizes, more columns than the `max_rhs`
    /// given to `new`, non-finite values.
    pub fn solve(&mut self, known: &[f64], q: usize) -> Result<Vec<f64>> {
        self.solve_loaded(known, None, q)
    }

    /// As [`solve`](Self::solve), minimising `½ xᵀ A x − fᵀ x` with the load `f` (`n × q`,
    /// row-major; the rows of fixed vertices are ignored): the free part solves
    /// `A_ff x_f = f_f − A_fb x_b`. A Poisson problem `A x = f` with `x_b` given.
    pub fn solve_with_load(&mut self, known: &[f64], load: &[f64], q: usize) -> Result<Vec<f64>> {
        if load.len() != self.n * q {
            return Err(OvertoneError::size(
                format!("{}: load", self.what),
                format!("{} x {q}", self.n),
                load.len(),
            ));
        }
        check_finite(&format!("{}: load", self.what), load, q.max(1))?;
        self.solve_loaded(known, Some(load), q)
    }

    fn solve_loaded(&mut self, known: &[f64], load: Option<&[f64]>, q: usize) -> Result<Vec<f64>> {
        if q > self.max_rhs {
            return Err(OvertoneError::size(
                format!("{}: fixed values", self.what),
                format!("at most {} columns", self.max_rhs),
                q,
            ));
        }
        if known.len() != self.n_fixed * q {
            return Err(OvertoneError::size(
                format!("{}: fixed values", self.what),
                format!("{} x {q}", self.n_fixed),
                known.len(),
            ));
        }
        check_finite(&format!("{}: fixed values", self.what), known, q.max(1))?;
        let mut x = vec![0.0; self.n * q];
        for (v, &k) in self.fixed_slot.iter().enumerate() {
            if k != usize::MAX {
                x[v * q..(v + 1) * q].copy_from_slice(&known[k * q..(k + 1) * q]);
            }
        }
        if let Some(chol) = &mut self.chol {
            let mut rhs = Mat::<f64>::zeros(self.free.len(), q);
            if let Some(f) = load {
                for (k, &v) in self.free.iter().enumerate() {
                    for j in 0..q {
                        rhs[(k, j)] = f[v * q + j];
                    }
                }
            }
            for &(r, k, val) in &self.coupling {
                for j in 0..q {
                    rhs[(r, j)] -= val * known[k * q + j];
                }
            }
            chol.solve_in_place(rhs.as_mut());
            for (k, &v) in self.free.iter().enumerate() {
                for j in 0..q {
                    x[v * q + j] = rhs[(k, j)];
                }
            }
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Laplacian of the path graph `0–1–…–(n−1)` with unit springs, as triplets.
    fn path_laplacian(n: usize) -> Vec<Triplet<usize, usize, f64>> {
        (0..n - 1)
            .flat_map(|v| [(v, v, 1.0), (v + 1, v + 1, 1.0), (v, v + 1, -1.0), (v + 1, v, -1.0)])
            .map(|(r, c, s)| Triplet::new(r, c, s))
            .collect()
    }

    /// The path graph 0–1–2–3–4 with unit springs, both ends held at 0 and a unit load on
    /// every free vertex: `x_{v−1} − 2x_v + x_{v+1} = −1` gives the parabola `x_v = v(4 − v)/2`.
    #[test]
    fn a_loaded_path_graph_sags_into_a_parabola() {
        let mut s = FixedValueSolve::new(5, path_laplacian(5), &[0, 4], 1, "path Laplacian").unwrap();
        let x = s.solve_with_load(&[0.0, 0.0], &[7.0, 1.0, 1.0, 1.0, 7.0], 1).unwrap();
        for (v, xv) in x.iter().enumerate() {
            let want = (v * (4 - v)) as f64 / 2.0;
            assert!((xv - want).abs() < 1e-12, "x[{v}] = {xv}, want {want}");
        }
        assert!(
            s.solve_with_load(&[0.0, 0.0], &[1.0; 4], 1).is_err(),
            "a short load is refused"
        );
    }

    /// The path graph 0–1–2–3–4 (unit springs): with the ends fixed at 0 and 1 the minimiser of
    /// `½ xᵀ L x` is the straight line `x_v = v/4`, and a second column is solved alongside.
    #[test]
    fn a_path_graph_with_fixed_ends_is_a_straight_line() {
        let n = 5;
        let a = path_laplacian(n);
        let mut s = FixedValueSolve::new(n, a, &[4, 0], 2, "path Laplacian").unwrap();
        assert_eq!(s.n_free(), 3);
        let x = s.solve(&[1.0, -2.0, 0.0, 2.0], 2).unwrap();
        for v in 0..n {
            let t = v as f64 / 4.0;
            assert!((x[v * 2] - t).abs() < 1e-14, "{v}: {}", x[v * 2]);
            assert!((x[v * 2 + 1] - (2.0 - 4.0 * t)).abs() < 1e-14, "{v}: {}", x[v * 2 + 1]);
        }
        assert!(s.solve(&[1.0, 0.0], 2).is_err(), "wrong size must be refused");
        assert!(
            s.solve(&[0.0; 6], 3).is_err(),
            "more columns than precomputed must be refused"
        );
        assert!(s.solve(&[f64::NAN, 0.0, 0.0, 0.0], 2).is_err(), "NaN must be refused");
        assert!(FixedValueSolve::new(n, Vec::new(), &[7], 1, "x").is_err());
    }
}
