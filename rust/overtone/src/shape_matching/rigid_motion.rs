//! Rigid-motion quantities of a particle set: linear and angular momentum, the best rigid fit of
//! one pose onto another, and the damping of the non-rigid part of the velocity.

use crate::math::polar::closest_rotation_3d;
use crate::math::vec3::cross;
use crate::shape_matching::stretch::inverse3;

/// Total mass, centre of mass.
#[inline(always)]
fn centre(x: &[[f64; 3]], m: &[f64]) -> (f64, [f64; 3]) {
    let mut c = [0.0; 3];
    let mut total = 0.0;
    for (p, &mi) in x.iter().zip(m) {
        total += mi;
        for i in 0..3 {
            c[i] += mi * p[i];
        }
    }
    c.iter_mut().for_each(|v| *v /= total);
    (total, c)
}

/// Linear momentum `Σ mᵢ vᵢ` and angular momentum about the origin `Σ mᵢ xᵢ × vᵢ`.
pub fn momenta(x: &[[f64; 3]], v: &[[f64; 3]], m: &[f64]) -> ([f64; 3], [f64; 3]) {
    let mut p = [0.0; 3];
    let mut l = [0.0; 3];
    for ((xi, vi), &mi) in x.iter().zip(v).zip(m) {
        let c = cross(xi, vi);
        for k in 0..3 {
            p[k] += mi * vi[k];
            l[k] += mi * c[k];
        }
    }
    (p, l)
}

/// Mass-weighted RMS distance between `pose` and the best rigid motion of `rest` (Kabsch:
/// centroids matched, rotation = closest rotation of `Σ mᵢ (xᵢ − c)(Xᵢ − C)ᵀ`). Units: length.
/// Zero exactly when `pose` is a rigid motion of `rest`.
pub fn rigid_residual(rest: &[[f64; 3]], pose: &[[f64; 3]], m: &[f64]) -> f64 {
    let (total, c0) = centre(rest, m);
    let (_, c) = centre(pose, m);
    let mut h = [0.0; 9];
    for ((x, x0), &mi) in pose.iter().zip(rest).zip(m) {
        for i in 0..3 {
            for j in 0..3 {
                h[i * 3 + j] += mi * (x[i] - c[i]) * (x0[j] - c0[j]);
            }
        }
    }
    let mut q = [1.0, 0.0, 0.0, 0.0];
    let mut r = [0.0; 9];
    closest_rotation_3d(&h, &mut q, &mut r, 1e-15);
    let mut sum = 0.0;
    for ((x, x0), &mi) in pose.iter().zip(rest).zip(m) {
        for i in 0..3 {
            let g = c[i] + (0..3).map(|j| r[i * 3 + j] * (x0[j] - c0[j])).sum::<f64>();
            sum += mi * (x[i] - g).powi(2);
        }
    }
    (sum / total).sqrt()
}

/// `v ← v + k (v_cm + ω × r − v)`: removes the fraction `k` of the velocity that is not a rigid
/// motion (Müller et al. 2007, PBD §3.5), with `ω = I⁻¹ L` about the centre of mass. Linear and
/// angular momentum are unchanged (to round-off).
#[inline(always)]
pub(crate) fn damp_non_rigid_velocity(x: &[[f64; 3]], v: &mut [[f64; 3]], m: &[f64], k: f64) {
    if k == 0.0 {
        return;
    }
    let (total, c) = centre(x, m);
    let mut vcm = [0.0; 3];
    let mut l = [0.0; 3];
    let mut inertia = [0.0; 9];
    for ((xi, vi), &mi) in x.iter().zip(v.iter()).zip(m) {
        let r = [xi[0] - c[0], xi[1] - c[1], xi[2] - c[2]];
        let rv = cross(&r, vi);
        let r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for a in 0..3 {
            vcm[a] += mi * vi[a];
            l[a] += mi * rv[a];
            for b in 0..3 {
                inertia[a * 3 + b] += mi * (if a == b { r2 } else { 0.0 } - r[a] * r[b]);
            }
        }
    }
    vcm.iter_mut().for_each(|a| *a /= total);
    let omega = match inverse3(&inertia) {
        Some(inv) => [
            inv[0] * l[0] + inv[1] * l[1] + inv[2] * l[2],
            inv[3] * l[0] + inv[4] * l[1] + inv[5] * l[2],
            inv[6] * l[0] + inv[7] * l[1] + inv[8] * l[2],
        ],
        None => [0.0; 3],
    };
    for (xi, vi) in x.iter().zip(v.iter_mut()) {
        let r = [xi[0] - c[0], xi[1] - c[1], xi[2] - c[2]];
        let w = cross(&omega, &r);
        for a in 0..3 {
            vi[a] += k * (vcm[a] + w[a] - vi[a]);
        }
    }
}
