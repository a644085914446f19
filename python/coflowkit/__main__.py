"""``python -m coflowkit``: the same as the ``coflowkit`` command."""

from coflowkit.cli import main

raise SystemExit(main())
