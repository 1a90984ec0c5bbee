"""Adversarial audit of session 14's engine changes against independent references.

Checks, on random inputs drawn with ``--seed`` (nothing in amp/ is changed; every oracle is
imported from bench/oracle_sweep.py or the tests, not rewritten here):

a. Cross-engine consistency at large n (1e4 .. 1e10): the certified brackets of the same
   question from ``method`` in auto / structured / cf / fft must intersect, for
   ``amp.delta(mech, n, eps)`` and ``amp.epsilon(mech, n, delta)``; plus k-RR against the exact
   oracle of bench/oracle_sweep.py (``oracle``, ``krr_upper``) at n in 1e4 .. 1e7 (the
   structured engine's chunks of 2^17, its T-window ends skipped under a Chernoff bound).
b. Self-consistency of every eps bracket of a., checked with a delta engine other than the one
   that produced it: ``delta(r.upper).lower <= delta (1 + 1e-9)`` and
   ``delta(r.lower).upper >= delta (1 - 1e-9)``.
c. bench/oracle_sweep.py run as is (its exact oracle) on fresh seeds, auto and ``--method cf``.
d. Rounds: ``amp.delta/epsilon(..., rounds=T)`` at n 20..300, T 2..20 against the exact
   T-fold composition of the Theorem 4 pair (tests/test_rounds_points.py ``oracle_delta``, the
   pair's law written from the definitions by bench/oracle_sweep.py's ``krr_upper`` /
   ``bit_upper``, for ``sampling=q`` the masses times q plus a void (1, 1) atom of mass 1 - q;
   a lower estimate of the exact composed divergence), and with ``sampling=q`` at tiny n
   against exact composed shuffled laws (tests/test_rounds.py ``_exact_composed``).
e. Populations, mixtures and numeric mechanisms at tiny n: the brute-force tests of
   tests/test_population.py and tests/test_numeric_mechanisms.py run on fresh random cases
   (their case tables extended, the test functions called as they are).
f. The flagged-wider brackets (wider_or_raise): random matrix mechanisms' delta and eps
   (the pair search) at small n against the exact maximum over pairs, and calibrate_eps0 of
   k-RR (exact oracle, small n) and of Table 1 / square-wave families at large n (the cf
   engine at the calibrated eps0), with rel_tol at the default and out of reach.

Every amp call runs under a 60 s alarm (``--timeout``); a call that takes longer or refuses
(``AmpError``) is recorded as skipped, never as a violation; any other exception escaping amp
is an error (``ERROR [sec] ...``: not a wrong number, but not a clear error either). One line
per violation (``VIOLATION [sec] ...``), a summary per section.

Usage: ``nice python bench/audit_session14.py --seed 1414 [--cases 40] [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
import types
import warnings
from contextlib import contextmanager

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)              # this checkout's amp, not the venv's editable install

import amp  # noqa: E402
import oracle_sweep as OS  # noqa: E402

warnings.simplefilter("ignore")       # flagged-wider brackets are valid; we check their ends

TIMEOUT = 60
STATS: dict[str, list[int]] = {s: [0, 0, 0, 0] for s in "abcdef"}
# per section: checks, violations, skipped (timeout or AmpError), errors (another exception)


class Timeout(BaseException):
    """Raised by the alarm; a BaseException so that amp's own handlers cannot swallow it."""


def _alarm(signum, frame):
    raise Timeout()


signal.signal(signal.SIGALRM, _alarm)


@contextmanager
def limit(seconds: int):
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)


def call(sec: str, what: str, fn, *args, **kw):
    """``fn(*args, **kw)`` under the alarm; ``None`` (recorded as skipped) on a refusal or a
    timeout."""
    t0 = time.time()
    try:
        with limit(TIMEOUT):
            return fn(*args, **kw)
    except Timeout:
        STATS[sec][2] += 1
        print(f"  skip [{sec}] {what}: over {TIMEOUT} s", flush=True)
    except amp.AmpError as exc:
        if "method='structured' needs" in str(exc):
            return None                  # not a Table 1 shape: not applicable, not a skip
        STATS[sec][2] += 1
        print(f"  skip [{sec}] {what}: refused ({type(exc).__name__}: {str(exc)[:150]}) "
              f"{time.time() - t0:.1f}s", flush=True)
    except Exception as exc:                 # not a clear amp error: a defect, reported
        STATS[sec][3] += 1
        print(f"ERROR [{sec}] {what}: {type(exc).__name__}: {exc} (args {args!r}, {kw!r})",
              flush=True)
    return None


RATIOS: dict[str, list[float]] = {}     # amp's upper end / oracle: how sharp each check is


def sharpness(key: str) -> None:
    r = np.array(RATIOS.get(key, []))
    if r.size:
        print(f"  ({key}: amp upper / oracle over {r.size} checks: min {r.min():.10g}, "
              f"median {np.median(r):.10g}, max {r.max():.6g})", flush=True)


def check(sec: str, ok: bool, msg: str) -> None:
    STATS[sec][0] += 1
    if not ok:
        STATS[sec][1] += 1
        print(f"VIOLATION [{sec}] {msg}", flush=True)


