"""Direct tests of amp.backends.structured.zsplit (reached otherwise only through the
structured backend's planner).

Contract: with ``Z ~ Bin(m, qZ)`` and, given ``Z = z``, ``O ~ Bin(m - z, kappa)``,
:func:`zsplit_eval` returns a certified ``(lower, upper)`` of ``g(c) = E[(c - beta (O + E Z))_+]``
per band element (row ``m = mod.m[T_idx]``), and :func:`zsplit_geometry` gives windows that cover
every row: the mass of every row outside them is at most ``tau_Z`` / ``tau_O``, and the ``O``
rows span every ``N = m - z`` with ``z`` in the ``Z`` window.
Oracle: the double sum over ``z`` and ``o`` with scipy's binomial pmf.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binom

from amp.backends.structured.zsplit import build_zsplit, zsplit_eval, zsplit_geometry


def model(ms, qZ, kappa, E, log_tau=math.log(1e-25)):
    mod = SimpleNamespace(nu=SimpleNamespace(qZ=qZ, kappa=kappa), m=np.asarray(ms, float),
                          log_tau=log_tau, E=E)
    mod.zsplit_geometry = lambda: zsplit_geometry(mod)
    return mod


def direct(m, qZ, kappa, E, beta, c):
    z = np.arange(m + 1)
    pz = binom.pmf(z, m, qZ)
    tot = 0.0
    for zi, w in zip(z, pz):
        o = np.arange(m - zi + 1)
        po = binom.pmf(o, m - zi, kappa)
        tot += w * float(np.sum(po * np.maximum(c - beta * (o + E * zi), 0.0)))
    return tot


CASES = [(list(range(40, 61)), 0.1, 0.3, 7.0, 0.5), (list(range(200, 209)), 0.02, 0.6, 20.0, 1.3)]


@pytest.mark.parametrize("ms,qZ,kappa,E,beta", CASES)
def test_eval_brackets_direct_sum(ms, qZ, kappa, E, beta):
    mod = model(ms, qZ, kappa, E)
    zs = build_zsplit(mod)
    rows = np.array([0, len(ms) // 2, len(ms) - 1])
    for frac in (0.2, 0.5, 1.0, 1.5):
        for i in rows:
            m = int(ms[i])
            mean = beta * m * (kappa * (1 - qZ) + E * qZ)
            c = np.array([frac * mean])
            lo, up = zsplit_eval(mod, zs, np.array([i]), c, np.zeros(1), beta)
            exact = direct(m, qZ, kappa, E, beta, c[0])
            assert lo[0] <= exact * (1 + 1e-9) + 1e-300
            assert exact <= up[0] * (1 + 1e-9) + 1e-300
            assert up[0] - lo[0] <= 1e-8 * max(exact, 1e-12)


@pytest.mark.parametrize("ms,qZ,kappa,E,beta", CASES)
def test_geometry_covers_every_row(ms, qZ, kappa, E, beta):
    mod = model(ms, qZ, kappa, E)
    z_lo, z_hi, o_lo, o_hi, N_min, N_max, tau_Z, tau_O = zsplit_geometry(mod)
    assert 0 <= z_lo <= z_hi and 0 <= o_lo <= o_hi and N_min <= N_max
    for m in ms:
        out_z = binom.cdf(z_lo - 1, m, qZ) + binom.sf(z_hi, m, qZ)
        assert out_z <= tau_Z * (1 + 1e-9) + 1e-300
        # every N = m - z reached from the Z window has its O row in the tables
        assert N_min <= max(m - z_hi, 0) and m - z_lo <= N_max
    for N in range(N_min, N_max + 1):
        out_o = binom.cdf(o_lo - 1, N, kappa) + binom.sf(o_hi, N, kappa)
        assert out_o <= tau_O * (1 + 1e-9) + 1e-300
    assert tau_Z < 1e-20 and tau_O < 1e-20


def test_tables_are_consistent():
    """The cumulative tables are the cumulative sums of the tabulated masses."""
    ms, qZ, kappa, E, _ = CASES[0]
    zs = build_zsplit(model(ms, qZ, kappa, E))
    np.testing.assert_allclose(zs.PZc[:, 1:], np.cumsum(zs.PZ, axis=1), rtol=1e-12)
    np.testing.assert_allclose(zs.PZcc[:, 1:], np.cumsum(zs.PZc[:, :-1], axis=1), rtol=1e-12)
    row = zs.FO.reshape(-1, zs.Wo + 1)
    for j, N in enumerate(range(zs.N_min, zs.N_min + row.shape[0])):
        want = binom.cdf(np.arange(zs.o_lo - 1, zs.o_hi + 1), N, kappa) - \
            binom.cdf(zs.o_lo - 1, N, kappa)
        np.testing.assert_allclose(row[j], want, rtol=1e-9, atol=1e-300)
