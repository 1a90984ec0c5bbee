"""Deprecated alias: the one dp-accounting adapter moved to :mod:`amp.rounds.adapter`.

For one release ``amp.pld_adapter`` is the same module object as ``amp.rounds.adapter``, with a
``DeprecationWarning`` naming the new import (:func:`amp.core.moved.alias`).
"""

from amp.core.moved import alias

alias(__name__, "amp.rounds.adapter", "to amp.rounds.adapter", "'from amp.rounds import adapter'")
