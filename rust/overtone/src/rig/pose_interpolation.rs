//! Rig poses between two frames: what the rig does during a substep.
//!
//! Each bone's affine map `T = [A | t]` is split by the polar decomposition `A = R S` (`R` the
//! closest rotation, `S = RᵀA` the stretch); between two poses `R` follows the shortest arc
//! (quaternion slerp in 3D, the shorter angle in 2D), `S`, `t` and the blendshape weights
//! follow straight lines. Unlike a linear blend of the matrices, a bone turning by `θ` in a
//! frame keeps its length half-way (a linear blend shrinks it by `cos(θ/2)`), so substeps never
//! see the rig squash. At `s = 0` and `s = 1` the given poses are returned bit for bit.

use nalgebra::{Matrix3, Rotation3, UnitQuaternion};

use crate::math::polar::{closest_rotation_2d, closest_rotation_3d, ROTATION_ACCURACY};
use crate::rig::LbsRig;

/// One bone's path between two poses.
#[derive(Clone, Copy, Debug, Default)]
struct BonePath {
    /// 3D: unit quaternions `(w, x, y, z)` of the end rotations (the second on the first's
    /// hemisphere); 2D: angles in `q[0]`.
    qa: [f64; 4],
    qb: [f64; 4],
    /// Stretch `S = RᵀA` at both ends (`d × d`, row-major).
    sa: [f64; 9],
    sb: [f64; 9],
}

/// Interpolates rig parameters (the layout of [`LbsRig`]: bones coordinate-major, then the
/// blendshape weights) between a pose `p_a` and a pose `p_b`. Set up once per frame with
/// [`prepare`](Self::prepare) (two polar decompositions per bone, one when `p_a` is the last
/// `p_b`, as for consecutive frames), then [`pose_at`](Self::pose_at) costs a slerp per bone.
/// Does not allocate after the first `prepare` for a rig.
#[derive(Clone, Debug, Default)]
pub struct PoseInterpolator {
    dim: usize,
    n_bones: usize,
    pa: Vec<f64>,
    pb: Vec<f64>,
    bones: Vec<BonePath>,
    /// Per bone, the rotation (as computed, before the hemisphere flip) and stretch of the last
    /// `p_b`: the next frame's `p_a` when frames follow each other.
    end: Vec<([f64; 4], [f64; 9])>,
}

/// Bone `b`'s rotation (quaternion `(w, x, y, z)` in 3D, angle in `q[0]` in 2D) and stretch
/// `S = RᵀA` in pose `p` (`c` parameters a coordinate).
fn bone_end(p: &[f64], b: usize, c: usize, d: usize) -> ([f64; 4], [f64; 9]) {
    let (mut q, mut s) = ([0.0; 4], [0.0; 9]);
    let mut a = [0.0; 9];
    for i in 0..d {
        for j in 0..d {
            a[i * d + j] = p[i * c + b * (d + 1) + j];
        }
    }
    let mut r = [0.0; 9];
    if d == 2 {
        closest_rotation_2d(&a[..4], &mut r[..4]);
        q[0] = r[2].atan2(r[0]);
    } else {
        let mut warm = [1.0, 0.0, 0.0, 0.0];
        closest_rotation_3d(&a, &mut warm, &mut r, ROTATION_ACCURACY);
        q = quat_from_rotation(&r);
    }
    // S = Rᵀ A
    for i in 0..d {
        for j in 0..d {
            s[i * d + j] = (0..d).map(|l| r[l * d + i] * a[l * d + j]).sum();
        }
    }
    (q, s)
}

fn quat_from_rotation(r: &[f64]) -> [f64; 4] {
    let m = Matrix3::from_row_slice(&r[..9]);
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(m));
    [q.w, q.i, q.j, q.k]
}

fn rotation_from_quat(q: &[f64; 4], r: &mut [f64; 9]) {
    let [w, x, y, z] = *q;
    *r = [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    ];
}

