"""The original a port was made from, its weights matched with the port's parameters (GA630-GA634).

``audit(net, reference="original.safetensors")`` (``--reference FILE``) reads the original's
weights (:mod:`graphaudit.capture.reference`: ``.safetensors``, a ``.pth``/``.bin`` state dict
read without torch, an ONNX file's initializers, or a dict of arrays) and pairs them with the
port's parameters (:mod:`graphaudit.capture.reference.mapping`). ``reference_map=`` gives or
corrects pairs (``{"port.name": "original.name"}``). Nothing is loaded into the network.

Example:
    >>> import numpy as np
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.SequentialCell([nn.Dense(2, 3), nn.BatchNorm1d(3)])
    >>> original = {"0.weight": np.zeros((3, 2)), "0.bias": np.zeros(3), "1.weight": np.ones(3),
    ...             "1.bias": np.zeros(3), "1.running_mean": np.zeros(3), "1.running_var": np.ones(3)}
    >>> weights = EvidenceSet(AuditRequest(net, options={"reference": original})).need(ReferenceWeights)
    >>> [(p.port, p.reference) for p in weights.mapping.pairs][-2:]
    [('1.gamma', '1.weight'), ('1.beta', '1.bias')]
    >>> weights.mapping.port_only, weights.mapping.reference_only
    ((), ())
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from graphaudit import graph as g
from graphaudit.errors import ArgumentError, ArgumentTypeError, GraphAuditError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.suggest import did_you_mean

if TYPE_CHECKING:
    from graphaudit.capture.reference import Reference
    from graphaudit.capture.reference.mapping import ParameterMapping

__all__ = ["ReferenceWeights"]

Shape = tuple[int, ...]


def _reference(name: str, value: Any) -> Any:
    """*value* when it is a file that exists (read when a check needs it) or a dict, read now."""
    from graphaudit.capture.reference import read_reference

    if isinstance(value, (str, os.PathLike)) and os.path.exists(value):
        return value
    return read_reference(value)  # what is wrong with it, in its words


def _reference_map(name: str, value: Any) -> dict[str, str]:
    from graphaudit.capture.reference.map_file import MAP_SUFFIXES, read_map_file

    if isinstance(value, (str, os.PathLike)) and os.fspath(value).lower().endswith(MAP_SUFFIXES):
        value = read_map_file(name, value)
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ArgumentTypeError(
            f"{name}= takes a dict port name -> original name (e.g. {{'head.dense.weight': 'classifier.weight'}}) "
            f"or a .json or .toml file of one, got {type(value).__name__}"
        )
    return dict(value)


def _buffer_paths(net: Any) -> frozenset[str]:
    """The paths of *net*'s buffers: tensors a cell registers (``register_buffer``) that are no Parameter."""
    paths = set()
    for path, cell in getattr(net, "cells_and_names", lambda: ())():
        for name, value in getattr(cell, "_buffers", {}).items():
            if value is not None:
                paths.add(f"{path}.{name}" if path else name)
    return frozenset(paths)


def _in_module_order(graph: Any) -> list[str]:
    """The parameter nodes in the order PyTorch lists a module's (a cell's own, then each child's, depth first).

    The graph's nodes come in the walk's order, breadth first (a model's last conv and head
    before its first block's weights); the mapping's pass by order needs the original's order.
    """
    roots = [n for n, a in g.nodes_of_kind(graph, g.CELL) if a.get("path") == ""]
    order: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        cell = stack.pop()
        if cell in seen:
            continue
        seen.add(cell)
        children = []
        for _, target, data in graph.out_edges(cell, data=True):
            if data.get("kind") == g.OWNS and target not in seen:
                seen.add(target)
                order.append(target)
            elif data.get("kind") == g.CONTAINS:
                children.append(target)
        stack.extend(reversed(children))
    rest = [n for n, _ in g.nodes_of_kind(graph, g.PARAMETER) if n not in seen]
    return order + rest


