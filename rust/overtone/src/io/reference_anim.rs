//! Animation files of the Complementary Dynamics C++ release (`*_anim.txt`).
//!
//! Both readers return, per frame, one `3 × 4` row-major affine transform `[Q | T]` per handle
//! (bone), mapping rest positions to posed positions in the normalised frame of the scene
//! (positions divided by the scene scale `s`; translations in the file are divided by `s`).

use nalgebra::{Matrix3, Vector3};
use std::path::Path;

use crate::error::{check_finite, OvertoneError, Result};
use crate::io::tokens::{plausible_limit, read_text, Tokens};

/// `E(ex, ey, ez) = Rz(ez) Ry(ey) Rx(ex)`, angles in degrees about the world axes.
pub(crate) fn euler_zyx_degrees(ex: f64, ey: f64, ez: f64) -> Matrix3<f64> {
    let (x, y, z) = (ex.to_radians(), ey.to_radians(), ez.to_radians());
    let rx = Matrix3::new(1.0, 0.0, 0.0, 0.0, x.cos(), -x.sin(), 0.0, x.sin(), x.cos());
    let ry = Matrix3::new(y.cos(), 0.0, y.sin(), 0.0, 1.0, 0.0, -y.sin(), 0.0, y.cos());
    let rz = Matrix3::new(z.cos(), -z.sin(), 0.0, z.sin(), z.cos(), 0.0, 0.0, 0.0, 1.0);
    rz * ry * rx
}

/// The caller's side of an animation: positions `k × 3`, bones naming existing joints, and a
/// scene scale that is finite and `> 0` (translations are divided by it).
fn check_rig_inputs(points: &[f64], bones: &[(usize, usize)], scale: f64) -> Result<()> {
    if points.len() % 3 != 0 {
        return Err(OvertoneError::size(
            "joint or handle positions",
            "k x 3 numbers",
            points.len(),
        ));
    }
    check_finite("joint or handle positions", points, 3)?;
    let k = points.len() / 3;
    if let Some((b, &(s, e))) = bones.iter().enumerate().find(|(_, &(s, e))| s >= k || e >= k) {
        return Err(OvertoneError::setting(
            "bones",
            format!("bone {b} = ({s}, {e})"),
            format!("joints are 0..{k}"),
        ));
    }
    if !(scale.is_finite() && scale > 0.0) {
        return Err(OvertoneError::setting(
            "scale",
            scale,
            "the scene scale must be finite and > 0",
        ));
    }
    Ok(())
}

fn triple(t: &mut Tokens, what: &str) -> Result<Vector3<f64>> {
    Ok(Vector3::new(t.f64(what)?, t.f64(what)?, t.f64(what)?))
}

fn push_affine(out: &mut Vec<f64>, q: &Matrix3<f64>, t: &Vector3<f64>) {
    for i in 0..3 {
        out.extend([q[(i, 0)], q[(i, 1)], q[(i, 2)], t[i]]);
    }
}

/// Parses the text of a point-handle animation (`path` only names it in errors); see
/// [`read_point_handle_anim`].
pub fn parse_point_handle_anim(path: &Path, text: &str, handles: &[f64], scale: f64) -> Result<Vec<Vec<f64>>> {
    check_rig_inputs(handles, &[], scale)?;
    let limit = plausible_limit(text);
    let mut t = Tokens::new(path, text);
    let nh = t.count("number of handles", limit)?;
    let nf = t.count("number of frames", limit)?;
    if nh != handles.len() / 3 {
        return Err(t.error(format!(
            "animates {nh} handles but the handle file has {}",
            handles.len() / 3
        )));
    }
    let mut rest = Vec::with_capacity(nh);
    for h in 0..nh {
        let r = triple(&mut t, &format!("rest translation of handle {h}"))?;
        let e = triple(&mut t, &format!("rest rotation of handle {h}"))?;
        rest.push((r, euler_zyx_degrees(e[0], e[1], e[2])));
    }
    let mut frames = Vec::with_capacity(nf);
    for f in 0..nf {
        let mut out = Vec::with_capacity(nh * 12);
        for (h, (r, r0)) in rest.iter().enumerate() {
            let what = format!("frame {f}, handle {h}");
            let tr = triple(&mut t, &what)?;
            let e = triple(&mut t, &what)?;
            let q = euler_zyx_degrees(e[0], e[1], e[2]) * r0.transpose();
            let c = Vector3::new(handles[3 * h], handles[3 * h + 1], handles[3 * h + 2]);
            let tt = c - q * c + (tr - r) / scale;
            push_affine(&mut out, &q, &tt);
        }
        frames.push(out);
    }
    if !t.is_empty() {
        return Err(t.error("more numbers than the header's handle and frame counts"));
    }
    Ok(frames)
}

