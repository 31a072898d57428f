//! Left-looking supernodal `LLᵀ` with every index map precomputed: a numeric refactorization
//! for Newton's method on a fixed sparsity pattern.
//!
//! faer computes the ordering (AMD) and the supernodes once. Everything a refactorization
//! would otherwise recompute from the pattern is then stored as flat index arrays: where each
//! entry of `A` lands in `L` (no permuted copy of `A` per factorization), and for each pair
//! (supernode `s`, descendant `d` updating it) the local positions of `d`'s rows inside `s`.
//! The numeric work is plain loops over contiguous columns, compiled for AVX2 + FMA when the
//! processor has them (chosen once at run time, so results are reproducible on one machine).

use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SparseColMatRef;
use faer::Side;

use overtone::error::{NumericalError, OvertoneError, Result};

/// One update `L_s ← L_s − L_d[rows] L_d[mid]ᵀ` of supernode `s` by a descendant `d`.
#[derive(Clone, Copy, Debug)]
struct Update {
    /// Descendant supernode.
    d: usize,
    /// First row of `d`'s off-diagonal pattern that falls in `s` (rows before it belong to
    /// earlier supernodes).
    start: usize,
    /// How many of those rows fall in `s`'s column range (the update's columns).
    mid: usize,
    /// Offset in `local` of the local row index in `s` of each row `start..` of `d`'s pattern.
    map: usize,
}

/// `A = Pᵀ L Lᵀ P` for a symmetric positive definite `n × n` sparse matrix with a fixed pattern.
///
/// [`new`](Self::new) analyses the pattern (AMD ordering, supernodes, all scatter maps);
/// [`refactor`](Self::refactor) computes `L` for new values (the lower triangle of `A` is read);
/// [`solve_in_place`](Self::solve_in_place) overwrites `b` with `A⁻¹ b`. Neither allocates.
/// Supernode `s` owns columns `begin[s]..begin[s+1]` of `L` and stores them densely,
/// column-major, over its rows: the `nc` diagonal-block rows, then its off-diagonal pattern.
#[derive(Debug)]
pub struct SupernodalLlt {
    n: usize,
    /// `perm[i]`: original index of permuted unknown `i`.
    perm: Vec<usize>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    begin: Vec<usize>,
    /// Off-diagonal pattern of supernode `s`: `rows[rows_ptr[s]..rows_ptr[s+1]]` (permuted).
    rows_ptr: Vec<usize>,
    rows: Vec<usize>,
    val_ptr: Vec<usize>,
    /// For each lower-triangle entry of `A` (value index, position in `l`), sorted by
    /// position; supernode `s`'s entries are `a_to_l[a_ptr[s]..a_ptr[s+1]]`.
    a_to_l: Vec<(usize, usize)>,
    a_ptr: Vec<usize>,
    upd_ptr: Vec<usize>,
    updates: Vec<Update>,
    local: Vec<u32>,
    l: Vec<f64>,
    /// Gathered pattern values in the solve (length: the longest supernode pattern).
    work: Vec<f64>,
    x: Vec<f64>,
    factored: bool,
    fma: bool,
    what: String,
}

