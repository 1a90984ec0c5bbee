"""A fixed population's Theorem 5 lower bound: one concrete dataset pair, certified from below.

Theorem 5 (Section 5.2) bounds the shuffled ``delta(eps)`` from below by the exact divergence
of an explicit pair of neighbouring datasets. For a :class:`~amp.mechanisms.mixture.Population`
(``n_g`` users run ``R_g``) the pair is: the victim, in group ``v``, holds ``x0`` (dataset
``X0``) or ``x1`` (``X1``); every other user of group ``g`` holds the background ``x2_g`` in
both (chosen per group). The true privacy curve of the shuffled population is at least the
hockey-stick divergence ``D_{e^eps}(S(X0) || S(X1))`` of this pair, whatever the choices.

Computed here. The other users are not identically distributed, so the size-biasing that makes
Theorem 5 a sum of i.i.d. variables for one mechanism does not apply. Instead the shuffled
output is post-processed (which can only lower a divergence) to one integer statistic: with
``phi(y) = sign(R_v(x0)(y) - R_v(x1)(y))`` in ``{-1, 0, +1}``, the sum ``D = sum_i phi(Y_i)``
over all reports (a function of the multiset, so of the shuffled output). Under ``X_b``,
``D = phi(Y_v) + D_O`` with ``D_O`` the sum over the others, independent of ``b``; so with
``r_b^s = P[phi(R_v(x_b)) = s]``

    P_b(d) = sum_s r_b^s P[D_O = d - s],   delta_lower(eps) = sum_d (P_0(d) - e^eps P_1(d))_+,

and ``delta_lower(eps) <= D_{e^eps}(S(X0) || S(X1)) <= the true delta(eps)``. For k-RR with a
third background ``phi`` counts ``x0`` minus ``x1`` reports, the statistic whose fluctuations
carry the likelihood ratio ``1 + (e^eps0 - 1)(A - B)/n`` to first order, so little is lost.

Choices (each valid; they only decide how sharp the bound is): the pair ``(x0, x1)`` of the
victim's group with the largest total variation distance (``E_0 phi - E_1 phi`` is twice it;
ties: the first), and for each group the background whose ``phi(R_g(x2))`` has the smallest
variance (ties: the first). Every victim group is tried; the bound is the maximum.

Certified from below, every error accounted:

- the law of ``D_O``: per group the trinomial ``(P, M)`` counts of ``+1`` and ``-1`` on the
  rectangle of their binomial Bernstein windows (mass outside ``<= 2 tail``), from ratio
  recurrences normalised by their sum (``trinomial_diff``: relative error ~1e-12, no
  log-factorial of a large ``n``), summed along ``d = P - M``; the groups convolved directly
  (non-negative terms); cells below ``1e-300`` dropped with their mass counted;
- every computed probability is taken at ``(1 - rel)`` where it adds and ``(1 + rel)`` where it
  subtracts, the weights ``r_0^s - e^eps r_1^s`` rounded the unsafe way, the sum rounded down;
- the mass outside the windows (``out``) can lower ``sum_d (.)_+`` by at most ``e^eps out``,
  which is subtracted.

The returned bracket encloses the statistic's exact ``delta_lower(eps)``; its lower end is the
certified lower bound (the upper end adds the same terms the other way).
"""

from __future__ import annotations

import math

import numpy as np

from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.core.result import Bound

__all__ = ["LowerPair", "lower_pairs", "trinomial_diff", "TAIL"]

TAIL = 1e-25          #: Bernstein tail mass cut per binomial window (subtracted, times e^eps)
DROP = 1e-300         #: cells of the count law below this are dropped (their mass counted)
CELLS = 1 << 21       #: cells of a trinomial computed at once (memory: a few x 16 MB)


def _halfwidth(var: float, tail: float) -> float:
    """``s`` with ``2 exp(-s^2 / (2 (var + s/3))) <= tail`` (Bernstein, [0, 1] summands)."""
    L = 2 * math.log(2 / tail)
    return L / 6 + math.sqrt(L * L / 36 + L * var)


