"""Which input feeds a model's causal stack: read from its cells, their configs and ``construct``'s arguments.

The sequence probes (GA341, GA342) change the future of one input and reorder its prefix: the
input of the model's *causal stack*. The model is taken to be causal when it says so
(``causal=True``, ``causal_input=``, ``causal = true`` in a spec) or is recognisably a
causal LM (:func:`recognise`):

- **decoder-only** (a ``*ForCausalLM`` / ``*LMHeadModel`` of the HF convention, or a cell
  whose ``config.is_decoder`` is true, in a model that is not an encoder-decoder): one stack,
  fed by the first token input;
- **encoder-decoder** (a cell whose ``config.is_encoder_decoder`` is true, taking
  ``decoder_input_ids``: T5, BART, Marian, Pegasus, Whisper, ...): a bidirectional encoder,
  whose input every decoder position may read (it is never "the future"), and a causal
  decoder fed by ``decoder_input_ids`` (or ``decoder_inputs_embeds``, or ``labels``, which
  these models shift right into the decoder's input). The inputs aligned with the decoder's
  positions (``decoder_*``, ``labels``) are on its side; the others feed the encoder.

Where the decoder's input cannot be told (none given, or arguments without names), the
sequence probes are not run, with the reason: never a guess that could report the encoder.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> class Seq2Seq(nn.Cell):  # an encoder-decoder of the HF convention, its config made by hand
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.config = type("Config", (), {"is_encoder_decoder": True})()
    ...     def construct(self, input_ids, attention_mask, decoder_input_ids):
    ...         return decoder_input_ids
    >>> ids = Tensor(np.ones((2, 8), np.int32))
    >>> found = recognise(Seq2Seq(), (ids, ids, ids), {"": Seq2Seq()}, declared=None)
    >>> found.name, found.stack
    ('decoder_input_ids', Stack(source=2, side=(2,), shift=0))
"""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass
from typing import Any

from graphaudit.capture.dependency.plan import ONE_STACK, Stack
from graphaudit.errors import ArgumentError

__all__ = ["Causal", "argument_index", "named_arguments", "recognise"]

_CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")
#: The decoder's input of an encoder-decoder of the HF convention, in the order it is looked
#: for, and how many positions later the decoder sees a token of it.
_DECODER_INPUTS = (("decoder_input_ids", 0), ("decoder_inputs_embeds", 0), ("labels", 1))
#: ``decoder_input_ids = shift_tokens_right(labels, ...)`` / ``self._shift_right(labels)``.
_SHIFTS_LABELS = re.compile(r"shift\w*\(\s*labels\b")


@dataclass(frozen=True)
class Causal:
    """Why the model is taken to be causal, and which of its inputs feeds the causal stack.

    ``not_run`` is set instead of a stack when the model is causal but which input feeds the
    stack cannot be told: the sequence probes do not run, and say so.
    """

    reason: str
    stack: Stack = ONE_STACK
    name: str = ""  # the argument name of the stack's input, when it is not the only stack
    not_run: str | None = None