impl SupernodalLlt {
    /// Symbolic analysis of `a`'s pattern (square; both triangles or the lower one stored; the
    /// lower one is read) followed by a numeric factorization. `what` names the matrix in errors.
    pub fn new(a: SparseColMatRef<'_, usize, f64>, what: &str) -> Result<Self> {
        let n = a.nrows();
        if a.ncols() != n {
            return Err(OvertoneError::size("columns of a symmetric matrix", n, a.ncols()));
        }
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        };
        let symbolic =
            factorize_symbolic_cholesky(a.symbolic(), Side::Lower, SymmetricOrdering::Amd, params).map_err(|e| {
                NumericalError::Factorization {
                    matrix: what.into(),
                    reason: format!("symbolic analysis failed: {e:?}"),
                }
            })?;
        let (perm, inv): (Vec<usize>, Vec<usize>) = match symbolic.perm() {
            Some(p) => (p.arrays().0.to_vec(), p.arrays().1.to_vec()),
            None => ((0..n).collect(), (0..n).collect()),
        };
        let sn = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => s,
            SymbolicCholeskyRaw::Simplicial(_) => {
                return Err(NumericalError::Factorization {
                    matrix: what.into(),
                    reason: "the symbolic analysis did not produce supernodes".into(),
                }
                .into())
            }
        };
        let ns = sn.n_supernodes();
        let mut begin = sn.supernode_begin().to_vec();
        begin.push(n);
        let (crow, cval, all_rows) = (sn.col_ptr_for_row_idx(), sn.col_ptr_for_val(), sn.row_idx());
        let mut rows_ptr = vec![0usize; ns + 1];
        let mut rows = Vec::with_capacity(all_rows.len());
        let mut val_ptr = vec![0usize; ns + 1];
        for s in 0..ns {
            let pat = &all_rows[crow[s]..crow[s] + sn.nnz_per_super()[s]];
            rows.extend_from_slice(pat);
            rows_ptr[s + 1] = rows.len();
            let nc = begin[s + 1] - begin[s];
            val_ptr[s + 1] = val_ptr[s] + nc * (nc + pat.len());
            debug_assert_eq!(val_ptr[s + 1] - val_ptr[s], cval[s + 1] - cval[s]);
        }
        let mut owner = vec![0usize; n];
        for s in 0..ns {
            owner[begin[s]..begin[s + 1]].fill(s);
        }
        // Local row of permuted row `r` in supernode `s` (r ≥ begin[s]).
        let local_row = |s: usize, r: usize| -> usize {
            let nc = begin[s + 1] - begin[s];
            if r < begin[s + 1] {
                r - begin[s]
            } else {
                let pat = &rows[rows_ptr[s]..rows_ptr[s + 1]];
                nc + pat.binary_search(&r).expect("row in the supernode's pattern")
            }
        };
        let (col_ptr, row_idx) = (a.symbolic().col_ptr().to_vec(), a.symbolic().row_idx().to_vec());
        let mut a_to_l = Vec::new();
        for c in 0..n {
            for q in col_ptr[c]..col_ptr[c + 1] {
                let r = row_idx[q];
                if r < c {
                    continue;
                }
                let (pr, pc) = (inv[r].max(inv[c]), inv[r].min(inv[c]));
                let s = owner[pc];
                let nr = begin[s + 1] - begin[s] + rows_ptr[s + 1] - rows_ptr[s];
                a_to_l.push((q, val_ptr[s] + (pc - begin[s]) * nr + local_row(s, pr)));
            }
        }
        a_to_l.sort_unstable_by_key(|&(_, p)| p);
        let mut a_ptr = vec![0usize; ns + 1];
        for s in 0..ns {
            a_ptr[s + 1] = a_ptr[s] + a_to_l[a_ptr[s]..].partition_point(|&(_, p)| p < val_ptr[s + 1]);
        }
        // Updates: descendant d touches every supernode owning a row of its pattern.
        let mut per_s: Vec<Vec<Update>> = vec![Vec::new(); ns];
        let mut local = Vec::new();
        for d in 0..ns {
            let pat = &rows[rows_ptr[d]..rows_ptr[d + 1]];
            let mut start = 0;
            while start < pat.len() {
                let s = owner[pat[start]];
                let mid = pat[start..].partition_point(|&r| r < begin[s + 1]);
                per_s[s].push(Update { d, start, mid, map: 0 });
                start += mid;
            }
        }
        let mut upd_ptr = vec![0usize; ns + 1];
        let mut updates = Vec::new();
        for s in 0..ns {
            for mut u in std::mem::take(&mut per_s[s]) {
                u.map = local.len();
                let pat = &rows[rows_ptr[u.d]..rows_ptr[u.d + 1]];
                for &r in &pat[u.start..] {
                    local.push(
                        u32::try_from(local_row(s, r)).map_err(|_| NumericalError::Factorization {
                            matrix: what.into(),
                            reason: "a supernode has more than 2^32 rows".into(),
                        })?,
                    );
                }
                updates.push(u);
            }
            upd_ptr[s + 1] = updates.len();
        }
        let max_rows = (0..ns).map(|s| rows_ptr[s + 1] - rows_ptr[s]).max().unwrap_or(0);
        let mut this = Self {
            n,
            perm,
            col_ptr,
            row_idx,
            begin,
            rows_ptr,
            rows,
            l: vec![0.0; val_ptr[ns]],
            val_ptr,
            a_to_l,
            a_ptr,
            upd_ptr,
            updates,
            local,
            work: vec![0.0; max_rows],
            x: vec![0.0; n],
            factored: false,
            fma: has_fma(),
            what: what.into(),
        };
        this.refactor(a)?;
        Ok(this)
    }

    /// Dimension `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Stored entries of `L` (dense supernode blocks, including their upper triangles).
    pub fn factor_len(&self) -> usize {
        self.l.len()
    }

    /// Numeric factorization of `a`, which must have the pattern given to [`new`](Self::new).
    /// A matrix that is not numerically positive definite (or holds NaN) is refused, and the
    /// factor is then unusable until a successful refactorization.
    pub fn refactor(&mut self, a: SparseColMatRef<'_, usize, f64>) -> Result<()> {
        let same = a.nrows() == self.n
            && a.ncols() == self.n
            && a.symbolic().col_ptr() == self.col_ptr.as_slice()
            && a.symbolic().row_idx() == self.row_idx.as_slice();
        if !same {
            return Err(NumericalError::Factorization {
                matrix: self.what.clone(),
                reason: "the matrix's sparsity pattern differs from the analysed one; build a new factorization".into(),
            }
            .into());
        }
        self.factored = false;
        let vals = a.val();
        let r = if self.fma {
            // SAFETY: the processor supports AVX2 and FMA (checked at construction).
            unsafe { self.factor_fma(vals) }
        } else {
            self.factor_kernel::<false>(vals)
        };
        r.map_err(|col| NumericalError::Factorization {
            matrix: self.what.clone(),
            reason: format!(
                "not positive definite (pivot {col} of {}); check the material (E > 0), density (> 0) and time step (> 0)",
                self.n
            ),
        })?;
        self.factored = true;
        Ok(())
    }

    #[target_feature(enable = "avx2,fma")]
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn factor_fma(&mut self, vals: &[f64]) -> std::result::Result<(), usize> {
        self.factor_kernel::<true>(vals)
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    unsafe fn factor_fma(&mut self, vals: &[f64]) -> std::result::Result<(), usize> {
        self.factor_kernel::<false>(vals)
    }

    /// The numeric factorization proper; `Err(column)` at a non-positive pivot.
    #[inline(always)]
    fn factor_kernel<const FMA: bool>(&mut self, vals: &[f64]) -> std::result::Result<(), usize> {
        let ns = self.begin.len() - 1;
        for s in 0..ns {
            let (s0, nc) = (self.begin[s], self.begin[s + 1] - self.begin[s]);
            let nr = nc + self.rows_ptr[s + 1] - self.rows_ptr[s];
            let (head, tail) = self.l.split_at_mut(self.val_ptr[s]);
            let ls = &mut tail[..nc * nr];
            // Assemble A's columns into the zeroed block while it is about to be used.
            ls.fill(0.0);
            let base = self.val_ptr[s];
            for &(q, p) in &self.a_to_l[self.a_ptr[s]..self.a_ptr[s + 1]] {
                ls[p - base] += vals[q];
            }
            for u in &self.updates[self.upd_ptr[s]..self.upd_ptr[s + 1]] {
                let d = u.d;
                let dnc = self.begin[d + 1] - self.begin[d];
                let dnr = dnc + self.rows_ptr[d + 1] - self.rows_ptr[d];
                let ld = &head[self.val_ptr[d]..self.val_ptr[d] + dnc * dnr];
                let r = dnr - dnc - u.start;
                let off = dnc + u.start;
                let map = &self.local[u.map..u.map + r];
                // L_s[map[i], map[j]] −= Σ_p L_d[off+i, p] L_d[off+j, p] for j < mid, i ≥ j, in
                // register blocks of 8 rows × 4 columns. A block's rows start at its first
                // column, so a few products with i < j land in the diagonal block's upper
                // triangle, which is never read.
                let blk = UpdateBlock {
                    ld,
                    dnr,
                    dnc,
                    off,
                    map,
                    nr,
                };
                let mut j0 = 0;
                while j0 < u.mid {
                    match u.mid - j0 {
                        1 => blk.columns::<FMA, 1>(ls, j0, r),
                        2 => blk.columns::<FMA, 2>(ls, j0, r),
                        3 => blk.columns::<FMA, 3>(ls, j0, r),
                        _ => blk.columns::<FMA, 4>(ls, j0, r),
                    }
                    j0 += 4;
                }
            }
            // Dense left-looking Cholesky of the nr × nc panel, four columns at a time: the
            // block's columns are first updated by all earlier columns in register tiles.
            let mut j0 = 0;
            while j0 < nc {
                let w = (nc - j0).min(4);
                match w {
                    1 => panel_update::<FMA, 1>(ls, nr, j0),
                    2 => panel_update::<FMA, 2>(ls, nr, j0),
                    3 => panel_update::<FMA, 3>(ls, nr, j0),
                    _ => panel_update::<FMA, 4>(ls, nr, j0),
                }
                for j in j0..j0 + w {
                    let (done, rest) = ls.split_at_mut(j * nr);
                    let cj = &mut rest[j..nr];
                    for p in j0..j {
                        let col = &done[p * nr + j..(p + 1) * nr];
                        axpy::<FMA>(cj, col, -col[0]);
                    }
                    let dj = cj[0];
                    if !(dj > 0.0 && dj.is_finite()) {
                        return Err(s0 + j);
                    }
                    let dj = dj.sqrt();
                    cj[0] = dj;
                    let inv = 1.0 / dj;
                    cj[1..].iter_mut().for_each(|v| *v *= inv);
                }
                j0 += w;
            }
        }
        Ok(())
    }

    /// Overwrites `b` (length `n`) with `A⁻¹ b`. Does not allocate.
    pub fn solve_in_place(&mut self, b: &mut [f64]) -> Result<()> {
        if b.len() != self.n {
            return Err(OvertoneError::size("right-hand side", self.n, b.len()));
        }
        if !self.factored {
            return Err(NumericalError::Factorization {
                matrix: self.what.clone(),
                reason: "the last factorization failed; there is no factor to solve with".into(),
            }
            .into());
        }
        for (i, &p) in self.perm.iter().enumerate() {
            self.x[i] = b[p];
        }
        if self.fma {
            // SAFETY: the processor supports AVX2 and FMA (checked at construction).
            unsafe { self.solve_fma() }
        } else {
            self.solve_kernel::<false>()
        }
        for (i, &p) in self.perm.iter().enumerate() {
            b[p] = self.x[i];
        }
        Ok(())
    }

    #[target_feature(enable = "avx2,fma")]
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn solve_fma(&mut self) {
        self.solve_kernel::<true>()
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    unsafe fn solve_fma(&mut self) {
        self.solve_kernel::<false>()
    }

    /// `x ← L⁻ᵀ L⁻¹ x` in the permuted ordering. Per supernode column, the rows below the
    /// diagonal block go through `t`, the pattern's entries of `x` gathered contiguously.
    #[inline(always)]
    fn solve_kernel<const FMA: bool>(&mut self) {
        let ns = self.begin.len() - 1;
        let x = &mut self.x;
        for s in 0..ns {
            let (s0, nc) = (self.begin[s], self.begin[s + 1] - self.begin[s]);
            let pat = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
            let nr = nc + pat.len();
            let ls = &self.l[self.val_ptr[s]..self.val_ptr[s] + nc * nr];
            let t = &mut self.work[..pat.len()];
            t.fill(0.0);
            for j in 0..nc {
                let col = &ls[j * nr..(j + 1) * nr];
                let xj = x[s0 + j] / col[j];
                x[s0 + j] = xj;
                for i in j + 1..nc {
                    x[s0 + i] -= col[i] * xj;
                }
                axpy::<FMA>(t, &col[nc..], xj);
            }
            for (k, &r) in pat.iter().enumerate() {
                x[r] -= t[k];
            }
        }
        for s in (0..ns).rev() {
            let (s0, nc) = (self.begin[s], self.begin[s + 1] - self.begin[s]);
            let pat = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
            let nr = nc + pat.len();
            let ls = &self.l[self.val_ptr[s]..self.val_ptr[s] + nc * nr];
            let t = &mut self.work[..pat.len()];
            for (k, &r) in pat.iter().enumerate() {
                t[k] = x[r];
            }
            for j in (0..nc).rev() {
                let col = &ls[j * nr..(j + 1) * nr];
                let mut v = x[s0 + j] - dot::<FMA>(&col[nc..], t);
                for i in j + 1..nc {
                    v -= col[i] * x[s0 + i];
                }
                x[s0 + j] = v / col[j];
            }
        }
    }
}

fn has_fma() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// The operands of one descendant update (see [`SupernodalLlt::factor_kernel`]).
struct UpdateBlock<'a> {
    /// Descendant's dense block (`dnr × dnc`, column-major).
    ld: &'a [f64],
    dnr: usize,
    dnc: usize,
    /// Row of `ld` holding the first row that updates the target.
    off: usize,
    /// Local row in the target of each row `off..` of `ld`.
    map: &'a [u32],
    /// Rows of the target supernode (its leading dimension).
    nr: usize,
}

