#!/usr/bin/env python
"""Build the static calculator's table: certified pairs (eps_i, delta_i) per (mechanism, eps0, n).

The static book has no kernel, so chapter 10's static calculator reads a table that ``amp``
computed here. For each Table 1 mechanism, each ``eps0`` of a small grid and each ``n`` of a
grid from 1e2 to 1e9, one profile ``prof = amp.profile(mechanism, n)`` (Theorem 4's optimal
decomposition bound) is asked for the certified ``delta`` at the points ``eps_i`` of a global
geometric eps lattice (ratio 10^(1/67) ~ 1.035), covering ``[eps(1e-4)/1.035, eps(1e-12)*1.035]``
of that row (when ``eps(1e-4) = 0``, down to ``eps(1e-12)/30``), plus ``eps = 0``.

What is stored, and why every stored pair is valid (``delta(eps_i) <= delta_i``):

* ``eps_i`` is a 4-significant-digit decimal (the lattice ``ceil4(10**(k/67))``, listed once in
  the table); ``delta`` is computed at exactly ``float(eps_i)``, the same double JavaScript parses.
* ``delta_i = 10**(-q_i/300)`` with ``q_i`` the largest integer with ``10**(-q_i/300) >=
  upper * (1 + 1e-12)`` (``q_code``; the margin covers the floating-point error of
  ``10**(-q/300)`` in any implementation), where ``upper`` is the upper end of amp's certified
  bracket ``prof.delta(eps_i, rel_tol=1e-2)`` (``1e-4`` inside ``STEEP_WINDOWS``): rounded UP.
  Rows computed before 2026-12-02 used ``floor(-300 log10(upper)) - 1`` (a margin of 0.77% to
  1.5%) and keep those codes.
* Along a row, ``q_i`` is replaced by its running maximum (``delta_i`` by the running minimum of
  the stored deltas at smaller eps): valid because Theorem 4's ``delta(eps) = E[(sum a - e^eps
  sum b)_+]/...`` with ``b >= 0`` is non-increasing in ``eps``. A point amp cannot certify
  (``NumericalError`` at rel_tol 1e-2 and 1e-1) therefore inherits its predecessor's delta (or
  ``delta = 1``, always valid); nothing is guessed.
* ``q`` is clipped to ``[0, 3899]`` (``delta`` between 1 and ~1.03e-13, below the page's smallest
  delta 1e-12): clipping lowers ``q``, so it only raises the stored delta.

The page answers, per row, with the first point ``i`` whose ``delta_i <= delta``: ``0`` when
that is ``(0, delta_0)``, else the eps where the chord between points ``i - 1`` and ``i``
(in ``x = e^eps``) reaches ``delta``, rounded up (``row_answer``: Theorem 4's delta is convex in
``x``, so it lies below the chord), never above ``eps0``. It takes the smallest answer over the
rows with grid ``n <= n`` (the bound is non-increasing in ``n``: chapter 10's blanket argument,
tested in tests/test_calculator_table.py).

Encoding (table.js, ``"layout": "sparse"``): ``rows[mech][eps0]`` lists the computed rows,
each ``[n, k0, q_zero, "q..."]``: ``k0`` the lattice index of the first point, ``q_zero`` the
code of ``delta(0)``, then the codes along the lattice (``"codes": "diff"``): the first as two
base-64 characters (``q = 64 * c1 + c2``), each next one as its increase ``d >= 0`` over the
one before (the codes never decrease along a row): one character for ``d < 63``, else ``_``
and two characters.
Readers (:func:`inflate`, ``inflate`` in calculator.js) rebuild the grid ``n`` (every row's n)
and the dense ``rows[mech][eps0][i]`` (``null`` where that n has no row).

Work is checkpointed (one JSON line per row, ``artifacts/calc_pairs.jsonl``), ordered so the most
valuable rows come first (``priority``): a coarse n grid over all of 1e2..1e9, then 20 rows per
decade up to 1e7, then denser rows above 1e7. Run it in the background with one worker, stop it
at any time, and assemble what is there with ``--assemble-only``.

Usage::

    nice -n 10 .venv/bin/python scripts/build_calculator_table.py --compute \
        > artifacts/calc_pairs.log 2>&1 &
    .venv/bin/python scripts/build_calculator_table.py --assemble-only
"""

from __future__ import annotations

import argparse
import bisect
import datetime as _dt
import functools
import json
import math
import os
import signal
import sys
import time
import zlib
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from repo_git import git_output  # noqa: E402
OUT = REPO / "book" / "_static" / "calculator" / "table.js"
CHECKPOINT = REPO / "artifacts" / "calc_pairs.jsonl"