/// A skeleton's hierarchy derived from its bone edges.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonAnim {
    /// Parent bone of each bone (`None` for roots): the last bone whose end joint is this bone's
    /// start joint.
    pub parents: Vec<Option<usize>>,
    /// Per frame, per bone, `3 × 4` row-major transforms.
    pub frames: Vec<Vec<f64>>,
}

/// Skeleton animation: header `nb nf`; root rest translation `r₀`, root rest Euler angles, one
/// rest Euler triple per bone (its rest axes `R_b`); per frame the root Euler angles, the root
/// translation `t` and one Euler triple `e_b` per bone.
///
/// Relative rotation of bone `b`: `ΔQ_b = R_b E(e_b) R_bᵀ` (angles about the bone's rest
/// axes); with more than one root each root bone is post-multiplied by the root rotation
/// `R_root E(root) R_rootᵀ`; roots translate by `(t − r₀)/s`. Forward kinematics (each bone
/// rotates about its start joint `r_b`): a root has `Q = ΔQ`, `T = r_b − ΔQ r_b + ΔT`; a child of
/// `p` has `Q = Q_p ΔQ`, `T = T_p + Q_p (r_b + ΔT) − Q r_b`.
pub fn read_skeleton_anim(path: &Path, joints: &[f64], bones: &[(usize, usize)], scale: f64) -> Result<SkeletonAnim> {
    parse_skeleton_anim(path, &read_text(path)?, joints, bones, scale)
}

/// Parses the text of a skeleton animation (`path` only names it in errors); see
/// [`read_skeleton_anim`].
pub fn parse_skeleton_anim(
    path: &Path,
    text: &str,
    joints: &[f64],
    bones: &[(usize, usize)],
    scale: f64,
) -> Result<SkeletonAnim> {
    check_rig_inputs(joints, bones, scale)?;
    let limit = plausible_limit(text);
    let mut t = Tokens::new(path, text);
    let nb = t.count("number of bones", limit)?;
    let nf = t.count("number of frames", limit)?;
    if nb != bones.len() {
        return Err(t.error(format!("animates {nb} bones but the skeleton file has {}", bones.len())));
    }
    let parents: Vec<Option<usize>> = bones
        .iter()
        .map(|&(start, _)| bones.iter().rposition(|&(_, end)| end == start))
        .collect();
    // Parents before children: repeatedly take bones whose parent is already placed.
    let mut order = Vec::with_capacity(nb);
    let mut placed = vec![false; nb];
    while order.len() < nb {
        let before = order.len();
        for b in 0..nb {
            if !placed[b] && parents[b].map(|p| placed[p]).unwrap_or(true) {
                placed[b] = true;
                order.push(b);
            }
        }
        if order.len() == before {
            return Err(t.error("the bone hierarchy has a cycle"));
        }
    }
    let n_roots = parents.iter().filter(|p| p.is_none()).count();
    let r0 = triple(&mut t, "root rest translation")?;
    let re = triple(&mut t, "root rest rotation")?;
    let r_root = euler_zyx_degrees(re[0], re[1], re[2]);
    let mut r_bone = Vec::with_capacity(nb);
    for b in 0..nb {
        let e = triple(&mut t, &format!("rest rotation of bone {b}"))?;
        r_bone.push(euler_zyx_degrees(e[0], e[1], e[2]));
    }
    let joint = |j: usize| Vector3::new(joints[3 * j], joints[3 * j + 1], joints[3 * j + 2]);
    let mut frames = Vec::with_capacity(nf);
    let mut q = vec![Matrix3::identity(); nb];
    let mut tr = vec![Vector3::zeros(); nb];
    for f in 0..nf {
        let what = format!("frame {f}");
        let re = triple(&mut t, &what)?;
        let rt = triple(&mut t, &what)?;
        let q_root = r_root * euler_zyx_degrees(re[0], re[1], re[2]) * r_root.transpose();
        let mut dq = Vec::with_capacity(nb);
        for b in 0..nb {
            let e = triple(&mut t, &what)?;
            let mut d = r_bone[b] * euler_zyx_degrees(e[0], e[1], e[2]) * r_bone[b].transpose();
            if parents[b].is_none() && n_roots > 1 {
                d *= q_root;
            }
            dq.push(d);
        }
        for &b in &order {
            let r = joint(bones[b].0);
            match parents[b] {
                None => {
                    let dt = (rt - r0) / scale;
                    q[b] = dq[b];
                    tr[b] = r - dq[b] * r + dt;
                }
                Some(p) => {
                    q[b] = q[p] * dq[b];
                    tr[b] = tr[p] + q[p] * r - q[b] * r;
                }
            }
        }
        let mut out = Vec::with_capacity(nb * 12);
        for b in 0..nb {
            push_affine(&mut out, &q[b], &tr[b]);
        }
        frames.push(out);
    }
    if !t.is_empty() {
        return Err(t.error("more numbers than the header's bone and frame counts"));
    }
    Ok(SkeletonAnim { parents, frames })
}
