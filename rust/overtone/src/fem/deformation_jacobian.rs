//! The deformation-gradient operator G of linear simplices.

use crate::mesh::SimplexMesh;

/// Per-element gradients of the linear shape functions, which define `F = G x`.
///
/// For element `e` with rest edge matrix `D_m = [X₁ − X₀, …, X_d − X₀]` (`d × d`), the
/// deformation gradient of positions `x` is `F = D_s D_m⁻¹ = Σ_a x_a g_aᵀ` where `g_a` (a
/// `d`-vector) is row `a − 1` of `D_m⁻¹` for `a ≥ 1` and `g₀ = −Σ_{a≥1} g_a`.
///
/// Row `i` of `F` is the gradient of coordinate `i`, so `G = I_d ⊗ Ĝ` with the scalar operator
/// `Ĝ` (`m·d × n`) mapping one coordinate field to per-element gradients. Fields are stored
/// coordinate-major: an `n × d` field `x` is a slice of length `n·d` with coordinate `i` of
/// vertex `v` at `i·n + v`.
#[derive(Clone, Debug)]
pub struct DeformationJacobian {
    dim: usize,
    n_vertices: usize,
    elements: Vec<usize>,
    /// `m × (d+1) × d`: gradient `g_a` of element `e` at `((e·(d+1) + a)·d ..)`.
    grads: Vec<f64>,
}

impl DeformationJacobian {
    /// Builds the operator from the rest mesh (elements are validated non-degenerate).
    pub fn new(mesh: &SimplexMesh) -> Self {
        let d = mesh.dim();
        let k = d + 1;
        let mut grads = vec![0.0; mesh.n_elements() * k * d];
        for e in 0..mesh.n_elements() {
            let el = mesh.element(e);
            let x0 = mesh.vertex(el[0]);
            let g = &mut grads[e * k * d..(e + 1) * k * d];
            if d == 2 {
                let dm = nalgebra::Matrix2::from_fn(|i, j| mesh.vertex(el[j + 1])[i] - x0[i]);
                let inv = dm.try_inverse().expect("validated mesh has no degenerate element");
                for a in 1..k {
                    for j in 0..d {
                        g[a * d + j] = inv[(a - 1, j)];
                    }
                }
            } else {
                let dm = nalgebra::Matrix3::from_fn(|i, j| mesh.vertex(el[j + 1])[i] - x0[i]);
                let inv = dm.try_inverse().expect("validated mesh has no degenerate element");
                for a in 1..k {
                    for j in 0..d {
                        g[a * d + j] = inv[(a - 1, j)];
                    }
                }
            }
            for j in 0..d {
                g[j] = -(1..k).map(|a| g[a * d + j]).sum::<f64>();
            }
        }
        Self {
            dim: d,
            n_vertices: mesh.n_vertices(),
            elements: mesh.elements().to_vec(),
            grads,
        }
    }

    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of vertices `n` of the field it acts on.
    pub fn n_vertices(&self) -> usize {
        self.n_vertices
    }
    /// Number of elements `m`.
    pub fn n_elements(&self) -> usize {
        self.elements.len() / (self.dim + 1)
    }
    /// Vertex indices of element `e`.
    pub fn element(&self, e: usize) -> &[usize] {
        let k = self.dim + 1;
        &self.elements[e * k..(e + 1) * k]
    }
    /// Shape-function gradients of element `e`, `(d+1) × d` row-major.
    pub fn gradients(&self, e: usize) -> &[f64] {
        let s = (self.dim + 1) * self.dim;
        &self.grads[e * s..(e + 1) * s]
    }

    /// `F_e` of the coordinate-major field `x` (`n·d`), written row-major into `f` (`d·d`).
    #[inline]
    pub fn deformation_gradient(&self, e: usize, x: &[f64], f: &mut [f64]) {
        let (d, n) = (self.dim, self.n_vertices);
        let g = self.gradients(e);
        f[..d * d].fill(0.0);
        for (a, &v) in self.element(e).iter().enumerate() {
            for i in 0..d {
                let xi = x[i * n + v];
                for j in 0..d {
                    f[i * d + j] += xi * g[a * d + j];
                }
            }
        }
    }

    /// `y += Gᵀ P` for per-element `d × d` row-major matrices `P` (`m·d·d`), i.e. vertex `v_a`
    /// of element `e` receives `P_e g_a` (coordinate-major `y`). Sequential, so deterministic.
    pub fn add_transpose_apply(&self, p: &[f64], y: &mut [f64]) {
        let (d, n) = (self.dim, self.n_vertices);
        for e in 0..self.n_elements() {
            let g = self.gradients(e);
            let pe = &p[e * d * d..(e + 1) * d * d];
            for (a, &v) in self.element(e).iter().enumerate() {
                for i in 0..d {
                    let mut s = 0.0;
                    for j in 0..d {
                        s += pe[i * d + j] * g[a * d + j];
                    }
                    y[i * n + v] += s;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_pose_has_identity_gradient_and_affine_maps_are_exact() {
        let v = vec![0.1, 0.0, 0.0, 1.0, 0.2, 0.0, 0.0, 1.3, 0.1, 0.2, 0.1, 0.9];
        let mesh = SimplexMesh::new(3, v.clone(), vec![0, 1, 2, 3]).unwrap();
        let g = DeformationJacobian::new(&mesh);
        let n = 4;
        let a = [[1.1, 0.2, -0.3], [0.05, 0.9, 0.4], [-0.2, 0.1, 1.3]];
        let mut rest = vec![0.0; 12];
        let mut posed = vec![0.0; 12];
        for vtx in 0..n {
            for i in 0..3 {
                rest[i * n + vtx] = v[vtx * 3 + i];
                posed[i * n + vtx] = (0..3).map(|j| a[i][j] * v[vtx * 3 + j]).sum::<f64>() + 0.7;
            }
        }
        let mut f = [0.0; 9];
        g.deformation_gradient(0, &rest, &mut f);
        for i in 0..3 {
            for j in 0..3 {
                assert!((f[i * 3 + j] - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        g.deformation_gradient(0, &posed, &mut f);
        for i in 0..3 {
            for j in 0..3 {
                assert!((f[i * 3 + j] - a[i][j]).abs() < 1e-13);
            }
        }
    }
}