impl UpdateBlock<'_> {
    /// Columns `j0..j0+NR` of the update, rows `j0..r`.
    #[inline(always)]
    fn columns<const FMA: bool, const NR: usize>(&self, ls: &mut [f64], j0: usize, r: usize) {
        let mut i0 = j0;
        while i0 + 8 <= r {
            let acc = products::<FMA, 8, NR>(self.ld, self.dnr, self.dnc, self.off + i0, self.off + j0);
            self.scatter(ls, &acc, i0, j0);
            i0 += 8;
        }
        while i0 < r {
            let m = r - i0;
            let acc = products_tail::<FMA, NR>(self.ld, self.dnr, self.dnc, self.off + i0, self.off + j0, m);
            let rows = &self.map[i0..i0 + m];
            for jj in 0..NR {
                let cj = self.map[j0 + jj] as usize * self.nr;
                for ii in 0..m {
                    ls[cj + rows[ii] as usize] -= acc[jj][ii];
                }
            }
            i0 += m;
        }
    }

    #[inline(always)]
    fn scatter<const MR: usize, const NR: usize>(&self, ls: &mut [f64], acc: &[[f64; MR]; NR], i0: usize, j0: usize) {
        let rows: &[u32; MR] = self.map[i0..i0 + MR].try_into().expect("tile rows");
        // Rows are increasing, so equal spans mean consecutive target rows (the common case).
        if rows[MR - 1] - rows[0] == (MR - 1) as u32 {
            let r0 = rows[0] as usize;
            for jj in 0..NR {
                let cj = self.map[j0 + jj] as usize * self.nr + r0;
                let dst: &mut [f64; MR] = (&mut ls[cj..cj + MR]).try_into().expect("tile rows");
                for ii in 0..MR {
                    dst[ii] -= acc[jj][ii];
                }
            }
            return;
        }
        for jj in 0..NR {
            let cj = self.map[j0 + jj] as usize * self.nr;
            for ii in 0..MR {
                ls[cj + rows[ii] as usize] -= acc[jj][ii];
            }
        }
    }
}

