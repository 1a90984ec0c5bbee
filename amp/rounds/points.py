"""Where to place the certified points of a composed upper end (:mod:`amp.rounds`).

The upper end of ``T`` composed rounds is the connect-the-dots PLD of certified upper values
``u_i >= H(eps_i)`` of one round's Theorem 4 profile at grid points ``eps_i = k_i step``
(:meth:`amp.rounds.ComposableProfile.upper_points`). Each certified value costs one Theorem 4
evaluation (about 0.05 s at ``n = 10^6``, about 1 s at ``n = 10^9``), so the number of points
is the cost. This module chooses *which* grid indices ``k_i`` to certify; it never supplies a
value.

Validity does not depend on the choice. Steps 2-3 of :mod:`amp.rounds` hold for any finite set
of grid points that contains ``eps = 0`` and the grid end ``eps_m`` (``u(eps_m) <= TAIL_DELTA``,
the mass at infinity beyond it): the convex minorant of the certified values stays ``>= H`` at
every chosen point (the chord interpolation of the true values is a convex minorant of the
certified values), a chord of a convex function lies above it between the points, and ``H``
is non-increasing beyond ``eps_m``. :func:`choose_knots` always returns both ends. A bad choice
only makes the bound looser; the estimates below (uncertified) decide nothing else.

How the choice is made (first order in the interpolation error). With ``S`` the privacy loss
of the other ``T - 1`` rounds, the composed curve is ``delta_T(e) = E_S[delta_1(e - S)]``,
linear in the one-round curve ``delta_1``; on the negative side
``delta_1(-x) = 1 - e^(-x) + e^(-x) delta_1(x)``. Raising ``delta_1`` by ``r(x)`` at ``x >= 0``
(the chord's excess over ``H``) therefore raises ``delta_T(e*)`` by about
``T sum_x W(x) r(x)`` with ``W(x) = P(S = e* - x) + e^(-x) P(S = e* + x)``. We estimate ``H`` by
the normal approximation of ``E[(G_1 + ... + G_n)_+] / n`` (:func:`normal_estimate`, within a
fraction of a percent of the certified values in the bulk at ``n >= 10^4`` for k-RR), take
``P(S = .)`` from the ``(T - 1)``-fold composition of the estimate's connect-the-dots PLD
(a pilot) and ``e*`` from the ``T``-fold one, and choose by dynamic programming the fewest
grid indices whose weighted chord excess ``sum_x W(x) r(x)`` is at most
``KNOT_MARGIN`` times that of the uniform grid of ``points`` points (the grid used before):
to first order the composed bound is then at least as tight as the uniform grid's, with far
fewer points (the uniform grid spends most of its points where ``W`` is negligible, in the
profile's far tail). Once the chosen points are certified, :func:`knots_suffice` redoes the
comparison with the estimate corrected through the certified values; when it fails (small
``n``, where the normal approximation is poor) :func:`certify` adds the uniform grid's points,
so the curve is then at least as tight as the uniform grid's (more points only lower the
convex minorant). At most :data:`UNION_MAX_N` users per round, where a point costs
milliseconds, the uniform grid's points are always certified beside the chosen ones: the
first-order choice alone was once looser than the uniform grid (a case at n = 300, T = 1000).
Tested against the exact composition of the Theorem 4 pair
(``tests/test_rounds_points.py``).
"""

from __future__ import annotations

import math

import numpy as np

from amp.rounds import adapter as A
from amp.core.floats import U
from amp.core.tails import chernoff_upper
from amp.mechanisms.gparv import GPARV
from amp.rounds.pmf import check_compose_memory, convex_minorant

__all__ = ["normal_estimate", "pilot_weights", "chord_excess", "fewest_knots", "choose_knots",
           "knots_suffice", "uniform_knots", "mirror", "profile_estimate", "profile_knots",
           "profile_knots_suffice", "tail_upper", "certify", "KNOT_MARGIN", "MAX_CANDIDATES",
           "UNION_MAX_N"]

