//! Largest eigenpairs of a symmetric positive semi-definite operator by thick-restart (block)
//! Lanczos with full reorthogonalisation, bounded and cancellable.
//!
//! The Krylov basis `V` (`n × m`, orthonormal) and its image `AV` are kept explicitly; the
//! operator is applied to up to `block` basis vectors at once, each image adding one direction.
//! The Rayleigh–Ritz step diagonalises `T = Vᵀ(AV)` (`m × m`), and a restart keeps the `p` best
//! Ritz vectors `Y = V S` (with `AY = (AV) S`, no extra operator applications) plus the residual
//! directions of the first unconverged pairs, up to one block (with one vector a block, the
//! first's residual is in exact arithmetic the next Lanczos vector). Every new vector is
//! orthogonalised twice against the basis (classical Gram–Schmidt, twice is enough), so no loss
//! of orthogonality can stall the iteration. A breakdown (the new vector lies in the span) is
//! replaced by the operator applied to a fixed pseudo-random vector; if that lies in the span
//! too, the direction is dropped, and when no direction of a block can be added the basis spans
//! an invariant subspace and its Ritz pairs are exact. The number of operator applications is
//! capped, the host's progress is told after every block and its cancellation is checked
//! before it.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

use crate::error::{InputError, NumericalError, OvertoneError, Result};
use crate::math::kernels::norm_sequential as norm;
use crate::progress::{check_cancelled, Progress};

/// Limits and accuracy of one [`largest_eigenpairs`] run.
#[derive(Clone, Copy, Debug)]
pub struct LanczosParams {
    /// Krylov basis size `m` (`k < m ≤ n`).
    pub basis: usize,
    /// Cap on operator applications (the run stops unconverged there).
    pub max_applies: usize,
    /// A pair is converged when `‖A y − θ y‖ ≤ tolerance · θ_1` (`θ_1` the largest Ritz value).
    pub tolerance: f64,
    /// Vectors the operator is applied to at once (≥ 1; 1 is single-vector Lanczos).
    pub block: usize,
}

/// What [`largest_eigenpairs`] found.
#[derive(Clone, Debug)]
pub struct LanczosResult {
    /// The `k` largest Ritz values, descending.
    pub values: Vec<f64>,
    /// Their Ritz vectors, `n × k`, orthonormal columns.
    pub vectors: Mat<f64>,
    /// `‖A y_i − θ_i y_i‖ / θ_1` of each pair.
    pub relative_residuals: Vec<f64>,
    /// Every pair met the tolerance.
    pub converged: bool,
    /// Operator applications used.
    pub applies: usize,
}

/// Removes from `w` (`n`) its components along the first `cols` columns of `v` (`n × m`,
/// orthonormal): classical Gram–Schmidt twice, `w ← w − V(Vᵀw)`, two matrix–vector products a
/// pass. Sequential: with faer's parallel products a tube turned in the world got other modes
/// than the upright tube (its near-degenerate modes turn a change of round-off into another
/// basis; the test of the turned body saw 19% of its motion).
fn orthogonalise(v: &Mat<f64>, cols: usize, w: &mut [f64]) {
    if cols == 0 {
        return;
    }
    let n = w.len();
    let vc = v.as_ref().subcols(0, cols);
    let mut r = Mat::<f64>::zeros(cols, 1);
    let mut wm = MatMut::from_column_major_slice_mut(w, n, 1);
    for _ in 0..2 {
        matmul(r.as_mut(), Accum::Replace, vc.transpose(), wm.as_ref(), 1.0, Par::Seq);
        matmul(wm.as_mut(), Accum::Add, vc, r.as_ref(), -1.0, Par::Seq);
    }
}

/// A fixed pseudo-random vector (SplitMix64 of `seed` and the index), entries in `[-1, 1)`.
fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| pseudo_random_entry(seed, i)).collect()
}

