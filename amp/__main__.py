"""``python -m amp``: see :mod:`amp.cli`."""

from amp.cli import main

raise SystemExit(main())
