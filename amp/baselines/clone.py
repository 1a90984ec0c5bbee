"""Standard clone bound (Section 3.1, Theorem 3; Feldman, McMillan, Talwar, FOCS 2021).

Numerical bound
---------------
For every ``eps0``-LDP randomizer, Theorem 3 bounds the shuffled divergence by
``D_{e^eps}(P0^C || P1^C)`` with

    C ~ Bin(n - 1, e^-eps0),  A ~ Bin(C, 1/2),  Delta ~ Bern(e^eps0 / (e^eps0 + 1)),
    P0^C = (A + Delta, C - A + 1 - Delta),      P1^C = (A + 1 - Delta, C - A + Delta).

:func:`clone_delta` computes this divergence exactly (no discretisation). The output
``(u, v)`` determines ``C = u + v - 1``; conditionally on ``C = c`` and with
``B_c(u) = P[Bin(c, 1/2) = u]``, ``P0^C(u) = alpha B_c(u-1) + (1-alpha) B_c(u)`` and
``P1^C(u) = (1-alpha) B_c(u-1) + alpha B_c(u)``. Since ``B_c(u-1)/B_c(u) = u/(c+1-u)``, the
set where ``P0 > e^eps P1`` is ``{u > theta (c+1)}`` with
``theta = (e^(eps+eps0) - 1) / ((e^eps0 - 1)(e^eps + 1))``, so the positive part is a closed
form in two binomial survival functions per ``c``:

    D_c = (alpha - e^eps (1-alpha)) P[Bin(c,1/2) >= u*]
          + (1 - alpha - e^eps alpha) P[Bin(c,1/2) > u*],
    u* = floor(theta (c + 1)),      D = sum_c P[C = c] D_c.

Only a window of ``c`` chosen by a Chernoff bound is summed (no quantile function); the mass
outside is bounded rigorously and added to the upper end, together with Boost's relative
error on every binomial factor (:func:`amp.backends.structured.binomial.eta` with the floor
:data:`~amp.baselines._search.FLOAT_REL`). The window is
:func:`amp.core.tails.binom_window_mass`; ``eps(delta)`` is one certified search,
:func:`amp.inversion.crossing`. The cost is
``O(sqrt(n e^-eps0))`` survival-function calls per ``eps`` (about 4000 at ``n = 10^6``,
``eps0 = 4``). The pair is symmetric: swapping the two coordinates maps ``P0^C`` to ``P1^C``,
so ``D(P0^C || P1^C) = D(P1^C || P0^C)`` (checked in the tests against exact rational
enumeration).

The same computation serves the stronger clone pair (Section 3.3), see
:mod:`amp.baselines.stronger_clone`, through :func:`clone_family_delta`.

Closed form
-----------
:func:`closed_form_epsilon` implements the closed-form bound of Feldman, McMillan and Talwar
(2021). Two published variants exist and differ by ~3e-3 at the README example:

* ``variant="code"`` (default) -- the formula of the authors' public code
  (``apple/ml-shuffling-amplification``, ``closedformanalysis``), which reproduces their README
  value 0.5378 for ``n = 10^5, eps0 = 4, delta = 1e-6``::

      a = 8 sqrt(e^eps0 log(4/delta) / n),  c = 8 e^eps0 / n,  e1 = log(1 + a + c),
      eps = log(1 + (1 - e^-eps0) / (1 + e^(-eps0 - e1)) * (a + c)),
      valid when eps0 <= log(n / (16 log(4/delta))).

* ``variant="theorem"`` -- the statement of their Theorem 3.1::

      eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (a + c)),
      valid when eps0 <= log(n / (16 log(2/delta))).

  This gives 0.5347 at the README example. The code variant is the larger (more conservative)
  of the two because ``1 + e^(-eps0 - e1) <= 1 + e^-eps0``.

Outside the validity condition the closed form says nothing: :func:`closed_form_epsilon`
raises :class:`~amp.core.errors.ParameterError` naming the condition (it used to return
``eps0`` with ``certified=False``, a number that looked like an answer of the formula), and
:func:`closed_form_delta` returns the trivial ``delta = 1`` with ``certified=False``.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from amp.core.lazy import lazy
from amp.backends.structured.binomial import eta as binom_eta
from amp.baselines._search import (FLOAT_REL, delta_targets, describe_source, eps0_of,
                                   eps_array, invert_delta, results)
from amp.core import validate as V
from amp.core.errors import NumericalError, ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.core.roots import bisect
from amp.core.tails import binom_window_mass

# scipy is imported on first use (amp.core.lazy): import amp stays fast
stats = lazy("scipy.stats")

__all__ = ["clone_delta", "clone_epsilon", "closed_form_epsilon", "closed_form_delta",
           "clone_family_delta", "DEFAULT_TAIL_MASS"]

#: Chernoff bound on the binomial mass left out of the summation window (added to ``upper``).
DEFAULT_TAIL_MASS = 1e-60
#: Added to the upper end for terms that underflow to 0 inside the window.
_UNDERFLOW = 1e-300

SOURCE_FMT = ("Feldman, McMillan, Talwar, 'Hiding among the clones', FOCS 2021 "
              "(arXiv:2012.12803), Theorem 3 of the paper (Section 3.1)")


# ----------------------------------------------------------------------------- shared engine
MAX_CLONE_WINDOW = 20_000_000     # clone counts per evaluation (~10 arrays of 8 bytes)


def clone_family_delta(n: int, clone_prob: float, w2: float, log_ratio: float, w0: float,
                       eps: np.ndarray, tail_mass: float = DEFAULT_TAIL_MASS
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Exact bracket of ``D_{e^eps}(P0 || P1)`` for the clone-type pair, vectorised over ``eps``.

    The pair: ``C ~ Bin(n-1, clone_prob)``, ``A ~ Bin(C, 1/2)``, and the first user adds
    ``(1, 0)`` w.p. ``w1 = w2 e^log_ratio``, ``(0, 1)`` w.p. ``w2``, ``(0, 0)`` w.p. ``w0`` to
    ``(A, C - A)`` under ``P0``; ``P1`` swaps ``w1`` and ``w2``. (The ratio is passed in log
    form so that ``w1 - e^eps w2 = w2 e^eps expm1(log_ratio - eps)`` keeps full relative
    accuracy near ``eps = log_ratio``.)
    Standard clone: ``clone_prob = e^-eps0``, ``w2 = 1/(e^eps0+1)``, ``log_ratio = eps0``,
    ``w0 = 0``. Stronger clone (Section 3.3): ``clone_prob = 2p``, ``w2 = p``,
    ``log_ratio = eps0``, ``w0 = 1 - (e^eps0 + 1) p``.

    With ``t = u + v``, ``P_c = P[C = c]`` and ``B_c = Bin(c, 1/2)``::

        P0(u, t) = w1 P_{t-1} B_{t-1}(u-1) + w2 P_{t-1} B_{t-1}(u) + w0 P_t B_t(u),

    and ``P0 - e^eps P1`` has the sign of a function linear in ``u``; it is positive exactly for
    ``u > theta_t = t [(e^eps w1 - w2) + (e^eps - 1) w0 rho_t / 2] / ((w1 - w2)(1 + e^eps))``
    with ``rho_t = P_t / P_{t-1}``. The positive part per ``t`` is then a combination of three
    binomial survival functions.

    Returns
    -------
    lower, upper : numpy.ndarray
        Bracket of the exact divergence for each ``eps`` (``upper`` adds the Chernoff bound of
        the mass outside the window and a relative floating-point allowance).
    """
    eps = np.asarray(eps, dtype=float).ravel()
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    if log_ratio <= 0 or w2 <= 0:    # the pair is identical, reversed or degenerate
        return lower, upper
    N = n - 1
    lo, hi, outside = binom_window_mass(N, clone_prob, tail_mass)
    if hi - lo > MAX_CLONE_WINDOW:
        raise NumericalError(f"the exact clone divergence at n={n} needs {hi - lo + 2} clone "
                             f"counts (max {MAX_CLONE_WINDOW}); use closed_form_delta / "
                             "closed_form_epsilon at this scale")
    t = np.arange(max(lo, 1), hi + 2, dtype=np.int64)           # t = 0 never contributes
    P_prev = stats.binom.pmf(t - 1, N, clone_prob) if N > 0 else (t - 1 == 0).astype(float)
    P_cur = stats.binom.pmf(t, N, clone_prob) if N > 0 else (t == 0).astype(float)
    tf = t.astype(float)
    if w0 > 0 and N > 0 and clone_prob < 1:
        rho = np.where(t < n, (n - tf) / tf * clone_prob / (1 - clone_prob), 0.0)
    else:
        rho = np.zeros(t.size)
    active = np.flatnonzero(eps < log_ratio)
    if active.size == 0:
        return lower, upper
    e = eps[active][:, None]                                    # (m, 1)
    E = np.exp(e)
    k1 = w2 * E * np.expm1(log_ratio - e)                       # w1 - e^eps w2 > 0
    k2 = -w2 * np.expm1(e + log_ratio)                          # w2 - e^eps w1 < 0
    k3 = -np.expm1(e) * w0                                      # (1 - e^eps) w0 <= 0
    theta = tf * (np.expm1(e + log_ratio) + np.expm1(e) * (w0 / w2) * rho / 2) / (
        math.expm1(log_ratio) * (1 + E))
    ustar = np.clip(np.floor(theta), -1, tf)
    S1 = stats.binom.sf(ustar - 1, t - 1, 0.5)                  # P[Bin(t-1) >= u*]
    S2 = stats.binom.sf(ustar, t - 1, 0.5)                      # P[Bin(t-1) >  u*]
    pos = P_prev * k1 * S1
    neg = P_prev * k2 * S2
    if w0 > 0:
        S3 = stats.binom.sf(ustar, t, 0.5)                      # P[Bin(t) > u*]
        neg = neg + k3 * P_cur * S3
    D_t = pos + neg
    # Boost's relative error on each factor (eta, floor FLOAT_REL: it grows with |k - np|)
    e_prev = binom_eta(t - 1, N, clone_prob, FLOAT_REL)
    err = ((e_prev + binom_eta(ustar - 1, t - 1, 0.5, FLOAT_REL)) * pos
           + (e_prev + binom_eta(ustar, t - 1, 0.5, FLOAT_REL)) * (P_prev * -k2 * S2)
           + 8 * U * np.abs(D_t))
    if w0 > 0:
        err = err + (binom_eta(t, N, clone_prob, FLOAT_REL)
                     + binom_eta(ustar, t, 0.5, FLOAT_REL)) * (-k3 * P_cur * S3)
    lower[active] = np.sum(np.maximum(D_t - err, 0.0), axis=1)
    upper[active] = (np.sum(np.maximum(D_t, 0.0) + err, axis=1) * (1 + FLOAT_REL)
                     + outside + t.size * _UNDERFLOW)
    upper = np.minimum(upper, 1.0)
    lower = np.minimum(lower, upper)
    return lower, upper


