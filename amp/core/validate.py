"""Small input checks shared by the public constructors (never ``assert``)."""

from __future__ import annotations

import math
import numbers

from amp.core.errors import ParameterError

__all__ = ["MAX_EPS0", "show", "positive_float", "eps0_value", "int_at_least",
           "strict_int_at_least", "probability_open", "values"]

#: Largest eps0 accepted: e**eps0 must stay far from float64 overflow (e**700 ~ 1e304) and
#: the products e**(eps + eps0) used by the GPARV must be finite.
MAX_EPS0 = 300.0


def show(value: object) -> str:
    """``repr`` of a user's value for an error message, with numpy scalars shown as plain
    Python numbers (``1.1``, not ``np.float64(1.1)``)."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        try:
            value = item()
        except (TypeError, ValueError):   # pragma: no cover - exotic scalar types
            pass
    return repr(value)


def positive_float(name: str, value: object, *, allow_zero: bool = False,
                   upper: float | None = None) -> float:
    """Return ``value`` as a finite float > 0 (or >= 0), else raise :class:`ParameterError`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a real number, got {show(value)}")
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise ParameterError(f"{name} must be finite, got {x}")
    if allow_zero:
        if x < 0:
            raise ParameterError(f"{name} must be >= 0, got {x}")
    elif x <= 0:
        raise ParameterError(f"{name} must be > 0, got {x}")
    if upper is not None and x > upper:
        raise ParameterError(f"{name} must be <= {upper}, got {x}")
    return x


def eps0_value(value: object, name: str = "eps0") -> float:
    """A local privacy parameter: finite, > 0 and small enough that ``exp(eps0)`` is safe."""
    return positive_float(name, value, upper=MAX_EPS0)


def int_at_least(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as an ``int >= minimum`` (integral floats accepted), else raise."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer, got {show(value)}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        v = int(value)
    else:
        raise ParameterError(f"{name} must be an integer, got {show(value)}")
    if v < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {v}")
    return v


def strict_int_at_least(name: str, value: object, minimum: int) -> int:
    """Like :func:`int_at_least` but a float (``1.0``) is refused: for counts such as
    ``rounds`` where a float is more likely a mistake than a convenience."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {show(value)}")
    return int_at_least(name, value, minimum)


def values(name: str, value: object, check) -> float | list[float]:
    """A scalar, or a non-empty 1-D sequence, each element passed through ``check(name, x)``.

    Returns one float for a scalar and a list for a sequence (the vector convention of
    :mod:`amp`); an empty or nested sequence, or a non-number inside one, raises
    :class:`ParameterError` naming ``name``.
    """
    if isinstance(value, (str, bytes)) or getattr(value, "ndim", 1) == 0 or not hasattr(
            value, "__iter__"):
        return check(name, value)
    items = list(value)
    if not items:
        raise ParameterError(f"{name} must be a number or a non-empty sequence, got an empty "
                             f"{type(value).__name__}")
    out = []
    for x in items:
        if isinstance(x, (str, bytes)) or (hasattr(x, "__iter__") and
                                           getattr(x, "ndim", 1) != 0):
            raise ParameterError(f"{name} must be a number or a 1-D sequence of numbers, got "
                                 f"an element {show(x)}")
        out.append(check(name, x))
    return out


def probability_open(name: str, value: object) -> float:
    """A probability strictly inside (0, 1), e.g. a target ``delta``."""
    x = positive_float(name, value)
    if not x < 1:
        raise ParameterError(f"{name} must be in (0, 1), got {x}")
    return x