/// Entry `i` of [`pseudo_random`]`(_, seed)`.
fn pseudo_random_entry(seed: u64, i: usize) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

type Run<'a> = dyn FnMut(MatRef<'_, f64>, MatMut<'_, f64>, &mut usize) -> Result<()> + 'a;

/// A new unit direction orthogonal to the first `cols` columns of `v`, from `w` or, if `w` lies
/// in their span, from the operator applied to pseudo-random vectors. `None`: the span is
/// invariant.
fn fresh(
    run: &mut Run<'_>,
    seed: &mut u64,
    v: &Mat<f64>,
    cols: usize,
    w: &mut [f64],
    applies: &mut usize,
) -> Result<Option<()>> {
    let n = w.len();
    let before = norm(w);
    orthogonalise(v, cols, w);
    let after = norm(w);
    if after > 1e-10 * before && after > 0.0 {
        w.iter_mut().for_each(|x| *x /= after);
        return Ok(Some(()));
    }
    for _ in 0..2 {
        let r = pseudo_random(n, *seed);
        *seed += 1;
        run(
            MatRef::from_column_major_slice(&r, n, 1),
            MatMut::from_column_major_slice_mut(w, n, 1),
            applies,
        )?;
        let before = norm(w);
        orthogonalise(v, cols, w);
        let after = norm(w);
        if after > 1e-10 * before && after > 0.0 {
            w.iter_mut().for_each(|x| *x /= after);
            return Ok(Some(()));
        }
    }
    Ok(None)
}

/// Appends to the basis `v` (`nv` columns so far, at most `m`) a unit direction made from each
/// column of `images` in turn (see [`fresh`]), while there is room. Returns the new column
/// count, or `None` when not one direction could be added (the span is invariant).
#[allow(clippy::too_many_arguments)]
fn append_directions(
    run: &mut Run<'_>,
    seed: &mut u64,
    v: &mut Mat<f64>,
    mut nv: usize,
    m: usize,
    images: MatRef<'_, f64>,
    w: &mut [f64],
    applies: &mut usize,
) -> Result<Option<usize>> {
    let before = nv;
    for c in 0..images.ncols() {
        if nv >= m {
            break;
        }
        w.iter_mut().enumerate().for_each(|(i, x)| *x = images[(i, c)]);
        if fresh(run, seed, v, nv, w, applies)?.is_some() {
            v.col_as_slice_mut(nv).copy_from_slice(w);
            nv += 1;
        }
    }
    Ok((nv > before).then_some(nv))
}

