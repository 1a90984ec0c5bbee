"""Privacy blanket bounds with Hoeffding's and Bennett's inequalities (Section 3.2, Lemma 2).

Source: Balle, Bell, Gascon, Nissim, "The privacy blanket of the shuffle model", CRYPTO 2019
(arXiv:1903.02837), and the authors' public code (``amplification_bounds.py`` /
``mechanisms.py``: classes ``Hoeffding``, ``BennettExact``, ``LDPMechanism``,
``RRMechanism``).

Starting point (Lemma 2 of the paper = Lemma 5.3 of Balle et al.): with ``M ~ Bin(n, gamma)``
users sampling from the blanket and ``L`` the privacy amplification random variable
(Definition 1, ``E[L] = 1 - e^eps``),

    delta <= (1 / (gamma n)) E_M[ E[(L_1 + ... + L_M)_+] ].

Any blanket mass ``gamma' <= gamma`` gives a valid decomposition with the same ``L``; the
generic bound uses ``gamma' = e^-eps0``. With ``a = e^eps - 1 = -E[L]``:

* **Hoeffding** (``L`` in an interval of width ``w``):
  ``E[(sum_{i<=m} L_i)_+] <= (w^2 / (4a)) exp(-2 m a^2 / w^2)``, hence the published closed
  form (the ``m = 0`` term is kept, as in the authors' code)::

      delta_H = (1/(gamma n)) (w^2 / (4a)) (1 - gamma (1 - exp(-2 a^2 / w^2)))^n.

* **Bennett** (``L <= b``, ``E[L^2] <= v``; Bennett's inequality in the form of Boucheron,
  Lugosi, Massart, Thm 2.9, which needs an upper bound on ``L`` and its *second moment*):
  ``P[sum L_i >= s] <= exp(-m alpha h(b (s + m a) / (m v)))`` with ``alpha = v / b^2``,
  ``beta = a b / v`` and ``h(u) = (1 + u) log(1 + u) - u``. Integrating over ``s >= 0`` with the
  tangent of the convex ``h`` at ``beta``:
  ``E[(sum_{i<=m} L_i)_+] <= (b / log(1 + beta)) exp(-m alpha h(beta))``, hence::

      delta_B = (1/(gamma n)) (b / log(1 + beta))
                * [(1 - gamma (1 - e^(-alpha h(beta))))^n - (1 - gamma)^n].

  **Discrepancy with the authors' code.** ``BennettExact.get_delta`` of the public code uses
  ``exp(-m alpha h(beta)) / (m eta log(1 + beta))`` with ``eta = a / b`` for the same
  expectation, i.e. our expression divided by ``m a``. That factor is not dimensionally
  consistent (``E[(sum L)_+]`` scales like ``L``) and the resulting number is *below the exact
  blanket value* in some cases (10-RR, ``eps0 = 2, n = 60, eps = 0.5``: 0.00412 < exact 0.00581;
  see ``tests/test_blanket_bounds.py``). It is therefore offered only as
  ``variant="balle-code"`` with ``certified=False``; the default ``variant="corrected"`` is the
  integral above, a valid upper bound.

Ranges and moments of ``L``
---------------------------
Generic ``eps0``-LDP randomizer (``gamma`` unknown in ``[e^-eps0, 1]``; ``M ~ Bin(n, e^-eps0)``),
``range_mode="published"`` (default; Balle et al.'s ``LDPMechanism``)::

    max L <= e^eps0 - e^(eps - eps0),   width <= (e^eps + 1)(e^eps0 - e^-eps0),
    E[L^2] <= e^eps0 (e^(2 eps) + 1) - 2 e^(eps - 3 eps0).

``range_mode="remark1"`` uses Remark 1 / Property 2 of the paper (``R(x)/(gamma omega)`` lies
in ``[1, e^eps0]``, not ``[e^-eps0, e^eps0]``)::

    max L <= e^eps0 - e^eps,   width <= (e^eps + 1)(e^eps0 - 1),
    E[L^2] <= e^eps0 (e^(2 eps) + 1) - 2 e^eps.

Specific mechanism through a GPARV law (``gamma`` = the law's blanket mass,
``L = gamma (a_j - e^eps b_j)`` w.p. ``p_j / gamma``): ``E[L]`` and ``E[L^2]`` are computed
exactly; ``range_mode="exact"`` (default for laws; this is what Balle et al.'s ``RRMechanism``
does, and for Table 1 laws it equals Remark 1's range) takes ``max L`` and the width from the
atoms; ``"remark1"`` and ``"published"`` use the formulas above times ``gamma``. For a
mechanism, the bound is the maximum over its ``gparv_laws()``.

Every result is additionally capped: ``delta <= 1`` always and ``delta = 0`` when
``eps >= eps0`` (generic) or when ``G <= 0`` surely (law), both exact facts.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

import numpy as np

from amp.core.lazy import lazy
from amp.baselines._search import (MAX_EVALUATIONS_CLOSED, delta_targets, describe_source,
                                   eps_array, invert_delta, results)
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.floats import U
from amp.core.result import Bound
from amp.core.tails import binom_window_mass
from amp.mechanisms.gparv import GPARV

# scipy is imported on first use (amp.core.lazy): import amp stays fast
stats = lazy("scipy.stats")

__all__ = ["hoeffding_delta", "hoeffding_epsilon", "bennett_delta", "bennett_epsilon",
           "parv_summary", "ParvSummary"]

SOURCE_BBGN = ("Balle, Bell, Gascon, Nissim, 'The privacy blanket of the shuffle model', "
               "CRYPTO 2019 (arXiv:1903.02837); Lemma 2 / Section 3.2 of the paper")
RangeMode = Literal["published", "remark1", "exact"]
_PAD = 1e-12   # relative round-off pad on closed forms


@dataclass(frozen=True)
class ParvSummary:
    """What Hoeffding/Bennett need about the PARV ``L`` at one ``eps``.

    ``gamma`` is the blanket mass of ``M ~ Bin(n, gamma)``; ``a = -E[L] = e^eps - 1``;
    ``lmax >= max L``; ``width >= max L - min L``; ``second >= E[L^2]``.
    """

    gamma: float
    a: float
    lmax: float
    width: float
    second: float


def _generic_summary(eps0: float, eps: float, mode: str) -> ParvSummary:
    E0, Ee = math.exp(eps0), math.exp(eps)
    if mode == "published":
        lmax = E0 - math.exp(eps - eps0)
        width = (Ee + 1) * (E0 - 1 / E0)
        second = E0 * (Ee * Ee + 1) - 2 * math.exp(eps - 3 * eps0)
    else:  # remark1
        lmax = E0 - Ee
        width = (Ee + 1) * (E0 - 1)
        second = E0 * (Ee * Ee + 1) - 2 * Ee
    return ParvSummary(math.exp(-eps0), math.expm1(eps), lmax, width, second)


def _law_summary(law: GPARV, eps: float, mode: str) -> ParvSummary:
    gam = law.gamma
    Ee = math.exp(eps)
    g = law.a - Ee * law.b                   # G values on the blanket atoms
    w = law.p / gam
    # a = -E[G] = gam (e^eps sum w b - sum w a), written as gam ((e^eps - 1) sum w b +
    # (sum w b - sum w a)) so that the two sums (equal for mechanism laws) do not cancel; a
    # smaller a is the conservative side (mean closer to 0), hence the downward pad
    sa, sb = math.fsum(w * law.a), math.fsum(w * law.b)
    a = gam * (math.expm1(eps) * sb + (sb - sa))
    a -= 8 * U * gam * (Ee * sb + sa)
    second = gam * gam * float(np.dot(w, g * g))
    if mode == "exact":
        lmax, width = gam * float(g.max()), gam * float(g.max() - g.min())
    elif mode == "remark1":
        E0 = math.exp(law.eps0)
        lmax, width = gam * (E0 - Ee), gam * (Ee + 1) * (E0 - 1)
    else:
        E0 = math.exp(law.eps0)
        lmax, width = gam * (E0 - Ee / E0), gam * (Ee + 1) * (E0 - 1 / E0)
    return ParvSummary(gam, a, lmax, width, second)


def parv_summary(source: float | GPARV, eps: float,
                 range_mode: RangeMode | None = None) -> ParvSummary:
    """:class:`ParvSummary` of the generic ``eps0``-LDP randomizer (``source`` a float) or of a
    GPARV law, for the given ``range_mode`` (see the module docstring)."""
    if isinstance(source, GPARV):
        mode = range_mode or "exact"
        if mode not in ("exact", "remark1", "published"):
            raise ParameterError(f"range_mode must be 'exact', 'remark1' or 'published', "
                                 f"got {mode!r}")
        return _law_summary(source, eps, mode)
    mode = range_mode or "published"
    if mode not in ("remark1", "published"):
        raise ParameterError(f"range_mode for the generic bound must be 'published' or "
                             f"'remark1', got {mode!r}")
    return _generic_summary(float(source), eps, mode)


# ----------------------------------------------------------------------------- formulas
def _hoeffding_value(s: ParvSummary, n: int) -> float:
    if s.a <= 0:
        return 1.0
    if s.lmax <= 0:
        return 0.0
    r = 2 * s.a * s.a / (s.width * s.width)
    log_d = (-math.log(s.gamma * n) + 2 * math.log(s.width) - math.log(4 * s.a)
             + n * math.log1p(-s.gamma * (-math.expm1(-r))))
    return min(1.0, math.exp(min(log_d, 0.0)) * (1 + _PAD))


def _bennett_parts(s: ParvSummary) -> tuple[float, float, float]:
    alpha = s.second / (s.lmax * s.lmax)
    beta = s.a * s.lmax / s.second
    if beta < 1e-2:
        # (1 + b) log(1 + b) - b = sum_{k >= 2} (-1)^k b^k / (k (k - 1)); the closed form
        # cancels catastrophically for small b (truncation error < b^10 / 90)
        h = sum((-1) ** k * beta ** k / (k * (k - 1)) for k in range(2, 10))
    else:
        h = (1 + beta) * math.log1p(beta) - beta
    return alpha, beta, h


def _bennett_value(s: ParvSummary, n: int) -> float:
    if s.a <= 0:
        return 1.0
    if s.lmax <= 0:
        return 0.0
    alpha, beta, h = _bennett_parts(s)
    A = n * math.log1p(-s.gamma * (-math.expm1(-alpha * h)))      # log (1 - g(1 - e^-ah))^n
    B = n * math.log1p(-s.gamma) if s.gamma < 1 else -math.inf    # log (1 - g)^n
    # (e^A - e^B) without cancellation
    diff = math.exp(A) * (-math.expm1(B - A)) if B > -math.inf else math.exp(A)
    d = diff * s.lmax / (math.log1p(beta) * s.gamma * n)
    return min(1.0, d * (1 + _PAD))


def _bennett_balle_code(s: ParvSummary, n: int) -> float:
    """Reproduction of the authors' ``BennettExact`` expression (not a valid bound)."""
    if s.a <= 0:
        return 1.0
    if s.lmax <= 0:
        return 0.0
    alpha, beta, h = _bennett_parts(s)
    eta = s.a / s.lmax
    lo, hi, outside = binom_window_mass(n, s.gamma, 1e-30)
    m = np.arange(max(lo, 1), hi + 1)
    terms = stats.binom.pmf(m, n, s.gamma) * np.exp(-m * alpha * h) / (m * eta * math.log1p(beta))
    return min(1.0, float(terms.sum()) / (s.gamma * n))