/// Columns `j0..j0+NR` of an `nr`-row panel minus the products of their rows `j0..` with
/// the panel's columns `0..j0` (rows above the diagonal are written but never read).
#[inline(always)]
fn panel_update<const FMA: bool, const NR: usize>(ls: &mut [f64], nr: usize, j0: usize) {
    if j0 == 0 {
        return;
    }
    let (done, rest) = ls.split_at_mut(j0 * nr);
    let mut i0 = j0;
    while i0 < nr {
        if i0 + 8 <= nr {
            let acc = products::<FMA, 8, NR>(done, nr, j0, i0, j0);
            sub_tile(rest, nr, &acc, i0);
            i0 += 8;
        } else {
            let m = nr - i0;
            let acc = products_tail::<FMA, NR>(done, nr, j0, i0, j0, m);
            for jj in 0..NR {
                let c = &mut rest[jj * nr + i0..jj * nr + i0 + m];
                for ii in 0..m {
                    c[ii] -= acc[jj][ii];
                }
            }
            i0 += m;
        }
    }
}

#[inline(always)]
fn sub_tile<const MR: usize, const NR: usize>(rest: &mut [f64], nr: usize, acc: &[[f64; MR]; NR], i0: usize) {
    for jj in 0..NR {
        let c = &mut rest[jj * nr + i0..jj * nr + i0 + MR];
        for ii in 0..MR {
            c[ii] -= acc[jj][ii];
        }
    }
}

