"""Shared checks of the front door (:mod:`amp.api`): the ``bound=`` choices, the ``rel_tol``
that a computation does not set (checked, never ignored), progress lines, and the baselines
reached through ``amp.delta`` / ``amp.epsilon`` (the CLI's ``--bound NAME``)."""

from __future__ import annotations

from amp.backends.dispatch import METHODS
from amp.baselines import BOUNDS as BASELINES
from amp.core import validate as V
from amp.core.errors import ParameterError
from amp.core.result import Bound
from amp.inversion import Progress
from amp.mechanisms.base import Mechanism
from amp import population as P
from amp.rounds.population import population_rounds

__all__ = ["BOUND_CHOICES", "METHOD_CHOICES", "ROUNDS_WHY", "check_bound_choice",
           "check_method", "no_method", "width_ok",
           "report_line", "baseline_answer", "population_answer", "backend"]

#: ``bound=`` of :func:`amp.delta` and :func:`amp.epsilon`: Theorem 4, Theorem 5, then the
#: baselines of :mod:`amp.baselines` (the CLI's ``--bound`` choices, in the same order).
BOUND_CHOICES = ("upper", "lower") + tuple(BASELINES)

#: ``method=`` of the front door: the one-round backends, then ``"poisson-binomial"``, the name
#: of a population's bound from before it was its default (accepted; the same numbers).
METHOD_CHOICES = METHODS + ("poisson-binomial",)

ROUNDS_WHY = ("the composed bracket's width is set by the composition (upper: Theorem 5's "
    "pair vs Theorem 4's dominating pairs; lower: the loss grid), not by rel_tol")


def check_bound_choice(bound: object) -> str:
    """``bound`` if it is one of :data:`BOUND_CHOICES`, else ParameterError."""
    if not isinstance(bound, str) or bound not in BOUND_CHOICES:
        raise ParameterError(f"bound must be 'upper' or 'lower', got {V.show(bound)} (or a "
                             "baseline, the CLI's --bound: "
                             f"{', '.join(map(repr, BOUND_CHOICES[2:]))})")
    return bound  # type: ignore[return-value]


def check_method(method: object) -> str:
    """``method`` if it is one of :data:`METHOD_CHOICES`, else ParameterError (said before any
    work; whether it applies to the question is checked where it is used)."""
    return V.choice("method", method, METHOD_CHOICES, f"one of {', '.join(METHOD_CHOICES)}")


def no_method(method: object, where: str) -> None:
    """ParameterError unless ``method`` is ``"auto"`` (it selects a one-round backend)."""
    if not isinstance(method, str) or method != "auto":
        raise ParameterError(f"method applies to one round of bound='upper'|'lower' only, "
                             f"not {where}; got method={V.show(method)}")


def width_ok(b: Bound, rel_tol: float | None, where: str, why: str) -> Bound:
    """``b`` if no ``rel_tol`` was asked or its bracket meets it, else ParameterError saying
    the width that was reached."""
    if rel_tol is not None and b.rel_width > rel_tol:
        w = b.rel_width
        raise ParameterError(f"rel_tol={rel_tol:g} cannot be reached {where}: the certified "
                             f"bracket [{b.lower:.8g}, {b.upper:.8g}] has relative width "
                             f"{w:.3g} ({why}); ask for rel_tol >= {w * 1.01:.2g} or leave "
                             "rel_tol unset")
    return b


def report_line(progress: Progress | None, b: Bound) -> Bound:
    """``b``, after one progress line about it (when ``progress`` is given)."""
    if progress is not None:
        x = "eps" if b.quantity == "delta" else "delta"
        progress(f"{b.quantity}({x}={b.inputs.get(x, float('nan')):.6g}) in "
                 f"[{b.lower:.6g}, {b.upper:.6g}] ({b.method})")
    return b


def baseline_answer(kind: str, name: str, mechanism: Mechanism, n: int, x, rel_tol: float | None,
              method: str, T: int, q: float, progress: Progress | None):
    """``amp.delta`` / ``amp.epsilon`` of a baseline of :mod:`amp.baselines` (the CLI's
    ``--bound NAME``: the same call, the same numbers)."""
    no_method(method, f"bound={name!r}")
    if T != 1 or q != 1.0:
        raise ParameterError(f"rounds and sampling apply to bound='upper'|'lower' only, not "
                             f"bound={name!r}")
    b = BASELINES[name]
    source = mechanism.eps0 if b.generic else mechanism
    kw = {"xtol": rel_tol} if (rel_tol is not None and kind == "epsilon"
                               and name != "clone-closed") else {}
    fn = b.delta if kind == "delta" else b.epsilon
    res = fn(source, n, x, **kw)
    why = f"the {name} baseline's own accuracy"
    out = [report_line(progress, width_ok(r, rel_tol, f"with bound={name!r}", why))
           for r in (res if isinstance(res, list) else [res])]
    return out if isinstance(res, list) else out[0]


def population_answer(kind: str, mechanism: Mechanism, n: int, x, bound: str, method: str,
                      T: int, q: float, rel_tol: float | None,
                      progress: Progress | None, strict: bool = False
                      ) -> Bound | list[Bound] | None:
    """``amp.delta`` / ``amp.epsilon`` of a fixed :class:`~amp.mechanisms.mixture.Population`
    over ``rounds > 1`` (its Poisson-binomial points composed by
    :func:`amp.rounds.population.population_rounds`), else ``None``: one round of a
    population is its :class:`~amp.privacy_profile.PrivacyProfile` (upper: the
    Poisson-binomial bound, lower: its Theorem 5 pair), as for every mechanism.
    ``method="poisson-binomial"`` names that same bound (kept for old calls) and needs a
    population. ``x`` is one ``eps`` (``kind="delta"``) or ``delta``, or a list."""
    if method == P.METHOD and not P.is_population(mechanism):
        P.front_door_population(mechanism, n, bound)          # raises, naming what is wrong
    if T == 1 or not P.is_population(mechanism):
        return None
    if method != P.METHOD:
        no_method(method, "rounds > 1")
    pop = P.front_door_population(mechanism, n, bound)
    key = "eps" if kind == "delta" else "delta"

    def one(v: float) -> Bound:
        b = population_rounds(pop, T, sampling=q, **{key: v})
        return report_line(progress, width_ok(b, rel_tol, f"with rounds={T}", ROUNDS_WHY))
    return [one(v) for v in x] if isinstance(x, list) else one(x)


def backend(method: str) -> str:
    """The one-round backend ``method`` names: ``"poisson-binomial"`` (the population bound,
    which is now every population's default) is the ``"auto"`` backend of its counts."""
    return "auto" if method == "poisson-binomial" else method
