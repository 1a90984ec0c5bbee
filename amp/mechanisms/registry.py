"""The one registry of mechanism names (CLI, figures, calculators): name -> class and the
domain keywords it takes (integers ``k``, ``g``, ``d``; the square wave's real half-width ``b``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from amp.core.errors import ParameterError
from amp.core.validate import show
from amp.mechanisms.base import Mechanism
from amp.mechanisms.laplace import Laplace
from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave
from amp.mechanisms.table1 import BLH, KRR, OLH, OUE, RAPPOR, HadamardResponse

__all__ = ["Entry", "MECHANISMS", "make", "factory"]


@dataclass(frozen=True)
class Entry:
    """A registered mechanism family: its class, the domain keywords it accepts and the ones
    it requires (``KRR`` needs ``k``; ``d`` selects an exact finite form where accepted)."""

    cls: Callable[..., Mechanism]
    accepts: tuple[str, ...]
    requires: tuple[str, ...] = ()
    summary: str = ""


MECHANISMS: dict[str, Entry] = {
    "krr": Entry(KRR, ("k",), ("k",), "k-ary randomized response (Table 1, exact for every k)"),
    "rappor": Entry(RAPPOR, ("d",), (), "RAPPOR (Table 1 row; d: exact finite form)"),
    "oue": Entry(OUE, ("d",), (), "optimized unary encoding (Table 1 row; d: finite form)"),
    "blh": Entry(BLH, ("d",), (), "binary local hashing (Table 1 row; d: finite form)"),
    "olh": Entry(OLH, ("g", "d"), ("g",), "local hashing with g buckets (d: finite form)"),
    "hadamard": Entry(HadamardResponse, ("d",), (), "Hadamard response (Table 1 row)"),
    "duchi": Entry(Duchi, (), (), "Duchi et al.'s one-bit mechanism, inputs in [-1, 1]"),
    "squarewave": Entry(SquareWave, ("b",), (), "square wave, inputs in [0, 1] (b: half-width, "
                        "default Li et al.'s)"),
    "piecewise": Entry(PiecewiseMechanism, (), (), "piecewise mechanism, inputs in [-1, 1]"),
    "laplace": Entry(Laplace, (), (), "Laplace on [0, 1] (scale 1/eps0), certified cells"),
}


def make(name: str, eps0: float, **domain: float | None) -> Mechanism:
    """Build the registered mechanism ``name`` with local ``eps0`` and its domain keywords
    (``None`` values are ignored), e.g. ``make("krr", 4.0, k=10)``."""
    return factory(name, **domain)(eps0)


def factory(name: str, **domain: float | None) -> Callable[[float], Mechanism]:
    """``eps0 -> mechanism`` for the registered ``name`` and domain keywords (checked now)."""
    key = str(name).lower()
    if key not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got "
                             f"{show(name)}")
    entry = MECHANISMS[key]
    given = {k: v for k, v in domain.items() if v is not None}
    for k in given:
        if k not in entry.accepts:
            raise ParameterError(f"{k} does not apply to mechanism {key!r}")
    for k in entry.requires:
        if k not in given:
            raise ParameterError(f"{k} is required for {key}")
    return lambda eps0: entry.cls(eps0, **given)
