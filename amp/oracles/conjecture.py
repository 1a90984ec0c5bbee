"""Exhaustive test of the vulnerable-pair conjecture of Section 8 on small instances.

Section 8 conjectures that for many randomizers the neighbouring pair maximising the shuffled
divergence ``D_{e^eps}(S(R^n(X0)) || S(R^n(X1)))`` is

    X0 = (x0, x2, ..., x2),    X1 = (x1, x2, ..., x2),    x0, x1, x2 mutually distinct,

whose divergence Theorem 5 (Section 5.3) computes exactly. The conjecture is open; this module
checks it by brute force. Up to symmetry a neighbouring pair is an ordered pair ``(x0, x1)``
with ``x0 != x1`` plus the multiset of the other ``n - 1`` inputs (the shuffled output does not
depend on their order, nor on which position differs). Both directions of the divergence are
covered because both orders of ``(x0, x1)`` are searched. Each pair is evaluated exactly with
:mod:`amp.oracles.ground_truth`.

For a randomizer without input symmetry the conjectured value is the maximum of the
conjectured form over all distinct triples ``(x0, x1, x2)``; the conjecture holds at ``eps``
when no pair exceeds it by more than a relative tolerance ``rtol`` (plus a floating-point
noise floor :func:`noise_floor`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.backends.exact import MAX_COMPOSITIONS, compositions, n_compositions
from amp.oracles.ground_truth import MAX_HISTOGRAMS, n_histograms
from amp.oracles.ground_truth import Packing as _Packing, as_matrix as _as_matrix
from amp.oracles.ground_truth import check_cost as _check_cost, eps_array as _eps_array
from amp.oracles.ground_truth import histogram_dp as _histogram_dp, hs as _hs
from amp.mechanisms.base import (lower_law_from_matrix, matrix_eps0,
                                 validate_matrix)

__all__ = ["random_ldp_matrix", "noise_floor", "PairSpec", "EpsFinding", "ConjectureReport",
           "search", "n_pairs", "constant_pair_curves"]

#: Default relative tolerance for "the conjectured pair attains the maximum".
RTOL = 1e-9

#: Largest number of (multiset, ordered pair) combinations :func:`search` evaluates.
MAX_PAIRS = 200_000


def noise_floor(eps: float, n: int) -> float:
    """Absolute floating-point error bound used in comparisons: ``1e-14 * n * (1 + e^eps)``.

    Each histogram probability carries a relative error of order ``n * 1e-16``; the divergence
    sums at most total mass ``1 + e^eps`` of them, so its absolute error is far below this.
    """
    return 1e-14 * n * (1.0 + math.exp(eps))


# ---------------------------------------------------------------------------- random matrices
def random_ldp_matrix(rng: np.random.Generator, n_inputs: int, n_outputs: int,
                      eps0: float) -> np.ndarray:
    """A random randomizer matrix that is eps0-LDP with local level exactly ``eps0`` (to 1e-10).

    Entries ``exp(2 eps0 U)``, ``U ~ Uniform(0, 1)``, are normalised per row; the matrix is then
    mixed with its mean row, ``(1 - t) P + t * mean(P)``, with ``t`` found by bisection so that
    :func:`amp.mechanisms.matrix_eps0` is in ``[eps0 - 1e-10, eps0]`` (mixing with a common
    distribution is continuous and lowers the level monotonically to 0). If the normalised
    matrix is already below ``eps0`` (rare), fresh entries are drawn.

    Parameters
    ----------
    rng : numpy.random.Generator
        Seeded generator.
    n_inputs, n_outputs : int
        Shape (``>= 2`` each).
    eps0 : float
        Target local level, ``> 0``.

    Returns
    -------
    numpy.ndarray
        Row-stochastic ``(n_inputs, n_outputs)`` matrix with positive entries.
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    k = V.int_at_least("n_inputs", n_inputs, 2)
    m = V.int_at_least("n_outputs", n_outputs, 2)
    e0 = V.positive_float("eps0", eps0, upper=50.0)
    for _ in range(100):
        W = np.exp(2 * e0 * rng.random((k, m)))
        P = W / W.sum(axis=1, keepdims=True)
        if matrix_eps0(P) >= e0:
            break
    else:  # pragma: no cover - probability ~ 0
        raise ParameterError(f"could not draw a matrix reaching eps0={e0}")
    mean = P.mean(axis=0, keepdims=True)
    lo, hi = 0.0, 1.0                      # level(lo) >= e0 >= level(hi) = 0
    for _ in range(200):
        t = 0.5 * (lo + hi)
        lev = matrix_eps0((1 - t) * P + t * mean)
        if lev > e0:
            lo = t
        else:
            hi = t
            if lev >= e0 - 1e-10:
                break
    Q = (1 - hi) * P + hi * mean
    Q = Q / Q.sum(axis=1, keepdims=True)
    return validate_matrix(Q)


