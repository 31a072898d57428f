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
    /// For each vertex, the slots `e·(d+1) + a` where it appears (CSR, ascending).
    incidence: Vec<usize>,
    incidence_start: Vec<usize>,
}

/// Element count from which `Gᵀ P` gathers vertices on several threads.
pub(crate) const PARALLEL_MIN_ELEMENTS: usize = 1024;

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
        let n = mesh.n_vertices();
        let mut incidence_start = vec![0usize; n + 1];
        for &v in mesh.elements() {
            incidence_start[v + 1] += 1;
        }
        for v in 0..n {
            incidence_start[v + 1] += incidence_start[v];
        }
        let mut fill = incidence_start.clone();
        let mut incidence = vec![0usize; mesh.elements().len()];
        for (slot, &v) in mesh.elements().iter().enumerate() {
            incidence[fill[v]] = slot;
            fill[v] += 1;
        }
        Self {
            dim: d,
            n_vertices: n,
            elements: mesh.elements().to_vec(),
            grads,
            incidence,
            incidence_start,
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
    pub(crate) fn gradients(&self, e: usize) -> &[f64] {
        let s = (self.dim + 1) * self.dim;
        &self.grads[e * s..(e + 1) * s]
    }

    /// `F_e` of the coordinate-major field `x` (`n·d`), written row-major into `f` (`d·d`).
    #[inline]
    pub fn deformation_gradient(&self, e: usize, x: &[f64], f: &mut [f64]) {
        if self.dim == 2 {
            self.deformation_gradient_d::<2>(e, x, f)
        } else {
            self.deformation_gradient_d::<3>(e, x, f)
        }
    }

    /// `F_e` of the coordinate-major field `x` for a dimension known at compile time
    /// (`D` must equal [`dim`](Self::dim)).
    #[inline(always)]
    pub(crate) fn deformation_gradient_fixed<const D: usize>(&self, e: usize, x: &[f64]) -> [[f64; D]; D] {
        let n = self.n_vertices;
        let k = D + 1;
        let g = &self.grads[e * k * D..(e + 1) * k * D];
        let el = &self.elements[e * k..(e + 1) * k];
        let mut out = [[0.0; D]; D];
        for a in 0..k {
            let v = el[a];
            let ga = &g[a * D..(a + 1) * D];
            for i in 0..D {
                let xi = x[i * n + v];
                for j in 0..D {
                    out[i][j] += xi * ga[j];
                }
            }
        }
        out
    }

    #[inline(always)]
    fn deformation_gradient_d<const D: usize>(&self, e: usize, x: &[f64], f: &mut [f64]) {
        let out = self.deformation_gradient_fixed::<D>(e, x);
        for i in 0..D {
            f[i * D..(i + 1) * D].copy_from_slice(&out[i]);
        }
    }

    /// `y += Gᵀ P` for per-element `d × d` row-major matrices `P` (`m·d·d`): vertex `v` receives
    /// `Σ_{(e,a): e_a = v} P_e g_a` (coordinate-major `y`). Allocates the per-slot vectors; the
    /// solvers use [`element_slot_vectors`](Self::element_slot_vectors) and
    /// [`gather_slot_vectors`](Self::gather_slot_vectors) with their own buffers instead.
    pub(crate) fn add_transpose_apply(&self, p: &[f64], y: &mut [f64]) {
        let d = self.dim;
        let mut slots = vec![0.0; self.elements.len() * d];
        for e in 0..self.n_elements() {
            let pe = &p[e * d * d..(e + 1) * d * d];
            let out = &mut slots[e * (d + 1) * d..(e + 1) * (d + 1) * d];
            if d == 2 {
                self.element_slot_vectors::<2>(e, &[[pe[0], pe[1]], [pe[2], pe[3]]], out);
            } else {
                let m = [[pe[0], pe[1], pe[2]], [pe[3], pe[4], pe[5]], [pe[6], pe[7], pe[8]]];
                self.element_slot_vectors::<3>(e, &m, out);
            }
        }
        self.gather_slot_vectors(&slots, y);
    }
}

impl DeformationJacobian {
    /// The vertex forces of one element's stress: `out[a·d + i] = (P g_a)_i` for a `d × d`
    /// matrix `P` (so that `Gᵀ P` is the sum of these over the slots of each vertex).
    #[inline(always)]
    pub(crate) fn element_slot_vectors<const D: usize>(&self, e: usize, p: &[[f64; D]; D], out: &mut [f64]) {
        let g = &self.grads[e * (D + 1) * D..(e + 1) * (D + 1) * D];
        for a in 0..=D {
            for i in 0..D {
                let mut s = 0.0;
                for j in 0..D {
                    s += p[i][j] * g[a * D + j];
                }
                out[a * D + i] = s;
            }
        }
    }

    /// `y += Σ` over the slots of each vertex of per-slot `d`-vectors (`m·(d+1)·d`, from
    /// [`element_slot_vectors`](Self::element_slot_vectors)), coordinate-major `y`.
    ///
    /// Each vertex sums its slots in ascending order, so the result does not depend on the
    /// number of threads. Does not allocate.
    pub(crate) fn gather_slot_vectors(&self, slots: &[f64], y: &mut [f64]) {
        use rayon::prelude::*;
        let (d, n) = (self.dim, self.n_vertices);
        let column = |i: usize, col: &mut [f64], first: usize| {
            for (k, yv) in col.iter_mut().enumerate() {
                let v = first + k;
                let mut acc = 0.0;
                for &slot in &self.incidence[self.incidence_start[v]..self.incidence_start[v + 1]] {
                    acc += slots[slot * d + i];
                }
                *yv += acc;
            }
        };
        if self.n_elements() >= PARALLEL_MIN_ELEMENTS {
            const BLOCK: usize = 512;
            y.par_chunks_mut(n).enumerate().for_each(|(i, col)| {
                col.par_chunks_mut(BLOCK)
                    .enumerate()
                    .for_each(|(b, c)| column(i, c, b * BLOCK));
            });
        } else {
            for (i, col) in y.chunks_mut(n).enumerate() {
                column(i, col, 0);
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