/// The `k` largest eigenpairs of the symmetric positive semi-definite operator `apply`
/// (`apply(X, Y)` writes `Y = A X` for a block of `n`-vectors, at most `params.block` columns),
/// from the start vector `v0`.
///
/// Block Krylov: the operator is applied to up to `params.block` basis vectors at once and each
/// image adds one direction, so an operator whose cost is dominated by reading its own data (a
/// sparse factor, dense projection factors) reads it once per block instead of once per
/// vector. The start block is `v0` and `block − 1` fixed pseudo-random vectors, first mapped
/// through the operator, so every basis vector lies in the operator's range (a constrained
/// operator's output satisfies its constraint; so do the Ritz vectors). `progress` receives
/// `applies / max_applies` (vectors applied over the cap, a bound: the run usually stops
/// earlier) and is checked for cancellation before every block. Returns the best pairs found
/// with `converged = false` when the cap is hit; errors only on a cancellation, a non-finite
/// operator output or a failed small eigensolve.
pub(crate) fn largest_eigenpairs(
    apply: &mut dyn FnMut(MatRef<'_, f64>, MatMut<'_, f64>),
    n: usize,
    k: usize,
    v0: &[f64],
    params: LanczosParams,
    progress: &dyn Progress,
    stage: &str,
) -> Result<LanczosResult> {
    let m = params.basis.min(n);
    if k == 0 || k >= m || v0.len() != n {
        return Err(OvertoneError::setting(
            "Krylov basis",
            m,
            format!("needs more than the {k} wanted eigenpairs, at most {n}, and a start vector of {n} entries"),
        ));
    }
    let b = params.block.clamp(1, (m - k).max(1));
    let mut v = Mat::<f64>::zeros(n, m);
    let mut av = Mat::<f64>::zeros(n, m);
    let mut w = vec![0.0; n];
    let mut applies = 0usize;
    let mut seed = 1u64;
    // Verification of a converged set (see below): the values it must reproduce.
    let mut checking: Option<Vec<f64>> = None;
    let mut verifications = 0usize;
    let mut run = |x: MatRef<'_, f64>, mut y: MatMut<'_, f64>, applies: &mut usize| -> Result<()> {
        check_cancelled(progress)?;
        apply(x, y.as_mut());
        *applies += x.ncols();
        for c in 0..y.ncols() {
            if let Some(i) = (0..n).find(|&i| !y[(i, c)].is_finite()) {
                return Err(InputError::NonFinite {
                    what: format!("{stage} operator output"),
                    location: format!("entry {i}"),
                }
                .into());
            }
        }
        progress.report(*applies as f64 / params.max_applies.max(1) as f64, stage);
        Ok(())
    };
    // The start block: v0 and pseudo-random vectors, mapped into the operator's range.
    let mut start = Mat::<f64>::zeros(n, b);
    for c in 0..b {
        let col: Vec<f64> = if c == 0 {
            v0.to_vec()
        } else {
            pseudo_random(n, 1000 + c as u64)
        };
        start.col_as_slice_mut(c).copy_from_slice(&col);
    }
    let mut images = Mat::<f64>::zeros(n, b);
    run(start.as_ref(), images.as_mut(), &mut applies)?;
    let Some(mut nv) = append_directions(&mut run, &mut seed, &mut v, 0, m, images.as_ref(), &mut w, &mut applies)?
    else {
        return Err(NumericalError::NotConverged {
            solve: stage.to_string(),
            reason: "the operator maps every start vector to zero".into(),
            advice: None,
        }
        .into());
    };
    let mut na = 0usize;
    loop {
        let mut exhausted = false;
        while na < nv {
            let j = (nv - na).min(b);
            {
                let (x, y) = (v.as_ref().subcols(na, j), av.as_mut().subcols_mut(na, j));
                run(x, y, &mut applies)?;
            }
            na += j;
            if nv < m {
                let images = av.as_ref().subcols(na - j, j).to_owned();
                match append_directions(
                    &mut run,
                    &mut seed,
                    &mut v,
                    nv,
                    m,
                    images.as_ref(),
                    &mut w,
                    &mut applies,
                )? {
                    Some(grown) => nv = grown,
                    None => exhausted = na == nv,
                }
            }
            if applies >= params.max_applies {
                break;
            }
        }
        // Rayleigh–Ritz on the `na` columns whose images are known.
        let vr = v.as_ref().subcols(0, na);
        let avr = av.as_ref().subcols(0, na);
        let t = vr.transpose() * avr;
        let ts = Mat::from_fn(na, na, |i, j| 0.5 * (t[(i, j)] + t[(j, i)]));
        let eig = ts
            .self_adjoint_eigen(Side::Lower)
            .map_err(|e| NumericalError::NotConverged {
                solve: stage.to_string(),
                reason: format!("Rayleigh-Ritz eigensolve failed: {e:?}"),
                advice: None,
            })?;
        // Descending order of Ritz values.
        let mut order: Vec<usize> = (0..na).collect();
        order.sort_by(|&a, &b| eig.S()[b].total_cmp(&eig.S()[a]));
        let keep = if exhausted || na < m {
            na
        } else {
            (k + (m - k) / 2).min(na - 1).max(k)
        };
        let s = Mat::from_fn(na, keep, |i, c| eig.U()[(i, order[c])]);
        let theta: Vec<f64> = order[..keep].iter().map(|&c| eig.S()[c]).collect();
        let y = vr * &s;
        let ay = avr * &s;
        let scale = theta[0].abs().max(f64::MIN_POSITIVE);
        let residuals: Vec<f64> = (0..keep.min(k.max(keep)))
            .map(|c| {
                let (yc, ayc) = (y.col_as_slice(c), ay.col_as_slice(c));
                ayc.iter()
                    .zip(yc)
                    .map(|(a, b)| (a - theta[c] * b).powi(2))
                    .sum::<f64>()
                    .sqrt()
                    / scale
            })
            .collect();
        let wanted = k.min(keep);
        let converged = wanted == k && residuals[..k].iter().all(|&r| r <= params.tolerance);
        let out_of_budget = applies >= params.max_applies;
        // A Krylov space of blocks of `b` vectors holds at most `b` vectors of each eigenspace:
        // an eigenvalue of higher multiplicity (separate, identical pieces) could be missed. So
        // a converged set is verified by one more cycle that adds a block of pseudo-random
        // directions (deflated by the converged vectors); it is accepted when that cycle
        // reproduces the same values.
        let verified = match &checking {
            Some(prev) => converged && prev.iter().zip(&theta).all(|(a, b)| (a - b).abs() <= 1e-9 * scale),
            None => false,
        };
        let done = verified || (converged && verifications >= k + 1);
        if done || out_of_budget || exhausted || keep < k {
            let k_out = wanted;
            let ok =
                k_out == k && (converged || (exhausted && residuals[..k_out].iter().all(|&r| r <= params.tolerance)));
            return Ok(LanczosResult {
                values: theta[..k_out].to_vec(),
                vectors: y.subcols(0, k_out).to_owned(),
                relative_residuals: residuals[..k_out].to_vec(),
                converged: ok,
                applies,
            });
        }
        if converged {
            checking = Some(theta[..k].to_vec());
            verifications += 1;
            for c in 0..k {
                v.col_as_slice_mut(c).copy_from_slice(y.col_as_slice(c));
                av.col_as_slice_mut(c).copy_from_slice(ay.col_as_slice(c));
            }
            na = k;
            // A block of pseudo-random directions, deflated by the converged vectors.
            let r = (k + b).min(m) - k;
            let random = Mat::from_fn(n, r, |i, c| pseudo_random_entry(seed + c as u64, i));
            seed += r as u64;
            let mut images = Mat::<f64>::zeros(n, r);
            run(random.as_ref(), images.as_mut(), &mut applies)?;
            match append_directions(&mut run, &mut seed, &mut v, k, m, images.as_ref(), &mut w, &mut applies)? {
                Some(grown) => {
                    nv = grown;
                    continue;
                }
                None => {
                    return Ok(LanczosResult {
                        values: theta[..k].to_vec(),
                        vectors: y.subcols(0, k).to_owned(),
                        relative_residuals: residuals[..k].to_vec(),
                        converged: true,
                        applies,
                    });
                }
            }
        }
        checking = None;
        // Thick restart: the `keep` Ritz pairs, then the residual directions of the first
        // unconverged ones (one block; the last wanted pair when all have converged).
        let mut unconverged: Vec<usize> = (0..k).filter(|&c| residuals[c] > params.tolerance).collect();
        if unconverged.is_empty() {
            unconverged.push(k - 1);
        }
        unconverged.truncate(b.min(m - keep));
        for c in 0..keep {
            v.col_as_slice_mut(c).copy_from_slice(y.col_as_slice(c));
            av.col_as_slice_mut(c).copy_from_slice(ay.col_as_slice(c));
        }
        let directions = Mat::from_fn(n, unconverged.len(), |i, c| {
            let p = unconverged[c];
            ay[(i, p)] - theta[p] * y[(i, p)]
        });
        na = keep;
        match append_directions(
            &mut run,
            &mut seed,
            &mut v,
            keep,
            m,
            directions.as_ref(),
            &mut w,
            &mut applies,
        )? {
            Some(grown) => nv = grown,
            None => {
                // The kept Ritz vectors span an invariant subspace: they are exact.
                return Ok(LanczosResult {
                    values: theta[..k].to_vec(),
                    vectors: y.subcols(0, k).to_owned(),
                    relative_residuals: residuals[..k].to_vec(),
                    converged: true,
                    applies,
                });
            }
        }
    }
}

