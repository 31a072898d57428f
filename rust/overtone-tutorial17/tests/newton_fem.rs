//! Newton's method on finite-element problems: quadratic convergence near the solution, no
//! accepted energy increase, and recovery from inverted elements without NaN. The method is
//! Overtone's `solve::newton_minimize`; the problem is tutorial 17's backward-Euler cantilever
//! (`SubspaceElastodynamics` in the full space, its directions from `SupernodalLlt`).

use overtone::solve::{newton_minimize, NewtonParams, NewtonProblem};
use overtone_tutorial17::cantilever::{Beam, CantileverConfig, SpaceKind};

fn small_beam() -> CantileverConfig {
    CantileverConfig {
        nx: 21,
        ny: 5,
        newton_tolerance: 1e-11,
        newton_max_iterations: 60,
        ..Default::default()
    }
}

#[test]
fn newton_converges_quadratically_on_a_neo_hookean_step() {
    let cfg = CantileverConfig {
        dt: 0.05,
        pin_stiffness: 1e5,
        ..small_beam()
    };
    let beam = Beam::new(&cfg).unwrap();
    let mut sim = beam
        .simulator(&cfg, beam.subspace(&cfg, SpaceKind::Full).unwrap())
        .unwrap();
    let rep = sim.step().unwrap();
    let g: Vec<f64> = rep.iterations.iter().map(|i| i.gradient_norm).collect();
    let s: Vec<f64> = rep.iterations.iter().map(|i| i.step_norm).collect();
    eprintln!("gradient norms {g:?} steps {s:?}");
    assert!(rep.iterations.iter().all(|i| i.new_energy <= i.energy));
    // Quadratic convergence of the iterates: ‖Δz_{k+1}‖ ≤ C ‖Δz_k‖² (C = 1 per unit length)
    // for every step above the round-off floor of the step (gradient round-off ~1e-7 over the
    // smallest Hessian eigenvalue ~M/h², about 1e-10; we stop comparing at 1e-9).
    let pairs: Vec<(f64, f64)> = s.windows(2).map(|w| (w[0], w[1])).filter(|&(_, b)| b > 1e-9).collect();
    assert!(pairs.len() >= 2, "{s:?}");
    for (a, b) in pairs {
        assert!(b <= 1.0 * a * a, "step went {a:e} -> {b:e}");
    }
    // And a thousandfold drop of the gradient per iteration near the solution.
    assert!(g[2] < 1e-3 * g[1] && g[3] < 1e-2 * g[2], "{g:?}");
    assert!(*g.last().unwrap() < 1e-7 * g[0]);
}

#[test]
fn inverted_start_stays_finite_and_recovers() {
    let cfg = small_beam();
    let beam = Beam::new(&cfg).unwrap();
    let mut sim = beam
        .simulator(&cfg, beam.subspace(&cfg, SpaceKind::Full).unwrap())
        .unwrap();
    let n = beam.mesh.n_vertices();
    // Target: the rest shape; start: the rest shape mirrored in x (every triangle inverted).
    sim.set_inertial_target(&beam.rest).unwrap();
    let mut z = beam.rest.clone();
    for v in 0..n {
        z[v] = -z[v];
    }
    let e0 = sim.energy(&z).unwrap();
    let mut g = vec![0.0; z.len()];
    sim.gradient(&z, &mut g).unwrap();
    assert!(e0.is_finite() && g.iter().all(|v| v.is_finite()));
    let params = NewtonParams {
        tolerance: 1e-9,
        max_iterations: 200,
        ..Default::default()
    };
    let rep = newton_minimize(&mut sim, &mut z, &params).unwrap();
    assert!(z.iter().all(|v| v.is_finite()));
    assert!(rep
        .iterations
        .iter()
        .all(|i| i.new_energy <= i.energy && i.energy.is_finite()));
    // Every triangle has positive area again.
    for e in 0..beam.mesh.n_elements() {
        let el = beam.mesh.element(e);
        let p = |a: usize, i: usize| z[i * n + el[a]];
        let area = (p(1, 0) - p(0, 0)) * (p(2, 1) - p(0, 1)) - (p(1, 1) - p(0, 1)) * (p(2, 0) - p(0, 0));
        assert!(area > 0.0, "element {e} still inverted");
    }
}
