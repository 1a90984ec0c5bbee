#!/usr/bin/env python3
"""Start the live app's Voila server with the book's kernel guard installed (issue 33).

Voila executes each page's notebook in its own server process through nbclient, with
``jupyter_client``'s asyncio channels: the same client whose single ``socket.poll(timeout)``
sometimes misses its wake-up and then waits out the whole timeout although the kernel's reply
is already there (the stall of ``bench/results/kernel_stall.txt``). The book build avoids it with
``book/_ext/amp_kernel_guard.py``, which Sphinx loads into its own process; that does not reach
Voila's. This launcher installs the guard's sliced polls
(:func:`amp_kernel_guard.install_sliced_polls`: every wait of the async channels cut into polls
of at most ``POLL_SLICE`` = 1 s, so a missed wake-up costs at most a second, with the same
overall timeout and the same messages), then runs Voila with the arguments it was given::

    .venv-live/bin/python scripts/live/serve.py _build/live/app --port=8866 ...   # as `voila ...`

``make live`` and the live app's browser check (``tests/test_live.py``) start Voila this way.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXT = Path(__file__).resolve().parents[2] / "book" / "_ext"


def install_guard() -> None:
    """Install the kernel guard's sliced polls into this process (idempotent)."""
    if str(EXT) not in sys.path:
        sys.path.insert(0, str(EXT))
    import amp_kernel_guard

    amp_kernel_guard.install_sliced_polls()


def main(argv: list[str] | None = None) -> int:
    """Install the guard, then run Voila's own entry point on ``argv`` (default: ``sys.argv``)."""
    install_guard()
    from voila.app import main as voila_main     # imported after the guard, from .venv-live

    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    return voila_main() or 0


if __name__ == "__main__":
    sys.exit(main())
