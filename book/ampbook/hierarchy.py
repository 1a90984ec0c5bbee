"""Figure 1 of the paper: the hierarchy of decomposition-based bounds (Section 4).

A diagram, no computation. ``HIERARCHY`` holds the boxes, ``RELATIONS`` the arrows and
``MEMBERS`` the boxes drawn inside the frame of all general clone decompositions, so the test can
check the drawing against the book:

- an arrow ``(tail, head, reason)`` means exactly "the number at the tail is at most the number at
  the head, for every randomizer, n and eps", and ``reason`` names the result that proves it with
  its section (the paper reuses theorem numbers: "Theorem 5, §3.2" is the blanket reduction);
- a box inside the frame (``MEMBERS``) is one particular general clone decomposition
  (Definition of §4.1). Being inside the frame claims NO order with the other members: the arrow
  into the frame says only that the blanket is at most each of them (Theorem 3, §4.2). An
  arbitrary decomposition can be looser than the standard clone (5-RR, eps0 = 2, n = 8,
  eps = 0.75: 0.463 for the decomposition that shares nothing, 0.386 for the standard clone) or
  tighter (the blanket itself, 0.166).

matplotlib is imported when the figure is drawn.
"""

from __future__ import annotations

from ampbook.style import new_axes

__all__ = ["HIERARCHY", "RELATIONS", "MEMBERS", "FRAME", "LEGEND", "plot_hierarchy"]

#: key -> (label, (x, y) centre in axes units, kind); kind "exact", "bound", "relax", "invalid",
#: or "frame" (the set of all general clone decompositions, drawn as a large frame)
HIERARCHY: dict[str, tuple[str, tuple[float, float], str]] = {
    "shuffled": ("true divergence of the shuffled outputs\n"
                 "$D_{e^\\varepsilon}(\\mathcal{M}_S(X^0)\\,\\|\\,\\mathcal{M}_S(X^1))$",
                 (0.40, 0.93), "exact"),
    "blanket": ("privacy blanket  $(P^B_0, P^B_1)$: itself a general clone\n"
                "decomposition (Theorem 4, §4.3), the best one;\n"
                "Algorithm 4 (§5.2) bounds it above; amp brackets it", (0.40, 0.70), "bound"),
    "general": ("every general clone decomposition  $(P^{GC}_0, P^{GC}_1)$  (§4.1)",
                (0.36, 0.26), "frame"),
    "clone": ("standard clone  $(P^C_0, P^C_1)$\n(§3.1, Feldman et al. 2021)",
              (0.19, 0.27), "bound"),
    "fourpoint": ("stronger clone, corrected\nfour-point form (§3.3)", (0.53, 0.27), "bound"),
    "relax": ("blanket relaxed by\nHoeffding / Bennett\n(Balle et al. 2019)", (0.86, 0.42), "relax"),
    "stronger": ("stronger clone, original\nreduction (§3.3):\nNOT a valid bound",
                 (0.86, 0.12), "invalid"),
}

#: the frame of all general clone decompositions: (x0, y0, x1, y1) in axes units
FRAME: tuple[float, float, float, float] = (0.01, 0.02, 0.71, 0.50)

#: (smaller, larger, reason): every arrow of the figure reads "smaller <= larger"
RELATIONS: list[tuple[str, str, str]] = [
    ("shuffled", "blanket", "Theorem 5, §3.2"),
    ("blanket", "general", "Theorem 3, §4.2"),
    ("blanket", "relax", "relaxation, §3.2"),
]

#: boxes drawn inside the frame: particular general clone decompositions, no order among them
MEMBERS: list[str] = ["clone", "fourpoint"]

LEGEND = ("arrow: the bound at its tail is at most the bound at its head (the result that proves it "
          "is written on it)\nframe: each box inside is one particular decomposition; "
          "no order is claimed among them")

_STYLE = {
    "exact": dict(fc="#f0f0f0", ec="black", ls="-"),
    "bound": dict(fc="#dbe9f6", ec="#1f4e79", ls="-"),
    "relax": dict(fc="#fbe5d6", ec="#c55a11", ls="-"),
    "invalid": dict(fc="white", ec="0.45", ls="--"),
}


def _head(key: str) -> tuple[float, float]:
    if HIERARCHY[key][2] == "frame":
        return (HIERARCHY[key][1][0], FRAME[3] + 0.005)
    x, y = HIERARCHY[key][1]
    return (x, y + 0.085)


def plot_hierarchy(ax=None):
    """Draw Figure 1 (hierarchy of decomposition-based bounds); returns ``ax``.

    Arrows point from a smaller bound to a larger one and carry the result (with its section)
    that proves the inequality. The standard clone and the corrected four-point form of the
    stronger clone are drawn inside the frame of all general clone decompositions, with no
    arrow between them or to the frame: no order between an arbitrary decomposition and the
    standard clone holds. The stronger clone's original reduction has no arrow: it is flawed
    (Section 3.3).
    """
    from matplotlib.patches import FancyBboxPatch

    ax = new_axes(ax, (7.6, 5.4))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.10, 1.02)
    ax.axis("off")
    x0, y0, x1, y1 = FRAME
    ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0.005",
                                fc="#f3f8fc", ec="#1f4e79", lw=1.2, ls="-"))
    for label, (x, y), kind in HIERARCHY.values():
        if kind == "frame":
            ax.text(x, y1 - 0.045, label, ha="center", va="center", fontsize=8.5,
                    color="#1f4e79", fontweight="bold")
            ax.text(x, y0 + 0.07, "... and every other decomposition; no order is claimed\n"
                    "among the decompositions inside this frame",
                    ha="center", va="center", fontsize=7.5, color="0.3", style="italic")
            continue
        st = _STYLE[kind]
        ax.text(x, y, label, ha="center", va="center", fontsize=8.5,
                color="0.35" if kind == "invalid" else "black",
                bbox=dict(boxstyle="round,pad=0.45", fc=st["fc"], ec=st["ec"], ls=st["ls"]))
    for small, large, reason in RELATIONS:
        xa, ya = HIERARCHY[small][1]
        xb, yb = _head(large)
        ax.annotate("", xy=(xb, yb), xytext=(xa, ya - 0.085),
                    arrowprops=dict(arrowstyle="-|>", color="0.2", lw=1.2))
        lift = 0.03 if abs(xb - xa) > 0.2 else 0.0          # keep a slanted arrow's label off it
        ax.text((xa + xb) / 2 + 0.015, (ya - 0.085 + yb) / 2 + lift, f"$\\leq$  {reason}", fontsize=8,
                ha="left", va="center", color="0.2")
    ax.text(0.5, -0.07, LEGEND, ha="center", va="center", fontsize=7.5, color="0.35")
    return ax