# ---------------------------------------------------------------------------- report types
@dataclass(frozen=True)
class PairSpec:
    """A neighbouring pair up to symmetry: ``X_b = (x_b, *others)``, others sorted."""

    x0: int
    x1: int
    others: tuple[int, ...]

    @property
    def constant_others(self) -> bool:
        """True if all others are the same input ``x2`` (which may equal ``x0`` or ``x1``)."""
        return len(set(self.others)) <= 1

    @property
    def conjectured_form(self) -> bool:
        """True if all others equal one input distinct from ``x0`` and ``x1`` (Section 8)."""
        return (len(set(self.others)) <= 1 and len(self.others) > 0
                and self.others[0] not in (self.x0, self.x1))

    def __str__(self) -> str:
        o = ",".join(map(str, self.others))
        return f"x0={self.x0} x1={self.x1} others={{{o}}}"


@dataclass(frozen=True)
class EpsFinding:
    """Outcome of the search at one ``eps``.

    Attributes
    ----------
    eps : float
        Central privacy parameter.
    max_value : float
        Largest exact divergence over all neighbouring pairs.
    argmax : PairSpec
        A maximiser (a conjectured-form one when the conjecture holds).
    n_maximisers : int
        Pairs attaining ``max_value`` within the tolerance.
    conjectured_value : float
        Largest divergence over conjectured-form pairs (all distinct triples).
    conjectured_pair : PairSpec
        The conjectured-form pair attaining it.
    holds : bool
        ``max_value <= conjectured_value * (1 + rtol) + noise_floor(eps, n)``.
    pairs_violating : int
        Ordered pairs ``(x0, x1)`` whose own maximum over the others is not attained by a
        conjectured-form pair ``(x0, x1, x2)`` (the per-pair form of the conjecture).
    constant_value : float
        Largest divergence over pairs whose others are all one input ``x2``, now allowing
        ``x2 in {x0, x1}``. Appendix B's proof of Theorem 5 never uses that ``x2`` differs
        from ``x0, x1``, so this value is still computable by Theorem 5.
    constant_pair : PairSpec
        A pair attaining ``constant_value`` (within ``rtol`` and the noise floor); among tied
        pairs one whose crowd holds ``x0`` if there is one, so that the choice does not depend
        on the machine's rounding.
    holds_constant : bool
        The relaxed statement: ``max_value <= constant_value * (1 + rtol) + noise_floor``.
    """

    eps: float
    max_value: float
    argmax: PairSpec
    n_maximisers: int
    conjectured_value: float
    conjectured_pair: PairSpec
    holds: bool
    pairs_violating: int
    constant_value: float
    constant_pair: PairSpec
    holds_constant: bool

    @property
    def ratio(self) -> float:
        """``max_value / conjectured_value`` (1 when the conjecture holds; nan if both 0)."""
        if self.conjectured_value > 0:
            return self.max_value / self.conjectured_value
        return float("nan") if self.max_value == 0 else float("inf")


@dataclass(frozen=True)
class ConjectureReport:
    """Result of :func:`search` for one randomizer and one ``n``."""

    label: str
    n: int
    n_inputs: int
    n_outputs: int
    eps0: float
    n_pairs: int
    rtol: float
    findings: tuple[EpsFinding, ...]

    @property
    def holds(self) -> bool:
        """True when the conjectured pair attains the maximum at every searched eps."""
        return all(f.holds for f in self.findings)

    @property
    def holds_constant(self) -> bool:
        """True when a constant-others pair (any ``x2``) attains the maximum at every eps."""
        return all(f.holds_constant for f in self.findings)

    @property
    def counterexamples(self) -> tuple[EpsFinding, ...]:
        """Findings where some pair is strictly worse than the conjectured one."""
        return tuple(f for f in self.findings if not f.holds)

    def table(self) -> str:
        """One line per eps: values, ratio, maximiser."""
        lines = [f"{self.label}: n={self.n}, {self.n_inputs} inputs x {self.n_outputs} outputs, "
                 f"eps0={self.eps0:.4g}, {self.n_pairs} pairs"]
        for f in self.findings:
            mark = "ok " if f.holds else ("CEX" if f.holds_constant else "CEX+")
            lines.append(f"  {mark} eps={f.eps:<7.4g} max={f.max_value:.12g} "
                         f"conj={f.conjectured_value:.12g} ratio={f.ratio:.12g} "
                         f"argmax[{f.argmax}] ties={f.n_maximisers} "
                         f"pairs_violating={f.pairs_violating} "
                         f"constant_others_max={'yes' if f.holds_constant else 'no'}")
        return "\n".join(lines)

    def summary(self) -> str:
        """One-line verdict."""
        bad = self.counterexamples
        if not bad:
            return (f"{self.label} n={self.n}: conjectured pair is a maximiser at all "
                    f"{len(self.findings)} eps values")
        worst = max(bad, key=lambda f: f.ratio)
        relaxed = ("a constant-others pair (x2 in {x0, x1} allowed) attains the maximum at "
                   "every eps" if self.holds_constant else
                   f"even constant-others pairs fail at "
                   f"{sum(not f.holds_constant for f in self.findings)} eps values")
        return (f"{self.label} n={self.n}: COUNTEREXAMPLE at {len(bad)}/{len(self.findings)} "
                f"eps values; worst eps={worst.eps:.4g}: {worst.argmax} gives "
                f"{worst.max_value:.10g} vs conjectured {worst.conjectured_value:.10g} "
                f"(ratio {worst.ratio:.10g}); {relaxed}")


