"""GA204 misspelt-freeze-attribute."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.suggest import close_matches
from graphaudit.text import members

# Attribute names that people write when they mean requires_grad, and that difflib misses.
NEAR_MISSES = frozenset(
    {
        "trainable",
        "is_trainable",
        "train",
        "frozen",
        "freeze",
        "is_frozen",
        "requires_gradient",
        "require_gradient",
        "requires_grads",
        "require_grads",
        "requiresgrad",
        "requiregrad",
        "need_grad",
        "needs_grad",
        "stop_gradient",
        "no_grad",
        "grad_required",
        "trainable_param",
    }
)


# The instance attributes MindSpore 2.10 itself sets on every Parameter (vars() of a fresh
# one); ``requires_aggr`` is a near miss of ``requires_grad`` but a real attribute.
OWN_ATTRIBUTES = frozenset(
    {
        "_cast_type",
        "_inited_param",
        "_param_info",
        "_pipeline_stage_list",
        "_sliced",
        "_unique",
        "init_mode",
        "is_default_input_init",
        "is_in_parallel",
        "is_init",
        "load",
        "requires_aggr",
    }
)


@functools.cache
def normal_attributes() -> frozenset[str]:
    """Attributes a Parameter has on its own: its instance attributes and its class's."""
    from mindspore import Parameter

    return OWN_ATTRIBUTES | frozenset(dir(Parameter))


def misspelt(attribute: str) -> bool:
    lowered = attribute.lower()
    if lowered == "requires_grad" or attribute in normal_attributes():
        return False
    return lowered in NEAR_MISSES or bool(close_matches(lowered, ["requires_grad"], n=1, cutoff=0.8))


@dataclass(frozen=True)
class MisspeltFreezeAttribute(Cause):
    """Parameters given an attribute that MindSpore ignores where requires_grad was meant (``require_grad``)."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    attribute: str  # the misspelt attribute
    value: str  # the value given to it, as repr() shows it (cut at 40 characters)
    training: int  # how many of them still have requires_grad=True
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        one = len(self.names) == 1
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {'has' if one else 'have'} "
            f"an attribute {self.attribute!r} = {self.value}, which MindSpore ignores: "
            f"{_effect(self.training, len(self.names))}."
        )

    def fix(self) -> str:
        setting = "requires_grad" if len(self.names) == 1 else "requires_grad of each"
        return (
            f"Set {setting} instead of {self.attribute} (p.requires_grad = ...), and build the optimizer "
            "from net.trainable_params()."
        )


@register("GA204", "misspelt-freeze-attribute", severity="error", causes=(MisspeltFreezeAttribute,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A Parameter given an attribute that looks like requires_grad but is not.

    What it does:
        Looks at the attributes set on each Parameter object and reports one whose name is a
        near miss of ``requires_grad`` (``require_grad``, ``requires_grads``, ``trainable``...).

    Why is this bad:
        A Parameter accepts any attribute: ``p.require_grad = False`` raises nothing, stores a
        new attribute, and leaves ``p.requires_grad`` True (checked on MindSpore 2.10), so the
        parameter is still in ``net.trainable_params()`` and trains. The author believes the
        layer is frozen.

    Example:
        ```python
        for p in net.backbone.get_parameters():
            p.require_grad = False  # typo: nothing is frozen
        ```

    Use instead:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        ```
    """
    causes: dict[tuple[str, str], list[tuple[str, Any]]] = {}  # (attribute, value) -> parameters
    for node, param in ctx.parameters():
        try:
            attributes = vars(param)
        except TypeError:
            continue
        for attribute, value in attributes.items():
            if misspelt(attribute):
                shown = repr(value)
                causes.setdefault((attribute, shown if len(shown) <= 40 else shown[:37] + "..."), []).append(
                    (node, param)
                )
    for (attribute, value), found in causes.items():
        for group in one_group(ctx, [node for node, _ in found]):
            training = sum(bool(param.requires_grad) for _, param in found)
            cause = MisspeltFreezeAttribute(group.names, group.holder, attribute, value, training, group.note)
            yield ctx.finding("error", group.subject, cause, group.nodes, subjects=group.names)


def _effect(trains: int, count: int) -> str:
    """What the ignored attribute left: how many of the *count* parameters still train."""
    if count == 1:
        return "its requires_grad is still True: it trains" if trains else "its requires_grad is False anyway"
    if trains == count:
        return "all of them still have requires_grad=True and train"
    if trains == 0:
        return "their requires_grad is False anyway (set elsewhere or never trainable)"
    return (
        f"{trains} of them still have requires_grad=True and train (the other {count - trains} had "
        "requires_grad=False already, e.g. BatchNorm's moving statistics)"
    )
