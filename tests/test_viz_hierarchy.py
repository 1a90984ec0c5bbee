"""Figure 1 (hierarchy of decomposition bounds): the drawn relations are the book's theorems,
the invalid stronger clone has no arrow, and the figure draws."""

from __future__ import annotations

import pytest

from amp.viz import hierarchy

pytest.importorskip("matplotlib")


def test_relations_name_boxes_and_point_down():
    for tight, loose, reason in hierarchy.RELATIONS:
        assert tight in hierarchy.HIERARCHY and loose in hierarchy.HIERARCHY and reason
        assert hierarchy.HIERARCHY[tight][1][1] > hierarchy.HIERARCHY[loose][1][1]


def test_stronger_clone_is_never_an_upper_bound():
    assert hierarchy.HIERARCHY["stronger"][2] == "invalid"
    assert all("stronger" not in (t, l) for t, l, _ in hierarchy.RELATIONS)


def test_plot_hierarchy_draws():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = hierarchy.plot_hierarchy()
    assert len(ax.texts) >= len(hierarchy.HIERARCHY) + len(hierarchy.RELATIONS)
    plt.close(ax.figure)
