"""Shared look of the book's figures: lazy matplotlib, new axes, the common axis finishers.

Every figure module of :mod:`ampbook` draws through these helpers, so matplotlib is imported
only when a figure is drawn (``import ampbook.plots`` and the core never import it) and every
figure has the same default size, grid and legend.
"""

from __future__ import annotations

import math

from amp.core.extras import require

__all__ = ["FIGSIZE", "PANEL_FIGSIZE", "pyplot", "new_axes", "show", "finish_delta_axes",
           "delta_label"]

#: Default size of a one-panel figure (inches).
FIGSIZE = (6.4, 3.6)
#: A slightly taller panel: comparisons, experiments and joint composition.
PANEL_FIGSIZE = (6.4, 3.8)


def pyplot():
    """``matplotlib.pyplot``, imported on first use (the core never imports matplotlib).

    Raises a one-line :class:`~amp.core.extras.MissingExtraError` (an ``ImportError``) naming
    the extra to install, ``pip install 'amp-shuffle[plot]'``, when matplotlib is missing.
    """
    return require("matplotlib.pyplot", "plot", purpose="ampbook figures")


def new_axes(ax=None, figsize: tuple[float, float] = FIGSIZE):
    """``ax`` if given, else the axes of a new constrained-layout figure of size ``figsize``."""
    if ax is not None:
        return ax
    _, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def show(ax=None) -> None:
    """Show the current figure (``plt.show()``); ``ax`` is accepted for call-site symmetry."""
    pyplot().show()


def finish_delta_axes(ax, logy: bool, title: str):
    """Labels, scale, title, grid and legend of a ``delta(eps)`` plot; returns ``ax``."""
    ax.set(xlabel=r"central $\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def delta_label(delta: float, fmt: str = "g") -> str:
    """``10^{-6}`` for a power of ten, else ``delta`` formatted with ``fmt`` (LaTeX labels)."""
    log_delta = math.log10(delta)
    return f"10^{{{log_delta:.0f}}}" if log_delta.is_integer() else format(delta, fmt)
