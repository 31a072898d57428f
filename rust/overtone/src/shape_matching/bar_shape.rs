//! Twist and S-bend of a bar-shaped body: the two deformations of the seed's example poses
//! (Fig. 1, 8, 9, 12), measured on any pose with the body's rigid motion removed.
//!
//! The bar's long axis is a coordinate axis of the rest pose (`axis`: 0 = x, 1 = y, 2 = z), of
//! rest extent `[a_min, a_min + L]`. Five *stations* are cross-sections at
//! `s = 0, L/4, L/2, 3L/4, L`: the rest particles nearest to each (the rest layer there). Each
//! station's rotation `R_k` is the best rotation of its particles from rest to the pose (Kabsch:
//! the closest rotation of `Σ (xᵢ − c)(Xᵢ − C)ᵀ`), and every angle below is a *twist angle* of a
//! relative rotation `R_0ᵀ R_k` (the rotation of station `k` seen from station 0, in rest
//! coordinates) about a rest axis `a`: for the unit quaternion `(w, v)` of `R_0ᵀ R_k`, the
//! swing-twist decomposition about `a` gives `θ_a = 2 atan2(v · a, w)`, wrapped to `(−π, π]`.
//! A rigid motion of the whole body changes no angle.
//!
//! * **Twist** `τ = θ_axis(R_0ᵀ R_4)`: how far the far end cap turns about the bar's axis
//!   against the near one. [`crate::shape_matching::twist_pose`] with `angle` measures `angle`.
//! * **Bend** `φ_k = θ_b(R_0ᵀ R_k)` about the bend axis `b` (the rest axis normal to the bend
//!   plane): the tangent angle of station `k`. A bar that sags under gravity has `φ_4 ≠ 0`.
//! * **S-bend** `σ = ¼[(φ_1 − φ_0) + (φ_4 − φ_3) − (φ_3 − φ_1)]`: zero for any bend of uniform
//!   curvature (the three terms are ¼, ¼ and ½ of the total turn), and `A` for the S curve of
//!   tangent angle `A sin(2πs/L)` of [`crate::shape_matching::s_bend_pose`] (0, A, 0, −A, 0 at
//!   the stations).

use crate::error::{OvertoneError, Result};
use crate::math::polar::closest_rotation_3d;

/// The stations of a bar's rest pose, for [`BarShape::measure`].
#[derive(Clone, Debug)]
pub struct BarShape {
    axis: usize,
    bend_axis: usize,
    /// Particles of each station (`0, L/4, L/2, 3L/4, L`).
    stations: [Vec<usize>; 5],
    /// Rest positions of each station's particles, centred on the station's centroid.
    rest_centred: [Vec<[f64; 3]>; 5],
}

/// What [`BarShape::measure`] reads off a pose (radians).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarAngles {
    /// End-to-end twist `τ` about the bar's axis.
    pub twist: f64,
    /// Tangent angle `φ_4` of the far end against the near one about the bend axis.
    pub bend: f64,
    /// S-bend amplitude `σ`.
    pub s_bend: f64,
}