# ----------------------------------------------------------------------------- dispatch
def _laws_or_generic(source: object) -> tuple[list[GPARV] | None, float]:
    """``(laws, eps0)``: ``laws is None`` for the generic bound (``source`` a float)."""
    if isinstance(source, numbers.Real) and not isinstance(source, bool):
        return None, V.eps0_value(source)
    if isinstance(source, GPARV):
        return [source], V.eps0_value(source.eps0)
    if hasattr(source, "gparv_laws"):
        return list(source.gparv_laws()), V.eps0_value(float(source.eps0))
    raise ParameterError(f"expected eps0 (float), a GPARV law or a mechanism, got {source!r}")


def _delta_one(kind: str, laws: list[GPARV] | None, eps0: float, n: int, eps: float,
               range_mode: str | None, variant: str) -> float:
    fn = {"hoeffding": _hoeffding_value,
          "bennett": _bennett_value if variant == "corrected" else _bennett_balle_code}[kind]
    if laws is None:
        if eps >= eps0:
            return 0.0
        return fn(parv_summary(eps0, eps, range_mode), n)
    out = 0.0
    Ee = math.exp(eps)
    for law in laws:
        # the exact atoms are within `noise` of g: G <= 0 surely only if g + noise <= 0; when
        # every positive atom is floating-point noise around 0 (eps ~ eps0) delta is tiny
        g = law.a - Ee * law.b
        noise = 16 * U * (law.a + Ee * law.b)
        if np.all(g + noise <= 0):
            continue
        if np.all(g <= noise):
            # delta <= E[G_+] <= sum p noise over the atoms that may be positive
            out = max(out, float(np.dot(law.p, noise * (g > -noise))))
            continue
        out = max(out, fn(parv_summary(law, eps, range_mode), n))
    return out


