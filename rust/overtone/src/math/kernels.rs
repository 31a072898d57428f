//! Small dense kernels for the per-step hot loops.

/// `Σ_i a_i b_i` summed in index order (one running sum). Not interchangeable with [`dot`], whose
/// four partial sums round differently: the Lanczos iteration's results depend on this order.
pub(crate) fn dot_sequential(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `‖a‖₂` through [`dot_sequential`].
pub(crate) fn norm_sequential(a: &[f64]) -> f64 {
    dot_sequential(a, a).sqrt()
}

/// `Σ_k a_k b_k` over the common length, with four independent partial sums (a fixed order, so
/// deterministic; unlike one running sum it lets the CPU overlap the additions and vectorise).
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        let (x, y) = (&a[4 * c..4 * c + 4], &b[4 * c..4 * c + 4]);
        s[0] += x[0] * y[0];
        s[1] += x[1] * y[1];
        s[2] += x[2] * y[2];
        s[3] += x[3] * y[3];
    }
    let mut tail = 0.0;
    for k in 4 * chunks..n {
        tail += a[k] * b[k];
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

/// `[a·b₀, a·b₁, a·b₂]`: three [`dot`] products sharing one read of `a` (one row of a
/// `m × n` matrix against the three columns of an `n × 3` block stored as three slices), see
/// [`dots`]: `dot3(a, b₀, b₁, b₂)[i] == dot(a, bᵢ)` bit for bit.
#[inline]
pub(crate) fn dot3(a: &[f64], b0: &[f64], b1: &[f64], b2: &[f64]) -> [f64; 3] {
    dots(a, [b0, b1, b2], None)
}

/// `[a·b₀, a·b₁]`: the 2D counterpart of [`dot3`], bit-identical to two [`dot`]s.
#[inline]
pub(crate) fn dot2(a: &[f64], b0: &[f64], b1: &[f64]) -> [f64; 2] {
    dots(a, [b0, b1], None)
}

/// `[a·b₀, …, a·b_{N−1}]`: `N` [`dot`] products sharing one read of `a`, over every chunk of
/// four and then the tail (`chunks = None`), or over the listed chunks only (`Some`: ascending
/// chunk indices `c`, entries `4c..4c + 4`, no tail). Each output is summed in exactly [`dot`]'s
/// order (four partial sums over chunks of four, then the tail), so every output equals
/// `dot(a, bᵢ)` bit for bit; with listed chunks it does so when the length is a multiple of four
/// and `a` is zero outside them (the skipped products are zeros added to the same partial sums;
/// only the sign of an exactly zero result can differ). Does not allocate.
///
/// On x86-64 processors with AVX the loop runs in 256-bit registers (chosen at run time): the
/// four partial sums of each output are one register's four lanes, added with the same separate
/// multiplications and additions (no fused multiply-add), so the result is the same bit for bit
/// on every processor.
#[inline]
pub(crate) fn dots<const N: usize>(a: &[f64], b: [&[f64]; N], chunks: Option<&[u32]>) -> [f64; N] {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the processor supports AVX (checked just above).
        return unsafe { dots_avx(a, b, chunks) };
    }
    dots_portable(a, b, chunks)
}

/// The common length of `a` and every `bᵢ`.
#[inline(always)]
fn common_len<const N: usize>(a: &[f64], b: &[&[f64]; N]) -> usize {
    b.iter().fold(a.len(), |n, bi| n.min(bi.len()))
}

/// `(s₀ + s₁) + (s₂ + s₃) + tail`: [`dot`]'s final sum of its four partial sums.
#[inline(always)]
fn finish<const N: usize>(s: &[[f64; 4]; N], tail: &[f64; N]) -> [f64; N] {
    std::array::from_fn(|i| (s[i][0] + s[i][1]) + (s[i][2] + s[i][3]) + tail[i])
}