def summary(sec: str, t0: float) -> None:
    c, v, s, e = STATS[sec]
    print(f"== section {sec}: {c} checks, {v} violations, {s} skipped, {e} errors "
          f"({time.time() - t0:.0f} s)", flush=True)


# ------------------------------------------------------------------ random inputs
def loguniform(rng, lo, hi) -> float:
    return float(np.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw_mech(rng, n: int):
    """A random mechanism (Table 1 rows, numeric ones, a Population of n users)."""
    kind = str(rng.choice(["krr", "krr", "rappor", "oue", "blh", "hr", "duchi", "pm", "sw",
                           "laplace", "population"]))
    eps0 = float(rng.uniform(0.1, 8.0))
    if kind == "krr":
        k = int(loguniform(rng, 2, 1000))
        return amp.KRR(eps0, k=k), f"KRR(eps0={eps0!r}, k={k})"
    if kind in ("rappor", "oue", "blh", "hr"):
        cls = {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH,
               "hr": amp.HadamardResponse}[kind]
        return cls(eps0), f"{cls.__name__}({eps0!r})"
    if kind == "duchi":
        return amp.Duchi(eps0), f"Duchi({eps0!r})"
    if kind == "pm":
        return amp.PiecewiseMechanism(eps0), f"PiecewiseMechanism({eps0!r})"
    if kind == "sw":
        if rng.random() < 0.5:
            return amp.SquareWave(eps0), f"SquareWave({eps0!r})"
        b = float(rng.uniform(0.05, 1.0))
        return amp.SquareWave(eps0, b=b), f"SquareWave({eps0!r}, b={b!r})"
    if kind == "laplace":
        eps0 = float(rng.uniform(0.1, 4.0))      # the cells path is slow at large eps0
        return amp.Laplace(eps0), f"Laplace({eps0!r})"
    k = int(rng.choice([3, 5, 10, 50]))
    g = int(rng.integers(2, 4))
    fr = rng.dirichlet(np.ones(g))
    sizes = [max(1, int(f * n)) for f in fr]
    sizes[0] += n - sum(sizes)
    if sizes[0] < 1:
        sizes = [n - g + 1] + [1] * (g - 1)
    e0s = [float(rng.uniform(0.1, 8.0)) for _ in range(g)]
    pop = amp.Population([(s, amp.KRR(e, k=k)) for s, e in zip(sizes, e0s)])
    rows = ", ".join(f"({s}, KRR({e!r}, k={k}))" for s, e in zip(sizes, e0s))
    return pop, f"Population([{rows}])"


def disjoint(brs: dict) -> tuple[bool, str]:
    lo_m = max(brs, key=lambda m: brs[m][0])
    hi_m = min(brs, key=lambda m: brs[m][1])
    lo, hi = brs[lo_m][0], brs[hi_m][1]
    return lo > hi * (1 + 1e-12) + 1e-300, f"{lo_m}.lower={lo!r} > {hi_m}.upper={hi!r}"


def fmt(brs: dict) -> str:
    return "; ".join(f"{m}: [{lo!r}, {hi!r}]" for m, (lo, hi) in brs.items())


# ------------------------------------------------------------------ a and b
METHODS = ("auto", "structured", "cf", "fft")


def section_ab(rng, cases: int) -> None:
    t0 = time.time()
    for case in range(cases):
        n = int(loguniform(rng, 1e4, 1e10))
        mech, desc = draw_mech(rng, n)
        if isinstance(mech, amp.Population):
            n = mech.n
        delta = loguniform(rng, 1e-14, 1e-3)
        tag = f"{desc} n={n} delta={delta!r}"
        print(f"  case a{case}: {tag}", flush=True)
        # epsilon by every engine
        eps_br = {}
        for m in METHODS:
            if m == "fft" and n > 10**5:
                continue            # slow (over 60 s at small delta) or a memory refusal
            r = call("a", f"epsilon method={m} {tag}", amp.epsilon, mech, n, delta, method=m)
            if r is not None:
                eps_br[m] = (r.lower, r.upper, r.method)
        if len(eps_br) >= 2:
            bad, why = disjoint({m: v[:2] for m, v in eps_br.items()})
            check("a", not bad, f"epsilon brackets disjoint: amp.epsilon({desc}, {n}, {delta!r},"
                  f" method=...) {why}; all: {fmt({m: v[:2] for m, v in eps_br.items()})}")
        # b: each eps bracket against a delta engine other than its own
        for m, (lo, hi, used) in eps_br.items():
            others = [x for x in ("cf", "structured", "fft", "auto") if x not in (m, used)
                      and not (x == "fft" and n > 10**6)]
            for chk in others:
                d_hi = call("b", f"delta at eps upper method={chk} {tag}", amp.delta, mech, n,
                            hi, method=chk)
                if d_hi is None:
                    continue
                check("b", d_hi.lower <= delta * (1 + 1e-9),
                      f"eps upper end too small: amp.epsilon({desc}, {n}, {delta!r}, "
                      f"method={m!r}) = [{lo!r}, {hi!r}] (engine {used}); amp.delta(..., "
                      f"{hi!r}, method={chk!r}) = [{d_hi.lower!r}, {d_hi.upper!r}] > delta")
                if lo > 0:
                    d_lo = call("b", f"delta at eps lower method={chk} {tag}", amp.delta, mech,
                                n, lo, method=chk)
                    if d_lo is not None:
                        check("b", d_lo.upper >= delta * (1 - 1e-9),
                              f"eps lower end too large: amp.epsilon({desc}, {n}, {delta!r}, "
                              f"method={m!r}) = [{lo!r}, {hi!r}] (engine {used}); "
                              f"amp.delta(..., {lo!r}, method={chk!r}) = "
                              f"[{d_lo.lower!r}, {d_lo.upper!r}] < delta")
                break                       # one other engine per eps bracket
        if isinstance(mech, amp.Population):
            r = call("b", f"epsilon poisson-binomial {tag}", amp.epsilon, mech, n, delta,
                     method="poisson-binomial")
            if r is not None:
                d = call("b", f"pb delta at eps upper {tag}", amp.delta, mech, n, r.upper,
                         method="poisson-binomial")
                if d is not None:
                    check("b", d.lower <= delta * (1 + 1e-9),
                          f"pb eps upper end too small: {tag} eps=[{r.lower!r}, {r.upper!r}] "
                          f"delta(eps.upper)=[{d.lower!r}, {d.upper!r}]")
                if r.lower > 0:
                    d = call("b", f"pb delta at eps lower {tag}", amp.delta, mech, n, r.lower,
                             method="poisson-binomial")
                    if d is not None:
                        check("b", d.upper >= delta * (1 - 1e-9),
                              f"pb eps lower end too large: {tag} eps=[{r.lower!r}, "
                              f"{r.upper!r}] delta(eps.lower)=[{d.lower!r}, {d.upper!r}]")
                base = eps_br.get("auto")
                if base is not None:
                    check("b", r.lower <= base[1] * (1 + 1e-12),
                          f"pb eps above the common-blanket baseline: {tag} pb=[{r.lower!r}, "
                          f"{r.upper!r}] baseline=[{base[0]!r}, {base[1]!r}]")
        # delta by every engine at an eps near the answer
        ref = eps_br.get("auto") or next(iter(eps_br.values()), None)
        if ref is None or ref[1] <= 0:
            continue
        eps = ref[1] * float(rng.uniform(0.7, 1.3))
        d_br = {}
        for m in METHODS:
            if m == "fft" and n > 10**6:
                continue
            r = call("a", f"delta method={m} eps={eps!r} {tag}", amp.delta, mech, n, eps,
                     method=m)
            if r is not None:
                d_br[m] = (r.lower, r.upper)
        if len(d_br) >= 2:
            bad, why = disjoint(d_br)
            check("a", not bad, f"delta brackets disjoint: amp.delta({desc}, {n}, {eps!r}, "
                  f"method=...) {why}; all: {fmt(d_br)}")


def rr2_positive_oracle(eps0: float, n: int, eps: float, nsd: float = 11.0) -> float:
    """Exact ``delta(eps)`` of Theorem 4 for binary RR (k = 2) by sums of POSITIVE terms only.

    bench/oracle_sweep.py's closed form ``c F_m(k) + g m q F_(m-1)(k-1)`` subtracts two
    nearly equal terms (the cancellation grows like ``sqrt(n)``), and its Cephes ``bdtr`` and
    ``gammaln`` carry ~``1e-8`` relative errors at ``n ~ 1e7``: it is off by up to ~2e-4
    relative there (measured: n = 1e7, k = 2, eps0 = 1), so it is used below only at
    ``n <= 2e5``. Here, for k = 2 (blanket atoms ``(E, 1)``, ``(1, E)`` of mass
    ``p = 1/(E + 1)`` each, the rest ``G = 0``), condition on ``T = X + Y ~ Bin(n, 2p)``,
    ``X | T ~ Bin(T, 1/2)``, ``S = A X + B T`` with ``A = (E - 1)(1 + w) > 0``,
    ``B = 1 - w E < 0``; ``E[S_+] = sum_T P(T) sum_{x: Ax + BT > 0} P(x | T)(Ax + BT)``: no
    cancellation, pmfs from ``scipy.stats.binom.pmf``. Windows of ``nsd`` standard deviations
    drop positive terms only (a lower estimate, short by < 1e-25 relative)."""
    from scipy.stats import binom
    E, w = math.exp(eps0), math.exp(eps)
    p = 1 / (E + 1)
    A, B = (E - 1) * (1 + w), 1 - w * E
    mu, sd = n * 2 * p, math.sqrt(n * 2 * p * (1 - 2 * p))
    Ts = np.arange(max(0, int(mu - nsd * sd)), min(n, int(mu + nsd * sd)) + 1)
    PT = binom.pmf(Ts, n, 2 * p)
    tot = 0.0
    for t, pt in zip(Ts.tolist(), PT.tolist()):
        k = max(0, math.floor(-B * t / A) - 1)
        while A * k + B * t <= 0:
            k += 1
        hi = min(t, int(t / 2 + nsd * math.sqrt(t) / 2) + 2)
        if k > hi:
            continue
        x = np.arange(k, hi + 1)
        tot += pt * float(np.sum(binom.pmf(x, t, 0.5) * (A * x + B * t)))
    return tot / n


def section_a_oracle(rng, cases: int) -> None:
    """k-RR at large n against exact oracles: k = 2 at n in 1e4 .. 3e6 by
    :func:`rr2_positive_oracle` (slack 1e-9), k >= 3 at n in 1e4 .. 2e5 by bench/oracle_sweep's
    ``oracle`` (slack 1e-7, its accuracy there): the structured engine's large-n chunks (2^17)
    and T-window ends, and the cf inversion. Both oracles drop positive terms only (lower
    estimates), and amp's upper end is held to them; the lower end too (within the slack)."""
    t0 = time.time()
    done = 0
    tries = 0
    while done < cases and tries < 5 * cases:
        tries += 1
        k = int(rng.choice([2, 2, 2, 3, 4, 10, 100, 1000]))
        eps0 = float(rng.uniform(0.1, 8.0))
        n = int(loguniform(rng, 1e4, 3e6 if k == 2 else 2e5))
        E = math.exp(eps0)
        p = 1 / (E + k - 1)
        w1 = 24 * math.sqrt(n * p) + 10
        if k > 2 and w1 * w1 > 3e7:
            continue                       # the oracle's 2-d window would be too large
        mech = amp.KRR(eps0, k=k)
        delta = loguniform(rng, 1e-12, 1e-3)
        r = call("a", f"oracle-case epsilon KRR({eps0}, k={k}) n={n}", amp.epsilon, mech, n,
                 delta)
        if r is None or r.upper <= 0:
            continue
        eps = r.upper * float(rng.uniform(0.8, 1.2))
        t1 = time.time()
        try:
            with limit(3 * TIMEOUT):
                if k == 2:
                    exact, slack = rr2_positive_oracle(eps0, n, eps), 1e-9
                    how = f"rr2_positive_oracle({eps0!r}, {n}, {eps!r})"
                else:
                    exact, slack = OS.oracle(OS.krr_upper(k, E), n, eps), 1e-7
                    how = f"bench/oracle_sweep.oracle(krr_upper({k}, e^{eps0!r}), {n}, {eps!r})"
        except (Timeout, MemoryError):
            STATS["a"][2] += 1
            print(f"  skip [a] oracle KRR({eps0}, k={k}) n={n}: too slow", flush=True)
            continue
        done += 1
        print(f"  oracle case: KRR({eps0!r}, k={k}) n={n} eps={eps!r} exact={exact!r} "
              f"({time.time() - t1:.0f} s)", flush=True)
        tag = f"amp.delta(amp.KRR({eps0!r}, k={k}), {n}, {eps!r}"
        for m in ("auto", "structured", "cf"):
            b = call("a", f"{tag}, method={m})", amp.delta, mech, n, eps, method=m)
            if b is None:
                continue
            if exact > 0:
                RATIOS.setdefault(f"a-oracle {m}", []).append(b.upper / exact)
            check("a", b.upper >= exact * (1 - slack) - 1e-300,
                  f"{tag}, method={m!r}) = [{b.lower!r}, {b.upper!r}] upper < exact {exact!r} "
                  f"({how})")
            check("a", b.lower <= exact * (1 + slack) + 1e-300,
                  f"{tag}, method={m!r}) = [{b.lower!r}, {b.upper!r}] lower > exact {exact!r} "
                  f"({how})")
    print(f"  (a, k-RR exact oracles at large n: {done} cases, {time.time() - t0:.0f} s)",
          flush=True)
    for m in ("auto", "structured", "cf"):
        sharpness(f"a-oracle {m}")


# ------------------------------------------------------------------ c
def start_c(seed: int, quick: bool):
    runs = [["--cases", "12" if quick else "40", "--seed", str(seed)],
            ["--cases", "3" if quick else "8", "--seed", str(seed + 2), "--method", "cf"]]
    procs = []
    for args in runs:
        cmd = ["nice", sys.executable, os.path.join(ROOT, "bench", "oracle_sweep.py")] + args
        procs.append((" ".join(["python", "bench/oracle_sweep.py"] + args),
                      subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True,
                                       env={**os.environ, "PYTHONPATH": ROOT})))
    return procs


