//! The linear example manifold of Koyama et al. 2013 (§4.2-4.3, eq. 6-7) and the projection of
//! a current stretch onto it.
//!
//! A body is cut into *units* (shape-matching regions, or finite elements), each with a stretch
//! vector of `k` numbers ([`crate::shape_matching::stretch`]). The rest pose has stretches
//! `S⁰` and example `j = 1..N` has `Sʲ`. Stacking a group of units, the manifold is the affine
//! span `{Σ_j w_j Sʲ : Σ_j w_j = 1}`, and the projection of the current stretch `S` is eq. (7):
//!
//! `w = (LᵀL)⁻¹ Lᵀ (S − S⁰)`, `L = [S¹ − S⁰, …, Sᴺ − S⁰]`, `w₀ = 1 − Σ_j w_j`,
//!
//! then blended toward the rest by `β` (the equation after (7)): `w'_j = β w_j`,
//! `w'₀ = w₀ + (1 − β) Σ_j w_j`, so that
//!
//! `S* = Σ_j w'_j Sʲ = S⁰ + β Σ_{j≥1} w_j (Sʲ − S⁰)`.
//!
//! `β = 0` is plain shape matching (goal from the rest shape), `β = 1` makes every pose of the
//! span an equilibrium; the seed uses `β = 0.995`.
//!
//! **Scopes** (seed Fig. 6-7): a *global* manifold has one weight vector for the whole body; a
//! *per-unit* manifold projects each region (or element) on its own; *groups* give one weight
//! vector per labelled group (the teddy bear cut in two).
//!
//! **Rank.** With a global scope, examples whose stretches are linearly dependent (one equal to
//! the rest, or two equal) are refused: `LᵀL` is singular and the weights are not defined. In a
//! single region or a small group the examples often do not differ (a region the twist leaves
//! undeformed); there the least-squares solution of minimum norm is used (pseudo-inverse of
//! `LᵀL` without eigenvalues below `1e-10` of its largest, or below `1e-14` of the largest over
//! all groups), which projects onto the span that is there. That rule is ours; the seed does not
//! discuss it.

use nalgebra::DMatrix;

use crate::error::{check_finite, InputError, OvertoneError, Result};

/// Eigenvalues of a group's `LᵀL` below this fraction of its largest are dropped (per-unit and
/// grouped scopes) or make the examples refused (global scope).
pub(crate) const EXAMPLE_RANK_TOLERANCE: f64 = 1e-10;

/// Which units share one weight vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManifoldScope {
    /// One weight vector for the whole body (seed Fig. 7, left). Default.
    Global,
    /// Every unit projects on its own (seed Fig. 7, right).
    PerUnit,
    /// `labels[u]` is the group of unit `u` (groups numbered `0..g`, each non-empty).
    Groups(Vec<usize>),
}

impl ManifoldScope {
    /// Parses `global` or `per-region` / `per-element` / `local`.
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "global" => Ok(Self::Global),
            "per-region" | "per_region" | "per-element" | "per_element" | "local" | "per-unit" => Ok(Self::PerUnit),
            other => Err(OvertoneError::setting(
                "example manifold",
                other,
                "known manifolds: global, per-region (per-element)",
            )),
        }
    }
    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::PerUnit => "per-region",
            Self::Groups(_) => "groups",
        }
    }
}

/// A linear example manifold over `n_units` units with `k` stretch numbers each.
#[derive(Clone, Debug)]
pub struct ExampleManifold {
    k: usize,
    n_units: usize,
    n_examples: usize,
    beta: f64,
    /// `S⁰`, `n_units × k`.
    rest: Vec<f64>,
    /// `Sʲ − S⁰` as `[unit][example][k]`.
    diffs: Vec<f64>,
    group_of: Vec<usize>,
    n_groups: usize,
    /// Per group, the `N × N` (pseudo-)inverse of `LᵀL`, row-major.
    gram_inverse: Vec<f64>,
    /// Per group, the rank kept.
    ranks: Vec<usize>,
}

