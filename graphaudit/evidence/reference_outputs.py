"""The port run with the original's weights, each cell's output set against the original's (GA640).

``reference=`` a folder :func:`graphaudit.reference.dump` wrote (or msprobe's dump, level L0,
task tensor: :mod:`graphaudit.capture.reference.msprobe_dump`) holds, beside the original's
weights, what each of its modules computed on one batch. This evidence loads those weights
into the port (restored bit for bit afterwards), runs it on that batch and compares every
cell whose module is known (:mod:`graphaudit.capture.reference.compare`).

Example:
    >>> import os, tempfile, numpy as np
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> from graphaudit.reference import write_safetensors
    >>> folder = tempfile.mkdtemp()
    >>> w, b, x = np.ones((2, 3), np.float32), np.zeros(2, np.float32), np.ones((1, 3), np.float32)
    >>> write_safetensors(os.path.join(folder, "weights.safetensors"), {"weight": w, "bias": b})
    >>> np.savez(os.path.join(folder, "inputs.npz"), **{"0": x})
    >>> np.savez(os.path.join(folder, "activations.npz"), **{"#0/output.0": x @ w.T, "#0/input.0": x})
    >>> with open(os.path.join(folder, "manifest.json"), "w") as f:
    ...     _ = f.write('{"graphaudit_reference": 1, "calls": [{"path": "", "call": 0}], "ties": []}')
    >>> have = EvidenceSet(AuditRequest(nn.Dense(3, 2), options={"reference": folder}))
    >>> [(c.port, c.diverges) for c in have.need(ReferenceOutputs).comparison.calls]
    [('', False)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from graphaudit.errors import GraphAuditError, InputError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.reference import ReferenceWeights

if TYPE_CHECKING:
    from graphaudit.capture.reference.compare import Comparison

__all__ = ["ReferenceOutputs"]


@dataclass(frozen=True)
class ReferenceOutputs(Evidence):
    """Every compared cell call of the port, run with the original's weights on the original's batch."""

    title = "the port's outputs against the original's (its weights loaded, its batch)"
    requirement = Requirement(
        "pass reference= a folder graphaudit.reference.dump wrote (the original's weights and outputs)",
        "give --reference FOLDER, written by python -m graphaudit.reference",
    )
    needs = (ReferenceWeights, NetworkGraph)

    comparison: Comparison
    source: str

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ReferenceOutputs | Missing:
        from mindspore import Tensor

        weights = have.need(ReferenceWeights)
        original = weights.original
        if original is not None and original.format == "onnx":
            return cls._of_onnx(request, have, weights)
        if original is not None and original.format == "msprobe-statistics":
            return Missing(
                f'{weights.label} is an msprobe "statistics" dump: it holds each output\'s Max/Min/Mean/Norm, '
                "not the output, and those cannot tell where a port's computation departs; dump the original "
                'again with task "tensor" (level L0)'
            )
        if original is None or original.activations is None:
            return Missing(
                f"{weights.label} holds the original's weights only, not what it computes: dump the original "
                "with python -m graphaudit.reference (or graphaudit.reference.dump) and pass that folder"
            )
        activations = original.activations
        batch = tuple(Tensor(a) for a in activations.inputs)
        names = list(getattr(activations, "names", []))
        keywords: dict[str, Any] = {}
        if names:  # dumped by keyword: each array goes to the port's argument of its name
            from graphaudit.capture.reference.batch_names import bind_by_name, check_given_by_name

            if request.inputs is not None:
                check_given_by_name(
                    request.net, tuple(request.inputs), names, activations.inputs, weights.label
                )
                batch = tuple(request.inputs)
            else:
                batch, keywords = bind_by_name(request.net, names, activations.inputs, weights.label)
        elif request.inputs is not None:
            if original.format == "msprobe":
                _holds_first_input(request.inputs, activations.inputs, weights.source)
            else:
                _same_batch(request.inputs, activations.inputs, weights.source)
            batch = tuple(request.inputs)
        return cls._compared(request, have, weights, batch, activations, keywords)

    @classmethod
    def _of_onnx(
        cls, request: AuditRequest, have: EvidenceSet, weights: ReferenceWeights
    ) -> ReferenceOutputs | Missing:
        """An ONNX original, run in onnxruntime on the audit's batch."""
        from graphaudit.capture.network.values import tensor_values
        from graphaudit.capture.reference.onnx_run import run_onnx

        if request.inputs is None:
            return Missing(f"{weights.label} is run on the audit's batch: pass inputs=")
        arrays = [tensor_values(t) for t in request.inputs if hasattr(t, "asnumpy")]
        try:
            activations = run_onnx(weights.source, arrays)
        except GraphAuditError:
            raise
        except Exception as err:  # onnxruntime's own refusal of the file: said, not raised
            first = str(err).splitlines()[0] if str(err) else ""
            return Missing(f"onnxruntime could not run {weights.label}: {type(err).__name__}: {first}")
        return cls._compared(request, have, weights, tuple(request.inputs), activations)

    @classmethod
    def _compared(
        cls,
        request: AuditRequest,
        have: EvidenceSet,
        weights: ReferenceWeights,
        batch: tuple,
        activations: Any,
        keywords: dict[str, Any] | None = None,
    ) -> ReferenceOutputs | Missing:
        from graphaudit.capture.reference.compare import compare_outputs, pair_cells

        original = weights.original
        assert original is not None
        apart = _not_one_to_one(weights)
        if apart:
            return Missing(
                f"the port's parameters and the original's weights do not pair one to one ({apart}; GA630-GA632 "
                "say where), so the original's weights cannot be loaded into the port to compare outputs"
            )
        network = have.need(NetworkGraph)
        graph = network.graph
        parameters = network.structure.parameters
        loads = []
        for pair in weights.mapping.pairs:
            value = np.asarray(original.tensors[pair.reference])
            if value.ndim == 2 and value.shape != weights.port_shapes[pair.port]:
                value = value.T  # stored the other way round (GA632), or an ONNX MatMul's (in, out) operand
            loads.append((parameters[weights.port_nodes[pair.port]], value))
        cells = {graph.nodes[node]["path"]: cell for node, cell in network.structure.cells.items()}
        modules = sorted({path for path, _ in activations.calls})
        owners = [
            (pair.port.rpartition(".")[0], pair.reference.rpartition(".")[0])
            for pair in weights.mapping.pairs
        ]
        pairs = pair_cells(list(cells), modules, owners)
        try:
            comparison = compare_outputs(request.net, batch, cells, loads, activations, pairs, keywords)
        except Exception as err:  # the user's construct, on the original's weights: said, not raised
            first = str(err).splitlines()[0] if str(err) else ""
            return Missing(
                f"the port's pass with the original's weights raised {type(err).__name__}: {first}"
            )
        return cls(comparison, weights.source)


