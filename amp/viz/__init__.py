"""Deprecated alias: the book's figures, tables and widgets moved to the book's package ``ampbook``.

``amp.viz`` was the book's presentation code shipped inside the library. It now lives on the
book's side (``book/ampbook`` in the repository, installed by every venv of the Makefile with
``pip install -e book``), so ``pip install amp-shuffle`` brings none of it. For one release,
``import amp.viz`` and ``from amp.viz.<module> import ...`` keep working where ``ampbook`` is
installed: the same module objects as ``ampbook.<module>``, with a ``DeprecationWarning`` naming
the new import. Where it is not installed, the import fails with one line saying where it went.
"""

import importlib
import sys

from amp.core.moved import warn_moved

#: The modules of ``ampbook`` that were ``amp.viz.<name>``.
MODULES = ("style", "plots", "illustrations", "tables", "hierarchy", "experiments", "joint",
           "stored", "widgets", "limits", "rounds")

warn_moved("amp.viz", "out of the library into the book's own package",
           "'import ampbook' ('from ampbook import plots', ...)")
try:
    import ampbook  # noqa: F401
except ImportError:
    raise ImportError("amp.viz (the book's figures and widgets) moved out of the library into "
                      "the book's package ampbook, which 'pip install amp-shuffle' does not "
                      "bring: in a clone of the repository, pip install -e book") from None

for _name in MODULES:
    _module = importlib.import_module(f"ampbook.{_name}")
    sys.modules[f"{__name__}.{_name}"] = _module
    globals()[_name] = _module
del _name, _module
