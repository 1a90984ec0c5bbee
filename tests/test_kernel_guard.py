"""The book build's kernel guard (``book/_ext/amp_kernel_guard.py``, issue 33).

A lost ``kernel_info`` reply must cost seconds (the request is re-sent) and a kernel that never
answers must fail with one line naming the notebook, within the limit: checked on a fake kernel
client that loses replies on purpose, then on a real kernel through nbclient.
"""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from queue import Empty

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import amp_kernel_guard as guard  # noqa: E402


class FakeKernelClient:
    """Answers only the kernel_info request number ``answer`` (0 = the first); None: never."""

    def __init__(self, answer: int | None, noise: bool = False):
        self.answer = answer
        self.noise = noise
        self.sent: list[str] = []
        self.shell_channel = self

    def kernel_info(self) -> str:
        self.sent.append(f"req-{len(self.sent)}")
        return self.sent[-1]

    def get_msg(self, timeout: float):
        if self.noise:                      # a stale reply to a request nobody waits for
            self.noise = False
            return {"parent_header": {"msg_id": "someone-else"}, "content": {}}
        if self.answer is not None and len(self.sent) > self.answer:
            return {"parent_header": {"msg_id": self.sent[self.answer]},
                    "content": {"language_info": {"name": "python"}}}
        time.sleep(min(timeout, 0.01))
        raise Empty


class FakeNotebookClient:
    def __init__(self, kc):
        self.kc = kc
        self.alive_checks = 0

    async def _async_check_alive(self):
        self.alive_checks += 1


def _wait(kc, limit=0.6, resend_every=0.05):
    client = FakeNotebookClient(kc)
    first = kc.kernel_info()
    t0 = time.monotonic()
    msg = asyncio.run(guard.wait_for_kernel_info(client, first, "book/07_experiments.ipynb",
                                                 limit=limit, resend_every=resend_every,
                                                 poll=0.01))
    return msg, time.monotonic() - t0, client


def test_a_lost_reply_is_asked_again():
    kc = FakeKernelClient(answer=2)         # the first two requests are lost
    msg, took, client = _wait(kc)
    assert msg["parent_header"]["msg_id"] == "req-2"
    assert len(kc.sent) == 3 and took < 0.6
    assert client.alive_checks > 0          # a dead kernel is still detected while waiting


def test_the_first_reply_is_taken_at_once():
    kc = FakeKernelClient(answer=0, noise=True)     # a stale reply first: ignored
    msg, took, _ = _wait(kc)
    assert msg["parent_header"]["msg_id"] == "req-0" and kc.sent == ["req-0"]


def test_a_kernel_that_never_answers_fails_in_one_line_naming_the_notebook():
    kc = FakeKernelClient(answer=None)
    t0 = time.monotonic()
    with pytest.raises(guard.KernelStallError) as info:
        _wait(kc, limit=0.3)
    took = time.monotonic() - t0
    text = str(info.value)
    assert "book/07_experiments.ipynb" in text and "kernel_info" in text and "\n" not in text
    assert 0.3 <= took < 1.5
    assert len(kc.sent) > 2                 # it kept asking before it gave up


@pytest.mark.parametrize("raw", ["0", "-5", "soon"])
def test_a_bad_limit_is_refused(monkeypatch, raw):
    monkeypatch.setenv("AMP_KERNEL_INFO_TIMEOUT", raw)
    with pytest.raises(ValueError, match="AMP_KERNEL_INFO_TIMEOUT"):
        guard.kernel_info_limit()


def test_the_book_loads_the_guard():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"].get("amp_kernel_guard") == "book/_ext"


def test_a_real_notebook_runs_under_the_guard():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    guard.install(lambda: "tiny.ipynb")
    guard.install(lambda: "tiny.ipynb")     # idempotent
    assert nbclient.NotebookClient._amp_kernel_guard
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert nb.metadata["language_info"]["name"] == "python"    # the kernel_info reply arrived
    assert nb.cells[0].outputs[0]["text"].strip() == "42"


class MissedWakeupSocket:
    """A zmq socket as the asyncio poll saw it in the stall: a message that arrives while a poll
    is pending does not wake that poll (it returns only when its own timeout ends); a new poll
    sees it at once."""

    def __init__(self, arrives_after: float | None):
        self.t0 = time.monotonic()
        self.arrives_after = arrives_after
        self.polls: list[int] = []

    def _ready(self) -> bool:
        return self.arrives_after is not None and \
            time.monotonic() - self.t0 >= self.arrives_after

    async def poll(self, timeout_ms):
        self.polls.append(timeout_ms)
        if self._ready():
            return 1
        await asyncio.sleep((timeout_ms or 0) / 1000)
        return int(self._ready())


