"""Randomised sweep of amp's certified brackets against an independent exact oracle.

The oracle shares no code with amp's engines: for a law with a handful of atom types it
enumerates the multinomial counts of all types but one (conditional binomials, log-pmfs from
``scipy.special.gammaln``) and sums the last type in closed form with Cephes' ``bdtr``
(``E[(c + g O)_+] = c F_m(k) + g m q F_(m-1)(k-1)`` for ``g < 0``, ``k = floor(c / -g)``).
Windows of +-12 standard deviations; the accuracy is ~1e-9 relative for the deltas tested
(>= 1e-9), which is what the comparison allows.

The laws are written down here from the mechanism definitions (k-RR's blanket law of
Theorem 4; Theorem 5's laws of the paper's pair and the two backgrounds), not taken from amp.

Checks, on random (k, eps0, n, eps) with n <= 2000:
* Theorem 4: amp's upper end >= oracle, amp's lower end <= oracle (the bracket contains it);
* Theorem 5: amp's lower-bound bracket (max over laws) contains the oracle's max;
* eps(delta): amp's upper eps >= the oracle's eps (bisection on the oracle), and the lower
  bound's lower end <= the oracle's lower eps.

Usage: ``python bench/oracle_sweep.py [--cases 40] [--seed 1]``; prints every violation
(none expected) and a summary line.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy.special import bdtr, gammaln

import amp

SLACK = 1e-9          # relative comparison slack (oracle accuracy)
ABS = 1e-15


def _logbinom(k: np.ndarray, m: np.ndarray, q: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1)
               + np.where(k > 0, k * math.log(q) if q > 0 else -np.inf, 0.0)
               + np.where(m - k > 0, (m - k) * math.log1p(-q) if q < 1 else -np.inf, 0.0))
    return np.where((k >= 0) & (k <= m), out, -np.inf)


def oracle_delta(types: list[tuple[float, float, float]], n: int, eps: float) -> float:
    """``E[(G_1 + ... + G_n)_+] / n`` for atoms ``(a, b, prob)`` (the rest of the mass: G = 0)."""
    w = math.exp(eps)
    g = np.array([a - w * b for a, b, _ in types])
    p = np.array([pr for _, _, pr in types], dtype=float)
    nz = g != 0                     # atoms equal to 0 join the mass of G = 0
    g, p = g[nz], p[nz]
    if g.size == 0:
        return 0.0
    neg = np.flatnonzero(g < 0)
    if neg.size == 0:
        raise ValueError("the oracle needs one atom type with g < 0")
    last = int(neg[np.argmax(p[neg])])
    order = [j for j in range(g.size) if j != last]
    # combos: arrays of log-prob, partial sum, remaining users, remaining mass
    lp = np.zeros(1)
    c = np.zeros(1)
    m = np.full(1, n, dtype=np.int64)
    mass = np.ones(1)
    for j in order:
        q = np.minimum(p[j] / mass, 1.0)
        mu = m * q
        sd = np.sqrt(np.maximum(m * q * (1 - q), 0.0))
        lo = np.maximum(np.floor(mu - 12 * sd - 5), 0).astype(np.int64)
        hi = np.minimum(np.ceil(mu + 12 * sd + 5), m).astype(np.int64)
        cnt = hi - lo + 1
        rep = np.repeat(np.arange(lp.size), cnt)
        kk = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt) + lo[rep]
        lpk = np.concatenate([_logbinom(np.arange(lo[i], hi[i] + 1), m[i], float(q[i]))
                              for i in range(lp.size)])
        lp = lp[rep] + lpk
        c = c[rep] + g[j] * kk
        m = m[rep] - kk
        mass = mass[rep] - p[j]
        keep = lp > lp.max() - 80
        lp, c, m, mass = lp[keep], c[keep], m[keep], mass[keep]
    q = np.clip(p[last] / mass, 0.0, 1.0)
    gl = g[last]
    kstar = np.floor(c / -gl)
    kstar = np.where(c < 0, -1, kstar)
    kstar = np.minimum(kstar, m)
    with np.errstate(invalid="ignore"):
        F = np.where(kstar >= 0, bdtr(np.maximum(kstar, 0), m, q), 0.0)
        F1 = np.where(kstar >= 1, bdtr(np.maximum(kstar - 1, 0), np.maximum(m - 1, 0), q), 0.0)
    val = np.maximum(c * F + gl * m * q * F1, 0.0)
    return float(np.dot(np.exp(lp), val)) / n


def krr_upper(k: int, E: float):
    p = 1 / (E + k - 1)
    out = [(E, 1.0, p), (1.0, E, p)]
    if k > 2:
        out.append((1.0, 1.0, (k - 2) * p))
    return [out]


def krr_lower(k: int, E: float):
    p = 1 / (E + k - 1)
    laws = []
    rest = [(1.0, 1.0, (k - 3) * p)] if k > 3 else []
    if k >= 3:
        laws.append([(1 / E, 1 / E, E * p), (E, 1.0, p), (1.0, E, p)] + rest)
    rest2 = [(1.0, 1.0, (k - 2) * p)] if k > 2 else []
    laws.append([(1.0, 1 / E, E * p), (1.0, E, p)] + rest2)          # x2 = x0
    laws.append([(1 / E, 1.0, E * p), (E, 1.0, p)] + rest2)          # x2 = x1
    return laws


def oracle(laws, n, eps):
    return max(oracle_delta(L, n, eps) for L in laws)


def oracle_eps(laws, n, delta, eps_hi):
    lo, hi = 0.0, eps_hi
    if oracle(laws, n, 0.0) <= delta:
        return 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if oracle(laws, n, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * hi:
            break
    return lo, hi


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    bad = 0
    checks = 0
    t0 = time.time()
    for case in range(a.cases):
        k = int(rng.choice([2, 3, 4, 5, 10, 30, 100, 1000]))
        eps0 = float(np.exp(rng.uniform(math.log(0.05), math.log(8.0))))
        n = int(np.exp(rng.uniform(math.log(2), math.log(2000))))
        E = math.exp(eps0)
        mech = amp.KRR(eps0, k=k)
        for bound, laws in (("upper", krr_upper(k, E)), ("lower", krr_lower(k, E))):
            eps = float(rng.uniform(0, eps0))
            exact = oracle(laws, n, eps)
            b = amp.delta(mech, n, eps, bound=bound)
            checks += 1
            ok = b.lower <= exact * (1 + SLACK) + ABS and b.upper >= exact * (1 - SLACK) - ABS
            if not ok:
                bad += 1
                print(f"VIOLATION delta {bound}: k={k} eps0={eps0!r} n={n} eps={eps!r}: "
                      f"amp [{b.lower!r}, {b.upper!r}] oracle {exact!r}", flush=True)
            d0 = exact if 1e-9 < exact < 0.5 else 10 ** rng.uniform(-8, -3)
            try:
                e = amp.epsilon(mech, n, d0, bound=bound)
            except amp.AmpError as exc:
                print(f"  refused eps {bound} k={k} eps0={eps0:g} n={n} delta={d0:g}: {exc}")
                continue
            ol = oracle_eps(laws, n, d0, eps0)
            olo, ohi = (ol, ol) if isinstance(ol, float) else ol
            checks += 1
            tol = 1e-7 * max(ohi, 1e-12)
            if bound == "upper" and e.upper < olo - tol:
                bad += 1
                print(f"VIOLATION eps upper: k={k} eps0={eps0!r} n={n} delta={d0!r}: amp "
                      f"{e.upper!r} < oracle [{olo!r}, {ohi!r}]", flush=True)
            if bound == "lower" and e.lower > ohi + tol:
                bad += 1
                print(f"VIOLATION eps lower: k={k} eps0={eps0!r} n={n} delta={d0!r}: amp "
                      f"{e.lower!r} > oracle [{olo!r}, {ohi!r}]", flush=True)
        if case % 10 == 9:
            print(f"  {case + 1} cases, {checks} checks, {bad} violations, "
                  f"{time.time() - t0:.0f} s", flush=True)
    print(f"oracle sweep: {checks} checks, {bad} violations ({time.time() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
