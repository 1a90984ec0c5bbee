"""amp.sweep: the same table serially, on a process pool and on a Dask LocalCluster; each row
is the front door's answer (or its error); bad input is refused before any work starts; any
mechanism the front door takes (objects, matrices, factories, populations), rounds and sampling;
serial unless asked; to_pandas; the CLI's sweep options."""

from __future__ import annotations

import csv
import io
import json
import importlib.util
import math
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import amp
from amp.core.errors import ParameterError
from amp.cli import main
from amp.core.extras import MissingExtraError
from amp.mechanisms import registry
from amp.sweeps import COLUMNS, SweepTable, dask_executor

GRID = dict(mechanism=["rappor", ("krr", {"k": 10})], n=[300, 20_000], eps0=[1.0, 4.0],
            delta=[1e-4, 1e-7])


def _mech(row: dict):
    params = dict(kv.split("=") for kv in row["params"].split(",") if kv)
    return registry.make(row["mechanism"], row["eps0"], **{k: int(v) for k, v in params.items()})


@pytest.fixture(scope="module")
def serial() -> SweepTable:
    return amp.sweep(**GRID, executor=None)


@pytest.fixture(scope="module")
def cluster():
    """A Dask LocalCluster of 2 single-threaded worker processes on the loopback."""
    distributed = pytest.importorskip("distributed",
                                      reason="the dask extra (distributed) is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def dask_ex(cluster):
    with dask_executor(cluster.scheduler_address) as ex:    # a Client on its address
        yield ex


# ----------------------------------------------------------------------------- executors
def test_grid_order_and_shape(serial):
    assert len(serial) == 2 * 2 * 2 * 2 and serial.given == "delta"
    keys = [(r["mechanism"], r["n"], r["eps0"], r["delta"]) for r in serial]
    expect = [(m, n, e0, d) for m in ("rappor", "krr") for n in (300, 20_000)
              for e0 in (1.0, 4.0) for d in (1e-4, 1e-7)]
    assert keys == expect
    assert all(r["error"] is None and r["quantity"] == "eps" for r in serial)
    assert all(r["lower"] <= r["value"] == r["upper"] for r in serial)   # upper bound: upper end


def test_process_pool_gives_the_same_table(serial):
    pooled = amp.sweep(**GRID, workers=2)
    assert pooled == serial
    assert pooled.to_csv() == serial.to_csv()       # bit for bit (repr of every float)


def test_dask_local_cluster_gives_the_same_table(serial, dask_ex):
    dasked = amp.sweep(**GRID, executor=dask_ex)
    assert dasked == serial and dasked.to_csv() == serial.to_csv()


def test_dask_delta_sweep_lower_bound_matches_serial(dask_ex):
    kw = dict(mechanism="krr", k=5, n=[200, 5000], eps0=[2.0], eps=[0.1, 0.6],
              bound=["upper", "lower"])
    assert amp.sweep(**kw, executor=dask_ex) == amp.sweep(**kw, executor=None)


def test_blas_threads_do_not_move_the_last_bits(dask_ex):
    """RAPPOR's Theorem 5 delta at n = 200, eps = 0.3 differs in its last bits between one and
    two BLAS threads (np.dot sums split by thread; Dask workers use one): every task pins BLAS
    to one thread, so the caller's process and the workers agree."""
    kw = dict(mechanism="rappor", n=[200], eps0=[2.0], eps=[0.3], bound="lower")
    assert amp.sweep(**kw, executor=dask_ex).to_csv() == amp.sweep(**kw, executor=None).to_csv()


def test_an_executor_passed_in_is_not_shut_down():
    with ThreadPoolExecutor(2) as ex:
        t = amp.sweep("krr", k=10, n=[1000, 2000], eps0=2.0, delta=1e-6, executor=ex)
        assert ex.submit(lambda: 7).result() == 7
    assert t == amp.sweep("krr", k=10, n=[1000, 2000], eps0=2.0, delta=1e-6, workers=1)


# ----------------------------------------------------------------------------- the values
def test_rows_are_the_front_doors_answers_without_reuse():
    t = amp.sweep(**GRID, executor=None, reuse=False)
    for r in t:
        with threadpool_limits(limits=1, user_api="blas"):     # as the sweep's tasks
            b = amp.epsilon(_mech(r), r["n"], r["delta"])
        assert (r["lower"], r["upper"], r["method"], r["value"]) == \
            (b.lower, b.upper, b.method, b.value), r


def test_reused_profiles_give_certified_brackets_of_the_same_value(serial):
    """With reuse a row may sit on deeper tables than a lone call: both brackets enclose the
    exact eps of Theorem 4, so they overlap; the first delta of each group is identical."""
    for i, r in enumerate(serial):
        with threadpool_limits(limits=1, user_api="blas"):
            b = amp.epsilon(_mech(r), r["n"], r["delta"])
        assert max(b.lower, r["lower"]) <= min(b.upper, r["upper"]), r
        assert r["upper"] - r["lower"] <= 1e-4 * r["upper"] * (1 + 1e-12)
        if i % 2 == 0:
            assert (r["lower"], r["upper"]) == b.bracket, r


def test_delta_sweep_rows_equal_amp_delta_both_bounds():
    t = amp.sweep(["rappor", ("krr", {"k": 5}), ("blh", {"d": 6})], n=[200], eps0=[2.0],
                  eps=[0.0, 0.3], bound=["upper", "lower"], executor=None)
    assert t.given == "eps" and {r["quantity"] for r in t} == {"delta"}
    for r in t:
        with threadpool_limits(limits=1, user_api="blas"):     # as the sweep's tasks
            b = amp.delta(_mech(r), r["n"], r["eps"], bound=r["bound"])
        assert (r["lower"], r["upper"], r["value"]) == (b.lower, b.upper, b.value), r
        assert r["value"] == (r["lower"] if r["bound"] == "lower" else r["upper"])


def test_lower_rows_stay_below_upper_rows_and_exact_method_agrees():
    """Theorem 5 <= Theorem 4 at every point; the exact-enumeration backend (method='exact',
    an independent oracle at small n) gives an overlapping bracket."""
    kw = dict(mechanism="krr", k=4, n=[30, 60], eps0=[1.5], eps=[0.2, 0.5], executor=None)
    up = amp.sweep(**kw)
    low = amp.sweep(**kw, bound="lower")
    exact = amp.sweep(**kw, method="exact")
    for u, lo, ex in zip(up, low, exact):
        assert lo["lower"] <= u["upper"]
        assert max(u["lower"], ex["lower"]) <= min(u["upper"], ex["upper"]) * (1 + 1e-12)
        assert ex["method"] == "exact"


# ----------------------------------------------------------------------------- failures
def test_a_point_that_cannot_be_certified_is_reported_in_its_row():
    kw = dict(mechanism="krr", k=10, n=[1000], eps0=[2.0, 3.0], delta=[1e-6, 1e-300])
    for t in (amp.sweep(**kw, executor=None), amp.sweep(**kw, workers=2)):
        ok = [r for r in t if r["delta"] == 1e-6]
        bad = [r for r in t if r["delta"] == 1e-300]
        assert len(ok) == 2 and all(r["error"] is None and r["value"] > 0 for r in ok)
        assert len(bad) == 2 and t.failed == bad
        for r in bad:
            assert r["error"].startswith("NumericalError:") and "floor" in r["error"]
            assert r["value"] is None and r["lower"] is None and r["upper"] is None
        assert "2 not certified" in str(t)


BAD = [
    (dict(mechanism="nope"), "mechanism"),
    (dict(mechanism=[]), "mechanism"),
    (dict(mechanism=[("krr", 10)]), "mechanism"),
    (dict(k=None), "k is required"),
    (dict(g=3), "g does not apply"),
    (dict(k=0), "k must be >= 1"),
    (dict(n=0), "n must be >= 1"),
    (dict(n=[]), "n must not be empty"),
    (dict(n=10.5), "n must be an integer"),
    (dict(eps0=-1.0), "eps0 must be > 0"),
    (dict(eps0="2"), "eps0 must be a number"),
    (dict(delta=1.5), "delta must be in"),
    (dict(delta=None), "exactly one of delta"),
    (dict(eps=0.5), "exactly one of delta"),
    (dict(bound="middle"), "bound must be"),
    (dict(bound=[]), "bound must not be empty"),
    (dict(rel_tol=0.0), "rel_tol must be > 0"),
    (dict(method="magic"), "method must be one of"),
    (dict(workers=0), "workers must be >= 1"),
    (dict(executor="threads"), "executor must be"),
    (dict(executor=42), "executor must be"),
    (dict(reuse="yes"), "reuse must be"),
    (dict(progress=3), "progress must be callable"),
]


@pytest.mark.parametrize("change, message", BAD, ids=[m for _, m in BAD])
def test_bad_input_is_refused_naming_the_parameter(change, message):
    kw = dict(mechanism="krr", k=10, n=[100], eps0=[1.0], delta=1e-6, executor=None)
    kw.update(change)
    kw = {k: v for k, v in kw.items() if not (k == "k" and v is None)}
    if "delta" in kw and kw["delta"] is None:
        del kw["delta"]
    with pytest.raises(ParameterError, match=message):
        amp.sweep(**kw)


def test_an_unreachable_scheduler_is_a_parameter_error():
    pytest.importorskip("distributed")
    with pytest.raises(ParameterError, match="no Dask scheduler answers at address"):
        with dask_executor("tcp://127.0.0.1:9", timeout=0.5):
            pass


def test_missing_distributed_names_the_dask_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'amp-shuffle\[dask\]'"):
        with dask_executor():
            pass


# ----------------------------------------------------------------------------- output
def test_csv_json_records_and_text(serial):
    rows = list(csv.DictReader(io.StringIO(serial.to_csv())))
    assert list(rows[0]) == list(serial.columns) and len(rows) == len(serial)
    for got, r in zip(rows, serial):
        assert float(got["value"]) == r["value"] and int(got["n"]) == r["n"]
        assert got["error"] == ""
    recs = json.loads(serial.to_json())
    assert recs == serial.to_records() and set(recs[0]) == set(COLUMNS) - {"given"} | {"delta"}
    text = str(serial).splitlines()
    assert text[0].split() == [c for c in serial.columns if c != "error"]
    assert len(text) == len(serial) + 2 and text[-1] == f"{len(serial)} point(s)"
    value = serial.columns.index("value")
    assert math.isclose(float(text[1].split()[value]), serial.rows[0]["value"], rel_tol=1e-5)


def test_progress_is_reported_per_task():
    seen: list[str] = []
    amp.sweep("krr", k=10, n=[500, 1000], eps0=[1.0, 2.0], delta=1e-6, executor=None,
              progress=seen.append)
    assert seen[-1] == "sweep: 4/4 tasks done (4/4 points)" and len(seen) == 4


# ----------------------------------------------------------------------------- command line
SWEEP_ARGV = ["sweep", "-m", "krr", "--k", "10", "--n", "300", "20000", "--eps0", "1", "4",
              "--delta", "1e-4", "1e-7", "--quiet"]


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_cli_sweep_output_is_the_same_for_any_worker_count(fmt, capsys):
    outs = []
    for w in ("1", "2"):
        assert main([*SWEEP_ARGV, "--format", fmt, "--workers", w]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    expect = amp.sweep("krr", k=10, n=[300, 20_000], eps0=[1, 4], delta=[1e-4, 1e-7],
                       executor=None)
    want = {"table": str(expect) + "\n", "csv": expect.to_csv(),
            "json": expect.to_json() + "\n"}[fmt]
    assert outs[0] == want


def test_cli_sweep_on_a_dask_scheduler(cluster, capsys):
    assert main([*SWEEP_ARGV, "--format", "csv", "--workers", "1"]) == 0
    serial = capsys.readouterr().out
    assert main([*SWEEP_ARGV, "--format", "csv", "--scheduler",
                 cluster.scheduler_address]) == 0
    assert capsys.readouterr().out == serial


def test_cli_sweep_failed_points_exit_3_with_the_table(capsys):
    argv = ["sweep", "-m", "krr", "--k", "10", "--n", "1000", "--eps0", "2",
            "--delta", "1e-6", "1e-300", "--format", "json", "--workers", "1"]
    assert main(argv) == 3
    cap = capsys.readouterr()
    rows = json.loads(cap.out)
    assert rows[0]["error"] is None and rows[1]["error"].startswith("NumericalError")
    *progress, last = cap.err.strip().splitlines()
    assert last == "amp: 1 of 2 points could not be certified (their rows say why)"
    assert all(line.startswith("[amp] sweep: ") for line in progress)   # a slow machine: progress


@pytest.mark.parametrize("extra, message", [
    (["--eps", "0.1"], "not allowed with argument"),
    (["--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "--workers sizes"),
    (["--bound", "clone"], "bound must be"),
    (["--workers", "0"], "workers must be"),
])
def test_cli_sweep_bad_input_exits_2(extra, message, capsys):
    argv = ["sweep", "-m", "krr", "--k", "10", "--n", "100", "--eps0", "1", "--delta",
            "1e-6", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("amp: error:") and message in err and len(err.splitlines()) == 1


# ----------------------------------------------------------------------------- any mechanism
P3 = [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]     # asymmetric 3 x 3 LDP matrix


def test_mechanism_objects_rows_are_the_front_doors_answers():
    m = amp.KRR(2.0, k=5)
    t = amp.sweep(m, n=[300, 3000], delta=[1e-5, 1e-7], reuse=False)
    assert [(r["n"], r["delta"]) for r in t] == [(300, 1e-5), (300, 1e-7), (3000, 1e-5),
                                                 (3000, 1e-7)]
    for r in t:
        assert r["eps0"] == 2.0 and r["params"] == "" and r["mechanism"] == m.describe()
        with threadpool_limits(limits=1, user_api="blas"):
            b = amp.epsilon(m, r["n"], r["delta"])
        assert (r["lower"], r["upper"], r["value"]) == b.bracket + (b.value,), r


def test_a_factory_and_a_registered_name_give_the_same_numbers():
    kw = dict(n=[800], eps0=[1.0, 3.0], delta=[1e-6])
    by_name = amp.sweep("krr", k=6, **kw)
    by_factory = amp.sweep(lambda e: amp.KRR(e, k=6), **kw)
    by_class = amp.sweep([("krr", {"k": 6})], **kw)
    nums = lambda t: [(r["eps0"], r["lower"], r["upper"]) for r in t]  # noqa: E731
    assert nums(by_name) == nums(by_factory) == nums(by_class)
    assert [r["mechanism"] for r in by_factory] == ["6-RR (eps0=1)", "6-RR (eps0=3)"]


def test_a_matrix_as_array_list_or_object_and_the_exact_oracle():
    """The sweep's brackets of an asymmetric matrix at n = 8 against exact enumeration of every
    neighbouring dataset pair (amp.oracles.ground_truth): lower <= max exact <= upper."""
    from itertools import combinations_with_replacement
    from amp.oracles.ground_truth import shuffled_divergence
    eps = [0.1, 0.4, 0.8]
    t = amp.sweep(np.array(P3), n=8, eps=eps, bound=["upper", "lower"])
    assert t == amp.sweep(P3, n=8, eps=eps, bound=["upper", "lower"])
    assert t == amp.sweep([amp.MatrixMechanism(P3)], n=8, eps=eps, bound=["upper", "lower"])
    exact = np.zeros(len(eps))
    for x0 in range(3):
        for x1 in range(3):
            if x0 != x1:
                for others in combinations_with_replacement(range(3), 7):
                    exact = np.maximum(exact, shuffled_divergence(P3, x0, x1, others, eps))
    up, low = t.rows[:3], t.rows[3:]
    for e, u, lo, ex in zip(eps, up, low, exact):
        assert u["bound"] == "upper" and lo["bound"] == "lower" and u["eps"] == e
        assert lo["lower"] <= ex * (1 + 1e-9) and ex <= u["upper"], (e, lo, ex, u)


def test_a_population_uses_its_own_number_of_users():
    pop = amp.Population([(900, amp.KRR(1.0, k=10)), (100, amp.KRR(4.0, k=10))])
    t = amp.sweep(pop, delta=[1e-6])
    assert len(t) == 1 and t.rows[0]["n"] == 1000 and t.rows[0]["eps0"] == pop.eps0
    assert t.rows[0]["upper"] == amp.epsilon(pop, 1000, 1e-6).upper
    assert amp.sweep(pop, n=1000, delta=1e-6) == t
    with pytest.raises(ParameterError, match="population's number of users 1000"):
        amp.sweep(pop, n=500, delta=1e-6)


def test_rounds_and_sampling_are_axes_answered_as_the_front_door():
    pytest.importorskip("dp_accounting", reason="the rounds extra is not installed")
    m = amp.KRR(2.0, k=10)
    t = amp.sweep(m, n=300, delta=1e-6, rounds=[1, 2], sampling=[1.0, 0.5])
    assert [(r["rounds"], r["sampling"]) for r in t] == [(1, 1.0), (1, 0.5), (2, 1.0),
                                                         (2, 0.5)]
    for r in t:
        with threadpool_limits(limits=1, user_api="blas"):
            b = amp.epsilon(m, 300, 1e-6, rounds=r["rounds"], sampling=r["sampling"])
        assert (r["lower"], r["upper"]) == b.bracket, r
    assert t.rows[1]["upper"] < t.rows[0]["upper"] < t.rows[2]["upper"]   # q < 1 helps, T hurts


def test_serial_unless_an_executor_or_workers_is_asked(monkeypatch):
    import concurrent.futures as cf

    class Refused(cf.ProcessPoolExecutor):
        def __init__(self, *a, **k):
            raise AssertionError("a process pool was started")

    monkeypatch.setattr(cf, "ProcessPoolExecutor", Refused)
    kw = dict(mechanism="krr", k=10, n=[300, 600], eps0=1.0, delta=1e-6)
    assert len(amp.sweep(**kw)) == 2 and len(amp.sweep(**kw, workers=1)) == 2
    with pytest.raises(AssertionError, match="process pool was started"):
        amp.sweep(**kw, workers=2)


def test_an_unpicklable_mechanism_is_refused_for_a_process_pool_only():
    class Local(amp.KRR):          # a class local to a function cannot be pickled
        pass

    m = Local(2.0, k=4)
    assert len(amp.sweep(m, n=[200, 400], delta=1e-6)) == 2
    with pytest.raises(ParameterError, match="cannot be sent to the executor"):
        amp.sweep(m, n=[200, 400], delta=1e-6, workers=2)


BAD_FORMS = [
    (dict(mechanism=amp.KRR(1.0, k=3), eps0=1.0), "eps0 comes from the mechanism"),
    (dict(mechanism=np.array(P3), eps0=1.0), "eps0 comes from the mechanism"),
    (dict(mechanism="krr", k=3), "eps0 is required"),
    (dict(mechanism=lambda e: 3, eps0=1.0), "must return an amp mechanism"),
    (dict(mechanism=lambda e: amp.KRR(e), eps0=1.0), "failed at eps0=1"),
    (dict(mechanism=amp.KRR(1.0, k=3), k=3), "apply to registered mechanism names only"),
    (dict(mechanism=np.ones((2, 2, 2))), "mechanism must be"),
    (dict(mechanism=[np.ones((1, 2, 2))]), "LDP matrix must be 2-D"),
    (dict(mechanism=[[0.5, 0.5], [0.4, 0.4]]), "matrix"),
    (dict(mechanism=amp.KRR(1.0, k=3), n=None), "n is required"),
    (dict(mechanism=amp.KRR(1.0, k=3), rounds=0), "rounds must be"),
    (dict(mechanism=amp.KRR(1.0, k=3), rounds=1.0), "rounds must be an integer"),
    (dict(mechanism=amp.KRR(1.0, k=3), sampling=[1.0, 2.0]), "sampling must be in"),
]


@pytest.mark.parametrize("kw, message", BAD_FORMS, ids=[m for _, m in BAD_FORMS])
def test_bad_mechanism_forms_are_refused_before_any_work(kw, message):
    kw = {"n": 100, "delta": 1e-6, **kw}
    with pytest.raises(ParameterError, match=message):
        amp.sweep(**kw)


# ----------------------------------------------------------------------------- pandas
def test_to_pandas_builds_a_frame_of_the_rows(monkeypatch):
    """With a stand-in pandas module: the frame is built from the records, in column order."""
    t = amp.sweep("krr", k=10, n=[300], eps0=1.0, delta=[1e-6, 1e-300])
    seen = {}

    class DataFrame:
        @classmethod
        def from_records(cls, records, columns):
            seen.update(records=records, columns=columns)
            return "frame"

    monkeypatch.setitem(sys.modules, "pandas", type(sys)("pandas"))
    sys.modules["pandas"].DataFrame = DataFrame
    assert t.to_pandas() == "frame"
    assert seen == {"records": t.to_records(), "columns": list(t.columns)}


def test_to_pandas_without_pandas_is_one_clear_import_error(monkeypatch, serial):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"^SweepTable.to_pandas needs pandas, which is not "
                                          r"installed: pip install pandas$"):
        serial.to_pandas()


def test_to_pandas_with_pandas(serial):
    pd = pytest.importorskip("pandas")
    df = serial.to_pandas()
    assert list(df.columns) == list(serial.columns) and len(df) == len(serial)
    assert df["value"].tolist() == [r["value"] for r in serial]
    assert isinstance(df, pd.DataFrame)


# ----------------------------------------------------------------------------- Dask, CLI
def test_dask_runs_objects_factories_and_matrices_as_serial(dask_ex):
    kw = dict(mechanism=[amp.KRR(2.0, k=3), lambda e: amp.KRR(e, k=5), np.array(P3)], n=[300],
              delta=[1e-6], reuse=False)
    assert amp.sweep(**kw, eps0=[2.0], executor=dask_ex) == amp.sweep(**kw, eps0=[2.0])


def _cli_csv(argv, capsys) -> str:
    assert main([*argv, "--format", "csv", "--quiet"]) == 0
    return capsys.readouterr().out


def test_cli_sweep_matrix_population_rounds_sampling(tmp_path, capsys):
    f = tmp_path / "P.csv"
    f.write_text("\n".join(",".join(map(str, row)) for row in P3))
    out = _cli_csv(["sweep", "-m", "matrix", "--matrix", str(f), "--n", "50", "500",
                    "--delta", "1e-6"], capsys)
    api = amp.sweep(amp.MatrixMechanism(P3, name="P.csv"), n=[50, 500], delta=1e-6)
    assert out == api.to_csv()
    pop = tmp_path / "pop.json"
    pop.write_text(json.dumps([{"users": 90, "mechanism": "krr", "eps0": 1, "k": 4},
                               {"users": 10, "mechanism": "krr", "eps0": 2, "k": 4}]))
    out = _cli_csv(["sweep", "-m", "population", "--population", str(pop), "--delta", "1e-3"],
                   capsys)
    (row,) = csv.DictReader(io.StringIO(out))
    assert row["n"] == "100" and row["mechanism"].startswith("population(")  # its own n
    argv = ["sweep", "-m", "krr", "--k", "10", "--eps0", "2", "--n", "300", "--delta",
            "1e-6", "--sampling", "1", "0.5"]
    if importlib.util.find_spec("dp_accounting") is not None:
        argv += ["--rounds", "1", "2"]
    rows = list(csv.DictReader(io.StringIO(_cli_csv(argv, capsys))))
    api = amp.sweep("krr", k=10, eps0=2, n=300, delta=1e-6, sampling=[1, 0.5],
                    rounds=[1, 2] if "--rounds" in argv else 1)
    assert [(int(r["rounds"]), float(r["sampling"]), float(r["upper"])) for r in rows] == \
        [(r["rounds"], r["sampling"], r["upper"]) for r in api]


@pytest.mark.parametrize("extra, message", [
    (["-m", "matrix", "--matrix", "P.csv", "--eps0", "1"], "eps0 comes from the matrix"),
    (["-m", "krr", "--k", "10"], "eps0 is required (--eps0"),
    (["-m", "krr", "--k", "10", "--eps0", "1", "--matrix", "P.csv"], "--matrix does not apply"),
    (["-m", "oue", "--eps0", "1", "--sampling", "0"], "sampling must be"),
    (["-m", "oue", "--eps0", "1", "--rounds", "0"], "rounds must be >= 1"),
])
def test_cli_sweep_new_options_bad_input_exits_2(extra, message, capsys, tmp_path,
                                                 monkeypatch):
    (tmp_path / "P.csv").write_text("\n".join(",".join(map(str, row)) for row in P3))
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *extra, "--n", "100", "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("amp: error:") and message in err and len(err.splitlines()) == 1