# ---------------------------------------------------------------------------- search
def n_pairs(n_inputs: int, n: int) -> int:
    """Number of pairs searched: ordered ``(x0, x1)`` times multisets of ``n - 1`` inputs."""
    return n_inputs * (n_inputs - 1) * math.comb(n - 1 + n_inputs - 1, n_inputs - 1)


def search(P: object, n: int, eps_values: Sequence[float] | float, *, rtol: float = RTOL,
           label: str = "matrix", merge_columns: bool = True) -> ConjectureReport:
    """Search all neighbouring pairs of ``n`` users for the maximal shuffled divergence.

    For every multiset of the other ``n - 1`` inputs the law of their output histogram is
    computed once, then convolved with each row of ``P`` (the first user's input); every
    ordered pair ``(x0, x1)`` then gives ``D_{e^eps}(S(X0) || S(X1))`` exactly
    (:mod:`amp.oracles.ground_truth`). The maximum is compared with the best conjectured-form pair of
    Section 8 (Theorem 5's pair).

    Parameters
    ----------
    P : array_like
        Randomizer matrix with at least 3 inputs (rows).
    n : int
        Number of users, ``>= 2``.
    eps_values : float or sequence of float
        Central ``eps >= 0`` values.
    rtol : float
        Relative tolerance for "attains the maximum" (default 1e-9).
    label : str
        Name shown in the report.
    merge_columns : bool
        Merge proportional output columns first (exact).

    Returns
    -------
    ConjectureReport

    Raises
    ------
    ParameterError
        Fewer than 3 inputs, ``n < 2``, bad eps, or a search larger than :data:`MAX_PAIRS`
        pairs or :data:`amp.oracles.ground_truth.MAX_HISTOGRAMS` histograms.
    """
    M = _as_matrix(P, merge_columns)
    k, m = M.shape
    if k < 3:
        raise ParameterError(f"the conjecture needs >= 3 inputs (x0, x1, x2 distinct), got "
                             f"{k} rows")
    nn = V.int_at_least("n", n, 2)
    r = V.positive_float("rtol", rtol)
    eps, _ = _eps_array(eps_values)
    npairs = n_pairs(k, nn)
    if npairs > MAX_PAIRS:
        raise ParameterError(f"search too large: {npairs} pairs for {k} inputs and n={nn} "
                             f"(max {MAX_PAIRS})")
    _check_cost(nn, m)
    if n_histograms(nn, m) * math.comb(nn - 1 + k - 1, k - 1) > 50 * MAX_HISTOGRAMS:
        raise ParameterError(f"search too large: {math.comb(nn - 1 + k - 1, k - 1)} multisets "
                             f"x {n_histograms(nn, m)} histograms")
    pack = _Packing.for_(nn, m)
    E = eps.size
    # best[e] over all pairs; per ordered pair (x0,x1): best over multisets and over triples
    values: dict[tuple[int, int, tuple[int, ...]], np.ndarray] = {}
    for others in itertools.combinations_with_replacement(range(k), nn - 1):
        _, Q = _histogram_dp(M, others, pack, last_rows=tuple(range(k)))
        for x0 in range(k):
            for x1 in range(k):
                if x0 != x1:
                    values[(x0, x1, others)] = _hs(Q[x0], Q[x1], eps)
    keys = list(values)
    V_all = np.vstack([values[key] for key in keys])                      # (pairs, E)
    conj_mask = np.array([PairSpec(*key).conjectured_form for key in keys])
    by_pair = {(x0, x1): np.array([i for i, key in enumerate(keys)
                                   if key[0] == x0 and key[1] == x1])
               for x0 in range(k) for x1 in range(k) if x0 != x1}
    conj_idx = np.flatnonzero(conj_mask)
    const_idx = np.flatnonzero([PairSpec(*key).constant_others for key in keys])
    findings = []
    for e in range(E):
        col = V_all[:, e]
        floor = noise_floor(float(eps[e]), nn)
        ci = int(conj_idx[np.argmax(col[conj_idx])])
        conj_val = float(col[ci])
        top = float(col.max())
        tie = col >= top * (1 - r) - floor
        holds = top <= conj_val * (1 + r) + floor
        cvals = col[const_idx]
        const_val = float(cvals.max())
        # pairs tied with the best uniform crowd (symmetric mechanisms give equal values up to
        # rounding, whose order differs between machines): the crowd on x0 first, then the first
        near = const_idx[cvals >= const_val * (1 - r) - floor]
        on_x0 = [i for i in near if keys[i][2][0] == keys[i][0]]
        kc = int(on_x0[0] if on_x0 else near[0])
        holds_c = top <= const_val * (1 + r) + floor
        arg = ci if holds else (kc if holds_c else int(np.argmax(col)))
        # per-pair form: for each ordered (x0, x1), its maximum vs its conjectured triples
        viol = 0
        for idx in by_pair.values():
            best = float(col[idx].max())
            cbest = float(col[idx[conj_mask[idx]]].max())
            if best > cbest * (1 + r) + floor:
                viol += 1
        findings.append(EpsFinding(
            eps=float(eps[e]), max_value=top, argmax=PairSpec(*keys[arg]),
            n_maximisers=int(tie.sum()), conjectured_value=conj_val,
            conjectured_pair=PairSpec(*keys[ci]), holds=bool(holds), pairs_violating=viol,
            constant_value=const_val, constant_pair=PairSpec(*keys[kc]),
            holds_constant=bool(holds_c)))
    return ConjectureReport(label=label, n=nn, n_inputs=k, n_outputs=m,
                            eps0=matrix_eps0(M), n_pairs=len(keys), rtol=r,
                            findings=tuple(findings))


