"""graphaudit: find the silent structural accuracy bugs of MindSpore networks.

The pipeline is capture → graph → checks → report/render:

- :func:`to_networkx` captures a ``mindspore.nn.Cell`` (and optionally one traced
  forward pass) as a ``networkx.MultiDiGraph`` whose vocabulary is in :mod:`graphaudit.graph`;
- :func:`audit` runs every check (:mod:`graphaudit.checks`, listed in ``docs/checks.md``)
  and returns a :class:`Report` of :class:`Finding` records;
- :func:`render` and ``Report.render`` draw the graph with Graphviz (:mod:`graphaudit.draw`).

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> g = graphaudit.to_networkx(nn.Dense(3, 2))
    >>> g.number_of_nodes()
    3
"""

from __future__ import annotations

__version__ = "0.1.0"

from graphaudit.audit import audit
from graphaudit.capture import to_networkx
from graphaudit.draw import render
from graphaudit.errors import ForwardError, GraphAuditError, InputError, NotACellError, SpecError
from graphaudit.findings import Finding
from graphaudit.report import Report
from graphaudit.spec import Spec
from graphaudit.summary import summarize

__all__ = [
    "Finding",
    "ForwardError",
    "GraphAuditError",
    "InputError",
    "NotACellError",
    "Report",
    "Spec",
    "SpecError",
    "__version__",
    "audit",
    "render",
    "summarize",
    "to_networkx",
]