class FakeChannel:
    def __init__(self, socket):
        self.socket = socket

    async def _recv(self):
        return {"parent_header": {"msg_id": "cell-25"}, "content": {"status": "ok"}}


def _sliced(socket, timeout):
    t0 = time.monotonic()
    try:
        msg = asyncio.run(guard.sliced_get_msg(FakeChannel(socket), timeout=timeout))
    except Empty:
        msg = None
    return msg, time.monotonic() - t0


def test_a_missed_wakeup_costs_one_slice_not_the_timeout(monkeypatch):
    monkeypatch.setattr(guard, "POLL_SLICE", 0.1)
    from jupyter_client.channels import AsyncZMQSocketChannel
    guard.install_sliced_polls()
    original = AsyncZMQSocketChannel._amp_original_get_msg   # jupyter_client's own get_msg
    t0 = time.monotonic()            # the model reproduces the stall with the plain channel
    assert asyncio.run(original(FakeChannel(MissedWakeupSocket(0.05)), timeout=1.0))
    assert time.monotonic() - t0 >= 0.95
    msg, took = _sliced(MissedWakeupSocket(0.05), timeout=1.0)
    assert msg["parent_header"]["msg_id"] == "cell-25" and took < 0.5


def test_sliced_polls_keep_the_timeout_and_the_quick_answers(monkeypatch):
    monkeypatch.setattr(guard, "POLL_SLICE", 0.1)
    msg, took = _sliced(MissedWakeupSocket(None), timeout=0.35)     # nothing comes: Empty
    assert msg is None and 0.35 <= took < 0.8
    sock = MissedWakeupSocket(0.0)                                  # already there: one look
    msg, took = _sliced(sock, timeout=0)
    assert msg is not None and sock.polls == [0]
    sock = MissedWakeupSocket(None)
    msg, _ = _sliced(sock, timeout=0)                               # timeout 0: one look
    assert msg is None and sock.polls == [0]
    assert all(ms <= 100 for ms in MissedWakeupSocket(None).polls + sock.polls)


def test_the_guard_installs_the_sliced_polls():
    from jupyter_client.channels import AsyncZMQSocketChannel
    guard.install(lambda: "tiny.ipynb")
    assert AsyncZMQSocketChannel.get_msg is guard.sliced_get_msg


def _serve_module():
    from helpers import load_script
    return load_script(ROOT / "scripts" / "live" / "serve.py", "live_serve")


def test_the_live_app_runs_voila_with_the_sliced_polls(monkeypatch):
    """``scripts/live/serve.py`` installs the sliced polls into Voila's process before Voila
    starts (a fake ``voila.app`` records what it saw), and passes its arguments on."""
    import types
    from jupyter_client.channels import AsyncZMQSocketChannel

    if getattr(AsyncZMQSocketChannel, "_amp_sliced", False):      # start from jupyter_client's
        monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg",
                            AsyncZMQSocketChannel._amp_original_get_msg)
        monkeypatch.setattr(AsyncZMQSocketChannel, "_amp_sliced", False)
    assert AsyncZMQSocketChannel.get_msg is not guard.sliced_get_msg
    seen = {}

    def fake_voila_main():
        seen["get_msg"] = AsyncZMQSocketChannel.get_msg
        seen["argv"] = list(sys.argv[1:])
        return 0

    fake_app = types.ModuleType("voila.app")
    fake_app.main = fake_voila_main
    monkeypatch.setitem(sys.modules, "voila", types.ModuleType("voila"))
    monkeypatch.setitem(sys.modules, "voila.app", fake_app)
    monkeypatch.setattr(sys, "argv", ["serve.py"])
    assert _serve_module().main(["app", "--port=1"]) == 0
    assert seen["argv"] == ["app", "--port=1"]
    assert getattr(seen["get_msg"], "__name__", "") == "sliced_get_msg"


def test_make_live_and_its_check_start_voila_through_the_guard():
    make = (ROOT / "Makefile").read_text()
    live_rule = make.split("\nlive:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/live/serve.py" in live_rule and "/voila " not in live_rule
    assert 'serve.py"' in (ROOT / "tests" / "test_live.py").read_text()