/// Spherical linear interpolation of unit quaternions on one hemisphere (`qa·qb ≥ 0`);
/// normalised linear interpolation when they are nearly equal.
fn slerp(qa: &[f64; 4], qb: &[f64; 4], s: f64) -> [f64; 4] {
    let dot: f64 = (0..4).map(|k| qa[k] * qb[k]).sum::<f64>().clamp(-1.0, 1.0);
    let (wa, wb) = if dot > 0.9995 {
        (1.0 - s, s)
    } else {
        let theta = dot.acos();
        let sin = theta.sin();
        (((1.0 - s) * theta).sin() / sin, (s * theta).sin() / sin)
    };
    let mut q = [0.0; 4];
    for k in 0..4 {
        q[k] = wa * qa[k] + wb * qb[k];
    }
    let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.map(|x| x / norm)
}

impl PoseInterpolator {
    /// Sets the end poses (each [`LbsRig::n_params`] values, checked by the caller).
    pub fn prepare(&mut self, rig: &LbsRig, p_a: &[f64], p_b: &[f64]) {
        let (d, m) = (rig.dim(), rig.n_bones());
        // `p_a` is the last `p_b` (bit for bit): its ends are already known.
        let follows = self.dim == d
            && self.n_bones == m
            && self.end.len() == m
            && self.pb.len() == p_a.len()
            && self.pb.iter().zip(p_a).all(|(x, y)| x.to_bits() == y.to_bits());
        self.dim = d;
        self.n_bones = m;
        self.pa.clear();
        self.pa.extend_from_slice(p_a);
        self.pb.clear();
        self.pb.extend_from_slice(p_b);
        self.bones.resize(m, BonePath::default());
        self.end.resize(m, ([0.0; 4], [0.0; 9]));
        let c = m * (d + 1);
        for b in 0..m {
            let (qa, sa) = if follows { self.end[b] } else { bone_end(p_a, b, c, d) };
            let (qb, sb) = bone_end(p_b, b, c, d);
            self.end[b] = (qb, sb);
            let mut path = BonePath { qa, qb, sa, sb };
            if d == 2 {
                // The shorter way round.
                let mut delta = path.qb[0] - path.qa[0];
                delta -= (delta / std::f64::consts::TAU).round() * std::f64::consts::TAU;
                path.qb[0] = path.qa[0] + delta;
            } else if (0..4).map(|k| path.qa[k] * path.qb[k]).sum::<f64>() < 0.0 {
                path.qb = path.qb.map(|x| -x);
            }
            self.bones[b] = path;
        }
    }

