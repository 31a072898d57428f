//! Seed tutorial 17's figures, reproduced by the cantilever experiment (library function).

use overtone_tutorial17::cantilever::{run_experiment, CantileverConfig};

/// Accepted relative deviation from the seed's printed figures.
const SEED_TOLERANCE: f64 = 0.03;

fn close(got: f64, want: f64) -> bool {
    ((got - want) / want).abs() <= SEED_TOLERANCE
}

#[test]
fn tutorial_17_tip_heights_and_rotation_errors() {
    let r = run_experiment(&CantileverConfig::default()).unwrap();
    eprintln!(
        "tip full {:.4} lma {:.4} skin {:.4}; rot lma peak {:.4} at {} deg, skin max {:.2e}; newton its full {:?}",
        r.tip_full,
        r.tip_lma,
        r.tip_skin,
        r.rot_err_lma_peak,
        r.rot_err_lma_peak_angle_deg,
        r.rot_err_skin_max,
        r.full.newton_iterations
    );
    assert!(close(r.tip_full, -3.48), "full tip {}", r.tip_full);
    assert!(close(r.tip_lma, -0.56), "LMA tip {}", r.tip_lma);
    assert!(close(r.tip_skin, -3.01), "skinning tip {}", r.tip_skin);
    assert!(
        close(r.rot_err_lma_peak, 0.342),
        "LMA rotation peak {}",
        r.rot_err_lma_peak
    );
    assert!((r.rot_err_lma_peak_angle_deg - 180.0).abs() <= 10.0);
    assert!(
        r.rotation.error_skinning.iter().all(|&e| e < 1e-8),
        "skinning {}",
        r.rot_err_skin_max
    );
    // The line search never accepted an energy increase, in any space.
    for run in [&r.full, &r.lma, &r.skinning] {
        assert!(
            run.max_energy_change <= 0.0,
            "{:?}: {}",
            run.space,
            run.max_energy_change
        );
        assert!(run.tip_heights.iter().all(|h| h.is_finite()));
    }
}
