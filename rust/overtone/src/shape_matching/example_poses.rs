//! Example poses of a bar lying along x, as in the seed's Fig. 1 and 8: a twist and an S shape.
//!
//! Both take rest positions (`n × 3` row-major) and return a pose of the same shape. The bar's
//! extent along x is `[x_min, x_max]` (length `L`), its cross-section centre `(y_c, z_c)` is
//! the bounding-box centre.

/// Twist about the bar's axis: the cross-section at `x` turns by
/// `θ(x) = angle · ((x − x_min)/L − 1/2)` radians about the line `(·, y_c, z_c)` (the ends turn
/// by `∓angle/2`). Lengths along x are kept; it is a pure torsion.
pub fn twist_pose(rest: &[f64], angle: f64) -> Vec<f64> {
    let (lo, hi) = crate::mesh::bounding_box(rest);
    let len = (hi[0] - lo[0]).max(f64::MIN_POSITIVE);
    let (yc, zc) = (0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2]));
    let mut out = Vec::with_capacity(rest.len());
    for p in rest.chunks_exact(3) {
        let t = angle * ((p[0] - lo[0]) / len - 0.5);
        let (c, s) = (t.cos(), t.sin());
        let (y, z) = (p[1] - yc, p[2] - zc);
        out.extend([p[0], yc + c * y - s * z, zc + s * y + c * z]);
    }
    out
}

/// S-shaped bend in the x-y plane: the axis becomes the curve of tangent angle
/// `φ(s) = amplitude · sin(2π s / L)` (arc length `s` from `x_min`, so the axis keeps its
/// length), and each cross-section stays perpendicular to it (`y` measured along the curve's
/// normal, `z` unchanged): an inextensible S-bend whose ends point the original way.
pub fn s_bend_pose(rest: &[f64], amplitude: f64) -> Vec<f64> {
    let (lo, hi) = crate::mesh::bounding_box(rest);
    let len = (hi[0] - lo[0]).max(f64::MIN_POSITIVE);
    let yc = 0.5 * (lo[1] + hi[1]);
    let phi = |s: f64| amplitude * (std::f64::consts::TAU * s / len).sin();
    // Centre line by the midpoint rule on a fine grid, interpolated linearly.
    const STEPS: usize = 4096;
    let ds = len / STEPS as f64;
    let mut curve = Vec::with_capacity(STEPS + 1);
    let (mut cx, mut cy) = (lo[0], yc);
    curve.push((cx, cy));
    for k in 0..STEPS {
        let f = phi((k as f64 + 0.5) * ds);
        cx += ds * f.cos();
        cy += ds * f.sin();
        curve.push((cx, cy));
    }
    let mut out = Vec::with_capacity(rest.len());
    for p in rest.chunks_exact(3) {
        let s = (p[0] - lo[0]).clamp(0.0, len);
        let u = s / ds;
        let k = (u.floor() as usize).min(STEPS - 1);
        let t = u - k as f64;
        let (x0, y0) = curve[k];
        let (x1, y1) = curve[k + 1];
        let (bx, by) = (x0 + t * (x1 - x0), y0 + t * (y1 - y0));
        let f = phi(s);
        let d = p[1] - yc;
        out.extend([bx - d * f.sin(), by + d * f.cos(), p[2]]);
    }
    out
}
