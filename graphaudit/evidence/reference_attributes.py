"""The port's layer attributes set against the original's, where the reference records them (GA635-GA639).

A folder :func:`graphaudit.reference.dump` wrote records each module's class and attributes
(``manifest.json``'s ``modules``); an ONNX file records them on its nodes. A weights file
(``.safetensors``, ``.pth``) records none: the checks are not run, and say what to pass.
Cells are paired with modules as the output comparison pairs them
(:func:`~graphaudit.capture.reference.compare.pair_cells`); each pair's attributes are compared
in torch's conventions (:mod:`graphaudit.capture.reference.attributes`).

Example:
    >>> import json, os, tempfile, numpy as np
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> from graphaudit.reference import write_safetensors
    >>> folder = tempfile.mkdtemp()
    >>> write_safetensors(os.path.join(folder, "weights.safetensors"), {"0.weight": np.ones(3, np.float32),
    ...     "0.bias": np.zeros(3, np.float32), "0.running_mean": np.zeros(3, np.float32),
    ...     "0.running_var": np.ones(3, np.float32)})
    >>> np.savez(os.path.join(folder, "activations.npz"), **{"#0/output.0": np.ones(2, np.float32)})
    >>> np.savez(os.path.join(folder, "inputs.npz"), **{"0": np.ones(2, np.float32)})
    >>> modules = {"": {"class": "Sequential"}, "0": {"class": "BatchNorm1d", "eps": 1e-5, "momentum": 0.1}}
    >>> with open(os.path.join(folder, "manifest.json"), "w") as f:
    ...     json.dump({"graphaudit_reference": 1, "calls": [], "ties": [], "modules": modules}, f)
    >>> net = nn.SequentialCell([nn.BatchNorm1d(3, momentum=0.1)])
    >>> found = EvidenceSet(AuditRequest(net, options={"reference": folder})).need(ReferenceAttributes)
    >>> [(d.port, d.difference.attribute, d.difference.port) for d in found.differences]
    [('0', 'momentum', 0.9)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.reference import ReferenceWeights

if TYPE_CHECKING:
    from graphaudit.capture.reference.attributes import Difference, Layer

__all__ = ["AttributeDifference", "ReferenceAttributes"]


@dataclass(frozen=True)
class AttributeDifference:
    """One port cell whose attribute differs from its original module's."""

    port: str  # the cell's path ("" for the network)
    reference: str  # the module's path
    node: str  # the cell's graph node
    cell_class: str  # the port cell's class name
    difference: Difference


@dataclass(frozen=True)
class ReferenceAttributes(Evidence):
    """Every paired layer's attributes compared; what differs."""

    title = "the port's layer attributes against the original's"
    requirement = Requirement(
        "pass reference= a folder graphaudit.reference.dump wrote, or the original's ONNX export",
        "give --reference FOLDER (python -m graphaudit.reference) or --reference original.onnx",
    )
    needs = (ReferenceWeights, NetworkGraph)

    differences: tuple[AttributeDifference, ...]
    compared: int  # how many cell-module pairs had attributes on both sides
    source: str

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ReferenceAttributes | Missing:
        from graphaudit.capture.reference.attributes import compare_layers, dumped_layers, port_layer
        from graphaudit.capture.reference.compare import pair_cells

        weights = have.need(ReferenceWeights)
        if weights.format == "dump":
            layers = dumped_layers(weights.source)
            if layers is None:
                return Missing(
                    f"{weights.label} predates attributes (its manifest.json has no 'modules'): dump the original "
                    "again with python -m graphaudit.reference"
                )
        elif weights.format == "onnx":
            from graphaudit.capture.reference.onnx_attributes import onnx_layers

            layers = onnx_layers(weights.source)
        else:
            return Missing(
                f"{weights.label} holds the original's weights only, not its layers' attributes (epsilon, momentum, "
                "GELU's approximation, padding...): pass the folder python -m graphaudit.reference dumps, or an "
                "ONNX export of the original"
            )
        network = have.need(NetworkGraph)
        graph = network.graph
        cells = {graph.nodes[node]["path"]: (node, cell) for node, cell in network.structure.cells.items()}
        owners = [
            (pair.port.rpartition(".")[0], pair.reference.rpartition(".")[0])
            for pair in weights.mapping.pairs
        ]
        known = {""} | {".".join(m.split(".")[:end]) for m in layers for end in range(1, m.count(".") + 2)}
        pairs = pair_cells(list(cells), sorted(known), owners)
        pairs.update(_alone_of_their_kind(cells, layers, pairs))
        found = []
        compared = 0
        for path, module in pairs.items():
            node, cell = cells[path]
            mine: Layer | None = port_layer(cell)
            theirs = layers.get(module)
            if mine is None or theirs is None or mine.kind != theirs.kind:
                continue
            compared += 1
            for difference in compare_layers(mine, theirs):
                found.append(AttributeDifference(path, module, node, type(cell).__name__, difference))
        return cls(tuple(found), compared, weights.source)


def _alone_of_their_kind(
    cells: dict[str, tuple[str, Any]], layers: dict[str, Layer], pairs: dict[str, str]
) -> dict[str, str]:
    """Port layers without weights that no name paired (mindcv's ``max_pool``, torchvision's ``maxpool``),
    paired with the original's unpaired layer of the same kind under the paired parent, when each is the
    only one of its kind there: never a guess between two."""
    from graphaudit.capture.reference.attributes import port_layer

    taken = set(pairs.values())

    def parent(path: str) -> str:
        return path.rpartition(".")[0]

    mine: dict[tuple[str, str], list[str]] = {}
    for path, (_, cell) in cells.items():
        layer = port_layer(cell) if path and path not in pairs else None
        if layer is not None and parent(path) in pairs:
            mine.setdefault((pairs[parent(path)], layer.kind), []).append(path)
    theirs: dict[tuple[str, str], list[str]] = {}
    for module, layer in layers.items():
        if module and module not in taken:
            theirs.setdefault((parent(module), layer.kind), []).append(module)
    return {
        paths[0]: theirs[key][0]
        for key, paths in mine.items()
        if len(paths) == 1 and len(theirs.get(key, ())) == 1
    }
