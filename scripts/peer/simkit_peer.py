"""The simkit side of the side-by-side benchmark (issue 8).

Rebuilds seed tutorial 23's metronome beam and its two solvers (full-order complementary
dynamics with a prefactored KKT global step, and fast complementary dynamics in a rig-orthogonal
skinning-eigenmode subspace with clustered rotations) by calling simkit 0.1.8's functions, and
seed tutorial 17's cantilever eval/solve timings. Writes, per resolution:

* ``scene_WxH.json``: the same mesh, leak field D and rig motion as an ``overtone-scene/1`` file,
* ``simkit_full_WxH.npy``: simkit's full-order trajectory (frames 0..steps, float64),
* ``simkit.json``: timings, residuals and structural orthogonality of every run.

Only simkit functions do the numerical work; the glue (ARAP operator assembly from simkit's
deformation Jacobian, the step functions) follows the tutorials' text.
"""

import argparse
import json
import os
import time
import warnings

import numpy as np
import scipy as sp
import scipy.sparse as sps
import scipy.sparse.linalg  # noqa: F401  (sps.linalg)

warnings.filterwarnings("ignore")

import igl  # noqa: E402
from simkit import (  # noqa: E402
    cluster_grouping_matrices,
    deformation_jacobian,
    lbs_jacobian,
    massmatrix,
    orthonormalize,
    polar_svd,
    volume,
    ympr_to_lame,
)
from simkit.diffuse_field import diffuse_field  # noqa: E402
from simkit.lbs_weight_space_constraint import lbs_weight_space_constraint  # noqa: E402
from simkit.normalize_and_center import normalize_and_center  # noqa: E402
from simkit.skinning_eigenmodes import skinning_eigenmodes  # noqa: E402
from simkit.solvers import block_coord  # noqa: E402
from simkit.spectral_cubature import spectral_cubature  # noqa: E402

# Tutorial 23's settings.
YM, PR, RHO, DT = 1e5, 0.0, 1e3, 1e-2
AMPLITUDE, PERIOD = 3.0, 80.0
ITERS = 10
SIZES = [(40, 5), (70, 7), (100, 8), (140, 9), (180, 10)]


# --------------------------------------------------------------------------------------------
# Tutorial 23: scene
# --------------------------------------------------------------------------------------------
def make_beam(w, h):
    """igl's w x h grid on the unit square, squeezed to 0.1 across, stood upright, centred and
    scaled by simkit's normalize_and_center (longest extent 2)."""
    V, F = igl.triangulated_grid(w, h)
    V = np.asarray(V, dtype=np.float64).copy()
    V[:, 1] *= 0.1
    X = np.column_stack([-V[:, 1], V[:, 0]])
    X = normalize_and_center(X)
    return X, np.asarray(F, dtype=np.int64)


def arap_operators(X, T):
    """Lumped mass (vector form), deformation Jacobian, per-element mu*vol and the ARAP
    stiffness L = G^T (mu vol (x) I_{d^2}) G, all from simkit's building blocks."""
    n, d = X.shape
    mu, _lam = ympr_to_lame(YM, PR)
    vol = volume(X, T).reshape(-1)
    Mv = sps.kron(massmatrix(X, T, RHO), sps.identity(d)).tocsc()
    G = deformation_jacobian(X, T).tocsc()
    AMu = sps.diags(mu * vol)
    AMue = sps.kron(AMu, sps.identity(d * d)).tocsc()
    L = (G.T @ AMue @ G).tocsc()
    return dict(Mv=Mv, G=G, AMu=AMu, AMue=AMue, L=L)


def rest_params(J, Mv, X):
    """Rig parameters whose skinned shape is closest to X in the mass norm."""
    JtM = J.T @ Mv
    return np.linalg.solve(JtM @ J, JtM @ X.reshape(-1, 1))


def handle_pose(p0, i):
    """Frame i of the metronome: the handle's x translation is 3 sin(2 pi i / 80). simkit's
    parameters per bone are the column-major flattening of [A | t], so t_x is entry 2*d."""
    p = p0.copy()
    p[4, 0] = AMPLITUDE * np.sin(2.0 * np.pi * i / PERIOD)
    return p


def leak_field(X, T):
    """Tutorial 23's D: 1 on the boundary diffused inward (simkit diffuse_field), then 1 - that."""
    bnd = np.unique(igl.boundary_facets(T)[0])
    phi = diffuse_field(X, T, bnd, np.ones((bnd.shape[0], 1)), dt=1, normalize=True)
    return (1.0 - phi).reshape(-1)


