"""Certified ``delta(eps)`` of a continuous law discretised in convex order (the Laplace
mechanism's, :mod:`amp.mechanisms.laplace`): refine the cells until the bracket of the
two-point (upper) and cell-mean (lower) laws meets the asked width."""

from __future__ import annotations

from amp.backends.dispatch import LawDelta
from amp.core import validate as V
from amp.core.errors import NumericalError
from amp.core.result import Bound
from amp.mechanisms.gparv import GPARV
from amp.mechanisms.laplace import (BASE_CELLS, CF_FIRST_N, DEFAULT_LEVEL, MAX_LEVEL,
                                    ContinuousGPARV, LaplaceLaw)

__all__ = ["ContinuousDelta", "make_curve"]


def make_curve(law: GPARV, n: int, method: str):
    """The certified curve of one law: :class:`ContinuousDelta` for a discretised continuous
    law, else :class:`~amp.backends.dispatch.LawDelta`."""
    from amp.backends.dispatch import LawDelta
    if isinstance(law, ContinuousGPARV) and law.spec is not None:
        return ContinuousDelta(law.spec, n, method, side="lower" if law.lower else "upper")
    return LawDelta(law, n, method)


class ContinuousDelta:
    """Certified ``delta(eps)`` of a continuous law, by refining its convex-order brackets.

    At level ``j`` the bracket is ``[lower of the cell-means law - pad, upper of the
    two-point law + pad]`` (each computed by :class:`~amp.backends.dispatch.LawDelta`); the
    level goes up (cells doubled) until the bracket's relative width is at most ``rel_tol``
    (or its width at most ``abs_tol``); past :data:`MAX_LEVEL` :class:`NumericalError` is
    raised. The level reached is kept for the next evaluation (eps searches ask many)."""

    structured = False

    def __init__(self, spec: LaplaceLaw, n: int, method: str = "auto", side: str = "upper"):
        self.spec, self.n, self.method = spec, V.users(n), method
        self.level = 0
        self.law = spec.law(DEFAULT_LEVEL, "lower" if side == "lower" else "upper")
        self._cache: dict[int, tuple] = {}

    @property
    def max_eps(self) -> float:
        return self.spec.max_eps

    def _curves(self, level: int):
        if level not in self._cache:
            # auto: the cf inversion first (its cost does not grow with n and these laws have
            # many atoms), the dispatcher's own choice if it refuses (_one)
            meth = "cf" if self.method == "auto" and self.n >= CF_FIRST_N else self.method
            self._cache[level] = tuple(
                (LawDelta(law, self.n, meth), LawDelta(law, self.n, self.method))
                for law in (self.spec.law(level, "upper"), self.spec.law(level, "lower")))
        return self._cache[level]

    @staticmethod
    def _one(pair, eps: float, rel_tol: float, abs_tol: float) -> Bound:
        first, fallback = pair
        try:
            return first.delta(eps, rel_tol=rel_tol, abs_tol=abs_tol)
        except (NumericalError, ArithmeticError, ValueError):
            if first is fallback or first.method == fallback.method:
                raise
            return fallback.delta(eps, rel_tol=rel_tol, abs_tol=abs_tol)

    def delta(self, eps: float, *, rel_tol: float = 2e-3, goal: float | None = None,
              abs_tol: float = 1e-16) -> Bound:
        """Certified ``[lower, upper]`` of the continuous law's ``delta(eps)``."""
        eps = V.positive_float("eps", eps, allow_zero=True)
        rel_tol = V.positive_float("rel_tol", rel_tol, upper=0.5)
        inner = rel_tol / 4
        last = None
        for level in range(self.level, MAX_LEVEL + 1):
            up_c, lo_c = self._curves(level)
            try:
                up = self._one(up_c, eps, inner, abs_tol / 4)
                lo = self._one(lo_c, eps, inner, abs_tol / 4)
            except NumericalError as exc:
                last = exc
                continue
            pad = self.spec.pad(eps) if up.upper > 0 else 0.0
            hi = up.upper + pad if up.upper > 0 else 0.0
            lw = max(lo.lower - pad, 0.0)
            last = (lw, hi)
            # the width no refinement can remove: the backends' float floors and the pads
            floor = float(up.details.get("floor", 0.0)) + float(lo.details.get("floor", 0.0)) \
                + 2 * pad
            if hi - lw <= rel_tol * hi or hi - lw <= abs_tol or hi - lw <= 2 * floor:
                self.level = level
                return Bound("delta", lw, hi, "upper", f"laplace-cells:{up.method}", self.n,
                             self.spec.label, {"eps": eps},
                             details={"floor": floor, "level": level,
                                      "cells": up_c[0].law.label, "pad": pad})
        raise NumericalError(
            f"{self.spec.label}: the convex-order bracket of delta({eps:g}) did not reach "
            f"relative width {rel_tol:g} with {BASE_CELLS << MAX_LEVEL} cells per piece "
            f"(last: {last})")

    def delta_for_search(self, eps: float, tol: float, abs_tol: float) -> Bound:
        return self.delta(eps, rel_tol=min(max(tol, 1e-9), 0.5), abs_tol=abs_tol)

    def search_tol(self, rel_tol: float) -> float | None:
        return None

    def estimate_log_delta(self, eps: float) -> float:
        return self._curves(self.level)[0][1].estimate_log_delta(eps)
