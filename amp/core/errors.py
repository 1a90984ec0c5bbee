"""Error hierarchy of :mod:`amp`.

``AmpError`` is the root. ``ParameterError`` (also a ``ValueError``) is raised for bad user
input and names the offending parameter; ``NumericalError`` (also an ``ArithmeticError``) is
raised when a requested accuracy cannot be certified (floating-point floor, memory), instead of
returning a number that might be wrong.
"""

from __future__ import annotations


class AmpError(Exception):
    """Root of all errors raised by :mod:`amp`."""


class ParameterError(AmpError, ValueError):
    """A user-supplied parameter is invalid; the message names it and its value."""


class NumericalError(AmpError, ArithmeticError):
    """The requested accuracy cannot be certified (memory, floating-point floor, ...)."""
