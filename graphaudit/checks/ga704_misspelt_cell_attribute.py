"""GA704 misspelt-cell-attribute."""

from __future__ import annotations

import dis
import functools
import types
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import cell_group
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.suggest import close_matches
from graphaudit.text import listing

# The Cell flags that change behaviour, which a misspelt attribute is meant to set.
FLAGS = ("training", "requires_grad", "use_batch_statistics", "keep_prob")
# Names written for those flags that difflib does not find close enough (PyTorch, Keras and
# Paddle habits included: ``trainable``, ``use_global_stats``).
NEAR_MISSES = frozenset(
    {
        "train",
        "is_train",
        "is_training",
        "train_mode",
        "training_mode",
        "eval",
        "is_eval",
        "eval_mode",
        "trainable",
        "is_trainable",
        "frozen",
        "freeze",
        "is_frozen",
        "requires_grads",
        "require_grad",
        "require_grads",
        "requires_gradient",
        "need_grad",
        "use_batch_stats",
        "use_batch_statistic",
        "use_global_stats",
        "keepprob",
        "keep_rate",
    }
)
_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})


@functools.cache
def fresh_cell_attributes() -> frozenset[str]:
    """What any Cell has: a fresh ``nn.Cell()``'s instance attributes and the class's."""
    from mindspore import nn

    return frozenset(vars(nn.Cell())) | frozenset(dir(nn.Cell))


def _code_objects(cls: type) -> Iterator[types.CodeType]:
    from graphaudit.capture.compilation.jit import python_function

    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            value = value.fget
        value = python_function(value)  # a @jit method: the code the user wrote
        code = getattr(value, "__code__", None)
        if isinstance(code, types.CodeType):
            yield code


# Keyed on the code object (equal code reads the same names): every network's classes share
# nn.Cell's few hundred methods, whose disassembly was half of a small network's audit.
@functools.lru_cache(maxsize=16384)
def _read_names(code: types.CodeType) -> frozenset[str]:
    names: set[str] = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in _LOADS and isinstance(instruction.argval, str):
            names.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, str):
            names.add(const)  # getattr(self, "name", ...)
        elif isinstance(const, types.CodeType):
            names |= _read_names(const)
    return frozenset(names)


#: names_read_by's answers, kept while the class lives (a sample's, a test's classes come and go).
_NAMES_READ: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()


def names_read_by(cls: type) -> frozenset[str]:
    """Attribute names that the methods of *cls* and its bases read (``self.x``, ``getattr(self, "x")``)."""
    found = _NAMES_READ.get(cls)
    if found is not None:
        return found
    names: set[str] = set()
    for base in cls.__mro__:
        if base is object or base.__module__.startswith(("builtins", "pybind11")):
            continue
        for code in _code_objects(base):
            names |= _read_names(code)
    found = _NAMES_READ[cls] = frozenset(names)
    return found


def meant_flag(attribute: str) -> str | None:
    """The Cell flag that *attribute* is a near miss of, or None."""
    lowered = attribute.lower()
    if lowered in FLAGS:
        return None
    close = close_matches(lowered, FLAGS, n=1, cutoff=0.8)
    if close:
        return close[0]
    if lowered in NEAR_MISSES:
        if "stat" in lowered:
            return "use_batch_statistics"
        if "keep" in lowered:
            return "keep_prob"
        if "grad" in lowered or "able" in lowered or "fro" in lowered:
            return "requires_grad"
        return "training"
    return None


_meant_flag = functools.lru_cache(maxsize=4096)(meant_flag)  # attribute names repeat across cells