# --------------------------------------------------------------------------------------------
# Tutorial 23: the two solvers, as the tutorial builds them, on simkit calls
# --------------------------------------------------------------------------------------------
class FullOrder:
    """Full-order complementary dynamics: per-element closest rotations (simkit polar_svd), and
    a global step with the rig-orthogonality constraint J^T M D u = 0 in a KKT system factored
    once (scipy factorized), iterated by simkit's block_coord."""

    def __init__(self, X, T, dleak):
        n, d = X.shape
        op = arap_operators(X, T)
        self.Mv, self.G, self.AMue, self.L = op["Mv"], op["G"], op["AMue"], op["L"]
        self.d = d
        self.J = lbs_jacobian(X, np.ones((n, 1)))
        self.p0 = rest_params(self.J, self.Mv, X)
        D = sps.kron(sps.diags(dleak), sps.identity(d))
        self.A = sps.csc_matrix(self.J.T @ self.Mv @ D)
        self.H = (self.L + self.Mv / DT**2).tocsc()
        nc = self.A.shape[0]
        kkt = sps.bmat([[self.H, self.A.T], [self.A, sps.csc_matrix((nc, nc))]]).tocsc()
        self.kkt = sps.linalg.factorized(kkt)
        self.nc = nc
        self.state_dim = n * d
        self.B = None

    def step(self, uc, uc_dot, p, p_dot, p_next, wrap=None):
        Jp = self.J @ p_next
        y = (uc + DT * uc_dot) + self.J @ (p + DT * p_dot)
        d = self.d

        def local(u):
            return polar_svd((self.G @ (Jp + u)).reshape(-1, d, d))[0].reshape(-1, 1)

        def glob(u, R):
            rhs = self.Mv @ y / DT**2 + self.G.T @ (self.AMue @ R) - self.H @ Jp
            return self.kkt(np.vstack([rhs, np.zeros((self.nc, 1))]))[: uc.shape[0]]

        if wrap is not None:
            glob, local = wrap(glob), wrap(local)
        return block_coord(uc.copy(), glob, local, 0.0, ITERS)


class Fast:
    """Fast complementary dynamics (tutorial 23's reduced solver): rig-orthogonal skinning
    eigenmodes (simkit lbs_weight_space_constraint + skinning_eigenmodes(Aeq=...)), M-orthonormal
    basis (simkit orthonormalize), rotation clusters (simkit spectral_cubature +
    cluster_grouping_matrices), dense Cholesky global step."""

    def __init__(self, X, T, dleak, k_modes=10, n_clusters=20):
        n, d = X.shape
        op = arap_operators(X, T)
        Mv, G, AMu, L = op["Mv"], op["G"], op["AMu"], op["L"]
        self.d = d
        self.J = lbs_jacobian(X, np.ones((n, 1)))
        self.p0 = rest_params(self.J, Mv, X)
        D = sps.kron(sps.diags(dleak), sps.identity(d))
        Aeq = lbs_weight_space_constraint(X, T, (D @ Mv @ self.J).T)
        W, _E, B = skinning_eigenmodes(X, T, k_modes, Aeq=Aeq)
        self.B = orthonormalize(B, M=Mv)
        _ci, _cw, labels = spectral_cubature(X, T, W, n_clusters, return_labels=True)
        self.labels = np.asarray(labels).reshape(-1)
        P, _Pm = cluster_grouping_matrices(self.labels, X, T)
        PAMue = sps.kron(P @ AMu, sps.identity(d * d))
        self.GB = (PAMue @ G) @ self.B
        self.GJ = (PAMue @ G) @ self.J
        self.BLB, self.BMB = self.B.T @ (L @ self.B), self.B.T @ (Mv @ self.B)
        self.BMJ, self.BLJ = self.B.T @ (Mv @ self.J), self.B.T @ (L @ self.J)
        self.chol = sp.linalg.cho_factor(self.BLB + self.BMB / DT**2)
        self.A = sps.csc_matrix(self.J.T @ Mv @ D)
        self.state_dim = self.B.shape[1]
        self.n_clusters = P.shape[0]

    def step(self, z, z_dot, p, p_dot, p_next, wrap=None):
        y = z + DT * z_dot
        q = p_next - (p + DT * p_dot)
        d = self.d

        def local(zz):
            F = (self.GB @ zz + self.GJ @ p_next).reshape(-1, d, d)
            return polar_svd(F)[0].reshape(-1, 1)

        def glob(zz, R):
            rhs = (self.BMB @ y / DT**2 - self.BMJ @ q / DT**2 + self.GB.T @ R
                   - self.BLJ @ p_next)
            return sp.linalg.cho_solve(self.chol, rhs)

        if wrap is not None:
            glob, local = wrap(glob), wrap(local)
        return block_coord(z.copy(), glob, local, 0.0, ITERS)


