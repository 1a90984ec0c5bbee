"""Figure 1 of the paper: the hierarchy of decomposition-based bounds (Section 4).

A diagram, no computation: boxes for the bounds, arrows labelled ``<=`` from a tighter bound to a
looser one. ``HIERARCHY`` holds the boxes and ``RELATIONS`` the arrows, so the test can check
the drawing against the text of the book (each relation is a theorem of the paper or a
relaxation of a bound); matplotlib is imported when the figure is drawn.
"""

from __future__ import annotations

from amp.viz.style import new_axes

__all__ = ["HIERARCHY", "RELATIONS", "plot_hierarchy"]

#: key -> (label, (x, y) centre in axes units, kind); kind "exact", "bound", "relax", "invalid"
HIERARCHY: dict[str, tuple[str, tuple[float, float], str]] = {
    "shuffled": ("true divergence of the\nshuffled outputs  $D(\\mathcal{M}_S(X^0)\\|\\mathcal{M}_S(X^1))$",
                 (0.5, 0.92), "exact"),
    "blanket": ("privacy blanket  $(P^B_0, P^B_1)$\n= optimal general clone (Thms 3, 4)\n"
                "computed exactly (Thm 4, Alg. 4)", (0.5, 0.64), "bound"),
    "general": ("any general clone\ndecomposition  $(P^{GC}_0, P^{GC}_1)$", (0.2, 0.36), "bound"),
    "relax": ("blanket + Hoeffding /\nBennett (Balle et al.)", (0.82, 0.36), "relax"),
    "clone": ("standard clone  $(P^C_0, P^C_1)$\n(Feldman et al. 2021)", (0.2, 0.08), "bound"),
    "stronger": ("stronger clone: flawed\nreduction, NOT a valid bound", (0.82, 0.08), "invalid"),
}

#: (tighter, looser, reason): every arrow of the figure reads "tighter <= looser"
RELATIONS: list[tuple[str, str, str]] = [
    ("shuffled", "blanket", "Lemma 2"),
    ("blanket", "general", "Theorem 3"),
    ("blanket", "relax", "relaxation"),
    ("general", "clone", "special case"),
]

_STYLE = {
    "exact": dict(fc="#f0f0f0", ec="black", ls="-"),
    "bound": dict(fc="#dbe9f6", ec="#1f4e79", ls="-"),
    "relax": dict(fc="#fbe5d6", ec="#c55a11", ls="-"),
    "invalid": dict(fc="white", ec="0.45", ls="--"),
}


def plot_hierarchy(ax=None):
    """Draw Figure 1 (hierarchy of decomposition-based bounds); returns ``ax``.

    Arrows point from a tighter bound to a looser one; the stronger clone has no arrow: its
    reduction is flawed (Section 3.3) and its corrected four-point form has no proved general
    bound.
    """
    ax = new_axes(ax, (7.2, 5.0))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.04, 1.02)
    ax.axis("off")
    for label, (x, y), kind in HIERARCHY.values():
        st = _STYLE[kind]
        ax.text(x, y, label, ha="center", va="center", fontsize=8.5,
                color="0.35" if kind == "invalid" else "black",
                bbox=dict(boxstyle="round,pad=0.45", fc=st["fc"], ec=st["ec"], ls=st["ls"]))
    for tight, loose, reason in RELATIONS:
        (x0, y0), (x1, y1) = HIERARCHY[tight][1], HIERARCHY[loose][1]
        ax.annotate("", xy=(x1, y1 + 0.085), xytext=(x0, y0 - 0.085),
                    arrowprops=dict(arrowstyle="-|>", color="0.2", lw=1.2))
        ax.text((x0 + x1) / 2 + 0.015, (y0 + y1) / 2, f"$\\leq$  {reason}", fontsize=8,
                ha="left", va="center", color="0.2")
    ax.text(0.5, -0.03, "an arrow reads: the bound at its tail is at most the bound at its head",
            ha="center", fontsize=7.5, color="0.35")
    return ax
