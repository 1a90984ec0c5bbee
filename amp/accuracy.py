"""Deprecated alias: chapter 12's accuracy study moved to the book's package, ``ampbook.accuracy``.

For one release ``amp.accuracy`` is the same module object as ``ampbook.accuracy`` where the
book's package is installed (a clone of the repository: ``pip install -e book``), with a
``DeprecationWarning`` naming the new import; elsewhere the import fails with one line saying
where it went. ``pip install amp-shuffle`` brings none of the book's code.
"""

from amp.core.moved import alias

alias(__name__, "ampbook.accuracy", "out of the library into the book's own package",
      "'from ampbook import accuracy'",
      missing="amp.accuracy (chapter 12's accuracy study) moved out of the library into the "
              "book's package ampbook, which 'pip install amp-shuffle' does not bring: in a "
              "clone of the repository, pip install -e book")