/// [`products`] for a tile of `m < 8` rows (entries `m..8` of each column are zero).
#[inline(always)]
fn products_tail<const FMA: bool, const NR: usize>(
    src: &[f64],
    lds: usize,
    k: usize,
    ia: usize,
    jb: usize,
    m: usize,
) -> [[f64; 8]; NR] {
    if k == 0 {
        return [[0.0; 8]; NR];
    }
    assert!(
        m <= 8 && (k - 1) * lds + (ia + m).max(jb + NR) <= src.len(),
        "tile inside the block"
    );
    #[cfg(target_arch = "x86_64")]
    if FMA {
        // SAFETY: FMA is only set when the processor has AVX2 and FMA; the bounds are asserted
        // and the masked load reads only the first `m` rows.
        return unsafe { avx::products_masked::<NR>(src.as_ptr(), lds, k, ia, jb, m) };
    }
    let mut acc = [[0.0f64; 8]; NR];
    for p in 0..k {
        let base = p * lds;
        for jj in 0..NR {
            let b = src[base + jb + jj];
            for ii in 0..m {
                let a = src[base + ia + ii];
                acc[jj][ii] = if FMA {
                    a.mul_add(b, acc[jj][ii])
                } else {
                    acc[jj][ii] + a * b
                };
            }
        }
    }
    acc
}

