"""``python -m amp``: see :mod:`amp.cli`."""

from .cli import main

raise SystemExit(main())