@dataclass(frozen=True)
class ReferenceWeights(Evidence):
    """The original's weights, their pairing with the port's parameters, and both sides' ties."""

    title = "the original the port was made from"
    requirement = Requirement("pass reference='original.safetensors'", "give --reference FILE")
    needs = (NetworkGraph,)
    options = (
        Option(
            "reference",
            "the original the network was ported from: its weights (.safetensors, a .pth/.bin state dict "
            "read without torch, an .onnx file, a dict name -> array: GA630-GA634), or the folder "
            "python -m graphaudit.reference dumped (its weights and every module's outputs: GA640 too), or an "
            "msprobe dump (dump.json, level L0, task tensor)",
            flag="--reference",
            metavar="PATH",
            parse=_reference,
        ),
        Option(
            "reference_map",
            "pairs of port parameter -> original weight names that the mapping cannot find by itself "
            "(a dict, the JSON the mapping is shown as, or a TOML file: a [reference_map] table or [[pairs]])",
            flag="--reference-map",
            metavar="FILE",
            parse=_reference_map,
        ),
    )

    source: str
    format: str
    mapping: ParameterMapping
    port_shapes: dict[str, Shape]
    reference_shapes: dict[str, Shape]
    port_nodes: dict[str, str]  # port parameter path -> its graph node
    port_aliases: dict[str, tuple[str, ...]]  # a parameter's path -> every path it is reached by
    reference_ties: tuple[tuple[str, ...], ...]
    frozen: frozenset[str]  # port parameters that do not train
    buffers: tuple[str, ...]  # the original's integer tensors (position_ids...): no weights
    original: Reference | None = None  # what was read: the arrays loaded for the output comparison

    @property
    def label(self) -> str:
        """How messages name the reference: its file's name, or "the dict given"."""
        return os.path.basename(self.source) if self.format != "arrays" else self.source

    def missing(self) -> list[str]:
        """The original's weights with no counterpart in the port, a tied copy of a paired weight aside."""
        paired = {pair.reference for pair in self.mapping.pairs}
        tied_to_paired = {name for tie in self.reference_ties if paired & set(tie) for name in tie}
        return [n for n in self.mapping.reference_only if n not in tied_to_paired]

    def added(self) -> list[str]:
        """The port's trainable parameters with no counterpart in the original."""
        return [n for n in self.mapping.port_only if n not in self.frozen]

    def matched_fraction(self) -> float:
        """The share of the original's weights that have a counterpart in the port."""
        weights = len(self.reference_shapes) - len(self.buffers)
        return len(self.mapping.pairs) / weights if weights else 1.0

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ReferenceWeights | Missing:
        value = request.option("reference")
        if value is None:
            if request.option("reference_map"):
                raise ArgumentError(
                    "reference_map= pairs the port's parameters with the original's, but no reference= "
                    "was given: pass the original's weights too (reference='original.safetensors')."
                )
            return Missing()
        from graphaudit.capture.reference import read_reference

        try:
            reference = read_reference(value)
        except GraphAuditError as err:
            raise cls.options[0].worded(err) from err.__cause__
        graph = have.need(NetworkGraph).graph
        if reference.format == "onnx" and "BatchNormalization" not in reference.operations:
            norms = [
                a["path"] for _, a in g.nodes_of_kind(graph, g.CELL) if "BatchNorm" in a.get("class_name", "")
            ]
            if norms:
                return Missing(
                    f"{os.path.basename(reference.source)} has no BatchNormalization where the port has "
                    f"{len(norms)} BatchNorm cells ({norms[0]}...): the exporter folded them into the convolutions "
                    "(eval mode), so its weights are not the original's. Export again with "
                    "training=torch.onnx.TrainingMode.PRESERVE and do_constant_folding=False"
                )
        given = request.option("reference_map") or {}
        if not isinstance(given, Mapping):  # a request built without audit()'s door: parsed here
            given = _reference_map("reference_map", given)
        try:
            return cls.of(reference, have.need(NetworkGraph).graph, given, _buffer_paths(request.net))
        except GraphAuditError as err:
            raise cls.options[1].worded(err) from None

    @classmethod
    def of(
        cls,
        reference: Reference,
        graph: Any,
        given: Mapping[str, str],
        port_buffers: frozenset[str] = frozenset(),
    ) -> ReferenceWeights:
        """The evidence of *reference* against the network of *graph* (``reference_map`` pairs in *given*).

        *port_buffers*: the paths of the port's buffers (``register_buffer``): the original's
        tensors of those names are buffers on both sides (BART's ``final_logits_bias``), no weights.
        """
        from graphaudit.capture.reference.mapping import map_parameters

        shapes: dict[str, Shape] = {}
        nodes: dict[str, str] = {}
        aliases: dict[str, tuple[str, ...]] = {}
        frozen = set()
        for node in _in_module_order(graph):
            attrs = graph.nodes[node]
            if not attrs.get("registered", True):
                continue
            path = attrs["path"]
            shapes[path] = tuple(json.loads(attrs["shape"]))
            nodes[path] = node
            aliases[path] = tuple(json.loads(attrs.get("paths", "[]"))) or (path,)
            if not attrs.get("requires_grad", True):
                frozen.add(path)
        _check_given(given, {p for paths in aliases.values() for p in paths}, reference)
        from graphaudit.capture.reference.mapping import canonical

        buffers = tuple(
            n
            for n, a in reference.tensors.items()
            if not np.issubdtype(a.dtype, np.floating) or canonical(n) in port_buffers
        )
        weights = {n: tuple(a.shape) for n, a in reference.tensors.items() if n not in buffers}
        mapping = map_parameters(
            shapes,
            weights,
            given,
            reference_ordered=reference.ordered,
            stored_transposed=reference.matmul_right,
            aliases={path: paths for path, paths in aliases.items() if len(paths) > 1},
        )
        return cls(
            reference.source,
            reference.format,
            mapping,
            shapes,
            {n: tuple(a.shape) for n, a in reference.tensors.items()},
            nodes,
            aliases,
            reference.ties,
            frozenset(frozen),
            buffers,
            reference,
        )


def _check_given(given: Mapping[str, str], port_paths: set[str], reference: Reference) -> None:
    """Refuse a ``reference_map`` pair naming what neither side has: a pair silently ignored is a wrong answer."""
    for port_name, ref_name in given.items():
        if port_name not in port_paths:
            raise ArgumentError(
                f"reference_map= pairs {port_name!r}, which is not a parameter of the network"
                f"{did_you_mean(port_name, port_paths) or '.'} Name the port's parameter by its path "
                "(net.parameters_and_names())."
            )
        if ref_name not in reference.tensors:
            raise ArgumentError(
                f"reference_map= pairs {port_name!r} with {ref_name!r}, which {reference.source} does not have"
                f"{did_you_mean(ref_name, reference.tensors) or '.'} Name the original's weight as its state dict does."
            )