def finish_c(procs, t0: float) -> None:
    for cmd, p in procs:
        out, _ = p.communicate()
        print(f"  $ {cmd}  (exit {p.returncode})")
        for line in out.splitlines():
            if line.startswith("VIOLATION") or line.startswith("oracle sweep:") or \
                    "refused" in line:
                print(f"    {line}")
            if line.startswith("VIOLATION"):
                STATS["c"][1] += 1
                print(f"VIOLATION [c] {line}")
            if line.startswith("  refused"):
                STATS["c"][2] += 1
            if line.startswith("oracle sweep:"):
                STATS["c"][0] += int(line.split(":")[1].split("checks")[0])
    summary("c", t0)


# ------------------------------------------------------------------ d
def section_d(rng, cases: int) -> None:
    import test_rounds_points as TRP
    import test_rounds as TR
    from amp.mechanisms.subsampled import Subsampled  # noqa: F401  (the law of sampling=q)
    t0 = time.time()
    for case in range(cases):
        T = int(rng.integers(2, 21))
        kind = str(rng.choice(["krr", "krr", "rappor", "oue", "blh", "hr"]))
        eps0 = float(rng.uniform(0.3, 5.0))
        E = math.exp(eps0)
        if kind == "krr":
            k = int(rng.choice([2, 3, 5, 10, 50]))
            n = int(loguniform(rng, 30, 300 if k == 2 else 150))
            mech, types_ = amp.KRR(eps0, k=k), OS.krr_upper(k, E)[0]
            desc = f"KRR({eps0!r}, k={k})"
        else:
            n = int(loguniform(rng, 20, 45))
            cls = {"rappor": amp.RAPPOR, "oue": amp.OUE, "blh": amp.BLH,
                   "hr": amp.HadamardResponse}[kind]
            mech, types_ = cls(eps0), OS.bit_upper(kind, E)[0]
            desc = f"{cls.__name__}({eps0!r})"
        q = 1.0 if rng.random() < 0.5 else float(rng.uniform(0.05, 1.0))
        if q < 1:
            # q R + (1 - q) void: blanket atoms of mass q p, plus the void (1, 1) of mass 1 - q
            types_ = [(a_, b_, q * p_) for a_, b_, p_ in types_] + [(1.0, 1.0, 1.0 - q)]
        law = types.SimpleNamespace(a=np.array([t[0] for t in types_]),
                                    b=np.array([t[1] for t in types_]),
                                    p=np.array([t[2] for t in types_]))
        delta = loguniform(rng, 1e-9, 1e-3)
        tag = f"{desc}, n={n}, rounds={T}, sampling={q!r}"
        print(f"  case d{case}: {tag} delta={delta!r}", flush=True)
        r = call("d", f"epsilon {tag}", amp.epsilon, mech, n, delta, rounds=T, sampling=q)
        eps_d = []
        if r is not None:
            eps_d = [r.upper * float(rng.uniform(0.3, 1.0)), r.upper * float(rng.uniform(1, 1.5))]
        else:
            eps_d = [float(rng.uniform(0.2, 3.0))]
        bs = [call("d", f"delta {tag} eps={e!r}", amp.delta, mech, n, e, rounds=T, sampling=q)
              for e in eps_d]
        pts = ([r.upper] if r is not None else []) + eps_d
        try:
            with limit(4 * TIMEOUT):
                orc = TRP.oracle_delta(law, n, T, pts, step=5e-5)
        except (Timeout, MemoryError):
            STATS["d"][2] += 1
            print(f"  skip [d] oracle {tag}: too slow", flush=True)
            continue
        how = ("tests/test_rounds_points.oracle_delta(law, n, T, eps, step=5e-5), law = "
               "bench/oracle_sweep." + ("krr_upper" if kind == "krr" else f"bit_upper('{kind}')"))
        if r is not None:
            check("d", orc[0] <= delta * (1 + 1e-9),
                  f"rounds eps upper too small: amp.epsilon({desc}, {n}, {delta!r}, rounds={T}, "
                  f"sampling={q!r})"
                  f" = [{r.lower!r}, {r.upper!r}]; exact composed pair delta at eps.upper = "
                  f"{orc[0]!r} > delta ({how})")
            orc = orc[1:]
        for e, b, o in zip(eps_d, bs, orc):
            if b is None:
                continue
            if o > 0:
                RATIOS.setdefault("d", []).append(b.upper / o)
            check("d", b.upper >= o,
                  f"rounds delta upper too small: amp.delta({desc}, {n}, {e!r}, rounds={T}, "
                  f"sampling={q!r}) = "
                  f"[{b.lower!r}, {b.upper!r}] < exact composed pair {o!r} ({how})")
    # sampling=q at tiny n: exact composed shuffled laws of every tried pair (test_rounds)
    for case in range(max(2, cases // 3)):
        k = 3                                    # tests/test_rounds._pairs needs 3 inputs
        n = int(rng.integers(3, 6))
        T = int(rng.integers(2, 4))
        q = float(rng.uniform(0.1, 1.0))
        eps0 = float(rng.uniform(0.3, 4.0))
        mech = amp.KRR(eps0, k=k)
        M = mech.matrix()
        Mq = TR._void(M, q)
        eps_l = [float(x) for x in rng.uniform(0, 2.0, size=3)]
        tag = f"KRR({eps0!r}, k={k}), n={n}, rounds={T}, sampling={q!r}"
        worst = np.zeros(len(eps_l))
        try:
            with limit(4 * TIMEOUT):
                for x0, x1, others in TR._pairs(M, n):
                    worst = np.maximum(worst, TR._exact_composed(Mq, x0, x1, others, T, eps_l))
        except (Timeout, MemoryError):
            STATS["d"][2] += 1
            print(f"  skip [d] exact composed {tag}: too slow", flush=True)
            continue
        for e, w in zip(eps_l, worst):
            b = call("d", f"delta {tag} eps={e!r}", amp.delta, mech, n, e, rounds=T, sampling=q)
            if b is not None:
                check("d", b.upper >= w - 1e-13,
                      f"sampled rounds delta upper too small: amp.delta({tag}, eps={e!r}) = "
                      f"[{b.lower!r}, {b.upper!r}] < exact composed {w!r} "
                      f"(max over tests/test_rounds._pairs of _exact_composed)")
                if w > 0:
                    RATIOS.setdefault("d-tiny", []).append(b.upper / w)
        target = float(rng.uniform(0.01, 0.2))
        r = call("d", f"epsilon {tag} delta={target!r}", amp.epsilon, mech, n, target,
                 rounds=T, sampling=q)
        if r is not None:
            at = 0.0
            for x0, x1, others in TR._pairs(M, n):
                at = max(at, float(TR._exact_composed(Mq, x0, x1, others, T, [r.upper])[0]))
            check("d", at <= target * (1 + 1e-9),
                  f"sampled rounds eps upper too small: amp.epsilon({tag}, delta={target!r}) "
                  f"= [{r.lower!r}, {r.upper!r}]; exact composed delta at upper {at!r}")
    sharpness("d")
    sharpness("d-tiny")
    summary("d", t0)


# ------------------------------------------------------------------ e
def run_test(sec: str, what: str, fn, *args) -> None:
    t0 = time.time()
    try:
        with limit(4 * TIMEOUT):
            fn(*args)
    except Timeout:
        STATS[sec][2] += 1
        print(f"  skip [{sec}] {what}: over {4 * TIMEOUT} s", flush=True)
        return
    except amp.AmpError as exc:
        if "method='structured' needs" in str(exc):
            return None                  # not a Table 1 shape: not applicable, not a skip
        STATS[sec][2] += 1
        print(f"  skip [{sec}] {what}: refused ({exc})", flush=True)
        return
    except AssertionError as exc:
        check(sec, False, f"{what}: {exc!r}")
        return
    except Exception as exc:
        STATS[sec][3] += 1
        print(f"ERROR [{sec}] {what}: {type(exc).__name__}: {exc}", flush=True)
        return
    check(sec, True, what)
    print(f"  ok [{sec}] {what} ({time.time() - t0:.1f} s)", flush=True)


def section_e(rng, cases: int) -> None:
    import test_numeric_mechanisms as TN
    import test_population as TP
    from amp.mechanisms.numeric import Duchi, PiecewiseMechanism, SquareWave
    t0 = time.time()
    for case in range(cases):
        eps0 = float(rng.uniform(0.1, 8.0))
        kind = str(rng.choice(["duchi", "sw", "swb", "pm"]))
        inner = sorted(float(x) for x in rng.uniform(0, 1, size=int(rng.integers(1, 4))))
        if kind == "duchi":
            xs = [-1.0, 1.0] + [2 * x - 1 for x in inner]
            entry = (lambda e=eps0: Duchi(e), lambda v, e=eps0: TN.duchi_matrix(e, v), xs)
        elif kind == "pm":
            xs = [-1.0, 1.0] + [2 * x - 1 for x in inner]
            entry = (lambda e=eps0: PiecewiseMechanism(e), lambda v, e=eps0: TN.pm_matrix(e, v),
                     xs)
        elif kind == "sw":
            xs = [0.0, 1.0] + inner
            entry = (lambda e=eps0: SquareWave(e),
                     lambda v, e=eps0: TN.sw_matrix(e, TN.square_wave_b(e), v), xs)
        else:
            b = float(rng.uniform(0.05, 1.0))
            xs = [0.0, 1.0] + inner
            entry = (lambda e=eps0, b=b: SquareWave(e, b=b),
                     lambda v, e=eps0, b=b: TN.sw_matrix(e, b, v), xs)
            kind = f"sw-b{b!r}"
        name = f"audit-{kind}-{eps0!r}-xs{[round(x, 4) for x in xs]}"
        TN.CASES[name] = entry
        n_up = int(rng.integers(2, 5 if len(xs) <= 4 else 4))
        run_test("e", f"test_numeric_mechanisms.test_upper_bound_above_exact_shuffled_"
                 f"divergences({name}, n={n_up})",
                 TN.test_upper_bound_above_exact_shuffled_divergences, name, n_up)
        n_lo = int(rng.integers(3, 8))
        run_test("e", f"test_numeric_mechanisms.test_lower_bound_is_an_exact_dataset_pair("
                 f"{name}, n={n_lo})", TN.test_lower_bound_is_an_exact_dataset_pair, name, n_lo)
    for case in range(cases):
        g = int(rng.integers(2, 4))
        sizes = [int(rng.integers(1, 4)) for _ in range(g)]
        while sum(sizes) > (6 if g == 2 else 6):
            sizes[int(np.argmax(sizes))] -= 1
        spec = [(s, float(rng.uniform(0.1, 8.0))) for s in sizes]
        name = f"audit-pop-{spec!r}"
        TP.POPS[name] = spec
        run_test("e", f"test_population.test_population_bounds_above_brute_force({name})",
                 TP.test_population_bounds_above_brute_force, name)
        k = int(rng.choice([3, 4]))
        c = int(rng.integers(2, 4))
        w = rng.dirichlet(np.ones(c))
        comps = [(float(wi), float(rng.uniform(0.1, 8.0))) for wi in w]
        mname = f"audit-mix-k{k}-{comps!r}"
        TP.MIXES[mname] = (comps, k)
        n = int(rng.integers(2, 5))
        run_test("e", f"test_population.test_mixture_upper_above_brute_force({mname}, n={n})",
                 TP.test_mixture_upper_above_brute_force, mname, n)
    summary("e", t0)


# ------------------------------------------------------------------ f
def matrix_types(M: np.ndarray, x0: int, x1: int):
    """Theorem 4's blanket law of the pair ``(x0, x1)`` of a matrix mechanism, from the
    definition: blanket ``c_j = min_x M[x, j]``, atoms ``(M[x0, j] / c_j, M[x1, j] / c_j)`` of
    mass ``c_j`` (for bench/oracle_sweep.oracle_delta)."""
    c = M.min(axis=0)
    return [(float(M[x0, j] / c[j]), float(M[x1, j] / c[j]), float(c[j]))
            for j in range(M.shape[1]) if c[j] > 0]


def matrix_oracle(M: np.ndarray, n: int, eps: float) -> float:
    d = M.shape[0]
    return max(OS.oracle_delta(OS.merged(matrix_types(M, i, j)), n, eps)
               for i in range(d) for j in range(d) if i != j)


def section_f(rng, cases: int) -> None:
    """The flagged-wider brackets (amp.core.result.wider_or_raise): the matrix-pair search
    (amp.pairsearch) and calibrate_eps0, at default and at unreachable rel_tol, against
    exact oracles at small n (bench/oracle_sweep.oracle_delta on the pair laws written from
    the matrix; oracle / krr_upper for k-RR) and by self-consistency at large n."""
    import helpers
    t0 = time.time()
    flagged = 0
    for case in range(cases):
        d, mcols = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        eps0 = float(rng.uniform(0.1, 8.0))
        M = helpers.random_ldp_matrix(rng, d, mcols, eps0)
        n = int(loguniform(rng, 2, 300 if mcols <= 3 else 80))
        mech = amp.MatrixMechanism(M)
        desc = f"MatrixMechanism(np.array({M.tolist()!r}))"
        eps = float(rng.uniform(0, 1.0)) * max(mech.eps0, 1e-3)
        b = call("f", f"matrix delta n={n}", amp.delta, mech, n, eps)
        if b is not None:
            o = matrix_oracle(M, n, eps)
            check("f", b.lower <= o * (1 + 1e-9) + 1e-15 and b.upper >= o * (1 - 1e-9) - 1e-15,
                  f"amp.delta({desc}, {n}, {eps!r}) = [{b.lower!r}, {b.upper!r}] misses the "
                  f"exact max over pairs {o!r} (oracle_delta on each pair's law)")
        delta = loguniform(rng, 1e-10, 1e-2)
        rt = float(rng.choice([1e-4, 1e-7, 1e-10]))
        r = call("f", f"matrix epsilon n={n} rel_tol={rt}", amp.epsilon, mech, n, delta,
                 rel_tol=rt)
        if r is None:
            continue
        flagged += bool(r.details.get("wider_than_asked"))
        tag = (f"amp.epsilon({desc}, {n}, {delta!r}, rel_tol={rt:g}) = [{r.lower!r}, "
               f"{r.upper!r}] (flagged wider: {bool(r.details.get('wider_than_asked'))})")
        o_hi = matrix_oracle(M, n, r.upper)
        check("f", o_hi <= delta * (1 + 1e-9) + 1e-15,
              f"{tag}: exact max-pair delta at eps.upper = {o_hi!r} > delta")
        if r.lower > 0:
            o_lo = matrix_oracle(M, n, r.lower)
            check("f", o_lo >= delta * (1 - 1e-9) - 1e-15,
                  f"{tag}: exact max-pair delta at eps.lower = {o_lo!r} < delta")
    for case in range(cases):
        k = int(rng.choice([2, 3, 5, 10, 100]))
        n = int(loguniform(rng, 2, 2000))
        eps = float(rng.uniform(0.05, 2.0))
        delta = loguniform(rng, 1e-10, 1e-3)
        rt = float(rng.choice([1e-4, 1e-8, 1e-11]))
        fam = (lambda e0, k=k: amp.KRR(e0, k=k))
        r = call("f", f"calibrate KRR k={k} n={n}", amp.calibrate_eps0, fam, n, eps, delta,
                 rel_tol=rt, eps0_max=30.0)
        if r is None:
            continue
        flagged += bool(r.details.get("wider_than_asked"))
        tag = (f"amp.calibrate_eps0(lambda e0: amp.KRR(e0, k={k}), {n}, {eps!r}, {delta!r}, "
               f"rel_tol={rt:g}, eps0_max=30) = [{r.lower!r}, {r.upper!r}] (flagged wider: "
               f"{bool(r.details.get('wider_than_asked'))})")
        o = OS.oracle(OS.krr_upper(k, math.exp(r.lower)), n, eps)
        check("f", o <= delta * (1 + 1e-9) + 1e-15,
              f"{tag}: exact Theorem 4 delta of KRR(value) = {o!r} > delta "
              f"(bench/oracle_sweep.oracle(krr_upper))")
        if r.upper < 30.0:
            o = OS.oracle(OS.krr_upper(k, math.exp(r.upper)), n, eps)
            check("f", o >= delta * (1 - 1e-9) - 1e-15,
                  f"{tag}: exact Theorem 4 delta of KRR(upper) = {o!r} < delta: the bracket "
                  f"misses the threshold (claimed only if monotone in eps0)")
    for case in range(max(2, cases // 2)):       # large n: self-consistency with cf
        n = int(loguniform(rng, 1e4, 1e9))
        kind = str(rng.choice(["krr", "rappor", "oue", "sw"]))
        k = int(rng.choice([2, 10, 100]))
        fam = {"krr": lambda e0, k=k: amp.KRR(e0, k=k), "rappor": amp.RAPPOR, "oue": amp.OUE,
               "sw": amp.SquareWave}[kind]
        eps = loguniform(rng, 1e-3, 1.0)
        delta = loguniform(rng, 1e-12, 1e-4)
        rt = float(rng.choice([1e-4, 1e-9]))
        r = call("f", f"calibrate {kind} n={n}", amp.calibrate_eps0, fam, n, eps, delta,
                 rel_tol=rt, eps0_max=30.0)
        if r is None:
            continue
        flagged += bool(r.details.get("wider_than_asked"))
        tag = (f"amp.calibrate_eps0({kind}{f' k={k}' if kind == 'krr' else ''}, {n}, {eps!r}, "
               f"{delta!r}, rel_tol={rt:g}) = [{r.lower!r}, {r.upper!r}]")
        b = call("f", f"cf delta at calibrated eps0 {tag}", amp.delta, fam(r.lower), n, eps,
                 method="cf")
        if b is not None:
            check("f", b.lower <= delta * (1 + 1e-9),
                  f"{tag}: amp.delta(make(value), n, eps, method='cf') = [{b.lower!r}, "
                  f"{b.upper!r}] > delta")
        if r.upper < 30.0:
            b = call("f", f"cf delta at eps0 upper {tag}", amp.delta, fam(r.upper), n, eps,
                     method="cf")
            if b is not None:
                check("f", b.upper >= delta * (1 - 1e-9),
                      f"{tag}: amp.delta(make(upper), n, eps, method='cf') = [{b.lower!r}, "
                      f"{b.upper!r}] < delta (the bracket misses the threshold)")
    print(f"  (f: {flagged} of the answers were flagged wider than asked)", flush=True)
    summary("f", t0)


def guarded(sec: str, fn, *args) -> None:
    """Run one section; an exception of the audit itself (e.g. an oracle's) ends that
    section only, recorded."""
    import traceback
    try:
        fn(*args)
    except Exception:
        STATS[sec][3] += 1
        print(f"ERROR [{sec}] section stopped by an exception:\n{traceback.format_exc()}",
              flush=True)


def main() -> int:
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1414)
    ap.add_argument("--cases", type=int, default=30, help="random cases per section")
    ap.add_argument("--quick", action="store_true", help="a few cases per section")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per amp call")
    ap.add_argument("--sections", default="abcdef")
    a = ap.parse_args()
    TIMEOUT = a.timeout
    cases = 4 if a.quick else a.cases
    t_all = time.time()
    print(f"audit_session14: seed={a.seed} cases={cases} quick={a.quick} "
          f"timeout={TIMEOUT}s amp={amp.__file__}", flush=True)
    procs = start_c(a.seed + 1000, a.quick) if "c" in a.sections else []
    t_c = time.time()
    if "a" in a.sections or "b" in a.sections:
        t0 = time.time()
        print("-- a/b: cross-engine consistency and eps self-consistency, n in 1e4..1e10",
              flush=True)
        guarded("a", section_ab, np.random.default_rng([a.seed, 1]), cases)
        guarded("a", section_a_oracle, np.random.default_rng([a.seed, 2]), max(3, cases // 2))
        summary("a", t0)
        summary("b", t0)
    if "d" in a.sections:
        print("-- d: rounds against the exact composition of the Theorem 4 pair", flush=True)
        guarded("d", section_d, np.random.default_rng([a.seed, 4]), max(3, cases // 2))
    if "e" in a.sections:
        print("-- e: populations, mixtures, numeric mechanisms at tiny n (brute force)",
              flush=True)
        guarded("e", section_e, np.random.default_rng([a.seed, 5]), max(3, cases // 2))
    if "f" in a.sections:
        print("-- f: matrix-pair search and calibrate_eps0, flagged-wider brackets included",
              flush=True)
        guarded("f", section_f, np.random.default_rng([a.seed, 6]), max(3, cases // 2))
    if procs:
        print("-- c: bench/oracle_sweep.py on fresh seeds", flush=True)
        finish_c(procs, t_c)
    print("== summary")
    for s in a.sections:
        c, v, k, e = STATS[s]
        print(f"   {s}: {c} checks, {v} violations, {k} skipped, {e} errors")
    tot = [sum(STATS[s][i] for s in a.sections) for i in range(4)]
    print(f"   total: {tot[0]} checks, {tot[1]} violations, {tot[2]} skipped, {tot[3]} errors "
          f"({time.time() - t_all:.0f} s)")
    return 1 if tot[1] or tot[3] else 0


if __name__ == "__main__":
    sys.exit(main())
