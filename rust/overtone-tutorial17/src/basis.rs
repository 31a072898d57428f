//! A linear subspace of positions, `x = B z + q`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use overtone::error::{check_finite, InputError, OvertoneError, Result};

/// `x = B z + q` over `N = n·d` coordinate-major unknowns: either the full space (`B = I`,
/// `q = 0`, `z = x`) or a dense `N × r` basis with an offset `q` (length `N`).
#[derive(Clone, Debug)]
pub struct Subspace {
    n_dofs: usize,
    basis: Option<Mat<f64>>,
    offset: Vec<f64>,
}

impl Subspace {
    /// The full space of `n_dofs` unknowns.
    pub fn full(n_dofs: usize) -> Self {
        Self {
            n_dofs,
            basis: None,
            offset: vec![0.0; n_dofs],
        }
    }

    /// A reduced space: `basis` is `N × r` (`r ≥ 1`), `offset` has length `N`; both finite.
    pub fn reduced(basis: Mat<f64>, offset: Vec<f64>) -> Result<Self> {
        let n = basis.nrows();
        if basis.ncols() == 0 || n == 0 {
            return Err(OvertoneError::size(
                "subspace basis",
                "at least one column and row",
                format!("{} x {}", n, basis.ncols()),
            ));
        }
        if offset.len() != n {
            return Err(OvertoneError::size("subspace offset", n, offset.len()));
        }
        check_finite("subspace offset", &offset, 1)?;
        for j in 0..basis.ncols() {
            if (0..n).any(|i| !basis[(i, j)].is_finite()) {
                return Err(InputError::NonFinite {
                    what: "subspace basis".into(),
                    location: format!("column {j}"),
                }
                .into());
            }
        }
        Ok(Self {
            n_dofs: n,
            basis: Some(basis),
            offset,
        })
    }

    /// `N`.
    pub fn n_dofs(&self) -> usize {
        self.n_dofs
    }
    /// `r` (equal to `N` for the full space).
    pub fn dim(&self) -> usize {
        self.basis.as_ref().map_or(self.n_dofs, |b| b.ncols())
    }
    /// The basis (`None` for the full space).
    pub fn basis(&self) -> Option<MatRef<'_, f64>> {
        self.basis.as_ref().map(|b| b.as_ref())
    }
    /// The offset `q`.
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }

    /// `x = B z + q`.
    pub fn lift(&self, z: &[f64], x: &mut [f64]) {
        match &self.basis {
            None => x.copy_from_slice(z),
            Some(b) => {
                x.copy_from_slice(&self.offset);
                matmul(
                    MatMutCol::of(x),
                    Accum::Add,
                    b.as_ref(),
                    MatRef::from_column_major_slice(z, z.len(), 1),
                    1.0,
                    Par::Seq,
                );
            }
        }
    }

    /// `out = Bᵀ v` (a copy for the full space).
    pub fn restrict(&self, v: &[f64], out: &mut [f64]) {
        match &self.basis {
            None => out.copy_from_slice(v),
            Some(b) => matmul(
                MatMutCol::of(out),
                Accum::Replace,
                b.transpose(),
                MatRef::from_column_major_slice(v, v.len(), 1),
                1.0,
                Par::Seq,
            ),
        }
    }
}

/// A column vector view of a slice.
struct MatMutCol;
impl MatMutCol {
    fn of(x: &mut [f64]) -> faer::MatMut<'_, f64> {
        let n = x.len();
        faer::MatMut::from_column_major_slice_mut(x, n, 1)
    }
}
