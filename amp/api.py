"""Mechanism-level answers: certified delta, eps and eps0 for a shuffled local randomizer.

``bound="upper"``: the optimal decomposition bound (privacy blanket = best general clone,
Theorems 3 and 4), maximised over the mechanism's pair laws. Certified from above.

``bound="lower"``: Theorem 5, the exact shuffled divergence of the dataset pair
``X0 = (x0, x2, ..., x2)``, ``X1 = (x1, x2, ..., x2)``, maximised over the third inputs ``x2``
(and, for matrices, taken at the worst pair of the upper bound). Certified from below: the true
privacy curve of the mechanism is at least this large.

Every function returns a :class:`BoundResult` whose ``value`` is the number to use and whose
``bracket`` encloses the exact value of the selected bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from amp.core import validate as V
from amp.delta.dispatch import DEFAULT_REL_TOL, DeltaResult, delta_bracket
from amp.core.errors import ParameterError
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.table1 import Mechanism, MatrixMechanism, pair_law_from_matrix
from amp.epsilon import DEFAULT_EPS_REL_TOL, EpsilonResult, Progress, epsilon_bracket

__all__ = ["BoundResult", "delta", "epsilon", "calibrate_eps0", "laws_for"]


@dataclass(frozen=True)
class BoundResult:
    """Answer of :func:`delta`, :func:`epsilon` or :func:`calibrate_eps0`.

    ``value`` is what a user should use (certified upper delta or eps, the largest safe eps0;
    for ``bound="lower"`` the certified lower value); ``bracket = (lower, upper)`` encloses the
    exact value of the selected bound.
    """

    quantity: str
    value: float
    lower: float
    upper: float
    bound: str
    method: str
    mechanism: str
    n: int
    inputs: dict = field(default_factory=dict)
    parts: tuple = field(default=(), repr=False, compare=False)

    @property
    def bracket(self) -> tuple[float, float]:
        """``(lower, upper)``."""
        return (self.lower, self.upper)

    def as_dict(self) -> dict:
        """JSON-ready dictionary (the CLI's contract)."""
        return {"quantity": self.quantity, "bound": self.bound, "mechanism": self.mechanism,
                "n": self.n, **self.inputs, "value": self.value,
                "bracket": [self.lower, self.upper], "method": self.method}


def laws_for(mechanism: Mechanism, bound: str, eps_hint: float | None = None,
             n: int | None = None) -> list[GPARV]:
    """The laws whose maximum gives the selected bound (see the module docstring)."""
    if bound == "upper":
        return mechanism.gparv_laws()
    if bound == "lower":
        from amp.mechanisms.joint import JointMechanism          # lazy: amp.mechanisms.joint imports this module
        if isinstance(mechanism, JointMechanism):
            # its own Theorem 5 pairs (inputs distinct in every component), not a matrix pair
            return mechanism.lower_laws()
        if isinstance(mechanism, MatrixMechanism) or (
                mechanism.finite and not mechanism.symmetric):
            return mechanism.lower_laws(_worst_pair(mechanism, eps_hint, n))
        return mechanism.lower_laws()
    raise ParameterError(f"bound must be 'upper' or 'lower', got {bound!r}")


def _worst_pair(mechanism: Mechanism, eps: float | None, n: int | None) -> tuple[int, int]:
    """Ordered pair of inputs with the largest blanket upper bound (ties: first)."""
    M = mechanism.matrix()
    d = M.shape[0]
    if d < 3:
        raise ParameterError("the Theorem 5 lower bound needs a third input (>= 3 inputs)")
    eps = 0.0 if eps is None else eps
    nn = 1 if n is None else n
    best, best_pair, seen = -1.0, (0, 1), []
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            law = pair_law_from_matrix(M, i, j, mechanism.eps0)
            if any(law.same_law(o) for o in seen):
                continue
            seen.append(law)
            v = delta_bracket(law, nn, eps, rel_tol=0.05).upper
            if v > best:
                best, best_pair = v, (i, j)
    return best_pair


def _check_mechanism(mechanism: object) -> Mechanism:
    if not isinstance(mechanism, Mechanism):
        raise ParameterError("mechanism must be an amp mechanism (KRR, RAPPOR, OUE, OLH, BLH, "
                             "HadamardResponse, MatrixMechanism, JointMechanism), got "
                             f"{type(mechanism).__name__}")
    return mechanism


def _check_bound(bound: str) -> str:
    if bound not in ("upper", "lower"):
        raise ParameterError(f"bound must be 'upper' or 'lower', got {bound!r}")
    return bound


def delta(mechanism: Mechanism, n: int, eps: float, *, bound: str = "upper",
          rel_tol: float = DEFAULT_REL_TOL, method: str = "auto",
          laws: list[GPARV] | None = None) -> BoundResult:
    """Certified ``delta(eps)`` of the shuffled mechanism with ``n`` users.

    ``bound="upper"``: Theorem 4's blanket bound, max over pair laws (value = upper end).
    ``bound="lower"``: Theorem 5's value, max over third inputs (value = lower end).
    """
    n = V.int_at_least("n", n, 1)
    eps = V.positive_float("eps", eps, allow_zero=True)
    _check_bound(bound)
    _check_mechanism(mechanism)
    laws = laws if laws is not None else laws_for(mechanism, bound, eps, n)
    res = [delta_bracket(law, n, eps, rel_tol=rel_tol, method=method) for law in laws]
    # both are at most 1 (E[S_+]/n <= E[G_+] <= sum p a <= 1 for a mechanism's laws; a
    # hockey-stick divergence is <= 1): clip the safety pads
    lo = min(max(r.lower for r in res), 1.0)
    hi = min(max(r.upper for r in res), 1.0)
    value = hi if bound == "upper" else lo
    methods = ",".join(sorted({r.method for r in res}))
    return BoundResult("delta", value, lo, hi, bound, methods, mechanism.describe(), n,
                       {"eps": eps}, tuple(res))


def epsilon(mechanism: Mechanism, n: int, delta: float, *, bound: str = "upper",
            rel_tol: float = DEFAULT_EPS_REL_TOL, method: str = "auto",
            progress: Progress | None = None,
            laws: list[GPARV] | None = None) -> BoundResult:
    """Certified ``eps(delta)``: smallest eps whose selected bound is ``<= delta``.

    ``bound="upper"``: the value is a guaranteed-valid eps (upper end of the bracket of the
    exact blanket eps). ``bound="lower"``: the value is certified below the true eps of the
    mechanism (lower end of the bracket of Theorem 5's eps).
    """
    n = V.int_at_least("n", n, 1)
    delta_ = V.probability_open("delta", delta)
    _check_bound(bound)
    _check_mechanism(mechanism)
    laws = laws if laws is not None else laws_for(mechanism, bound, None, n)
    res: list[EpsilonResult] = [
        epsilon_bracket(law, n, delta_, rel_tol=rel_tol, method=method, progress=progress)
        for law in laws]
    lo = max(r.lower for r in res)
    hi = max(r.upper for r in res)
    value = hi if bound == "upper" else lo
    methods = ",".join(sorted({r.method for r in res}))
    return BoundResult("eps", value, lo, hi, bound, methods, mechanism.describe(), n,
                       {"delta": delta_}, tuple(res))


def calibrate_eps0(make: Callable[[float], Mechanism], n: int, eps: float, delta: float, *,
                   rel_tol: float = 1e-3, eps0_max: float = V.MAX_EPS0,
                   progress: Progress | None = None, method: str = "auto") -> BoundResult:
    """Largest local ``eps0`` whose certified shuffled guarantee meets ``(eps, delta)``.

    ``make(eps0)`` builds the mechanism. The search keeps ``safe`` (certified:
    ``delta_upper(eps) <= delta``) and ``unsafe`` (``delta_lower(eps) > delta``: the blanket
    bound certainly exceeds the target) and bisects until ``unsafe - safe <= rel_tol * safe``.
    ``value = safe``; the bracket ``[safe, unsafe]`` encloses the exact threshold of the blanket
    bound when it is monotone in eps0 (the value is certified at the returned eps0 regardless).
    """
    n = V.int_at_least("n", n, 1)
    eps = V.positive_float("eps", eps)
    delta_ = V.probability_open("delta", delta)
    eps0_max = V.eps0_value(eps0_max, "eps0_max")
    if not callable(make):
        raise ParameterError(f"make must be a callable eps0 -> mechanism, got "
                             f"{type(make).__name__}")

    used: set[str] = set()

    def status(e0: float) -> int:
        r = delta_fn(_check_mechanism(make(e0)), n, eps, rel_tol=DEFAULT_REL_TOL, method=method)
        used.update(r.method.split(","))
        if progress is not None:
            progress(f"eps0={e0:.6g}: delta in [{r.lower:.4g}, {r.upper:.4g}]")
        if r.upper <= delta_:
            return 1
        if r.lower > delta_:
            return -1
        return 0

    safe = eps  # eps0 <= eps gives delta = 0 (G <= 0)
    unsafe = None
    e0 = max(2 * eps, eps + 0.1)
    while unsafe is None:
        if e0 > eps0_max:
            # certify the cap itself before returning it
            if status(eps0_max) == 1:
                return BoundResult("eps0", eps0_max, eps0_max, eps0_max, "upper",
                                   "bisection:" + ",".join(sorted(used)),
                                   make(eps0_max).describe(), n, {"eps": eps, "delta": delta_})
            unsafe = eps0_max
            break
        s = status(e0)
        if s == 1:
            safe, e0 = e0, e0 * 2
        else:
            unsafe = e0
    while unsafe - safe > rel_tol * safe:
        mid = 0.5 * (safe + unsafe)
        s = status(mid)
        if s == 1:
            safe = mid
        elif s == -1:
            unsafe = mid
        else:
            # the target sits inside the delta bracket at mid: tighten locally
            r = delta_fn(make(mid), n, eps, rel_tol=DEFAULT_REL_TOL / 20, method=method)
            if r.upper <= delta_:
                safe = mid
            elif r.lower > delta_:
                unsafe = mid
            else:
                break   # unresolvable here; [safe, unsafe] is still a valid bracket
    return BoundResult("eps0", safe, safe, unsafe, "upper",
                       "bisection:" + ",".join(sorted(used)),
                       make(safe).describe(), n, {"eps": eps, "delta": delta_})


delta_fn = delta   # alias used where a parameter named ``delta`` shadows the function