# ----------------------------------------------------------------------------- numerical clone
def _generic(eps0: float) -> str:
    return describe_source(None, eps0)


def clone_delta(eps0: float, n: int, eps: float | np.ndarray, *,
                tail_mass: float = DEFAULT_TAIL_MASS) -> Bound | list[Bound]:
    """Exact standard clone bound ``D_{e^eps}(P0^C || P1^C)`` of Theorem 3 (Section 3.1).

    Generic: valid for every ``eps0``-LDP local randomizer (Feldman, McMillan, Talwar 2021).

    Parameters
    ----------
    eps0 : float
        Local privacy level (``> 0``). A GPARV law or mechanism is accepted (its ``eps0``).
    n : int
        Number of users (``>= 1``).
    eps : float or array
        Central ``eps >= 0``; an array gives a list of results (flattened input order).
    tail_mass : float
        Chernoff bound per side of the ``Bin(n-1, e^-eps0)`` mass left out (added to ``upper``).

    Returns
    -------
    Bound or list of Bound
        ``quantity="delta"``, ``bound="clone"``; ``[lower, upper]`` encloses the exact
        divergence and ``value = upper``.

    Examples
    --------
    >>> from amp.baselines import clone_delta
    >>> f"{clone_delta(4.0, 10_000, 0.5).value:.4e}"
    '1.4553e-05'
    """
    eps0 = eps0_of(eps0)
    n = V.users(n)
    tail_mass = V.positive_float("tail_mass", tail_mass, upper=1e-6)
    arr, scalar = eps_array(eps)
    w2 = 1.0 / (math.exp(eps0) + 1)
    lower, upper = clone_family_delta(n, math.exp(-eps0), w2, eps0, 0.0, arr, tail_mass)
    zero = arr.ravel() >= eps0           # e^eps P1 >= P0 everywhere: exactly 0
    lower[zero], upper[zero] = 0.0, 0.0
    note = (f"{SOURCE_FMT}; exact divergence of the clone pair, C-window by Chernoff "
            f"(tail <= {tail_mass:g} per side), generic for eps0-LDP randomizers")
    return results(scalar, "delta", arr, lower, upper, bound="clone",
                   method="clone (exact numerical)", n=n, mechanism=_generic(eps0),
                   certified=True, note=note)


