"""An independent implementation of the Complementary Dynamics C++ release's demo step, to check
that Overtone reads the release's scenes with the release's conventions.

What the release's demo does (facts read from its source, `demo/complementary_dynamics.cpp`,
`src/create_mask_matrix.cpp`, `src/lumped_mass_matrix.cpp` and Bartels' energies):
  * positions centred on the bounding-box centre and divided by the largest coordinate;
  * lumped (barycentric) mass, `vol/4` per vertex, times 1000;
  * the demo hands the pair `(C, D) = (lambda/2, mu)` to Bartels' energies: ARAP density
    `C sum_i (sigma_i - 1)^2`, neo-Hookean `C (J^(-2/3) tr(F^T F) - 3) + D (J - 1)^2`;
  * the "Poisson mask" `Phi = diag(M z)`, `L z = M 1` with `z = 0` on the boundary vertices, and
    the constraint `A^T M Phi u_c = 0` (`A` the LBS Jacobian of every bone's affine transform);
  * one backward-Euler step per frame (`dt` from the scene) on the total displacement, from rest.
Here each step is minimised to round-off (not with the release's Newton iteration and stopping
rule), with every nonzero constraint row enforced; the ARAP rotations are the signed polar
rotations (no element inverts in the frames compared).

The rig comes from Overtone: the positions of an `overtone run SCENE --strength 0` cache (scene
units), so the two differ only in the physics. Writes the secondary displacement `u_c`
(`frames x n x 3`, scene units) as a PC2 file.

    python release_peer.py SCENE.json RIG.pc2 FRAMES OUT.pc2
"""
import json
import os
import struct
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def read_medit(path):
    tok = open(path).read().split()
    i, verts, tets = 0, None, None
    while i < len(tok):
        if tok[i] == "Vertices":
            n = int(tok[i + 1])
            verts = np.array(tok[i + 2:i + 2 + 4 * n], float).reshape(n, 4)[:, :3]
            i += 2 + 4 * n
        elif tok[i] == "Triangles":
            i += 2 + 4 * int(tok[i + 1])
        elif tok[i] == "Tetrahedra":
            n = int(tok[i + 1])
            tets = np.array(tok[i + 2:i + 2 + 5 * n], float).reshape(n, 5)[:, :4].astype(int) - 1
            i += 2 + 5 * n
        else:
            i += 1
    return verts, tets


def read_dmat(path):
    tok = open(path).read().split()
    cols, rows = int(tok[0]), int(tok[1])
    return np.array(tok[2:2 + rows * cols], float).reshape(cols, rows).T


def read_pc2(path):
    b = open(path, "rb").read()
    _, n, _, _, f = struct.unpack("<iiffi", b[12:32])
    return np.frombuffer(b[32:32 + 12 * n * f], "<f4").reshape(f, n, 3).astype(float)


def write_pc2(path, x):
    f, n, _ = x.shape
    with open(path, "wb") as out:
        out.write(b"POINTCACHE2\0" + struct.pack("<iiffi", 1, n, 0.0, 1.0, f))
        out.write(x.astype("<f4").tobytes())


