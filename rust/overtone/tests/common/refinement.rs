//! Shared checks of the refinement tests (issue 13's criteria).

use overtone::scene::CharacterBake;

/// Per frame, the largest secondary displacement of a surface vertex of `baked`, after checking
/// every step's relative residual `‖JᵀMD u_c‖/(‖JᵀMD‖ ‖u_c‖)` is at most 1e-8 (`what` names the
/// run in the message).
pub fn surface_maxima(baked: &CharacterBake, what: &str) -> Vec<f64> {
    let worst = baked
        .simulation
        .steps
        .iter()
        .map(|s| s.relative_residual)
        .fold(0.0, f64::max);
    assert!(worst <= 1e-8, "{what}: residual {worst:e}");
    baked
        .displacements
        .iter()
        .map(|u| {
            u.chunks(3)
                .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
                .fold(0.0, f64::max)
        })
        .collect()
}

/// Issue 13's criteria on the per-frame maxima of a bake at the default lattice (`coarse`, `r`
/// cells) and at the 1.5x finer one (`fine`, `finer` cells), with `diagonal` the body's
/// bounding-box diagonal and the rig still from frame `still_from` on (1 s before the clip's
/// end): peak between 0.2 % and 6 % of the diagonal, peak ratio within 30 %, per-frame maxima
/// within 30 % (relative L2 over the clip), at most 0.3 % of the diagonal once still for 1 s.
/// Prints the figures after `label`.
pub fn check_refinement(label: &str, coarse: &[f64], fine: &[f64], diagonal: f64, still_from: usize) {
    let peak = |m: &[f64]| m.iter().cloned().fold(0.0, f64::max);
    let (pc, pf) = (peak(coarse), peak(fine));
    let diff = (coarse.iter().zip(fine).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
        / fine.iter().map(|b| b * b).sum::<f64>())
    .sqrt();
    let hold = |m: &[f64]| peak(&m[still_from..]);
    println!(
        "{label}: peak/diag {:.5} vs {:.5} (ratio {:.3}), per-frame difference {diff:.3}, hold/diag {:.2e} vs {:.2e}",
        pc / diagonal,
        pf / diagonal,
        pc / pf,
        hold(coarse) / diagonal,
        hold(fine) / diagonal
    );
    assert!(
        (0.002..=0.06).contains(&(pc / diagonal)),
        "peak {:.5} of the diagonal",
        pc / diagonal
    );
    assert!((pc / pf - 1.0).abs() <= 0.3, "peak ratio {:.3}", pc / pf);
    assert!(diff <= 0.3, "per-frame difference {diff:.3}");
    for (name, m) in [("automatic", coarse), ("finer", fine)] {
        assert!(
            hold(m) <= 0.003 * diagonal,
            "{name}: {:.5} of the diagonal after 1 s of stillness",
            hold(m) / diagonal
        );
    }
}
