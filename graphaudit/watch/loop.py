"""``graphaudit.watch(net, optimizer)``: watch a functional training loop.

The loop calls ``w.step(loss=..., grads=...)`` after each optimizer update, with the
gradients it gave the optimizer (in the order of ``optimizer.parameters``, as
``value_and_grad(fn, None, optimizer.parameters)`` returns them), and ``w.validate(loss)``
after evaluating, if it does. A loss-scaled step passes ``overflow=`` and ``loss_scale=`` (the
scale it used: GA961 tells a fixed scale from a dynamic one by it). Leaving the ``with``
block makes ``w.report``, a :class:`~graphaudit.report.Report`, and writes the dashboard to
``out``. Nothing the loop computes is changed: the watch only reads.

Example:
    >>> import numpy as np, mindspore as ms
    >>> from mindspore import Tensor, nn
    >>> import graphaudit
    >>> rng = np.random.default_rng(0)
    >>> x = Tensor(rng.normal(size=(32, 4)).astype(np.float32))
    >>> y = Tensor(rng.normal(size=(32, 1)).astype(np.float32))
    >>> net = nn.Dense(4, 1)
    >>> optimizer = nn.SGD(net.trainable_params(), 0.05)
    >>> grad_fn = ms.value_and_grad(lambda a, b: nn.MSELoss()(net(a), b), None, optimizer.parameters)
    >>> with graphaudit.watch(net, optimizer, every=1) as w:
    ...     for _ in range(30):
    ...         loss, grads = grad_fn(x, y)
    ...         _ = optimizer(grads)
    ...         w.step(loss=loss, grads=grads)
    >>> w.report.ok, "GA952" in w.report.checks_run
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from graphaudit.capture.network.values import scalar
from graphaudit.errors import ArgumentError, ArgumentTypeError
from graphaudit.errors.arguments import check_count, checked_call
from graphaudit.findings import Finding
from graphaudit.watch.record import GradientNorms
from graphaudit.watch.session import DEFAULT_EVERY, Session
from graphaudit.watch.validation import Validation

__all__ = ["Watcher", "watch"]


class Watcher:
    """The handle of :func:`watch`: ``step()``, ``validate()``, and afterwards ``report`` and ``record``."""

    def __init__(self, session: Session, net: Any, optimizer: Any, batch_size: int | None) -> None:
        from mindspore import nn

        if not isinstance(net, nn.Cell):
            raise ArgumentTypeError(
                f"watch() expects the network (a mindspore.nn.Cell), got {type(net).__name__}"
            )
        if not isinstance(optimizer, nn.Optimizer):
            raise ArgumentTypeError(
                f"watch() expects the optimizer (a mindspore.nn.Optimizer) the loop updates, got "
                f"{type(optimizer).__name__}"
            )
        from graphaudit.watch.drift import RankDrift
        from graphaudit.watch.ranks import RankLossExchange

        self.session = session
        self._params = list(optimizer.parameters)
        self._net = net
        self._recorder = session.start(net, optimizer, self._params, batch_size)
        self._recorder.record.gradients_reason = (
            "the loop passed no grads= (or grad_norms=) to w.step(): pass them to watch them"
        )
        self._drift = RankDrift.when_distributed(net, self._recorder.record, session.every)
        self._ranks = RankLossExchange.when_distributed(self._recorder.record, session.every)
        self._step = 0
        self._epoch = 1
        self._recorder.before(1)

    def _norms(self, readings: Any) -> GradientNorms:
        try:
            norms = GradientNorms.read(readings)
        except (TypeError, ValueError) as err:
            raise ArgumentError(
                f"w.step(grad_norms=...) expects what gradient_norms(grads) returns, a (2, N) tensor: {err}"
            ) from None
        if len(norms.norms) != len(self._params):
            raise ArgumentError(
                f"w.step(grad_norms=...) holds {len(norms.norms)} norms for the optimizer's "
                f"{len(self._params)} parameters: pass gradient_norms() of the gradients of "
                "value_and_grad(fn, None, optimizer.parameters)"
            )
        self._recorder.record.noise_reason = (
            "the loop passed grad_norms= (a compiled step's norms): the noise scale needs the gradients "
            "themselves; pass w.step(grads=...) on some steps"
        )
        return norms

    @property
    def report(self) -> Any:
        """The watchpoints' :class:`~graphaudit.report.Report` (final once the ``with`` block is left)."""
        return self.session.report

    @property
    def record(self) -> Any:
        """What was recorded (:class:`~graphaudit.evidence.training.RunRecord`)."""
        return self.session.record

    @checked_call
    def step(
        self,
        loss: Any,
        grads: Sequence[Any] | None = None,
        *,
        overflow: Any = None,
        loss_scale: Any = None,
        epoch: int | None = None,
        inputs: Sequence[Any] | None = None,
        grad_norms: Any = None,
    ) -> None:
        """Record one step, called after the optimizer's update; see the module docstring.

        *grad_norms* stands for *grads* when the step is compiled (``@jit``) and hands out only
        ``graphaudit.watch.compiled.gradient_norms(grads)``: the gradient watchpoints read them,
        the noise scale (GA955), which needs the gradients, does not.

        *inputs* (optional) are the step's inputs of ``net`` (``net(*inputs)``): only when the
        loss first stops being finite are they re-run through ``net`` to find the first cell
        whose output holds a NaN or Inf (GA950); nothing is done with them otherwise.
        """
        if grads is not None and grad_norms is not None:
            raise ArgumentError("w.step() takes grads= or grad_norms=, not both: pass one of them")
        if grad_norms is not None:
            grads = self._norms(grad_norms)
        elif grads is not None and len(grads) != len(self._params):
            raise ArgumentError(
                f"w.step(grads=...) got {len(grads)} gradients for the optimizer's {len(self._params)} "
                "parameters: pass the gradients of value_and_grad(fn, None, optimizer.parameters)"
            )
        if epoch is not None:
            self._epoch = int(epoch)
        self._step += 1
        value = float(np.asarray(loss.asnumpy() if hasattr(loss, "asnumpy") else loss).mean())
        flag = (
            None
            if overflow is None
            else bool(np.asarray(getattr(overflow, "asnumpy", lambda: overflow)()).any())
        )
        recorder = self._recorder
        known = recorder.record.non_finite
        rerun = None
        if inputs is not None and not math.isfinite(value):
            batch = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)

            def rerun(weights: Any) -> Any:
                from graphaudit.watch.locate import locate

                return locate(self._net, batch, weights)

        scale = None if loss_scale is None or flag is None else scalar(loss_scale)
        recorder.after(self._step, self._epoch, value, grads, flag, rerun, scale)
        if self._ranks is not None:
            self._ranks.maybe_exchange(self._step)
        if self._drift is not None:
            self._drift.maybe_compare(self._step)
        recorder.before(self._step + 1)
        if (known is None and recorder.record.non_finite is not None) or self._step % (
            self.session.every * 10
        ) == 0:
            self.session.judge()

    @checked_call
    def validate(
        self, loss: Any, *, epoch: int | None = None, accuracy: float | None = None, samples: int = 0
    ) -> None:
        """Record a validation loss (of the epoch *epoch*, default the current one); the watchpoints judge.

        A classifier also passes its validation *accuracy* (a fraction) over *samples* samples: the
        too-many-epochs watchpoint (GA953) then tells a model that grows overconfident from one
        that generalises worse.
        """
        value = float(np.asarray(loss.asnumpy() if hasattr(loss, "asnumpy") else loss).mean())
        if accuracy is not None and not (0.0 <= float(accuracy) <= 1.0 and samples >= 1):
            raise ArgumentError(
                f"validate(accuracy={accuracy!r}, samples={samples!r}): pass the accuracy as a fraction "
                "in [0, 1] and samples= the number of validation samples it was counted over"
            )
        self._recorder.record.add_validation(epoch or self._epoch, Validation(value, accuracy, samples))
        self._epoch = (epoch or self._epoch) + 1
        self.session.judge()

    def close(self) -> None:
        self.session.finish()


@contextmanager
@checked_call
def watch(
    net: Any,
    optimizer: Any,
    *,
    every: int = DEFAULT_EVERY,
    checks: Sequence[str] | None = None,
    fail_on: str = "error",
    out: str | Path | None = None,
    layers: Sequence[str] = (),
    batch_size: int | None = None,
    on_finding: Callable[[Finding], Any] | None = None,
    baseline: str | Path | Any = None,
    config: Any = None,
) -> Iterator[Watcher]:
    """Watch the functional loop inside the ``with`` block; the options are :class:`~graphaudit.Watch`'s.

    *batch_size* is the loop's batch size (the noise-scale watchpoint GA955 needs it).
    """
    session = Session(
        every=every,
        checks=checks,
        fail_on=fail_on,
        out=out,
        on_finding=on_finding,
        layers=layers,
        baseline=baseline,
        config=config,
    )
    check_count(batch_size, "batch_size", "watch()", minimum=1, allow_none=True)
    watcher = Watcher(session, net, optimizer, batch_size)
    failed = True
    try:
        yield watcher
        failed = False
    finally:
        if not failed:
            watcher.close()
        else:
            session.write_dashboard()