def _not_one_to_one(weights: ReferenceWeights) -> str:
    """Why the original's weights cannot all be loaded into the port, or ``""``."""
    missing, added = weights.missing(), weights.added()
    shaped = [p.port for p in weights.mapping.pairs if p.layout == "shape"]
    said = []
    if missing:
        said.append(f"{len(missing)} of the original's weights unpaired")
    if added:
        said.append(f"{len(added)} trainable port parameters unpaired")
    if shaped:
        said.append(f"{len(shaped)} of other shapes")
    return ", ".join(said)


def _same_batch(given: tuple[object, ...], dumped: list[np.ndarray], source: str) -> None:
    """Refuse ``inputs=`` that are not the batch the original was dumped on: its outputs would be another's."""
    from graphaudit.capture.reference.batch_names import is_dumped

    tensors = [t for t in given if hasattr(t, "asnumpy")]
    if len(tensors) == len(dumped) and all(is_dumped(t, a) for t, a in zip(tensors, dumped)):
        return
    shapes = [tuple(t.shape) for t in tensors]
    raise InputError(
        f"inputs= ({shapes}) is not the batch the original was dumped on ({[a.shape for a in dumped]}, in "
        f"{source}/inputs.npz): its outputs are another batch's. Leave inputs= out (the dump's batch is used) "
        "or dump the original again on this batch."
    )


def _holds_first_input(given: tuple[object, ...], first: list[np.ndarray], source: str) -> None:
    """Refuse ``inputs=`` that hold none of what msprobe's first recorded module was given.

    msprobe does not record the model's own call, only its modules': the batch is known as far
    as the first module's inputs go (the ids an embedding takes; an attention mask may be fed
    only to later modules), so one of the given tensors must be the first of those.
    """
    from graphaudit.capture.reference.batch_names import is_dumped

    tensors = [t for t in given if hasattr(t, "asnumpy")]
    if not first or any(is_dumped(t, first[0]) for t in tensors):
        return
    raise InputError(
        f"inputs= ({[tuple(t.shape) for t in tensors]}) holds nothing the original's first module was given "
        f"in the msprobe dump {source} ({first[0].shape}): its outputs are another batch's. Leave inputs= out "
        "(the first module's inputs are used) or dump the original again on this batch."
    )