def _window(n: int, p: float, tail: float) -> tuple[int, int, float]:
    """``(lo, hi, cut)``: a window of ``Bin(n, p)`` and a bound on the mass outside it."""
    if p <= 0.0:
        return 0, 0, 0.0
    if p >= 1.0:
        return n, n, 0.0
    mu, s = n * p, _halfwidth(n * p * (1 - p), tail)
    lo, hi = max(0, math.floor(mu - s)), min(n, math.ceil(mu + s))
    return lo, hi, (tail if (lo > 0 or hi < n) else 0.0)


def _scaled(lo: int, hi: int, mode: int, up, down) -> np.ndarray:
    """A unimodal sequence ``x_lo .. x_hi`` with ``x_mode = 1``, from its ratios: ``x_{j+1} =
    x_j up(j)`` above the mode, ``x_{j-1} = x_j down(j)`` below it (vectorised ``up``/``down``
    over ``j``). Each step is one division and one product: relative error ``<= 2 u`` per step
 from the mode (the ratio, one rounding, and the product, one; a common rounding
    of ``up``'s constant: a third)."""
    mode = min(max(mode, lo), hi)
    x = np.ones(hi - lo + 1)
    if hi > mode:
        x[mode - lo + 1:] = np.cumprod(up(np.arange(mode, hi, dtype=float)))
    if mode > lo:
        x[:mode - lo] = np.cumprod(down(np.arange(mode, lo, -1, dtype=float)))[::-1]
    return x


