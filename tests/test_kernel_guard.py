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
