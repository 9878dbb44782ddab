"""What the port-against-original checks (GA630-GA634) share: weights gathered by module, and cells found.

Example:
    >>> by_module(["fc.weight", "fc.bias", "norm.weight"])
    {'fc': ['weight', 'bias'], 'norm': ['weight']}
    >>> named("fc", ["weight", "bias"]), named("", ["scale"])
    ('fc.weight and fc.bias', 'scale')
"""

from __future__ import annotations

from collections.abc import Iterable

from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.text import listing

__all__ = ["ANOTHER", "ANOTHER_MODEL", "by_module", "module_of", "named", "port_cell", "shape_text"]

#: Below this share of the original's weights paired, the reference is another model: GA634 says
#: so, and GA630/GA631 stay silent rather than list every weight of an unrelated model.
ANOTHER_MODEL = 0.5
#: Why the per-weight port checks (GA630-GA633) defer to GA634.
ANOTHER = (
    "most of the original's weights have no partner: the reference is another model, and the pairs "
    "the order pass finds against it are chance (one finding, not one per weight)"
)


def module_of(name: str) -> str:
    """The module a weight belongs to: its name without the last part."""
    return name.rpartition(".")[0]


def by_module(names: Iterable[str]) -> dict[str, list[str]]:
    """*names* gathered by module, in the order of their first member: ``module -> leaves``."""
    found: dict[str, list[str]] = {}
    for name in names:
        module, _, leaf = name.rpartition(".")
        found.setdefault(module, []).append(leaf)
    return found


def named(module: str, leaves: list[str]) -> str:
    """``fc.weight and fc.bias``: a module's weights as text."""
    return listing([f"{module}.{leaf}" if module else leaf for leaf in leaves])


def shape_text(shape: tuple[int, ...]) -> str:
    """``(3, 2)`` as ``3x2``, ``()`` as ``scalar``."""
    return "x".join(str(d) for d in shape) if shape else "scalar"


def port_cell(ctx: AuditContext, weights: ReferenceWeights, module: str) -> tuple[str, bool]:
    """The port's cell node that stands for the original's *module*, and whether it is that module's own.

    A paired weight of the same module tells which cell it is; else the cell of the same path;
    else the closest cell above it (the network itself at worst), with ``False``.
    """
    by_path = ctx.cell_nodes_by_path()
    for pair in weights.mapping.pairs:
        if module_of(pair.reference) == module and module_of(pair.port) in by_path:
            return by_path[module_of(pair.port)], True
    if module in by_path:
        return by_path[module], True
    parts = module.split(".")
    while parts:
        parts.pop()
        if ".".join(parts) in by_path:
            break
    return by_path[".".join(parts)], False
