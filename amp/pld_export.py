"""Deprecated alias: one round as a dp-accounting PLD (:func:`amp.to_pld`) moved to
:mod:`amp.rounds.export`.

For one release ``amp.pld_export`` is the same module object as ``amp.rounds.export``, with a
``DeprecationWarning`` naming the new import (:func:`amp.core.moved.alias`).
"""

from amp.core.moved import alias

alias(__name__, "amp.rounds.export", "to amp.rounds.export", "'from amp.rounds import export'")
