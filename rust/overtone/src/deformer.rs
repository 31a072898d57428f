//! The host-facing deformer: a skinned surface in, a complementary displacement per vertex out,
//! one pose at a time (what a DCC deformer node calls every frame).

use std::path::Path;

use crate::cache::CacheStatus;
use crate::dynamics::{CdSolver, Integrator, LocalGlobalParams, PhysicsClock, StepReport, PHYSICS_RATE};
use crate::error::{check_finite, NumericalError, OvertoneError, Result};
use crate::progress::Progress;
use crate::rig::{compose_affine, limit_displacement, FramePath, RigJump};
use crate::scene::{Character, SceneDynamics, SolverKind, SurfaceMorphs};
use crate::settings::{DeformerParams, Settings, Solver, SETTINGS};

/// Complementary dynamics for a host's skinned surface.
///
/// Created once from the rest surface, its LBS weights, an optional painted leak field and the
/// first pose; then [`step`](Self::step) takes each following pose (per bone, the `3 × 4` skin
/// transform from bind space to posed world space — in Blender `P_b · R_b⁻¹`) and writes the
/// complementary displacement of every surface vertex (world units), which the host adds to its
/// own skinned positions. Invalid input is refused before any state changes; with the fast
/// solver a step allocates nothing.
pub struct SurfaceDeformer {
    character: Character,
    /// The lattice scene's solver (fast, full-order ARAP, or Newton for a neo-Hookean model).
    solver: Box<dyn CdSolver>,
    to_normalised: [f64; 12],
    from_normalised: [f64; 12],
    pose: Vec<f64>,
    /// The pose per rig column of the lattice scene (bones repeated per surface piece).
    column_pose: Vec<f64>,
    params: Vec<f64>,
    /// Scratch: the lattice's displacement (`n × 3`), for solvers without an embedded readout
    /// (see [`CdSolver::prepare_embedded`]).
    lattice_u: Vec<f64>,
    last: Option<StepReport>,
    cache: CacheStatus,
    /// Output multiplier.
    strength: f64,
    /// Solver steps held at the current pose after a bind or a reset (`preroll / dt`, rounded).
    preroll_frames: usize,
    /// The fixed physics clock the solver steps on (implicit midpoint: `1/`[`PHYSICS_RATE`] s a
    /// step, whatever the host's frame rate); `None` with backward Euler (the seeds' scheme:
    /// one step per host frame, `1/fps` s).
    clock: Option<PhysicsClock>,
    /// The rig between the host's frames ([`FramePath`]) and at the current physics step's
    /// instant.
    path: FramePath,
    params_step: Vec<f64>,
    /// Cut detection on the normalised rig parameters, and the last pose's parameters.
    jump: Option<(RigJump, f64)>,
    params_prev: Vec<f64>,
    cuts: usize,
    /// First surface vertex of each part, and the total (`parts + 1` offsets).
    part_offsets: Vec<usize>,
    /// The settings of the bind (the animatable ones as last set).
    settings: Settings,
    /// The bind surface's bounding-box diagonal (world units): `max_displacement`'s unit.
    diagonal: f64,
}

/// One skinned mesh of a body: a host's mesh bound to the body's skeleton.
#[derive(Clone, Copy, Debug, Default)]
pub struct SurfacePart<'a> {
    /// Bind-space positions, `n_i × 3` row-major (the host's units).
    pub vertices: &'a [f64],
    /// Triangles, `t_i × 3`, indices into this part's vertices.
    pub triangles: &'a [usize],
    /// LBS weights, `n_i × bones` row-major, rows summing to one.
    pub weights: &'a [f64],
    /// Blendshape offsets, `T × n_i × 3` (empty without blendshapes).
    pub morph_deltas: &'a [f64],
    /// A painted leak field, `n_i` values (all parts or none): per vertex `>= 0` where painted
    /// (0: the secondary motion may carry the rig's momentum, 1: it may not), `-1` where
    /// unpainted (the default field there).
    pub leak: Option<&'a [f64]>,
    /// A painted stiffness field, `n_i` values (all parts or none): per vertex a multiplier of
    /// Young's modulus `> 0` where painted (10: ten times stiffer, less secondary motion), `-1`
    /// where unpainted (1). It changes the precompute (a new sidecar key).
    pub stiffness: Option<&'a [f64]>,
}

