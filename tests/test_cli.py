"""The command line contract (python -m amp ...)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from amp import api as B
from amp.cli import main
from amp.mechanisms import KRR


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amp", *args], capture_output=True, text=True,
                          timeout=300)


def test_delta_json_matches_api():
    p = run_cli("delta", "--mechanism", "krr", "--k", "10", "--eps0", "4", "--n", "1000",
                "--eps", "1", "--json")
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    api = B.delta(KRR(4.0, k=10), 1000, 1.0)
    assert ans["value"] == pytest.approx(api.value, rel=1e-12)
    lo, hi = ans["bracket"]
    assert lo <= ans["value"] <= hi
    assert ans["n"] == 1000 and ans["eps"] == 1.0 and ans["bound"] == "upper"


def test_epsilon_lower_and_readable_output(capsys):
    assert main(["epsilon", "-m", "rappor", "--eps0", "2", "--n", "500", "--delta", "1e-4",
                 "--bound", "lower", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "eps =" in out and "bound: lower" in out


def test_eps0_command(capsys):
    assert main(["eps0", "-m", "krr", "--k", "10", "--n", "1000", "--eps", "1",
                 "--delta", "1e-6", "--json"]) == 0
    ans = json.loads(capsys.readouterr().out)
    assert ans["quantity"] == "eps0" and ans["bracket"][0] == ans["value"]
    assert B.delta(KRR(ans["value"], k=10), 1000, 1.0).upper <= 1e-6


def test_matrix_file(tmp_path, capsys):
    M = KRR(1.0, k=4).matrix()
    for suffix in (".csv", ".npy", ".json"):
        f = tmp_path / f"m{suffix}"
        if suffix == ".csv":
            np.savetxt(f, M, delimiter=",")
        elif suffix == ".npy":
            np.save(f, M)
        else:
            f.write_text(json.dumps(M.tolist()))
        assert main(["delta", "-m", "matrix", "--matrix", str(f), "--n", "50", "--eps", "0.3",
                     "--json"]) == 0
        ans = json.loads(capsys.readouterr().out)
        assert ans["value"] == pytest.approx(B.delta(KRR(1.0, k=4), 50, 0.3).value, rel=1e-6)


@pytest.mark.parametrize("args, word", [
    (["delta", "-m", "krr", "--k", "1", "--eps0", "1", "--n", "10", "--eps", "1"], "k"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "-1", "--n", "10", "--eps", "1"], "eps0"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "nan", "--n", "10", "--eps", "1"], "eps0"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "0", "--eps", "1"], "n"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--eps", "-1"], "eps"),
    (["epsilon", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--delta", "2"],
     "delta"),
    (["epsilon", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--delta", "0"],
     "delta"),
    (["delta", "-m", "nope", "--eps0", "1", "--n", "10", "--eps", "1"], "mechanism"),
    (["delta", "-m", "krr", "--eps0", "1", "--n", "10", "--eps", "1"], "k"),
    (["delta", "-m", "krr", "--k", "1", "--eps0", "1", "--n", "10", "--eps", "1",
      "--bound", "lower"], "k"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "1e6", "--n", "10", "--eps", "1"], "eps0"),
    (["delta", "-m", "matrix", "--matrix", "/nonexistent.csv", "--n", "10", "--eps", "1"],
     "matrix"),
    (["delta", "-m", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--eps", "1",
      "--bound", "magic"], "bound"),
    (["delta", "-m", "olh", "--eps0", "1", "--n", "10", "--eps", "1"], "g"),
])
def test_bad_input_exits_2_with_one_line(args, word):
    p = run_cli(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in p.stderr


def test_bad_matrix_contents(tmp_path):
    f = tmp_path / "bad.csv"
    np.savetxt(f, np.array([[0.5, 0.6], [0.5, 0.5]]), delimiter=",")
    p = run_cli("delta", "-m", "matrix", "--matrix", str(f), "--n", "10", "--eps", "1")
    assert p.returncode == 2 and "sum to 1" in p.stderr
    f.write_text("not,a,number\n")
    p = run_cli("delta", "-m", "matrix", "--matrix", str(f), "--n", "10", "--eps", "1")
    assert p.returncode == 2 and "matrix" in p.stderr


def test_baselines_and_stronger_clone_warning():
    p = run_cli("epsilon", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "100000",
                "--delta", "1e-6", "--bound", "clone", "--json")
    ans = json.loads(p.stdout)
    # the clone code's README example: numerical bracket [0.1675, 0.1728]
    assert 0.1675 <= ans["value"] <= 0.1728 and "bracket" in ans
    p = run_cli("epsilon", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "100000",
                "--delta", "1e-6", "--bound", "clone-closed", "--json")
    assert json.loads(p.stdout)["value"] == pytest.approx(0.5378, abs=1e-3)
    p = run_cli("delta", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "1000",
                "--eps", "1", "--bound", "stronger-clone", "--json")
    assert p.returncode == 0 and "NOT a valid" in p.stderr
    assert json.loads(p.stdout)["certified"] is False


def test_readme_examples_run():
    """Every `python -m amp ...` line in the README runs and exits 0."""
    import pathlib
    import shlex
    text = pathlib.Path(__file__).resolve().parents[1].joinpath("README.md").read_text()
    cmds = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("python -m amp ")]
    assert cmds, "README shows no CLI example"
    for c in cmds:
        p = run_cli(*shlex.split(c)[3:])
        assert p.returncode == 0, (c, p.stderr)


def test_method_option_forces_and_reports_the_path(capsys):
    assert main(["delta", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "2000", "--eps",
                 "0.5", "--method", "fft", "--json"]) == 0
    fft = json.loads(capsys.readouterr().out)
    assert fft["method"] == "fft"
    assert main(["delta", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "2000", "--eps",
                 "0.5", "--json"]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert auto["method"] == "structured"
    assert auto["bracket"][0] <= fft["bracket"][1] and fft["bracket"][0] <= auto["bracket"][1]
    # the Theorem 5 laws of Table 1 rows have a structured path too (issue 12 part 3): its
    # bracket and the FFT's enclose the same exact value
    low = {}
    for m in ("structured", "fft"):
        assert main(["delta", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "2000", "--eps",
                     "0.5", "--bound", "lower", "--method", m, "--json"]) == 0
        low[m] = json.loads(capsys.readouterr().out)
        assert low[m]["method"] == m
    (a, b), (c, d) = low["structured"]["bracket"], low["fft"]["bracket"]
    assert max(a, c) <= min(b, d)
    assert main(["delta", "-m", "krr", "--k", "10", "--eps0", "4", "--n", "2000", "--eps",
                 "0.5", "--bound", "hoeffding", "--method", "fft"]) == 2


def test_missing_extra_is_one_line_not_an_internal_error(monkeypatch, capsys):
    """Without dp-accounting, --rounds says which extra to install (exit 3), in one line."""
    import importlib

    from amp import cli
    from amp.core import extras

    real = importlib.import_module

    def fake(name, *a, **k):
        if name.startswith("dp_accounting"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    monkeypatch.setattr(extras.importlib, "import_module", fake)
    rc = cli.main(["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "2", "--n", "1000",
                   "--delta", "1e-6", "--rounds", "3", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 3 and err.count("\n") == 1 and "amp-shuffle[rounds]" in err
    assert "internal error" not in err


# ----------------------------------------------------------------------------- --workers
def test_workers_on_a_matrix_gives_the_same_answer(tmp_path, capsys):
    rng = np.random.default_rng(7)
    M = rng.uniform(1.0, np.e ** 1.5, size=(5, 5))
    f = tmp_path / "m.npy"
    np.save(f, M / M.sum(axis=1, keepdims=True))
    outs = []
    for extra in ([], ["--workers", "1"], ["--workers", "2"]):
        assert main(["epsilon", "-m", "matrix", "--matrix", str(f), "--n", "300",
                     "--delta", "1e-5", "--json", *extra]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2]
    ans = json.loads(outs[0])
    assert set(ans) == {"quantity", "bound", "mechanism", "n", "delta", "value", "bracket",
                        "method", "rounds", "sampling",
                        "side"}   # the JSON contract; "side" (which end is value): issue #26


def test_workers_needs_a_core_bound(capsys):
    assert main(["delta", "-m", "krr", "--k", "10", "--eps0", "1", "--n", "100", "--eps",
                 "0.1", "--bound", "clone", "--workers", "2"]) == 2
    assert "--workers applies to --bound upper|lower only" in capsys.readouterr().err


def test_sweep_is_a_subcommand():
    from amp.cli import build_parser
    args = build_parser().parse_args(["sweep", "-m", "oue", "--n", "10", "20", "--eps0", "1",
                                      "--eps", "0.5", "--format", "csv"])
    assert args.command == "sweep" and args.n == [10, 20] and args.eps == [0.5]
    assert args.delta is None and args.format == "csv" and args.bound == ["upper"]