def _check_variant(variant: str) -> str:
    if variant not in ("corrected", "balle-code"):
        raise ParameterError(f"variant must be 'corrected' or 'balle-code', got {variant!r}")
    return variant


def _note(kind: str, laws: list[GPARV] | None, range_mode: str | None, variant: str) -> str:
    scope = ("generic eps0-LDP randomizer (M ~ Bin(n, e^-eps0))" if laws is None else
             f"specific mechanism, max over {len(laws)} GPARV law(s)")
    mode = range_mode or ("published" if laws is None else "exact")
    s = f"{SOURCE_BBGN}; {kind.capitalize()} bound, {scope}, range_mode={mode}"
    if kind == "bennett":
        s += f", variant={variant}"
        if variant == "balle-code":
            s += (" -- reproduces the authors' code expression, which has an extra 1/(m a) "
                  "factor and is NOT a valid upper bound (it can fall below the exact "
                  "blanket value)")
    return s


def _delta(kind: str, source: object, n: int, eps: object, range_mode: str | None,
           variant: str) -> Bound | list[Bound]:
    laws, eps0 = _laws_or_generic(source)
    n = V.users(n)
    arr, scalar = eps_array(eps)
    vals = [_delta_one(kind, laws, eps0, n, float(e), range_mode, variant) for e in arr.ravel()]
    certified = not (kind == "bennett" and variant == "balle-code")
    return results(scalar, "delta", arr, vals, vals, bound=kind,
                   method=f"{kind} (privacy blanket)", n=n,
                   mechanism=describe_source(source if laws is not None else None, eps0),
                   certified=certified, note=_note(kind, laws, range_mode, variant))