def named_arguments(cells: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """``(cell, names)``: the first cell whose ``construct`` names the arguments the network's inputs bind to.

    The network's own ``construct`` first; one that takes ``*args`` (a training wrapper
    passing the batch on) is looked through to the first cell down whose ``construct`` names
    its arguments. ``None`` when none does.
    """
    for cell in cells.values():
        try:
            parameters = list(inspect.signature(cell.construct).parameters.values())
        except (TypeError, ValueError):
            continue
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
            return cell, positional
    return None


def argument_index(
    net: Any, inputs: tuple[Any, ...] | None, cells: dict[str, Any], keyword: str, option: str, what: str
) -> int:
    """The position among *inputs* of ``construct``'s argument called *keyword*, given there.

    Raises :class:`~graphaudit.errors.ArgumentError` naming *option* when no ``construct``
    names it or *inputs* holds nothing in its place (*what* says what it should hold).
    """
    found = named_arguments(cells)
    if found is not None and keyword in found[1]:
        cell, names = found
        index = names.index(keyword)
        if inputs is None or index >= len(inputs) or inputs[index] is None:
            raise ArgumentError(
                f"{option}={keyword!r} is construct() argument {index + 1} of {type(cell).__name__}, but "
                f"inputs= gives {0 if inputs is None else len(inputs)} value(s) and no {what} there: pass "
                f"the {what} in inputs=, in its place."
            )
        return index
    names = [p for p in inspect.signature(net.construct).parameters if p != "self"]
    example = "attention_mask" if option == "mask_input" else "decoder_input_ids"
    raise ArgumentError(
        f"{option}={keyword!r} names no argument of {type(net).__name__}.construct "
        f"(its arguments are {', '.join(names) or 'none'}): pass the name of the {what}'s "
        f'argument, e.g. {option}="{example}".'
    )


def recognise(
    net: Any,
    inputs: tuple[Any, ...] | None,
    cells: dict[str, Any],
    *,
    declared: bool | None,
    declared_input: str | None = None,
) -> Causal | None:
    """Whether the model is causal and which input feeds its causal stack (``None``: not causal).

    *declared*: ``causal=`` (``None``: recognise); *declared_input*: ``causal_input=``, the
    argument that feeds the causal stack (implies causal).
    """
    if declared is False and declared_input is None:
        return None
    found = named_arguments(cells)
    given = {} if found is None else _given(found[1], inputs)
    model = _encoder_decoder(cells)
    if declared_input is not None:
        index = argument_index(net, inputs, cells, declared_input, "causal_input", "causal stack's input")
        shift = 1 if declared_input == "labels" and _shifts_labels(found) else 0
        reason = f"causal_input={declared_input!r}"
        return _fed_by(declared_input, index, given, inputs, reason, shift, encoder=model is not None)
    takes_decoder_input = found is not None and "decoder_input_ids" in found[1]
    if model is not None and takes_decoder_input:
        return _decoder_of(
            f"its decoder: {model} is an encoder-decoder, by its config", model, given, inputs, found
        )
    if declared and given.keys() & {"decoder_input_ids", "decoder_inputs_embeds"}:
        return _decoder_of(
            "declared causal: the decoder of an encoder-decoder", type(net).__name__, given, inputs, found
        )
    causal = Causal("declared causal") if declared else _decoder_only(cells)
    if causal is not None and model is not None:
        # An encoder-decoder whose arguments do not say which feeds the decoder (its
        # decoder stack says is_decoder): the first input may well be the encoder's.
        return Causal(
            causal.reason,
            not_run=(
                f"{model} is an encoder-decoder, and which of the inputs given feeds its decoder is not known (no "
                "construct() argument is called decoder_input_ids): name it with causal_input="
            ),
        )
    return causal


def _decoder_only(cells: dict[str, Any]) -> Causal | None:
    """A causal LM recognised by its class name (``*ForCausalLM``) or a config saying ``is_decoder``."""
    for cell in cells.values():
        name = type(cell).__name__
        if name.endswith(_CAUSAL_SUFFIXES):
            return Causal(f"it holds a {name}" + _encoder_configured(cell))
        config = getattr(cell, "config", None)
        if getattr(config, "is_decoder", False) is True:
            return Causal(f"the config of its {name} says is_decoder")
    return None


def _given(names: list[str], inputs: tuple[Any, ...] | None) -> dict[str, int]:
    """The argument names that *inputs* gives a value for, with their positions."""
    return {name: i for i, name in enumerate(names[: len(inputs or ())]) if inputs[i] is not None}  # type: ignore[index]


def _encoder_decoder(cells: dict[str, Any]) -> str | None:
    """The class of a cell whose config says ``is_encoder_decoder`` (the model's, in HF's convention).

    DETR-like models say so too, but their decoder reads object queries, not tokens: they
    are taken as causal only when their ``construct`` takes ``decoder_input_ids`` (or declared).
    """
    for cell in cells.values():
        if getattr(getattr(cell, "config", None), "is_encoder_decoder", False) is True:
            return type(cell).__name__
    return None


def _shifts_labels(found: Any) -> bool:
    """Whether the cell that names the arguments shifts ``labels`` into its decoder's input."""
    return found is not None and bool(_SHIFTS_LABELS.search(_source(found[0])))


def _decoder_of(reason: str, model: str, given: dict[str, int], inputs: Any, found: Any) -> Causal:
    """The decoder of an encoder-decoder: fed by decoder_input_ids, decoder_inputs_embeds or labels."""
    for name, shift in _DECODER_INPUTS:
        if name in given and (not shift or _shifts_labels(found)):
            return _fed_by(name, given[name], given, inputs, reason, shift, encoder=True)
    return Causal(
        reason,
        not_run=(
            f"{model} is an encoder-decoder and none of the inputs given is known to feed its decoder "
            "(decoder_input_ids, decoder_inputs_embeds, or labels that it shifts into them): pass "
            "decoder_input_ids, or name the decoder's input with causal_input="
        ),
    )


def _fed_by(
    name: str,
    index: int,
    given: dict[str, int],
    inputs: Any,
    reason: str,
    shift: int,
    *,
    encoder: bool = False,
) -> Causal:
    """The causal stack fed by argument *name*: the only stack when it is the first token input and
    no encoder is known, else beside an encoder, with the inputs aligned with its positions."""
    first = next((i for i, x in enumerate(inputs or ()) if len(getattr(x, "shape", ())) >= 2), None)
    if index == first and not encoder:
        return Causal(reason)  # one stack: every input is on its side
    side = {i for n, i in given.items() if n.startswith("decoder_") or n == "labels"} | {index}
    return Causal(reason, Stack(source=index, side=tuple(sorted(side)), shift=shift), name)


def _source(cell: Any) -> str:
    """The source of *cell*'s ``construct`` (``""`` when it cannot be read)."""
    try:
        return inspect.getsource(type(cell).construct)
    except (OSError, TypeError):
        return ""


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
