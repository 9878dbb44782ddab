"""Audit inside the training loop: a ``mindspore.train.Callback`` for ``Model.train``.

:class:`AuditCallback` audits the network ``Model.train`` is about to train — its training
network (backbone, loss and optimizer found inside, as :func:`graphaudit.audit` finds them)
on the first real batch of the dataset — before the first step runs. With findings at or
above ``fail_on`` it stops the training with :class:`AuditFailed`, which carries the
report; with ``fail_on="never"`` it only logs the report. The audit changes nothing, as
always: the first step then trains exactly as it would have.

Example:
    >>> import numpy as np
    >>> import mindspore as ms
    >>> from mindspore import nn
    >>> import graphaudit
    >>> data = ms.dataset.NumpySlicesDataset(
    ...     {"x": np.ones((8, 4), np.float32), "y": np.zeros(8, np.int32)}, shuffle=False).batch(4)
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 3)])
    >>> optimizer = nn.SGD(net[0].trainable_params())  # the head is left out
    >>> model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    >>> audit = graphaudit.AuditCallback(fail_on="error")
    >>> try:
    ...     model.train(1, data, callbacks=[audit], dataset_sink_mode=False)
    ... except graphaudit.AuditFailed as stopped:
    ...     print([f.check_id for f in stopped.report.of_severity("error")])
    ['GA201']
"""

from __future__ import annotations

import logging
from typing import Any

from mindspore.train import Callback

from graphaudit.errors import ArgumentError, ArgumentTypeError, AuditFailed
from graphaudit.errors.arguments import checked_call
from graphaudit.findings import FAIL_ON
from graphaudit.suggest import did_you_mean

__all__ = ["AuditCallback", "AuditFailed"]

logger = logging.getLogger("graphaudit")


class AuditCallback(Callback):
    """Audit before the first training step of ``Model.train``; see the module docstring.

    *fail_on* is ``"error"`` (default), ``"warning"`` or ``"never"``; *probe* runs one real
    training step in the audit (restored afterwards); other keywords go to
    :func:`graphaudit.audit` (``spec=``, ``peers=``...). After training starts, ``report``
    holds the report.
    """

    @checked_call
    def __init__(self, *, fail_on: str = "error", probe: bool = False, **audit_options: Any) -> None:
        super().__init__()
        if fail_on not in FAIL_ON:
            raise ArgumentError(
                f"AuditCallback(fail_on=...) takes one of {', '.join(FAIL_ON)}, got {fail_on!r}"
            )
        if not isinstance(probe, int) or (not isinstance(probe, bool) and probe < 0):
            raise ArgumentTypeError(
                f"AuditCallback(probe=...) takes True, False or a number of steps >= 0, got {probe!r}"
            )
        _check_keywords(audit_options)
        self.fail_on = fail_on
        self.probe = probe
        self.audit_options = audit_options
        self.report: Any = None

    def on_train_step_begin(self, run_context: Any) -> None:
        if self.report is not None:
            return
        from graphaudit.capture.network.isolation import training_flags
        from graphaudit.runner import audit

        params = run_context.original_args()
        batch = tuple(getattr(params, "train_dataset_element", None) or ()) or _first_batch(params)
        network = params.train_network
        # Model.train switches the network to training mode right after this hook: audit it so.
        with training_flags(network, True):
            self.report = audit(network, inputs=batch, probe=self.probe, mode="train", **self.audit_options)
        failing = self.report.of_severity(*FAIL_ON[self.fail_on])
        if failing:
            run_context.request_stop()
            raise AuditFailed(self.report)
        logger.info("%s", self.report)


#: audit() keywords the callback sets itself, from what Model.train runs.
_SET_BY_THE_CALLBACK = ("net", "optimizer", "inputs", "mode")


def _check_keywords(options: dict[str, Any]) -> None:
    """Refuse, when the callback is made, a keyword audit() would refuse at the first step."""
    import inspect

    from graphaudit.runner import audit

    known = [n for n in inspect.signature(audit).parameters if n not in _SET_BY_THE_CALLBACK]
    for name in options:
        if name in _SET_BY_THE_CALLBACK:
            raise ArgumentTypeError(
                f"AuditCallback() got {name}=, which it takes from Model.train itself (the training "
                "network and its first batch): leave it out"
            )
        if name not in known:
            raise ArgumentTypeError(
                f"AuditCallback() got an unexpected keyword argument {name!r}{did_you_mean(name, known)} "
                f"(it passes keywords on to graphaudit.audit(): {', '.join(known)})"
            )


def _first_batch(params: Any) -> tuple[Any, ...]:
    """The first batch, from a fresh iterator over the training dataset (in sink mode)."""
    dataset = getattr(params, "train_dataset", None)
    if dataset is None:
        raise ArgumentError("AuditCallback found no batch to audit on: Model.train gave it no dataset")
    return tuple(next(dataset.create_tuple_iterator(num_epochs=1)))