    /// The pose at fraction `s ∈ [0, 1]` of the way from `p_a` to `p_b`, written to `out`
    /// (same layout). `s = 0` and `s = 1` copy the end poses exactly.
    pub(crate) fn pose_at(&self, s: f64, out: &mut [f64]) {
        if s <= 0.0 {
            out.copy_from_slice(&self.pa);
            return;
        }
        if s >= 1.0 {
            out.copy_from_slice(&self.pb);
            return;
        }
        let (d, m) = (self.dim, self.n_bones);
        let c = m * (d + 1);
        for (k, o) in out.iter_mut().enumerate() {
            *o = (1.0 - s) * self.pa[k] + s * self.pb[k];
        }
        for (b, path) in self.bones.iter().enumerate() {
            let mut r = [0.0; 9];
            if d == 2 {
                let th = (1.0 - s) * path.qa[0] + s * path.qb[0];
                let (sn, cs) = th.sin_cos();
                r[..4].copy_from_slice(&[cs, -sn, sn, cs]);
            } else {
                rotation_from_quat(&slerp(&path.qa, &path.qb, s), &mut r);
            }
            for i in 0..d {
                for j in 0..d {
                    let a: f64 = (0..d)
                        .map(|l| r[i * d + l] * ((1.0 - s) * path.sa[l * d + j] + s * path.sb[l * d + j]))
                        .sum();
                    out[i * c + b * (d + 1) + j] = a;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rig(d: usize) -> LbsRig {
        let rest: Vec<f64> = (0..4 * d).map(|k| (k as f64 * 0.37).sin()).collect();
        LbsRig::new(d, &rest, &[1.0, 0.0, 0.5, 0.5, 0.0, 1.0, 0.25, 0.75], 2).unwrap()
    }

    /// Bone transforms `[R(θ)·s | t]` in the rig's parameter layout.
    fn pose(d: usize, th: [f64; 2], scale: [f64; 2], t: [f64; 2]) -> Vec<f64> {
        let c = 2 * (d + 1);
        let mut p = vec![0.0; d * c];
        for b in 0..2 {
            let (sn, cs) = th[b].sin_cos();
            // Rotation about z (3D) or in the plane (2D).
            let r = [[cs, -sn, 0.0], [sn, cs, 0.0], [0.0, 0.0, 1.0]];
            for i in 0..d {
                for j in 0..d {
                    p[i * c + b * (d + 1) + j] = r[i][j] * scale[b];
                }
                p[i * c + b * (d + 1) + d] = t[b] * (i + 1) as f64;
            }
        }
        p
    }

    /// A bone turning at a constant rate about a fixed axis is interpolated exactly: the
    /// half-way pose is the rotation by the mean angle (no `cos(θ/2)` shrink), with the
    /// scale and translation averaged; the end poses come back bit for bit.
    #[test]
    fn halfway_pose_is_the_mean_rotation() {
        for d in [2, 3] {
            let r = rig(d);
            let a = pose(d, [0.1, -0.3], [1.0, 2.0], [0.0, 1.0]);
            let b = pose(d, [1.3, 2.5], [1.5, 2.0], [1.0, -1.0]);
            let mut ip = PoseInterpolator::default();
            ip.prepare(&r, &a, &b);
            let mut out = vec![0.0; a.len()];
            ip.pose_at(0.5, &mut out);
            let want = pose(d, [0.7, 1.1], [1.25, 2.0], [0.5, 0.0]);
            let err = out.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "{d}D half-way pose off by {err:.2e}");
            ip.pose_at(0.0, &mut out);
            assert_eq!(out, a);
            ip.pose_at(1.0, &mut out);
            assert_eq!(out, b);
        }
    }

    /// Angles across ±π take the shorter way (a quarter turn, not three quarters).
    #[test]
    fn rotations_take_the_shorter_arc() {
        for d in [2, 3] {
            let r = rig(d);
            let a = pose(d, [3.0, 0.0], [1.0, 1.0], [0.0, 0.0]);
            let b = pose(d, [-3.0, 0.0], [1.0, 1.0], [0.0, 0.0]);
            let mut ip = PoseInterpolator::default();
            ip.prepare(&r, &a, &b);
            let mut out = vec![0.0; a.len()];
            ip.pose_at(0.5, &mut out);
            let want = pose(d, [std::f64::consts::PI, 0.0], [1.0, 1.0], [0.0, 0.0]);
            let err = out.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "{d}D: {err:.2e}");
        }
    }

    /// Consecutive frames reuse the shared pose's decomposition: preparing `(b, c)` after
    /// `(a, b)` gives the poses of a fresh interpolator prepared with `(b, c)`, bit for bit
    /// (including across the hemisphere flip of 3D, where `b`'s rotation was negated for `a`).
    #[test]
    fn consecutive_frames_reuse_the_shared_pose_exactly() {
        for d in [2, 3] {
            let r = rig(d);
            let a = pose(d, [0.1, -0.3], [1.0, 2.0], [0.0, 1.0]);
            let b = pose(d, [3.0, 2.5], [1.5, 2.0], [1.0, -1.0]);
            let c = pose(d, [-3.0, 0.4], [1.2, 1.8], [0.5, 0.0]);
            let mut chained = PoseInterpolator::default();
            chained.prepare(&r, &a, &b);
            chained.prepare(&r, &b, &c);
            let mut fresh = PoseInterpolator::default();
            fresh.prepare(&r, &b, &c);
            let (mut x, mut y) = (vec![0.0; a.len()], vec![0.0; a.len()]);
            for s in [0.0, 0.26, 0.52, 0.9, 1.0] {
                chained.pose_at(s, &mut x);
                fresh.pose_at(s, &mut y);
                assert!(
                    x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{d}D at {s}: {x:?} against {y:?}"
                );
            }
        }
    }
}
