//! Small dense kernels for the per-step hot loops.

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

#[cfg(test)]
mod tests {
    use super::*;

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