def clone_epsilon(eps0: float, n: int, delta: float | np.ndarray, *,
                  tail_mass: float = DEFAULT_TAIL_MASS, xtol: float = 1e-9
                  ) -> Bound | list[Bound]:
    """Smallest ``eps`` with certified ``D_{e^eps}(P0^C || P1^C) <= delta`` (Theorem 3).

    One certified search (:func:`amp.inversion.crossing`, relative tolerance ``xtol``) on
    ``eps`` in ``[0, eps0]`` (the divergence is non-increasing in ``eps`` and 0 at ``eps0``).
    ``value = upper`` is certified (``clone_delta(upper).upper <= delta``); ``lower`` is 0 or
    has ``clone_delta(lower).lower > delta``, so ``[lower, upper]`` encloses the exact crossing.

    Examples
    --------
    >>> from amp.baselines import clone_epsilon
    >>> round(clone_epsilon(4.0, 10_000, 1e-6).value, 4)   # amp: 0.3805
    0.6009

    ``eps0`` may be the mechanism itself (only its ``eps0`` is used): the argument order of
    the front door, ``amp.epsilon(m, n, delta, bound="clone")``, which gives the same result.
    """
    eps0 = eps0_of(eps0)
    n = V.users(n)
    xtol = V.positive_float("xtol", xtol, upper=0.5)
    targets, scalar = delta_targets(delta)
    w2 = 1.0 / (math.exp(eps0) + 1)

    def fn(e: float) -> tuple[float, float]:
        if e >= eps0:
            return 0.0, 0.0
        lo, up = clone_family_delta(n, math.exp(-eps0), w2, eps0, 0.0, np.array([e]),
                                    tail_mass)
        return float(lo[0]), float(up[0])

    method = "clone (exact numerical) eps(delta)"
    found = [invert_delta(fn, float(d), eps0, rel_tol=xtol, method=method)
             for d in targets.ravel()]
    note = (f"{SOURCE_FMT}; eps(delta) by a certified search on the exact divergence "
            f"(relative xtol={xtol:g})")
    return results(scalar, "eps", targets, [f[0] for f in found], [f[1] for f in found],
                   bound="clone", method=method, n=n, mechanism=_generic(eps0),
                   certified=True, note=note,
                   details=[{"evaluations": f[2]} for f in found])