/// [`dots`] with AVX.
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn dots_avx<const N: usize>(a: &[f64], b: [&[f64]; N], chunks: Option<&[u32]>) -> [f64; N] {
    use std::arch::x86_64::{
        __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    /// Adds the chunk at `at` (`at + 4 ≤` every slice's length) to the partial sums: lane `k`
    /// of `sᵢ` is [`dot`]'s partial sum `k`, a separate multiply, then add.
    #[target_feature(enable = "avx")]
    #[inline]
    unsafe fn chunk<const N: usize>(s: &mut [__m256d; N], a: &[f64], b: &[&[f64]; N], at: usize) {
        // SAFETY: at + 4 ≤ the length of every slice (the callers' condition).
        unsafe {
            let x = _mm256_loadu_pd(a.as_ptr().add(at));
            for (si, bi) in s.iter_mut().zip(b) {
                *si = _mm256_add_pd(*si, _mm256_mul_pd(x, _mm256_loadu_pd(bi.as_ptr().add(at))));
            }
        }
    }
    let n = common_len(a, &b);
    let mut s = [_mm256_setzero_pd(); N];
    let mut tail = [0.0; N];
    match chunks {
        Some(list) => {
            for &c in list {
                let at = 4 * c as usize;
                assert!(at + 4 <= n, "chunk {c} beyond the length {n}");
                // SAFETY: at + 4 ≤ n (asserted just above); AVX is enabled here.
                unsafe { chunk(&mut s, a, &b, at) };
            }
        }
        None => {
            for c in 0..n / 4 {
                // SAFETY: 4c + 4 ≤ n; AVX is enabled here.
                unsafe { chunk(&mut s, a, &b, 4 * c) };
            }
            for k in 4 * (n / 4)..n {
                for (t, bi) in tail.iter_mut().zip(&b) {
                    *t += a[k] * bi[k];
                }
            }
        }
    }
    let mut lanes = [[0.0f64; 4]; N];
    for (l, si) in lanes.iter_mut().zip(s) {
        // SAFETY: each destination holds four f64.
        unsafe { _mm256_storeu_pd(l.as_mut_ptr(), si) };
    }
    finish(&lanes, &tail)
}

/// The body of [`dots`] (the instruction set left to the caller's compilation).
#[inline(always)]
fn dots_portable<const N: usize>(a: &[f64], b: [&[f64]; N], chunks: Option<&[u32]>) -> [f64; N] {
    let n = common_len(a, &b);
    let mut s = [[0.0f64; 4]; N];
    let mut tail = [0.0; N];
    let mut chunk = |at: usize| {
        let x = &a[at..at + 4];
        for (si, bi) in s.iter_mut().zip(&b) {
            let y = &bi[at..at + 4];
            si[0] += x[0] * y[0];
            si[1] += x[1] * y[1];
            si[2] += x[2] * y[2];
            si[3] += x[3] * y[3];
        }
    };
    match chunks {
        Some(list) => list.iter().for_each(|&c| chunk(4 * c as usize)),
        None => {
            (0..n / 4).for_each(|c| chunk(4 * c));
            for k in 4 * (n / 4)..n {
                for (t, bi) in tail.iter_mut().zip(&b) {
                    *t += a[k] * bi[k];
                }
            }
        }
    }
    finish(&s, &tail)
}

/// `yᵢ ← yᵢ + cᵢ x` for three vectors `yᵢ` sharing one read of `x` (length `x.len()`); each
/// `yᵢ` gets exactly the additions of `for (y, x) in yᵢ.zip(x) { *y += cᵢ * x }`.
#[inline(always)]
fn axpy3(c: [f64; 3], x: &[f64], y0: &mut [f64], y1: &mut [f64], y2: &mut [f64]) {
    let n = x.len();
    let (y0, y1, y2) = (&mut y0[..n], &mut y1[..n], &mut y2[..n]);
    for k in 0..n {
        let xk = x[k];
        y0[k] += c[0] * xk;
        y1[k] += c[1] * xk;
        y2[k] += c[2] * xk;
    }
}

/// `yᵢ ← yᵢ + σ Mᵀ wᵢ` for three coordinates `i`: `M` is `m × n` row-major, `w = [w₀, w₁, w₂]`
/// (`m` each), `y = [y₀, y₁, y₂]` (`n` each), `σ = ±1`. Each entry gets its `m` additions
/// `y ← y + (σ w_q) M_{q,·}` in row order `q = 0, 1, …`, exactly as [`axpy3`] row after row;
/// with AVX (chosen at run time) eight columns of the three outputs stay in registers over all
/// the rows instead of being loaded and stored once per row. Does not allocate.
#[inline]
pub(crate) fn add_transposed_product3(
    m_rows: &[f64],
    m: usize,
    n: usize,
    sign: f64,
    w: [&[f64]; 3],
    y: [&mut [f64]; 3],
) {
    debug_assert!(sign == 1.0 || sign == -1.0);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the processor supports AVX (checked just above).
        return unsafe { add_transposed_product3_avx(m_rows, m, n, sign, w, y) };
    }
    let [y0, y1, y2] = y;
    for q in 0..m {
        let c = [sign * w[0][q], sign * w[1][q], sign * w[2][q]];
        axpy3(c, &m_rows[q * n..(q + 1) * n], y0, y1, y2);
    }
}