impl ExampleManifold {
    /// Builds the manifold from the rest stretches (`n_units × k`) and one stretch array of the
    /// same size per example.
    ///
    /// Refuses: no example, arrays of the wrong size, non-finite numbers, `β` outside `[0, 1]`,
    /// group labels that skip a number, examples that all equal the rest, and (global scope)
    /// linearly dependent examples.
    pub fn new(rest: Vec<f64>, examples: &[Vec<f64>], k: usize, scope: ManifoldScope, beta: f64) -> Result<Self> {
        if k == 0 || rest.is_empty() || rest.len() % k != 0 {
            return Err(OvertoneError::size(
                "rest stretches",
                format!("a non-empty multiple of {k}"),
                rest.len(),
            ));
        }
        check_finite("rest stretches", &rest, k)?;
        if examples.is_empty() {
            return Err(OvertoneError::setting(
                "examples",
                0,
                "an example manifold needs at least one example pose",
            ));
        }
        if !(beta.is_finite() && (0.0..=1.0).contains(&beta)) {
            return Err(OvertoneError::setting(
                "beta",
                beta,
                "must be in [0, 1] (0: plain shape matching, 1: full example effect)",
            ));
        }
        let n_units = rest.len() / k;
        let n_ex = examples.len();
        for (j, ex) in examples.iter().enumerate() {
            if ex.len() != rest.len() {
                return Err(InputError::Example {
                    example: j,
                    reason: format!("{} stretch numbers, expected {}", ex.len(), rest.len()),
                }
                .into());
            }
            if let Some(i) = ex.iter().position(|x| !x.is_finite()) {
                return Err(InputError::Example {
                    example: j,
                    reason: format!("non-finite stretch in unit {}", i / k),
                }
                .into());
            }
        }
        let (group_of, n_groups) = match &scope {
            ManifoldScope::Global => (vec![0; n_units], 1),
            ManifoldScope::PerUnit => ((0..n_units).collect(), n_units),
            ManifoldScope::Groups(labels) => {
                if labels.len() != n_units {
                    return Err(OvertoneError::size("manifold group labels", n_units, labels.len()));
                }
                let g = labels.iter().max().map_or(0, |m| m + 1);
                let mut seen = vec![false; g];
                for &l in labels {
                    seen[l] = true;
                }
                if let Some(missing) = seen.iter().position(|s| !s) {
                    return Err(OvertoneError::setting(
                        "manifold group labels",
                        missing,
                        "groups must be numbered 0..g without gaps",
                    ));
                }
                (labels.clone(), g)
            }
        };
        let mut diffs = vec![0.0; n_units * n_ex * k];
        for u in 0..n_units {
            for (j, ex) in examples.iter().enumerate() {
                for c in 0..k {
                    diffs[(u * n_ex + j) * k + c] = ex[u * k + c] - rest[u * k + c];
                }
            }
        }
        // Gram matrices per group.
        let mut gram = vec![0.0; n_groups * n_ex * n_ex];
        for u in 0..n_units {
            let g = &mut gram[group_of[u] * n_ex * n_ex..(group_of[u] + 1) * n_ex * n_ex];
            let du = &diffs[u * n_ex * k..(u + 1) * n_ex * k];
            for a in 0..n_ex {
                for b in 0..n_ex {
                    g[a * n_ex + b] += (0..k).map(|c| du[a * k + c] * du[b * k + c]).sum::<f64>();
                }
            }
        }
        let col_norms: Vec<f64> = (0..n_ex)
            .map(|j| (0..n_groups).map(|g| gram[g * n_ex * n_ex + j * n_ex + j]).sum::<f64>())
            .collect();
        let scale = col_norms.iter().cloned().fold(0.0, f64::max);
        // Stretches are dimensionless: an example whose stretches differ from the rest's by less
        // than 1e-8 RMS per unit is the rest shape (up to round-off of a rigid motion).
        let same_as_rest = |c: f64| c <= 1e-16 * n_units as f64;
        if same_as_rest(scale) {
            return Err(InputError::Example {
                example: 0,
                reason: "every example has the rest shape's stretches (up to a rigid motion); an example must deform the body".into(),
            }
            .into());
        }
        if scope == ManifoldScope::Global {
            if let Some(j) = col_norms.iter().position(|&c| same_as_rest(c)) {
                return Err(InputError::Example {
                    example: j,
                    reason: "its stretches equal the rest shape's (it is the rest pose up to a rigid motion)".into(),
                }
                .into());
            }
        }
        let mut gram_inverse = vec![0.0; n_groups * n_ex * n_ex];
        let mut ranks = vec![0; n_groups];
        let mut largest = vec![0.0f64; n_groups];
        let mut eigs = Vec::with_capacity(n_groups);
        for g in 0..n_groups {
            let m = DMatrix::from_row_slice(n_ex, n_ex, &gram[g * n_ex * n_ex..(g + 1) * n_ex * n_ex]);
            let e = m.symmetric_eigen();
            largest[g] = e.eigenvalues.iter().cloned().fold(0.0, f64::max);
            eigs.push(e);
        }
        let global_largest = largest.iter().cloned().fold(0.0, f64::max);
        for (g, e) in eigs.into_iter().enumerate() {
            let cut = (EXAMPLE_RANK_TOLERANCE * largest[g]).max(1e-14 * global_largest);
            let mut inv = DMatrix::<f64>::zeros(n_ex, n_ex);
            for (i, &lam) in e.eigenvalues.iter().enumerate() {
                if lam > cut {
                    ranks[g] += 1;
                    let v = e.eigenvectors.column(i);
                    inv += (v * v.transpose()) / lam;
                }
            }
            if scope == ManifoldScope::Global && ranks[g] < n_ex {
                if let Some(j) = col_norms.iter().position(|&c| same_as_rest(c)) {
                    return Err(InputError::Example {
                        example: j,
                        reason: "its stretches equal the rest shape's (it is the rest pose up to a rigid motion)"
                            .into(),
                    }
                    .into());
                }
                return Err(InputError::Example {
                    example: n_ex - 1,
                    reason: format!(
                        "the {n_ex} examples' stretches are linearly dependent (rank {} of {n_ex}): an example repeats or combines others; remove it",
                        ranks[g]
                    ),
                }
                .into());
            }
            for a in 0..n_ex {
                for b in 0..n_ex {
                    gram_inverse[(g * n_ex + a) * n_ex + b] = inv[(a, b)];
                }
            }
        }
        Ok(Self {
            k,
            n_units,
            n_examples: n_ex,
            beta,
            rest,
            diffs,
            group_of,
            n_groups,
            gram_inverse,
            ranks,
        })
    }