#: The mechanisms (Table 1 forms). ``same_as``: identical law in Table 1 (HR's row is BLH's).
MECHANISMS = [
    {"id": "krr3", "label": "3-RR (k-randomized response, k = 3)", "cli": "--mechanism krr --k 3"},
    {"id": "krr10", "label": "10-RR (k-randomized response, k = 10)", "cli": "--mechanism krr --k 10"},
    {"id": "krr100", "label": "100-RR (k-randomized response, k = 100)",
     "cli": "--mechanism krr --k 100"},
    {"id": "rappor", "label": "RAPPOR (Table 1 form)", "cli": "--mechanism rappor"},
    {"id": "oue", "label": "OUE (Table 1 form)", "cli": "--mechanism oue"},
    {"id": "blh", "label": "BLH (Table 1 form)", "cli": "--mechanism blh"},
    {"id": "hr", "label": "Hadamard response (Table 1 form, same row as BLH)",
     "cli": "--mechanism hadamard", "same_as": "blh"},
]
EPS0 = [1.0, 2.0, 4.0, 8.0]
DELTA_RANGE = (1e-12, 1e-4)      # the page answers delta in this range
EPS_PER_DECADE = 67              # lattice ratio 10^(1/67) = 1.0350
N_PER_DECADE = 20                # n lattice 10^(j/20), 3 significant digits
Q_PER_DECADE = 300               # delta_i = 10^(-q/300)
Q_MAX = 64 * 64 - 1 - 196        # 3899: delta ~1.03e-13 < 1e-12
REL_TOLS = (1e-2, 1e-1)          # tried in this order for each delta(eps_i)
#: inside STEEP_WINDOWS: delta is nearly flat in eps there, so 1% of slack in a stored delta
#: moves eps(delta) by 10% or more; those rows store amp's upper end at rel_tol 1e-4
REL_TOLS_STEEP = (1e-4, 1e-2, 1e-1)
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
N_MIN_EXP, N_MAX_EXP = 2, 9
LARGE_N = 10**7                  # above: the lattice range stops at eps(1e-12)/10
#: where eps(delta) falls steeply with n: Theorem 4's delta(eps) has a near-flat stretch there
#: (3-RR at eps0 = 8, n = 26000: ~1.5e-4 for eps from 3 to 5.5), so eps(delta) drops where that
#: stretch crosses delta (eps(1e-4) = 3.54 at n = 27400, 3.10 at 27425, 2.79 at 27500).  The
#: refinement there places rows at any whole n (down to one user apart) instead of 3
#: significant digits and 0.5% apart. (eps0, n_lo, n_hi), both ends grid rows.
STEEP_WINDOWS = [(8.0, 20_000, 100_000), (4.0, 398, 2_000)]
GUESS_N = 10**6                  # above: the range is walked from a neighbour's (guess_range)
REFINE_RATIO = 1.075             # consecutive rows whose answers differ more get a row between
REFINE_RATIO_STEEP = 1.06        # the same inside STEEP_WINDOWS (each row's own slack is larger)
OLD_CHECKPOINT = REPO / "artifacts" / "calc_table.jsonl"   # the first table's cells


class RowTimeout(Exception):
    """A row took longer than ``--row-timeout``."""


def make_mechanism(mid: str, eps0: float):
    import amp
    if mid.startswith("krr"):
        return amp.KRR(eps0, k=int(mid[3:]))
    return {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH,
            "hr": amp.HadamardResponse}[mid](eps0)


def n_at(j: int) -> int:
    """The n lattice: 10^(j/20) rounded to 3 significant digits (j = 40 .. 180)."""
    x = 10.0 ** (j / N_PER_DECADE)
    e = max(math.floor(math.log10(x)) - 2, 0)
    return int(round(x / 10 ** e) * 10 ** e)


def eps_at(k: int) -> str:
    """The eps lattice point k: 10^(k/67) rounded UP to 4 significant digits, as a string."""
    d = Decimal(10) ** (Decimal(k) / EPS_PER_DECADE)
    q = Decimal(1).scaleb(d.adjusted() - 3)
    return f"{(d / q).to_integral_value(rounding=ROUND_CEILING) * q:.3e}"


#: relative margin of a stored delta over amp's certified upper end: covers the float error of
#: ``10^(-q/300)`` in any implementation (a few ulp, ~1e-15) by far
Q_MARGIN = 1e-12


def q_code(upper: float) -> int:
    """The stored code of a delta upper value: the largest ``q`` with ``10^(-q/300) >= upper *
    (1 + Q_MARGIN)`` (clipped to ``[0, Q_MAX]``, which only raises the stored delta).

    Tables before 2026-12-02 used ``floor(-300 log10 upper) - 1`` (a margin of 0.77% to 1.5%);
    their rows keep those codes (valid, a little looser)."""
    if upper <= 0:
        return Q_MAX
    target = upper * (1 + Q_MARGIN)
    q = math.floor(-Q_PER_DECADE * math.log10(target))
    while q > 0 and q_delta(q) < target:
        q -= 1
    while q_delta(q + 1) >= target:
        q += 1
    return min(max(q, 0), Q_MAX)


def q_delta(q: int) -> float:
    """The delta a code stands for (what the page computes)."""
    return 10.0 ** (-q / Q_PER_DECADE)


