"""Module names kept for one release after their module moved (deprecated aliases).

An alias module calls :func:`alias` from its body: importing the old name warns once with a
``DeprecationWarning`` naming the new import, and ``sys.modules`` then holds the moved module
object under the old name, so ``import old`` and ``from old import x`` give exactly what the new
name gives. Where the new module is not installed (the book's package, which the library's wheel
does not bring), the import fails with one line saying where it went.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType


def warn_moved(old: str, where: str, use: str, stacklevel: int = 3) -> None:
    """The ``DeprecationWarning`` of a moved module, ``"<old> moved <where>: use <use>; <old>
    will be removed in the next release"``, called from the alias module's body (the default
    ``stacklevel`` points past it, to the import)."""
    warnings.warn(f"{old} moved {where}: use {use}; {old} will be removed in the next release",
                  DeprecationWarning, stacklevel=stacklevel)


def alias(old: str, new: str, where: str, use: str, missing: str | None = None) -> ModuleType:
    """Warn (:func:`warn_moved`), import ``new`` and make it the module named ``old``.

    ``missing``: the one-line ``ImportError`` to raise when ``new`` cannot be imported (``None``:
    the original error propagates)."""
    warn_moved(old, where, use, stacklevel=4)
    try:
        module = importlib.import_module(new)
    except ImportError:
        if missing is None:
            raise
        raise ImportError(missing) from None
    sys.modules[old] = module
    return module
