//! C¹ curves through densely keyed LINEAR animation channels (glTF exports keyed every frame).
//!
//! A glTF LINEAR channel is piecewise linear in time: its velocity jumps at every key, so a rig
//! sampled at a physics rate finer than the keys (240 Hz against 24 fps keys) carries an
//! acceleration impulse at each key that excites the lattice's highest modes. Where the keys are
//! dense (spacing ≤ [`DENSE_KEY_SPACING`]) they are samples of a smooth curve exported by a DCC
//! tool, and this module replaces the kinked polyline by the cubic Hermite curve through the
//! same keys with tangents from the neighbouring keys (non-uniform Catmull-Rom, exact for
//! quadratic motion):
//!
//! `m_k = (h₁·d₀ + h₀·d₁)/(h₀ + h₁)`, `d₀ = (p_k − p_{k−1})/h₀`, `d₁ = (p_{k+1} − p_k)/h₁`,
//!
//! `p(t) = h₀₀(u)·p_k + h₁₀(u)·h·m_k + h₀₁(u)·p_{k+1} + h₁₁(u)·h·m_{k+1}`, `u = (t − t_k)/h`,
//! `h = t_{k+1} − t_k` (units: seconds; `m` in value units per second).
//!
//! Sparse segments (spacing > [`DENSE_KEY_SPACING`]: an animator's deliberate straight line or
//! hold) stay linear (slerp for rotations); the tangent of a dense key next to one is that
//! segment's own velocity, so the curve stays C¹ across the change. End keys take the velocity
//! of their one segment (one-sided tangents). Rotations are interpolated component-wise on the
//! quaternions made sign-consistent (each key on the hemisphere of the previous one) and
//! normalised: exact at keys, unit, C¹ (the normalisation of a C¹ curve away from zero).

/// How a bake evaluates glTF LINEAR channels between keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RigInterpolation {
    /// glTF semantics exactly: piecewise linear (slerp for rotations).
    Linear,
    /// C¹ Hermite curves through the keys where the keys are dense (see the module doc).
    #[default]
    Smooth,
}

/// Largest key spacing (s) a segment may have to be smoothed: 1/12 s, half the spacing of a
/// 24 fps export. Exported bakes key every frame (1/24–1/60 s); hand-keyed LINEAR segments are
/// longer and are left as the artist set them (a Catmull-Rom through sparse keys would
/// overshoot and move the rig inside keyed holds).
pub(crate) const DENSE_KEY_SPACING: f64 = 1.0 / 12.0;

/// Whether a segment of length `h` (s) is dense; the slack covers key times stored as `f32`.
pub(crate) fn is_dense(h: f64) -> bool {
    h > 0.0 && h <= DENSE_KEY_SPACING * (1.0 + 1e-6)
}

/// Puts every quaternion `[x, y, z, w]` on the hemisphere of the previous one (`q_k ← −q_k`
/// when `q_{k−1}·q_k < 0`): the same rotations, and no component jumps between keys.
pub(crate) fn align_hemispheres(keys: &mut [Vec<f64>]) {
    for k in 1..keys.len() {
        let dot: f64 = keys[k - 1].iter().zip(&keys[k]).map(|(a, b)| a * b).sum();
        if dot < 0.0 {
            keys[k].iter_mut().for_each(|x| *x = -*x);
        }
    }
}

/// Velocity (per second) of the linear segment `a → b` of length `h` at its end `at_end`
/// (start otherwise): `(b − a)/h`, or for unit quaternions the slerp's derivative
/// `θ/h · (b − cos θ·a)/sin θ` at the start and `θ/h · (cos θ·b − a)/sin θ` at the end
/// (`cos θ = a·b ≥ 0` after [`align_hemispheres`]).
fn segment_velocity(a: &[f64], b: &[f64], h: f64, rotation: bool, at_end: bool) -> Vec<f64> {
    if !rotation {
        return a.iter().zip(b).map(|(x, y)| (y - x) / h).collect();
    }
    let c = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>().clamp(-1.0, 1.0);
    let theta = c.acos();
    let s = theta.sin();
    let f = if s > 1e-12 { theta / s } else { 1.0 };
    if at_end {
        a.iter().zip(b).map(|(x, y)| f * (c * y - x) / h).collect()
    } else {
        a.iter().zip(b).map(|(x, y)| f * (y - c * x) / h).collect()
    }
}

