//! Invariants of the FEM operators on 2D and 3D meshes.

use overtone::fem::{arap_energy, arap_gradient, lumped_mass, scalar_stiffness, DeformationJacobian};
use overtone::mesh::{element_volumes, tet_grid, triangle_grid, SimplexMesh};

use crate::common::random::noise;

fn meshes() -> Vec<SimplexMesh> {
    vec![
        triangle_grid(7, 4, 1.5, 0.6).unwrap(),
        tet_grid(4, 3, 5, 0.9, 0.5, 1.3).unwrap(),
    ]
}

fn coordinate_major(mesh: &SimplexMesh) -> Vec<f64> {
    let (n, d) = (mesh.n_vertices(), mesh.dim());
    let mut x = vec![0.0; n * d];
    for v in 0..n {
        for i in 0..d {
            x[i * n + v] = mesh.vertex(v)[i];
        }
    }
    x
}

/// Σ masses = ρ · Σ volumes = ρ · (box volume), to 1e-12 relative.
#[test]
fn masses_sum_to_density_times_volume() {
    for (mesh, exact) in meshes().iter().zip([1.5 * 0.6, 0.9 * 0.5 * 1.3]) {
        let vols = element_volumes(mesh);
        assert!((vols.iter().sum::<f64>() - exact).abs() < 1e-12 * exact);
        let m = lumped_mass(mesh, &vols, 1234.5);
        let total: f64 = m.iter().sum();
        assert!((total - 1234.5 * exact).abs() < 1e-12 * total, "{total}");
        assert!(m.iter().all(|&x| x > 0.0));
    }
}

/// `L̂ 1 = 0` (so `L = L̂ ⊗ I` annihilates every translation) and `L̂` is symmetric.
#[test]
fn stiffness_annihilates_translations() {
    for mesh in meshes() {
        let g = DeformationJacobian::new(&mesh);
        let w: Vec<f64> = element_volumes(&mesh).iter().map(|v| 3.7e4 * v).collect();
        let l = scalar_stiffness(&g, &w).unwrap();
        let n = mesh.n_vertices();
        let mut row_sum = vec![0.0; n];
        let mut scale: f64 = 0.0;
        let dense = l.to_dense();
        for c in 0..n {
            for r in 0..n {
                row_sum[r] += dense[(r, c)];
                scale = scale.max(dense[(r, c)].abs());
                assert!((dense[(r, c)] - dense[(c, r)]).abs() <= 1e-12 * scale.max(1.0));
            }
        }
        assert!(
            row_sum.iter().all(|s| s.abs() < 1e-12 * scale),
            "max |L 1| = {:e}",
            row_sum.iter().fold(0.0f64, |a, b| a.max(b.abs()))
        );
    }
}

/// `G` maps the rest positions to `F = I` on every element.
#[test]
fn rest_positions_have_identity_deformation_gradient() {
    for mesh in meshes() {
        let d = mesh.dim();
        let g = DeformationJacobian::new(&mesh);
        let x = coordinate_major(&mesh);
        let mut f = vec![0.0; d * d];
        for e in 0..mesh.n_elements() {
            g.deformation_gradient(e, &x, &mut f);
            for i in 0..d {
                for j in 0..d {
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((f[i * d + j] - want).abs() < 1e-13);
                }
            }
        }
    }
}

/// The ARAP gradient `Gᵀ(μ vol)(F − R)` matches central finite differences of the energy to
/// 1e-6 relative (step 1e-6 on a randomly deformed configuration).
#[test]
fn arap_gradient_matches_finite_differences() {
    for (k, mesh) in meshes().iter().enumerate() {
        let g = DeformationJacobian::new(mesh);
        let w: Vec<f64> = element_volumes(mesh).iter().map(|v| 2.0 * v).collect();
        let mut x = coordinate_major(mesh);
        for (xi, r) in x.iter_mut().zip(noise(11 + k as u64, 1 << 20)) {
            *xi += 0.15 * r;
        }
        let grad = arap_gradient(&g, &w, &x);
        let dir = noise(97 + k as u64, x.len());
        let h = 1e-6;
        let xp: Vec<f64> = x.iter().zip(&dir).map(|(a, b)| a + h * b).collect();
        let xm: Vec<f64> = x.iter().zip(&dir).map(|(a, b)| a - h * b).collect();
        let fd = (arap_energy(&g, &w, &xp) - arap_energy(&g, &w, &xm)) / (2.0 * h);
        let an: f64 = grad.iter().zip(&dir).map(|(a, b)| a * b).sum();
        assert!((fd - an).abs() <= 1e-6 * an.abs().max(1e-3), "fd {fd} vs analytic {an}");
        // Per-coordinate check on a few entries.
        for idx in [0, x.len() / 3, x.len() - 1] {
            let mut xp = x.clone();
            let mut xm = x.clone();
            xp[idx] += h;
            xm[idx] -= h;
            let fd = (arap_energy(&g, &w, &xp) - arap_energy(&g, &w, &xm)) / (2.0 * h);
            assert!(
                (fd - grad[idx]).abs() <= 1e-6 * grad[idx].abs().max(1e-3),
                "entry {idx}: fd {fd} vs {}",
                grad[idx]
            );
        }
    }
}

/// ARAP energy is zero on any rigid motion and positive otherwise.
#[test]
fn arap_energy_vanishes_on_rigid_motions() {
    let mesh = tet_grid(3, 3, 3, 1.0, 1.0, 1.0).unwrap();
    let g = DeformationJacobian::new(&mesh);
    let w = element_volumes(&mesh);
    let n = mesh.n_vertices();
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    let mut x = vec![0.0; 3 * n];
    for v in 0..n {
        let p = mesh.vertex(v);
        x[v] = c * p[0] - s * p[1] + 0.3;
        x[n + v] = s * p[0] + c * p[1] - 1.0;
        x[2 * n + v] = p[2] + 2.0;
    }
    assert!(arap_energy(&g, &w, &x) < 1e-26);
    x[0] += 0.1;
    assert!(arap_energy(&g, &w, &x) > 1e-6);
}
