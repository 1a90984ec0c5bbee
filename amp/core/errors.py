"""Error hierarchy of :mod:`amp`.

``AmpError`` is the root. ``ParameterError`` (also a ``ValueError``) is raised for bad user
input and names the offending parameter; ``NumericalError`` (also an ``ArithmeticError``) is
raised when a requested accuracy cannot be certified (floating-point floor, memory), instead of
returning a number that might be wrong.
"""

from __future__ import annotations


class AmpError(Exception):
    """Root of all errors raised by :mod:`amp`.

    Catch it to handle any failure of the library (bad input or unreachable accuracy); the
    CLI turns it into a one-line message and a non-zero exit code. Not a paper object: the
    guarantees of Theorems 4 and 5 are returned as :class:`~amp.core.result.Bound` or refused
    with one of these.

    Examples
    --------
    >>> import amp
    >>> [issubclass(e, amp.AmpError)
    ...  for e in (amp.ParameterError, amp.NumericalError)]
    [True, True]
    """


class ParameterError(AmpError, ValueError):
    """A user-supplied parameter is invalid; the message names it and its value.

    Also a :class:`ValueError`. Raised before any computation, e.g. for an ``eps0`` outside
    the range of Definition 1 (``eps0 > 0``), ``n < 1`` or ``delta`` outside ``(0, 1)``
    (Section 2); the CLI exits with code 2.

    Examples
    --------
    >>> import amp
    >>> try:
    ...     amp.KRR(-1.0, k=10)
    ... except amp.ParameterError as exc:
    ...     print(exc)
    eps0 must be > 0, got -1.0
    """


class NumericalError(AmpError, ArithmeticError):
    """The requested accuracy cannot be certified (memory, floating-point floor, ...).

    Also an :class:`ArithmeticError`. Raised by the certified version of Algorithm 4 and the
    ``eps(delta)`` search instead of returning a number that might be wrong; the message says
    what limited the accuracy and the bracket certified so far. The CLI exits with code 3.

    Examples
    --------
    >>> import amp
    >>> try:
    ...     amp.epsilon(amp.KRR(4.0, k=10), 10_000, 1e-6,
    ...                 rel_tol=1e-14, strict=True)
    ... except amp.NumericalError as exc:
    ...     print(str(exc)[:45])
    cannot resolve eps to relative width 1e-14: t
    """


class AccuracyWarning(UserWarning):
    """A certified answer is wider than the accuracy asked (``rel_tol``).

    Issued (instead of raising :class:`NumericalError`) when the ``eps(delta)`` search of
    Theorem 4's (or Theorem 5's) bound holds a valid certified bracket but cannot narrow it
    to ``rel_tol``, e.g. at a tiny ``delta``
    where the floating-point floor of the atoms limits every ``delta`` bracket. The result's
    ``wider_than_asked`` is ``True`` and ``achieved_rel_tol`` is its relative width; pass
    ``strict=True`` to :func:`amp.epsilon` to get the error instead.

    Examples
    --------
    >>> import amp
    >>> issubclass(amp.AccuracyWarning, UserWarning)
    True
    """
