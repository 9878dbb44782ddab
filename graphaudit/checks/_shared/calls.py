"""Which cells the traced forward pass never reached, and which are meant for one mode only (GA301, GA302).

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.checks.context import AuditContext
    >>> class Net(nn.Cell):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.used, self.spare = nn.Dense(2, 2), nn.Dense(2, 2)
    ...     def construct(self, x):
    ...         return self.used(x)
    >>> never_called_cells(AuditContext.build(Net(), inputs=Tensor(np.ones((1, 2), np.float32))))
    ['cell:spare']
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["mode_guard", "never_called_cells"]


def _children(ctx: AuditContext, cell_node: str) -> list[str]:
    return [t for t, _ in g.edges_out(ctx.graph, cell_node, g.CONTAINS)]


def _parents(ctx: AuditContext, cell_node: str) -> list[str]:
    return [s for s, _ in g.edges_in(ctx.graph, cell_node, g.CONTAINS)]


def _used(ctx: AuditContext, cell_node: str, memo: dict[str, tuple[bool, bool]]) -> tuple[bool, bool]:
    """``(used, holds_parameters)`` for a cell and everything inside it.

    *used*: the cell or a cell inside it was called, or one of their parameters was read.
    """
    if cell_node in memo:
        return memo[cell_node]
    memo[cell_node] = (True, False)  # a containment cycle: assume used, never report it
    graph = ctx.graph
    used = bool(g.calls_of(graph, cell_node))
    params = [t for t, _ in g.edges_out(graph, cell_node, g.OWNS)]
    holds = bool(params)
    used = used or any(g.edges_out(graph, p, g.READS) for p in params)
    for child in _children(ctx, cell_node):
        child_used, child_holds = _used(ctx, child, memo)
        used, holds = used or child_used, holds or child_holds
    memo[cell_node] = (used, holds)
    return used, holds


def never_called_cells(ctx: AuditContext) -> list[str]:
    """The outermost cell nodes holding parameters that the traced pass never touched.

    A cell is reported when neither it nor any cell inside it was called and none of their
    parameters was read; a cell inside one already reported is not reported again. Computed
    once per audit (GA301 and GA302 both ask).
    """
    return ctx.shared(_never_called_cells)


def _never_called_cells(ctx: AuditContext) -> list[str]:
    memo: dict[str, tuple[bool, bool]] = {}
    idle = set()
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        used, holds = _used(ctx, node, memo)
        if holds and not used:
            idle.add(node)
    return [
        node
        for node, _ in g.nodes_of_kind(ctx.graph, g.CELL)
        if node in idle and not any(parent in idle for parent in _parents(ctx, node))
    ]


def mode_guard(ctx: AuditContext, node: str) -> tuple[bool, str] | None:
    """``(training, where)`` when the cell at *node* is only called under ``if self.training``.

    Reads the source of the construct of the cell holding it: when every call of
    ``self.<attribute>`` there sits in a branch taken only when ``self.training`` is
    ``training`` (``if self.training:`` / ``if not self.training:`` and their ``else``), the
    cell is meant for that mode only (an auxiliary head, an inference-time decoder). ``None``
    when it is called unconditionally, not called there at all, or the source is unreadable.
    """
    graph = ctx.graph
    parents = [(s, d["name"]) for s, d in g.edges_in(graph, node, g.CONTAINS)]
    for parent, attribute in parents:
        found = _guards(type(ctx.structure.cells[parent]), attribute)
        if found is not None and len(set(found)) == 1 and None not in found:
            owner = type(ctx.structure.cells[parent]).__name__
            return bool(found[0]), f"{owner}.construct"
    return None


@functools.cache
def _guards(cls: type, attribute: str) -> tuple[bool | None, ...] | None:
    """The ``self.training`` value guarding each call of ``self.<attribute>`` in ``cls.construct``."""
    from graphaudit.capture.compilation.jit import python_function

    construct = python_function(getattr(cls, "construct", None))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(construct)))
    except (OSError, TypeError, SyntaxError):
        return None
    found: list[bool | None] = []

    def visit(node: ast.AST, guard: bool | None) -> None:
        if isinstance(node, ast.If):
            taken, other = _branch_guards(node.test)
            visit(node.test, guard)
            for child in node.body:
                visit(child, taken if taken is not None else guard)
            for child in node.orelse:
                visit(child, other if other is not None else guard)
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == attribute
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ):
            found.append(guard)
        for child in ast.iter_child_nodes(node):
            visit(child, guard)

    visit(tree, None)
    return tuple(found) if found else None


def _branch_guards(test: ast.expr) -> tuple[bool | None, bool | None]:
    """The ``self.training`` value each branch of ``if test:`` is taken with only (``None``: either).

    ``if self.training and self.aux_logits:`` (Inception-v3's auxiliary head) runs its body in
    training only, and its ``else`` in either mode; ``if self.training or x:`` the reverse.
    """
    condition = _training_test(test)
    if condition is not None:
        return condition, not condition
    if isinstance(test, ast.BoolOp):
        values = [_training_test(value) for value in test.values]
        known = [v for v in values if v is not None]
        if len(set(known)) == 1:
            return (known[0], None) if isinstance(test.op, ast.And) else (None, not known[0])
    return None, None


def _training_test(test: ast.expr) -> bool | None:
    """``True`` for ``self.training``, ``False`` for ``not self.training``, else ``None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _training_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Attribute) and test.attr == "training":
        return True
    return None