/// One frame's rig: per bone the `3 × 4` row-major skin transform from bind space to posed world
/// space (`bones × 12`), and the `T` blendshape weights (empty without blendshapes).
#[derive(Clone, Copy, Debug, Default)]
pub struct PoseInput<'a> {
    pub transforms: &'a [f64],
    pub morph_weights: &'a [f64],
}

/// Everything a bind needs: the parts (several meshes bound to one skeleton are simulated as
/// one body), the bone and blendshape counts, the first pose and an optional sidecar.
#[derive(Clone, Debug, Default)]
pub struct BodyInput<'a> {
    pub parts: Vec<SurfacePart<'a>>,
    pub n_bones: usize,
    /// Blendshape targets `T` (0 without).
    pub n_targets: usize,
    /// The first frame's rig (`bones × 12` transforms, `T` blendshape weights).
    pub first_pose: PoseInput<'a>,
    pub sidecar: Option<&'a Path>,
}

/// The parts of a body concatenated into one surface (vertex order: part 0, part 1, …).
struct Concatenated {
    vertices: Vec<f64>,
    triangles: Vec<usize>,
    weights: Vec<f64>,
    morph_deltas: Vec<f64>,
    leak: Option<Vec<f64>>,
    stiffness: Option<Vec<f64>>,
    offsets: Vec<usize>,
}

fn concatenate(body: &BodyInput<'_>) -> Result<Concatenated> {
    if body.parts.is_empty() {
        return Err(OvertoneError::setting("parts", 0, "a body needs at least one mesh"));
    }
    let (m, nt) = (body.n_bones, body.n_targets);
    let mut offsets = vec![0];
    for (i, p) in body.parts.iter().enumerate() {
        let n = p.vertices.len() / 3;
        if p.vertices.is_empty() || p.vertices.len() % 3 != 0 {
            return Err(OvertoneError::size(
                format!("part {i} vertices"),
                "a non-empty multiple of 3 numbers",
                p.vertices.len(),
            ));
        }
        if p.weights.len() != n * m {
            return Err(OvertoneError::size(
                format!("part {i} weights"),
                format!("{n} vertices x {m} bones"),
                p.weights.len(),
            ));
        }
        if p.morph_deltas.len() != nt * n * 3 {
            return Err(OvertoneError::size(
                format!("part {i} blendshape offsets"),
                format!("{nt} targets x {n} vertices x 3"),
                p.morph_deltas.len(),
            ));
        }
        if let Some(&bad) = p.triangles.iter().find(|&&t| t >= n) {
            return Err(OvertoneError::size(
                format!("part {i} triangle index"),
                format!("< {n} (indices are per part)"),
                bad,
            ));
        }
        for (name, given, first) in [
            ("leak", p.leak.is_some(), body.parts[0].leak.is_some()),
            ("stiffness", p.stiffness.is_some(), body.parts[0].stiffness.is_some()),
        ] {
            if given != first {
                return Err(OvertoneError::setting(
                    name,
                    format!("part {i}"),
                    format!("a painted {name} field must be given for every part or for none"),
                ));
            }
        }
        offsets.push(offsets[i] + n);
    }
    let total = offsets[body.parts.len()];
    let mut out = Concatenated {
        vertices: Vec::with_capacity(3 * total),
        triangles: Vec::new(),
        weights: Vec::with_capacity(total * m),
        morph_deltas: vec![0.0; nt * total * 3],
        leak: body.parts[0].leak.map(|_| Vec::with_capacity(total)),
        stiffness: body.parts[0].stiffness.map(|_| Vec::with_capacity(total)),
        offsets,
    };
    for (i, p) in body.parts.iter().enumerate() {
        let (o, n) = (out.offsets[i], p.vertices.len() / 3);
        out.vertices.extend_from_slice(p.vertices);
        out.triangles.extend(p.triangles.iter().map(|&t| t + o));
        out.weights.extend_from_slice(p.weights);
        for t in 0..nt {
            out.morph_deltas[(t * total + o) * 3..(t * total + o + n) * 3]
                .copy_from_slice(&p.morph_deltas[t * n * 3..(t + 1) * n * 3]);
        }
        if let (Some(all), Some(l)) = (&mut out.leak, p.leak) {
            if l.len() != n {
                return Err(OvertoneError::size(format!("part {i} leak field"), n, l.len()));
            }
            all.extend_from_slice(l);
        }
        if let (Some(all), Some(f)) = (&mut out.stiffness, p.stiffness) {
            if f.len() != n {
                return Err(OvertoneError::size(format!("part {i} stiffness field"), n, f.len()));
            }
            if let Some(v) = f.iter().position(|&x| x != -1.0 && !(x.is_finite() && x > 0.0)) {
                return Err(OvertoneError::setting(
                    "stiffness",
                    f[v],
                    format!(
                        "part {i} vertex {v}: painted multipliers of Young's modulus must be finite and > 0 \
                         (1: the default), or -1 for an unpainted vertex"
                    ),
                ));
            }
            all.extend(f.iter().map(|&x| if x == -1.0 { 1.0 } else { x }));
        }
    }
    Ok(out)
}