/// `acc[jj][ii] = Σ_{p<k} src[p·lds + ia + ii] · src[p·lds + jb + jj]`: an `MR × NR` tile of a
/// product `A Bᵀ` whose factors are row blocks of one column-major matrix.
#[inline(always)]
fn products<const FMA: bool, const MR: usize, const NR: usize>(
    src: &[f64],
    lds: usize,
    k: usize,
    ia: usize,
    jb: usize,
) -> [[f64; MR]; NR] {
    if k == 0 {
        return [[0.0; MR]; NR];
    }
    assert!(
        (k - 1) * lds + (ia + MR).max(jb + NR) <= src.len(),
        "tile inside the block"
    );
    #[cfg(target_arch = "x86_64")]
    if FMA && MR == 8 {
        // SAFETY: FMA is only set when the processor has AVX2 and FMA; the bounds are asserted.
        return unsafe { avx::products_8::<MR, NR>(src.as_ptr(), lds, k, ia, jb) };
    }
    let mut acc = [[0.0f64; MR]; NR];
    for p in 0..k {
        let base = p * lds;
        for jj in 0..NR {
            let b = src[base + jb + jj];
            for ii in 0..MR {
                let a = src[base + ia + ii];
                acc[jj][ii] = if FMA {
                    a.mul_add(b, acc[jj][ii])
                } else {
                    acc[jj][ii] + a * b
                };
            }
        }
    }
    acc
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    /// [`super::products`] for 8-row tiles with AVX2 + FMA (`MR` must be 8).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) unsafe fn products_8<const MR: usize, const NR: usize>(
        src: *const f64,
        lds: usize,
        k: usize,
        ia: usize,
        jb: usize,
    ) -> [[f64; MR]; NR] {
        let mut lo = [_mm256_setzero_pd(); NR];
        let mut hi = [_mm256_setzero_pd(); NR];
        for p in 0..k {
            let col = src.add(p * lds);
            let a0 = _mm256_loadu_pd(col.add(ia));
            let a1 = _mm256_loadu_pd(col.add(ia + 4));
            for jj in 0..NR {
                let b = _mm256_broadcast_sd(&*col.add(jb + jj));
                lo[jj] = _mm256_fmadd_pd(a0, b, lo[jj]);
                hi[jj] = _mm256_fmadd_pd(a1, b, hi[jj]);
            }
        }
        let mut acc = [[0.0f64; MR]; NR];
        for jj in 0..NR {
            _mm256_storeu_pd(acc[jj].as_mut_ptr(), lo[jj]);
            _mm256_storeu_pd(acc[jj].as_mut_ptr().add(4), hi[jj]);
        }
        acc
    }

    /// [`super::products_tail`] with AVX2 + FMA: rows `m..8` are masked out of every load.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) unsafe fn products_masked<const NR: usize>(
        src: *const f64,
        lds: usize,
        k: usize,
        ia: usize,
        jb: usize,
        m: usize,
    ) -> [[f64; 8]; NR] {
        let lane = |i: usize| if i < m { -1i64 } else { 0 };
        let mask_lo = _mm256_set_epi64x(lane(3), lane(2), lane(1), lane(0));
        let mut lo = [_mm256_setzero_pd(); NR];
        let mut out = [[0.0f64; 8]; NR];
        if m > 4 {
            let mask_hi = _mm256_set_epi64x(lane(7), lane(6), lane(5), lane(4));
            let mut hi = [_mm256_setzero_pd(); NR];
            for p in 0..k {
                let col = src.add(p * lds);
                let a0 = _mm256_maskload_pd(col.add(ia), mask_lo);
                let a1 = _mm256_maskload_pd(col.add(ia + 4), mask_hi);
                for jj in 0..NR {
                    let b = _mm256_broadcast_sd(&*col.add(jb + jj));
                    lo[jj] = _mm256_fmadd_pd(a0, b, lo[jj]);
                    hi[jj] = _mm256_fmadd_pd(a1, b, hi[jj]);
                }
            }
            for jj in 0..NR {
                _mm256_storeu_pd(out[jj].as_mut_ptr().add(4), hi[jj]);
            }
        } else {
            for p in 0..k {
                let col = src.add(p * lds);
                let a = _mm256_maskload_pd(col.add(ia), mask_lo);
                for jj in 0..NR {
                    let b = _mm256_broadcast_sd(&*col.add(jb + jj));
                    lo[jj] = _mm256_fmadd_pd(a, b, lo[jj]);
                }
            }
        }
        for jj in 0..NR {
            _mm256_storeu_pd(out[jj].as_mut_ptr(), lo[jj]);
        }
        out
    }
}

/// `y += a·x` (fused multiply-add when `FMA`).
#[inline(always)]
fn axpy<const FMA: bool>(y: &mut [f64], x: &[f64], a: f64) {
    let n = y.len();
    let x = &x[..n];
    for i in 0..n {
        y[i] = if FMA { x[i].mul_add(a, y[i]) } else { y[i] + a * x[i] };
    }
}

/// `xᵀy` with four partial sums (a fixed summation order).
#[inline(always)]
fn dot<const FMA: bool>(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len();
    let y = &y[..n];
    let mut acc = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        for k in 0..4 {
            let (a, b) = (x[4 * c + k], y[4 * c + k]);
            acc[k] = if FMA { a.mul_add(b, acc[k]) } else { acc[k] + a * b };
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in 4 * chunks..n {
        s += x[i] * y[i];
    }
    s
}
