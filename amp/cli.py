"""Command line: ``python -m amp {delta,epsilon,eps0} ...``.

Contract (other tools rely on it)::

    python -m amp delta   --mechanism M [opts] --n N --eps E   [--bound B] [--json]
    python -m amp epsilon --mechanism M [opts] --n N --delta D [--bound B] [--json]
        [--workers W]: a matrix's pair evaluations on W local processes (same answer)
        [--rounds T] [--sampling q]: T adaptive rounds, each user taking part w.p. q
    python -m amp eps0    --mechanism M [opts] --n N --eps E --delta D [--json]
    python -m amp sweep   --mechanism M [opts] --n N [N ...] --eps0 X [X ...]
        (--delta D [D ...] | --eps E [E ...]) [--bound B [B ...]]
        [--rounds T [T ...]] [--sampling q [q ...]]
        [--workers W | --scheduler ADDRESS] [--format table|csv|json]
        a grid of questions (amp.sweep): one row per point, the same output whatever W
        (default serial); M and its options as for epsilon (matrix/population: no --eps0);
        --scheduler ADDRESS: a Dask scheduler ("local": a LocalCluster of W workers)
    M: krr (--k K) | rappor | oue | blh | olh (--g G) | hadamard  [--eps0 X] [--d D]
       duchi | squarewave [--b B] | piecewise  (numeric inputs; worst pair proven)
       matrix (--matrix FILE: .csv, .npy or .json; eps0 comes from the matrix)
       population (--population FILE: .json or .csv rows users,mechanism,eps0[,k,g,d,b];
       fixed groups, each at its own blanket mass; --n must be the total number of users)
    --joint J: J identical components of the chosen mechanism, each with eps0/J

Without ``--json`` a readable answer is printed; with it, one JSON object with the inputs,
``"value"`` (the number to use) and ``"bracket": [lo, hi]`` enclosing the exact value of the
selected bound. Bad input exits with code 2 and one line on stderr; no traceback. A sweep
prints its table (``--format``); points that cannot be certified keep their rows (with the
error) and make the exit code 3.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from amp.core.version import __version__
from amp import api as B
from amp.core.errors import AmpError, NumericalError, ParameterError
from amp.core.errors import AccuracyWarning
from amp.core.floats import fmt_outward
from amp.core.extras import MissingExtraError
from amp.core.validate import show
from amp.backends.dispatch import METHODS
from amp.mechanisms import registry
from amp.mechanisms.joint import JointMechanism
from amp.mechanisms.base import MatrixMechanism, Mechanism
from amp.mechanisms.mixture import Population
from amp.sweeps import SweepTable, dask_executor, sweep
from amp.cli_baseline import baseline_json

MECHANISMS = (*registry.MECHANISMS, "matrix", "population")
FILE_MECHANISMS = ("matrix", "population")
CORE_BOUNDS = ("upper", "lower")
BASELINE_BOUNDS = ("clone", "clone-closed", "hoeffding", "bennett", "stronger-clone")
PROGRESS_AFTER = 2.0   # seconds before progress lines appear on stderr


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (no usage dump)
        raise _UsageError(message)


def _positive_int(name: str) -> Callable[[str], int]:
    def conv(text: str) -> int:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {show(text)}")
        if not math.isfinite(v) or v != int(v):
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {show(text)}")
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {int(v)}")
        return int(v)
    return conv


def _real(name: str) -> Callable[[str], float]:
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {show(text)}")
        return v
    return conv


def _prog() -> str:
    """``amp`` when run as the installed command, ``python -m amp`` when run as a module."""
    return "amp" if Path(sys.argv[0]).name == "amp" else "python -m amp"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``amp`` (exposed for tests and docs).

    Returns
    -------
    argparse.ArgumentParser
        With the subcommands ``delta``, ``epsilon``, ``eps0`` and ``sweep``; errors raise
        instead of printing the usage (:func:`main` turns them into one line and exit code 2).

    Examples
    --------
    >>> from amp.cli import build_parser
    >>> argv = ["epsilon", "-m", "krr", "--k", "10", "--eps0", "4",
    ...         "--n", "10000", "--delta", "1e-6", "--json"]
    >>> args = build_parser().parse_args(argv)
    >>> args.command, args.mechanism, args.k, args.json
    ('epsilon', 'krr', 10, True)
    """
    p = _Parser(prog=_prog(),
                description="Certified privacy amplification by shuffling (optimal blanket "
                            "bounds, Theorem 5 lower bounds and baselines).")
    p.add_argument("--version", action="version", version=f"amp {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    specs = {
        "delta": ("certified delta(eps) of the shuffled mechanism", ("eps",)),
        "epsilon": ("certified eps(delta): smallest eps whose bound is <= delta", ("delta",)),
        "eps0": ("largest local eps0 whose certified guarantee meets (eps, delta)",
                 ("eps", "delta")),
    }
    for name, (help_text, needs) in specs.items():
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("--mechanism", "-m", required=True, metavar="M",
                       help="|".join(MECHANISMS))
        s.add_argument("--k", type=_positive_int("k"), help="k-RR domain size")
        s.add_argument("--g", type=_positive_int("g"), help="OLH number of buckets")
        s.add_argument("--b", type=_real("b"), help="square wave half-width (default: Li et "
                       "al.'s)")
        s.add_argument("--d", type=_positive_int("d"),
                       help="domain size: exact finite mechanism instead of the Table 1 row")
        s.add_argument("--matrix", metavar="FILE", help="randomizer matrix (.csv/.npy/.json)")
        s.add_argument("--population", metavar="FILE",
                       help="fixed groups (.json list or .csv with a header): users, "
                            "mechanism, eps0 and its keywords per row")
        s.add_argument("--joint", type=_positive_int("joint"), default=None,
                       help="J identical components, each with eps0/J (Section 6)")
        s.add_argument("--n", type=_positive_int("n"), default=None,
                       help="number of users (may be omitted for a population: its total)")
        if name != "eps0":
            s.add_argument("--eps0", type=_real("eps0"), help="local privacy level")
        if "eps" in needs:
            s.add_argument("--eps", type=_real("eps"), required=True, help="central eps")
        if "delta" in needs:
            s.add_argument("--delta", type=_real("delta"), required=True, help="target delta")
        if name != "eps0":
            s.add_argument("--rounds", type=_positive_int("rounds"), default=1,
                           help="number of adaptive rounds T (default 1; T > 1: composed "
                                "bracket, needs amp-shuffle[rounds])")
            s.add_argument("--sampling", type=_real("sampling"), default=1.0,
                           help="Poisson client subsampling rate q in (0, 1] (default 1)")
            s.add_argument("--bound", default="upper",
                           help="upper (default) | lower (Theorem 5) | "
                                + " | ".join(BASELINE_BOUNDS))
            s.add_argument("--workers", type=_positive_int("workers"), default=None,
                           help="local processes for a matrix's pair evaluations (default 1: "
                                "serial; the answer is the same)")
        s.add_argument("--rel-tol", type=_real("rel-tol"), default=None,
                       help="relative width of the certified bracket")
        s.add_argument("--method", default="auto", choices=METHODS,
                       help="delta engine: auto (default: picks and reports the method), "
                            "structured (Table 1 shapes), fft (any law), exact (small n)")
        s.add_argument("--json", action="store_true", help="print one JSON object")
        s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_sweep_parser(sub)
    return p


