//! The rig-orthogonality constraint written on skinning weight fields.

use faer::Mat;

/// Rows `C` (`c(d+1) × n`, row-major) such that `C w = 0` makes every displacement of the
/// skinning subspace of the weight field `w` rig-orthogonal.
///
/// A weight field `w` spans the displacements `u_i = (w ⊙ X̂_j)·t` for each coordinate `i` and
/// homogeneous rest coordinate `X̂_j` (`X̂ = [X, 1]`, `j = 0..=d`): that is
/// `B = lbs_jacobian(X, w) = I_d ⊗ [w ⊙ X̂_0, …, w ⊙ X̂_d]`. With the scalar constraint
/// `Â = Ĵᵀ diag(m ⊙ d)` (`c × n`, from the rig; `Jᵀ M D = I_d ⊗ Â`), `Jᵀ M D B = 0` holds iff
/// `Â diag(X̂_j) w = 0` for every `j`, i.e. the rows `Â_k ⊙ X̂_j` for every rig row `k` and
/// every `j` (row `j·c + k`). The coordinate index drops out because `J`, `M`, `D` and `B` act
/// per coordinate. Rows are returned in full; redundant ones (e.g. `x·y` and `y·x` moments of a
/// one-bone rig) are removed later by a rank-revealing factorization, which keeps every
/// independent functional.
///
/// * `a_hat`: `Â`, `c × n`.
/// * `rest`: rest positions, `n × d` row-major.
pub fn weight_space_constraint(a_hat: &Mat<f64>, rest: &[f64], dim: usize) -> Vec<f64> {
    let (c, n) = (a_hat.nrows(), a_hat.ncols());
    let mut rows = vec![0.0; c * (dim + 1) * n];
    for j in 0..=dim {
        for k in 0..c {
            let row = &mut rows[(j * c + k) * n..(j * c + k + 1) * n];
            for v in 0..n {
                let xh = if j < dim { rest[v * dim + j] } else { 1.0 };
                row[v] = a_hat[(k, v)] * xh;
            }
        }
    }
    rows
}