/// Tangents (value units per second) at every key of a LINEAR channel for [`hermite`]:
/// `times` strictly increasing or repeated (s), `values` one row per key (quaternions aligned
/// with [`align_hemispheres`] when `rotation`). See the module doc for the rule.
pub(crate) fn key_tangents(times: &[f64], values: &[Vec<f64>], rotation: bool) -> Vec<Vec<f64>> {
    let n = times.len();
    let dim = values.first().map_or(0, Vec::len);
    (0..n)
        .map(|k| {
            let h0 = if k > 0 { times[k] - times[k - 1] } else { 0.0 };
            let h1 = if k + 1 < n { times[k + 1] - times[k] } else { 0.0 };
            let left = (h0 > 0.0).then(|| segment_velocity(&values[k - 1], &values[k], h0, rotation, true));
            let right = (h1 > 0.0).then(|| segment_velocity(&values[k], &values[k + 1], h1, rotation, false));
            match (left, right) {
                (Some(d0), Some(d1)) => {
                    if is_dense(h0) && is_dense(h1) {
                        d0.iter().zip(&d1).map(|(a, b)| (h1 * a + h0 * b) / (h0 + h1)).collect()
                    } else if is_dense(h0) {
                        d1 // the sparse right segment stays linear: match its velocity
                    } else {
                        d0
                    }
                }
                (Some(d), None) | (None, Some(d)) => d,
                (None, None) => vec![0.0; dim],
            }
        })
        .collect()
}

/// The cubic Hermite basis at `u ∈ [0, 1]`: `[h₀₀, h₁₀, h₀₁, h₁₁]` with `h₀₀ = 2u³ − 3u² + 1`,
/// `h₁₀ = u³ − 2u² + u`, `h₀₁ = −2u³ + 3u²`, `h₁₁ = u³ − u²` (the weights of the start value,
/// start tangent, end value and end tangent of a unit-length segment).
pub(crate) fn hermite_basis(u: f64) -> [f64; 4] {
    let (u2, u3) = (u * u, u * u * u);
    [
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    ]
}

