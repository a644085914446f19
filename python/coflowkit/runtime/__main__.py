"""``python -m coflowkit.runtime coordinator|agent ...``: the runtime as a child process."""

from coflowkit.runtime import main

raise SystemExit(main())
