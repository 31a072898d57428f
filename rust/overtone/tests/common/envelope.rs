//! The damping a viewer sees on a ringing signal: turning points and the envelope's ratio.

/// Turning points of `u` with hysteresis: a turn counts once the signal has come back from it
/// by `rel` of the signal's range (so a small ripple on a large swing is not a turn), each
/// refined by a parabola through its three samples: `(time, value)`.
pub fn turning_points(u: &[f64], fps: f64, rel: f64) -> Vec<(f64, f64)> {
    let (lo, hi) = u
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let back = rel * (hi - lo);
    let (mut turns, mut best, mut rising) = (Vec::new(), 0usize, None::<bool>);
    for k in 1..u.len() {
        match rising {
            None if (u[k] - u[0]).abs() > back => {
                rising = Some(u[k] > u[0]);
                best = k;
            }
            None => {}
            Some(up) => {
                if (up && u[k] > u[best]) || (!up && u[k] < u[best]) {
                    best = k;
                } else if (u[best] - u[k]).abs() > back {
                    turns.push(best);
                    rising = Some(!up);
                    best = k;
                }
            }
        }
    }
    turns
        .into_iter()
        .filter(|&k| k > 0 && k + 1 < u.len())
        .map(|k| {
            let (a, b, c) = (u[k - 1], u[k], u[k + 1]);
            let den = a - 2.0 * b + c;
            let s = if den != 0.0 { 0.5 * (a - c) / den } else { 0.0 };
            ((k as f64 + s) / fps, b - 0.25 * (a - c) * s)
        })
        .collect()
}

/// Damping ratio of the envelope a viewer sees: half the peak-to-trough swing between
/// successive turning points ([`turning_points`], 3% hysteresis, which takes out a slow drift
/// as well as a ripple), compared one period apart, `ζ = σ/√(σ² + (2π/T)²)` with
/// `σ = ln(A_j/A_{j+2})/T`; the median over the first three periods.
pub fn envelope_ratio(u: &[f64], fps: f64) -> f64 {
    let turns = turning_points(u, fps, 0.03);
    let swings: Vec<(f64, f64)> = turns
        .windows(2)
        .map(|w| (0.5 * (w[0].0 + w[1].0), 0.5 * (w[1].1 - w[0].1).abs()))
        .collect();
    let mut ratios: Vec<f64> = swings
        .windows(3)
        .take(6)
        .map(|w| {
            let period = w[2].0 - w[0].0;
            let sigma = (w[0].1 / w[2].1).ln() / period;
            sigma / sigma.hypot(std::f64::consts::TAU / period)
        })
        .collect();
    assert!(ratios.len() >= 3, "too few swings: {swings:?}");
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// Damping ratio of a whole field's free decay: `frames[k]` is the field (any length, the same
/// each frame) at frame `k`, `fps` frames a second, taken about the state it settles to (the
/// mean of its last eighth). A multi-mode motion beats at a single point (two close modes make
/// its envelope swell and fade with no damping at all); over the whole field the modes are
/// nearly orthogonal, so its mean square `E(t) = Σ_v |u_v(t)|²`, averaged over one period,
/// decays as the modes' energies do: `−½ d ln E/dt = Σ_k e_k ζ_k ω_k` (`e_k` the share of mode
/// `k` in `E`). The frequency the field rings at in the same window, `ω(t) = acos(r₁)·fps`
/// with `r₁` the lag-one correlation of successive frames (exact for a damped sinusoid sampled
/// below its Nyquist rate, as 24 fps samples a 7 Hz jiggle), is the same mean of the `ω_k`; so
/// `−½ ln E` against the phase `Φ(t) = ∫ω dt` has slope `ζ/√(1 − ζ²)` when every mode has ratio
/// `ζ`, however the energy shifts from fast modes to slow ones as they decay. The slope is
/// fitted by least squares over windows from the start until `E` falls below `floor` of its
/// first window.
pub fn field_decay_ratio(frames: &[Vec<f64>], fps: f64, floor: f64) -> f64 {
    let tail = (frames.len() / 8).max(1);
    let mut settled = vec![0.0; frames[0].len()];
    for f in &frames[frames.len() - tail..] {
        for (s, x) in settled.iter_mut().zip(f) {
            *s += x / tail as f64;
        }
    }
    let frames: Vec<Vec<f64>> = frames
        .iter()
        .map(|f| f.iter().zip(&settled).map(|(x, s)| x - s).collect())
        .collect();
    let dotp = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    // Per frame `k`: `|u_k|²` and `u_k · u_{k+1}` (0 for the last).
    let energy: Vec<f64> = frames.iter().map(|f| dotp(f, f)).collect();
    let lagged: Vec<f64> = frames.windows(2).map(|w| dotp(&w[0], &w[1])).chain([0.0]).collect();
    // Ringing frequency of the frames `k..k + len`.
    let ringing = |k: usize, len: usize| {
        let c0: f64 = energy[k..k + len - 1].iter().sum();
        let c2: f64 = energy[k + 1..k + len].iter().sum();
        let c1: f64 = lagged[k..k + len - 1].iter().sum();
        (c1 / (c0 * c2).sqrt()).clamp(-1.0, 1.0).acos() * fps
    };
    let window = ((std::f64::consts::TAU / ringing(0, frames.len()) * fps).round() as usize).max(3);
    let first = energy[..window].iter().sum::<f64>();
    let (mut phase, mut points) = (0.0, Vec::new());
    for k in 0..frames.len() + 1 - window {
        let e = energy[k..k + window].iter().sum::<f64>();
        if e <= floor * first {
            break;
        }
        points.push((phase, -0.5 * e.ln()));
        phase += ringing(k, window) / fps;
    }
    assert!(
        points.len() >= window,
        "the field decays within one period: {} windows",
        points.len()
    );
    let n = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (xm, ym) = (sx / n, sy / n);
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - xm) * (y - ym), b + (x - xm).powi(2))
    });
    let slope = num / den;
    slope / slope.hypot(1.0)
}
