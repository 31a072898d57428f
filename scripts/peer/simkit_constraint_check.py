"""Why simkit 0.1.8's fast basis is not rig-orthogonal at some beam sizes (docs/benchmarks.md).

For the metronome beam, J^T M D u = 0 with one affine bone is, in weight space, six moment
conditions on each skinning weight field w: sum_v m_v d_v a_v b_v w_v = 0 for the products a b of
(x, y, 1). simkit's lbs_weight_space_constraint builds the 36 candidate rows and reduces them
with remove_redundant_columns; this script prints, per size, the singular values of the reduced
matrix (relative to the largest) and how far each of the six true moment rows lies outside its
row space, then the structural orthogonality of the resulting basis.

    target/peer-venv/bin/python scripts/peer/simkit_constraint_check.py
"""

import os
import sys

import numpy as np
import scipy.sparse as sps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simkit_peer as sk  # noqa: E402
from simkit import lbs_jacobian, orthonormalize  # noqa: E402
from simkit.lbs_weight_space_constraint import lbs_weight_space_constraint  # noqa: E402
from simkit.skinning_eigenmodes import skinning_eigenmodes  # noqa: E402


def main():
    names = ["xx", "xy", "x1", "yy", "y1", "11"]
    for (w, h) in sk.SIZES:
        X, T = sk.make_beam(w, h)
        n = X.shape[0]
        dleak = sk.leak_field(X, T)
        Mv = sk.arap_operators(X, T)["Mv"]
        J = lbs_jacobian(X, np.ones((n, 1)))
        D = sps.kron(sps.diags(dleak), sps.identity(2))
        A = J.T @ Mv @ D
        Aeq_raw = lbs_weight_space_constraint(X, T, (D @ Mv @ J).T)
        Aeq = np.asarray(Aeq_raw.toarray() if sps.issparse(Aeq_raw) else Aeq_raw)
        sv = np.linalg.svd(Aeq, compute_uv=False)
        md = Mv.diagonal()[::2] * dleak
        Xh = np.column_stack([X, np.ones(n)])
        moments = [md * Xh[:, a] * Xh[:, b] for a in range(3) for b in range(a, 3)]
        Q, _ = np.linalg.qr(Aeq.T)
        outside = [np.linalg.norm(r - Q @ (Q.T @ r)) / np.linalg.norm(r) for r in moments]
        W, E, B = skinning_eigenmodes(X, T, 10, Aeq=Aeq_raw)
        Bo = orthonormalize(B, M=Mv)
        rel = np.linalg.norm(A @ Bo, 2) / (np.linalg.norm(A, 2) * np.linalg.norm(Bo, 2))
        print(f"{w}x{h}: Aeq {Aeq.shape[0]}x{Aeq.shape[1]}, singular values / largest "
              f"{np.array2string(sv / sv[0], precision=1)}")
        print("   true moment rows outside Aeq's row space: "
              + ", ".join(f"{k} {v:.1e}" for k, v in zip(names, outside)))
        print(f"   lowest eigenvalues {np.array2string(np.sort(E)[:3], precision=2)}; "
              f"basis rel ||(J^T M D) B||_2 = {rel:.1e}")


if __name__ == "__main__":
    main()