def rollout(solver, steps, keep_states):
    """Tutorial 23's roll-out: step i moves the handle to pose i (i = 0 is the rest pose, a
    no-op step), so after step i the state is frame i. Returns per-frame positions (frames
    0..steps, if kept), per-step wall times and process CPU times of steps 1..steps (ms), and
    per-frame residuals."""
    J, p0, B = solver.J, solver.p0, solver.B
    s = np.zeros((solver.state_dim, 1))
    s_dot = np.zeros_like(s)
    p = p0.copy()
    p_dot = np.zeros_like(p)
    states, times, cpu, viol, rel = [], [], [], [], []
    for i in range(steps + 1):
        p_next = handle_pose(p0, i)
        c0 = time.process_time()
        t0 = time.perf_counter()
        s_new = solver.step(s, s_dot, p, p_dot, p_next)
        dt_ms = (time.perf_counter() - t0) * 1e3
        cpu_ms = (time.process_time() - c0) * 1e3
        s_dot = (s_new - s) / DT
        p_dot = (p_next - p) / DT
        s, p = s_new, p_next.copy()
        if i >= 1:
            times.append(dt_ms)
            cpu.append(cpu_ms)
        uc = (B @ s) if B is not None else s
        if keep_states:
            states.append((J @ p + uc).reshape(-1, solver.d))
        r = float(np.linalg.norm(solver.A @ uc))
        viol.append(r)
        un = float(np.linalg.norm(uc))
        rel.append(r / un if un > 0 else 0.0)
    return (np.array(states) if keep_states else None), (times, cpu), viol, rel


def step_split(solver, steps=100):
    """Where a simkit step spends its time: median microseconds per local step (rotations) and
    per global step (right-hand side + prefactored solve), and the median step, in process CPU time, in a
    separate roll-out so the timed one is not perturbed."""
    spent = {"local": [], "glob": []}

    def wrap(fn):
        key = "local" if fn.__name__ == "local" else "glob"

        def timed(*args):
            t0 = time.process_time()
            r = fn(*args)
            spent[key].append(time.process_time() - t0)
            return r
        return timed

    p0 = solver.p0
    z = np.zeros((solver.state_dim, 1))
    z_dot = np.zeros_like(z)
    p, p_dot = p0.copy(), np.zeros_like(p0)
    t_steps = []
    for i in range(1, steps + 1):
        p_next = handle_pose(p0, i)
        t0 = time.process_time()
        z_new = solver.step(z, z_dot, p, p_dot, p_next, wrap=wrap)
        t_steps.append(time.process_time() - t0)
        z_dot, p_dot = (z_new - z) / DT, (p_next - p) / DT
        z, p = z_new, p_next.copy()
    return {"local_us": float(np.median(spent["local"])) * 1e6,
            "global_us": float(np.median(spent["glob"])) * 1e6,
            "step_us": float(np.median(t_steps)) * 1e6}


def spectral_norm(A):
    A = A.toarray() if sps.issparse(A) else np.asarray(A)
    return float(np.linalg.norm(A, 2))


def export_scene(path, X, T, dleak, steps):
    """The same inputs as an overtone-scene/1 file: frames k = 0..steps, one bone, the d x (d+1)
    affine map row-major [[1, 0, tx], [0, 1, 0]]."""
    frames = []
    for k in range(steps + 1):
        tx = AMPLITUDE * np.sin(2.0 * np.pi * k / PERIOD)
        frames.append([[1.0, 0.0, float(tx), 0.0, 1.0, 0.0]])
    doc = {
        "format": "overtone-scene/1",
        "dim": 2,
        "vertices": X.tolist(),
        "elements": T.tolist(),
        "weights": [[1.0] for _ in range(X.shape[0])],
        "frames": frames,
        "D": dleak.tolist(),
        "material": {"model": "arap", "youngs_modulus": YM, "poisson_ratio": PR, "density": RHO},
        "dt": DT,
        "gravity": [0.0, 0.0],
        # The seed's scheme (one backward-Euler step per frame, undamped, bind rest), which a
        # scene without dynamics keys no longer gets: Overtone's defaults are the production
        # ones (implicit midpoint on a 240 Hz clock, modal damping 0.1, rig rest).
        "integrator": "backward_euler",
    }
    with open(path, "w") as f:
        json.dump(doc, f)