def _add_sweep_parser(sub) -> None:
    text = ("a grid of certified eps(delta) (or delta(eps)) questions, one table row per "
            "point (amp.sweep), on a process pool or a Dask cluster")
    s = sub.add_parser("sweep", help=text, description=text)
    s.add_argument("--mechanism", "-m", required=True, metavar="M", help="|".join(MECHANISMS))
    s.add_argument("--k", type=_positive_int("k"), help="k-RR domain size")
    s.add_argument("--g", type=_positive_int("g"), help="OLH number of buckets")
    s.add_argument("--d", type=_positive_int("d"), help="domain size: exact finite mechanism")
    s.add_argument("--b", type=_real("b"), help="square wave half-width (default: Li et al.'s)")
    s.add_argument("--matrix", metavar="FILE", help="randomizer matrix (.csv/.npy/.json) of "
                   "mechanism matrix (eps0 comes from it)")
    s.add_argument("--population", metavar="FILE", help="fixed groups of mechanism "
                   "population (as for epsilon; --n may be omitted)")
    s.add_argument("--joint", type=_positive_int("joint"), default=None,
                   help="J identical components, each with eps0/J (Section 6)")
    s.add_argument("--n", type=_positive_int("n"), nargs="+", default=None,
                   help="numbers of users (required, except for a population)")
    s.add_argument("--eps0", type=_real("eps0"), nargs="+", default=None,
                   help="local privacy levels (not for a matrix or a population)")
    s.add_argument("--rounds", type=_positive_int("rounds"), nargs="+", default=[1],
                   help="numbers of adaptive rounds T (default 1; T > 1 needs "
                        "amp-shuffle[rounds])")
    s.add_argument("--sampling", type=_real("sampling"), nargs="+", default=[1.0],
                   help="Poisson client subsampling rates q in (0, 1] (default 1)")
    given = s.add_mutually_exclusive_group(required=True)
    given.add_argument("--delta", type=_real("delta"), nargs="+",
                       help="target deltas: each point is eps(delta)")
    given.add_argument("--eps", type=_real("eps"), nargs="+",
                       help="central eps values: each point is delta(eps)")
    s.add_argument("--bound", nargs="+", default=["upper"], metavar="B",
                   help="upper (default) and/or lower (Theorem 5)")
    s.add_argument("--rel-tol", type=_real("rel-tol"), default=None,
                   help="relative width of each certified bracket")
    s.add_argument("--method", default="auto", choices=METHODS, help="delta engine")
    s.add_argument("--workers", type=_positive_int("workers"), default=None,
                   help="processes of a local pool (default 1: serial, in this process)")
    s.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on a Dask scheduler at ADDRESS, or 'local' for a LocalCluster "
                        "of --workers processes (needs amp-shuffle[dask])")
    s.add_argument("--format", default="table", choices=("table", "csv", "json"),
                   help="output: aligned table (default), CSV or a JSON array of rows")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")


