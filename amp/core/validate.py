"""Small input checks shared by the public constructors (never ``assert``)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

from amp.core.errors import ParameterError

__all__ = ["MAX_EPS0", "MAX_N", "show", "positive_float", "eps0_value", "eps_value",
           "int_at_least", "strict_int_at_least", "users", "probability_open", "values",
           "as_list", "choice"]

#: Largest eps0 accepted: e**eps0 must stay far from float64 overflow (e**700 ~ 1e304) and
#: the products e**(eps + eps0) used by the GPARV must be finite.
MAX_EPS0 = 300.0
#: Largest number of users accepted: counts are held in int64 arrays (2**63 ~ 9.2e18), with
#: room for sums of counts; far beyond any population (and beyond the memory of any plan
#: that does not settle the question by a tail bound).
MAX_N = 10**18


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
    x = _real(name, value)
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


def _real(name: str, value: object) -> float:
    """``value`` as a float if it is a real number (not a bool), else ParameterError; a number
    too large for a float (``10**400``, a huge ``Fraction``) is refused, not overflowed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a real number, got {show(value)}")
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError, ArithmeticError):
        raise ParameterError(f"{name} must be a finite real number, got "
                             f"{_short(value)}") from None


def _short(value: object) -> str:
    """``show(value)``, shortened for a message (a 400-digit integer is not a message)."""
    text = show(value)
    return text if len(text) <= 60 else f"{text[:25]}...{text[-10:]} ({len(text)} characters)"


def eps0_value(value: object, name: str = "eps0") -> float:
    """A local privacy parameter: finite, > 0 and small enough that ``exp(eps0)`` is safe."""
    return positive_float(name, value, upper=MAX_EPS0)


def eps_value(value: object, name: str = "eps", *, allow_zero: bool = True) -> float:
    """A central ``eps`` in ``[0, MAX_EPS0]`` (``(0, MAX_EPS0]`` without ``allow_zero``), else
    :class:`ParameterError`. Larger values are refused rather than overflowing ``exp(eps)``:
    every mechanism has ``eps0 <= MAX_EPS0``, and ``delta(eps) = 0`` for ``eps >= eps0``."""
    x = positive_float(name, value, allow_zero=allow_zero)
    if x > MAX_EPS0:
        raise ParameterError(f"{name} must be <= {MAX_EPS0:g} (delta(eps) = 0 for every "
                             f"eps >= eps0, and eps0 <= {MAX_EPS0:g}), got {x:g}")
    return x


def int_at_least(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int >= minimum`` (and ``<= maximum`` when given; integral
    floats accepted), else raise."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer, got {show(value)}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and _real(name, value).is_integer():
        v = int(value)
    else:
        raise ParameterError(f"{name} must be an integer, got {_short(value)}")
    if v < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {_short(v)}")
    if maximum is not None and v > maximum:
        raise ParameterError(f"{name} must be <= {maximum:.3g}, got {_short(v)}")
    return v


def strict_int_at_least(name: str, value: object, minimum: int,
                        maximum: int | None = None) -> int:
    """Like :func:`int_at_least` but a float (``1.0``) is refused: for counts such as
    ``rounds`` where a float is more likely a mistake than a convenience."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {_short(value)}")
    return int_at_least(name, value, minimum, maximum)


def users(value: object, name: str = "n") -> int:
    """A number of users: an integer in ``[1, MAX_N]`` (integral floats accepted)."""
    return int_at_least(name, value, 1, MAX_N)


def values(name: str, value: object, check) -> float | list[float]:
    """A scalar, or a non-empty 1-D sequence, each element passed through ``check(name, x)``.

    Returns one float for a scalar and a list for a sequence (the vector convention of
    :mod:`amp`); an empty or nested sequence, or a non-number inside one, raises
    :class:`ParameterError` naming ``name``.
    """
    if isinstance(value, (str, bytes, Mapping)) or getattr(value, "ndim", 1) == 0 or not \
            hasattr(value, "__iter__"):
        return check(name, value)
    try:
        items = list(value)
    except Exception:  # noqa: BLE001 - a broken iterable is bad input, whatever it raises
        return check(name, value)
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


def as_list(name: str, value: object, check) -> list:
    """A scalar or a non-empty sequence as a list, each element through ``check(name, x)``.

    For arguments that take one value or several (the axes of :func:`amp.sweep`): a string, a
    mapping, a 0-d array or any object that is not iterable is one value (``check`` refuses
    what it does not accept, naming ``name``: ``bound=Decimal("0.5")`` is refused as a bound,
    not as a failed iteration); anything else iterable is the list of its elements, which
    must not be empty.
    """
    if isinstance(value, (str, bytes, Mapping)) or getattr(value, "ndim", None) == 0 \
            or not isinstance(value, Iterable):
        return [check(name, value)]
    try:
        items = list(value)
    except Exception:  # noqa: BLE001 - a broken iterable is bad input, whatever it raises
        return [check(name, value)]
    if not items:
        raise ParameterError(f"{name} must not be empty")
    return [check(name, x) for x in items]


def choice(name: str, value: object, allowed: tuple, what: str | None = None) -> str:
    """``value`` if it is one of the strings ``allowed``, else :class:`ParameterError` (a
    non-string, e.g. an array, is refused without comparing it: ``array in tuple`` raises)."""
    if not isinstance(value, str) or value not in allowed:
        what = what or f"one of {', '.join(map(repr, allowed))}"
        raise ParameterError(f"{name} must be {what}, got {_short(value)}")
    return value


def probability_open(name: str, value: object) -> float:
    """A probability strictly inside (0, 1), e.g. a target ``delta``."""
    x = positive_float(name, value)
    if not x < 1:
        raise ParameterError(f"{name} must be in (0, 1), got {x}")
    return x


def executor(value: object, name: str = "executor") -> object:
    """The one rule for every entry's ``executor`` (``amp.epsilon``, ``amp.delta``,
    ``amp.profile``, ``amp.sweep``, ...): ``None`` (serial), a
    :class:`concurrent.futures.Executor` (a thread or process pool; a Dask cluster's
    ``client.get_executor()``), or a Dask ``distributed.Client``, used through its
    ``get_executor()`` (whose ``map`` returns results in order, as an executor's does; the
    client's own ``map`` returns futures). Anything else: :class:`ParameterError`."""
    from concurrent.futures import Executor

    if value is None or isinstance(value, Executor):
        return value
    get = getattr(value, "get_executor", None)
    if type(value).__name__ == "Client" and callable(get):
        ex = get()
        if isinstance(ex, Executor):
            return ex
    raise ParameterError(f"{name} must be None, a concurrent.futures.Executor (e.g. "
                         f"ProcessPoolExecutor(2)) or a Dask distributed.Client, got "
                         f"{type(value).__name__}")
