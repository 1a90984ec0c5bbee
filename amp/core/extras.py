"""Optional dependencies: import one, or fail with a one-line message naming the extra.

The core of :mod:`amp` needs numpy and scipy only (``pip install amp-shuffle``). Everything else
is an extra of the distribution ``amp-shuffle`` (``pyproject.toml``, ``[project.optional-
dependencies]``):

- ``plot``: matplotlib and ipywidgets, for the book's figures and widgets (``ampbook``, the
  book's own package in ``book/ampbook``, which requires them through :func:`require`);
- ``book``: ``plot`` and the Jupyter Book 1.x tool chain, to build the book;
- ``rounds``: dp-accounting, for multi-round composition;
- ``dask``: dask ``distributed``, for parallel sweeps;
- ``all``: ``plot``, ``rounds`` and ``dask``.

Modules that need an optional dependency import it through :func:`require`, at call time, so
that ``import amp`` never needs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["DISTRIBUTION", "EXTRAS", "MissingExtraError", "install_hint", "require"]

#: The distribution name on the package index (the import name is ``amp``).
DISTRIBUTION = "amp-shuffle"

#: The extras defined in ``pyproject.toml`` and what each is for.
EXTRAS = {
    "plot": "figures and widgets (matplotlib, ipywidgets)",
    "book": "the book's tool chain (plot + Jupyter Book 1.x)",
    "rounds": "multi-round composition (dp-accounting)",
    "dask": "parallel sweeps (dask distributed)",
    "all": "plot + rounds + dask",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def install_hint(extra: str) -> str:
    """The ``pip install`` command for ``extra``.

    Parameters
    ----------
    extra : str
        One of :data:`EXTRAS` (``"plot"``, ``"book"``, ``"rounds"``, ``"dask"``, ``"all"``).

    Returns
    -------
    str
        The command, quoted for a POSIX shell.

    Examples
    --------
    >>> from amp.core.extras import install_hint
    >>> install_hint("rounds")
    "pip install 'amp-shuffle[rounds]'"
    """
    if extra not in EXTRAS:
        raise ValueError(f"extra must be one of {sorted(EXTRAS)}, got {extra!r}")
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, extra: str, *, purpose: str = "") -> ModuleType:
    """Import ``module``, or raise a one-line :class:`MissingExtraError` naming ``extra``.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"matplotlib.pyplot"`` or ``"dp_accounting"``.
    extra : str
        The extra of ``amp-shuffle`` that installs it (a key of :data:`EXTRAS`).
    purpose : str, optional
        What needs it, for the message (e.g. ``"amp.viz figures"``); defaults to the extra's
        description.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingExtraError
        (an :class:`ImportError`) when ``module`` or one of its dependencies is missing; the
        message is one line, e.g. ``amp.viz figures needs matplotlib, which is not installed:
        pip install 'amp-shuffle[plot]'``.

    Examples
    --------
    >>> from amp.core.extras import require
    >>> require("math", "plot").sqrt(4.0)
    2.0
    >>> try:
    ...     require("no_such_module_xyz", "rounds", purpose="amp.rounds")
    ... except ImportError as exc:
    ...     print(exc)
    amp.rounds needs no_such_module_xyz, which is not installed:
    pip install 'amp-shuffle[rounds]'
    """
    hint = install_hint(extra)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what = purpose or EXTRAS[extra]
        missing = getattr(exc, "name", None) or module
        raise MissingExtraError(f"{what} needs {missing}, which is not installed: {hint}") \
            from None
