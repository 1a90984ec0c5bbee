"""Randomised sweep of amp's certified brackets against an independent exact oracle.

The oracle shares no code with amp's engines: for a law with a handful of atom types it
enumerates the multinomial counts of all types but one (conditional binomials, log-pmfs from
``scipy.special.gammaln``) and sums the last type in closed form with Cephes' ``bdtr``
(``E[(c + g O)_+] = c F_m(k) + g m q F_(m-1)(k-1)`` for ``g < 0``, ``k = floor(c / -g)``).
Windows of +-12 standard deviations; the accuracy is ~1e-9 relative for the deltas tested
(>= 1e-9), which is what the comparison allows.

The laws are written down here from the mechanism definitions (Theorem 4's blanket law and
Theorem 5's laws of the paper's pair and the two backgrounds, for k-RR and for the Table 1
forms of RAPPOR, OUE, BLH and Hadamard response), not taken from amp.

Checks, on random (mechanism, eps0, n, eps) with n <= 2000 (k-RR), n <= 1000 (bit mechanisms'
upper bound), n <= 20 (their 7-type lower law):
* Theorem 4: amp's upper end >= oracle, amp's lower end <= oracle (the bracket contains it);
* Theorem 5: amp's lower-bound bracket (max over laws) contains the oracle's max;
* eps(delta): amp's upper eps >= the oracle's eps (bisection on the oracle), and the lower
  bound's lower end <= the oracle's lower eps.

Usage: ``python bench/oracle_sweep.py [--cases 40] [--seed 1] [--method cf]``; prints every
violation (none expected) and a summary line. ``--method`` forces amp's delta engine (``cf``:
every law, k-RR's and the Table 1 ones included, through the cf inversion).
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


def bit_params(name: str, E: float) -> tuple[float, float]:
    """``(p_own, p_other)``: the chance that the bit (unary encodings) or set membership (local
    hashing with g = 2, Hadamard response) of an input is 1 in the report of that input, and
    of another input (Table 1's large-domain limit)."""
    if name == "rappor":                     # each bit kept w.p. e^(eps0/2) / (1 + e^(eps0/2))
        q = 1 / (1 + math.sqrt(E))
        return 1 - q, q
    if name == "oue":                        # own bit 1 w.p. 1/2, others w.p. 1/(e^eps0 + 1)
        return 0.5, 1 / (E + 1)
    return E / (E + 1), 0.5                  # blh (g = 2) and hr: own set w.p. e/(e+1)


def bit_upper(name: str, E: float):
    """Theorem 4's blanket law: ratios ``E^u`` on the bits ``u`` of x0, ``E^w`` of x1; the
    blanket is the report law with the two bits at their least likely value."""
    p_own, p_oth = bit_params(name, E)
    gamma = (1 - p_own) / (1 - p_oth)        # min ratio (bit 0) times the base law
    out = []
    for u in (0, 1):
        for w in (0, 1):
            pr = (p_oth if u else 1 - p_oth) * (p_oth if w else 1 - p_oth) * gamma
            out.append((E ** u, E ** w, pr))
    return [out]


def bit_lower(name: str, E: float):
    """Theorem 5's laws: y ~ R(x2) with bits (u0, u1, u2) of x0, x1, x2; the paper's pair
    (x2 a third input), then x2 = x0 and x2 = x1."""
    p_own, p_oth = bit_params(name, E)
    B = lambda u, pr: pr if u else 1 - pr                       # noqa: E731
    paper = [(E ** (u0 - u2), E ** (u1 - u2), B(u0, p_oth) * B(u1, p_oth) * B(u2, p_own))
             for u0 in (0, 1) for u1 in (0, 1) for u2 in (0, 1)]
    bg0 = [(1.0, E ** (u1 - u0), B(u0, p_own) * B(u1, p_oth)) for u0 in (0, 1) for u1 in (0, 1)]
    bg1 = [(E ** (u0 - u1), 1.0, B(u1, p_own) * B(u0, p_oth)) for u0 in (0, 1) for u1 in (0, 1)]
    return [paper, bg0, bg1]


def merged(types):
    """Equal atoms merged (fewer types to enumerate)."""
    out: dict = {}
    for a, b, pr in types:
        key = (round(a, 12), round(b, 12))
        out[key] = (a, b, out.get(key, (a, b, 0.0))[2] + pr)
    return list(out.values())


def oracle(laws, n, eps):
    return max(oracle_delta(merged(L), n, eps) for L in laws)


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
    ap.add_argument("--method", default="auto", choices=["auto", "structured", "cf", "fft",
                                                          "exact"],
                    help="amp's delta engine (e.g. cf: every law through the cf inversion)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    bad = 0
    checks = 0
    t0 = time.time()
    for case in range(a.cases):
        k = int(rng.choice([2, 3, 4, 5, 10, 30, 100, 1000, 0, 0, 0, 0]))
        eps0 = float(np.exp(rng.uniform(math.log(0.05), math.log(8.0))))
        E = math.exp(eps0)
        if k:
            name = f"{k}-RR"
            n = int(np.exp(rng.uniform(math.log(2), math.log(2000))))
            mech = amp.KRR(eps0, k=k)
            sides = (("upper", krr_upper(k, E)), ("lower", krr_lower(k, E)))
        else:
            name = str(rng.choice(["rappor", "oue", "blh", "hr"]))
            mech = {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH,
                    "hr": amp.HadamardResponse}[name](eps0)
            n = int(np.exp(rng.uniform(math.log(2), math.log(1000))))
            # the 7-type lower law is enumerated over 6 types: small n only
            sides = (("upper", bit_upper(name, E)),
                     ("lower", bit_lower(name, E))) if n <= 20 else (
                ("upper", bit_upper(name, E)),)
        for bound, laws in sides:
            eps = float(rng.uniform(0, eps0))
            exact = oracle(laws, n, eps)
            try:
                b = amp.delta(mech, n, eps, bound=bound, method=a.method)
            except amp.AmpError as exc:              # a refusal is reported, not a violation
                print(f"  refused delta {bound} {name} eps0={eps0:g} n={n} eps={eps:g}: {exc}")
                continue
            checks += 1
            ok = b.lower <= exact * (1 + SLACK) + ABS and b.upper >= exact * (1 - SLACK) - ABS
            if not ok:
                bad += 1
                print(f"VIOLATION delta {bound}: {name} eps0={eps0!r} n={n} eps={eps!r}: "
                      f"amp [{b.lower!r}, {b.upper!r}] oracle {exact!r}", flush=True)
            d0 = exact if 1e-9 < exact < 0.5 else 10 ** rng.uniform(-8, -3)
            try:
                e = amp.epsilon(mech, n, d0, bound=bound, method=a.method)
            except amp.AmpError as exc:
                print(f"  refused eps {bound} {name} eps0={eps0:g} n={n} delta={d0:g}: {exc}")
                continue
            ol = oracle_eps(laws, n, d0, eps0)
            olo, ohi = (ol, ol) if isinstance(ol, float) else ol
            checks += 1
            tol = 1e-7 * max(ohi, 1e-12)
            if bound == "upper" and e.upper < olo - tol:
                bad += 1
                print(f"VIOLATION eps upper: {name} eps0={eps0!r} n={n} delta={d0!r}: amp "
                      f"{e.upper!r} < oracle [{olo!r}, {ohi!r}]", flush=True)
            if bound == "lower" and e.lower > ohi + tol:
                bad += 1
                print(f"VIOLATION eps lower: {name} eps0={eps0!r} n={n} delta={d0!r}: amp "
                      f"{e.lower!r} > oracle [{olo!r}, {ohi!r}]", flush=True)
        if case % 10 == 9:
            print(f"  {case + 1} cases, {checks} checks, {bad} violations, "
                  f"{time.time() - t0:.0f} s", flush=True)
    print(f"oracle sweep: {checks} checks, {bad} violations ({time.time() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
