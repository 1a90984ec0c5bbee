"""Deprecated alias: chapter 12's accuracy study moved to the book's package, ``ampbook.accuracy``.

For one release ``amp.accuracy`` is the same module object as ``ampbook.accuracy`` where the
book's package is installed (a clone of the repository: ``pip install -e book``), with a
``DeprecationWarning`` naming the new import; elsewhere the import fails with one line saying
where it went. ``pip install amp-shuffle`` brings none of the book's code.
"""

import sys
import warnings

warnings.warn("amp.accuracy moved out of the library into the book's own package: use "
              "'from ampbook import accuracy'; amp.accuracy will be removed in the next release",
              DeprecationWarning, stacklevel=2)
try:
    import ampbook.accuracy
except ImportError:
    raise ImportError("amp.accuracy (chapter 12's accuracy study) moved out of the library into "
                      "the book's package ampbook, which 'pip install amp-shuffle' does not "
                      "bring: in a clone of the repository, pip install -e book") from None

sys.modules[__name__] = ampbook.accuracy
