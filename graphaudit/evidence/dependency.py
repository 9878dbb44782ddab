"""What the outputs depend on: the dependency probe (inference passes on changed copies of the batch).

Made by :func:`graphaudit.capture.dependency.probe.probe_dependencies` whenever ``inputs=`` holds
a batch of 2 or more samples: the batch probe (does sample *i*'s output move when sample
*j* changes?) always; the sequence probes (does the past see the future? does the first
layer that mixes positions see their order?) when the model is causal: declared
(``causal=True``, ``--causal``, ``causal = true`` under ``[model]`` in a spec) or
recognised (a cell of an HF-style class ``*ForCausalLM`` / ``*LMHeadModel``, or whose
``config.is_decoder`` is true; ``causal=False`` turns recognition off); the padding probe when
the attention mask's keyword is named (``mask_input="attention_mask"``). Three kinds of
evidence read the one probe, so that a check whose probe did not run says why:
:class:`DependencyProbe` (the batch), :class:`SequenceDependencies`, :class:`PaddingDependencies`.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x = Tensor(np.ones((2, 3), np.float32))
    >>> have = EvidenceSet(AuditRequest(nn.Dense(3, 2), inputs=(x,)))
    >>> have.need(DependencyProbe).result.results["batch"].found, have.get(SequenceDependencies)
    (False, None)
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.errors import ArgumentError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.dependency.probe import Dependence, DependencyResult

__all__ = ["DependencyProbe", "PaddingDependencies", "SequenceDependencies", "recognised_causal"]

_CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


def recognised_causal(cells: dict[str, Any]) -> str | None:
    """Why the network is recognisably a causal LM (a sentence), or ``None``.

    Example:
        >>> from mindspore import nn
        >>> class TinyForCausalLM(nn.Dense): ...
        >>> recognised_causal({"": TinyForCausalLM(2, 2)})
        'it holds a TinyForCausalLM'
    """
    for cell in cells.values():
        name = type(cell).__name__
        if name.endswith(_CAUSAL_SUFFIXES):
            return f"it holds a {name}" + _encoder_configured(cell)
        config = getattr(cell, "config", None)
        if getattr(config, "is_decoder", False) is True:
            return f"the config of its {name} says is_decoder"
    return None


def _encoder_configured(cell: Any) -> str:
    """A note when a ``*ForCausalLM`` of an encoder family is configured as an encoder.

    BERT-like families (BERT, RoBERTa, BigBird, ...) have a ``*ForCausalLM`` that attends
    both ways unless ``config.is_decoder`` is true (HF and mindone warn when it is built so):
    the probe then finds the future reaching the past, and the note says why. Families whose
    code never reads ``is_decoder`` (LLaMA, GPT-2, ...) are causal whatever it says.
    """
    config = getattr(cell, "config", None)
    if getattr(config, "is_decoder", None) is not False:
        return ""
    try:
        source = inspect.getsource(sys.modules[type(cell).__module__])
    except (KeyError, OSError, TypeError):
        return ""
    if "is_decoder" not in source:
        return ""
    return (
        ", whose config says is_decoder=False: this family's code reads it, and then attends to every "
        "position both ways; set is_decoder=True in the config to train it as a causal LM"
    )


def _time_major(cells: dict[str, Any]) -> str | None:
    """The path of a recurrent cell that reads ``(time, batch, ...)`` tensors, if there is one.

    The probe takes axis 0 as the batch; in a time-major network it is time, and a
    bidirectional layer legitimately makes every step depend on the others.
    """
    from mindspore import nn

    recurrent = tuple(
        c for c in (getattr(nn, n, None) for n in ("RNN", "LSTM", "GRU")) if isinstance(c, type)
    )
    for path, cell in cells.items():
        if isinstance(cell, recurrent) and not getattr(cell, "batch_first", True):
            return path or "(root)"
    return None


def _mask_index(request: AuditRequest, cells: dict[str, Any], keyword: str) -> int:
    """The position among ``construct``'s arguments of the parameter called *keyword*.

    The network's own ``construct`` first; one that takes ``*args`` (a training wrapper
    passing the batch on) is looked through to the first cell whose ``construct`` names it.
    """
    for cell in cells.values():
        try:
            parameters = list(inspect.signature(cell.construct).parameters.values())
        except (TypeError, ValueError):
            continue
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if keyword in positional:
            index = positional.index(keyword)
            if request.inputs is None or index >= len(request.inputs) or request.inputs[index] is None:
                raise ArgumentError(
                    f"mask_input={keyword!r} is construct() argument {index + 1} of {type(cell).__name__}, but "
                    f"inputs= gives {0 if request.inputs is None else len(request.inputs)} value(s) and no mask "
                    "there: pass the attention mask in inputs=, in its place."
                )
            return index
        if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
            break  # the network names its arguments, and not this one
    names = [p for p in inspect.signature(request.net.construct).parameters if p != "self"]
    raise ArgumentError(
        f"mask_input={keyword!r} names no argument of {type(request.net).__name__}.construct "
        f"(its arguments are {', '.join(names) or 'none'}): pass the name of the attention mask's "
        'argument, e.g. mask_input="attention_mask".'
    )


@dataclass(frozen=True)
class DependencyProbe(Evidence):
    """The dependency probe's result; ``causal`` says whether (and why) the sequence probes ran."""

    title = "the dependency probe (inference passes on changed copies of the batch)"
    requirement = Requirement(
        "pass inputs=(x, ...) with a batch of 2 or more samples",
        "give --input SHAPE with a batch of 2 or more",
    )
    needs = (TracedPass,)
    options = (
        Option(
            "causal",
            "the model is causal (a decoder): probe that the past does not see the future and that positions "
            "are read (GA341, GA342); recognised for *ForCausalLM models; False turns recognition off",
            flag="--causal",
            cli_value="flag",
        ),
        Option(
            "mask_input",
            "the construct() argument that is the attention mask (1 real, 0 padding): probe that padded "
            "tokens do not reach real ones (GA343)",
            flag="--mask-input",
            metavar="NAME",
            type=str,
        ),
    )

    result: DependencyResult
    causal: str | None = None  # why the model is taken to be causal
    mask_input: str | None = None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DependencyProbe | Missing:
        from graphaudit.capture.dependency.probe import probe_dependencies

        structure = have.need(NetworkGraph).structure
        graph = have.need(NetworkGraph).graph
        cells = {graph.nodes[node]["path"]: cell for node, cell in structure.cells.items()}
        declared = request.option("causal")
        if declared is None and request.spec is not None and request.spec.causal:
            declared = True
        causal = "declared causal" if declared else None
        if declared is None:
            causal = recognised_causal(cells)
        keyword = request.option("mask_input")
        if keyword is not None and not isinstance(keyword, str):
            raise ArgumentError(
                f'mask_input= takes the name of an argument, e.g. "attention_mask"; got {keyword!r}'
            )
        mask = None if keyword is None else _mask_index(request, cells, keyword)
        assert request.inputs is not None  # TracedPass is there
        time_major = _time_major(cells)
        if time_major is not None:
            return Missing(
                f"the dependency probe could not run: '{time_major}' is a time-major recurrent layer "
                "(batch_first=False), so which axis of the inputs is the batch is not known"
            )
        result = probe_dependencies(
            request.net,
            request.inputs,
            cells,
            sequence=causal is not None,
            mask=mask,
            parameters=structure.parameters.values(),
        )
        if isinstance(result, str):
            return Missing(f"the dependency probe could not run: {result}")
        return cls(result, causal, keyword)