impl BarShape {
    /// Stations of the bar lying along rest axis `axis`, bending about rest axis `bend_axis`
    /// (both in `0..3`, different). `rest` is `n × 3` row-major.
    ///
    /// Refuses axes out of range or equal, non-finite positions, a bar of zero length, and a
    /// station with fewer than three particles or with its particles on a line (no rotation is
    /// defined for them).
    pub fn new(rest: &[f64], axis: usize, bend_axis: usize) -> Result<Self> {
        if axis > 2 || bend_axis > 2 || axis == bend_axis {
            return Err(OvertoneError::setting(
                "bar axes",
                format!("axis {axis}, bend axis {bend_axis}"),
                "give two different coordinate axes (0 = x, 1 = y, 2 = z)",
            ));
        }
        if rest.is_empty() || rest.len() % 3 != 0 {
            return Err(OvertoneError::size(
                "rest positions",
                "a non-empty n x 3 array",
                rest.len(),
            ));
        }
        crate::error::check_finite("rest positions", rest, 3)?;
        let a: Vec<f64> = rest.chunks_exact(3).map(|p| p[axis]).collect();
        let lo = a.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = a.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let len = hi - lo;
        if !(len > 0.0) {
            return Err(OvertoneError::setting(
                "bar axis",
                axis,
                "the rest pose has no extent along this axis",
            ));
        }
        let stations: [Vec<usize>; 5] = std::array::from_fn(|k| {
            let s = lo + 0.25 * k as f64 * len;
            let nearest = a.iter().map(|&x| (x - s).abs()).fold(f64::INFINITY, f64::min);
            (0..a.len())
                .filter(|&i| (a[i] - s).abs() <= nearest + 1e-9 * len)
                .collect()
        });
        let mut rest_centred: [Vec<[f64; 3]>; 5] = Default::default();
        for (k, st) in stations.iter().enumerate() {
            let pts: Vec<[f64; 3]> = st
                .iter()
                .map(|&i| [rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]])
                .collect();
            let c = centroid(&pts);
            let centred: Vec<[f64; 3]> = pts.iter().map(|p| [p[0] - c[0], p[1] - c[1], p[2] - c[2]]).collect();
            // The cross-section must span a plane: its second moment needs two non-zero
            // eigenvalues.
            let mut m = [0.0; 9];
            for p in &centred {
                for r in 0..3 {
                    for s in 0..3 {
                        m[3 * r + s] += p[r] * p[s];
                    }
                }
            }
            let eig = nalgebra::Matrix3::from_row_slice(&m).symmetric_eigenvalues();
            let mut e = [eig[0], eig[1], eig[2]];
            e.sort_by(f64::total_cmp);
            if st.len() < 3 || !(e[1] > 1e-12 * e[2].max(f64::MIN_POSITIVE)) {
                return Err(OvertoneError::setting(
                    "bar stations",
                    format!("station {k} of 5 ({} particles)", st.len()),
                    "a cross-section needs at least three particles not on a line",
                ));
            }
            rest_centred[k] = centred;
        }
        Ok(Self {
            axis,
            bend_axis,
            stations,
            rest_centred,
        })
    }

    /// The particles of station `k` (`0..5`: `s = 0, L/4, L/2, 3L/4, L`).
    pub fn station(&self, k: usize) -> &[usize] {
        &self.stations[k]
    }

    /// Twist, bend and S-bend of `pose` (`n × 3` row-major, the rest pose's particle order).
    pub fn measure(&self, pose: &[[f64; 3]]) -> BarAngles {
        let q: [[f64; 4]; 5] = std::array::from_fn(|k| self.station_rotation(k, pose));
        let mut twist_axis = [0.0; 3];
        twist_axis[self.axis] = 1.0;
        let mut bend_axis = [0.0; 3];
        bend_axis[self.bend_axis] = 1.0;
        let phi: [f64; 5] = std::array::from_fn(|k| twist_angle(&relative(&q[0], &q[k]), &bend_axis));
        BarAngles {
            twist: twist_angle(&relative(&q[0], &q[4]), &twist_axis),
            bend: phi[4],
            s_bend: 0.25 * ((phi[1] - phi[0]) + (phi[4] - phi[3]) - (phi[3] - phi[1])),
        }
    }

    /// Unit quaternion `(w, x, y, z)` of station `k`'s best rotation from rest to `pose`.
    fn station_rotation(&self, k: usize, pose: &[[f64; 3]]) -> [f64; 4] {
        let pts: Vec<[f64; 3]> = self.stations[k].iter().map(|&i| pose[i]).collect();
        let c = centroid(&pts);
        let mut h = [0.0; 9];
        for (p, r) in pts.iter().zip(&self.rest_centred[k]) {
            for a in 0..3 {
                for b in 0..3 {
                    h[3 * a + b] += (p[a] - c[a]) * r[b];
                }
            }
        }
        let mut q = [1.0, 0.0, 0.0, 0.0];
        let mut rot = [0.0; 9];
        closest_rotation_3d(&h, &mut q, &mut rot, 1e-14);
        q
    }
}

fn centroid(pts: &[[f64; 3]]) -> [f64; 3] {
    let mut c = [0.0; 3];
    for p in pts {
        for a in 0..3 {
            c[a] += p[a];
        }
    }
    c.map(|x| x / pts.len() as f64)
}

/// `conj(a) · b`: the rotation `R_aᵀ R_b`.
fn relative(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    let (w1, x1, y1, z1) = (a[0], -a[1], -a[2], -a[3]);
    let (w2, x2, y2, z2) = (b[0], b[1], b[2], b[3]);
    [
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ]
}