/// [`add_transposed_product3`] with AVX: column blocks of 8 (then 4, then one at a time).
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn add_transposed_product3_avx(
    m_rows: &[f64],
    m: usize,
    n: usize,
    sign: f64,
    w: [&[f64]; 3],
    y: [&mut [f64]; 3],
) {
    use std::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd, _mm256_storeu_pd};
    assert!(m_rows.len() >= m * n && w.iter().all(|v| v.len() >= m) && y.iter().all(|v| v.len() >= n));
    let (w0, w1, w2) = (&w[0][..m], &w[1][..m], &w[2][..m]);
    let [y0, y1, y2] = y;
    let yp = [y0.as_mut_ptr(), y1.as_mut_ptr(), y2.as_mut_ptr()];
    let mp = m_rows.as_ptr();
    /// Columns `j0 .. j0 + 4B` of the three outputs, accumulated over all rows in registers.
    #[inline(always)]
    unsafe fn block<const B: usize>(
        mp: *const f64,
        m: usize,
        n: usize,
        j0: usize,
        sign: f64,
        w: [&[f64]; 3],
        yp: [*mut f64; 3],
    ) {
        // SAFETY (whole body): the caller guarantees j0 + 4B ≤ n, m·n entries behind mp and n
        // behind each yp, and AVX.
        unsafe {
            let mut acc: [[__m256d; B]; 3] =
                std::array::from_fn(|i| std::array::from_fn(|b| _mm256_loadu_pd(yp[i].add(j0 + 4 * b))));
            for q in 0..m {
                let row = mp.add(q * n + j0);
                let k: [__m256d; B] = std::array::from_fn(|b| _mm256_loadu_pd(row.add(4 * b)));
                for i in 0..3 {
                    let c = _mm256_set1_pd(sign * w[i][q]);
                    for b in 0..B {
                        acc[i][b] = _mm256_add_pd(acc[i][b], _mm256_mul_pd(c, k[b]));
                    }
                }
            }
            for i in 0..3 {
                for b in 0..B {
                    _mm256_storeu_pd(yp[i].add(j0 + 4 * b), acc[i][b]);
                }
            }
        }
    }
    let mut j = 0;
    // SAFETY: every block ends at or before n; the lengths were asserted above.
    unsafe {
        // Eight columns: six accumulators, two rows' quarters and a broadcast fit the sixteen
        // registers (sixteen columns would spill).
        while j + 8 <= n {
            block::<2>(mp, m, n, j, sign, [w0, w1, w2], yp);
            j += 8;
        }
        while j + 4 <= n {
            block::<1>(mp, m, n, j, sign, [w0, w1, w2], yp);
            j += 4;
        }
    }
    for col in j..n {
        for q in 0..m {
            let k = m_rows[q * n + col];
            y0[col] += (sign * w0[q]) * k;
            y1[col] += (sign * w1[q]) * k;
            y2[col] += (sign * w2[q]) * k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transposed_product_equals_row_after_row_axpys_bit_for_bit() {
        for (m, n) in [(1, 1), (5, 3), (7, 4), (13, 21), (300, 64), (9, 37)] {
            let v = |len: usize, f: f64| -> Vec<f64> {
                (0..len)
                    .map(|k| (k as f64 * f).sin() * 1e2f64.powf((k % 3) as f64 - 1.0))
                    .collect()
            };
            let mat = v(m * n, 0.37);
            let w = [v(m, 1.1), v(m, 0.7), v(m, 2.3)];
            for sign in [1.0, -1.0] {
                let mut y = [v(n, 0.5), v(n, 0.9), v(n, 1.7)];
                let mut e = y.clone();
                let [y0, y1, y2] = &mut y;
                add_transposed_product3(&mat, m, n, sign, [&w[0], &w[1], &w[2]], [y0, y1, y2]);
                for (i, ei) in e.iter_mut().enumerate() {
                    for q in 0..m {
                        for (x, k) in ei.iter_mut().zip(&mat[q * n..(q + 1) * n]) {
                            *x += (sign * w[i][q]) * k;
                        }
                    }
                    assert!(
                        ei.iter().zip(&y[i]).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "m {m} n {n} sign {sign}"
                    );
                }
            }
        }
    }

    #[test]
    fn dot3_and_axpy3_equal_the_single_kernels_bit_for_bit() {
        for n in [0, 1, 3, 4, 7, 30, 64, 301] {
            let v = |f: f64, p: f64| -> Vec<f64> {
                (0..n)
                    .map(|k| (k as f64 * f + p).sin() * 1e3f64.powf((k % 5) as f64 - 2.0))
                    .collect()
            };
            let (a, b0, b1, b2) = (v(0.37, 0.1), v(1.3, 0.2), v(0.71, 0.3), v(2.9, 0.4));
            let got = dot3(&a, &b0, &b1, &b2);
            assert_eq!(
                got.map(f64::to_bits),
                dots_portable(&a, [&b0, &b1, &b2], None).map(f64::to_bits)
            );
            for (g, b) in got.iter().zip([&b0, &b1, &b2]) {
                assert_eq!(g.to_bits(), dot(&a, b).to_bits(), "n = {n}");
            }
            let c = [0.3, -1.7, 2.5e-3];
            let (mut y0, mut y1, mut y2) = (b0.clone(), b1.clone(), b2.clone());
            axpy3(c, &a, &mut y0, &mut y1, &mut y2);
            for (ci, (y, b)) in c.iter().zip([(&y0, &b0), (&y1, &b1), (&y2, &b2)]) {
                let mut e = b.clone();
                for (e, x) in e.iter_mut().zip(&a) {
                    *e += ci * x;
                }
                assert_eq!(
                    y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    e.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "n = {n}"
                );
            }
        }
    }

    #[test]
    fn dot3_over_the_nonzero_chunks_equals_dot3_bit_for_bit() {
        let n = 64;
        let v = |f: f64, p: f64| -> Vec<f64> {
            (0..n)
                .map(|k| (k as f64 * f + p).sin() * 10f64.powi((k % 7) as i32 - 3))
                .collect()
        };
        let (b0, b1, b2) = (v(1.3, 0.2), v(0.71, 0.3), v(2.9, 0.4));
        // A row that is zero outside chunks 1, 2, 7, 12 and 15.
        let chunks = [1u32, 2, 7, 12, 15];
        let a: Vec<f64> = v(0.37, 0.1)
            .into_iter()
            .enumerate()
            .map(|(k, x)| if chunks.contains(&((k / 4) as u32)) { x } else { 0.0 })
            .collect();
        let full = dot3(&a, &b0, &b1, &b2).map(f64::to_bits);
        assert_eq!(dots(&a, [&b0, &b1, &b2], Some(&chunks)).map(f64::to_bits), full);
        assert_eq!(
            dots_portable(&a, [&b0, &b1, &b2], Some(&chunks)).map(f64::to_bits),
            full
        );
    }

    #[test]
    fn dot2_equals_two_dots_bit_for_bit() {
        for n in [0, 1, 3, 4, 7, 30, 40, 301] {
            let v = |f: f64, p: f64| -> Vec<f64> {
                (0..n)
                    .map(|k| (k as f64 * f + p).sin() * 1e3f64.powf((k % 5) as f64 - 2.0))
                    .collect()
            };
            let (a, b0, b1) = (v(0.37, 0.1), v(1.3, 0.2), v(0.71, 0.3));
            let got = dot2(&a, &b0, &b1);
            assert_eq!(
                got.map(f64::to_bits),
                dots_portable(&a, [&b0, &b1], None).map(f64::to_bits)
            );
            for (g, b) in got.iter().zip([&b0, &b1]) {
                assert_eq!(g.to_bits(), dot(&a, b).to_bits(), "n = {n}");
            }
        }
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        for n in [0, 1, 3, 4, 7, 30, 64] {
            let a: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..n).map(|k| (k as f64 * 1.3).cos()).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() <= 1e-14 * (1.0 + plain.abs()), "n = {n}");
        }
    }
}