impl SurfaceDeformer {
    /// Precomputes everything (loading the fast solver's eigenmodes and clusters from
    /// `body.sidecar` when it matches these inputs) and puts the surface at rest in the first
    /// pose. One body is made of `body.parts` (several meshes bound to one
    /// skeleton are embedded and simulated together; pieces that are separate in the meshes
    /// stay separate in the lattice), reporting to `progress` (fraction and stage: lattice
    /// scene up to 25 %, the solver's precompute after) and checking it for a cancellation
    /// between stages and inside the long loops; a cancelled bind returns
    /// [`OvertoneError::Cancelled`] and keeps nothing (a sidecar is only written once the
    /// precompute is complete). A precompute that does not converge
    /// ([`NumericalError::NotConverged`](crate::NumericalError::NotConverged)) says to try a
    /// coarser lattice resolution (and, with the fast solver, fewer modes). The displacement of
    /// [`step`](Self::step) is the parts' vertices concatenated in order;
    /// [`part_range`](Self::part_range) gives each part's.
    pub fn bind(settings: &Settings, body: &BodyInput<'_>, progress: &dyn Progress) -> Result<Self> {
        crate::progress::scoped(progress, || Self::bind_scoped(settings, body))
            .map_err(|e| e.with_advice(crate::scene::lattice_advice(settings.solver == Solver::Fast)))
    }

