"""scripts/docgen.py loaded as a module, for the tests that compare the generated docs with it."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def _docgen():
    """scripts/docgen.py, the developers' generator of docs/checks.md and docs/cli.md (not in the wheel)."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "docgen.py"
    spec = importlib.util.spec_from_file_location("docgen", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
