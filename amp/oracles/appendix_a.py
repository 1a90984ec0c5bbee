"""Appendix A: the counts ``N0, N1`` of the privacy blanket for k-RR, and their divergences.

Setting (Section 3.2, Definition "Privacy Blanket Reduction Pair"; Appendix A). k-RR with
``p = 1/(e^eps0 + k - 1)`` has blanket ``omega = Uniform[k]`` and mass ``gamma = k p``; its
left-over distribution ``LO(x)`` is the point mass at ``x``. In ``P0^B`` the first user holds
``x0 = 0`` (``x1 = 1`` in ``P1^B``), ``|b| ~ Bin(n-1, gamma)`` other users sample ``omega``,
and the first user samples ``omega`` too with probability ``gamma`` (``b1 = 1``) or reports
its input (``b1 = 0``). ``N0`` and ``N1`` count the outputs equal to ``x0`` and ``x1`` among the
first user's output and the ``N = |b|`` blanket outputs.

Under ``b1 = 0`` the first output is ``x0``; given ``N``, the blanket counts
``(B0, B1, rest) ~ Multinomial(N; 1/k, 1/k, (k-2)/k)``, so

    N ~ Bin(n-1, k/(e^eps0 + k - 1)),  N0 = B0 + 1 with B0 | N ~ Bin(N, 1/k),
    N1 | N, N0 ~ Bin(N - (N0 - 1), 1/(k-1))                            (correct law)

The paper writes ``N1 ~ Bin(N - N0, 1/(k-1))``; read literally (``N0`` including the ``+1``)
that loses one trial and is undefined when ``N0 = N + 1`` (``B0 = N``); read with ``N0`` the
binomial part before the ``+1`` it is the correct law. Koskela et al. (2021) used independent
``N0 - 1, N1 ~ Bin(n-1, 1/(e^eps0 + k - 1))`` (the paper prints ``e^eps``; ``eps0`` is meant):
correct marginals, wrong joint law.

Divergences. Conditioned on ``b1 = 0`` the likelihood ratio of ``P0^B`` to ``P1^B`` is
``N0/N1`` (Appendix A), so the conditional divergence is
``D(A0 || A1) = E[(1 - e^eps N1/N0)_+]`` (expectation under the ``b1 = 0`` law). The
unconditioned ``P_a^B = gamma Q + (1 - gamma) A_a`` mixes in the common ``b1 = 1`` part ``Q``;
with ``Q/A0 = (N + 1)/(k N0)`` this gives the exact value of Theorem 4,

    D_{e^eps}(P0^B || P1^B)
        = p * E[((1 - e^eps)(N + 1) + (e^eps0 - 1)(N0 - e^eps N1))_+ / N0]   (1)

(the ``N0 = 0`` histograms, where ``A0 = 0``, contribute nothing since both terms are <= 0),
which equals ``delta_enumerate(KRR(eps0, k=k).gparv(), n, eps)``. Revealing ``b1`` gives the
looser reduction value ``(1 - gamma) D(A0 || A1) >= (1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from amp.core.lazy import lazy
from amp.core.validate import show
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.backends.exact import compositions

# scipy is imported on first use (amp.core.lazy): import amp stays fast
gammaln = lazy("scipy.special", "gammaln")
binom = lazy("scipy.stats", "binom")

__all__ = [
    "blanket_parameters", "CountLaw", "dependent_law", "paper_literal_law",
    "independent_law", "enumerate_blanket_counts", "simulate_blanket_counts",
    "total_variation", "conditional_delta", "b1_revealed_delta", "exact_delta",
    "AppendixAReport", "appendix_a_report",
]

#: Largest ``n_samples * (n - 1)`` uniform draws :func:`simulate_blanket_counts` makes at once.
SIM_CHUNK = 10_000_000

#: Largest ``n`` for the closed-form laws (dense ``n^3`` joint arrays, 64 MB at n = 200).
MAX_N = 200


def _check(k: object, eps0: object, n: object) -> tuple[int, float, int]:
    kk = V.int_at_least("k", k, 2)
    e0 = V.eps0_value(eps0)
    nn = V.users(n)
    if nn > MAX_N:
        raise ParameterError(f"n must be <= {MAX_N} for the dense count laws, got {nn}")
    return kk, e0, nn


def blanket_parameters(k: int, eps0: float) -> tuple[float, float]:
    """``(p, gamma)`` of k-RR: ``p = 1/(e^eps0 + k - 1)``, ``gamma = k p`` (Example 4.0)."""
    kk = V.int_at_least("k", k, 2)
    e0 = V.eps0_value(eps0)
    p = 1.0 / (math.exp(e0) + kk - 1)
    return p, kk * p


@dataclass(frozen=True)
class CountLaw:
    """A law of the blanket counts under ``P0^B`` given ``b1 = 0``.

    Attributes
    ----------
    name : str
        Which statement of the law.
    pmf : numpy.ndarray
        Joint pmf of ``(N0, N1)``, shape ``(n + 1, n)``, indexed ``[N0, N1]``.
    joint : numpy.ndarray or None
        Joint pmf of ``(N, N0, N1)``, shape ``(n, n + 1, n)``, when the statement defines
        ``N`` (``None`` for the independent law).
    ill_defined_mass : float
        Probability of the cases the statement leaves undefined (the literal reading's
        ``Bin(-1, .)``); there ``N1 = 0`` is used.
    """

    name: str
    pmf: np.ndarray = field(repr=False)
    joint: np.ndarray | None = field(default=None, repr=False)
    ill_defined_mass: float = 0.0


def _binom_pmf_table(n: int, prob: float) -> np.ndarray:
    """``T[m, j] = Pr[Bin(m, prob) = j]`` for ``0 <= j <= m < n + 1`` (zeros elsewhere)."""
    m = np.arange(n + 1)[:, None]
    j = np.arange(n + 1)[None, :]
    with np.errstate(invalid="ignore"):
        t = binom.pmf(j, m, prob)
    return np.where(j <= m, np.nan_to_num(t), 0.0)


def dependent_law(k: int, eps0: float, n: int) -> CountLaw:
    """The correct joint law of ``(N, N0, N1)`` given ``b1 = 0`` (Appendix A, corrected).

    ``N ~ Bin(n-1, gamma)``, ``N0 - 1 | N ~ Bin(N, 1/k)``,
    ``N1 | N, N0 ~ Bin(N - (N0 - 1), 1/(k-1))``, i.e. the multinomial split of ``N`` uniform
    draws on ``[k]`` into ``(x0, x1, other)``.
    """
    kk, e0, nn = _check(k, eps0, n)
    _, gam = blanket_parameters(kk, e0)
    pN = binom.pmf(np.arange(nn), nn - 1, gam)
    B0 = _binom_pmf_table(nn - 1, 1.0 / kk)
    B1 = _binom_pmf_table(nn - 1, 1.0 / (kk - 1))
    J = np.zeros((nn, nn + 1, nn))
    for N in range(nn):
        for b0 in range(N + 1):
            J[N, b0 + 1, :N - b0 + 1] = pN[N] * B0[N, b0] * B1[N - b0, :N - b0 + 1]
    return CountLaw("dependent (correct)", J.sum(axis=0), J)


def paper_literal_law(k: int, eps0: float, n: int) -> CountLaw:
    """The paper's statement read literally: ``N1 ~ Bin(N - N0, 1/(k-1))`` with ``N0`` incl. +1.

    ``N - N0 = N - B0 - 1`` is ``-1`` when ``B0 = N``; that event (probability
    ``E[(1/k)^N]``) is recorded in ``ill_defined_mass`` and given ``N1 = 0``.
    """
    kk, e0, nn = _check(k, eps0, n)
    _, gam = blanket_parameters(kk, e0)
    pN = binom.pmf(np.arange(nn), nn - 1, gam)
    B0 = _binom_pmf_table(nn - 1, 1.0 / kk)
    B1 = _binom_pmf_table(nn - 1, 1.0 / (kk - 1))
    J = np.zeros((nn, nn + 1, nn))
    bad = 0.0
    for N in range(nn):
        for b0 in range(N + 1):
            w = pN[N] * B0[N, b0]
            trials = N - (b0 + 1)
            if trials < 0:
                bad += w
                J[N, b0 + 1, 0] += w
            else:
                J[N, b0 + 1, :trials + 1] += w * B1[trials, :trials + 1]
    return CountLaw("paper, literal (N - N0)", J.sum(axis=0), J, float(bad))


def independent_law(k: int, eps0: float, n: int) -> CountLaw:
    """Koskela et al. (2021): ``N0 - 1`` and ``N1`` independent ``Bin(n-1, 1/(e^eps0+k-1))``."""
    kk, e0, nn = _check(k, eps0, n)
    p, _ = blanket_parameters(kk, e0)
    b = binom.pmf(np.arange(nn), nn - 1, p)
    pmf = np.zeros((nn + 1, nn))
    pmf[1:, :] = np.outer(b, b)
    return CountLaw("independent (Koskela et al.)", pmf, None)


def enumerate_blanket_counts(k: int, eps0: float, n: int) -> CountLaw:
    """Exact joint law of ``(N, N0, N1)`` given ``b1 = 0`` by enumerating the blanket process.

    Each of the ``n - 1`` other users independently falls in one of four categories: not in
    the blanket (``1 - gamma``), blanket output ``x0`` (``p``), ``x1`` (``p``), another value
    (``(k - 2) p``). The multinomial over these categories is enumerated term by term
    (``C(n + 2, 3)`` count vectors); ``N0`` adds the first user's truthful ``x0``.
    """
    kk, e0, nn = _check(k, eps0, n)
    if nn > 200:
        raise ParameterError(f"n must be <= 200 for the enumeration oracle, got {nn}")
    p, gam = blanket_parameters(kk, e0)
    probs = np.array([1 - gam, p, p, (kk - 2) * p])
    C = compositions(nn - 1, 4)
    keep = np.ones(C.shape[0], dtype=bool)
    if kk == 2:                                    # the "other value" category is empty
        keep = C[:, 3] == 0
        C = C[keep]
    with np.errstate(divide="ignore"):
        logp = np.log(probs)
    logw = (gammaln(nn) - gammaln(C + 1).sum(axis=1)
            + np.where(C > 0, C * logp[None, :], 0.0).sum(axis=1))
    w = np.exp(logw)
    J = np.zeros((nn, nn + 1, nn))
    N = C[:, 1] + C[:, 2] + C[:, 3]
    np.add.at(J, (N, C[:, 1] + 1, C[:, 2]), w)
    return CountLaw("exact enumeration of the blanket process", J.sum(axis=0), J)


def simulate_blanket_counts(k: int, eps0: float, n: int, n_samples: int,
                            seed: int | np.random.Generator = 0) -> CountLaw:
    """Monte Carlo of the actual blanket process given ``b1 = 0`` (empirical law).

    Every one of the ``n - 1`` other users draws ``b_i ~ Bern(gamma)`` and, if ``b_i = 1``, an
    output uniform on ``[k]``; the first user outputs ``x0 = 0``. ``N = sum b_i``, ``N0`` and
    ``N1`` count the outputs ``0`` and ``1``. Returns the empirical pmf (frequencies).
    """
    kk, e0, nn = _check(k, eps0, n)
    S = V.int_at_least("n_samples", n_samples, 1)
    rng = seed if isinstance(seed, np.random.Generator) else \
        np.random.default_rng(V.int_at_least("seed", seed, 0))
    _, gam = blanket_parameters(kk, e0)
    J = np.zeros((nn, nn + 1, nn))
    users = max(1, nn - 1)
    step = max(1, SIM_CHUNK // users)
    done = 0
    while done < S:
        s = min(step, S - done)
        b = rng.random((s, nn - 1)) < gam
        y = rng.integers(0, kk, size=(s, nn - 1))
        N = b.sum(axis=1)
        N0 = (b & (y == 0)).sum(axis=1) + 1
        N1 = (b & (y == 1)).sum(axis=1)
        np.add.at(J, (N, N0, N1), 1.0)
        done += s
    J /= S
    return CountLaw(f"simulation ({S} samples)", J.sum(axis=0), J)


def total_variation(a: CountLaw | np.ndarray, b: CountLaw | np.ndarray) -> float:
    """Total variation ``(1/2) sum |a - b|`` between two pmfs of ``(N0, N1)`` (or arrays)."""
    A = a.pmf if isinstance(a, CountLaw) else np.asarray(a, dtype=float)
    B = b.pmf if isinstance(b, CountLaw) else np.asarray(b, dtype=float)
    if A.ndim != B.ndim:
        raise ParameterError(f"pmfs must have the same dimension, got {A.ndim} and {B.ndim}")
    shape = tuple(max(x, y) for x, y in zip(A.shape, B.shape))
    Ap = np.zeros(shape)
    Bp = np.zeros(shape)
    Ap[tuple(slice(0, s) for s in A.shape)] = A
    Bp[tuple(slice(0, s) for s in B.shape)] = B
    return 0.5 * float(np.abs(Ap - Bp).sum())


def conditional_delta(law: CountLaw, eps: float) -> float:
    """``D_{e^eps}(P0^B | b1=0 || P1^B | b1=0) = E[(1 - e^eps N1/N0)_+]`` (Appendix A ratio)."""
    e = V.positive_float("eps", eps, allow_zero=True, upper=700.0)
    n0 = np.arange(law.pmf.shape[0])[:, None].astype(float)
    n1 = np.arange(law.pmf.shape[1])[None, :].astype(float)
    if law.pmf[0].sum() > 0:
        raise ParameterError("the law puts mass on N0 = 0, impossible given b1 = 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(n0 > 0, np.maximum(1 - math.exp(e) * n1 / n0, 0.0), 0.0)
    return math.fsum((law.pmf * g).ravel())


def b1_revealed_delta(law: CountLaw, k: int, eps0: float, eps: float) -> float:
    """``(1 - gamma) * conditional_delta``: the reduction pair with ``b1`` revealed (>= exact)."""
    _, gam = blanket_parameters(k, eps0)
    return (1 - gam) * conditional_delta(law, eps)


def exact_delta(law: CountLaw, k: int, eps0: float, eps: float) -> float:
    """``D_{e^eps}(P0^B || P1^B)`` of Theorem 4 from the joint law of ``(N, N0, N1)``, eq. (1).

    ``p * E[((1 - e^eps)(N + 1) + (e^eps0 - 1)(N0 - e^eps N1))_+ / N0]`` with
    ``p = 1/(e^eps0 + k - 1)``; needs a law that defines ``N`` (``law.joint``).
    """
    if law.joint is None:
        raise ParameterError(f"law {show(law.name)} does not define N; eq. (1) needs (N, N0, N1)")
    e = V.positive_float("eps", eps, allow_zero=True, upper=700.0)
    p, _ = blanket_parameters(k, eps0)
    E, E0 = math.exp(e), math.exp(V.eps0_value(eps0))
    n, a, b = law.joint.shape
    N = np.arange(n)[:, None, None].astype(float)
    N0 = np.arange(a)[None, :, None].astype(float)
    N1 = np.arange(b)[None, None, :].astype(float)
    num = np.maximum((1 - E) * (N + 1) + (E0 - 1) * (N0 - E * N1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(N0 > 0, num / N0, 0.0)
    return p * math.fsum((law.joint * g).ravel())


# ---------------------------------------------------------------------------- report
@dataclass(frozen=True)
class AppendixAReport:
    """Comparison of the three statements of the law with a simulation and the exact value.

    ``tv`` maps law name to the total variation distance of its ``(N0, N1)`` pmf from the
    simulation's; ``conditional`` and ``b1_revealed`` to the divergences each law implies;
    ``exact_from_law`` to eq. (1) (laws defining ``N``); ``reference`` is
    ``delta_enumerate(KRR(eps0, k=k).gparv(), n, eps)``.
    """

    k: int
    eps0: float
    n: int
    eps: float
    n_samples: int
    seed: int
    tv: dict[str, float]
    tv_noise: float
    conditional: dict[str, float]
    b1_revealed: dict[str, float]
    exact_from_law: dict[str, float]
    reference: float
    literal_ill_defined_mass: float

    def summary(self) -> str:
        """Readable multi-line summary."""
        lines = [f"Appendix A, k-RR k={self.k} eps0={self.eps0:g} n={self.n} eps={self.eps:g}",
                 f"  reference D(P0^B||P1^B) = delta_enumerate(GPARV) = {self.reference:.12g}",
                 f"  TV to simulation ({self.n_samples} samples, seed {self.seed}; "
                 f"noise level of the exact law ~ {self.tv_noise:.3g}):"]
        for name, v in self.tv.items():
            lines.append(f"    {name:<42s} {v:.4g}")
        lines.append("  divergence implied:  conditional D(A0||A1) | (1-gamma)*that "
                     "(b1 revealed) | eq. (1)")
        for name in self.conditional:
            ex = self.exact_from_law.get(name)
            ex_s = f"{ex:.12g}" if ex is not None else "n/a (no N)"
            lines.append(f"    {name:<42s} {self.conditional[name]:.10g} | "
                         f"{self.b1_revealed[name]:.10g} | {ex_s}")
        lines.append(f"  literal statement undefined (Bin(-1, .)) with probability "
                     f"{self.literal_ill_defined_mass:.4g}")
        return "\n".join(lines)


def appendix_a_report(k: int, eps0: float, n: int, eps: float, n_samples: int = 200_000,
                      seed: int = 0) -> AppendixAReport:
    """Build :class:`AppendixAReport` (simulation seeded; reference by exact enumeration)."""
    from amp.backends.exact import delta_enumerate
    from amp.mechanisms.table1 import KRR

    kk, e0, nn = _check(k, eps0, n)
    e = V.positive_float("eps", eps, allow_zero=True, upper=700.0)
    laws = [dependent_law(kk, e0, nn), paper_literal_law(kk, e0, nn),
            independent_law(kk, e0, nn)]
    sim = simulate_blanket_counts(kk, e0, nn, n_samples, seed)
    exact = laws[0]
    # expected TV of an empirical pmf from its own law ~ sum sqrt(p(1-p)/S) * sqrt(2/pi) / 2
    noise = 0.5 * math.sqrt(2 / math.pi) * float(
        np.sqrt(exact.pmf * (1 - exact.pmf) / n_samples).sum())
    ref = delta_enumerate(KRR(e0, k=kk).gparv(), nn, e)
    return AppendixAReport(
        k=kk, eps0=e0, n=nn, eps=e, n_samples=int(n_samples), seed=int(seed),
        tv={law.name: total_variation(law, sim) for law in laws}, tv_noise=noise,
        conditional={law.name: conditional_delta(law, e) for law in laws},
        b1_revealed={law.name: b1_revealed_delta(law, kk, e0, e) for law in laws},
        exact_from_law={law.name: exact_delta(law, kk, e0, e) for law in laws
                        if law.joint is not None},
        reference=ref, literal_ill_defined_mass=laws[1].ill_defined_mass)
