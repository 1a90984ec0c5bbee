"""The one reader of scipy's private names: Boost's binomial ufuncs.

``scipy.stats.binom.pmf`` and ``.sf`` call the Boost ufuncs ``scipy.special._ufuncs._binom_pmf``
and ``_binom_sf``; called directly they give the same values without importing
``scipy.stats`` (~0.5-1 s) or its per-call argument handling
(:mod:`amp.backends.structured.binomial` handles the support). They are private to scipy, so
every use goes through this module, as every use of dp-accounting's private attributes goes
through :mod:`amp.rounds.adapter`: a scipy release that renames one fails in
:func:`check_internals` (``tests/test_scipy_adapter.py``), by name.
"""

from __future__ import annotations

from amp.core.lazy import lazy

__all__ = ["binom_pmf", "binom_sf", "check_internals", "PRIVATE_UFUNCS"]

#: The private attributes of ``scipy.special._ufuncs`` that amp calls.
PRIVATE_UFUNCS = ("_binom_pmf", "_binom_sf")
_ufuncs = lazy("scipy.special._ufuncs")


def binom_pmf(k, n, p):
    """Boost's ``P(Bin(n, p) = k)``, element-wise (the ufunc ``scipy.stats.binom.pmf`` calls)."""
    return _ufuncs._binom_pmf(k, n, p)


def binom_sf(k, n, p):
    """Boost's ``P(Bin(n, p) > k)``, element-wise (the ufunc ``scipy.stats.binom.sf`` calls)."""
    return _ufuncs._binom_sf(k, n, p)


def check_internals(names: tuple[str, ...] = PRIVATE_UFUNCS) -> None:
    """:class:`RuntimeError` naming the first of ``names`` the installed scipy lacks."""
    import scipy
    import scipy.special._ufuncs as ufuncs
    for name in names:
        if not callable(getattr(ufuncs, name, None)):
            raise RuntimeError(f"scipy {scipy.__version__}: scipy.special._ufuncs has no "
                               f"ufunc {name!r}, which amp.core.scipy_adapter calls (the "
                               f"requirements pin the scipy it was written against)")