    /// Stretch numbers per unit.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Number of units.
    pub(crate) fn n_units(&self) -> usize {
        self.n_units
    }
    /// Number of examples `N`.
    pub(crate) fn n_examples(&self) -> usize {
        self.n_examples
    }
    /// Number of weight vectors (1 for a global manifold).
    pub(crate) fn n_groups(&self) -> usize {
        self.n_groups
    }
    /// The group of unit `u`.
    #[inline(always)]
    pub(crate) fn group_of(&self, u: usize) -> usize {
        self.group_of[u]
    }
    /// Rank of `LᵀL` kept per group.
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }
    /// The blend `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }
    /// Changes `β` (in `[0, 1]`).
    pub fn set_beta(&mut self, beta: f64) -> Result<()> {
        if !(beta.is_finite() && (0.0..=1.0).contains(&beta)) {
            return Err(OvertoneError::setting("beta", beta, "must be in [0, 1]"));
        }
        self.beta = beta;
        Ok(())
    }

    /// Least-squares weights of eq. (7), `w_1..w_N` per group (`n_groups × N`), for the stacked
    /// current stretches (`n_units × k`). Sums in unit order: deterministic.
    pub fn weights(&self, stretch: &[f64], w: &mut [f64]) {
        let (k, ne) = (self.k, self.n_examples);
        // Right-hand sides `Lᵀ(S − S⁰)` per group: on the stack for the usual few examples.
        let mut small = [0.0; 64];
        let mut large = Vec::new();
        let b: &mut [f64] = if self.n_groups * ne <= small.len() {
            &mut small[..self.n_groups * ne]
        } else {
            large.resize(self.n_groups * ne, 0.0);
            &mut large
        };
        for u in 0..self.n_units {
            let g = self.group_of[u];
            let s = &stretch[u * k..(u + 1) * k];
            let s0 = &self.rest[u * k..(u + 1) * k];
            let du = &self.diffs[u * ne * k..(u + 1) * ne * k];
            for j in 0..ne {
                let mut acc = 0.0;
                for c in 0..k {
                    acc += du[j * k + c] * (s[c] - s0[c]);
                }
                b[g * ne + j] += acc;
            }
        }
        for g in 0..self.n_groups {
            let gi = &self.gram_inverse[g * ne * ne..(g + 1) * ne * ne];
            for a in 0..ne {
                w[g * ne + a] = (0..ne).map(|c| gi[a * ne + c] * b[g * ne + c]).sum();
            }
        }
    }

    /// Weights of unit `u`'s own group computed from that unit alone (valid for the per-unit
    /// scope, where the group is the unit): `w` has `N` entries.
    #[inline(always)]
    pub(crate) fn unit_weights(&self, u: usize, s: &[f64], w: &mut [f64]) {
        let (k, ne) = (self.k, self.n_examples);
        let s0 = &self.rest[u * k..(u + 1) * k];
        let du = &self.diffs[u * ne * k..(u + 1) * ne * k];
        let g = self.group_of[u];
        let gi = &self.gram_inverse[g * ne * ne..(g + 1) * ne * ne];
        let mut b = [0.0; 16];
        let mut bv;
        let bb: &mut [f64] = if ne <= 16 {
            &mut b[..ne]
        } else {
            bv = vec![0.0; ne];
            &mut bv
        };
        for j in 0..ne {
            bb[j] = (0..k).map(|c| du[j * k + c] * (s[c] - s0[c])).sum();
        }
        for a in 0..ne {
            w[a] = (0..ne).map(|c| gi[a * ne + c] * bb[c]).sum();
        }
    }

    /// `S*_u = S⁰_u + β Σ_j w_j (Sʲ_u − S⁰_u)` for unit `u`, given its group's weights `w`
    /// (`N` entries, from [`weights`](Self::weights) or [`unit_weights`](Self::unit_weights)).
    #[inline(always)]
    pub fn target(&self, u: usize, w: &[f64], out: &mut [f64]) {
        let (k, ne) = (self.k, self.n_examples);
        let du = &self.diffs[u * ne * k..(u + 1) * ne * k];
        for c in 0..k {
            let mut acc = self.rest[u * k + c];
            for j in 0..ne {
                acc += self.beta * w[j] * du[j * k + c];
            }
            out[c] = acc;
        }
    }

    /// Projects every unit: returns `S*` (`n_units × k`) and the weights (`n_groups × N`).
    pub fn project(&self, stretch: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        if stretch.len() != self.n_units * self.k {
            return Err(OvertoneError::size("stretches", self.n_units * self.k, stretch.len()));
        }
        check_finite("stretches", stretch, self.k)?;
        let ne = self.n_examples;
        let mut w = vec![0.0; self.n_groups * ne];
        self.weights(stretch, &mut w);
        let mut out = vec![0.0; stretch.len()];
        for u in 0..self.n_units {
            let g = self.group_of[u];
            self.target(u, &w[g * ne..(g + 1) * ne], &mut out[u * self.k..(u + 1) * self.k]);
        }
        Ok((out, w))
    }

    /// The blended weights `(w'₀, w'₁..w'_N)` of the equation after (7), from raw weights `w`
    /// (`N` entries); they sum to 1.
    pub fn blended_weights(&self, w: &[f64]) -> Vec<f64> {
        let sum: f64 = w.iter().sum();
        let mut out = Vec::with_capacity(w.len() + 1);
        out.push(1.0 - sum + (1.0 - self.beta) * sum);
        out.extend(w.iter().map(|x| self.beta * x));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stretch on the span is its own projection (β = 1) and its weights are recovered;
    /// β = 0 gives the rest.
    #[test]
    fn span_is_fixed_and_beta_zero_is_rest() {
        let rest = vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0];
        let e1 = vec![1.2, 1.0, 0.9, 0.1, 0.0, 0.0, 1.0, 1.1, 1.0, 0.0, 0.2, 0.0];
        let e2 = vec![1.0, 0.8, 1.0, 0.0, 0.3, 0.0, 1.3, 1.0, 1.0, 0.0, 0.0, -0.1];
        let s: Vec<f64> = (0..12)
            .map(|i| rest[i] + 0.3 * (e1[i] - rest[i]) - 0.7 * (e2[i] - rest[i]))
            .collect();
        let m = ExampleManifold::new(rest.clone(), &[e1.clone(), e2.clone()], 6, ManifoldScope::Global, 1.0).unwrap();
        let (p, w) = m.project(&s).unwrap();
        assert!((w[0] - 0.3).abs() < 1e-12 && (w[1] + 0.7).abs() < 1e-12);
        for i in 0..12 {
            assert!((p[i] - s[i]).abs() < 1e-12);
        }
        let bw = m.blended_weights(&w);
        assert!((bw.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        let m0 = ExampleManifold::new(rest.clone(), &[e1.clone(), e2], 6, ManifoldScope::Global, 0.0).unwrap();
        let (p0, _) = m0.project(&s).unwrap();
        assert!(p0.iter().zip(&rest).all(|(a, b)| (a - b).abs() < 1e-15));
        // Dependent examples are refused globally but allowed per unit.
        let dup = ExampleManifold::new(rest.clone(), &[e1.clone(), e1.clone()], 6, ManifoldScope::Global, 1.0);
        assert!(matches!(dup, Err(OvertoneError::Input(InputError::Example { .. }))));
        let per =
            ExampleManifold::new(rest.clone(), &[e1.clone(), e1.clone()], 6, ManifoldScope::PerUnit, 1.0).unwrap();
        assert_eq!(per.ranks(), &[1, 1]);
        let (pp, _) = per.project(&e1).unwrap();
        assert!(pp.iter().zip(&e1).all(|(a, b)| (a - b).abs() < 1e-12));
        assert!(ExampleManifold::new(rest.clone(), &[rest.clone()], 6, ManifoldScope::Global, 1.0).is_err());
    }
}
