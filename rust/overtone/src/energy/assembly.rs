//! Assembly of an elastic energy over a mesh: total energy, gradient and (projected) Hessian.

use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use rayon::prelude::*;

use crate::energy::{check_dim, neohookean_hessian_projected_2d, project_spd, EnergyModel};
use crate::error::{check_finite, OvertoneError, Result};
use crate::fem::{DeformationJacobian, PARALLEL_MIN_ELEMENTS};
use crate::mesh::{element_volumes, SimplexMesh};

/// `Ψ(x) = Σ_e vol_e ψ(F_e(x))` over a mesh, with a uniform material `(μ, λ)`.
///
/// Positions `x` are coordinate-major fields (`n·d`, coordinate `i` of vertex `v` at
/// `i·n + v`), and so are the gradient and the rows and columns of the `n·d × n·d` Hessian. The
/// Hessian's sparsity pattern (both triangles, every diagonal entry present) is built once;
/// [`hessian`](Self::hessian) refills its values. Element Hessians
/// `K_e = vol_e Bₑᵀ (∂²ψ/∂F²) Bₑ` (`Bₑ = ∂vec F/∂xₑ`) are optionally projected to positive
/// semi-definite in `F`-space (`d² × d²`) before assembly, which makes every `K_e` PSD. Element
/// work runs in parallel; every sum is taken in a fixed order, so results do not depend on the
/// number of threads.
pub struct ElasticEnergy {
    model: EnergyModel,
    jac: DeformationJacobian,
    volumes: Vec<f64>,
    mu: f64,
    lambda: f64,
    symbolic: SymbolicSparseColMat<usize>,
    /// Per value, the element-local Hessian entries summed into it (CSR over values).
    contrib_start: Vec<usize>,
    contrib: Vec<usize>,
    /// Value index of each diagonal entry.
    diag: Vec<usize>,
    values: Vec<f64>,
    element_hessians: Vec<f64>,
    slots: Vec<f64>,
    projected: Vec<bool>,
}

impl std::fmt::Debug for ElasticEnergy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElasticEnergy")
            .field("model", &self.model)
            .field("mu", &self.mu)
            .field("lambda", &self.lambda)
            .field("elements", &self.volumes.len())
            .field("hessian_nonzeros", &self.values.len())
            .finish()
    }
}

impl ElasticEnergy {
    /// Precomputes shape gradients, volumes and the Hessian pattern. `mu` and `lambda` are the
    /// material's Lamé parameters (finite, `μ > 0`, `λ ≥ 0`).
    pub fn new(mesh: &SimplexMesh, model: EnergyModel, mu: f64, lambda: f64) -> Result<Self> {
        check_dim(mesh.dim())?;
        if !(mu.is_finite() && mu > 0.0) {
            return Err(OvertoneError::setting(
                "mu",
                mu,
                "the shear modulus must be finite and > 0",
            ));
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(OvertoneError::setting("lambda", lambda, "must be finite and >= 0"));
        }
        let (d, n, m) = (mesh.dim(), mesh.n_vertices(), mesh.n_elements());
        let k = (d + 1) * d;
        let nd = n * d;
        let jac = DeformationJacobian::new(mesh);
        let volumes = element_volumes(mesh);
        let dof = |e: usize, p: usize| (p % d) * n + mesh.element(e)[p / d];
        // Pattern: all dof pairs of each element, sorted by (column, row), deduplicated.
        let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(m * k * k);
        for e in 0..m {
            for p in 0..k {
                for q in 0..k {
                    pairs.push((dof(e, q), dof(e, p)));
                }
            }
        }
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut col_ptr = vec![0usize; nd + 1];
        for &(c, _) in &pairs {
            col_ptr[c + 1] += 1;
        }
        for c in 0..nd {
            col_ptr[c + 1] += col_ptr[c];
        }
        let row_idx: Vec<usize> = pairs.iter().map(|&(_, r)| r).collect();
        let nnz = row_idx.len();
        let position = |r: usize, c: usize| -> usize {
            let rows = &row_idx[col_ptr[c]..col_ptr[c + 1]];
            col_ptr[c] + rows.binary_search(&r).expect("entry is in the pattern")
        };
        let mut count = vec![0usize; nnz + 1];
        let mut slot_value = vec![0usize; m * k * k];
        for e in 0..m {
            for p in 0..k {
                for q in 0..k {
                    let v = position(dof(e, p), dof(e, q));
                    slot_value[(e * k + p) * k + q] = v;
                    count[v + 1] += 1;
                }
            }
        }
        for v in 0..nnz {
            count[v + 1] += count[v];
        }
        let mut fill = count.clone();
        let mut contrib = vec![0usize; m * k * k];
        for (s, &v) in slot_value.iter().enumerate() {
            contrib[fill[v]] = s;
            fill[v] += 1;
        }
        let diag = (0..nd).map(|r| position(r, r)).collect();
        let symbolic = SymbolicSparseColMat::new_checked(nd, nd, col_ptr, None, row_idx);
        Ok(Self {
            model,
            jac,
            volumes,
            mu,
            lambda,
            symbolic,
            contrib_start: count,
            contrib,
            diag,
            values: vec![0.0; nnz],
            element_hessians: vec![0.0; m * k * k],
            slots: vec![0.0; m * k],
            projected: vec![false; m],
        })
    }

