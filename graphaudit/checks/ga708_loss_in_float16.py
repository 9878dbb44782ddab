"""GA708 loss-in-float16."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.precision import HALF, output_dtypes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: The words of an operation or cell name that lose range or precision in float16.
_RANGE_SENSITIVE = frozenset(
    {"softmax", "logsoftmax", "log", "logsumexp", "exp", "sigmoid", "softplus", "entropy", "nll", "loss"}
    | {"mean", "sum", "reduce", "sqrt", "rsqrt", "pow"}
)


def _needs_range(name: str) -> bool:
    """Whether an operation or cell of the loss needs float32, by the words of its name.

    Example:
        >>> [_needs_range(n) for n in ("ops.log_softmax", "ReduceMean", "ops.expand_dims", "ops.matmul")]
        [True, True, False, False]
    """
    short = name.rsplit(".", 1)[-1]
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", short)
    return any(word.lower() in _RANGE_SENSITIVE for word in words)


@dataclass(frozen=True)
class LossInFloat16(Cause):
    """A loss whose range-sensitive operations (softmax, exp, log, reductions) produce float16."""

    names_subjects = True
    loss: str  # the loss's name
    count: int  # how many of its operations produce float16
    operations: tuple[str, ...]  # those operations by name, sorted, each once

    def message(self) -> str:
        return (
            f"The loss {self.loss} is computed in float16: {self.count} of its operations {'produces' if self.count == 1 else 'produce'} float16 "
            f"({listing(self.operations)}). Softmax, exp and log lose range and precision there."
        )

    def fix(self) -> str:
        return (
            "Cast the network's output to float32 before the loss (amp.auto_mixed_precision(net, 'O2') does it; "
            "or ops.cast(logits, ms.float32)), or keep the loss cell in float32 (loss_fn.to_float(ms.float32))."
        )


@register(
    "GA708",
    "loss-in-float16",
    severity="warning",
    needs=(LossTrace,),
    once="one finding per loss: the operations of it that run in float16 are listed",
    causes=(LossInFloat16,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The loss (its softmax, log and reduction) computed in float16.

    What it does:
        Reads the traced loss (``loss_fn`` on the network's output, or the loss cell inside
        a network-with-loss) and reports it when one of its operations that need float32's
        range produced float16 (softmax, exp, log, sigmoid, the cross-entropy and NLL
        kernels, sums and means; not a matmul or a cast the loss casts back, as mindyolo's
        YOLOv8 loss does for its distribution-focal projection on purpose),
        unless the setup casts the network's output to float32 before the loss (amp's
        ``_OutputTo32`` and loss wrapper, which ``auto_mixed_precision`` and
        ``build_train_network`` add at O2 and O3).

    Why is this bad:
        The loss's softmax, exponentials and logarithm need float32's range: in float16
        ``exp`` overflows above 11, probabilities below 6e-8 become 0 and their log -inf,
        and the mean of a large batch rounds; the gradient that starts the backward pass
        is wrong before anything else is. MindSpore's amp casts the output back to float32
        for the loss at every level (read on 2.10, ``mindspore/train/amp.py``); a network
        made float16 by hand (``net.to_float(ms.float16)``) or an amp applied to the
        network-with-loss does not. A warning: some losses are robust.

    Example:
        ```python
        net.to_float(ms.float16)
        graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.CrossEntropyLoss())
        ```

    Use instead:
        ```python
        net = amp.auto_mixed_precision(net, "O2")  # casts the output to float32 for the loss
        ```
    """
    loss = ctx.need(LossTrace)
    if loss.graph is None or loss.output_to_float32:
        return
    half = [
        name
        for node, attrs in loss.graph.nodes(data=True)
        if attrs["kind"] in (g.OP, g.CALL)
        and _needs_range(name := attrs.get("op") or attrs.get("class_name", ""))
        and HALF in output_dtypes(loss.graph, node)
    ]
    if not half:
        return
    cells = ctx.cell_nodes_by_path()
    node = ctx.structure.cell_nodes.get(id(loss.loss_fn)) if loss.inside else None
    cause = LossInFloat16(loss.name, len(half), tuple(sorted(set(half))))
    yield ctx.finding("warning", loss.name, cause, (node or cells.get("", g.cell_node("")),))