def priority() -> list[int]:
    """n lattice indices (j, n = 10^(j/20)) in the order the rows are computed.

    First the rows above 1e7 at half decades (nothing else covers them: 1e8, 1e9, 3.16e8,
    3.16e7), then 20 rows per decade up to 1e6 (10 per decade first: the cheap rows), then
    1e6..1e7, then denser rows above 1e7. Rows <= 1e7 of the first table (10 per decade to 1e6, 2 per decade to 1e7, pairs at
    delta = 1 and 3 x 10^-k) are merged in meanwhile (see ``old_pairs``).
    """
    lo, mid, hi = N_MIN_EXP * N_PER_DECADE, 7 * N_PER_DECADE, N_MAX_EXP * N_PER_DECADE
    order: list[int] = []

    def add(js):
        for j in js:
            if j not in order:
                order.append(j)
    add([160, 180, 170, 150])                          # 1e8, 1e9, 3.16e8, 3.16e7
    add(range(lo, 6 * N_PER_DECADE + 1, 2))            # 10 per decade up to 1e6 (cheap)
    add(range(lo, 6 * N_PER_DECADE + 1))               # 20 per decade up to 1e6
    add(range(6 * N_PER_DECADE, mid + 1, 2))           # 10 per decade 1e6..1e7
    add(range(6 * N_PER_DECADE, mid + 1))              # 20 per decade 1e6..1e7
    add(range(mid, hi + 1, N_PER_DECADE // 4))         # 4 per decade above
    add(range(mid, hi + 1, N_PER_DECADE // 10))
    add(range(mid, hi + 1))
    return order


def in_steep_window(eps0: float, n: int) -> bool:
    return any(eps0 == w0 and lo <= n <= hi for w0, lo, hi in STEEP_WINDOWS)


def _delta_upper(prof, eps: float, rel_tols: tuple = REL_TOLS
                 ) -> tuple[float | None, float | None, str | None]:
    import amp
    msg = None
    for rt in rel_tols:
        try:
            b = prof.delta(eps, rel_tol=rt)
        except amp.NumericalError as exc:
            msg = str(exc)
            continue
        if b.certified and b.bound == "upper" and math.isfinite(b.upper) and b.upper >= 0:
            return b.upper, rt, None
        msg = f"not a certified upper value: {b!r}"
    return None, None, msg


def compute_row(mid: str, eps0: float, n: int,
                guess: tuple[float, float] | None = None) -> dict:
    """One (mechanism, eps0, n): the lattice range, then delta's certified upper end there.

    The range runs from about ``eps(1e-4)`` to ``eps(1e-12)`` (the page's deltas).  Without a
    ``guess`` it comes from two ``epsilon_for`` searches; with ``guess = (lo, hi)`` (a
    neighbouring row's range scaled to this n) the lattice is walked instead: up from ``hi``
    until the certified delta is at most 1e-12 (or eps0 is reached), down from ``lo`` until it
    is at least 1e-4 (or the floor ``hi / 10`` or ``/ 30``).  Either way only the range moves:
    every stored value is a certified upper end, and a too-narrow range only costs the page
    a larger (valid) answer.
    """
    import amp
    t0 = time.process_time()
    prof = amp.profile(make_mechanism(mid, eps0), n)
    k_eps0 = math.ceil(EPS_PER_DECADE * math.log10(eps0))
    # rows above 1e7: down to eps(1e-12)/10 at most (below 1e7: /30). Every lattice point is
    # computed (the first rows above 1e7 took every third, marked "skipped": a skipped point
    # inherits its predecessor's delta, valid; --redo-skipped recomputes such rows)
    floor_div = 10 if n > LARGE_N else 30
    rel_tols = REL_TOLS_STEEP if in_steep_window(eps0, n) else REL_TOLS
    memo: dict[int, tuple] = {}

    def at(k: int):
        if k not in memo:
            memo[k] = _delta_upper(prof, float(eps_at(k)), rel_tols)
        return memo[k][0]

    if guess is None:
        # a search amp cannot finish widens the range instead (eps0 at the top, hi/30 below)
        try:
            hi = amp.epsilon_for(prof, DELTA_RANGE[0], rel_tol=1e-2).upper
        except amp.NumericalError:
            hi = eps0
        try:
            lo = amp.epsilon_for(prof, DELTA_RANGE[1], rel_tol=1e-2).lower
        except amp.NumericalError:
            lo = 0.0
    else:
        lo, hi = guess
    top = math.ceil(EPS_PER_DECADE * math.log10(max(hi, 1e-300) * 1.035))
    top = min(top, k_eps0)             # eps0 itself is always valid: nothing above is needed
    if guess is not None:
        while top < k_eps0 and (at(top) is None or at(top) > DELTA_RANGE[0]):
            top += 1
        hi = float(eps_at(top))
    floor_k = math.floor(EPS_PER_DECADE * math.log10(hi / floor_div))
    if lo > 0:
        bot = max(math.floor(EPS_PER_DECADE * math.log10(lo / 1.035)), floor_k)
    else:
        bot = floor_k
    if guess is not None:
        while bot > floor_k and at(bot) is not None and at(bot) < DELTA_RANGE[1]:
            bot -= 1
        lo = float(eps_at(bot))
    ks = list(range(min(bot, top), top + 1))
    uppers, tols, reasons = [], [], {}
    for k in ks:
        at(k)                                   # once per point (the walk may have done it)
        u, rt, msg = memo[k]
        uppers.append(u)
        tols.append(rt)
        if msg:
            reasons[str(k)] = msg
    u0, rt0, msg0 = _delta_upper(prof, 0.0, rel_tols)
    return {"mech": mid, "eps0": eps0, "n": n, "k0": ks[0], "uppers": uppers, "tols": tols,
            "delta0": u0, "tol0": rt0, "reasons": reasons, "msg0": msg0,
            "eps_search": [lo, hi], "range_from": "searches" if guess is None else "walk",
            "cpu": round(time.process_time() - t0, 3)}


def guess_range(cells: dict, mid: str, eps0: float, n: int) -> tuple[float, float] | None:
    """The lattice range of the computed row of (mid, eps0) with the largest n' < n, scaled by
    ``sqrt(n'/n)`` (eps ~ n^-1/2 at large n); None when there is none with ``hi > 0``."""
    best = None
    for (m, e0, n2), c in cells.items():
        if m == mid and e0 == eps0 and n2 < n and c["eps_search"][1] > 0:
            if best is None or n2 > best[0]:
                best = (n2, c["eps_search"])
    if best is None:
        return None
    f = math.sqrt(best[0] / n)
    return best[1][0] * f, best[1][1] * f


def lattice_up(eps: float) -> int:
    """The smallest lattice index k with float(eps_at(k)) >= eps (eps > 0)."""
    k = math.floor(EPS_PER_DECADE * math.log10(eps)) - 1
    while float(eps_at(k)) < eps:
        k += 1
    return k


def old_pairs(path: Path = OLD_CHECKPOINT) -> dict:
    """The first table's cells as pairs: ``{(mech, eps0, n): [(eps, delta), ...]}``.

    Each cell of that table is amp's certified upper value ``eps`` of ``eps(delta)`` at a grid
    delta (Theorem 4's delta at ``eps`` is <= delta): a valid pair as it is. ``eps = 0`` means
    ``delta(0) <= delta``.
    """
    out: dict = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        c = json.loads(line)
        for d, v in zip(c["deltas"], c["values"]):
            if v is not None and math.isfinite(v) and 0 <= v < c["eps0"]:
                out.setdefault((c["mech"], c["eps0"], c["n"]), []).append((v, d))
    return out


def row_codes(c: dict | None, old: list | None) -> tuple[int, int, list[int]]:
    """(k0, q_zero, codes) of one row from the computed cell and/or the first table's pairs.

    Per lattice point the largest code (smallest delta) any valid pair at or below it gives,
    then the running maximum along eps (the module docstring says why both are valid).
    """
    best: dict[int, int] = {}
    q0 = 0
    if c is not None:
        for k, u in zip(range(c["k0"], c["k0"] + len(c["uppers"])), c["uppers"]):
            if u is not None:
                best[k] = max(best.get(k, 0), q_code(u))
        if c["delta0"] is not None:
            q0 = q_code(c["delta0"])
    for eps, d in old or ():
        if eps == 0:
            q0 = max(q0, q_code(d))
        else:
            k = lattice_up(eps)
            best[k] = max(best.get(k, 0), q_code(d))
    k0 = c["k0"] if c is not None else min(best)
    if best:
        k0 = min(k0, min(best))
    k1 = max(best) if best else k0
    qs, run = [], 0
    for k in range(k0, k1 + 1):
        run = max(run, best.get(k, 0))
        qs.append(run)
    return k0, q0, qs


def encode_row(c: dict | None, old: list | None = None) -> tuple[list, dict]:
    """``[k0, q_zero, "q..."]`` (see the module docstring)."""
    k0, q0, qs = row_codes(c, old)
    # drop trailing points that add nothing (same code as the point before)
    while len(qs) > 1 and qs[-1] == qs[-2]:
        qs.pop()
    skipped = sum(u is None for u in c["uppers"]) if c is not None else 0
    return [k0, q0, encode_codes(qs)], {"points": len(qs), "skipped": skipped}


def encode_codes(qs: list[int]) -> str:
    """The codes of one row as text (``"codes": "diff"``, the module docstring)."""
    assert qs and all(0 <= q <= Q_MAX for q in qs) and qs == sorted(qs)
    out = [ALPHABET[qs[0] // 64] + ALPHABET[qs[0] % 64]]
    for a, b in zip(qs, qs[1:]):
        d = b - a
        out.append(ALPHABET[d] if d < 63 else "_" + ALPHABET[d // 64] + ALPHABET[d % 64])
    return "".join(out)


def decode_codes(s: str, codes: str = "diff") -> list[int]:
    """The inverse of :func:`encode_codes`; ``codes="abs"``: two characters per code (the
    layout of tables written before the diff form)."""
    return list(_decode_codes(s, codes))


@functools.lru_cache(maxsize=None)
def _decode_codes(s: str, codes: str) -> tuple[int, ...]:
    """:func:`decode_codes`, cached: the lookup mirror decodes every row below n per answer."""
    ix = ALPHABET.index
    if codes == "abs":
        return tuple(ix(s[i]) * 64 + ix(s[i + 1]) for i in range(0, len(s), 2))
    if codes != "diff":
        raise ValueError(f"unknown code layout {codes!r}")
    qs, i = [ix(s[0]) * 64 + ix(s[1])], 2
    while i < len(s):
        if s[i] == "_":
            d, i = ix(s[i + 1]) * 64 + ix(s[i + 2]), i + 3
        else:
            d, i = ix(s[i]), i + 1
        qs.append(qs[-1] + d)
    return tuple(qs)


def decode_row(row: list) -> tuple[int, int, list[int]]:
    k0, q0, s = row
    return k0, q0, decode_codes(s)


_Q_DELTA = [q_delta(q) for q in range(Q_MAX + 1)]
_LATTICE_FLOATS: dict = {}


def _lattice_floats(lat: list) -> list[float]:
    """``[float(x) for x in lat]``, cached per lattice list (the lookup reads it per row)."""
    got = _LATTICE_FLOATS.get(id(lat))
    if got is None or got[0] is not lat:
        got = _LATTICE_FLOATS[id(lat)] = (lat, [float(x) for x in lat])
    return got[1]


def ceil4(x: float) -> float:
    """``x > 0`` rounded UP to 4 significant digits (as a double; the same operations in
    calculator.js: the scale ``10^(3-e)`` is an exact integer for ``x < 1000``)."""
    e = math.floor(math.log10(x))
    s = 10.0 ** (3 - e)
    if x * s >= 10000:                 # log10 a hair off at a power of ten
        s /= 10
    elif x * s < 1000:
        s *= 10
    return math.ceil(x * s) / s


#: relative margin added to a chord's eps before it is rounded up (covers the float error of
#: the few operations behind it, ~1e-15, by far)
CHORD_MARGIN = 1e-9


def row_answer(table: dict, row: list, eps0: float, delta: float, chord: bool = True) -> dict:
    """One row's answer at ``delta`` (mirrored in calculator.js; the tests compare the two).

    The row's certified points are ``(0, delta_0)`` and ``(eps_i, delta_i)`` along the lattice.
    With ``i`` the first point whose ``delta_i <= delta``: ``0`` if that is ``(0, delta_0)``;
    otherwise the eps where the chord between points ``i - 1`` and ``i`` crosses ``delta``, in
    the variable ``x = e^eps``: Theorem 4's ``delta(eps) = E[(A - e^eps B)_+] / n`` (``A, B``
    free of eps) is convex in ``x``, so it lies below that chord, which lies below the chord of
    the stored upper values. The chord's eps is rounded up to 4 significant digits (after a
    relative margin ``CHORD_MARGIN``), never above ``eps_i`` (itself valid); an answer at or
    above ``eps0`` is ``eps0`` (always valid). ``chord=False``: the lattice point ``eps_i`` itself
    (the page before 2026-12-02; bench/bench_calculator.py --before compares the two).
    """
    k0, q0 = row[0], row[1]
    qs = _decode_codes(row[2], table.get("codes", "abs"))
    d0 = _Q_DELTA[q0]
    if delta >= d0:
        return {"eps": 0.0, "k": None, "kind": "zero", "pairDelta": d0}
    lat = _lattice_floats(table["eps_lattice"])
    off = k0 - table["eps_lattice_k0"]
    # the first point with delta_i <= delta (the codes never decrease: bisect on them)
    idx = bisect.bisect_left(qs, True, key=lambda q: _Q_DELTA[q] <= delta)
    if idx < len(qs):
        e_prev, d_prev = (0.0, d0) if idx == 0 else (lat[off + idx - 1], _Q_DELTA[qs[idx - 1]])
        d, e = _Q_DELTA[qs[idx]], lat[off + idx]
        kind, v = "pair", e
        if d < delta and chord:
            t = (d_prev - delta) / (d_prev - d)
            y1, y2 = math.expm1(e_prev), math.expm1(e)
            c = ceil4(math.log1p(y1 + t * (y2 - y1)) * (1 + CHORD_MARGIN))
            if c < e:
                kind, v = "chord", c
        if v < eps0:
            return {"eps": v, "k": k0 + idx, "kind": kind, "pairDelta": d,
                    "prevEps": e_prev, "prevDelta": d_prev}
    return {"eps": eps0, "k": None, "kind": "eps0", "pairDelta": 0.0}


def answer(table: dict, mid: str, eps0: float, n: int, delta: float,
           chord: bool = True) -> dict:
    """The page's lookup (mirrored in calculator.js; tests compare the two): the smallest
    answer over the rows with grid n <= n (each is valid), the largest n among ties."""
    src = next(m.get("same_as", m["id"]) for m in table["mechanisms"] if m["id"] == mid)
    rows = table["rows"][src][f"{eps0:g}"]
    best = None
    for i, g in enumerate(table["n"]):
        if g <= n and rows[i] is not None:
            a = row_answer(table, rows[i], eps0, delta, chord)
            if best is None or a["eps"] <= best["eps"]:
                best = {**a, "i": i, "gridN": g}
    return best if best is not None else {"status": "refused"}


#: the page's promise: its answer is within this factor of amp's answer at the exact inputs
#: wherever :func:`answer_cost` says ``promise`` (tests/test_calculator_table.py checks it on
#: random questions over the page's whole range, re-certified by amp)
PROMISE = 1.10
#: the promise needs the answers of your row and of the next row up within this factor (the
#: builder's own refinement criterion, REFINE_RATIO): the rest of the 10% is each row's slack
PROMISE_NEIGHBOURS = REFINE_RATIO


def row_lower_estimate(table: dict, row: list, delta: float, eps0: float, n: int) -> float:
    """A lower estimate of the exact eps at ``delta`` for the row ``n`` (``rowLowerEstimate``
    in calculator.js): with ``k`` the largest lattice point whose stored delta, shrunk by 3%
    (1% in the steep windows: the build's bracket width and the code's rounding), is still
    above ``delta``, so that the exact eps exceeds ``eps_k``: ``eps_k`` in the steep windows,
    elsewhere the lattice point below it (one step back covers the first table's pairs); 0 if
    none."""
    k0 = row[0]
    qs = _decode_codes(row[2], table.get("codes", "abs"))
    tight = in_steep_window(eps0, n)
    shrink = 1.01 if tight else 1.03
    best = None
    for idx, q in enumerate(qs):
        if _Q_DELTA[q] / shrink > delta:
            best = k0 + idx
    if best is None:
        return 0.0
    lat = _lattice_floats(table["eps_lattice"])
    if tight:
        return lat[best - table["eps_lattice_k0"]]
    if best - 1 < table["eps_lattice_k0"]:
        return 0.0
    return lat[best - 1 - table["eps_lattice_k0"]]


def from_zero(a: dict) -> bool:
    """Whether a row's answer is a chord from ``(0, delta(0))``: the asked delta lies between
    ``delta(0)`` and the row's first stored pair, a stretch where the table holds nothing and
    the chord can lie far above the exact bound (47% above amp in issue #23's example)."""
    return a["kind"] == "chord" and a.get("prevEps") == 0.0


def answer_cost(table: dict, mid: str, eps0: float, n: int, delta: float,
                ans: dict | None = None) -> dict:
    """What rounding to the table costs, as the page reports it (mirrors ``answer`` in
    calculator.js). The exact eps at ``n`` is at least the exact eps at the next grid row up
    (or at ``n`` itself when it is a grid row).

    * ``cost``: ``answer / low - 1`` with ``low`` that row's :func:`row_lower_estimate`
      (``inf`` when ``low = 0`` and the answer is positive; ``None`` above the last row);
    * ``promise``: the page states its answer is within :data:`PROMISE` of amp's: below the
      table's last row, neither your row's answer nor the next row's is a chord from
      ``eps = 0`` (:func:`from_zero`), and the two answers are within
      :data:`PROMISE_NEIGHBOURS` (answers of 0 and eps0 included). It fails near ``eps = 0``
      at large n, where ``delta(0)`` crosses your delta between two rows.
    """
    a = ans if ans is not None else answer(table, mid, eps0, n, delta)
    src = next(m.get("same_as", m["id"]) for m in table["mechanisms"] if m["id"] == mid)
    rows = table["rows"][src][f"{eps0:g}"]
    ns = table["n"]
    have = [i for i, r in enumerate(rows) if r is not None]
    last = max(i for i in have if ns[i] <= n)
    nxt = last if ns[last] == n else next((i for i in have if i > last), None)
    if nxt is None:
        return {"cost": None, "lowEps": None, "nextN": None, "nextEps": None, "promise": False}
    low = row_lower_estimate(table, rows[nxt], delta, eps0, ns[nxt])
    if low > 0:
        cost = max(a["eps"] / low - 1, 0.0)
    else:
        cost = math.inf if a["eps"] > 0 else 0.0
    b = row_answer(table, rows[nxt], eps0, delta)
    promise = (a["eps"] == 0.0 or (not from_zero(a) and not from_zero(b) and b["eps"] > 0
                                   and a["eps"] <= PROMISE_NEIGHBOURS * b["eps"]))
    return {"cost": cost, "lowEps": low, "nextN": ns[nxt], "nextEps": b["eps"],
            "promise": promise}


def round3(x: float) -> int:
    """``x`` rounded to 3 significant digits (the n grid's precision)."""
    e = max(math.floor(math.log10(x)) - 2, 0)
    return int(round(x / 10 ** e) * 10 ** e)


def refine_candidates(table: dict, ratio: float = REFINE_RATIO, near_zero: float = 2e-3,
                      n_max: float = math.inf, n_deltas: int = 200,
                      fine_ratio: float = REFINE_RATIO_STEEP) -> list[tuple[str, float, int]]:
    """Rows to add where consecutive rows of the table answer too differently.

    A question with ``n`` just below the grid point ``n_b`` is answered by the row ``n_a`` below;
    amp's own answer there is at least about row ``n_b``'s (the chord answers of
    :func:`row_answer` sit close above the exact values). So the page's cost is at most about
    ``ans_a / ans_b``.  Where ``ans_a / ans_b`` exceeds ``ratio`` at some delta of the page's
    range, a row at the geometric midpoint (3 significant digits) is proposed.  Not counted:
    ``ans_b = 0`` or ``ans_a - ans_b <= near_zero`` (near ``eps = 0`` no n grid bounds the
    relative cost, since ``delta(0)`` crosses the target between two rows; the page says so),
    rows closer than 0.5% in n, and midpoints above ``n_max``.  Inside ``STEEP_WINDOWS``
    (where eps falls steeply with n) the threshold is ``fine_ratio`` (each row's own slack is larger there), the midpoint is any
    whole n (``isqrt(n_a n_b)``) and rows may be as close as one user apart; rounds of this
    split the gap until the answers of neighbours are close.
    """
    out = []
    deltas = page_deltas(n_deltas)
    for m in table["mechanisms"]:
        if "same_as" in m:
            continue
        for e0 in table["eps0"]:
            rows = table["rows"][m["id"]][f"{e0:g}"]
            have = [(g, r) for g, r in zip(table["n"], rows) if r is not None]
            for (na, ra), (nb, rb) in zip(have, have[1:]):
                r = ratio
                if in_steep_window(e0, na) and in_steep_window(e0, nb):
                    mid = math.isqrt(na * nb)          # any whole n: eps falls steeply here
                    r = fine_ratio
                else:
                    mid = round3(math.sqrt(na * nb))
                    if nb / na < 1.005:
                        continue
                if not na < mid < nb or mid > n_max:
                    continue
                worst = worst_ratio(table, e0, ra, rb, deltas, near_zero)
                if worst is not None and worst[0] > r:
                    out.append((m["id"], e0, mid))
    return out


def page_deltas(k: int = 200) -> list[float]:
    """``k`` deltas log-spaced over the page's range ``[1e-12, 1e-4]``, largest first."""
    return [10 ** (-4 - 8 * i / (k - 1)) for i in range(k)]


def worst_ratio(table: dict, eps0: float, row_a: list, row_b: list, deltas: list[float],
                near_zero: float = 2e-3) -> tuple[float, float] | None:
    """The largest ``ans_a / ans_b`` of two rows' answers over ``deltas``, and its delta;
    ``None`` if no delta counts (``ans_b = 0`` or ``ans_a - ans_b <= near_zero`` at all)."""
    best = None
    for d in deltas:
        a = row_answer(table, row_a, eps0, d)["eps"]
        b = row_answer(table, row_b, eps0, d)["eps"]
        if b > 0 and a - b > near_zero and (best is None or a / b > best[0]):
            best = (a / b, d)
    return best


def load_checkpoint(path: Path) -> dict:
    cells = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                c = json.loads(line)
                cells[(c["mech"], c["eps0"], c["n"])] = c
    return cells


def read_table(path: Path) -> dict | None:
    """The stored table at ``path`` (table.js, sparse layout as written), or None."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index("=") + 1:].strip().rstrip(";"))


def shipped_rows(stored: dict | None) -> dict:
    """``{(mech, eps0, n): [k0, q_zero, "q..."]}``: the encoded rows of a stored table.

    Each was a valid row when it was written (its provenance is in that table's ``meta``), so
    ``assemble`` can keep it as it is: ``--keep-shipped`` adds new rows to the shipped table
    without the checkpoint its rows came from."""
    if not stored:
        return {}
    layout = stored.get("codes", "abs")
    return {(src, float(e0), r[0]):
            [r[1], r[2], r[3] if layout == "diff" else encode_codes(decode_codes(r[3], layout))]
            for src, per in stored["rows"].items() for e0, rows in per.items() for r in rows}


def assemble(cells: dict, meta: dict, old: dict | None = None,
             base: dict | None = None) -> tuple[dict, dict]:
    """The table from computed ``cells`` (and the first table's pairs ``old``); ``base`` holds
    encoded rows (``shipped_rows``) kept where no cell of the same (mech, eps0, n) exists."""
    old, base = old or {}, base or {}
    srcs = [m["id"] for m in MECHANISMS if "same_as" not in m]
    ns = sorted({n for (_, _, n) in cells} | {n for (_, _, n) in old}
                | {n for (_, _, n) in base})
    rows, stats = {}, {"points": 0, "skipped": 0, "rows": 0, "missing_rows": 0,
                       "rows_with_first_table_pairs": 0, "rows_only_first_table": 0}
    reasons = {}
    for src in srcs:
        per = rows.setdefault(src, {})
        for e0 in EPS0:
            lst = []
            for n in ns:
                c, o = cells.get((src, e0, n)), old.get((src, e0, n))
                if c is None and not o and (src, e0, n) in base:
                    lst.append(base[(src, e0, n)])
                    stats["rows"] += 1
                    stats["points"] += len(decode_codes(base[(src, e0, n)][2]))
                    stats["rows_kept"] = stats.get("rows_kept", 0) + 1
                    continue
                if c is None and not o:
                    lst.append(None)
                    stats["missing_rows"] += 1
                    continue
                r, st = encode_row(c, o)
                lst.append(r)
                stats["rows"] += 1
                stats["points"] += st["points"]
                stats["skipped"] += st["skipped"]
                stats["rows_with_first_table_pairs"] += bool(o)
                stats["rows_only_first_table"] += c is None
                if c is not None and (c["reasons"] or c["msg0"]):
                    reasons[f"{src}|{e0:g}|{n}"] = {"points": sorted(int(k) for k in c["reasons"]),
                                                     "delta0": c["msg0"]}
            per[f"{e0:g}"] = lst
    ks = [r[0] + len(r[2]) // 2 for per in rows.values() for lst in per.values()
          for r in lst if r is not None]
    kmin = min(r[0] for per in rows.values() for lst in per.values() for r in lst if r)
    kmax = max(ks)
    meta = {**meta, **{"rows": stats["rows"], "pairs": stats["points"],
                       "points_inheriting_predecessor": stats["skipped"],
                       "rows_not_computed": stats["missing_rows"],
                       "rows_with_first_table_pairs": stats["rows_with_first_table_pairs"],
                       "rows_only_first_table": stats["rows_only_first_table"]}}
    table = {"meta": meta, "mechanisms": MECHANISMS, "eps0": EPS0, "n": ns,
             "delta_range": list(DELTA_RANGE), "q_per_decade": Q_PER_DECADE,
             "alphabet": ALPHABET, "codes": "diff", "eps_lattice_k0": kmin,
             "eps_lattice": [eps_at(k) for k in range(kmin, kmax)],
             "rows": rows, "uncertified": reasons}
    return table, stats


def sparse(table: dict) -> dict:
    """The table as stored in table.js: ``rows[mech][eps0]`` lists only the computed rows, each
    ``[n, k0, q_zero, "q..."]`` (no global ``n`` grid, no ``null`` slots: most grid values are
    refinement rows of one (mechanism, eps0)). :func:`inflate` (and ``inflate`` in
    calculator.js) restores the in-memory form that :func:`answer` reads."""
    out = {k: v for k, v in table.items() if k not in ("n", "rows")}
    out["layout"] = "sparse"
    out["rows"] = {src: {e0: [[g] + r for g, r in zip(table["n"], rows) if r is not None]
                         for e0, rows in per.items()}
                   for src, per in table["rows"].items()}
    return out


def inflate(table: dict) -> dict:
    """The in-memory form of a stored table: the grid ``n`` (every n of any row, ascending) and
    ``rows[mech][eps0][i]`` = ``[k0, q_zero, "q..."]`` or ``None`` for grid value ``n[i]``."""
    if table.get("layout") != "sparse":
        return table
    ns = sorted({r[0] for per in table["rows"].values() for rows in per.values() for r in rows})
    at = {g: i for i, g in enumerate(ns)}
    rows = {}
    for src, per in table["rows"].items():
        rows[src] = {}
        for e0, lst in per.items():
            dense = [None] * len(ns)
            for r in lst:
                dense[at[r[0]]] = r[1:]
            rows[src][e0] = dense
    out = {k: v for k, v in table.items() if k not in ("rows", "layout")}
    out.update(n=ns, rows=rows)
    return out


def to_js(obj: dict) -> str:
    return ("/* Generated by scripts/build_calculator_table.py: certified (eps, delta) pairs "
            "computed by amp. Do not edit. */\nwindow.AMP_CALC_TABLE = "
            + json.dumps(sparse(obj), separators=(",", ":")) + ";\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compute", action="store_true", help="compute missing rows (resumes)")
    ap.add_argument("--assemble-only", action="store_true", help="write table.js and exit")
    ap.add_argument("--stop-at", default=None,
                    help="UTC time HH:MM after which no new row is started")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    ap.add_argument("--skip", nargs="*", default=[], metavar="MECH:EPS0:N",
                    help="rows not to compute (e.g. one amp cannot finish in the budget)")
    ap.add_argument("--slow-last", action="store_true",
                    help="compute the slow rows (RAPPOR/OUE/BLH at eps0 <= 2) after the others")
    ap.add_argument("--skip-reason", default="",
                    help="why the --skip rows are missing (stored in the table's provenance)")
    ap.add_argument("--no-first-table", action="store_true",
                    help="do not merge the first table's pairs (artifacts/calc_table.jsonl)")
    ap.add_argument("--note", default="", help="free provenance note stored in the table")
    ap.add_argument("--also-read", nargs="*", type=Path, default=[], metavar="JSONL",
                    help="more checkpoint files (e.g. of --part runs); later files win")
    ap.add_argument("--part", default=None, metavar="I/N",
                    help="compute only every N-th row of the to-do list, from the I-th (0-based):"
                         " run N processes with their own --checkpoint, then --also-read them")
    ap.add_argument("--redo-skipped", action="store_true",
                    help="recompute rows that skipped lattice points (the first rows above 1e7)")
    ap.add_argument("--refine", action="store_true",
                    help="then add rows between consecutive rows whose answers differ by more "
                         f"than {REFINE_RATIO}x (see refine_candidates), in rounds")
    ap.add_argument("--refine-rounds", type=int, default=6)
    ap.add_argument("--refine-max-n", type=float, default=1e9,
                    help="no refinement row above this n")
    ap.add_argument("--row-timeout", type=float, default=0,
                    help="give up a row after this many seconds (0: never); it is reported")
    ap.add_argument("--recompute-steep", action="store_true",
                    help="recompute the kept rows inside STEEP_WINDOWS (at REL_TOLS_STEEP; "
                         "a computed row replaces the kept one, a failed one stays kept)")
    ap.add_argument("--keep-shipped", action="store_true",
                    help="keep the rows of the table already at --out (see shipped_rows) and "
                         "add the computed ones; its provenance is carried over")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    def _timeout(signum, frame):
        raise RowTimeout(f"no result within --row-timeout {args.row_timeout:g} s")
    signal.signal(signal.SIGALRM, _timeout)
    import amp

    stored = read_table(args.out) if args.keep_shipped else None
    if args.keep_shipped and not stored:
        ap.error(f"--keep-shipped: no table at {args.out} to keep")
    base = shipped_rows(stored)
    cells = load_checkpoint(args.checkpoint)
    for extra in args.also_read:
        cells.update(load_checkpoint(extra))
    if args.compute:
        commit = git_output(REPO, "rev-parse", "HEAD")
        srcs = [m["id"] for m in MECHANISMS if "same_as" not in m]
        skip = {(m, float(e), int(float(n))) for m, e, n in
                (x.split(":") for x in args.skip)}
        todo = [(m, e0, n_at(j)) for j in priority() for m in srcs for e0 in EPS0
                if (m, e0, n_at(j)) not in cells and (m, e0, n_at(j)) not in skip
                and (m, e0, n_at(j)) not in base]
        if args.slow_last:
            # measured: RAPPOR/OUE/BLH at eps0 <= 2 cost 5-30 s per row near n = 1e4 (amp's
            # structured backend takes ~1 s at some eps there), other rows ~0.1-2 s: do the
            # cheap rows first (a stable sort keeps the priority order within each group)
            todo.sort(key=lambda t: t[0] in ("rappor", "oue", "blh") and t[1] <= 2)
        if args.recompute_steep:
            todo += sorted((key for key in base if in_steep_window(key[1], key[2])
                            and key not in cells and key not in skip), key=lambda t: t[2])
        if args.redo_skipped:
            todo += [key for key, c in sorted(cells.items(), key=lambda kv: kv[0][2])
                     if "skipped" in c["tols"] and key not in skip]
        i, k_parts = (int(x) for x in args.part.split("/")) if args.part else (0, 1)
        # split by a hash of the row, not by list position: the parts start at slightly
        # different times and may see different lists (rows another part already finished)
        todo = [t for t in todo if zlib.crc32(repr(t).encode()) % k_parts == i]
        args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.time()

        def run(todo: list) -> bool:
            """Compute the rows of ``todo`` (appending to the checkpoint); False at stop time."""
            print(f"{len(todo)} rows to compute ({len(cells)} known)", flush=True)
            with open(args.checkpoint, "a") as ck:
                for k, (m, e0, n) in enumerate(todo, 1):
                    if args.stop_at and (_dt.datetime.now(_dt.timezone.utc).strftime("%H:%M")
                                         >= args.stop_at):
                        print("stop time reached", flush=True)
                        return False
                    guess = guess_range(cells, m, e0, n) if n > GUESS_N else None
                    if args.row_timeout:
                        signal.alarm(int(args.row_timeout))
                    try:
                        c = compute_row(m, e0, n, guess=guess)
                    except (amp.AmpError, RowTimeout) as exc:   # nothing stored: no guess
                        print(f"[{k}/{len(todo)}] {m} eps0={e0:g} n={n}: row skipped: {exc}",
                              flush=True)
                        continue
                    finally:
                        signal.alarm(0)
                    c["git"] = commit
                    c["amp_version"] = amp.__version__
                    cells[(m, e0, n)] = c
                    ck.write(json.dumps(c) + "\n")
                    ck.flush()
                    print(f"[{k}/{len(todo)} {time.time() - t0:7.1f}s] {m} eps0={e0:g} n={n}: "
                          f"{len(c['uppers'])} pts, cpu {c['cpu']:.1f}s, "
                          f"{len(c['reasons'])} uncertified", flush=True)
            return True

        going = run(todo)
        for rnd in range(args.refine_rounds if args.refine else 0):
            if not going:
                break
            for extra in args.also_read:               # rows the other parts computed
                cells.update(load_checkpoint(extra))
            table, _ = assemble(cells, {}, {} if args.no_first_table else old_pairs(), base)
            # parts split the candidates by a hash of the row (not by list position: the
            # parts may see slightly different lists)
            todo = [t for t in refine_candidates(table, n_max=args.refine_max_n)
                    if t not in cells and t not in skip and t not in base
                    and zlib.crc32(repr(t).encode()) % k_parts == i]
            print(f"refinement round {rnd + 1}: {len(todo)} rows", flush=True)
            if not todo:
                break
            going = run(todo)
    if not (args.compute or args.assemble_only):
        ap.error("give --compute and/or --assemble-only")
    commits = sorted({c.get("git", "unknown") for c in cells.values()})
    meta = {
        "amp_version": amp.__version__,
        "git_commits": commits,
        "command": "python scripts/build_calculator_table.py --compute; then --assemble-only",
        "note": args.note,
        "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "delta_rel_tol": REL_TOLS[0], "delta_rel_tol_fallbacks": list(REL_TOLS[1:]),
        "delta_rel_tol_steep_windows": list(REL_TOLS_STEEP), "steep_windows": STEEP_WINDOWS,
        "bound": "upper (Theorem 4, optimal decomposition): amp.profile(m, n).delta(eps).upper",
        "stored": "eps_i = ceil4(10^(k/67)); delta_i = 10^(-q/300), q the largest integer with "
                  "10^(-q/300) >= upper (1 + 1e-12) (rows before 2026-12-02: q = floor(-300 log10 "
                  "upper) - 1), running min of delta along eps",
        "cpu_seconds": round(sum(c["cpu"] for c in cells.values()), 1),
    }
    if args.skip:
        meta["rows_skipped"] = [
            {"mech": m, "eps0": float(e), "n": int(float(n)), "reason": args.skip_reason}
            for m, e, n in (x.split(":") for x in args.skip)]
    old = {} if args.no_first_table else old_pairs()
    if old:
        meta["first_table"] = (
            "rows also hold the pairs (eps(delta) upper, delta) of the first table (cells at "
            "delta = 1 and 3 x 10^-k, rel_tol 1e-4; artifacts/calc_table.jsonl), computed "
            "2026-12-01 03:44-04:45 UTC at commits 75a68f4, 9e465df, 4b22cc4, e2b0215 (amp "
            "0.2.0; other sessions had uncommitted changes in amp/ meanwhile)")
    if stored:
        prev = stored["meta"]
        meta["git_commits"] = sorted(set(commits) | set(prev["git_commits"]))
        meta["cpu_seconds"] = round(meta["cpu_seconds"] + prev["cpu_seconds"], 1)
        meta["note"] = "; ".join(x for x in (prev.get("note", ""), args.note) if x)
        meta["command"] += " --keep-shipped"
        for key in ("first_table", "rows_skipped"):
            if key in prev and key not in meta:
                meta[key] = prev[key]
        # rows_with_first_table_pairs counts this assembly's merges only; the kept table's own
        # count is here (a kept row that a new cell replaced loses its first-table pairs)
        meta["kept_rows_from"] = {"date_utc": prev["date_utc"], "rows": prev["rows"],
                                  "amp_version": prev["amp_version"],
                                  "rows_with_first_table_pairs":
                                      prev.get("kept_rows_from", {}).get(
                                          "rows_with_first_table_pairs",
                                          prev.get("rows_with_first_table_pairs", 0))}
    table, stats = assemble(cells, meta, old, base)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_js(table))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} kB): {stats}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