@dataclass(frozen=True)
class SequenceDependencies(Evidence):
    """The sequence probes of a causal model: the future, and whether positions are read."""

    title = "the sequence probes of the dependency probe (a causal model)"
    requirement = Requirement(
        "pass causal=True for a causal (decoder) model, with inputs=(token_ids, ...)",
        "give --causal with --input",
    )
    needs = (DependencyProbe,)

    future: Dependence
    positions: Dependence | None
    positions_not_run: str | None = None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> SequenceDependencies | Missing:
        probe = have.need(DependencyProbe)
        if probe.causal is None:
            return Missing()
        results, not_run = probe.result.results, probe.result.not_run
        if "future" not in results:
            return Missing(f"the sequence probes could not run: {not_run.get('future', 'no sequence input')}")
        return cls(results["future"], results.get("positions"), not_run.get("positions"))


@dataclass(frozen=True)
class PaddingDependencies(Evidence):
    """The padding probe: changing padded tokens, with the attention mask given."""

    title = "the padding probe of the dependency probe (the attention mask named)"
    requirement = Requirement(
        'pass mask_input="attention_mask" (the construct() argument that is the attention mask), with inputs=(ids, mask, ...)',
        "give --mask-input attention_mask with --input",
    )
    needs = (DependencyProbe,)

    padding: Dependence

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> PaddingDependencies | Missing:
        probe = have.need(DependencyProbe)
        if probe.mask_input is None:
            return Missing()
        found = probe.result.results.get("padding")
        if found is None:
            return Missing(f"the padding probe could not run: {probe.result.not_run.get('padding', '')}")
        return cls(found)
