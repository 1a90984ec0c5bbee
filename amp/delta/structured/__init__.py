"""Structured exact path for laws with the Table 1 shape."""
from amp.delta.structured.core import *  # noqa: F401,F403 (temporary during the split)
from amp.delta.structured.core import _MODELS, delta_bracket_structured, epsilon_bracket_structured, supports, structured_shape  # noqa: F401