    /// The energy density model.
    pub fn model(&self) -> EnergyModel {
        self.model
    }
    /// `(μ, λ)`.
    pub fn lame(&self) -> (f64, f64) {
        (self.mu, self.lambda)
    }
    /// Spatial dimension `d`.
    pub fn dim(&self) -> usize {
        self.jac.dim()
    }
    /// Number of vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.jac.n_vertices()
    }
    /// Number of unknowns `n·d`.
    pub fn n_dofs(&self) -> usize {
        self.jac.n_vertices() * self.jac.dim()
    }
    /// Rest volumes of the elements.
    pub fn volumes(&self) -> &[f64] {
        &self.volumes
    }

    fn check_x(&self, x: &[f64]) -> Result<()> {
        if x.len() != self.n_dofs() {
            return Err(OvertoneError::size("positions", self.n_dofs(), x.len()));
        }
        check_finite("positions", x, 1)
    }

    fn parallel(&self) -> bool {
        self.volumes.len() >= PARALLEL_MIN_ELEMENTS
    }

    /// `Ψ(x)`. Refuses positions of the wrong length or with NaN/Inf.
    pub fn energy(&self, x: &[f64]) -> Result<f64> {
        self.check_x(x)?;
        let d = self.dim();
        let per = |e: usize| {
            let mut f = [0.0; 9];
            self.jac.deformation_gradient(e, x, &mut f);
            self.volumes[e] * self.model.energy(d, &f, self.mu, self.lambda)
        };
        let m = self.volumes.len();
        let terms: Vec<f64> = if self.parallel() {
            (0..m).into_par_iter().map(per).collect()
        } else {
            (0..m).map(per).collect()
        };
        Ok(terms.iter().sum())
    }

    /// `g = ∇Ψ(x)` (overwritten, length `n·d`).
    pub fn gradient(&mut self, x: &[f64], g: &mut [f64]) -> Result<()> {
        self.check_x(x)?;
        if g.len() != x.len() {
            return Err(OvertoneError::size("gradient", x.len(), g.len()));
        }
        let d = self.dim();
        let k = (d + 1) * d;
        let (jac, vols, model, mu, lambda) = (&self.jac, &self.volumes, self.model, self.mu, self.lambda);
        let work = |(e, out): (usize, &mut [f64])| {
            let mut f = [0.0; 9];
            jac.deformation_gradient(e, x, &mut f);
            let mut p = [0.0; 9];
            model.gradient(d, &f, mu, lambda, &mut p);
            for v in p.iter_mut() {
                *v *= vols[e];
            }
            if d == 2 {
                jac.element_slot_vectors::<2>(e, &[[p[0], p[1]], [p[2], p[3]]], out);
            } else {
                jac.element_slot_vectors::<3>(e, &[[p[0], p[1], p[2]], [p[3], p[4], p[5]], [p[6], p[7], p[8]]], out);
            }
        };
        if self.parallel() {
            self.slots.par_chunks_mut(k).enumerate().for_each(work);
        } else {
            self.slots.chunks_mut(k).enumerate().for_each(work);
        }
        g.fill(0.0);
        self.jac.gather_slot_vectors(&self.slots, g);
        Ok(())
    }

    /// Refills the Hessian values at `x` (see [`values`](Self::values)); with `project`, each
    /// element's `F`-space Hessian is first projected to PSD. Returns the number of elements
    /// whose Hessian was modified by the projection.
    pub fn hessian(&mut self, x: &[f64], project: bool) -> Result<usize> {
        self.check_x(x)?;
        let d = self.dim();
        let k = (d + 1) * d;
        let dd = d * d;
        let (jac, vols, model, mu, lambda) = (&self.jac, &self.volumes, self.model, self.mu, self.lambda);
        let work = |(e, (out, flag)): (usize, (&mut [f64], &mut bool))| {
            if d == 2 {
                // Sizes known at compile time: the products below unroll completely.
                let f = jac.deformation_gradient_fixed::<2>(e, x);
                let f = [f[0][0], f[0][1], f[1][0], f[1][1]];
                let mut h = [0.0; 16];
                *flag = if project && model == EnergyModel::NeoHookean {
                    neohookean_hessian_projected_2d(&f, mu, lambda, &mut h)
                } else {
                    model.hessian(2, &f, mu, lambda, &mut h);
                    project && project_spd(4, &mut h)
                };
                let g: &[f64; 6] = jac.gradients(e).try_into().expect("2D: 3 vertices x 2");
                element_stiffness_2d(&h, g, vols[e], out.try_into().expect("2D: 6 x 6"));
                return;
            }
            let mut f = [0.0; 9];
            jac.deformation_gradient(e, x, &mut f);
            let mut h = [0.0; 81];
            *flag = if project && d == 2 && model == EnergyModel::NeoHookean {
                neohookean_hessian_projected_2d(&f, mu, lambda, &mut h[..16])
            } else {
                model.hessian(d, &f, mu, lambda, &mut h[..dd * dd]);
                project && project_spd(dd, &mut h[..dd * dd])
            };
            let g = jac.gradients(e);
            let vol = vols[e];
            // T[(i j), (b l)] = Σ_m H[(i j), (l m)] g_b[m]
            let mut t = [0.0; 9 * 12];
            for r in 0..dd {
                for b in 0..=d {
                    for l in 0..d {
                        let mut s = 0.0;
                        for mm in 0..d {
                            s += h[r * dd + l * d + mm] * g[b * d + mm];
                        }
                        t[r * k + b * d + l] = s;
                    }
                }
            }
            // K[(a i), (b l)] = vol Σ_j g_a[j] T[(i j), (b l)]
            for a in 0..=d {
                for i in 0..d {
                    let row = &mut out[(a * d + i) * k..(a * d + i + 1) * k];
                    for (col, o) in row.iter_mut().enumerate() {
                        let mut s = 0.0;
                        for j in 0..d {
                            s += g[a * d + j] * t[(i * d + j) * k + col];
                        }
                        *o = vol * s;
                    }
                }
            }
        };
        let kk = k * k;
        if self.parallel() {
            self.element_hessians
                .par_chunks_mut(kk)
                .zip(self.projected.par_iter_mut())
                .enumerate()
                .for_each(work);
        } else {
            self.element_hessians
                .chunks_mut(kk)
                .zip(self.projected.iter_mut())
                .enumerate()
                .for_each(work);
        }
        let (start, contrib, eh) = (&self.contrib_start, &self.contrib, &self.element_hessians);
        let gather = |(v, out): (usize, &mut f64)| {
            *out = contrib[start[v]..start[v + 1]].iter().map(|&s| eh[s]).sum();
        };
        if self.parallel() {
            self.values.par_iter_mut().enumerate().for_each(gather);
        } else {
            self.values.iter_mut().enumerate().for_each(gather);
        }
        Ok(self.projected.iter().filter(|&&p| p).count())
    }

    /// The Hessian's pattern (`n·d × n·d`, both triangles, sorted rows).
    pub fn pattern(&self) -> &SymbolicSparseColMat<usize> {
        &self.symbolic
    }
    /// Values of the last [`hessian`](Self::hessian), aligned with [`pattern`](Self::pattern).
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// Value index of each diagonal entry `(r, r)`, for adding mass or penalty terms.
    pub fn diagonal_positions(&self) -> &[usize] {
        &self.diag
    }
    /// The last Hessian as a sparse matrix view.
    pub fn hessian_ref(&self) -> SparseColMatRef<'_, usize, f64> {
        SparseColMatRef::new(self.symbolic.as_ref(), &self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::tet_grid;
    use crate::mesh::triangle_grid;

    /// Accepted relative error of the assembled derivatives against central differences.
    const ASSEMBLY_FD_TOLERANCE: f64 = 1e-6;

    fn perturbed(mesh: &SimplexMesh, amp: f64) -> Vec<f64> {
        let (n, d) = (mesh.n_vertices(), mesh.dim());
        let mut x = vec![0.0; n * d];
        for v in 0..n {
            for i in 0..d {
                let s = ((v * 7 + i * 13) as f64 * 0.731).sin();
                x[i * n + v] = mesh.vertex(v)[i] * (1.0 + 0.1 * i as f64) + amp * s;
            }
        }
        x
    }

    #[test]
    fn assembled_gradient_and_hessian_match_finite_differences() {
        let meshes = [
            triangle_grid(4, 3, 1.0, 0.6).unwrap(),
            tet_grid(3, 2, 2, 1.0, 0.5, 0.5).unwrap(),
        ];
        for mesh in &meshes {
            for model in [
                EnergyModel::NeoHookean,
                EnergyModel::LinearElasticity,
                EnergyModel::Corotational,
            ] {
                let mut en = ElasticEnergy::new(mesh, model, 3.0, 5.0).unwrap();
                let x = perturbed(mesh, 0.05);
                let nd = x.len();
                let mut g = vec![0.0; nd];
                en.gradient(&x, &mut g).unwrap();
                en.hessian(&x, false).unwrap();
                let h = en.hessian_ref().to_dense();
                let step = 1e-6;
                let mut gp = vec![0.0; nd];
                let mut gm = vec![0.0; nd];
                let (mut err_g, mut err_h, mut norm_g, mut norm_h) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
                for c in 0..nd {
                    let mut xp = x.clone();
                    let mut xm = x.clone();
                    xp[c] += step;
                    xm[c] -= step;
                    let fd = (en.energy(&xp).unwrap() - en.energy(&xm).unwrap()) / (2.0 * step);
                    err_g = err_g.max((fd - g[c]).abs());
                    norm_g = norm_g.max(g[c].abs());
                    en.gradient(&xp, &mut gp).unwrap();
                    en.gradient(&xm, &mut gm).unwrap();
                    for r in 0..nd {
                        let fd = (gp[r] - gm[r]) / (2.0 * step);
                        err_h = err_h.max((fd - h[(r, c)]).abs());
                        norm_h = norm_h.max(h[(r, c)].abs());
                    }
                }
                assert!(
                    err_g < ASSEMBLY_FD_TOLERANCE * norm_g.max(1.0),
                    "{model:?} gradient {err_g}"
                );
                assert!(
                    err_h < ASSEMBLY_FD_TOLERANCE * norm_h.max(1.0),
                    "{model:?} hessian {err_h}"
                );
            }
        }
    }

    #[test]
    fn projected_hessian_is_psd_and_inverted_elements_stay_finite() {
        let mesh = triangle_grid(5, 4, 1.0, 1.0).unwrap();
        let mut en = ElasticEnergy::new(&mesh, EnergyModel::NeoHookean, 1.0, 10.0).unwrap();
        // Mirror the mesh: every element inverted.
        let n = mesh.n_vertices();
        let mut x = perturbed(&mesh, 0.0);
        for v in 0..n {
            x[v] = -x[v];
        }
        let e = en.energy(&x).unwrap();
        let mut g = vec![0.0; 2 * n];
        en.gradient(&x, &mut g).unwrap();
        let clamped = en.hessian(&x, true).unwrap();
        assert!(e.is_finite() && e > 0.0 && g.iter().all(|v| v.is_finite()));
        assert!(clamped > 0, "inverted neo-Hookean elements have indefinite Hessians");
        let h = en.hessian_ref().to_dense();
        let eig = h.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let lmax = eig.iter().cloned().fold(0.0, f64::max);
        assert!(
            eig.iter().all(|&l| l > -1e-10 * lmax),
            "min eigenvalue {:?}",
            eig.first()
        );
    }

    #[test]
    fn results_do_not_depend_on_the_number_of_threads() {
        let mesh = triangle_grid(40, 20, 2.0, 1.0).unwrap();
        assert!(mesh.n_elements() >= PARALLEL_MIN_ELEMENTS);
        let x = perturbed(&mesh, 0.03);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut en = ElasticEnergy::new(&mesh, EnergyModel::NeoHookean, 2.0, 7.0).unwrap();
                let mut g = vec![0.0; x.len()];
                en.gradient(&x, &mut g).unwrap();
                en.hessian(&x, true).unwrap();
                (en.energy(&x).unwrap(), g, en.values().to_vec())
            })
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.0.to_bits(), b.0.to_bits());
        assert!(a.1.iter().zip(&b.1).all(|(p, q)| p.to_bits() == q.to_bits()));
        assert!(a.2.iter().zip(&b.2).all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}

/// `K[(a i), (b l)] = vol Σ_{j,m} g_a[j] H[(i j), (l m)] g_b[m]`: a triangle's `6 × 6` stiffness
/// (rows and columns ordered vertex-major, `a·2 + i`) from the `4 × 4` Hessian `H` of `ψ` in
/// `F` (row-major `F`), the shape-function gradients `g` (`3 × 2`) and the area `vol`.
#[inline(always)]
fn element_stiffness_2d(h: &[f64; 16], g: &[f64; 6], vol: f64, out: &mut [f64; 36]) {
    // T[(i j), (b l)] = Σ_m H[(i j), (l m)] g_b[m]
    let mut t = [[0.0; 6]; 4];
    for r in 0..4 {
        for b in 0..3 {
            for l in 0..2 {
                t[r][b * 2 + l] = h[r * 4 + l * 2] * g[b * 2] + h[r * 4 + l * 2 + 1] * g[b * 2 + 1];
            }
        }
    }
    for a in 0..3 {
        for i in 0..2 {
            for col in 0..6 {
                out[(a * 2 + i) * 6 + col] = vol * (g[a * 2] * t[i * 2][col] + g[a * 2 + 1] * t[i * 2 + 1][col]);
            }
        }
    }
}