def constant_pair_curves(P: object, x0: int, x1: int, n: int, eps_values: Sequence[float],
                         x2_values: Sequence[int] | None = None) -> dict[int, np.ndarray]:
    """Exact divergence of ``X_b = (x_b, x2, ..., x2)`` for every ``x2``, over many eps.

    Theorem 5 (Section 5.3): ``D = E[(sum_i G_i)_+]/n`` with ``G = (P[x0,y] - e^eps P[x1,y]) /
    P[x2,y]``, ``y ~ P[x2]``. Appendix B's proof does not use that ``x2`` differs from
    ``x0, x1``, so ``x2 in {x0, x1}`` is included (checked against the histogram enumeration
    in the tests). The multinomial counts of the atoms are enumerated once per ``x2`` and
    reused for all eps (cost ``C(n + m - 1, m - 1)`` for ``m`` outputs).
    ``x2_values`` restricts the third inputs (default: all inputs).

    Returns
    -------
    dict
        ``x2 -> array`` of divergences aligned with ``eps_values``.
    """
    from scipy.special import gammaln

    M = validate_matrix(P)
    k = M.shape[0]
    nn = V.int_at_least("n", n, 1)
    eps, _ = _eps_array(eps_values)
    for name, x in (("x0", x0), ("x1", x1)):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < k:
            raise ParameterError(f"{name} must be an input index in [0, {k - 1}], got {show(x)}")
    if x0 == x1:
        raise ParameterError(f"x0 and x1 must differ, got {x0}")
    if x2_values is None:
        x2s = list(range(k))
    else:
        x2s = list(x2_values)
        for x in x2s:
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < k:
                raise ParameterError(f"x2_values must hold input indices in [0, {k - 1}], "
                                     f"got {show(x)}")
    out: dict[int, np.ndarray] = {}
    for x2 in x2s:
        law = lower_law_from_matrix(M, x0, x1, x2)
        K = law.a.size
        if n_compositions(nn, K) > MAX_COMPOSITIONS:
            raise ParameterError(f"n={nn} with {K} atoms gives {n_compositions(nn, K)} count "
                                 f"vectors (max {MAX_COMPOSITIONS})")
        C = compositions(nn, K)
        w = np.exp(gammaln(nn + 1) - gammaln(C + 1).sum(axis=1) + C @ np.log(law.p))
        A, B = C @ law.a, C @ law.b
        vals = np.empty(eps.size)
        for i, e in enumerate(eps):
            s = A - math.exp(e) * B
            pos = s > 0
            vals[i] = math.fsum(w[pos] * s[pos]) / nn
        out[x2] = vals
    return out