def metronome(out_dir, sizes, steps, repeats=1, each_round=None, after_size=None):
    """Runs simkit's two solvers at each size, `repeats` timed roll-outs each (the reported
    ms/step is the lowest of the roll-outs' medians: the least disturbed by other load);
    `each_round(tag, r)` runs after each simkit round and `after_size(tag, row)` after each size
    (the driver runs Overtone there, so both libraries see the same machine load)."""
    results = []
    for (w, h) in sizes:
        X, T = make_beam(w, h)
        dleak = leak_field(X, T)
        tag = f"{w}x{h}"
        export_scene(os.path.join(out_dir, f"scene_{tag}.json"), X, T, dleak, steps)

        t0 = time.perf_counter()
        full = FullOrder(X, T, dleak)
        pre_full = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        fast = Fast(X, T, dleak)
        pre_fast = (time.perf_counter() - t0) * 1e3
        med_full, med_fast, cpu_full, cpu_fast = [], [], [], []
        for r in range(repeats):
            states, t_full, viol, rel = rollout(full, steps, keep_states=(r == 0))
            fstates, t_fast, viol_f, _rel_f = rollout(fast, steps, keep_states=(r == 0))
            if r == 0:
                viol_full, rel_full, viol_fast = viol, rel, viol_f
                np.save(os.path.join(out_dir, f"simkit_full_{tag}.npy"), states)
                np.save(os.path.join(out_dir, f"simkit_fast_{tag}.npy"), fstates)
                rig = np.array([(full.J @ handle_pose(full.p0, k)).reshape(-1, 2) for k in range(steps + 1)])
                motion = float(np.max(np.linalg.norm(states - rig, axis=2)))
            med_full.append(float(np.median(t_full[0])))
            med_fast.append(float(np.median(t_fast[0])))
            cpu_full.append(float(np.median(t_full[1])))
            cpu_fast.append(float(np.median(t_fast[1])))
            if each_round is not None:
                each_round(tag, r)
        a_norm = spectral_norm(full.A)
        split = step_split(fast)
        split_full = step_split(full, steps=20)
        AB = fast.A @ fast.B
        row = {
            "size": tag,
            "vertices": int(X.shape[0]),
            "triangles": int(T.shape[0]),
            "full_precompute_ms": pre_full,
            "full_median_step_ms": min(med_full),
            "full_round_medians_ms": med_full,
            "full_cpu_median_step_ms": min(cpu_full),
            "full_cpu_round_medians_ms": cpu_full,
            "full_max_residual": float(max(viol_full)),
            "full_max_relative_residual": float(max(rel_full)) / a_norm,
            "secondary_motion_max": motion,
            "fast_precompute_ms": pre_fast,
            "fast_median_step_ms": min(med_fast),
            "fast_round_medians_ms": med_fast,
            "fast_cpu_median_step_ms": min(cpu_fast),
            "fast_cpu_round_medians_ms": cpu_fast,
            "fast_reduced_dofs": int(fast.B.shape[1]),
            "fast_clusters": int(fast.n_clusters),
            "fast_structural_abs_fro": float(np.linalg.norm(AB)),
            "fast_structural_relative": spectral_norm(AB) / (a_norm * spectral_norm(fast.B)),
            "fast_max_residual": float(max(viol_fast)),
            "fast_split": split,
            "full_split": split_full,
        }
        results.append(row)
        print(f"simkit {tag}: {X.shape[0]} verts / {T.shape[0]} tris | full {row['full_median_step_ms']:.2f} ms/step "
              f"(max |J^T M D u| {row['full_max_residual']:.1e}) | fast {row['fast_median_step_ms']:.3f} ms/step "
              f"({row['fast_reduced_dofs']} DOFs, {row['fast_clusters']} clusters, structural {row['fast_structural_abs_fro']:.1e})",
              flush=True)
        if after_size is not None:
            after_size(tag, row)
    return results


# --------------------------------------------------------------------------------------------
# Tutorial 17: cantilever eval/solve timings
# --------------------------------------------------------------------------------------------
def best_time(fn, inner=1, rep=7):
    best = float("inf")
    for _ in range(rep):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best * 1e3


