"""The CLI's answer for a baseline (``--bound clone|clone-closed|hoeffding|bennett|
stronger-clone``): the JSON contract of :mod:`amp.cli`, with the baselines' warnings on stderr.
The numbers are :mod:`amp.baselines`' (the same as ``amp.epsilon(..., bound=NAME)``)."""

from __future__ import annotations

import sys
import warnings

from amp.mechanisms.base import Mechanism

__all__ = ["baseline_json"]


def baseline_json(name: str, command: str, mechanism: Mechanism, n: int,
                  target: float) -> dict:
    """``delta`` (target = eps) or ``epsilon`` (target = delta) of the baseline ``name`` as the
    CLI's JSON contract: the inputs, ``"value"``, ``"bracket"`` (numeric methods only),
    ``"certified"`` and ``"note"``. Warnings (the stronger clone's) go to stderr."""
    from amp.baselines import BOUNDS, NUMERIC

    b = BOUNDS[name]
    source = mechanism.eps0 if b.generic else mechanism
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = b.delta(source, n, target) if command == "delta" else b.epsilon(source, n, target)
    for w in caught:
        print(f"amp: warning: {w.message}", file=sys.stderr)
    if not b.valid:
        print(f"amp: warning: '{name}' is NOT a valid privacy bound ({b.reference}); "
              "shown only to compare with what was claimed", file=sys.stderr)
    out = {"quantity": "delta" if command == "delta" else "eps", "bound": name,
           "mechanism": mechanism.describe() if not b.generic else
           f"any eps0-LDP randomizer (eps0={mechanism.eps0:g})",
           "n": n, ("eps" if command == "delta" else "delta"): target,
           "value": float(r.value), "method": r.method, "certified": bool(r.certified),
           "note": r.details.get("note", "")}
    if name in NUMERIC:
        out["bracket"] = [float(r.lower), float(r.upper)]
    return out
