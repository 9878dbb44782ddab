"""The front door of ``audit()``: check every argument once, unwrap, and make the request.

Everything the user passes is checked here, before anything runs: the network (or the
wrapper around it), the optimizer, the loss, the design, the mode, the inputs and the
label, the probe, and the options that evidence kinds declare. A bad argument gets a
:class:`~graphaudit.errors.GraphAuditError` saying what to pass instead.

Example:
    >>> from mindspore import nn
    >>> backbone = nn.Dense(3, 2)
    >>> request = build_request(nn.WithLossCell(backbone, nn.MSELoss()))
    >>> request.net is backbone, type(request.loss_fn).__name__, request.mode
    (True, 'MSELoss', None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphaudit.errors import ArgumentError, ArgumentTypeError, InputError
from graphaudit.evidence import REQUEST_KEYWORDS, AuditRequest, all_options
from graphaudit.spec import Spec
from graphaudit.suggest import did_you_mean

__all__ = ["REPORT_KEYWORDS", "build_request", "check_options"]

MODES = ("train", "eval")
#: The keywords of :func:`graphaudit.audit` that choose what is reported, not what is audited
#: (its others: ``net``, :data:`~graphaudit.evidence.REQUEST_KEYWORDS` and the evidence options).
REPORT_KEYWORDS = ("select", "ignore", "config")


def _check_optimizer(optimizer: Any) -> Any:
    from mindspore import nn

    if optimizer is None or isinstance(optimizer, nn.Optimizer):
        return optimizer
    hint = ""
    if isinstance(optimizer, type) and issubclass(optimizer, nn.Optimizer):
        hint = f" Pass an instance, e.g. {optimizer.__name__}(net.trainable_params(), ...)."
    elif isinstance(optimizer, (list, tuple)):
        hint = " Pass the optimizer built from these parameters, e.g. nn.Momentum(params, 0.01, 0.9)."
    raise ArgumentTypeError(
        f"audit() expects a mindspore.nn.Optimizer (or None) as `optimizer`, got "
        f"{type(optimizer).__name__}.{hint}"
    )


def _check_loss(loss_fn: Any) -> Any:
    from mindspore import nn

    if loss_fn is None or isinstance(loss_fn, nn.Cell):
        return loss_fn
    raise ArgumentTypeError(
        f"audit() expects a loss Cell (e.g. nn.BCEWithLogitsLoss()) as `loss_fn`, got "
        f"{type(loss_fn).__name__}. Wrap a loss function in a Cell whose construct(logits, labels) calls it."
    )


def _check_spec(spec: Any) -> Spec | None:
    if spec is None:
        return None
    if not isinstance(spec, Spec):
        raise ArgumentTypeError(
            f"audit() expects a graphaudit.Spec as `spec`, got {type(spec).__name__}; "
            "load one with graphaudit.Spec.load(path)."
        )
    spec.validate()  # a Spec built in Python gets the checks a spec file gets
    return spec


def _probe_steps(probe: Any) -> int:
    if isinstance(probe, bool):
        return int(probe)
    if isinstance(probe, int) and probe >= 0:
        return probe
    raise ArgumentError(
        f"audit() expects probe=True (one real training step), probe=N (N >= 0 steps on the batch) or "
        f"False, got {probe!r}."
    )


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """*options*, when every key is an ``audit()`` keyword declared by an evidence kind.

    Each value is checked by its :class:`~graphaudit.evidence.Option` (a switch must be a
    boolean), once, here.
    """
    known = all_options()
    checked = {}
    for name, value in options.items():
        if name not in known:
            keywords = [*REQUEST_KEYWORDS, *REPORT_KEYWORDS, *known]
            raise ArgumentTypeError(
                f"audit() got an unexpected keyword argument {name!r}{did_you_mean(name, keywords)} "
                f"(its keywords are {', '.join(keywords)})"
            )
        checked[name] = known[name][1].check(value)
    return checked


def _as_tuple(inputs: Any) -> tuple[Any, ...]:
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def _inputs_and_label(net: Any, inputs: Any, label: Any, takes_label: bool, loss_fn: Any) -> tuple[Any, Any]:
    from graphaudit.capture.network.inputs import normalize_inputs, normalize_value

    if inputs is None:
        if label is not None:
            raise InputError(
                "label= was given without inputs=: pass the batch too, e.g. inputs=(x,), label=y."
            )
        return None, None
    if takes_label and label is None:
        args = _as_tuple(inputs)
        if len(args) < 2:
            raise InputError(
                "the network given takes a label (it is a WithLossCell, TrainOneStepCell or a Model with "
                f"a loss), so `inputs` must be (data..., label); got {len(args)} value(s). Pass e.g. "
                "inputs=(x, y), or inputs=x, label=y."
            )
        inputs, label = args[:-1], args[-1]
    if isinstance(label, (str, bytes)):  # a scalar construct() may take, but never a loss's target
        raise InputError(
            f"label is the {type(label).__name__} {label!r}; a label holds the batch's target values: pass "
            "a mindspore.Tensor or numpy array (e.g. label=Tensor(y)), or a number."
        )
    if label is not None:
        label = normalize_value(label, "" if not takes_label else "[-1]")
    try:
        return normalize_inputs(net, inputs), label
    except InputError as err:
        args = _as_tuple(inputs)
        if loss_fn is not None and label is None and len(args) > 1:
            try:
                normalize_inputs(net, args[:-1])
            except InputError:
                raise err from None
            raise InputError(
                f"{err} The network takes {len(args) - 1} input(s) and a loss is given: if the last "
                "value is the label, pass it apart, e.g. inputs=(x,), label=y."
            ) from None
        raise


def build_request(
    net: Any, optimizer: Any = None, *, options: Mapping[str, Any] | None = None, **keywords: Any
) -> AuditRequest:
    """Check the arguments of :func:`graphaudit.audit` and make its :class:`~graphaudit.evidence.AuditRequest`.

    *keywords* are :data:`~graphaudit.evidence.REQUEST_KEYWORDS` (``inputs``, ``label``,
    ``loss_fn``, ``spec``, ``mode``, ``probe``); *options* the evidence options.
    """
    from graphaudit.capture.network.inputs import check_cell
    from graphaudit.capture.training.unwrap import unwrap

    unknown = sorted(set(keywords) - set(REQUEST_KEYWORDS))
    if unknown:
        raise TypeError(f"build_request() got unexpected keywords {unknown}; it takes {REQUEST_KEYWORDS}")
    inputs, label, loss_fn = keywords.get("inputs"), keywords.get("label"), keywords.get("loss_fn")
    spec, mode, probe = keywords.get("spec"), keywords.get("mode"), keywords.get("probe", False)

    given = net
    setup = unwrap(net, optimizer, loss_fn)
    backbone = check_cell(setup.net, function="audit")
    optimizer = _check_optimizer(setup.optimizer)
    loss_fn = _check_loss(setup.loss_fn)
    checked_spec = _check_spec(spec)
    if mode is None and optimizer is not None:
        mode = "train"
    if mode not in (None, *MODES):
        raise ArgumentError(f'audit() expects mode="train" or mode="eval", got {mode!r}.')
    steps = _probe_steps(probe)
    extra = check_options(options or {})
    data, target = _inputs_and_label(backbone, inputs, label, setup.takes_label, loss_fn)
    if steps:
        from graphaudit.capture.training.probe_steps import check_step_arguments
        from graphaudit.errors import ProbeInputError

        if data is None:
            raise ProbeInputError(
                "probe=True runs one real training step, so it needs a batch and its label: pass "
                "inputs=(x,) and label=y (or inputs=(x, y) for a WithLossCell, TrainOneStepCell or Model), "
                "with a loss (loss_fn=...) and an optimizer.",
                cli="--probe runs real training steps, so it needs a batch and its label: give --input "
                "SHAPE[:DTYPE] for each construct() argument and --label SHAPE[:DTYPE], with a factory "
                "returning (net, optimizer, loss_fn).",
            )
        check_step_arguments(backbone, optimizer, loss_fn, target, returns_loss=setup.loss_inside)
    return AuditRequest(
        backbone,
        given,
        optimizer,
        loss_fn,
        data,
        target,
        checked_spec,
        mode,
        steps,
        extra,
        loss_inside=setup.loss_inside,
        unwrapped=setup.unwrapped,
    )