/// The twist angle of unit quaternion `q` about unit axis `a`, in `(−π, π]`.
fn twist_angle(q: &[f64; 4], a: &[f64; 3]) -> f64 {
    let t = 2.0 * (q[1] * a[0] + q[2] * a[1] + q[3] * a[2]).atan2(q[0]);
    let pi = std::f64::consts::PI;
    if t > pi {
        t - 2.0 * pi
    } else if t <= -pi {
        t + 2.0 * pi
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::tet_grid;
    use crate::shape_matching::{s_bend_pose, twist_pose};

    fn rows(x: &[f64]) -> Vec<[f64; 3]> {
        x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
    }

    /// A rigid motion of a pose: turned by 1.1 rad about (1, 2, 3)/√14 and moved.
    fn moved(x: &[f64]) -> Vec<[f64; 3]> {
        let axis = nalgebra::Unit::new_normalize(nalgebra::Vector3::new(1.0, 2.0, 3.0));
        let r = nalgebra::Rotation3::from_axis_angle(&axis, 1.1);
        rows(x)
            .iter()
            .map(|p| {
                let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
                [q[0] + 4.0, q[1] - 2.0, q[2] + 0.5]
            })
            .collect()
    }

    /// The example poses measure their own parameters: the twist pose of angle π/2 twists by
    /// π/2 (to 1e-12) and does not bend; the S pose of amplitude 0.6 has S-bend 0.6 (to 2e-3:
    /// the stations sit on the 9-layer grid's layers, the pose's curve is sampled) and neither
    /// twists nor turns its far end; both read the same after a rigid motion; the rest reads 0.
    #[test]
    fn the_example_poses_measure_their_parameters() {
        let mesh = tet_grid(9, 5, 5, 1.0, 0.5, 0.5).unwrap();
        let rest = mesh.vertices().to_vec();
        let bar = BarShape::new(&rest, 0, 2).unwrap();
        assert_eq!(bar.station(2).len(), 25, "a 5 x 5 layer");
        let at_rest = bar.measure(&rows(&rest));
        assert!(at_rest.twist.abs() < 1e-14 && at_rest.bend.abs() < 1e-14 && at_rest.s_bend.abs() < 1e-14);
        let twist = twist_pose(&rest, std::f64::consts::FRAC_PI_2);
        for pose in [rows(&twist), moved(&twist)] {
            let m = bar.measure(&pose);
            assert!((m.twist - std::f64::consts::FRAC_PI_2).abs() < 1e-12, "{m:?}");
            assert!(m.bend.abs() < 1e-12 && m.s_bend.abs() < 1e-12, "{m:?}");
        }
        let s = s_bend_pose(&rest, 0.6);
        for pose in [rows(&s), moved(&s)] {
            let m = bar.measure(&pose);
            assert!((m.s_bend - 0.6).abs() < 2e-3, "{m:?}");
            assert!(m.twist.abs() < 1e-12 && m.bend.abs() < 2e-3, "{m:?}");
        }
    }

    /// A bend of uniform curvature (the bar laid on a circular arc turning 0.8 rad) has bend
    /// 0.8 and S-bend 0 (to 1e-12).
    #[test]
    fn a_uniform_bend_has_no_s_bend() {
        let mesh = tet_grid(9, 5, 5, 1.0, 0.5, 0.5).unwrap();
        let rest = mesh.vertices().to_vec();
        let (turn, len) = (0.8, 1.0);
        let radius = len / turn;
        let arc: Vec<[f64; 3]> = rows(&rest)
            .iter()
            .map(|p| {
                let t = turn * p[0] / len;
                let r = radius - (p[1] - 0.25);
                [r * t.sin(), radius - r * t.cos(), p[2]]
            })
            .collect();
        let m = BarShape::new(&rest, 0, 2).unwrap().measure(&arc);
        assert!(
            (m.bend - turn).abs() < 1e-12 && m.s_bend.abs() < 1e-12 && m.twist.abs() < 1e-12,
            "{m:?}"
        );
    }

    #[test]
    fn bad_axes_and_flat_stations_are_refused() {
        let rest = tet_grid(3, 2, 2, 1.0, 0.5, 0.5).unwrap().vertices().to_vec();
        assert!(BarShape::new(&rest, 0, 0).is_err());
        assert!(BarShape::new(&rest, 3, 1).is_err());
        // Three points on a line per station.
        let line: Vec<f64> = (0..15).flat_map(|i| [(i / 3) as f64, (i % 3) as f64, 0.0]).collect();
        let e = BarShape::new(&line, 0, 2).unwrap_err().to_string();
        assert!(e.contains("not on a line"), "{e}");
    }
}