@dataclass(frozen=True)
class MisspeltCellAttribute(Cause):
    """Cells given an attribute that nothing reads and that looks like a flag they do not set."""

    names_subjects = True
    subject: str  # the cell, or the cell holding them all
    cells: tuple[str, ...]  # the cells' paths
    classes: tuple[str, ...]  # their classes, each once
    attribute: str
    value: str  # the value it was given, as Python writes it (repr)
    flag: str  # the flag it looks like ("training", "requires_grad"...)

    def message(self) -> str:
        said = f"an attribute {self.attribute!r} = {self.value}"
        if len(self.cells) == 1:
            return (
                f"{self.subject} ({self.classes[0]}) has {said} that nothing reads: "
                f"it looks like {self.flag!r}, which it does not set."
            )
        return (
            f"{len(self.cells)} {listing(self.classes, None)} cells ({listing(self.cells)}) each have {said} "
            f"that nothing reads: it looks like {self.flag!r}, which they do not set."
        )

    def fix(self) -> str:
        path, one = self.subject, len(self.cells) == 1
        if self.flag == "requires_grad":
            if one:
                return f"Set requires_grad on the parameters: for p in {path}.get_parameters(): p.requires_grad = ..."
            return (
                f"Set requires_grad on the parameters of {listing(self.cells)}: for p in cell.get_parameters(): "
                "p.requires_grad = ..., for each of them"
            )
        if self.flag == "training":
            return f"Call {path}.set_train(...) (on the whole network) instead of setting {self.attribute}."
        return f"Set {self.flag} (or rebuild the cell{'' if one else 's'} with {self.flag}=...) instead of {self.attribute}."


@register("GA704", "misspelt-cell-attribute", severity="warning", causes=(MisspeltCellAttribute,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A Cell given an attribute that looks like one of its flags but is not.

    What it does:
        Looks at the scalar instance attributes of every cell and reports one whose name is
        a near miss of a flag that changes behaviour (``training``, ``requires_grad``,
        ``use_batch_statistics``, ``keep_prob``): ``trainning``, ``traning``,
        ``requires_grads``, ``require_grad``, ``trainable``, ``use_global_stats``... An
        attribute that a fresh ``nn.Cell`` has, that the cell's class defines, or that any
        method of a class in the network reads (``self.is_training`` in a custom
        ``construct``) is not a misspelling and is never reported. The same misspelt
        assignment in every cell of a stack (one line of a block's constructor) is one finding.

    Why is this bad:
        A Cell accepts any attribute: ``net.trainning = True`` raises nothing, stores a new
        attribute, and changes nothing (checked on MindSpore 2.10: ``training`` stays False on
        the cell and on its children). ``backbone.trainable = False`` (the Keras way) freezes
        nothing either. The author believes the mode or the freeze is set.

    Example:
        ```python
        net.trainning = True
        net.backbone.requires_grads = False
        ```

    Use instead:
        ```python
        net.set_train(True)
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        ```
    """
    classes = {type(ctx.structure.cells[node]) for node, _ in g.nodes_of_kind(ctx.graph, g.CELL)}
    read_anywhere = frozenset().union(*(names_read_by(cls) for cls in classes)) if classes else frozenset()
    # Every cell has dozens of instance attributes, nearly all of them a fresh Cell's own:
    # one set lookup rules those out before anything else is asked of them.
    known = fresh_cell_attributes() | read_anywhere
    causes: dict[tuple[str, str, str], list[str]] = {}
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        for attribute, value in [item for item in vars(cell).items() if item[0] not in known]:
            if not isinstance(value, (bool, int, float)):
                continue
            if hasattr(type(cell), attribute):
                continue
            flag = _meant_flag(attribute)
            if flag is None:
                continue
            # One misspelt assignment in a block's constructor (or a loop over cells): one cause.
            causes.setdefault((attribute, repr(value), flag), []).append(node)
    for (attribute, value, flag), nodes in causes.items():
        group = cell_group(ctx, nodes)
        classes = tuple(dict.fromkeys(type(ctx.structure.cells[n]).__name__ for n in nodes))
        cause = MisspeltCellAttribute(group.subject, group.names, classes, attribute, value, flag)
        yield ctx.finding("warning", group.subject, cause, nodes, subjects=group.names)
