"""Figure 1 (hierarchy of decomposition bounds): every arrow is an inequality the book proves and
names with its section, the frame of general clone decompositions claims no order among its
members, the invalid stronger clone has no arrow, and the figure draws.

The numbers behind the redrawing (issue #23, error 1): for 5-RR, eps0 = 2, n = 8, eps = 0.75 the
general clone decomposition that shares nothing (t = 0 in Chapter 4's exercise) gives 0.463,
ABOVE the standard clone's 0.386, so no arrow may claim "any decomposition <= standard clone";
and true divergence <= blanket <= every decomposition's bound.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ampbook import hierarchy

pytest.importorskip("matplotlib")


def _partial_blanket(R, t):
    from amp.baselines.general_clone import GeneralCloneDecomposition
    c = t * R.min(axis=0)
    beta = 1 - c.sum()
    return GeneralCloneDecomposition(R[0], R[1], c, beta, np.eye(R.shape[1]), (R - c) / beta, P=R)


def test_relations_name_boxes_point_down_and_name_the_section():
    for small, large, reason in hierarchy.RELATIONS:
        assert small in hierarchy.HIERARCHY and large in hierarchy.HIERARCHY
        assert hierarchy.HIERARCHY[small][1][1] > hierarchy.HIERARCHY[large][1][1]
        assert re.search(r"§\d\.\d", reason), reason
    reasons = {(s, l): r for s, l, r in hierarchy.RELATIONS}
    assert reasons[("shuffled", "blanket")] == "Theorem 5, §3.2"
    assert reasons[("blanket", "general")] == "Theorem 3, §4.2"


def test_no_order_claimed_between_decompositions():
    # members sit inside the frame and no arrow starts or ends at one of them
    x0, y0, x1, y1 = hierarchy.FRAME
    assert set(hierarchy.MEMBERS) == {"clone", "fourpoint"}
    for key in hierarchy.MEMBERS:
        x, y = hierarchy.HIERARCHY[key][1]
        assert x0 < x < x1 and y0 < y < y1
        assert all(key not in (s, l) for s, l, _ in hierarchy.RELATIONS)
    assert all(l != "general" or s == "blanket" for s, l, _ in hierarchy.RELATIONS)
    assert all(s != "general" for s, _, _ in hierarchy.RELATIONS)


def test_no_bare_theorem_numbers_in_labels():
    texts = [lab for lab, _, _ in hierarchy.HIERARCHY.values()]
    texts += [r for _, _, r in hierarchy.RELATIONS] + [hierarchy.LEGEND]
    for text in texts:
        assert not re.search(r"\bThms?\b|Lemma 2", text), text
        for m in re.finditer(r"Theorem \d", text):
            assert re.match(r"Theorem \d, §\d\.\d", text[m.start():]), text


def test_stronger_clone_is_never_an_upper_bound():
    assert hierarchy.HIERARCHY["stronger"][2] == "invalid"
    assert all("stronger" not in (s, l) for s, l, _ in hierarchy.RELATIONS)


def test_the_numbers_behind_the_figure():
    from amp import KRR
    from amp.baselines import clone_delta
    from amp.baselines.general_clone import blanket_decomposition, standard_clone_decomposition
    from amp.oracles.ground_truth import ShuffledPair, hockey_stick

    R, n, eps = KRR(2.0, k=5).matrix(), 8, 0.75
    nothing_shared = _partial_blanket(R, 0.0).divergence(n, eps)
    standard = standard_clone_decomposition(R).divergence(n, eps)
    blanket = blanket_decomposition(R).divergence(n, eps)
    assert np.isclose(nothing_shared, hockey_stick(R[0], R[1], eps), rtol=1e-12)
    assert np.isclose(standard, clone_delta(2.0, n, eps).value, rtol=1e-9)
    assert round(nothing_shared, 3) == 0.463 and round(standard, 3) == 0.386
    assert nothing_shared > standard > blanket          # a decomposition above the standard clone
    assert round(blanket, 3) == 0.166
    # true <= blanket <= every decomposition (Theorem 5, §3.2 and Theorem 3, §4.2)
    true = ShuffledPair.from_inputs(R, 0, 1, [2] * (n - 1)).divergence(eps)
    assert true <= blanket * (1 + 1e-12)
    for t in np.linspace(0, 1, 6):
        assert blanket <= _partial_blanket(R, t).divergence(n, eps) * (1 + 1e-9) + 1e-15
    assert blanket <= standard


def test_plot_hierarchy_draws():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = hierarchy.plot_hierarchy()
    assert len(ax.texts) >= len(hierarchy.HIERARCHY) + len(hierarchy.RELATIONS)
    plt.close(ax.figure)
