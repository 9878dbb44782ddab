"""``audit(net, optimizer)``: capture once, run every check, collect every finding.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    >>> optimizer = nn.SGD(net[0].trainable_params())  # net[1] left out by mistake
    >>> report = graphaudit.audit(net, optimizer)
    >>> [(f.check_id, f.subject) for f in report.findings if f.severity == "error"]
    [('GA201', '1.bias'), ('GA201', '1.weight')]
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import Tensor, nn, ops

from graphaudit.capture import capture, check_cell, normalize_inputs, normalize_value
from graphaudit.capture.structure import gc_paused
from graphaudit.capture.trace import flatten_tensors
from graphaudit.checks import all_checks
from graphaudit.context import AuditContext
from graphaudit.errors import GraphAuditError, InputError
from graphaudit.findings import Finding
from graphaudit.probe import run_probe
from graphaudit.report import Report
from graphaudit.spec import Spec

__all__ = ["audit", "unwrap"]


def unwrap(net: Any, optimizer: Any = None, loss_fn: Any = None) -> tuple[nn.Cell, Any, Any, bool]:
    """Find the backbone, optimizer and loss inside a Model / TrainOneStepCell / WithLossCell.

    Returns ``(backbone, optimizer, loss_fn, takes_label)`` where *takes_label* says that the
    object given was a wrapper whose ``inputs`` end with the label.

    Example:
        >>> from mindspore import nn
        >>> backbone = nn.Dense(3, 2)
        >>> wrapped = nn.WithLossCell(backbone, nn.MSELoss())
        >>> net, _, loss, takes_label = unwrap(wrapped)
        >>> net is backbone, type(loss).__name__, takes_label
        (True, 'MSELoss', True)
    """
    takes_label = False
    if type(net).__name__ == "Model" and hasattr(net, "_network"):
        optimizer = optimizer if optimizer is not None else getattr(net, "_optimizer", None)
        loss_fn = loss_fn if loss_fn is not None else getattr(net, "_loss_fn", None)
        net = net._network
        takes_label = loss_fn is not None
    if isinstance(net, nn.TrainOneStepCell):
        optimizer = optimizer if optimizer is not None else net.optimizer
        net = net.network
        takes_label = True
    if isinstance(net, nn.WithLossCell):
        loss_fn = loss_fn if loss_fn is not None else net._loss_fn
        net = net._backbone
        takes_label = True
    return net, optimizer, loss_fn, takes_label


def _check_optimizer(optimizer: Any) -> nn.Optimizer | None:
    if optimizer is None or isinstance(optimizer, nn.Optimizer):
        return optimizer
    hint = ""
    if isinstance(optimizer, type) and issubclass(optimizer, nn.Optimizer):
        hint = f" Pass an instance, e.g. {optimizer.__name__}(net.trainable_params(), ...)."
    elif isinstance(optimizer, (list, tuple)):
        hint = " Pass the optimizer built from these parameters, e.g. nn.Momentum(params, 0.01, 0.9)."
    raise GraphAuditError(
        f"audit() expects a mindspore.nn.Optimizer (or None) as `optimizer`, got "
        f"{type(optimizer).__name__}.{hint}"
    )


def _check_loss(loss_fn: Any) -> nn.Cell | None:
    if loss_fn is None or isinstance(loss_fn, nn.Cell):
        return loss_fn
    raise GraphAuditError(
        f"audit() expects a loss Cell (e.g. nn.BCEWithLogitsLoss()) as `loss_fn`, got "
        f"{type(loss_fn).__name__}. Wrap a loss function in a Cell whose construct(logits, labels) calls it."
    )


def _split_label(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
    if len(args) < 2:
        raise InputError(
            "the network given takes a label (it is a WithLossCell, TrainOneStepCell or a Model with "
            f"a loss), so `inputs` must be (data..., label); got {len(args)} value(s). Pass e.g. inputs=(x, y)."
        )
    return args[:-1], args[-1]


def _synthetic_labels(output: Tensor) -> list[Tensor]:
    """Labels to try when tracing a custom loss without a real one: same-shape, then class ids."""
    labels = [ops.zeros_like(output)]
    if output.ndim >= 1:
        labels.append(ops.zeros((output.shape[0],), ms.int32))
    return labels


def _capture_loss(loss_fn: nn.Cell, output: Any, label: Any) -> Any:
    outputs = list(flatten_tensors(output))
    if not outputs:
        return None
    logits = outputs[0]
    candidates = [label] if label is not None else _synthetic_labels(logits)
    for candidate in candidates:
        try:
            return capture(loss_fn, (logits, candidate), expand=(loss_fn,))[0]
        except GraphAuditError:
            continue
    return None


def audit(
    net: Any,
    optimizer: Any = None,
    *,
    inputs: Any = None,
    loss_fn: Any = None,
    spec: Spec | None = None,
    mode: str | None = None,
    probe: bool = False,
) -> Report:
    """Run every check on *net* and return a :class:`~graphaudit.report.Report`.

    *net* is a ``nn.Cell``, or a ``nn.WithLossCell``, ``nn.TrainOneStepCell`` or
    ``mindspore.train.Model``, in which case the backbone, loss and optimizer are found
    inside it (and ``inputs`` end with the label: ``inputs=(x, y)``). With ``inputs`` one
    forward pass is traced, enabling the wiring and loss-pairing checks; *spec* declares the
    intended design (see :class:`~graphaudit.spec.Spec`). *mode* (``"train"`` or
    ``"eval"``) is what the network is about to be used for; it defaults to ``"train"`` when
    an optimizer is given. With ``probe=True`` (and ``inputs=(x, y)``, a loss and an
    optimizer) one real training step is run and its numbers checked (GA9xx, see
    ``docs/probe.md``). The network, the optimizer and every global state are left exactly
    as they were.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(4, 4)
        >>> net = nn.SequentialCell([block] * 3)
        >>> report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
        >>> [f.check_id for f in report.findings]
        ['GA101']
    """
    net, optimizer, loss_fn, takes_label = unwrap(net, optimizer, loss_fn)
    net = check_cell(net, function="audit")
    optimizer = _check_optimizer(optimizer)
    loss_fn = _check_loss(loss_fn)
    if spec is not None and not isinstance(spec, Spec):
        raise GraphAuditError(
            f"audit() expects a graphaudit.Spec as `spec`, got {type(spec).__name__}; "
            "load one with graphaudit.Spec.load(path)."
        )
    if spec is not None:
        spec.validate()  # a Spec built in Python gets the checks a spec file gets

    if mode is None and optimizer is not None:
        mode = "train"
    if mode not in (None, "train", "eval"):
        raise GraphAuditError(f'audit() expects mode="train" or mode="eval", got {mode!r}.')

    if probe and inputs is None:
        raise InputError(
            "probe=True runs one real training step, so it needs a batch and its label: pass "
            "inputs=(x, y), with a loss (loss_fn= or a WithLossCell) and an optimizer."
        )

    label = None
    if inputs is not None:
        if takes_label or probe:
            data, label = _split_label(tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,))
            label = normalize_value(label, "[-1]")
            inputs = data
        inputs = normalize_inputs(net, inputs)
    graph, structure, output = capture(net, inputs)
    ctx = AuditContext.build(
        net, optimizer, loss_fn=loss_fn, spec=spec, mode=mode, graph=graph, structure=structure
    )
    if loss_fn is not None and inputs is not None:
        ctx.loss_graph = _capture_loss(loss_fn, output, label)
    if probe:
        ctx.extra["probe"] = run_probe(
            net,
            optimizer,
            loss_fn,
            inputs,
            label,
            parameter_nodes=structure.parameter_nodes,
            is_frozen=ctx.spec.is_frozen,
        )

    findings: list[Finding] = []
    run: list[str] = []
    skipped: dict[str, str] = {}
    with gc_paused():  # the checks allocate no garbage; full collections would rescan the network
        for check_id, check in all_checks().items():
            if check.needs_inputs and not ctx.traced:
                skipped[check_id] = f"{check.name} needs a traced forward pass: pass inputs=..."
                continue
            if check.needs_probe and not probe:
                skipped[check_id] = (
                    f"{check.name} needs one real training step: pass probe=True, inputs=(x, y)"
                )
                continue
            ctx.current_check = (check_id, check.name)
            findings.extend(check.run(ctx))
            run.append(check_id)
    return Report(findings, graph, checks_run=run, skipped=skipped, network=type(net).__name__)
