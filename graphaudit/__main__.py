"""``python -m graphaudit``: the command line (see :mod:`graphaudit.cli` and ``docs/cli.md``)."""

from __future__ import annotations

import sys

from graphaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
