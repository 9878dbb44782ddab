"""graphaudit: find the silent accuracy bugs of MindSpore networks before training.

The pipeline is capture → evidence → checks → report/draw (``docs/architecture.md``):

- :func:`to_networkx` captures a ``mindspore.nn.Cell`` (and optionally one traced
  forward pass) as a ``networkx.MultiDiGraph`` whose vocabulary is in :mod:`graphaudit.graph`;
- :func:`audit` gathers the evidence every check needs (:mod:`graphaudit.evidence`), runs
  every check (:mod:`graphaudit.checks`, listed in ``docs/checks.md``) and returns a
  :class:`Report` of :class:`Finding` records;
- :func:`render` and ``Report.render`` draw the graph with Graphviz (:mod:`graphaudit.draw`).

``import graphaudit`` is light: MindSpore is imported when the first network is captured.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> g = graphaudit.to_networkx(nn.Dense(3, 2))
    >>> g.number_of_nodes()
    3
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graphaudit.errors import (
    AuditFailed,
    ForwardError,
    GraphAuditError,
    InputError,
    NotACellError,
    SpecError,
)
from graphaudit.findings import Finding
from graphaudit.version import __version__

if TYPE_CHECKING:
    from graphaudit.callback import AuditCallback
    from graphaudit.capture import to_networkx
    from graphaudit.graph.summary import summarize
    from graphaudit.report import Report
    from graphaudit.report.render import render
    from graphaudit.runner import audit
    from graphaudit.runner.data import audit_dataset
    from graphaudit.spec import Spec
    from graphaudit.watch import Watch, WatchFailed, watch

__all__ = [
    "AuditCallback",
    "AuditFailed",
    "Finding",
    "ForwardError",
    "GraphAuditError",
    "InputError",
    "NotACellError",
    "Report",
    "Spec",
    "SpecError",
    "Watch",
    "WatchFailed",
    "__version__",
    "audit",
    "audit_dataset",
    "render",
    "summarize",
    "to_networkx",
    "watch",
]

# Loaded on first use, so that `import graphaudit` and `graphaudit --help` do not import MindSpore.
_LAZY = {
    "AuditCallback": "graphaudit.callback",
    "audit": "graphaudit.runner",
    "audit_dataset": "graphaudit.runner.data",
    "to_networkx": "graphaudit.capture",
    "render": "graphaudit.report.render",
    "Report": "graphaudit.report",
    "Spec": "graphaudit.spec",
    "summarize": "graphaudit.graph.summary",
    "Watch": "graphaudit.watch",
    "WatchFailed": "graphaudit.watch",
    "watch": "graphaudit.watch",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphaudit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