# ----------------------------------------------------------------------------- closed form
def _closed_form_eps(eps0: float, n: int, delta: float, variant: str) -> tuple[float, bool]:
    """``(eps, valid)`` of the FMT closed form (see module docstring)."""
    E0 = math.exp(eps0)
    log_arg = 4.0 if variant == "code" else 2.0
    valid = n / (16 * math.log(log_arg / delta)) > 0 and \
        eps0 <= math.log(n / (16 * math.log(log_arg / delta)))
    a = 8 * math.sqrt(E0 * math.log(4 / delta)) / math.sqrt(n)
    c = 8 * E0 / n
    if variant == "code":
        e1 = math.log1p(a + c)
        factor = -math.expm1(-eps0) / (1 + math.exp(-eps0 - e1))
    else:
        factor = math.tanh(eps0 / 2)          # (e^eps0 - 1)/(e^eps0 + 1)
    eps = math.log1p(factor * (a + c))
    return eps * (1 + 1e-12), valid


def _check_variant(variant: str) -> str:
    if variant not in ("code", "theorem"):
        raise ParameterError(f"variant must be 'code' or 'theorem', got {variant!r}")
    return variant


def closed_form_epsilon(eps0: float, n: int, delta: float | np.ndarray, *,
                        variant: Literal["code", "theorem"] = "code") -> Bound | list[Bound]:
    """Closed-form standard clone bound of Feldman, McMillan, Talwar (2021).

    ``variant="code"`` (default) is the formula of the authors' public code
    (``closedformanalysis``), ``variant="theorem"`` the statement of their Theorem 3.1; see the
    module docstring for both formulas and validity conditions. Returns ``quantity="eps"``,
    ``bound="clone-closed"`` with ``lower == upper``. ``eps0`` may be a mechanism (its
    ``eps0``), the argument order of :func:`amp.epsilon` (``bound="clone-closed"``).

    Raises
    ------
    ParameterError
        Where the closed form does not apply (for any of the given ``delta``): ``eps0 >
        log(n / (16 log(4/delta)))`` (code variant; ``log(2/delta)`` for the theorem), or a
        formula value ``>= eps0`` (no amplification). The message gives the largest ``eps0``
        it allows; :func:`clone_epsilon` (the numerical clone bound) has no such condition.

    Examples
    --------
    >>> from amp.baselines import closed_form_epsilon
    >>> r = closed_form_epsilon(1.0, 100_000, 1e-6)
    >>> round(r.value, 4), r.certified
    (0.0753, True)
    >>> closed_form_epsilon(4.0, 10_000, 1e-6)   # outside  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    amp.core.errors.ParameterError: the closed form ... does not apply ...
    """
    eps0 = eps0_of(eps0)
    n = V.users(n)
    variant = _check_variant(variant)
    targets, scalar = delta_targets(delta)
    vals = []
    cond = "log(4/delta)" if variant == "code" else "log(2/delta)"
    for d in targets.ravel():
        e, valid = _closed_form_eps(eps0, n, float(d), variant)
        if not (valid and e < eps0):
            c = 4.0 if variant == "code" else 2.0
            cap = math.log(n / (16 * math.log(c / float(d))))
            raise ParameterError(
                f"the closed form of FMT 2021 ({variant} variant) does not apply at eps0="
                f"{eps0:g}, n={n}, delta={float(d):g}: it needs eps0 <= log(n / (16 {cond}))"
                f" = {cap:.4g} and a value below eps0, so it certifies no amplification "
                "here; use clone_epsilon (the numerical clone bound, no such condition) or "
                "amp.epsilon")
        vals.append(e)
    note = f"{SOURCE_FMT}; closed form ({variant} variant)"
    return results(scalar, "eps", targets, vals, vals, bound="clone-closed",
                   method=f"clone closed form ({variant})", n=n, mechanism=_generic(eps0),
                   certified=True, note=note)