/// The cubic Hermite segment from `a` (tangent `ma`) to `b` (tangent `mb`) of length `h` (s)
/// at `u ∈ [0, 1]`: `h₀₀·a + h₁₀·h·ma + h₀₁·b + h₁₁·h·mb` ([`hermite_basis`]).
pub(crate) fn hermite(a: &[f64], ma: &[f64], b: &[f64], mb: &[f64], h: f64, u: f64) -> Vec<f64> {
    let [h00, h10, h01, h11] = hermite_basis(u);
    (0..a.len())
        .map(|i| h00 * a[i] + h10 * h * ma[i] + h01 * b[i] + h11 * h * mb[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth channel from its keys: Hermite on dense segments, linear otherwise, normalised
    /// for rotations (the evaluation `gltf_character` performs).
    fn eval(times: &[f64], values: &[Vec<f64>], rotation: bool, t: f64) -> Vec<f64> {
        let m = key_tangents(times, values, rotation);
        let n = times.len();
        let k = times.partition_point(|&x| x <= t).saturating_sub(1).min(n - 2);
        let h = times[k + 1] - times[k];
        let u = ((t - times[k]) / h).clamp(0.0, 1.0);
        if !is_dense(h) {
            return values[k]
                .iter()
                .zip(&values[k + 1])
                .map(|(a, b)| a + u * (b - a))
                .collect();
        }
        let mut v = hermite(&values[k], &m[k], &values[k + 1], &m[k + 1], h, u);
        if rotation {
            let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter_mut().for_each(|x| *x /= nv);
        }
        v
    }

    fn keys_24fps(n: usize, f: impl Fn(f64) -> Vec<f64>) -> (Vec<f64>, Vec<Vec<f64>>) {
        let times: Vec<f64> = (0..n).map(|i| i as f64 / 24.0).collect();
        let values = times.iter().map(|&t| f(t)).collect();
        (times, values)
    }

    #[test]
    fn hits_the_keys_and_is_c1_at_them() {
        let (times, values) = keys_24fps(12, |t| vec![(7.0 * t).sin(), t * t * t, (3.0 * t).cos()]);
        let eps = 1e-6;
        for k in 1..times.len() - 1 {
            let at = eval(&times, &values, false, times[k]);
            for i in 0..3 {
                assert!(
                    (at[i] - values[k][i]).abs() < 1e-14,
                    "key {k}: {} vs {}",
                    at[i],
                    values[k][i]
                );
            }
            // One-sided difference quotients from the left and right segments agree to O(eps).
            let l = eval(&times, &values, false, times[k] - eps);
            let r = eval(&times, &values, false, times[k] + eps);
            for i in 0..3 {
                let (dl, dr) = ((at[i] - l[i]) / eps, (r[i] - at[i]) / eps);
                assert!((dl - dr).abs() < 1e-4 * (1.0 + dl.abs()), "key {k}: {dl} vs {dr}");
            }
        }
    }

    #[test]
    fn reproduces_linear_and_quadratic_motion_with_uneven_keys() {
        let times = [0.0, 0.03, 0.05, 0.09, 0.12, 0.16];
        let lin: Vec<Vec<f64>> = times.iter().map(|&t| vec![2.0 - 3.0 * t]).collect();
        let quad: Vec<Vec<f64>> = times.iter().map(|&t| vec![5.0 * t * t - t]).collect();
        for j in 0..=160 {
            let t = j as f64 * 0.001;
            let l = eval(&times, &lin, false, t)[0];
            assert!((l - (2.0 - 3.0 * t)).abs() < 1e-14, "t={t}: {l}");
            // Interior segments of a quadratic are exact; the end segments have one-sided tangents.
            if (0.03..=0.12).contains(&t) {
                let q = eval(&times, &quad, false, t)[0];
                assert!((q - (5.0 * t * t - t)).abs() < 1e-13, "t={t}: {q}");
            }
        }
    }

    #[test]
    fn sparse_segments_stay_linear_and_joins_stay_c1() {
        // Dense keys, then a 0.5 s hold (two equal keys), then dense keys again.
        let times = [0.0, 1.0 / 24.0, 2.0 / 24.0, 2.0 / 24.0 + 0.5, 3.0 / 24.0 + 0.5];
        let values: Vec<Vec<f64>> = [0.0, 0.1, 0.4, 0.4, 0.2].iter().map(|&x| vec![x]).collect();
        for j in 1..50 {
            let t = times[2] + 0.5 * j as f64 / 50.0;
            assert_eq!(eval(&times, &values, false, t)[0], 0.4, "the hold moves at t={t}");
        }
        let m = key_tangents(&times, &values, false);
        assert_eq!(m[2][0], 0.0);
        assert_eq!(m[3][0], 0.0);
    }

    #[test]
    fn quaternions_stay_unit_and_do_not_flip_across_hemispheres() {
        // A rotation about z through 0..300°: the stored keys flip sign past 180° (w < 0 is
        // stored as its antipode with w > 0, as exporters do).
        let (times, mut values) = keys_24fps(24, |t| {
            let a = t * 300f64.to_radians() / (23.0 / 24.0);
            let (s, c) = (0.5 * a).sin_cos();
            if c < 0.0 {
                vec![0.0, 0.0, -s, -c]
            } else {
                vec![0.0, 0.0, s, c]
            }
        });
        align_hemispheres(&mut values);
        let mut prev: Option<Vec<f64>> = None;
        let mut worst = 0.0f64;
        for j in 0..=2300 {
            let t = j as f64 * (23.0 / 24.0) / 2300.0;
            let q = eval(&times, &values, true, t);
            let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-14, "t={t}: |q| = {norm}");
            // The rotation angle follows the keyed uniform rotation (13° between keys): the
            // normalised cubic is off by 1.1e-8 rad at most (measured), bound 1e-7.
            let a = 2.0 * q[2].atan2(q[3]);
            let want = t * 300f64.to_radians() / (23.0 / 24.0);
            let diff = (a - want).rem_euclid(std::f64::consts::TAU);
            let diff = diff.min(std::f64::consts::TAU - diff);
            worst = worst.max(diff);
            if let Some(p) = &prev {
                let dot: f64 = p.iter().zip(&q).map(|(a, b)| a * b).sum();
                assert!(dot > 0.99, "sign flip at t={t}: dot {dot}");
            }
            prev = Some(q);
        }
        assert!(worst < 1e-7, "worst angle error {worst} rad");
    }
}
