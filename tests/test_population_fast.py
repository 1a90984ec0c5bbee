"""Speed changes of a population's default bound (issue 34) that must not change a number: the
victim curve's bins read as arrays give the very brackets of the list-based loop they replaced,
and a count law's atom floor is computed only on the paths that use it."""

from __future__ import annotations

import numpy as np
import pytest

import amp
import amp.backends.dispatch as D
from amp.backends.dispatch import LawDelta
from amp.backends.population_upper import (COARSE_LEVELS, LEVELS, MAX_POINTS, SMALL_WINDOW,
                                           victim_curves)
from amp.core.floats import atom_floor
from amp.core.result import Bound


def _list_loop(c, eps: float, tol: float, abs_tol: float) -> tuple[float, float, int, int]:
    """The bins of :meth:`VictimCurve.delta` as they were computed before (Python lists of
    each count's bracket, read again at every split): the reference for the array version."""
    size = c.pmf.size
    ftol = max(0.25 * tol, 1e-9)
    F: dict[int, Bound] = {}

    def at(i: int) -> Bound:
        b = F.get(i)
        if b is None:
            b = F[i] = c.f(c.off + 1 + i).delta_for_search(eps, ftol, 0.5 * abs_tol)
        return b

    if size <= SMALL_WINDOW:
        starts = list(range(size + 1))
    else:
        levels = COARSE_LEVELS if tol >= 0.05 else LEVELS
        idx = np.searchsorted(c.cdf, np.asarray(levels) * c.cdf[-1])
        starts = sorted({0, size, *(int(min(max(i, 1), size - 1)) for i in idx)})
    while True:
        s = np.asarray(starts)
        mass = np.add.reduceat(c.pmf, s[:-1])
        single = np.diff(s) == 1
        fu = np.array([at(int(i)).upper for i in s[:-1]])
        fl = np.array([at(int(i)).lower if one else at(int(j)).lower
                       for i, j, one in zip(s[:-1], s[1:], single)])
        upper = min(1.0, float(np.sum(mass * fu)) * (1 + c.rel) + c.out)
        lower = max(0.0, float(np.sum(mass * fl)) * (1 - c.rel))
        fu_next = np.array([at(int(j)).upper for j in s[1:]])
        w = np.where(single, 0.0, mass * np.maximum(fu - fu_next, 0.0))
        if (upper <= abs_tol or upper - lower <= tol * upper
                or float(w.sum()) <= 0.1 * tol * upper or len(F) >= MAX_POINTS):
            break
        k = int(np.argmax(w))
        before = float(c.cdf[s[k] - 1]) if s[k] > 0 else 0.0
        j = int(np.searchsorted(c.cdf, before + 0.5 * mass[k]))
        starts = sorted(set(starts) | {min(max(j, int(s[k]) + 1), int(s[k + 1]) - 1)})
    return min(lower, upper), upper, len(F), len(starts) - 1


@pytest.mark.parametrize("n, eps, tol", [(100, 0.9, 2e-3),          # a short window
                                         (2000, 0.5, 0.05),         # coarse bins
                                         (2000, 0.5, 1e-3)])        # refined bins
def test_victim_bins_as_arrays_same_bracket(n, eps, tol):
    pop = amp.Population([(n // 2, amp.KRR(1.0, k=4)), (n // 2, amp.KRR(3.0, k=4))])
    fast = victim_curves(pop)
    ref = victim_curves(pop)          # fresh curves: no count law shared with `fast`
    assert len(fast) == len(ref) >= 2
    for c, r in zip(fast, ref):
        b = c.delta(eps, tol, 1e-16)
        lo, hi, counts, bins = _list_loop(r, eps, tol, 1e-16)
        assert (b.lower, b.upper) == (lo, hi)          # bit for bit
        assert (b.details["counts_evaluated"], b.details["bins"]) == (counts, bins)


def test_structured_count_law_skips_the_unused_atom_floor(monkeypatch):
    calls = []

    def counted(*args, **kw):
        calls.append(args)
        return atom_floor(*args, **kw)

    monkeypatch.setattr(D, "atom_floor", counted)
    law = amp.KRR(2.0, k=10).gparv_laws()[0]
    ld = LawDelta(law, 3000)
    b = ld.delta(0.1)
    assert ld.precise_brackets and b.method == "structured"
    assert calls == []                  # the structured path certifies its own floor
    # a path that widens by the floor still gets it, the same as computed up front
    ex = LawDelta(law, 3, "exact")
    e = ex.delta(0.4)
    assert len(calls) == 1
    g, p = law.atoms(0.4)
    noise = 16 * amp.core.floats.U * law.magnitudes(0.4)
    assert e.details["floor"] == atom_floor(g, p, noise, 3).width


def test_exact_grid_cache_same_numbers_and_bounded(monkeypatch):
    import amp.backends.structured.tables as T
    from amp.backends.structured.nuisance import Nuisance

    nu = Nuisance(3.0, 0.3, 0.2, 0.5)
    monkeypatch.setattr(T, "_GRID_CACHE", T.OrderedDict())
    monkeypatch.setattr(T, "_grid_cells", [0])
    first = [T.exact_grid(nu, m, lt) for m in (1, 7, 40, 300) for lt in (-40.0, -40.5, -80.0)]
    assert len(T._GRID_CACHE) >= 4                  # nearby tail levels share windows
    again = [T.exact_grid(nu, m, lt) for m in (1, 7, 40, 300) for lt in (-40.0, -40.5, -80.0)]
    for a, b in zip(first, again):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        assert a[2:] == b[2:]
        assert a[0] is not b[0]                     # callers get their own arrays
    # the same numbers as computing the cells afresh (no cache at all)
    monkeypatch.setattr(T, "GRID_CACHE_ENTRY", 0)
    monkeypatch.setattr(T, "_GRID_CACHE", T.OrderedDict())
    fresh = [T.exact_grid(nu, m, lt) for m in (1, 7, 40, 300) for lt in (-40.0, -40.5, -80.0)]
    assert len(T._GRID_CACHE) == 0
    for a, b in zip(first, fresh):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2:] == b[2:]
    # bounded: least recently used out first
    monkeypatch.setattr(T, "GRID_CACHE_ENTRY", 10_000)
    monkeypatch.setattr(T, "GRID_CACHE_CELLS", 5_000)
    monkeypatch.setattr(T, "_grid_cells", [0])
    for m in range(5, 80, 3):
        T.exact_grid(nu, m, -40.0)
    assert 0 < T._grid_cells[0] <= 5_000
    assert T._grid_cells[0] == sum(v[0].size for v in T._GRID_CACHE.values())


def test_exact_grid_windows_remembered_are_binom_window():
    import amp.backends.structured.tables as T
    from amp.core.tails import binom_window

    for m, q, lt in [(1, 0.3, -41.4), (57, 0.2, -41.4), (3000, 0.05, -80.0), (3000, 0.05, -80.0)]:
        assert T._window(m, q, lt) == binom_window(m, q, lt)
    assert T._window.cache_info().hits >= 1
