//! Linear modal analysis: the lowest vibration modes `K u = ω² M u`.

use overtone::energy::{ElasticEnergy, EnergyModel};
use overtone::error::{OvertoneError, Result};
use overtone::fem::lumped_mass;
use overtone::mesh::{element_volumes, SimplexMesh};
use overtone::solve::{dense_generalized_eigen, Modes, DENSE_EIGEN_MAX_SIZE};

/// The `k` lowest vibration modes of linear elasticity with `μ = λ = 1` on every element and
/// the lumped mass with `ρ = 1` (the material only scales the eigenvalues of a homogeneous
/// body, not the modes). `N = n·d` coordinate-major rows. In 2D the first three modes are the
/// rigid motions (eigenvalue 0), in 3D the first six.
pub fn linear_modal_analysis(mesh: &SimplexMesh, k: usize) -> Result<Modes> {
    let mut energy = ElasticEnergy::new(mesh, EnergyModel::LinearElasticity, 1.0, 1.0)?;
    let (n, d) = (mesh.n_vertices(), mesh.dim());
    if n * d > DENSE_EIGEN_MAX_SIZE {
        return Err(OvertoneError::Unsupported(format!(
            "linear modal analysis is dense, limited to {DENSE_EIGEN_MAX_SIZE} unknowns; the mesh has {}",
            n * d
        )));
    }
    let mut rest = vec![0.0; n * d];
    for v in 0..n {
        for i in 0..d {
            rest[i * n + v] = mesh.vertex(v)[i];
        }
    }
    energy.hessian(&rest, false)?;
    let kd = energy.hessian_ref().to_dense();
    let m = lumped_mass(mesh, &element_volumes(mesh), 1.0);
    let mass: Vec<f64> = (0..d).flat_map(|_| m.iter().cloned()).collect();
    dense_generalized_eigen(&kd, &mass, k)
}