/// Convenience view used by tests: a dense symmetric matrix as an operator.
#[doc(hidden)]
#[cfg(test)]
pub(crate) fn dense_operator(a: faer::MatRef<'_, f64>) -> impl FnMut(MatRef<'_, f64>, MatMut<'_, f64>) + '_ {
    move |x: MatRef<'_, f64>, mut y: MatMut<'_, f64>| {
        for c in 0..x.ncols() {
            for i in 0..x.nrows() {
                y[(i, c)] = (0..x.nrows()).map(|j| a[(i, j)] * x[(j, c)]).sum();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{AtomicProgress, NoProgress};

    /// A diagonal operator with a known spectrum (a cluster of equal values among them): the
    /// largest pairs are found to the tolerance and the vectors are orthonormal, one vector at a
    /// time and in blocks of 4 and 8 (basis 30: 12 vectors of room after a restart), and with a
    /// block larger than that room (basis 12: 3).
    #[test]
    fn finds_known_spectrum_with_multiplicity() {
        let n = 400;
        let diag: Vec<f64> = (0..n)
            .map(|i| if i < 3 { 5.0 } else { 1.0 / (1.0 + i as f64) })
            .collect();
        let a = Mat::from_fn(n, n, |i, j| if i == j { diag[i] } else { 0.0 });
        let v0: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
        for (block, basis) in [(1, 30), (4, 30), (8, 30), (8, 12)] {
            let mut op = dense_operator(a.as_ref());
            let params = LanczosParams {
                basis,
                max_applies: 2000,
                tolerance: 1e-10,
                block,
            };
            let r = largest_eigenpairs(&mut op, n, 6, &v0, params, &NoProgress, "test").unwrap();
            assert!(r.converged, "block {block}: {:?}", r.relative_residuals);
            let want = [5.0, 5.0, 5.0, 0.25, 0.2, 1.0 / 6.0];
            for (got, want) in r.values.iter().zip(want) {
                assert!((got - want).abs() < 1e-9, "block {block}: {got} vs {want}");
            }
            let g = r.vectors.transpose() * &r.vectors;
            for i in 0..6 {
                for j in 0..6 {
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!((g[(i, j)] - e).abs() < 1e-12, "block {block}");
                }
            }
        }
    }

    /// A cancelled progress stops the run with `Cancelled`; an exhausted budget returns
    /// `converged = false` instead of iterating on.
    #[test]
    fn cancel_and_budget() {
        let n = 300;
        let a = Mat::from_fn(n, n, |i, j| if i == j { 1.0 + 1e-9 * i as f64 } else { 0.0 });
        let v0 = vec![1.0; n];
        let params = LanczosParams {
            basis: 12,
            max_applies: 40,
            tolerance: 1e-14,
            block: 1,
        };
        let p = AtomicProgress::new();
        p.cancel();
        let mut op = dense_operator(a.as_ref());
        let e = largest_eigenpairs(&mut op, n, 4, &v0, params, &p, "test").unwrap_err();
        assert!(matches!(e, OvertoneError::Cancelled));
        let p = AtomicProgress::new();
        let mut op = dense_operator(a.as_ref());
        let r = largest_eigenpairs(&mut op, n, 4, &v0, params, &p, "test").unwrap();
        assert!(r.applies <= params.max_applies + 3, "{} applies", r.applies);
        assert!(p.fraction() > 0.9);
    }
}