def cantilever(nx=120, ny=30, width=4.0, height=0.5, ym=3000.0, pr=0.4, rho=1.0, h=2e-2, k_pin=1e7,
               mode_counts=(2, 5, 10, 20, 40)):
    """Tutorial 17's 'the full solve is slow' and 'the subspace shrinks the solve' timings:
    a neo-Hookean cantilever (simkit neo-Hookean gradient/Hessian, lumped mass, gravity, stiff
    wall penalty), one backward-Euler Newton system at a perturbed state; eval = assemble
    gradient + Hessian, solve = the linear solve alone. Subspaces from simkit
    skinning_eigenmodes."""
    from simkit.energies.elastic import elastic_gradient_x, elastic_hessian_x
    from simkit.gravity_force import gravity_force

    V, F = igl.triangulated_grid(nx, ny)
    X = np.asarray(V, dtype=np.float64).copy()
    X[:, 0] = X[:, 0] * width - width / 2
    X[:, 1] = X[:, 1] * height - height / 2
    T = np.asarray(F, dtype=np.int64)
    n, d = X.shape
    mu, lam = ympr_to_lame(ym, pr)
    vol = volume(X, T)
    mu_e = np.full((T.shape[0], 1), mu)
    lam_e = np.full((T.shape[0], 1), lam)
    G = deformation_jacobian(X, T).tocsc()
    M = sps.kron(massmatrix(X, T, rho), sps.identity(d)).tocsc()
    fg = gravity_force(X, T, a=-9.8, rho=rho).reshape(-1, 1)
    pin = np.where(X[:, 0] <= X[:, 0].min() + 1e-6)[0]
    sel = np.zeros(n * d)
    for v in pin:
        sel[v * d:(v + 1) * d] = 1.0
    Kp = sps.diags(k_pin * sel).tocsc()
    xpin = X.reshape(-1, 1) * sel.reshape(-1, 1)
    rng = np.random.RandomState(0)
    x_def = (X + 0.05 * rng.randn(n, d)).reshape(-1, 1)
    x_tilde = X.reshape(-1, 1)
    Mh = (M / h**2).tocsc()

    def gradient(x):
        g = Mh @ (x - x_tilde)
        g = g + elastic_gradient_x(x.reshape(n, d), G, mu_e, lam_e, vol, "stable-neo-hookean")
        g = g - fg + Kp @ (x - xpin)
        return g

    def hessian(x):
        return Mh + Kp + elastic_hessian_x(x.reshape(n, d), G, mu_e, lam_e, vol, "stable-neo-hookean")

    def assemble_full():
        return hessian(x_def).tocsc(), gradient(x_def)

    H_full, g_full = assemble_full()
    t_eval_full = best_time(assemble_full, inner=1, rep=5)
    t_solve_full = best_time(lambda: sps.linalg.spsolve(H_full, -g_full), inner=3, rep=7)
    out = {"vertices": int(n), "triangles": int(T.shape[0]), "dofs": int(n * d),
           "full_eval_ms": t_eval_full, "full_solve_ms": t_solve_full,
           "full_eval_over_solve": t_eval_full / t_solve_full, "subspace": []}
    print(f"simkit cantilever {n} verts: full eval {t_eval_full:.1f} ms, full solve {t_solve_full:.1f} ms "
          f"(eval/solve {t_eval_full / t_solve_full:.2f})", flush=True)
    for kk in mode_counts:
        _W, _E, Bk = skinning_eigenmodes(X, T, kk)
        Bk = np.asarray(Bk.toarray() if sps.issparse(Bk) else Bk)

        def assemble_red(Bk=Bk):
            return Bk.T @ (hessian(x_def) @ Bk), Bk.T @ gradient(x_def)

        Hz, gz = assemble_red()
        te = best_time(assemble_red, inner=1, rep=5)
        ts = best_time(lambda Hz=Hz, gz=gz: np.linalg.solve(Hz, -gz), inner=200, rep=7)
        out["subspace"].append({"modes": kk, "dofs": int(Bk.shape[1]), "eval_ms": te, "solve_ms": ts,
                                "eval_over_solve": te / ts})
        print(f"  skinning k={kk:2d} (r={Bk.shape[1]:3d}): eval {te:6.1f} ms, solve {ts:8.5f} ms "
              f"(eval/solve {te / ts:.0f})", flush=True)
    return out


def blas_info():
    try:
        from threadpoolctl import threadpool_info
        return [{k: i.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
                for i in threadpool_info()]
    except Exception as e:  # threadpoolctl is optional
        return [{"note": f"threadpoolctl unavailable: {e}"}]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    ap.add_argument("--skip-cantilever", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
    import importlib.metadata as md
    info = {
        "versions": {p: md.version(p) for p in ("simkit", "numpy", "scipy", "libigl")},
        "blas": blas_info(),
        "steps": a.steps,
        "iterations": ITERS,
    }
    info["metronome"] = metronome(a.out_dir, sizes, a.steps)
    info["cantilever"] = None if a.skip_cantilever else cantilever()
    with open(os.path.join(a.out_dir, "simkit.json"), "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
