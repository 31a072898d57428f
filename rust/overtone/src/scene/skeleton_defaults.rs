//! Default leak and stiffness fields of a skinned character, derived from its skeleton, so a
//! limb carried by one bone moves with it while flesh far from the bones jiggles.
//!
//! Each bone's axis is estimated from its weight region: the segment through the
//! `w²`-weighted centroid of the rest vertices along their principal direction, with half-length
//! `√(3 λ_max)` (a uniform rod of half-length `a` has variance `a²/3` along it). A vertex's
//! distance to the skeleton is the weight-averaged distance `r_v = Σ_b w_vb dist(x_v, S_b)` to
//! the axes of the bones that move it. Within [`CORE_RADIUS`] of the axes the tissue is a stiff
//! core (bone and the muscle around it): Young's modulus × [`CORE_STIFFNESS`] and leak `d = 1`
//! (its momentum is the rig's), fading smoothly to the material's own stiffness and the
//! depth-based leak at twice that distance. A thin limb (radius below the core radius) is all
//! core and follows its bone; a belly or a cheek far from the bones keeps the soft material.

use nalgebra::{Matrix3, SymmetricEigen, Vector3};

/// Core radius, in the character's normalised frame (longest half-extent 1): 0.06, about 5 cm
/// on a 1.8 m figure.
pub(crate) const CORE_RADIUS: f64 = 0.06;
/// Young's modulus multiplier inside the core. 4 (it was 20): with the core's leak `d = 1` a
/// limb already follows its bone; ×20 left 0.03-0.1 % of the diagonal of secondary motion on
/// the Khronos figures and the mannequin (issue 13 asks for 0.2-6 %).
pub(crate) const CORE_STIFFNESS: f64 = 4.0;

/// The skeleton-derived default fields, per vertex.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonDefaults {
    /// Leak `d_v ∈ [0, 1]`: `max(depth leak, core)`.
    pub leak: Vec<f64>,
    /// Stiffness multiplier `1 + (CORE_STIFFNESS − 1)·core ≥ 1`.
    pub stiffness: Vec<f64>,
    /// Core membership `∈ [0, 1]` (1 within the core radius, 0 beyond twice it).
    pub core: Vec<f64>,
}

/// Bone axes `(a, b)` (segment ends) from the weights (`n × m`) of a 3D mesh's vertices;
/// `None` for a bone that moves no vertex.
fn bone_axes(x: &[f64], w: &[f64], m: usize) -> Vec<Option<([f64; 3], [f64; 3])>> {
    let n = x.len() / 3;
    (0..m)
        .map(|b| {
            let (mut s, mut c, mut cc) = (0.0, Vector3::zeros(), Matrix3::zeros());
            for v in 0..n {
                let ww = w[v * m + b] * w[v * m + b];
                if ww == 0.0 {
                    continue;
                }
                let p = Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]);
                s += ww;
                c += ww * p;
                cc += ww * p * p.transpose();
            }
            if !(s > 0.0) {
                return None;
            }
            let c = c / s;
            let cov = cc / s - c * c.transpose();
            let eig = SymmetricEigen::new(cov);
            let k = eig.eigenvalues.imax();
            let half = (3.0 * eig.eigenvalues[k].max(0.0)).sqrt();
            let a = c - half * eig.eigenvectors.column(k);
            let e = c + half * eig.eigenvectors.column(k);
            Some(([a.x, a.y, a.z], [e.x, e.y, e.z]))
        })
        .collect()
}