# ----------------------------------------------------------------------------- mechanisms
def load_matrix(path: str) -> np.ndarray:
    """Read a randomizer matrix from ``.csv``, ``.npy`` or ``.json`` (list of rows)."""
    f = Path(path)
    if not f.is_file():
        raise ParameterError(f"matrix: cannot read file {show(path)}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # numpy's "input contained no data" is the error
            if f.suffix == ".npy":
                return np.load(f, allow_pickle=False)
            if f.suffix == ".json":
                return np.array(json.loads(f.read_text()), dtype=float)
            if f.suffix in (".csv", ".txt"):
                return np.loadtxt(f, delimiter=",", ndmin=2)
    except Exception as exc:  # noqa: BLE001 - reported as one line
        raise ParameterError(f"matrix: cannot parse {show(path)}: {exc}") from None
    raise ParameterError(f"matrix: unsupported file type {show(f.suffix)} (use .csv, .npy, .json)")


def load_population(path: str) -> Population:
    """Read fixed groups from ``.json`` (a list of objects) or ``.csv`` (a header row): each
    row has ``users``, ``mechanism`` (a registry name), ``eps0`` and that mechanism's
    keywords (``k``, ``g``, ``d``, ``b``). A bad row is refused in one line naming it."""
    f = Path(path)
    if not f.is_file():
        raise ParameterError(f"population: cannot read file {show(path)}")
    try:
        if f.suffix == ".json":
            rows = json.loads(f.read_text())
        elif f.suffix in (".csv", ".txt"):
            import csv
            with f.open(newline="") as fh:
                rows = [{k.strip(): v.strip() for k, v in r.items() if k and v and v.strip()}
                        for r in csv.DictReader(fh)]
        else:
            raise ParameterError(f"population: unsupported file type {show(f.suffix)} "
                                 "(use .json or .csv)")
    except (ValueError, OSError) as exc:
        raise ParameterError(f"population: cannot parse {show(path)}: {exc}") from None
    if not isinstance(rows, list) or not rows:
        raise ParameterError("population: the file must hold a non-empty list of rows")
    groups = []
    for i, row in enumerate(rows, start=1):
        try:
            if not isinstance(row, dict):
                raise ParameterError("a row must be an object with users, mechanism, eps0")
            row = dict(row)
            missing = [k for k in ("users", "mechanism", "eps0") if k not in row]
            if missing:
                raise ParameterError(f"missing {', '.join(missing)}")
            users = float(row.pop("users"))
            if not users.is_integer() or users < 1:
                raise ParameterError(f"users must be an integer >= 1, got {users:g}")
            name, eps0 = str(row.pop("mechanism")), float(row.pop("eps0"))
            kw = {k: (float(v) if k == "b" else int(float(v))) for k, v in row.items()}
            groups.append((int(users), registry.make(name, eps0, **kw)))
        except (ParameterError, ValueError, TypeError) as exc:
            raise ParameterError(f"population: row {i}: {exc}") from None
    try:
        return Population(groups)
    except ParameterError as exc:
        raise ParameterError(f"population: {exc}") from None


def mechanism_factory(args: argparse.Namespace) -> Callable[[float], Mechanism]:
    """``eps0 -> Mechanism`` for the parsed options (matrix: eps0 is ignored)."""
    m = args.mechanism.lower()
    if m not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {show(m)}")
    if m in FILE_MECHANISMS:
        for opt in ("k", "g", "d", "b"):
            if getattr(args, opt, None) is not None:
                raise ParameterError(f"--{opt} does not apply to mechanism {m!r}")
    if getattr(args, "population", None) is not None and m != "population":
        raise ParameterError(f"--population does not apply to mechanism {m!r}")
    if m == "population":
        if args.matrix is not None:
            raise ParameterError("--matrix does not apply to mechanism 'population'")
        if args.population is None:
            raise ParameterError("population is required for mechanism population "
                                 "(--population FILE)")
        pop = load_population(args.population)
        return lambda _eps0: pop
    if m == "matrix":
        if args.matrix is None:
            raise ParameterError("matrix is required for mechanism matrix (--matrix FILE)")
        mech = MatrixMechanism(load_matrix(args.matrix), name=Path(args.matrix).name)
        return lambda _eps0: mech
    if args.matrix is not None:
        raise ParameterError(f"--matrix does not apply to mechanism {m!r}")
    try:
        base = registry.factory(m, k=args.k, g=args.g, d=args.d, b=getattr(args, "b", None))
    except ParameterError as exc:      # name the option as the user typed it
        msg = str(exc)
        for opt in ("k", "g", "d", "b"):
            msg = msg.replace(f"{opt} does not apply", f"--{opt} does not apply")
            msg = msg.replace(f"{opt} is required for {m}", f"{opt} is required for {m} "
                              f"(--{opt} {opt.upper()})")
        raise ParameterError(msg) from None
    if args.joint is None or args.joint == 1:
        return base
    J = args.joint
    return lambda e: JointMechanism([base(e / J) for _ in range(J)])


# ----------------------------------------------------------------------------- running
def _progress_printer(args: argparse.Namespace):
    if args.quiet or getattr(args, "json", False):
        return None
    t0 = time.perf_counter()

    def show(line: str) -> None:
        if time.perf_counter() - t0 >= PROGRESS_AFTER:
            print(f"[amp] {line}", file=sys.stderr, flush=True)
    return show


def run(args: argparse.Namespace) -> dict:
    """Execute a parsed command and return the JSON-ready answer (the ``--json`` object).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by :func:`build_parser`.

    Returns
    -------
    dict
        :meth:`amp.Bound.as_dict` of the answer, or a baseline's answer.

    Examples
    --------
    >>> from amp.cli import build_parser, run
    >>> argv = ["delta", "-m", "rappor", "--eps0", "4", "--n", "10000",
    ...         "--eps", "0.5"]
    >>> args = build_parser().parse_args(argv)
    >>> ans = run(args)
    >>> ans["quantity"], ans["method"], f"{ans['value']:.4e}"
    ('delta', 'structured', '6.8906e-10')
    """
    make = mechanism_factory(args)
    prog = _progress_printer(args)
    cmd = args.command
    if args.n is None and args.mechanism.lower() != "population":
        raise ParameterError("n is required (--n N)")
    if cmd == "eps0":
        if args.mechanism.lower() in FILE_MECHANISMS:
            raise ParameterError("eps0 calibration needs a mechanism family; a matrix or a "
                                 "population fixes eps0")
        kw = {} if args.rel_tol is None else {"rel_tol": args.rel_tol}
        with warnings.catch_warnings():             # said once, as the note below
            warnings.simplefilter("ignore", AccuracyWarning)
            res = B.calibrate_eps0(make, args.n, args.eps, args.delta, progress=prog,
                                   method=args.method, **kw)
        if getattr(res, "wider_than_asked", False):
            print(f"amp: note: {res.details['wider_note']}", file=sys.stderr)
        return res.as_dict()
    if args.mechanism.lower() not in FILE_MECHANISMS:
        if args.eps0 is None:
            raise ParameterError("eps0 is required (--eps0 X)")
        mech = make(args.eps0)
    else:
        if args.eps0 is not None:
            raise ParameterError(f"eps0 comes from the {args.mechanism.lower()}; do not pass "
                                 "--eps0")
        mech = make(0.0)
        if args.n is None:                          # a population: its number of users
            args.n = mech.n
    bound = args.bound
    if bound in CORE_BOUNDS:
        kw = {} if args.rel_tol is None else {"rel_tol": args.rel_tol}
        kw.update(rounds=args.rounds, sampling=args.sampling)
        with _pool(args.workers) as pool:
            with warnings.catch_warnings():         # said once, as the note below
                warnings.simplefilter("ignore", AccuracyWarning)
                if cmd == "delta":
                    res = B.delta(mech, args.n, args.eps, bound=bound, method=args.method,
                                  executor=pool, **kw)
                else:
                    res = B.epsilon(mech, args.n, args.delta, bound=bound, progress=prog,
                                    method=args.method, executor=pool, **kw)
            if getattr(res, "wider_than_asked", False):
                print(f"amp: note: {res.details['wider_note']}", file=sys.stderr)
        return {**res.as_dict(), "rounds": args.rounds, "sampling": args.sampling}
    if args.workers not in (None, 1):
        raise ParameterError(f"--workers applies to --bound upper|lower only, not {show(bound)}")
    if args.rounds != 1 or args.sampling != 1.0:
        raise ParameterError(f"--rounds and --sampling apply to --bound upper|lower only, not "
                             f"{show(bound)}")
    if bound in BASELINE_BOUNDS:
        if args.method != "auto":
            raise ParameterError(f"--method applies to --bound upper|lower only, not {show(bound)}")
        return baseline_json(bound, cmd, mech, args.n,
                             args.eps if cmd == "delta" else args.delta)
    raise ParameterError(f"bound must be one of {', '.join(CORE_BOUNDS + BASELINE_BOUNDS)}, "
                         f"got {show(bound)}")


@contextmanager
def _pool(workers: int | None) -> Iterator[ProcessPoolExecutor | None]:
    """A local process pool of ``workers`` processes (``None`` for serial), shut down after."""
    if workers is None or workers == 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield pool


def run_sweep(args: argparse.Namespace) -> SweepTable:
    """Execute a parsed ``sweep`` command and return its table (:func:`amp.sweep`).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by :func:`build_parser` (command ``sweep``).

    Returns
    -------
    SweepTable
        One row per point of the grid ``bound x n x eps0 x (delta or eps)``.

    Examples
    --------
    >>> from amp.cli import build_parser, run_sweep
    >>> argv = ["sweep", "-m", "krr", "--k", "10", "--n", "1000", "10000",
    ...         "--eps0", "4", "--delta", "1e-6", "--workers", "1"]
    >>> t = run_sweep(build_parser().parse_args(argv))
    >>> [round(r["value"], 4) for r in t]
    [1.5274, 0.3805]
    """
    make = mechanism_factory(args)     # the options' checks of the single questions
    m = args.mechanism.lower()
    domain = {o: getattr(args, o) for o in ("k", "g", "d", "b") if getattr(args, o) is not None}
    if m in FILE_MECHANISMS:
        if args.eps0 is not None:
            raise ParameterError(f"eps0 comes from the {m}; do not pass --eps0")
        mech, domain = make(0.0), {}
    elif args.joint not in (None, 1):
        mech, domain = make, {}
    else:
        mech = m
    if args.n is None and m != "population":
        raise ParameterError("n is required (--n N [N ...])")
    if args.eps0 is None and m not in FILE_MECHANISMS:
        raise ParameterError("eps0 is required (--eps0 X [X ...])")
    kw = dict(n=args.n, eps0=args.eps0, delta=args.delta, eps=args.eps, bound=args.bound,
              rounds=args.rounds, sampling=args.sampling, rel_tol=args.rel_tol,
              method=args.method, progress=_progress_printer(args), **domain)
    if args.scheduler is None:
        return sweep(mech, **kw, workers=args.workers)
    if args.scheduler == "local":
        with dask_executor(n_workers=args.workers) as ex:
            return sweep(mech, **kw, executor=ex)
    if args.workers is not None:
        raise ParameterError("--workers sizes the local pool or a 'local' Dask cluster; the "
                             "scheduler at --scheduler ADDRESS has its own workers")
    with dask_executor(args.scheduler) as ex:
        return sweep(mech, **kw, executor=ex)


def _format(ans: dict) -> str:
    q = ans["quantity"]
    what = {"delta": "delta", "eps": "eps", "eps0": "largest eps0"}[q]
    lines = [f"{ans['mechanism']}, n = {ans['n']}, bound: {ans['bound']}"]
    given = ", ".join(f"{k} = {ans[k]:g}" for k in ("eps", "delta") if k in ans)
    if given:
        lines.append(f"given {given}")
    extra = ""
    if "bracket" in ans:
        lo, hi = ans["bracket"]
        extra = (f"bracket of the exact value [{fmt_outward(lo, up=False)}, "
                 f"{fmt_outward(hi, up=True)}], ")
    # rounded outwards: the value is the upper end, except for lower bounds and eps0
    up = q != "eps0" and ans.get("bound") != "lower"
    lines.append(f"{what} = {fmt_outward(ans['value'], up=up)}   ({extra}method: "
                 f"{ans['method']})")
    if ans.get("certified") is False:
        lines.append("NOT a certified privacy guarantee")
    if ans.get("note"):
        lines.append(ans["note"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``amp`` and ``python -m amp``; returns the process exit code.

    Runs one of the commands of the module docstring: ``delta`` (Theorem 4's certified
    ``delta(eps)``, or Theorem 5 with ``--bound lower``, or a baseline), ``epsilon`` (its
    certified inverse ``eps(delta)``), ``eps0`` (the largest local level for a target) and
    ``sweep`` (a grid of ``epsilon`` or ``delta`` questions, one table row per point).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``), e.g. ``["--version"]``.

    Returns
    -------
    int
        ``0`` on success; ``2`` for bad input and ``3`` for an accuracy that cannot be
        certified, each with one line on stderr and no traceback; ``1`` for an internal error.

    Examples
    --------
    >>> from amp.cli import main
    >>> main(["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "4",
    ...       "--n", "10000", "--delta", "1e-6"])
    10-RR (eps0=4), n = 10000, bound: upper
    given delta = 1e-06
    eps = 0.380495   (bracket of the exact value [0.380487, 0.380495],
    method: structured)
    0
    >>> main(["delta", "--mechanism", "krr", "--k", "1", "--eps0", "4",
    ...       "--n", "100", "--eps", "0.5"])        # bad input: exit 2
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        ans = run_sweep(args) if args.command == "sweep" else run(args)
    except _UsageError as exc:
        print(f"amp: error: {exc}", file=sys.stderr)
        return 2
    except ParameterError as exc:
        print(f"amp: error: {exc}", file=sys.stderr)
        return 2
    except NumericalError as exc:
        print(f"amp: numerical error: {exc}", file=sys.stderr)
        return 3
    except MissingExtraError as exc:     # an optional dependency (e.g. --rounds) is missing
        print(f"amp: error: {exc}", file=sys.stderr)
        return 3
    except (AmpError, OverflowError, MemoryError) as exc:
        print(f"amp: error: {exc}", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, no traceback
        print(f"amp: internal error ({type(exc).__name__}): {exc}", file=sys.stderr)
        return 1
    if isinstance(ans, SweepTable):
        return _print_sweep(ans, args.format)
    if args.json:
        print(json.dumps(ans))
    else:
        print(_format(ans))
    return 0


def _print_sweep(table: SweepTable, fmt: str) -> int:
    """Print a sweep's table; exit code 3 when some point could not be certified."""
    if fmt == "csv":
        sys.stdout.write(table.to_csv())
    elif fmt == "json":
        print(table.to_json())
    else:
        print(table)
    bad = len(table.failed)
    if bad:
        print(f"amp: {bad} of {len(table)} points could not be certified (their rows say why)",
              file=sys.stderr)
        return 3
    return 0