    fn bind_scoped(host_settings: &Settings, body: &BodyInput<'_>) -> Result<Self> {
        crate::progress::check()?;
        crate::progress::report(0.0, "checking the input");
        let settings = &DeformerParams::new(host_settings)?;
        let parts = concatenate(body)?;
        let (vertices, triangles, weights, n_bones) = (&parts.vertices, &parts.triangles, &parts.weights, body.n_bones);
        let (n_targets, morph_deltas, first_morph_weights) =
            (body.n_targets, &parts.morph_deltas, body.first_pose.morph_weights);
        let (leak, first_pose, sidecar) = (parts.leak.as_deref(), body.first_pose.transforms, body.sidecar);
        let morphs = if n_targets > 0 || !first_morph_weights.is_empty() {
            Some(SurfaceMorphs {
                deltas: morph_deltas.to_vec(),
                n_targets,
                weights: vec![first_morph_weights.to_vec()],
            })
        } else {
            None
        };
        let character_settings = crate::scene::CharacterSettings {
            sidecar: sidecar.map(std::path::PathBuf::from),
            ..settings.character.clone()
        };
        let character = crate::progress::within(0.0, 0.25, || {
            Character::from_surface_with_morphs(
                "deformer",
                vertices,
                triangles,
                weights,
                n_bones,
                vec![first_pose.to_vec()],
                morphs,
                &character_settings,
                leak,
            )
        })?;
        crate::progress::check()?;
        crate::progress::report(0.25, "solver precompute");
        let sc = &character.scene;
        let (rig, p0, dw) = crate::scene::rig_start(sc)?;
        // A painted stiffness (per surface vertex) multiplies the skeleton-derived default.
        let stiffness = match (&parts.stiffness, &sc.dynamics.stiffness) {
            (None, default) => default.clone(),
            (Some(f), default) => {
                let painted = crate::scene::lattice_field_from_surface(&character, f, "stiffness")?;
                Some(match default {
                    None => painted,
                    Some(d) => painted.iter().zip(d).map(|(a, b)| a * b).collect(),
                })
            }
        };
        let dynamics = SceneDynamics {
            stiffness,
            fill: sc.dynamics.fill.clone(),
            ..settings.dynamics.clone()
        };
        dynamics.validate(sc.mesh.n_vertices())?;
        // World length units and axes → the body frame (turned, lengths divided by the scale).
        let gravity = character.frame.vector_to_scene(&settings.gravity);
        // The physics clock: the solver's step is 1/PHYSICS_RATE s of animation (1/fps with
        // backward Euler, one step per frame as the seeds step).
        let clocked = dynamics.integrator != Integrator::BackwardEuler;
        let step_dt = if clocked { 1.0 / PHYSICS_RATE } else { sc.dt };
        let params = dynamics.solver_params(step_dt, gravity);
        let kind = settings
            .fast
            .map_or(SolverKind::LocalGlobal(LocalGlobalParams::default()), |f| {
                SolverKind::Fast(character.fast_params(f))
            });
        let mut solver = crate::progress::within(0.25, 0.99, || {
            crate::scene::new_solver(sc, rig, &params, kind, &p0, &dw, sidecar)
        })?;
        // The fast solver reads the surface's displacement from its reduced coordinates where
        // that is cheaper (a surface no denser than its lattice); otherwise, and for the other
        // solvers, the lattice is reconstructed and interpolated (`lattice_u`).
        solver.prepare_embedded(&character.embedding.corners, &character.embedding.barycentric)?;
        let cache = solver
            .fast_precompute()
            .map_or(CacheStatus::NotRequested, |f| f.cache.clone());
        crate::progress::check()?;
        crate::progress::report(1.0, "ready");
        let (to_normalised, from_normalised) = character.frame.affine_pair();
        let n_lattice = sc.mesh.n_vertices();
        let jump = dynamics.cut_distance.map(|c| (RigJump::new(solver.rig()), c));
        let preroll_frames = (dynamics.preroll / step_dt).round() as usize;
        let mut deformer = Self {
            pose: vec![0.0; 12 * n_bones],
            column_pose: vec![0.0; 12 * character.bone_of_column.len()],
            params: p0.clone(),
            params_prev: p0.clone(),
            path: {
                let mut path = FramePath::default();
                path.start(&p0);
                path
            },
            params_step: p0.clone(),
            strength: dynamics.strength,
            preroll_frames,
            clock: clocked.then(PhysicsClock::default),
            jump,
            cuts: 0,
            lattice_u: vec![0.0; 3 * n_lattice],
            character,
            solver,
            to_normalised,
            from_normalised,
            last: None,
            cache,
            part_offsets: parts.offsets,
            settings: host_settings.clone(),
            diagonal: crate::rig::bounding_box_diagonal(vertices),
        };
        deformer.preroll()?;
        // The bind is complete: the lattice preparation joins the solver's record in the sidecar.
        deformer.character.save_preparation();
        Ok(deformer)
    }

    /// Holds the rig at the current parameters for the pre-roll frames (the body settles under
    /// gravity or a bind-rest offset before the first output frame).
    fn preroll(&mut self) -> Result<()> {
        for _ in 0..self.preroll_frames {
            self.solver.step(&self.params)?;
        }
        Ok(())
    }

    /// The settings of the bind, with the animatable ones as last set.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Parts the deformer was bound with (1 for the single-mesh constructors).
    pub fn n_parts(&self) -> usize {
        self.part_offsets.len() - 1
    }