class ReleaseStep:
    def __init__(self, scene_path):
        scene = json.load(open(scene_path))
        folder = os.path.dirname(scene_path)
        verts, self.tets = read_medit(os.path.join(folder, scene["mesh_file"]))
        weights = read_dmat(os.path.join(folder, scene["weight_file"]))
        self.dt = scene["dt"]
        e, nu = scene["YM"], scene["pr"]
        self.model = scene["model"]
        assert self.model in ("arap", "neohookean"), f"model {self.model}"
        self.p0 = 0.5 * e * nu / ((1 + nu) * (1 - 2 * nu))
        self.p1 = e / (2 * (1 + nu))
        centre = 0.5 * (verts.min(0) + verts.max(0))
        self.x0 = (verts - centre) / np.abs(verts - centre).max()
        n, t = len(self.x0), self.tets
        edges = self.x0[t[:, 1:]] - self.x0[t[:, :1]]
        dm = np.transpose(edges, (0, 2, 1))
        self.vol = np.linalg.det(dm) / 6.0
        assert (self.vol > 0).all(), "inverted rest tet"
        self.dm_inv = np.linalg.inv(dm)
        # grad phi_a per tet (rows), a = 0..3
        self.grads = np.concatenate([-self.dm_inv.sum(1, keepdims=True), self.dm_inv], axis=1)
        m = np.zeros(n)
        np.add.at(m, t.ravel(), np.repeat(self.vol / 4, 4))
        self.m3 = np.repeat(1000.0 * m, 3)
        rows, cols = np.repeat(t, 4, axis=1).ravel(), np.tile(t, (1, 4)).ravel()
        vals = (self.vol[:, None, None] * np.einsum("eai,ebi->eab", self.grads, self.grads)).ravel()
        stiff = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))  # minus the cotangent Laplacian
        faces = np.sort(np.concatenate([t[:, [1, 2, 3]], t[:, [0, 3, 2]], t[:, [0, 1, 3]], t[:, [0, 2, 1]]]), 1)
        uniq, count = np.unique(faces, axis=0, return_counts=True)
        free = np.setdiff1d(np.arange(n), np.unique(uniq[count == 1]))
        z = np.zeros(n)
        z[free] = spla.spsolve(stiff[free][:, free].tocsc(), m[free])
        phi = m * z
        homog = np.hstack([self.x0, np.ones((n, 1))])
        rows = []
        for j in range(weights.shape[1]):
            for k in range(4):
                for i in range(3):
                    r = np.zeros(3 * n)
                    r[i::3] = 1000.0 * m * phi * weights[:, j] * homog[:, k]
                    rows.append(r)
        c = np.array(rows)
        norms = np.linalg.norm(c, axis=1)
        c = c[norms > 0] / norms[norms > 0, None]
        _, s, vt = np.linalg.svd(c, full_matrices=False)
        self.c = vt[s > 1e-12 * s[0]]
        h0 = sp.kron(2 * self.p0 * stiff, sp.eye(3)) + sp.diags(self.m3 / self.dt**2)
        kkt = sp.bmat([[h0, sp.csr_matrix(self.c.T)], [sp.csr_matrix(self.c), None]]).tocsc()
        self.kkt = spla.splu(kkt)

    def elastic(self, x):
        """Elastic energy and its gradient at positions x (3n)."""
        n, t = len(self.x0), self.tets
        xs = x.reshape(n, 3)[t]
        f = np.transpose(xs[:, 1:] - xs[:, :1], (0, 2, 1)) @ self.dm_inv
        if self.model == "arap":
            u, s, vt = np.linalg.svd(f)
            sign = np.sign(np.linalg.det(u @ vt))
            s[:, 2] *= sign
            u[:, :, 2] *= sign[:, None]
            psi = self.p0 * ((s - 1) ** 2).sum(1)
            stress = 2 * self.p0 * (f - u @ vt)
        else:
            j = np.linalg.det(f)
            assert (j > 0).all(), "an element inverted"
            i1 = (f * f).sum((1, 2))
            fit = np.transpose(np.linalg.inv(f), (0, 2, 1))
            j23 = j ** (-2.0 / 3.0)
            psi = self.p0 * (j23 * i1 - 3) + self.p1 * (j - 1) ** 2
            stress = self.p0 * j23[:, None, None] * (2 * f - (2.0 / 3.0) * i1[:, None, None] * fit)
            stress += (2 * self.p1 * (j - 1) * j)[:, None, None] * fit
        energy = (self.vol * psi).sum()
        forces = self.vol[:, None, None] * stress @ np.transpose(self.grads, (0, 2, 1))
        g = np.zeros((n, 3))
        np.add.at(g, t.ravel(), np.transpose(forces, (0, 2, 1)).reshape(-1, 3))
        return energy, g.ravel()

    def run(self, rig, frames):
        x0 = self.x0.ravel()
        u_prev = rig[0].ravel() - x0
        v_prev = np.zeros_like(u_prev)
        uc = np.zeros_like(u_prev)
        out = []
        for frame in range(frames):
            ur = rig[frame].ravel() - x0
            target = u_prev + self.dt * v_prev

            def objective(ucv):
                r = ur + ucv - target
                e, g = self.elastic(x0 + ur + ucv)
                return 0.5 * r @ (self.m3 * r) / self.dt**2 + e, self.m3 * r / self.dt**2 + g

            fval, grad = objective(uc)
            for _ in range(1000):
                step = self.kkt.solve(np.concatenate([-grad, np.zeros(len(self.c))]))[:len(uc)]
                decrement = grad @ step
                if -decrement < 1e-22 * max(1.0, abs(fval)):
                    break
                alpha = 1.0
                while True:
                    fnew, gnew = objective(uc + alpha * step)
                    if fnew <= fval + 1e-4 * alpha * decrement or alpha < 1e-8:
                        break
                    alpha *= 0.5
                uc, fval, grad = uc + alpha * step, fnew, gnew
            u = ur + uc
            v_prev, u_prev = (u - u_prev) / self.dt, u
            out.append(uc.reshape(-1, 3))
        return np.array(out)


def main():
    scene, rig_path, frames, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rig = read_pc2(rig_path)
    uc = ReleaseStep(scene).run(rig, min(frames, len(rig)))
    write_pc2(out, uc)
    print(f"{out}: {len(uc)} frames, peak |u_c| {np.linalg.norm(uc, axis=2).max():.4g}")


if __name__ == "__main__":
    main()
