"""Shared test helpers: one-sided checks and small oracles (import as ``helpers``)."""

from __future__ import annotations

import numpy as np


def assert_upper(upper: float, truth: float, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``upper`` is a certified upper bound of ``truth`` (never below it)."""
    assert upper >= truth * (1 - rtol) - atol, f"upper {upper!r} < truth {truth!r}"


def assert_lower(lower: float, truth: float, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``lower`` is a certified lower bound of ``truth`` (never above it)."""
    assert lower <= truth * (1 + rtol) + atol, f"lower {lower!r} > truth {truth!r}"


def random_ldp_matrix(rng: np.random.Generator, d: int, m: int, eps0: float) -> np.ndarray:
    """A random d x m row-stochastic matrix whose log-ratios span at most eps0 per column."""
    logits = rng.uniform(0.0, eps0, size=(d, m))
    col = rng.dirichlet(np.ones(m))
    M = np.exp(logits) * col
    M /= M.sum(axis=1, keepdims=True)
    return M


def labelled(ax) -> bool:
    """A matplotlib axes with both axis labels set."""
    return bool(ax.get_xlabel()) and bool(ax.get_ylabel())


def load_script(path, name: str):
    """The module of a script that is not in a package (``scripts/live/check.py``, ...)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
