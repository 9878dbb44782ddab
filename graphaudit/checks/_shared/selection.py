"""Cells of a container that the owner's construct calls only as a random draw or the data choose (GA301).

Two patterns leave a cell out of one forward pass by design, with nothing wrong:

- **LayerDrop** (Fan et al., 2019; Hugging Face's NLLB-MoE, BART-family, Wav2Vec2...): a loop
  over ``self.layers`` skips a layer when ``self.training and rand() < self.layerdrop``;
- **routing** (mixture of experts: Switch Transformers, NLLB-MoE): only the experts some token
  is routed to are called, picked by ``getattr(self.experts, f"expert_{idx}")`` or
  ``self.experts[idx]`` over indices the data give, or under ``if mask.any():``.

:func:`selected_at_run_time` reads the owner's ``construct`` source and says which (``"random"``:
a random draw skips a member; ``"routing"``: the data pick the member called; ``"data"``: the
data skip a member), when every call of the container's members is so conditioned. A condition that only reads attributes (a
config flag that is always off) is not one: a cell it leaves out is never used.

Example:
    >>> from mindspore import nn, ops
    >>> class Decoder(nn.Cell):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.layers, self.layerdrop = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)]), 0.1
    ...     def construct(self, x):
    ...         for layer in self.layers:
    ...             skip = self.training and ops.rand(()) < self.layerdrop
    ...             if not skip:
    ...                 x = layer(x)
    ...         return x
    >>> _selection(Decoder, "layers")
    'random'
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

__all__ = ["selected_at_run_time"]

_RANDOM = frozenset({"rand", "rand_like", "randn", "uniform", "random", "bernoulli", "randint"})
_DATA = frozenset({"any", "all", "nonzero", "item", "tolist", "sum", "max", "argmax", "topk", "numel"})


def selected_at_run_time(ctx: AuditContext, node: str) -> tuple[str, str] | None:
    """``(how, where)`` when the cell at *node* is a container's member called only as chance or the data pick.

    *how* is ``"random"`` (a random draw skips it: LayerDrop), ``"routing"`` (the data choose it)
    or ``"data"`` (the data skip it); *where* the construct that decides (``"Decoder.construct"``).
    """
    graph = ctx.graph

    def held_by(cell: str) -> list[tuple[str, str]]:
        return [(s, d["name"]) for s, _, d in graph.in_edges(cell, data=True) if d.get("kind") == g.CONTAINS]

    for container, name in held_by(node):
        # the container itself (every member left out), or a member of it
        for owner, attribute in [(container, name), *held_by(container)]:
            cls = type(ctx.structure.cells[owner])
            how = _selection(cls, attribute)
            if how is not None:
                return how, f"{cls.__name__}.construct"
    return None


@functools.cache
def _selection(cls: type, container: str) -> str | None:
    """How ``cls.construct`` picks the members of ``self.<container>`` it calls, when chance or data do.

    ``"random"``, ``"routing"`` or ``"data"`` (see :func:`selected_at_run_time`), else ``None``.
    """
    from graphaudit.capture.compilation.jit import python_function

    construct = python_function(getattr(cls, "construct", None))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(construct)))
    except (OSError, TypeError, SyntaxError):
        return None
    assigned = {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):  # getattr(self.experts, f"expert_{idx}")(...), self.experts[idx](...)
        if isinstance(node, ast.Call) and _dynamic_member(node.func, container):
            return "routing"
    conditions: list[list[ast.expr]] = []

    def visit(node: ast.AST, tests: list[ast.expr], members: set[str]) -> None:
        if isinstance(node, ast.For) and _reads(node.iter, container):
            members = members | {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        if isinstance(node, ast.If):
            for child in node.body + node.orelse:
                visit(child, [*tests, node.test], members)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in members:
            conditions.append(tests)
        for child in ast.iter_child_nodes(node):
            visit(child, tests, members)

    visit(tree, [], set())
    if not conditions:
        return None
    kinds = [{_kind(test, assigned) for test in tests} - {None} for tests in conditions]
    if all(kinds):
        return "random" if all("random" in k for k in kinds) else "data"
    return None


def _self_attribute(node: ast.expr, name: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _dynamic_member(func: ast.expr, container: str) -> bool:
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr":
        return (
            bool(func.args)
            and _self_attribute(func.args[0], container)
            and not (len(func.args) > 1 and isinstance(func.args[1], ast.Constant))
        )
    if isinstance(func, ast.Subscript) and _self_attribute(func.value, container):
        return not isinstance(func.slice, ast.Constant)
    return False


def _reads(expr: ast.expr, container: str) -> bool:
    return any(_self_attribute(node, container) for node in ast.walk(expr))


def _kind(test: ast.expr, assigned: dict[str, ast.expr]) -> str | None:
    """``"random"`` or ``"data"`` when *test* (or a local it reads, however far back) draws or reads tensor values."""
    found: set[str] = set()
    exprs, seen = [test], set()
    for expr in exprs:  # the test, the locals it reads, and theirs (skip = training and p < drop)
        for name in (n.id for n in ast.walk(expr) if isinstance(n, ast.Name)):
            if name in assigned and name not in seen:
                seen.add(name)
                exprs.append(assigned[name])
    for expr in exprs:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                name = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
                if name in _RANDOM:
                    found.add("random")
                elif name in _DATA:
                    found.add("data")
    return "random" if "random" in found else ("data" if found else None)
