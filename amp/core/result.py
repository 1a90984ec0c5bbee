"""The one result type of :mod:`amp`: a certified bracket of one privacy quantity.

Every question :mod:`amp` answers (``delta`` at an ``eps``, ``eps`` for a ``delta``, the largest
local ``eps0`` for a target, a baseline's value) comes back as a :class:`Bound`: the exact value
of the *selected bound* lies in ``[lower, upper]`` (certified, floating point included, unless
``certified`` is ``False``), and :attr:`Bound.value` is the end a user should use, derived from
the bracket and the side of the bound, so the two can never disagree.

Neighbouring relation: throughout :mod:`amp`, two datasets of ``n`` users are neighbours when
they differ in one user's input (replace-one); both directions of the pair are covered by the
mechanisms' pair laws (the ordered pairs ``(x0, x1)`` and ``(x1, x0)``).

Vectors: a scalar input gives one :class:`Bound`; a sequence of inputs gives a ``list`` of
:class:`Bound`, in the input's order (the same convention everywhere in :mod:`amp`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping

from amp.core.floats import fmt_outward

__all__ = ["Bound", "Quantity", "NEIGHBOURING", "QUANTITIES", "SIDES", "flag_wider",
           "held_or_raise", "wider_or_raise"]

#: What was computed: ``delta(eps)``, ``eps(delta)`` or a local ``eps0`` for a target.
Quantity = Literal["delta", "eps", "eps0"]
QUANTITIES = ("delta", "eps", "eps0")
#: The two sides of the paper's objects: Theorem 4's blanket bound (``"upper"``) and the
#: Theorem 5 dataset pair (``"lower"``). Baselines carry their own name (``"clone"``, ...).
SIDES = ("upper", "lower")
#: The neighbouring relation all bounds refer to.
NEIGHBOURING = "replace-one: the two datasets of n users differ in one user's input"


@dataclass(frozen=True)
class Bound:
    """Certified bracket ``[lower, upper]`` of one privacy quantity.

    Attributes
    ----------
    quantity : {"delta", "eps", "eps0"}
        What was computed.
    lower : float
        Lower end of the bracket: the exact value of the selected bound is ``>= lower``.
    upper : float
        Upper end of the bracket: the exact value of the selected bound is ``<= upper``.
    bound : str
        The curve: ``"upper"``: the optimal decomposition (privacy blanket) bound, Theorems
        3-4, an upper bound on the true privacy curve (for an ``eps0`` result: the curve it
        was calibrated against; its value is still the lower end, see :attr:`side`). ``"lower"``: Theorem 5's explicit dataset pair, a
        lower bound on it. Otherwise the name of a baseline (``"clone"``, ``"hoeffding"``, ...).
    method : str
        The backend(s) that produced the bracket (``"structured"``, ``"fft"``, ``"exact"``, ...).
    n : int or None
        Number of users.
    mechanism : str
        Description of the mechanism or label of the law.
    inputs : mapping
        The given inputs (``{"eps": ...}``, ``{"delta": ...}``, ``{"eps": ..., "delta": ...}``).
    certified : bool
        False only for numbers that are not valid guarantees (the flawed stronger clone, a
        closed form outside its regime).
    details : dict
        Backend diagnostics (grid step, windows, evaluations); not part of equality.
    parts : tuple
        The per-law :class:`Bound` objects whose maximum this is; not part of equality.

    Notes
    -----
    ``value`` is derived (never stored): the upper end for an upper bound (Theorems 3-4 and the
    baselines), the lower end for Theorem 5 and for a calibrated ``eps0``. So the number to use
    cannot disagree with the certified bracket.

    Examples
    --------
    >>> import amp
    >>> r = amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6)
    >>> r.quantity, r.bound, r.method, r.n
    ('eps', 'upper', 'structured', 10000)
    >>> round(r.value, 4), r.value == r.upper, r.lower <= r.estimate
    (0.3805, True, True)
    >>> sorted(r.as_dict())
    ['bound', 'bracket', 'delta', 'mechanism', 'method', 'n', 'quantity',
     'side', 'value']
    >>> amp.Bound("eps", 0.2, 0.3, bound="lower").value     # Theorem 5
    0.2

    A :class:`Bound` reads as its value where a number is expected (comparisons with
    numbers use :attr:`value`; ``==`` compares whole results):

    >>> float(r) == r.value, f"{r:.3f}", r < 1
    (True, '0.380', True)
    >>> print(r)
    eps <= 0.380495 [0.380487, 0.380495], Theorem 4 (§5.1), structured
    """

    quantity: Quantity
    lower: float
    upper: float
    bound: str = "upper"
    method: str = ""
    n: int | None = None
    mechanism: str = ""
    inputs: Mapping[str, float] = field(default_factory=dict)
    certified: bool = True
    details: dict = field(default_factory=dict, repr=False, compare=False)
    parts: tuple = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.quantity not in QUANTITIES:
            raise ValueError(f"quantity must be one of {QUANTITIES}, got {self.quantity!r}")
        lo, up = float(self.lower), float(self.upper)
        if math.isnan(lo) or math.isnan(up) or lo > up:
            raise ValueError(f"invalid bracket [{lo!r}, {up!r}]")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", up)

    # ------------------------------------------------------------------ derived values
    @property
    def side(self) -> Literal["lower", "upper"]:
        """The end of the bracket that is the answer, ``"lower"`` for a Theorem 5 lower bound
        and for a calibrated ``eps0`` (the largest certified-safe value), else ``"upper"``."""
        if self.quantity == "eps0" or self.bound == "lower":
            return "lower"
        return "upper"

    @property
    def value(self) -> float:
        """The number to use, the certified end of the bracket on the bound's safe side."""
        return self.lower if self.side == "lower" else self.upper

    @property
    def bracket(self) -> tuple[float, float]:
        """``(lower, upper)``."""
        return (self.lower, self.upper)

    @property
    def rel_width(self) -> float:
        """``(upper - lower) / upper`` (0 when both are 0)."""
        return 0.0 if self.upper == 0 else (self.upper - self.lower) / self.upper

    @property
    def estimate(self) -> float:
        """An uncertified point inside the bracket (geometric mean when ``lower > 0``)."""
        if self.lower > 0:
            return math.sqrt(self.lower) * math.sqrt(self.upper)   # no underflow
        return self.upper

    @property
    def wider_than_asked(self) -> bool:
        """True when the bracket is certified but wider than the ``rel_tol`` asked (an
        :class:`~amp.core.errors.AccuracyWarning` was issued; see ``achieved_rel_tol``)."""
        return bool(self.details.get("wider_than_asked", False))

    @property
    def achieved_rel_tol(self) -> float:
        """The relative width actually certified, :attr:`rel_width`."""
        return float(self.details.get("achieved_rel_tol", self.rel_width))

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation the bound refers to (:data:`NEIGHBOURING`)."""
        return NEIGHBOURING

    @property
    def eps(self) -> float | None:
        """The central ``eps``: the input of a ``delta`` or ``eps0`` question, else ``value``."""
        if self.quantity == "eps":
            return self.value
        return self.inputs.get("eps")

    @property
    def delta(self) -> float | None:
        """The ``delta``: ``value`` of a ``delta`` question, else the target ``delta``."""
        if self.quantity == "delta":
            return self.value
        return self.inputs.get("delta")

    # ------------------------------------------------------------------ a Bound as a number
    def __float__(self) -> float:
        """``float(r)`` is :attr:`value`, the number to use."""
        return self.value

    def __format__(self, spec: str) -> str:
        """``f"{r:.3f}"`` formats :attr:`value`; an empty spec gives :meth:`__str__`."""
        return format(self.value, spec) if spec else str(self)

    def __str__(self) -> str:
        """One line: the quantity, the value on its safe side, the bracket and the source,
        e.g. ``eps <= 0.380495 [0.380487, 0.380495], Theorem 4 (§5.1), structured`` (after
        ``rounds > 1``: ``..., composition of 100 rounds of Theorem 4 (§5.1), ...``), each
        number rounded outward to 6 digits (:func:`amp.core.floats.fmt_outward`)."""
        rel = "<=" if self.side == "upper" else ">="
        if self.quantity == "eps0":
            rel = "<="          # the largest certified-safe eps0: use at most this
        source = {"upper": "Theorem 4 (§5.1)", "lower": "Theorem 5 (§5.3)"}.get(self.bound,
                                                                              self.bound)
        rounds = self.details.get("rounds", 1)       # a composed answer (amp.rounds) says so
        if isinstance(rounds, int) and rounds > 1:
            source = f"composition of {rounds} rounds of {source}"
        if self.quantity == "eps0":
            source = f"calibrated with {source}"
        flag = "" if self.certified else ", NOT certified"
        # rounded outward: a printed upper end is never below the certified one, a printed
        # lower end (a Theorem 5 value, a safe eps0) never above it
        val = fmt_outward(self.value, up=self.side == "upper")
        lo, up = fmt_outward(self.lower, up=False), fmt_outward(self.upper, up=True)
        return f"{self.quantity} {rel} {val} [{lo}, {up}], {source}, {self.method}{flag}"

    def _number(self, other: object) -> float:
        if isinstance(other, Bound):
            return other.value
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return float(other)
        try:
            return float(other)            # numpy scalars
        except (TypeError, ValueError):
            return NotImplemented          # type: ignore[return-value]

    def __lt__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is NotImplemented else self.value < o

    def __le__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is NotImplemented else self.value <= o

    def __gt__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is NotImplemented else self.value > o

    def __ge__(self, other: object) -> bool:
        o = self._number(other)
        return NotImplemented if o is NotImplemented else self.value >= o

    def as_dict(self) -> dict:
        """JSON-ready dictionary (the CLI's ``--json`` contract)."""
        out = {"quantity": self.quantity, "bound": self.bound, "mechanism": self.mechanism,
               "n": self.n, **dict(self.inputs), "value": self.value,
               "bracket": [self.lower, self.upper], "method": self.method,
               "side": self.side}
        if self.wider_than_asked:       # only then: the contract of answers as asked is as before
            out.update(wider_than_asked=True, achieved_rel_tol=self.achieved_rel_tol)
        return out


def flag_wider(res: Bound, rel_tol: float, reason: str = "", stacklevel: int = 3) -> Bound:
    """``res``, a certified bracket wider than ``rel_tol`` that a search returned instead of
    refusing, flagged: ``details`` gains ``wider_than_asked``, ``achieved_rel_tol``,
    ``wider_note`` (and ``wider_reason`` when ``reason`` is given, the search's own message)
    and an :class:`~amp.core.errors.AccuracyWarning` says the note. The one place that writes
    the note, for :func:`amp.delta`, :func:`amp.epsilon`, :func:`amp.calibrate_eps0` and the
    matrix search."""
    import warnings
    from dataclasses import replace
    from amp.core.errors import AccuracyWarning
    why = reason.split(": ", 1)[-1].split("; certified bracket")[0] if reason else ""
    note = (f"{res.quantity} bracket [{res.lower:.8g}, {res.upper:.8g}] (relative width "
            f"{res.rel_width:.2g}) is certified but wider than asked (rel_tol={rel_tol:g})"
            + (f": {why}" if why else ""))
    warnings.warn(note, AccuracyWarning, stacklevel=stacklevel + 1)
    extra = {"wider_reason": reason} if reason else {}
    return replace(res, details={**res.details, "wider_than_asked": True,
                                 "achieved_rel_tol": res.rel_width, "wider_note": note,
                                 **extra})


def held_or_raise(res: Bound, rel_tol: float, strict: bool, what: str, reason: str = "",
                  abs_tol: float = 0.0, stacklevel: int = 3) -> Bound:
    """The rule for a certified bracket ``res`` that may be wider than ``rel_tol`` (a
    ``delta`` of :func:`amp.delta`; :func:`wider_or_raise` applies the same rule to a search
    that stopped short, as in :func:`amp.epsilon`): ``res`` as it is
    when ``res.rel_width <= rel_tol`` or ``res.upper <= abs_tol`` (the whole bracket below a
    negligible level, e.g. a ``delta`` of ``[0, 8e-24]``); otherwise ``strict``
    raises :class:`NumericalError` (``what: reason``) and ``strict=False`` returns ``res``
    flagged (:func:`flag_wider`: ``wider_than_asked``, ``achieved_rel_tol``, an
    :class:`~amp.core.errors.AccuracyWarning`). The bracket is as valid either way."""
    if res.rel_width <= rel_tol or res.upper <= abs_tol:
        return res
    return _wider(lambda: res, rel_tol, strict, what, reason, stacklevel + 1)


def _wider(make, rel_tol: float, strict: bool, what: str, reason: str,
           stacklevel: int) -> Bound:
    """``strict``: :class:`NumericalError` (``what: reason``); else ``make()``, the bracket
    held, flagged (:func:`flag_wider`)."""
    from amp.core.errors import NumericalError
    if strict:
        raise NumericalError(f"{what}: {reason}") from None
    return flag_wider(make(), rel_tol, reason, stacklevel=stacklevel + 1)


def wider_or_raise(exc: Exception, strict: bool, rel_tol: float, what: str, make) -> Bound:
    """A search that stopped short of ``rel_tol`` (``exc`` carries the certified bracket it
    held, ``exc.lo <= exc.hi``, as :class:`amp.inversion.WiderThanAsked` does): ``make(lo,
    hi)`` built into a :class:`Bound` flagged as wider than asked (:func:`flag_wider`), as
    :func:`amp.epsilon` flags an eps bracket. ``strict``, or an error without a bracket,
    raises :class:`NumericalError` (``what: exc``). The bracket is as valid as a full answer
    (each end moved only on a certified evaluation), only wider."""
    from amp.core.errors import NumericalError
    lo, hi = getattr(exc, "lo", math.nan), getattr(exc, "hi", math.nan)
    if not (0.0 <= lo <= hi < math.inf):
        raise NumericalError(f"{what}: {exc}") from None
    return _wider(lambda: make(lo, hi), rel_tol, strict, what, str(exc), 3)
