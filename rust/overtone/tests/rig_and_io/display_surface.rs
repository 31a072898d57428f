//! A user's tet mesh with an embedded display surface: the reference release's `.obj` files
//! carried by barycentric coordinates of their tets.

use overtone::io::read_obj;
use overtone::scene::{load_scene, metronome_beam, DisplaySurface, MetronomeBeam, Scene};
use overtone::OvertoneError;

use crate::common::paths::reference_file;

/// Barycentric coordinates of `p` in tet `t` (written independently of the library's).
fn bary(sc: &Scene, t: usize, p: [f64; 3]) -> [f64; 4] {
    let e = sc.mesh.element(t);
    let x = |k: usize| sc.mesh.vertex(e[k]);
    let m = [
        [x(1)[0] - x(0)[0], x(2)[0] - x(0)[0], x(3)[0] - x(0)[0]],
        [x(1)[1] - x(0)[1], x(2)[1] - x(0)[1], x(3)[1] - x(0)[1]],
        [x(1)[2] - x(0)[2], x(2)[2] - x(0)[2], x(3)[2] - x(0)[2]],
    ];
    let r = [p[0] - x(0)[0], p[1] - x(0)[1], p[2] - x(0)[2]];
    let det3 = |a: [[f64; 3]; 3]| {
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let d = det3(m);
    let l: Vec<f64> = (0..3)
        .map(|c| {
            let mut mc = m;
            for row in 0..3 {
                mc[row][c] = r[row];
            }
            det3(mc) / d
        })
        .collect();
    [1.0 - l[0] - l[1] - l[2], l[0], l[1], l[2]]
}

/// Rest positions of the scene as an `n × 3` frame.
fn rest_frame(sc: &Scene) -> Vec<f64> {
    sc.mesh.vertices().to_vec()
}

/// Elephant, frog and fish: every display vertex is reproduced at rest from its tet (1e-9 of
/// the model size, file units), the vertices that a brute-force search over all tets finds
/// inside no tet are exactly the ones reported outside, and those lie within 0.1 % of the
/// mesh diagonal (normalised units; measured: elephant 245 vertices up to 4.4e-4, frog 381 up
/// to 6.3e-4, fish 1736 up to 9.4e-4).
#[test]
fn reference_display_surfaces_embed_in_their_tets() {
    for (name, n_obj) in [("elephant", 635), ("frog", 1085), ("fish", 3200)] {
        let sc = load_scene(&reference_file(name, "json")).unwrap();
        let obj = read_obj(&reference_file(name, "obj")).unwrap();
        let ds = DisplaySurface::new(&sc, &obj.vertices).unwrap();
        assert_eq!(ds.n_vertices(), n_obj, "{name}");
        let norm = sc.normalisation.unwrap();
        let mut x = vec![0.0; 3 * n_obj];
        ds.positions(&rest_frame(&sc), &mut x);
        for (a, b) in x.iter().zip(&obj.vertices) {
            assert!((a - b).abs() <= 1e-9 * norm.scale, "{name}: {a} vs {b}");
        }
        if name == "elephant" {
            // Brute force over every tet (1,502) for every vertex.
            let mut outside = 0;
            for v in obj.vertices.chunks_exact(3) {
                let p = [
                    (v[0] - norm.centre[0]) / norm.scale,
                    (v[1] - norm.centre[1]) / norm.scale,
                    (v[2] - norm.centre[2]) / norm.scale,
                ];
                let inside = (0..sc.mesh.n_elements()).any(|t| bary(&sc, t, p).iter().all(|&b| b >= -1e-10));
                if !inside {
                    outside += 1;
                }
            }
            assert_eq!(ds.embedding.outside, outside);
        }
        let diag = (0..3)
            .map(|i| {
                let c = sc.mesh.vertices().chunks_exact(3).map(|v| v[i]);
                (c.clone().fold(f64::NEG_INFINITY, f64::max) - c.fold(f64::INFINITY, f64::min)).powi(2)
            })
            .sum::<f64>()
            .sqrt();
        assert!(
            ds.embedding.outside > 0 && ds.embedding.max_distance <= 1e-3 * diag,
            "{name}"
        );
        assert_eq!(ds.warnings.len(), 1);
    }
}

/// A rigid motion of the tet mesh moves every display vertex rigidly, inside or outside
/// (barycentric coordinates sum to one): `x_s = c + s (R (X_s − c)/s + t)` to 1e-9 of the size.
#[test]
fn rigid_motion_carries_the_display_surface_rigidly() {
    let sc = load_scene(&reference_file("elephant", "json")).unwrap();
    let obj = read_obj(&reference_file("elephant", "obj")).unwrap();
    let ds = DisplaySurface::new(&sc, &obj.vertices).unwrap();
    let norm = sc.normalisation.unwrap();
    let (c, s) = (0.6f64.cos(), 0.6f64.sin());
    let rot = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let t = [0.3, -0.2, 0.5];
    let apply =
        |p: &[f64]| -> [f64; 3] { std::array::from_fn(|i| (0..3).map(|j| rot[i][j] * p[j]).sum::<f64>() + t[i]) };
    let frame: Vec<f64> = sc.mesh.vertices().chunks_exact(3).flat_map(apply).collect();
    let mut x = vec![0.0; obj.vertices.len()];
    ds.positions(&frame, &mut x);
    let mut u = vec![0.0; obj.vertices.len()];
    let disp: Vec<f64> = frame.iter().zip(sc.mesh.vertices()).map(|(a, b)| a - b).collect();
    ds.displacements(&disp, &mut u);
    for (k, v) in obj.vertices.chunks_exact(3).enumerate() {
        let local: Vec<f64> = (0..3).map(|i| (v[i] - norm.centre[i]) / norm.scale).collect();
        let moved = apply(&local);
        for i in 0..3 {
            let expected = norm.centre[i] + norm.scale * moved[i];
            assert!((x[3 * k + i] - expected).abs() <= 1e-9 * norm.scale);
            assert!((u[3 * k + i] - (expected - v[i])).abs() <= 1e-9 * norm.scale);
        }
    }
}

/// A surface far from the mesh (moved by twice the model's size) is refused with the vertex and
/// its distance named; a 2D scene is refused; NaN coordinates are refused.
#[test]
fn far_or_invalid_display_surfaces_are_refused() {
    let sc = load_scene(&reference_file("elephant", "json")).unwrap();
    let obj = read_obj(&reference_file("elephant", "obj")).unwrap();
    let scale = sc.normalisation.unwrap().scale;
    let moved: Vec<f64> = obj
        .vertices
        .iter()
        .enumerate()
        .map(|(k, x)| if k % 3 == 0 { x + 4.0 * scale } else { *x })
        .collect();
    let e = DisplaySurface::new(&sc, &moved).unwrap_err();
    assert!(matches!(e, OvertoneError::Setting(_)), "{e}");
    assert!(
        e.to_string().contains("vertex 0") && e.to_string().contains("from the tet mesh"),
        "{e}"
    );
    let beam = metronome_beam(MetronomeBeam::default()).unwrap();
    assert!(matches!(
        DisplaySurface::new(&beam, &[0.0, 0.0, 0.0]),
        Err(OvertoneError::Unsupported(_))
    ));
    let mut nan = obj.vertices.clone();
    nan[4] = f64::NAN;
    assert!(matches!(
        DisplaySurface::new(&sc, &nan),
        Err(OvertoneError::Input(overtone::InputError::NonFinite { .. }))
    ));
}
