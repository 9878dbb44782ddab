"""What the outputs depend on: the dependency probe (inference passes on changed copies of the batch).

Made by :func:`graphaudit.capture.dependency.probe.probe_dependencies` whenever ``inputs=`` holds
a batch of 2 or more samples: the batch probe (does sample *i*'s output move when sample
*j* changes?) always; the sequence probes (does the past see the future? does the first
layer that mixes positions see their order?) when the model is causal: declared
(``causal=True``, ``--causal``, ``causal = true`` under ``[model]`` in a spec, or
``causal_input="decoder_input_ids"``: the input that feeds the causal stack) or recognised
(an HF-style ``*ForCausalLM`` / ``*LMHeadModel``, a cell whose ``config.is_decoder`` is true,
or an encoder-decoder whose decoder is fed ``decoder_input_ids``: only the decoder's input is
changed; :mod:`graphaudit.capture.dependency.stacks`; ``causal=False`` turns recognition off);
the padding probe when the attention mask's keyword is named (``mask_input="attention_mask"``). Three kinds of
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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.dataset import TrainingData
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.recurrent import recurrent_layout
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.dependency.probe import Dependence, DependencyResult

__all__ = ["DependencyProbe", "PaddingDependencies", "SequenceDependencies", "recognised_causal"]


def recognised_causal(cells: dict[str, Any]) -> str | None:
    """Why the network is recognisably a causal LM (a sentence), or ``None`` (its inputs unknown).

    Example:
        >>> from mindspore import nn
        >>> class TinyForCausalLM(nn.Dense): ...
        >>> recognised_causal({"": TinyForCausalLM(2, 2)})
        'it holds a TinyForCausalLM'
    """
    from graphaudit.capture.dependency.stacks import recognise

    root = next(iter(cells.values()))
    causal = recognise(root, None, cells, declared=None)
    return None if causal is None else causal.reason


def _batch_major(request: AuditRequest, have: EvidenceSet) -> tuple[Any, tuple[Any, ...], bool] | str:
    """The network and inputs the probe runs on, its batch axis first, and whether the network
    reads time-major sequences; or why its batch axis cannot be found.

    A network with time-major recurrent layers is probed along the batch axis that the label,
    the dataset or a convolution says (:mod:`graphaudit.evidence.recurrent`): a time-major input
    through :class:`~graphaudit.capture.dependency.layout.BatchMajor`, and every ``(T, B, ...)``
    tensor the probe reads (the outputs, the cells' calls) read batch first. Undecided (no
    evidence, ``B == T``): not probed, never a guess.
    """
    from graphaudit.capture.dependency.layout import BatchMajor

    assert request.inputs is not None  # TracedPass is there
    layout = recurrent_layout(request, have)
    if layout is None:
        return request.net, request.inputs, False
    misfed = any(use.misfed for use in layout.uses)
    if layout.reason is not None and not misfed:
        return layout.reason
    batch = layout.batch.batch
    assert batch is not None
    if layout.batch.axis == 0:
        return request.net, request.inputs, True
    # a time-major input: each input long as the batch on axis 1 only is changed along it
    swapped = tuple(
        i
        for i, x in enumerate(request.inputs)
        if len(getattr(x, "shape", ())) >= 2 and x.shape[0] != batch and x.shape[1] == batch
    )
    inputs = tuple(x.swapaxes(0, 1) if i in swapped else x for i, x in enumerate(request.inputs))
    return BatchMajor(request.net, swapped), inputs, True


@dataclass(frozen=True)
class DependencyProbe(Evidence):
    """The dependency probe's result; ``causal`` says whether (and why) the sequence probes ran."""

    title = "the dependency probe (inference passes on changed copies of the batch)"
    requirement = Requirement(
        "pass inputs=(x, ...) with a batch of 2 or more samples",
        "give --input SHAPE with a batch of 2 or more",
    )
    needs = (TracedPass,)
    uses = (TrainingData,)  # its batch size tells the batch axis of a time-major recurrent network
    options = (
        Option(
            "causal",
            "the model is causal (a decoder): probe that the past does not see the future and that positions "
            "are read (GA341, GA342); recognised for *ForCausalLM models and HF-style encoder-decoders (their "
            "decoder); False turns recognition off",
            flag="--causal",
            cli_value="flag",
        ),
        Option(
            "causal_input",
            "the construct() argument that feeds the causal stack, when the model has more than one input "
            "sequence (an encoder-decoder's decoder_input_ids; recognised for HF-style encoder-decoders): the "
            "sequence probes change its future only; implies causal",
            flag="--causal-input",
            metavar="NAME",
            type=str,
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
    causal_input: str = ""  # the argument the sequence probes change, when the model has two stacks
    causal_shift: int = 0  # how many positions later the causal stack sees a token of it
    sequence_not_run: str | None = None  # causal, but which input feeds the causal stack is not known

    @property
    def tokens(self) -> str:
        """The tokens the sequence probes change, in words: ``the tokens of decoder_input_ids``."""
        if not self.causal_input:
            return "the tokens"
        if self.causal_shift:
            return f"the decoder's tokens ({self.causal_input}, shifted right by {self.causal_shift} into its input)"
        return f"the tokens of {self.causal_input}"

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DependencyProbe | Missing:
        from graphaudit.capture.dependency.plan import ONE_STACK
        from graphaudit.capture.dependency.probe import probe_dependencies
        from graphaudit.capture.dependency.stacks import argument_index, recognise

        structure = have.need(NetworkGraph).structure
        graph = have.need(NetworkGraph).graph
        cells = {graph.nodes[node]["path"]: cell for node, cell in structure.cells.items()}
        declared = request.option("causal")
        if declared is None and request.spec is not None and request.spec.causal:
            declared = True
        causal = recognise(
            request.net,
            request.inputs,
            cells,
            declared=declared,
            declared_input=request.option("causal_input"),
        )
        keyword = request.option("mask_input")
        mask = (
            None
            if keyword is None
            else argument_index(request.net, request.inputs, cells, keyword, "mask_input", "attention mask")
        )
        probed = _batch_major(request, have)
        if isinstance(probed, str):
            return Missing(f"the dependency probe could not run: {probed}")
        net, inputs, time_major = probed
        result = probe_dependencies(
            net,
            inputs,
            cells,
            time_major=time_major,
            sequence=causal is not None and causal.not_run is None,
            mask=mask,
            stack=ONE_STACK if causal is None else causal.stack,
            parameters=structure.parameters.values(),
        )
        if isinstance(result, str):
            return Missing(f"the dependency probe could not run: {result}")
        if causal is None:
            return cls(result, None, keyword)
        return cls(result, causal.reason, keyword, causal.name, causal.stack.shift, causal.not_run)


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
        if probe.sequence_not_run is not None:
            return Missing(f"the sequence probes could not run: {probe.sequence_not_run}")
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