fn segment_distance(p: &[f64], a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let ab: [f64; 3] = std::array::from_fn(|i| b[i] - a[i]);
    let ap: [f64; 3] = std::array::from_fn(|i| p[i] - a[i]);
    let l2: f64 = ab.iter().map(|x| x * x).sum();
    let t = if l2 > 0.0 {
        (ab.iter().zip(&ap).map(|(u, v)| u * v).sum::<f64>() / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (0..3).map(|i| (ap[i] - t * ab[i]).powi(2)).sum::<f64>().sqrt()
}

/// The skeleton defaults of a point set (`n × dim` row-major; `weights` `n × m` row-major,
/// `depth_leak` the depth-based default leak): as [`skeleton_defaults_on_body`] with the points
/// as their own body.
#[cfg(test)]
pub(crate) fn skeleton_defaults_of_points(
    x: &[f64],
    dim: usize,
    weights: &[f64],
    n_bones: usize,
    depth_leak: &[f64],
) -> SkeletonDefaults {
    skeleton_defaults_on_body(x, x, dim, weights, n_bones, depth_leak)
}

/// The skeleton-derived default fields ([`SkeletonDefaults`]), the distance to the skeleton measured on the body:
/// vertex `v` (at `x_v`, which also defines the bone axes) stands for the material at `body_v`
/// (`n × dim`; for a lattice vertex outside the surface, its nearest surface point; otherwise
/// `x_v` itself), and its distance is `r_v = min(r(x_v), r(body_v))`.
///
/// Why: a lattice cube the surface crosses is kept whole, so on a limb `k` cells across its
/// outer lattice vertices lie up to about a cell outside the skin. Measured there, a limb
/// thinner than the core radius would fall out of its own core at coarse lattices and into it
/// at fine ones, and the limb's stiffness and leak, hence its secondary motion, would change
/// with the resolution. Measured on the body, a thin limb is core at every resolution.
pub(crate) fn skeleton_defaults_on_body(
    x: &[f64],
    body: &[f64],
    dim: usize,
    weights: &[f64],
    n_bones: usize,
    depth_leak: &[f64],
) -> SkeletonDefaults {
    let n = x.len() / dim;
    if dim != 3 {
        return SkeletonDefaults {
            leak: depth_leak.to_vec(),
            stiffness: vec![1.0; n],
            core: vec![0.0; n],
        };
    }
    let axes = bone_axes(x, weights, n_bones);
    let m = n_bones;
    let core: Vec<f64> = (0..n)
        .map(|v| {
            let (mut r, mut rb, mut wsum) = (0.0, 0.0, 0.0);
            for (b, axis) in axes.iter().enumerate() {
                let wv = weights[v * m + b];
                if let (Some((a, e)), true) = (axis, wv > 0.0) {
                    r += wv * segment_distance(&x[3 * v..3 * v + 3], a, e);
                    rb += wv * segment_distance(&body[3 * v..3 * v + 3], a, e);
                    wsum += wv;
                }
            }
            if wsum == 0.0 {
                return 0.0;
            }
            let r = r.min(rb);
            // 1 inside the core radius, smoothstep to 0 at twice it.
            let t = ((r / wsum - CORE_RADIUS) / CORE_RADIUS).clamp(0.0, 1.0);
            1.0 - t * t * (3.0 - 2.0 * t)
        })
        .collect();
    SkeletonDefaults {
        leak: depth_leak.iter().zip(&core).map(|(d, c)| d.max(*c)).collect(),
        stiffness: core.iter().map(|c| 1.0 + (CORE_STIFFNESS - 1.0) * c).collect(),
        core,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lattice vertex 0.15 from a thin rod's axis (beyond twice the core radius) is not core
    /// measured where it lies, but is when it stands for a point of the rod's skin (radius
    /// 0.03): the core follows the body, not the lattice around it.
    #[test]
    fn core_is_measured_on_the_body() {
        let mut x = Vec::new();
        for k in 0..=20 {
            x.extend([k as f64 * 0.05, 0.0, 0.0]);
        }
        let far = x.len() / 3;
        x.extend([0.5, 0.15, 0.0]);
        let n = far + 1;
        let w = vec![1.0; n];
        let depth = vec![0.0; n];
        let own = skeleton_defaults_of_points(&x, 3, &w, 1, &depth);
        assert_eq!(own.core[far], 0.0);
        let mut body = x.clone();
        body[3 * far + 1] = 0.03;
        let on_body = skeleton_defaults_on_body(&x, &body, 3, &w, 1, &depth);
        assert_eq!(on_body.core[far], 1.0);
        assert_eq!(on_body.leak[far], 1.0);
        assert!((on_body.stiffness[far] - CORE_STIFFNESS).abs() < 1e-12);
        // The other vertices are on the axis: core either way.
        assert!(on_body.core[..far].iter().all(|&c| c == 1.0));
    }

    /// A thin rod (radius 0.03) and a thick block (half-width 0.3) each on one bone: the rod is
    /// all core (stiffness × CORE_STIFFNESS, leak 1), the block's far corners keep the
    /// material (stiffness 1, the depth leak).
    #[test]
    fn thin_limbs_are_core_and_far_flesh_is_not() {
        let mut verts = Vec::new();
        let mut w = Vec::new();
        for k in 0..=20 {
            for (dy, dz) in [(0.03, 0.0), (-0.03, 0.0), (0.0, 0.03), (0.0, -0.03)] {
                verts.extend([k as f64 * 0.05, dy, dz]);
                w.extend([1.0, 0.0]);
            }
        }
        let rod = verts.len() / 3;
        for k in 0..=10 {
            for (dy, dz) in [(0.3, 0.3), (-0.3, 0.3), (0.3, -0.3), (-0.3, -0.3), (0.0, 0.0)] {
                verts.extend([-1.0 + k as f64 * 0.06, dy, dz]);
                w.extend([0.0, 1.0]);
            }
        }
        let n = verts.len() / 3;
        let depth = vec![0.2; n];
        let f = skeleton_defaults_of_points(&verts, 3, &w, 2, &depth);
        for v in 0..rod {
            assert!(
                (f.stiffness[v] - CORE_STIFFNESS).abs() < 1e-12 && f.leak[v] == 1.0,
                "rod vertex {v}"
            );
        }
        for v in (rod..n).filter(|v| (v - rod) % 5 != 4) {
            assert!(
                f.stiffness[v] == 1.0 && f.leak[v] == 0.2,
                "block corner {v}: {}",
                f.stiffness[v]
            );
        }
    }
}

/// Gives a character's lattice scene its skeleton-derived defaults: the leak field (unless one
/// was painted) and the stiffness multipliers (multiplying any already set). `body_points`
/// (`n × 3`, the lattice's frame) is the body point each lattice vertex stands for (see
/// [`skeleton_defaults_on_body`]); the depth leak is zero outside the body's surface
/// (`outside_surface`, per lattice vertex; see
/// [`crate::leak::default_momentum_weights_in_body`]).
pub fn apply_skeleton_defaults(
    scene: &mut crate::scene::Scene,
    body_points: &[f64],
    outside_surface: &[bool],
) -> crate::error::Result<()> {
    let n = scene.mesh.n_vertices();
    if scene.mesh.dim() != 3 || body_points.len() != 3 * n {
        return Err(crate::error::OvertoneError::size(
            "body points",
            format!("{n} x 3 numbers on a 3D lattice"),
            body_points.len(),
        ));
    }
    crate::error::check_finite("body points", body_points, 3)?;
    let depth = crate::leak::default_momentum_weights_in_body(&scene.mesh, outside_surface)?;
    let sd = skeleton_defaults_on_body(
        scene.mesh.vertices(),
        body_points,
        3,
        &scene.weights,
        scene.n_bones,
        &depth,
    );
    if scene.momentum_weights.is_none() {
        scene.momentum_weights = Some(sd.leak);
    }
    scene.dynamics.stiffness = Some(match scene.dynamics.stiffness.take() {
        None => sd.stiffness,
        Some(s) => s.iter().zip(&sd.stiffness).map(|(a, b)| a * b).collect(),
    });
    Ok(())
}