def trinomial_diff(n: int, pp: float, pm: float, tail: float = TAIL
                   ) -> tuple[int, np.ndarray, float, float]:
    """The law of ``P - M`` for ``(P, M, n - P - M) ~ Multinomial(n; pp, pm, 1 - pp - pm)``:
    ``(offset, pmf, out, rel)``, ``pmf`` on ``offset + arange(len(pmf))`` within relative
    error ``rel`` of the exact probabilities, ``out`` a bound on the mass cut away.

    On the rectangle of the two binomial Bernstein windows (mass outside ``<= out``), the
    multinomial probability is ``C rho_P sigma_M tau_{P+M}`` with ``rho_a = (n pp)^a / a!``,
    ``sigma_b = (n pm)^b / b!``, ``tau_s = p0^(n-s) / ((n-s)! n^s)`` (the powers of ``n``
    cancel); each sequence is computed from its ratios, scaled to 1 at its mode
    (:func:`_scaled`, no under- or overflow), and the cells are normalised by their exactly
    rounded sum (``math.fsum``), so no log-factorial of a large ``n`` enters: the relative
    error is ``2 u`` per step from the modes, not ``u n log n``. The unknown mass outside the
    rectangle (``o <= out``) scales the true cells by ``1 - o``: within ``rel``."""
    if n == 0:
        return 0, np.ones(1), 0.0, 0.0
    p0 = max(0.0, 1.0 - pp - pm)
    a0, a1, ca = _window(n, pp, tail)
    b0, b1, cb = _window(n, pm, tail)
    rho = _scaled(a0, a1, int(n * pp), lambda j: (n * pp) / (j + 1), lambda j: j / (n * pp))
    sig = _scaled(b0, b1, int(n * pm), lambda j: (n * pm) / (j + 1), lambda j: j / (n * pm))
    s_lo, s_hi = a0 + b0, min(n, a1 + b1)
    if p0 <= 0.0:
        tau = (np.arange(s_lo, s_hi + 1) == n).astype(float)
        steps_t = 0
    else:
        s_mode = int(n * (1 - p0))
        tau = _scaled(s_lo, s_hi, s_mode, lambda s: (n - s) / (n * p0),
                      lambda s: (n * p0) / (n - s + 1))
        steps_t = max(abs(s_hi - s_mode), abs(s_mode - s_lo))
    dmin = a0 - b1
    pmf = np.zeros((a1 - b0) - dmin + 1)
    B = np.arange(b0, b1 + 1)[None, :]
    rows = max(1, CELLS // (b1 - b0 + 1))
    for start in range(a0, a1 + 1, rows):          # blocks of rows: bounded memory
        A = np.arange(start, min(a1, start + rows - 1) + 1)[:, None]
        S = A + B
        w = np.where(S <= n, rho[A - a0] * sig[None, :] * tau[np.minimum(S, s_hi) - s_lo],
                     0.0)
        pmf += np.bincount((A - B - dmin).ravel(), weights=w.ravel(), minlength=pmf.size)
    total = math.fsum(pmf.tolist())
    pmf = pmf / total
    steps = (a1 - a0) + (b1 - b0) + steps_t
    # cells: 2u per ratio step + 2 products; bins: sequential sums of <= min(width) terms;
    # the normalisation: fsum (u) and one division (u); the unknown mass outside (<= out)
    # (a cell's error enters twice: in it and in the normalising sum)
    rel = (2 * (3 * steps + 4 + min(a1 - a0, b1 - b0) + (a1 - a0)) + 4) * U + 2 * (ca + cb)
    return dmin, pmf, ca + cb, rel


def _trim(off: int, pmf: np.ndarray, rel: float) -> tuple[int, np.ndarray, float]:
    keep = np.nonzero(pmf > DROP)[0]
    if keep.size == 0:
        return off, pmf[:1] * 0.0, float(pmf.sum()) * (1 + rel)
    a, b = int(keep[0]), int(keep[-1])
    cut = (float(pmf[:a].sum()) + float(pmf[b + 1:].sum())) * (1 + rel) + pmf.size * DROP
    return off + a, pmf[a:b + 1], cut


class LowerPair:
    """One Theorem 5 dataset pair of a population (module docstring) and its statistic's law:
    a certified curve ``eps -> delta_lower(eps)`` (the :class:`amp.inversion.Curve` protocol,
    so :func:`amp.inversion.epsilon_of_curve` searches it with ``bound="lower"``).

    Attributes: ``group`` (the victim's), ``pair`` ``(x0, x1)``, ``backgrounds`` (one input
    per group), ``r0``, ``r1`` (the victim's law of ``phi`` under each input, indexed
    ``s + 1``), the count law ``(off, pmf, out, rel)`` of the others' ``D_O``.
    """

    structured = False

    def __init__(self, stacked: np.ndarray, groups: list[int], v: int,
                 pair: tuple[int, int], backgrounds: list[int], label: str,
                 tail: float = TAIL):
        d = stacked.shape[0] // len(groups)
        self.group, self.pair, self.backgrounds = v, tuple(pair), list(backgrounds)
        rows = stacked[v * d:(v + 1) * d]
        x0, x1 = pair
        phi = np.sign(rows[x0] - rows[x1]).astype(int)
        self.phi = phi
        self.r0 = np.array([rows[x0][phi == s].sum() for s in (-1, 0, 1)])
        self.r1 = np.array([rows[x1][phi == s].sum() for s in (-1, 0, 1)])
        off, pmf, out, rel = 0, np.ones(1), 0.0, 0.0
        for g, ng in enumerate(groups):
            others = ng - (g == v)
            if others == 0:
                continue
            q = stacked[g * d + backgrounds[g]]
            pp, pm = float(q[phi == 1].sum()), float(q[phi == -1].sum())
            o2, w2, c2, r2 = trinomial_diff(others, pp, pm, tail)
            pmf = np.convolve(pmf, w2)
            off, out = off + o2, out + c2
            rel = (1 + rel) * (1 + r2) * (1 + 4 * U * min(pmf.size, w2.size)) - 1
            off, pmf, cut = _trim(off, pmf, rel)
            out += cut
        self.off, self.pmf, self.out, self.rel = off, pmf, out, rel + 1e-12
        ratio = [a / b for a, b in zip(self.r0, self.r1) if a > 0 and b > 0]
        if any(a > 0 and b == 0 for a, b in zip(self.r0, self.r1)):
            raise ParameterError("a population's lower bound needs eps0 < inf (a report "
                                 "possible under x0 only)")
        self.max_eps = math.log(max(ratio)) * (1 + 64 * U) + 1e-300 if ratio else 0.0
        self.law = _Label(label)
        self._memo: dict[float, Bound] = {}

    def delta(self, eps: float, rel_tol: float = 0.0, abs_tol: float = 0.0) -> Bound:
        """Certified bracket of the statistic's ``delta_lower(eps)`` (module docstring): the
        lower end is below the exact divergence of the dataset pair. One vectorised pass over
        the count law (no refinement: the bracket is as narrow as the float error allows, so
        ``rel_tol`` and ``abs_tol`` are met whenever they can be)."""
        known = self._memo.get(eps)
        if known is not None:
            return known
        e = math.exp(eps) * (1 + 4 * U)
        pad = 16 * U
        w_lo = self.r0 - e * self.r1 - pad * (self.r0 + e * self.r1)
        w_hi = self.r0 - self.r1 * math.exp(eps) * (1 - 4 * U) + pad * (self.r0 + e * self.r1)
        if np.all(w_hi <= 0):
            lo = up = 0.0
        else:
            P = np.concatenate([[0.0], self.pmf, [0.0]])         # P_O on off-1 .. off+L
            L = P.size
            rel = self.rel

            def shifted(s: int) -> np.ndarray:                    # P_O(d - s) on the grid
                out = np.zeros(L + 2)
                out[1 + s:1 + s + L] = P
                return out

            sh = [shifted(s) for s in (-1, 0, 1)]
            pos_lo = sum(max(w, 0.0) * x for w, x in zip(w_lo, sh)) * (1 - rel)
            neg_lo = sum(min(w, 0.0) * x for w, x in zip(w_lo, sh)) * (1 + rel)
            t_lo = pos_lo + neg_lo - 4 * U * (pos_lo - neg_lo)
            pos_hi = sum(max(w, 0.0) * x for w, x in zip(w_hi, sh)) * (1 + rel)
            neg_hi = sum(min(w, 0.0) * x for w, x in zip(w_hi, sh)) * (1 - rel)
            t_hi = pos_hi + neg_hi + 4 * U * (pos_hi - neg_hi)
            m = t_lo.size
            lo = float(np.sum(np.maximum(t_lo, 0.0))) * (1 - 2 * m * U) - e * self.out
            up = float(np.sum(np.maximum(t_hi, 0.0))) * (1 + 2 * m * U) \
                + float(np.sum(np.maximum(w_hi, 0.0))) * self.out
            lo, up = max(lo, 0.0), min(max(up, 0.0), 1.0)
        out = Bound("delta", min(lo, up), up, "lower", "population-theorem5:count-difference",
                    None, self.law.label, {"eps": eps},
                    details={"victim_group": self.group, "pair": self.pair,
                             "backgrounds": tuple(self.backgrounds), "window": int(self.pmf.size),
                             "mass_cut": self.out})
        self._memo[eps] = out
        return out

    def delta_for_search(self, eps: float, tol: float, abs_tol: float) -> Bound:
        return self.delta(eps)

    def search_tol(self, rel_tol: float) -> float | None:
        return 1e-9

    def estimate_log_delta(self, eps: float) -> float:
        """Uncertified: the log of the bracket's upper end (exact to ~1e-8 and cheap)."""
        u = self.delta(eps).upper
        return math.log(u) if u > 0 else -math.inf


class _Label:
    """What a profile reads of a curve's ``law``: its label."""

    def __init__(self, label: str):
        self.label = label


def _pair_of(rows: np.ndarray) -> tuple[int, int]:
    """The ordered pair of inputs with the largest total variation distance (ties: first)."""
    d = rows.shape[0]
    best, pair = -1.0, (0, 1)
    for i in range(d):
        for j in range(d):
            if i != j:
                tv = float(np.abs(rows[i] - rows[j]).sum())
                if tv > best * (1 + 1e-12):
                    best, pair = tv, (i, j)
    return pair


def _background(rows: np.ndarray, phi: np.ndarray) -> int:
    """The input whose ``phi``-law has the smallest variance (ties: first)."""
    pp, pm = rows[:, phi == 1].sum(axis=1), rows[:, phi == -1].sum(axis=1)
    var = pp + pm - (pp - pm) ** 2
    return int(np.argmin(np.round(var, 12)))


def lower_pairs(stacked: np.ndarray, groups: list[int], name: str, tail: float = TAIL
                ) -> list[LowerPair]:
    """One :class:`LowerPair` per victim group (module docstring's choices): the population's
    Theorem 5 lower bound is the maximum of their curves."""
    d = stacked.shape[0] // len(groups)
    out = []
    for v in range(len(groups)):
        rows = stacked[v * d:(v + 1) * d]
        x0, x1 = _pair_of(rows)
        phi = np.sign(rows[x0] - rows[x1])
        bg = [_background(stacked[g * d:(g + 1) * d], phi) for g in range(len(groups))]
        label = (f"{name}: Theorem 5 pair, victim in group {v} ({x0} vs {x1}), backgrounds "
                 f"{bg}")
        out.append(LowerPair(stacked, groups, v, (x0, x1), bg, label, tail))
    return out