    /// The surface vertices of part `i` in the concatenated order of [`step`](Self::step)'s
    /// output (`None` for a part that does not exist).
    pub fn part_range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        (i + 1 < self.part_offsets.len()).then(|| self.part_offsets[i]..self.part_offsets[i + 1])
    }

    /// Surface vertices `n`.
    pub fn n_vertices(&self) -> usize {
        self.character.surface.len() / 3
    }
    /// Bones.
    pub fn n_bones(&self) -> usize {
        self.character.n_surface_bones()
    }
    /// Whether the precompute came from the sidecar (its text is what a host shows; its
    /// [`CacheStatus::state`] is what a host branches on).
    pub fn cache_status(&self) -> &CacheStatus {
        &self.cache
    }
    /// What the last step did (`None` before the first step).
    pub fn last_report(&self) -> Option<StepReport> {
        self.last
    }

    /// The contract after the last step, relative (`‖Gᵀu‖ / (‖G‖ ‖u‖)`, dimensionless): the larger
    /// of the residual against the bone columns and, with blendshapes, against the blendshape
    /// columns. 0 before the first step.
    pub fn relative_residual(&self) -> f64 {
        let Some(r) = self.last else { return 0.0 };
        let blend = if self.n_targets() == 0 {
            0.0
        } else {
            self.solver.blendshape_residual().1
        };
        r.relative_residual.max(blend)
    }

    /// Blendshape targets `T` (0 for a bones-only rig).
    pub fn n_targets(&self) -> usize {
        self.solver.rig().n_targets()
    }

    /// Converts a world pose and the blendshape weights into rig parameters in `self.params`
    /// (no allocation; `self.params` is untouched on error).
    fn load_params(&mut self, pose: &[f64], morph_weights: &[f64]) -> Result<()> {
        let m = self.n_bones();
        if pose.len() != 12 * m {
            return Err(OvertoneError::size(
                "pose",
                format!("{m} bones x 12 numbers (3x4 each)"),
                pose.len(),
            ));
        }
        check_finite("pose", pose, 12)?;
        for (b, t) in pose.chunks_exact(12).enumerate() {
            self.pose[12 * b..12 * b + 12].copy_from_slice(&compose_affine(
                &self.to_normalised,
                &compose_affine(t, &self.from_normalised),
            ));
        }
        let rig = self.solver.rig();
        for (c, &b) in self.character.bone_of_column.iter().enumerate() {
            self.column_pose[12 * c..12 * c + 12].copy_from_slice(&self.pose[12 * b..12 * b + 12]);
        }
        rig.params_from_pose_into(&self.column_pose, morph_weights, &mut self.params)
    }

    /// Restarts at rest in `pose` (zero secondary motion and velocity), then holds it for the
    /// pre-roll.
    pub fn reset(&mut self, pose: &PoseInput<'_>) -> Result<()> {
        self.load_params(pose.transforms, pose.morph_weights)?;
        self.solver.reset(&self.params)?;
        self.params_prev.copy_from_slice(&self.params);
        self.last = None;
        if let Some(c) = &mut self.clock {
            c.reset();
        }
        self.path.start(&self.params);
        self.preroll()
    }

    /// Takes a host's settings between frames: the animatable ones (the table's
    /// [`animatable`](crate::settings::Spec::animatable): damping, strength) apply from the next
    /// step on without a rebind (damping refactors only the solver's small system, the sidecar is
    /// untouched), and so does the frame rate `fps` with the default integrator (the physics
    /// runs on its fixed clock, [`PHYSICS_RATE`]; a frame then advances `1/fps` s); any other
    /// setting that differs from the bind's is refused (it needs a new bind), the frame rate
    /// too with backward Euler (one step per frame). Everything is checked before anything
    /// changes; on error the deformer is unchanged.
    pub fn set_controls(&mut self, settings: &Settings) -> Result<()> {
        settings.validate()?;
        let clocked = self.clock.is_some();
        if let Some(s) = SETTINGS.iter().find(|s| {
            !s.animatable && !(clocked && s.name == "fps") && settings.value(s.name) != self.settings.value(s.name)
        }) {
            let v = settings.value(s.name).expect("every row is a field");
            return Err(OvertoneError::setting(
                s.name,
                s.format(&v),
                "changing it needs a new bind (only the animatable settings change between frames)",
            ));
        }
        self.solver.set_damping(settings.damping)?;
        self.strength = settings.strength;
        self.settings = settings.clone();
        Ok(())
    }

    /// How many steps restarted the simulation because the rig jumped beyond the cut distance.
    pub fn cuts(&self) -> usize {
        self.cuts
    }

    /// Advances one host frame (`1/fps` s of animation) to `pose`: with the default integrator
    /// the physics steps of the frame on the fixed clock ([`PhysicsClock`]), the rig between the
    /// frames on a causal cubic through the poses seen ([`FramePath`]), so the motion does not
    /// depend on the host's frame rate; with backward Euler one step. A step that fails at the
    /// frame's first physics step changes nothing ([`NumericalError::StepFailed`]); one that
    /// fails later restarts at rest in `pose` ([`NumericalError::StepRestarted`]). Writes the
    /// displacement of every surface vertex
    /// (`n × 3`, world units) into `out`: `strength` times the complementary displacement, scaled
    /// down as a whole where it exceeds `max_displacement` ([`limit_displacement`]). The
    /// blendshape weights are refused if their count is not [`n_targets`](Self::n_targets).
    pub fn step(&mut self, pose: &PoseInput<'_>, out: &mut [f64]) -> Result<StepReport> {
        let (pose, morph_weights) = (pose.transforms, pose.morph_weights);
        let n = self.n_vertices();
        if out.len() != 3 * n {
            return Err(OvertoneError::size("displacement output", 3 * n, out.len()));
        }
        self.load_params(pose, morph_weights)?;
        let p = &self.params;
        let cut = self
            .jump
            .as_ref()
            .is_some_and(|(j, c)| j.jump(&self.params_prev, p) > c * j.diagonal());
        if cut {
            self.solver.reset(p)?;
            self.cuts += 1;
            if let Some(c) = &mut self.clock {
                c.reset();
            }
            self.path.start(p);
        } else {
            self.path.push(p);
        }
        let p = &self.params; // (borrowed anew: the path above took `self` mutably)
        let report = if cut {
            // At rest after the restart: u_c = 0 meets the constraint exactly.
            StepReport {
                iterations: 0,
                residual: 0.0,
                relative_residual: 0.0,
            }
        } else {
            match &mut self.clock {
                None => match self.solver.step(p) {
                    Ok(r) => r,
                    Err(e) => {
                        self.path.undo();
                        return Err(e);
                    }
                },
                Some(clock) => {
                    // The frame's physics steps, the rig on the frames' path at each step's
                    // instant; the report: the frame's iterations and the residual once, at
                    // its end (the previous report when a frame is shorter than a step).
                    let (solver, path, step_params) = (&mut self.solver, &self.path, &mut self.params_step);
                    let (mut taken, mut iterations) = (0, 0);
                    let result = clock.advance(PHYSICS_RATE / self.settings.fps, |f| {
                        path.at(f, step_params);
                        iterations += solver.advance(step_params)?;
                        taken += 1;
                        Ok(())
                    });
                    match result {
                        Ok(0) => self.last.unwrap_or(StepReport {
                            iterations: 0,
                            residual: 0.0,
                            relative_residual: 0.0,
                        }),
                        Ok(_) => {
                            let (residual, relative_residual) = self.solver.constraint_residual();
                            StepReport {
                                iterations,
                                residual,
                                relative_residual,
                            }
                        }
                        // The frame's first step failed: nothing moved; take the frame back.
                        Err(e) if taken == 0 => {
                            self.path.undo();
                            return Err(e);
                        }
                        // A later one: the state is part-way through the frame; restart at
                        // rest in the frame's pose (as at a cut) and say so.
                        Err(e) => {
                            self.solver.reset(p)?;
                            clock.reset();
                            self.path.start(p);
                            self.params_prev.copy_from_slice(p);
                            return Err(match e {
                                OvertoneError::Numerical(NumericalError::StepFailed { step, reason }) => {
                                    NumericalError::StepRestarted { step, reason }.into()
                                }
                                other => other,
                            });
                        }
                    }
                }
            }
        };
        self.params_prev.copy_from_slice(&self.params);
        out.fill(0.0);
        // At a cut the frame shows the rig alone; otherwise the surface's displacement, read
        // from the solver at the embedded points or interpolated from the lattice's.
        if !cut && !self.solver.write_embedded_displacement(out) {
            self.solver.write_displacement(&mut self.lattice_u);
            self.character.embedding.add_to_surface(&self.lattice_u, out);
        }
        // Body frame → world units and axes, times the strength.
        for u in out.chunks_exact_mut(3) {
            let local = [self.strength * u[0], self.strength * u[1], self.strength * u[2]];
            self.character.frame.vector_to_file(&local, u);
        }
        if let Some(limit) = self.settings.max_displacement {
            limit_displacement(out, limit * self.diagonal);
        }
        self.last = Some(report);
        Ok(report)
    }
}