#: The chosen points' weighted chord excess is at most this fraction of the uniform grid's.
KNOT_MARGIN = 0.85
#: At most this many candidate grid indices (a coarser stride beyond).
MAX_CANDIDATES = 1200
#: Up to this many users per round a certified point costs milliseconds: the chosen points are
#: certified together with the uniform grid's, so the curve is never looser than the uniform
#: grid's (the choice is first order only: 9-RR, eps0 = 0.6, n = 300, q = 0.2, T = 1000 rounds
#: at delta = 1e-8 gave eps <= 1.59053 with the chosen points alone, 1.59049 with the uniform
#: grid, 1.58960 with both). Above it the chosen points alone (the cost at n = 10^6 - 10^9).
UNION_MAX_N = 100_000


def uniform_knots(kmax: int, points: int) -> np.ndarray:
    """The uniform grid of ``points + 1`` indices ``0 ... kmax`` (rounded, deduplicated)."""
    return np.unique(np.round(np.linspace(0, kmax, min(points, kmax) + 1)).astype(np.int64))


def normal_estimate(laws, n: int, eps: np.ndarray) -> np.ndarray:
    """Uncertified estimate of the Theorem 4 profile ``max_law E[(G_1 + ... + G_n)_+] / n`` at
    each ``eps``: the sum replaced by a normal variable of the same mean and variance,
    ``E[N(m, s^2)_+] = m Phi(m/s) + s phi(m/s)``. Used only to place points."""
    from scipy.special import ndtr
    eps = np.asarray(eps, dtype=float)
    out = np.zeros(eps.shape)
    w = np.exp(eps)[:, None]
    for law in laws:
        a, b, p = (np.asarray(x, dtype=float)[None, :] for x in (law.a, law.b, law.p))
        g = a - w * b
        mu = np.sum(p * g, axis=1)
        var = np.maximum(np.sum(p * g * g, axis=1) - mu * mu, 1e-300)
        s = np.sqrt(var / n)
        z = mu / s
        est = mu * ndtr(z) + s * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        out = np.maximum(out, np.maximum(est, 0.0))
    return out


def pilot_weights(pmf_of, step: float, cand: np.ndarray, f: np.ndarray, T: int,
                  delta: float | None = None, eps: float | None = None) -> np.ndarray | None:
    """``W`` at the candidate indices ``cand`` (module docstring) from a pilot composition of
    the estimated curve ``f``; ``pmf_of(ks, u)`` builds the connect-the-dots PLD of points
    ``(ks, u)`` (:meth:`amp.rounds.ComposableProfile.points_pmf`). ``None`` when the pilot
    gives no finite target ``e*`` (the caller keeps the uniform grid)."""
    pmf = pmf_of(cand, f)
    if T > 2:       # the pilot is as large as the composition itself: refuse the same way
        check_compose_memory(np.asarray(A.probs(pmf)), T - 1, 1e-15)
    pS = pmf.self_compose(T - 1) if T > 1 else None
    if eps is None:
        full = pS.compose(pmf) if pS is not None else pmf
        e_star = float(full.get_epsilon_for_delta(delta))
    else:
        e_star = float(eps)
    if not math.isfinite(e_star):
        return None
    if pS is None:
        probs, lo = np.ones(1), 0
    else:
        probs, lo = np.asarray(A.probs(pS), dtype=float), int(A.lower_index(pS))
    x = cand * step

    def at(v: np.ndarray) -> np.ndarray:
        i = np.round(v / step).astype(np.int64) - lo
        ok = (i >= 0) & (i < probs.size)
        out = np.zeros(v.shape)
        out[ok] = probs[i[ok]]
        return out

    # a candidate stands for the cells up to the next one: sum W over them (stride > 1)
    stride = np.diff(np.append(cand, cand[-1] + 1))
    W = np.zeros(cand.shape)
    for j in range(int(stride.max())):
        xj = x + j * step
        W += np.where(j < stride, at(e_star - xj) + np.exp(-xj) * at(e_star + xj), 0.0)
    return W


