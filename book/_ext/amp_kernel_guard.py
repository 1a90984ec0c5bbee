"""A guard against kernel stalls while the book executes its notebooks (issue 33).

nbclient starts a kernel, waits until it is ready, then asks once more for ``kernel_info`` and
waits for that one reply with the *cell* timeout (180 s in ``_config.yml``). With ipykernel 7.4.0
that reply was now and then never received: the build sat silent for the whole timeout (and,
with a longer timeout, for 400 s) before the notebook's first cell, then ran it normally.
``requirements.txt`` pins ipykernel 6.31.0, which removed the stall in
``bench/bench_kernel_stall.py``; this guard keeps a stall, should one come back, short and loud:

* the ``kernel_info`` request is sent again every ``RESEND_EVERY`` seconds while no reply has come
  (the request has no side effect; any of the replies is accepted), so a lost message costs
  seconds, not minutes;
* if none is answered within ``AMP_KERNEL_INFO_TIMEOUT`` seconds (default 60), the build fails
  with one line naming the notebook (:class:`KernelStallError`), instead of a silent wait.

The cause, found later with ipykernel 6.31.0 on a loaded machine (``bench/results/
kernel_stall.txt``): after a widget cell, nbclient received the cell's reply, sent by the kernel
at once (its header's date), only when its wait of the whole cell timeout (180 s; 400 s in a
test with that timeout) ran out. The message was there; the asyncio poll of the client's zmq
socket was not woken for it (``jupyter_client``'s ``AsyncZMQSocketChannel.get_msg`` makes one
``socket.poll(timeout)`` call; a new poll call looks at the socket's state first, a pending one
waits for an edge-triggered wake-up). So the guard also

* slices every wait of the async client's channels into polls of at most ``POLL_SLICE``
  seconds (:func:`sliced_get_msg`): a missed wake-up costs at most that, the overall timeout and
  the result are unchanged (a message when one is ready; ``queue.Empty`` when the timeout ends).

A cell's own wait otherwise keeps nbclient's behaviour and timeout. Loaded by Sphinx as a local
extension (``_config.yml``), which installs it into the build process that runs nbclient
(myst-nb's ``execute_notebooks: force``).
"""
from __future__ import annotations

import os
import time
from queue import Empty
from typing import Any, Callable

RESEND_EVERY = 5.0
#: Longest single poll of a channel's socket (seconds): the most a missed wake-up can cost.
POLL_SLICE = 1.0


class KernelStallError(RuntimeError):
    """No ``kernel_info`` reply from a freshly started kernel within the limit."""


def kernel_info_limit() -> float:
    """Seconds to wait for a ``kernel_info`` reply (``$AMP_KERNEL_INFO_TIMEOUT``, default 60)."""
    raw = os.environ.get("AMP_KERNEL_INFO_TIMEOUT", "60")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"AMP_KERNEL_INFO_TIMEOUT must be a number of seconds, got {raw!r}")
    if not value > 0:
        raise ValueError(f"AMP_KERNEL_INFO_TIMEOUT must be > 0, got {raw!r}")
    return value


async def wait_for_kernel_info(client: Any, msg_id: str, where: str,
                               limit: float | None = None, resend_every: float = RESEND_EVERY,
                               poll: float = 1.0) -> dict:
    """The reply to ``kernel_info`` request ``msg_id`` (or to a re-sent one) on ``client.kc``.

    Raises :class:`KernelStallError` naming ``where`` when none arrives within ``limit`` seconds.
    """
    from nbclient.util import ensure_async

    limit = kernel_info_limit() if limit is None else limit
    kc = client.kc
    asked = {msg_id}
    start = last = time.monotonic()
    while True:
        try:
            msg = await ensure_async(kc.shell_channel.get_msg(timeout=poll))
        except Empty:
            await client._async_check_alive()
        else:
            if msg.get("parent_header", {}).get("msg_id") in asked:
                return msg
        now = time.monotonic()
        if now - start >= limit:
            raise KernelStallError(
                f"{where}: the kernel sent no kernel_info reply within {limit:.0f} s "
                f"({len(asked)} requests); a kernel stall, not a slow cell "
                f"(see book/_ext/amp_kernel_guard.py)")
        if now - last >= resend_every:
            asked.add(await ensure_async(kc.kernel_info()))
            last = now


async def sliced_get_msg(self, timeout: float | None = None) -> dict:
    """``AsyncZMQSocketChannel.get_msg`` with its one ``socket.poll(timeout)`` cut into polls of
    at most :data:`POLL_SLICE` seconds: the next message as soon as a poll sees it, else
    ``queue.Empty`` once ``timeout`` seconds have passed (``None``: wait for ever, as before;
    ``0``: one look, as before)."""
    assert self.socket is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = POLL_SLICE if deadline is None else max(0.0, deadline - time.monotonic())
        if await self.socket.poll(int(min(POLL_SLICE, left) * 1000)):
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


def install_sliced_polls() -> None:
    """Install :func:`sliced_get_msg` on ``jupyter_client``'s async channel (idempotent)."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    if getattr(AsyncZMQSocketChannel, "_amp_sliced", False):
        return
    AsyncZMQSocketChannel._amp_original_get_msg = AsyncZMQSocketChannel.get_msg
    AsyncZMQSocketChannel.get_msg = sliced_get_msg
    AsyncZMQSocketChannel._amp_sliced = True


def install(where: Callable[[], str] = lambda: "a notebook") -> None:
    """Route nbclient's ``kernel_info`` wait through :func:`wait_for_kernel_info`, and every
    wait of the async channels through :func:`sliced_get_msg` (idempotent)."""
    from nbclient import NotebookClient
    from nbclient.util import run_sync

    install_sliced_polls()
    if getattr(NotebookClient, "_amp_kernel_guard", False):
        return
    original = NotebookClient.async_wait_for_reply

    async def async_wait_for_reply(self, msg_id, cell=None):
        if cell is not None:        # a cell's reply: nbclient's own wait and timeout
            return await original(self, msg_id, cell)
        return await wait_for_kernel_info(self, msg_id, where())   # the kernel_info reply

    NotebookClient.async_wait_for_reply = async_wait_for_reply
    NotebookClient.wait_for_reply = run_sync(async_wait_for_reply)
    NotebookClient._amp_kernel_guard = True


def setup(app):
    def where() -> str:
        env = getattr(app, "env", None)
        docname = getattr(env, "docname", None) if env is not None else None
        return f"{docname}.ipynb" if docname else "a notebook"

    kernel_info_limit()         # a malformed $AMP_KERNEL_INFO_TIMEOUT fails at start, not later
    install(where)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