def _epsilon(kind: str, source: object, n: int, delta: object, range_mode: str | None,
             variant: str, xtol: float) -> Bound | list[Bound]:
    laws, eps0 = _laws_or_generic(source)
    n = V.users(n)
    xtol = V.positive_float("xtol", xtol, upper=0.5)
    targets, scalar = delta_targets(delta)

    def fn(e: float) -> tuple[float, float]:
        d = _delta_one(kind, laws, eps0, n, e, range_mode, variant)
        return d, d

    method = f"{kind} (privacy blanket) eps(delta)"
    found = [invert_delta(fn, float(d), eps0, rel_tol=xtol, method=method,
                          max_evaluations=MAX_EVALUATIONS_CLOSED) for d in targets.ravel()]
    certified = not (kind == "bennett" and variant == "balle-code")
    note = _note(kind, laws, range_mode, variant) + (
        "; eps(delta) by a certified search: value certifies delta(value) <= target; the "
        "bracket encloses a crossing point (the closed form need not be monotone in eps)")
    return results(scalar, "eps", targets, [f[0] for f in found], [f[1] for f in found],
                   bound=kind, method=method, n=n,
                   mechanism=describe_source(source if laws is not None else None, eps0),
                   certified=certified, note=note,
                   details=[{"evaluations": f[2]} for f in found])


