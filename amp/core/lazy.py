"""Deferred imports of heavy scipy modules: ``import amp`` stays fast (issue #27).

``stats = lazy("scipy.stats")`` binds a stand-in that imports ``scipy.stats`` on its first
attribute access and then forwards to it, so ``stats.binom.sf(...)`` in a function body works
unchanged; ``gammaln = lazy("scipy.special", "gammaln")`` stands for one attribute of a module
(a function is called through it, an object's attributes are forwarded). Nothing is computed
differently: the stand-in returns the very objects a top-level import would have bound.
``bench/bench_import.py`` measures the import time.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["lazy", "Lazy"]


class Lazy:
    """A module (or one attribute of it) imported on first use.

    Examples
    --------
    >>> from amp.core.lazy import lazy
    >>> sqrt = lazy("math", "sqrt")
    >>> sqrt
    <lazy math.sqrt>
    >>> sqrt(16.0), lazy("math").pi > 3
    (4.0, True)
    """

    __slots__ = ("_module", "_attr", "_target")

    def __init__(self, module: str, attr: str | None = None) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_attr", attr)
        object.__setattr__(self, "_target", None)

    def _load(self) -> Any:
        target = object.__getattribute__(self, "_target")
        if target is None:
            mod = importlib.import_module(object.__getattribute__(self, "_module"))
            attr = object.__getattribute__(self, "_attr")
            target = mod if attr is None else getattr(mod, attr)
            object.__setattr__(self, "_target", target)
        return target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._load(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:   # monkeypatching reaches the target
        setattr(self._load(), name, value)

    def __repr__(self) -> str:
        attr = object.__getattribute__(self, "_attr")
        mod = object.__getattribute__(self, "_module")
        return f"<lazy {mod}{'' if attr is None else '.' + attr}>"


def lazy(module: str, attr: str | None = None) -> Lazy:
    """A stand-in for ``import module`` (or ``from module import attr``) that imports on first
    use (see the module docstring)."""
    return Lazy(module, attr)