def _excess_matrix(t: np.ndarray, f: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``C[i, j] = sum_{i < k < j} W_k (chord_ij(t_k) - f_k)`` (``inf`` for ``j <= i``)."""
    M = t.size
    cw = np.concatenate([[0.0], np.cumsum(W)])
    cwt = np.concatenate([[0.0], np.cumsum(W * t)])
    cwf = np.concatenate([[0.0], np.cumsum(W * f)])
    C = np.full((M, M), np.inf)
    for i in range(M - 1):
        j = np.arange(i + 1, M)
        sw, swt, swf = cw[j] - cw[i + 1], cwt[j] - cwt[i + 1], cwf[j] - cwf[i + 1]
        slope = (f[j] - f[i]) / (t[j] - t[i])
        C[i, i + 1:] = np.maximum(f[i] * sw + slope * (swt - t[i] * sw) - swf, 0.0)
    return C


def chord_excess(t: np.ndarray, f: np.ndarray, W: np.ndarray, idx: np.ndarray) -> float:
    """Weighted chord excess of the knots ``idx`` (increasing positions in ``t``)."""
    total = 0.0
    for i, j in zip(idx[:-1], idx[1:]):
        k = np.arange(i + 1, j)
        if k.size:
            ch = f[i] + (f[j] - f[i]) * (t[k] - t[i]) / (t[j] - t[i])
            total += float(np.sum(W[k] * np.maximum(ch - f[k], 0.0)))
    return total


def fewest_knots(t: np.ndarray, f: np.ndarray, W: np.ndarray, budget: float,
                 max_knots: int) -> np.ndarray | None:
    """The fewest knots (positions ``0 ... M-1``, both ends included) whose weighted chord
    excess is ``<= budget`` (dynamic programming over the number of segments), or ``None``
    when ``max_knots`` do not suffice."""
    M = t.size
    C = _excess_matrix(t, f, W)
    best = np.full(M, np.inf)
    best[0] = 0.0
    args = []
    for _ in range(max_knots - 1):
        tot = best[:, None] + C
        arg = np.argmin(tot, axis=0)
        best = tot[arg, np.arange(M)]
        args.append(arg)
        if best[-1] <= budget:
            path, j = [M - 1], M - 1
            for a in reversed(args):
                j = int(a[j])
                path.append(j)
            return np.unique(np.array(path, dtype=np.int64))
    return None


def _candidates(kmax: int) -> np.ndarray:
    stride = max(1, -(-kmax // MAX_CANDIDATES))
    return np.unique(np.append(np.arange(0, kmax + 1, stride), kmax)).astype(np.int64)


def _budget_and_excess(cand, f, W, step, kmax, points, knots):
    """``(KNOT_MARGIN-free budget, excess of knots)``: the weighted chord excess of the uniform
    grid of ``points`` and of ``knots`` (grid indices), both on the candidates."""
    t = np.exp(cand * step)
    uni = np.unique(np.minimum(np.searchsorted(cand, uniform_knots(kmax, points)),
                               cand.size - 1))
    excess = None
    if knots is not None:
        pos = np.unique(np.minimum(np.searchsorted(cand, knots), cand.size - 1))
        excess = chord_excess(t, f, W, pos)
    return chord_excess(t, f, W, uni), excess, t, uni


def choose_knots(kmax: int, points: int, step: float, estimate, pmf_of, T: int,
                 delta: float | None = None, eps: float | None = None) -> np.ndarray | None:
    """Grid indices (``0`` and ``kmax`` included) at which to certify the profile for ``T``
    rounds asked at ``delta`` (for eps) or ``eps`` (for delta): predicted at least as tight as
    the uniform grid of ``points`` points (module docstring). ``estimate(eps_array)``:
    uncertified profile values; ``pmf_of(ks, u)``: the connect-the-dots PLD of points.
    ``None`` (keep the uniform grid) when the estimate or the pilot is unusable."""
    cand = _candidates(kmax)
    f = np.minimum.accumulate(np.asarray(estimate(cand * step), dtype=float))
    if not np.all(np.isfinite(f)) or f[0] <= 0:
        return None
    # the grid end's certified value is <= TAIL_DELTA (or 0 at log max a/b), where the normal
    # approximation can be far too high (its support is unbounded): the pilot takes 0 there
    f[-1] = 0.0
    W = pilot_weights(pmf_of, step, cand, f, T, delta, eps)
    if W is None or not np.any(W > 0):
        return None
    uni_excess, _, t, uni = _budget_and_excess(cand, f, W, step, kmax, points, None)
    got = fewest_knots(t, f, W, KNOT_MARGIN * uni_excess, uni.size)
    if got is None:
        return None
    return np.union1d(cand[got], [0, kmax]).astype(np.int64)


def knots_suffice(kmax: int, points: int, step: float, estimate, pmf_of, T: int,
                  delta: float | None, eps: float | None, ks: np.ndarray,
                  u: np.ndarray) -> bool:
    """A posteriori check of :func:`choose_knots` once the certified values ``u`` at its
    points ``ks`` are known: the estimate is corrected to pass through them (its ratio to
    them interpolated in ``log`` between the points), the pilot is rerun on the corrected
    curve, and the points' weighted chord excess must be at most the uniform grid's. False
    (the caller adds the uniform grid's points) when it is not, e.g. at small ``n`` where the
    normal approximation is poor."""
    cand = _candidates(kmax)
    est = np.asarray(estimate(cand * step), dtype=float)
    at = np.searchsorted(cand, ks)
    ok = (ks < kmax) & (u > 0) & (at < cand.size)
    ok[ok] &= est[at[ok]] > 0
    if not np.any(ok):
        return False
    logr = np.log(u[ok] / est[at[ok]])
    f = est * np.exp(np.interp(cand, ks[ok], logr))
    f = np.minimum.accumulate(f)
    f[-1] = 0.0
    if not np.all(np.isfinite(f)) or f[0] <= 0:
        return False
    W = pilot_weights(pmf_of, step, cand, f, T, delta, eps)
    if W is None or not np.any(W > 0):
        return False
    uni_excess, excess, _, _ = _budget_and_excess(cand, f, W, step, kmax, points, ks)
    return excess <= uni_excess


# ------------------------------------------------------------- for amp.rounds.ComposableProfile
def mirror(ks: np.ndarray, u: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Upper values ``u`` at non-negative grid indices ``ks`` (increasing, from 0) to the
    symmetric grid and its convex values (steps 1-2 of :mod:`amp.rounds`: running minimum,
    ``u(-e) = 1 - e^(-e) + e^(-e) u(e)`` rounded up, greatest convex minorant with ``(0, 1)``)."""
    u = np.minimum.accumulate(np.asarray(u, dtype=float))   # H is non-increasing
    kn = -ks[:0:-1]                              # negative side, increasing
    en = kn * step
    un = np.minimum(1.0, -np.expm1(en) + np.exp(en) * u[:0:-1] * (1 + 4 * U) + 4 * U)
    ks = np.concatenate([kn, ks])
    u = np.minimum.accumulate(np.concatenate([un, u]))
    return ks, convex_minorant(np.exp(ks * step), u)


def profile_estimate(profile, n: int, eps: np.ndarray) -> np.ndarray | None:
    """:func:`normal_estimate` of a :class:`~amp.privacy_profile.PrivacyProfile`'s laws, or
    ``None`` for a matrix's pairs or laws that are not GPARVs."""
    if profile.pairs is not None or not all(isinstance(w, GPARV) for w in profile.laws):
        return None
    return normal_estimate(profile.laws, n, eps)


def tail_upper(laws, n: int, eps: float) -> float:
    """A cheap certified upper end of ``max_law E[(G_1 + ... + G_n)_+] / n``: each law's
    Chernoff bound (:func:`amp.core.tails.chernoff_upper`), its atoms raised by their
    floating-point noise ``16 u (a + e^eps b)`` as in :class:`~amp.backends.dispatch.LawDelta`;
    used to locate the grid end (any grid end is valid)."""
    out = 0.0
    for law in laws:
        g, p = law.atoms(eps)
        out = max(out, chernoff_upper(g, p, n, 16 * U * law.magnitudes(eps)))
    return min(1.0, out)


def _pilot_pmf(step: float):
    pmf_mod = A.pmf_module()

    def pmf_of(ks, u):
        k2, d = mirror(ks, np.maximum(u, 0.0), step)
        return pmf_mod.create_pmf_pessimistic_connect_dots(step, k2, d).to_dense_pmf()
    return pmf_of


def profile_knots(cp, step: float, points: int, times: int, delta: float | None,
                  eps: float | None) -> np.ndarray | None:
    """:func:`choose_knots` for a ``ComposableProfile`` ``cp`` and ``times`` self-composed
    rounds asked at ``delta`` (or ``eps``); ``None`` (the uniform grid) for one round, without
    an estimate, or when the pilot fails. Remembers the question for
    :func:`profile_knots_suffice`."""
    if times < 2:
        return None
    kmax = int(math.ceil(cp.eps_cut / step))
    if kmax < 8 or cp.estimate(np.zeros(1)) is None:
        return None
    cp.question = (times, delta, eps)
    try:
        return choose_knots(kmax, points, step, cp.estimate, _pilot_pmf(step), times, delta, eps)
    except (ArithmeticError, ValueError, MemoryError):       # only a placement: keep uniform
        return None


def profile_knots_suffice(cp, step: float, points: int, ks: np.ndarray, u: np.ndarray) -> bool:
    """:func:`knots_suffice` for the question :func:`profile_knots` chose ``ks`` for (False
    without one, or when the check cannot be made)."""
    q = cp.question
    if q is None:
        return False
    kmax = int(math.ceil(cp.eps_cut / step))
    try:
        return knots_suffice(kmax, points, step, cp.estimate, _pilot_pmf(step), q[0], q[1],
                             q[2], ks, u)
    except (ArithmeticError, ValueError, MemoryError):
        return False


def certify(cp, step: float, points: int, knots: np.ndarray | None, fallback: bool = True
            ) -> tuple[np.ndarray, np.ndarray]:
    """Certified values ``cp.upper`` at the non-negative grid indices to use: ``knots`` with
    ``0`` and the grid end ``kmax`` added (default: the uniform grid of ``points``); at most
    :data:`UNION_MAX_N` users per round, the uniform grid's points too. With
    ``fallback``, when :meth:`~amp.rounds.ComposableProfile.knots_suffice` finds the chosen points wanting once certified,
    the uniform grid's points are certified too: more points only lower the convex minorant,
    so the curve is then at least as tight as the uniform grid's. Returns ``(ks, u)``."""
    kmax = int(math.ceil(cp.eps_cut / step))
    if knots is None:
        ks = uniform_knots(kmax, points)
    else:
        ks = np.union1d(np.asarray(knots, dtype=np.int64), [0, kmax])
        if cp.round.n <= UNION_MAX_N:               # cheap points: never looser than uniform
            ks = np.union1d(ks, uniform_knots(kmax, points))
            fallback = False
        ks = ks[(ks >= 0) & (ks <= kmax)]
    u = np.array([cp.upper(float(k * step)) for k in ks])
    if knots is not None and fallback and not cp.knots_suffice(step, points, ks, u):
        extra = np.setdiff1d(uniform_knots(kmax, points), ks)
        ue = np.array([cp.upper(float(k * step)) for k in extra])
        ks = np.concatenate([ks, extra])
        order = np.argsort(ks)
        ks, u = ks[order], np.concatenate([u, ue])[order]
    return ks, u
