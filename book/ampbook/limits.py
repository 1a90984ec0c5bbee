"""Limits of a widget's computation: a forked child process with a time and memory cap.

Shared by :mod:`ampbook.widgets` (chapter 1's certified points, the live calculator) and
:mod:`ampbook.rounds` (chapter 11's widget), which re-exports these names. A setting the
engine cannot answer on the machine costs at most the timeout and never grows the kernel.
"""

from __future__ import annotations

import multiprocessing
import os

__all__ = ["WIDGET_TIMEOUT", "WIDGET_MEMORY", "WidgetLimitError", "run_limited"]

#: A redraw runs in a child process stopped after this many seconds ...
WIDGET_TIMEOUT = 60.0
#: ... or when it asks for this many bytes of address space beyond the kernel's own.
WIDGET_MEMORY = 2 * 1024 ** 3


class WidgetLimitError(RuntimeError):
    """A widget computation stopped at its time or memory limit (:func:`run_limited`)."""


def _address_space() -> int:
    """This process's virtual memory size in bytes (0 where ``/proc`` is unavailable)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_limited(func, *args, timeout: float = WIDGET_TIMEOUT, memory: int = WIDGET_MEMORY,
                **kwargs):
    """``func(*args, **kwargs)`` in a forked child process limited to ``timeout`` seconds and
    ``memory`` bytes of address space beyond the parent's; returns its result or re-raises its
    exception. A child over the time limit is killed and :class:`WidgetLimitError` raised; over
    the memory limit it fails with :class:`MemoryError` (re-raised here). So a widget setting
    the engine cannot answer costs at most ``timeout`` seconds and never grows the kernel.
    Where ``fork`` is unavailable the call runs in-process, unlimited."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return func(*args, **kwargs)          # pragma: no cover - not on Linux
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    limit = _address_space() + int(memory)

    def child() -> None:
        try:
            import resource
            if limit > int(memory):
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            send.send(("ok", func(*args, **kwargs)))
        except BaseException as exc:          # noqa: BLE001 - handed to the parent
            try:
                send.send(("error", exc))
            except Exception:                 # noqa: BLE001 - an exception that cannot pickle
                send.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        finally:
            os._exit(0)

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(timeout):
            raise WidgetLimitError(f"stopped after {timeout:g} s: this setting takes too long "
                                   "for the widget; choose a smaller n or a larger ε₀")
        try:
            kind, value = receive.recv()
        except EOFError:
            raise WidgetLimitError("the computation ended without an answer (out of memory?)")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
    if kind == "error":
        raise value
    return value
