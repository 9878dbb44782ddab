"""GA603 identical-parameter-copies."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.weights import WeightMatrix, weight_matrices
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.values import ParameterValues
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

# Below this many elements two equal weights are too likely to be a coincidence of no weight.
MIN_ELEMENTS = 16


@dataclass(frozen=True)
class IdenticalWeightCopies(Cause):
    """Distinct weight matrices that hold bit-identical values: copies of one initialised weight."""

    names_subjects = True
    names: tuple[str, ...]  # the weights' attribute paths
    shape: tuple[int, ...]

    def message(self) -> str:
        return (
            f"{len(self.names)} distinct weights hold bit-identical values ({listing(self.names)}, shape "
            f"{self.shape}): they were copied from one initialised weight, so the layers start as the same function."
        )

    def fix(self) -> str:
        return (
            "Build each layer anew (Block() for each slot) instead of copy.deepcopy of an initialised "
            "one, or give each Parameter its own initial tensor; if they are meant to be one weight, tie "
            "them (one Parameter object) and declare it: Spec(shared_parameters=[[...]])."
        )


@register(
    "GA603",
    "identical-parameter-copies",
    severity="warning",
    needs=(ParameterValues,),
    uses=(DeclaredDesign,),
    causes=(IdenticalWeightCopies,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Distinct weight matrices that hold bit-identical values.

    What it does:
        Hashes the values of every trainable weight matrix (as GA601 selects them, with at
        least 16 elements and not constant: constant ones are GA601/GA602's) and reports each
        group of distinct Parameter objects with the same shape, dtype and bytes. Groups
        declared as tied in the design (``Spec(shared_parameters=...)``) are exempt, and so are
        copies of a scaled identity matrix (ConViT starts every value projection at I on
        purpose). Values are only read (a BLAKE2b hash of their bytes).

    Why is this bad:
        Separately initialised weights are never bit-identical. Identical copies mean that
        the layers were made by ``copy.deepcopy`` of an already initialised layer, or that one
        initial tensor was wrapped in several Parameters: the copies start as the same
        function, receive the same gradients whenever they see the same input, and may never
        diverge, so the stack has the capacity of one layer. Unlike GA101/GA104 the copies are
        separate objects, so no sharing check sees them.

    Example:
        ```python
        layer = EncoderLayer(256)
        self.layers = nn.CellList([copy.deepcopy(layer) for _ in range(6)])
        ```

    Use instead:
        ```python
        self.layers = nn.CellList([EncoderLayer(256) for _ in range(6)])
        ```

        (or re-initialise each copy after deep-copying it).
    """
    for items in _identical_groups(weight_matrices(ctx)):
        names = [ctx.subject_of(item.node) for item in items]
        if all(ctx.spec.declares_shared_parameter(item.parameter.name) for item in items):
            continue
        if _is_scaled_identity(items[0].parameter):
            continue  # a deliberate structured start (ConViT's value projections), not a copy
        cause = IdenticalWeightCopies(tuple(names), tuple(int(d) for d in items[0].parameter.shape))
        yield ctx.finding("warning", names[1], cause, [item.node for item in items], subjects=names)


def _is_scaled_identity(param: Any) -> bool:
    """Whether a 2-D weight is c * I: an initialisation every layer legitimately shares."""
    if len(param.shape) != 2 or param.shape[0] != param.shape[1]:
        return False
    from graphaudit.capture.network.values import tensor_values

    values = tensor_values(param)
    diagonal = np.diag(values)
    return bool(np.all(diagonal == diagonal[0]) and np.count_nonzero(values - np.diag(diagonal)) == 0)


def _identical_groups(weights: list[WeightMatrix]) -> list[list[WeightMatrix]]:
    """Groups of weights with the same shape, dtype and bytes, in order of their first member.

    Weights are first grouped by shape, dtype and a sample of their bytes (cheap: distinct
    weights almost always differ in it); only the members of a group of two or more are hashed
    in full. Equal bytes give equal samples, so this finds exactly the groups that hashing
    every weight would.
    """
    candidates: dict[tuple, list[tuple[int, WeightMatrix]]] = {}
    for index, item in enumerate(weights):
        param = item.parameter
        if item.constant is not None or param.size < MIN_ELEMENTS:
            continue
        candidates.setdefault((tuple(param.shape), str(param.dtype), item.values.sample), []).append(
            (index, item)
        )
    groups: dict[bytes, list[tuple[int, WeightMatrix]]] = {}
    found: list[list[tuple[int, WeightMatrix]]] = []
    for members in candidates.values():
        if len(members) < 2:
            continue
        groups.clear()
        for index, item in members:
            groups.setdefault(item.values.digest, []).append((index, item))
        found.extend(group for group in groups.values() if len(group) >= 2)
    found.sort(key=lambda group: group[0][0])
    return [[item for _, item in group] for group in found]
