"""Memory a plan needs, checked before it allocates (issue 27: refuse, never get killed).

Every engine path whose arrays grow with ``n`` (the lattice FFT, the structured count model,
the composition of many rounds) estimates its peak bytes from the sizes it is about to use and
calls :func:`check` first: beyond the memory available it raises a one-line
:class:`~amp.core.errors.NumericalError` naming both figures, before any large array exists.

The memory available is ``AMP_MEMORY_LIMIT`` (bytes, e.g. ``2e9``) when set, else the smaller
of the system's available memory (``MemAvailable`` of ``/proc/meminfo``) and the process's
address-space limit (``RLIMIT_AS``); when neither can be read nothing is refused.
"""

from __future__ import annotations

import os

from amp.core.errors import NumericalError

__all__ = ["ENV", "available_bytes", "check", "show_bytes"]

#: Environment variable that caps the memory a plan may use (bytes).
ENV = "AMP_MEMORY_LIMIT"


def available_bytes() -> float | None:
    """Bytes a plan may use: :data:`ENV` if set, else ``min(MemAvailable, RLIMIT_AS)``; ``None``
    when unknown."""
    env = os.environ.get(ENV)
    if env:
        try:
            return float(env)
        except ValueError:
            raise NumericalError(f"{ENV} must be a number of bytes, got {env!r}") from None
    out = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    out = float(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            out = soft if out is None else min(out, float(soft))
    except (ImportError, ValueError, OSError):
        pass
    return out


def show_bytes(b: float) -> str:
    """``1.5 GB``-style figure."""
    for unit, k in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{b:.0f} B"


def check(nbytes: float, what: str) -> None:
    """Raise :class:`NumericalError` when ``nbytes`` (an estimate of a plan's peak memory) is more
    than :func:`available_bytes`; ``what`` names the plan in the one-line message.

    Examples
    --------
    >>> import os
    >>> from amp.core import memory
    >>> os.environ[memory.ENV] = "1e6"
    >>> try:
    ...     memory.check(5e6, "a 1-D FFT of 300,000 points")
    ... except Exception as e:
    ...     print(e)
    a 1-D FFT of 300,000 points needs about 5 MB of memory, more than the 1 MB available (AMP_MEMORY_LIMIT); ask a smaller question
    >>> del os.environ[memory.ENV]
    """
    avail = available_bytes()
    if avail is not None and nbytes > avail:
        src = ENV if os.environ.get(ENV) else "on this machine"
        raise NumericalError(f"{what} needs about {show_bytes(nbytes)} of memory, more than the "
                             f"{show_bytes(avail)} available ({src}); ask a smaller question")