def closed_form_delta(eps0: float, n: int, eps: float | np.ndarray, *,
                      variant: Literal["code", "theorem"] = "code") -> Bound | list[Bound]:
    """Smallest ``delta`` for which the FMT closed form certifies ``eps`` (bisection in log delta).

    For ``eps >= eps0`` the value is 0 (every ``eps0``-LDP protocol is ``eps0``-DP after
    shuffling). When no valid ``delta < 1`` reaches ``eps``, the result has ``certified=False``,
    value 1 and the note "no amplification certified". Returns ``quantity="delta"``,
    ``bound="clone-closed"``; ``[lower, upper]`` brackets the smallest such ``delta`` (bisection
    in ``log delta`` to relative ``1e-13``) and ``value = upper`` certifies ``eps``.

    Examples
    --------
    >>> from amp.baselines import closed_form_delta
    >>> closed_form_delta(4.0, 10_000, 0.5).value   # no amplification
    1.0
    """
    eps0 = eps0_of(eps0)
    n = V.users(n)
    variant = _check_variant(variant)
    arr, scalar = eps_array(eps)
    log_arg = 4.0 if variant == "code" else 2.0
    # validity <=> delta >= log_arg * exp(-n e^-eps0 / 16)
    log_dmin = math.log(log_arg) - n * math.exp(-eps0) / 16
    los, his, ok = [], [], []
    for e in arr.ravel():
        if e >= eps0:
            los.append(0.0), his.append(0.0), ok.append(True)
            continue
        lo_l = max(log_dmin, -700.0) + 1e-9      # just inside the validity region
        hi_l = math.log1p(-1e-15)

        def eps_at(logd: float) -> tuple[float, bool]:
            return _closed_form_eps(eps0, n, math.exp(logd), variant)

        if lo_l >= hi_l or eps_at(hi_l)[0] > e or not eps_at(hi_l)[1]:
            los.append(1.0), his.append(1.0), ok.append(False)
            continue
        e_lo, valid_lo = eps_at(lo_l)
        if e_lo <= e and valid_lo:
            d = math.exp(lo_l)
            los.append(d), his.append(d), ok.append(True)
            continue
        def valid_below(m: float) -> bool:
            em, vm = eps_at(m)
            return em <= e and vm

        # eps_at(a) > e (or invalid), eps_at(b) <= e
        a, b = bisect(valid_below, lo_l, hi_l, rel_tol=1e-13, floor=1.0)
        los.append(math.exp(a)), his.append(math.exp(b))
        ok.append(True)
    note = f"{SOURCE_FMT}; closed form ({variant} variant) inverted in delta"
    bad = "; no amplification certified for this eps (value 1)"
    return results(scalar, "delta", arr, los, his, bound="clone-closed",
                   method=f"clone closed form ({variant}) delta(eps)", n=n,
                   mechanism=_generic(eps0), certified=ok,
                   note=[note if v else note + bad for v in ok])