# ----------------------------------------------------------------------------- public API
def hoeffding_delta(source: float | GPARV | object, n: int, eps: float | np.ndarray, *,
                    range_mode: RangeMode | None = None) -> Bound | list[Bound]:
    """Balle et al.'s Hoeffding bound ``delta_H(eps)`` (see module docstring).

    Parameters
    ----------
    source : float, GPARV or mechanism
        ``eps0`` for the generic bound; a GPARV law or a mechanism (max over its
        ``gparv_laws()``) for the specific bound.
    n : int
        Number of users.
    eps : float or array
        Central ``eps``.
    range_mode : {"published", "remark1", "exact"}, optional
        Default ``"published"`` for the generic bound, ``"exact"`` for laws.

    Examples
    --------
    >>> from amp.baselines import hoeffding_delta
    >>> f"{hoeffding_delta(amp.KRR(4.0, k=10), 10_000, 0.5).value:.3e}"
    '8.593e-03'
    """
    return _delta("hoeffding", source, n, eps, range_mode, "corrected")


def hoeffding_epsilon(source: float | GPARV | object, n: int, delta: float | np.ndarray, *,
                      range_mode: RangeMode | None = None, xtol: float = 1e-9
                      ) -> Bound | list[Bound]:
    """Smallest ``eps`` in ``[0, eps0]`` with ``delta_H(eps) <= delta`` (one certified search,
    :func:`amp.inversion.crossing`, relative tolerance ``xtol``).

    Examples
    --------
    >>> from amp.baselines import hoeffding_epsilon
    >>> round(hoeffding_epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6).value, 4)
    1.1213
    """
    return _epsilon("hoeffding", source, n, delta, range_mode, "corrected", xtol)


def bennett_delta(source: float | GPARV | object, n: int, eps: float | np.ndarray, *,
                  range_mode: RangeMode | None = None,
                  variant: Literal["corrected", "balle-code"] = "corrected") -> Bound | list[Bound]:
    """Balle et al.'s Bennett bound ``delta_B(eps)`` (see module docstring for both variants).

    ``variant="corrected"`` (default) is a valid upper bound; ``"balle-code"`` reproduces the
    authors' code and returns ``certified=False``.

    Examples
    --------
    >>> from amp.baselines import bennett_delta
    >>> f"{bennett_delta(amp.KRR(4.0, k=10), 10_000, 0.5).value:.3e}"
    '2.455e-07'
    """
    return _delta("bennett", source, n, eps, range_mode, _check_variant(variant))


def bennett_epsilon(source: float | GPARV | object, n: int, delta: float | np.ndarray, *,
                    range_mode: RangeMode | None = None,
                    variant: Literal["corrected", "balle-code"] = "corrected",
                    xtol: float = 1e-9) -> Bound | list[Bound]:
    """Smallest ``eps`` in ``[0, eps0]`` with ``delta_B(eps) <= delta`` (one certified search,
    :func:`amp.inversion.crossing`, relative tolerance ``xtol``).

    Examples
    --------
    >>> from amp.baselines import bennett_epsilon
    >>> round(bennett_epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6).value, 4)
    0.4661
    """
    return _epsilon("bennett", source, n, delta, range_mode, _check_variant(variant), xtol)
