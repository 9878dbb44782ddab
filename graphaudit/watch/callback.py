"""``graphaudit.Watch()``: watch ``Model.train`` / ``Model.fit`` as it really trains.

Every step the loss (and, for a loss-scaled step, whether it overflowed) is read from the
step's outputs; every ``every`` steps the weights before and after the update are compared
and the gradients the optimizer got are read (by a forward pre-hook on the optimizer, which
reads and never writes). Under GRAPH_MODE the optimizer runs inside the compiled step: a
:class:`~graphaudit.watch.compiled.GradientTap` put where the train network calls it hands
out the gradients' norms from the same graph (the noise scale, which needs the gradients
themselves, is NOT RUN there), and the optimizer is put back when training ends. In PyNative the loss is also read as the optimizer is called, before its
update: when it is not finite the weights that made it are kept, and the step's batch is
re-run (isolated) to name the first layer whose output was not finite (GA950). The validation loss comes from ``Model.fit(valid_dataset=...)`` (a
``"loss"`` metric) or from ``Watch(eval_dataset=...)``, evaluated at each epoch's end in
eval mode. The watchpoints judge the run at each epoch's end and when the loss stops being
finite; after training, ``watch.report`` is a :class:`~graphaudit.report.Report`.

Example:
    >>> import numpy as np, mindspore as ms
    >>> from mindspore import nn
    >>> import graphaudit
    >>> ms.set_context(mode=ms.PYNATIVE_MODE)
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(64, 4)).astype(np.float32)
    >>> data = ms.dataset.NumpySlicesDataset({"x": x, "y": (x[:, 0] > 0).astype(np.int32)}, shuffle=False).batch(16)
    >>> net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 2)])
    >>> model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 1e4))
    >>> watch = graphaudit.Watch(every=1, fail_on="never")
    >>> model.train(3, data, callbacks=[watch], dataset_sink_mode=False)
    >>> "GA951" in [f.check_id for f in watch.report.findings] or "GA950" in watch.report.checks_run
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mindspore.train import Callback

from graphaudit.capture.network.values import scalar
from graphaudit.errors.arguments import checked_call
from graphaudit.findings import Finding
from graphaudit.watch.record import Recorder
from graphaudit.watch.session import DEFAULT_EVERY, Session
from graphaudit.watch.validation import Validation, accuracy_in, even_batches, validate

__all__ = ["Watch"]

_NOISE_COMPILED = (
    "Model.train ran in GRAPH_MODE: the compiled step hands out its gradients' norms, and the noise "
    "scale needs the gradients themselves, summed over steps; train in PyNative "
    "(ms.set_context(mode=ms.PYNATIVE_MODE)), or write the loop with graphaudit.watch() and pass "
    "w.step(grads=...)"
)
_NOT_TAPPED = (
    "the compiled step never called the optimizer through graphaudit's gradient tap (the train "
    "network calls it some other way); train in PyNative, or write the loop with graphaudit.watch() "
    "and pass w.step(grad_norms=gradient_norms(grads))"
)


def loss_of(outputs: Any) -> tuple[float, bool | None, float | None]:
    """The loss of a step's outputs, whether it overflowed and its loss scale (a loss-scaled step's ``(loss, overflow, scale)``).

    Example:
        >>> from mindspore import Tensor
        >>> loss_of((Tensor(0.5), Tensor(True), Tensor(1024.0))), loss_of((Tensor(0.5), Tensor([1.0, 2.0])))
        ((0.5, True, 1024.0), (0.5, None, None))
    """
    if isinstance(outputs, (tuple, list)):
        flag = outputs[1] if len(outputs) >= 2 else None
        values = np.asarray(flag.asnumpy()) if hasattr(flag, "asnumpy") else None
        overflow = bool(values.any()) if values is not None and values.dtype == np.bool_ else None
        scale = None
        if overflow is not None and len(outputs) >= 3 and hasattr(outputs[2], "asnumpy"):
            scale = scalar(outputs[2])
        return float(np.asarray(outputs[0].asnumpy()).mean()), overflow, scale
    return float(np.asarray(outputs.asnumpy()).mean()), None, None


def steps_per_call(params: Any) -> int:
    """Steps each step callback stands for: a dataset sink's size on a device, else 1.

    On the CPU MindSpore trains without a sink whatever ``dataset_sink_mode`` says (it only logs
    so), and its callback parameters say ``dataset_sink_mode=False``: one step a call.

    Example:
        >>> from types import SimpleNamespace
        >>> steps_per_call(SimpleNamespace(dataset_sink_mode=True, sink_size=-1, batch_num=30))
        30
    """
    if not getattr(params, "dataset_sink_mode", False):
        return 1
    size = int(getattr(params, "sink_size", -1) or -1)
    return max(size if size > 0 else int(getattr(params, "batch_num", 1) or 1), 1)


class Watch(Callback):
    """Watch ``Model.train`` / ``Model.fit``; see the module docstring.

    *every* samples the weights and gradients every N steps (the loss is read at every step);
    *checks* chooses the watchpoints (IDs or names; default all); *fail_on* (``"error"``,
    ``"warning"`` or ``"never"``) stops the training with
    :class:`~graphaudit.watch.session.WatchFailed` when a finding that bad appears; *out*
    is a folder for the dashboard (``dashboard.html``) and the samples (``samples.jsonl``);
    *eval_dataset* is evaluated at each epoch's end for the validation loss; *layers* names
    parameters whose distributions the dashboard shows besides those the findings name;
    *on_finding* is called with each finding the moment it appears; *baseline* is the
    ``samples.jsonl`` (or the ``out=`` folder) a healthy run of the same recipe wrote, or its
    ``.record``: the run is judged against it (GA966-GA968, ``docs/watch.md``). What is
    reported follows the configuration as for :func:`graphaudit.audit`: the ``[tool.graphaudit]``
    table of the nearest ``pyproject.toml`` (read when the watch is made), or *config*.
    """

    @checked_call
    def __init__(
        self,
        *,
        every: int = DEFAULT_EVERY,
        checks: Sequence[str] | None = None,
        fail_on: str = "error",
        out: str | Path | None = None,
        eval_dataset: Any = None,
        layers: Sequence[str] = (),
        on_finding: Callable[[Finding], Any] | None = None,
        baseline: str | Path | Any = None,
        config: Any = None,
    ) -> None:
        super().__init__()
        self.session = Session(
            every=every,
            checks=checks,
            fail_on=fail_on,
            out=out,
            on_finding=on_finding,
            layers=layers,
            baseline=baseline,
            config=config,
        )
        self.eval_dataset = eval_dataset
        self._recorder: Recorder | None = None
        self._grads: Any = None
        self._hook: Any = None
        self._drift: Any = None
        self._ranks: Any = None
        self._network: Any = None
        self._loss_fn: Any = None
        self._loss_net: Any = None  # the cell that computes the loss: what a NaN's batch is re-run through
        self._loss_hook: Any = None
        self._loss_out: Any = None
        self._tapped: Any = None  # the GRAPH_MODE train network's gradient tap (graphaudit.watch.compiled)
        self._chance_loss: Any = None  # the loss cell whose uniform guess the first loss is judged against

    @property
    def report(self) -> Any:
        """The :class:`~graphaudit.report.Report` of the watchpoints (``None`` before the first judgement)."""
        return self.session.report

    @property
    def record(self) -> Any:
        """What was recorded (:class:`~graphaudit.evidence.training.RunRecord`); ``audit(..., watched=record)``."""
        return self.session.record

    def _grab(self, _cell: Any, args: Any) -> None:
        self._grads = args[0] if args else None  # a reference: nothing is copied unless the step is sampled
        loss, self._loss_out = self._loss_out, None
        recorder = self._recorder
        watching = loss is not None and recorder is not None and recorder.record.non_finite is None
        if watching and not math.isfinite(loss_of(loss)[0]):  # read only while no NaN was seen
            recorder.keep_weights()  # the update has not run yet: these are the weights that made it

    def _saw_loss(self, _cell: Any, _args: Any, output: Any) -> None:
        if self._loss_out is None:
            self._loss_out = output  # a reference; read once, in _grab, before the update

    def _rerun(self, batch: Any) -> Any:
        from graphaudit.watch.locate import locate

        loss_net, network = self._loss_net, self._network
        prefix = next(
            (name + "." for name, cell in loss_net.cells_and_names() if cell is network and name), ""
        )

        def rerun(weights: Any) -> Any:
            found = locate(loss_net, batch, weights)
            if found is not None and prefix and found.cell.startswith(prefix):
                return type(found)(found.cell[len(prefix) :], found.tensor)
            if found is not None and found.cell == prefix[:-1]:
                return type(found)("", found.tensor)
            return found

        return rerun

    def on_train_begin(self, run_context: Any) -> None:
        import mindspore as ms
        from mindspore import nn

        from graphaudit.watch.drift import RankDrift
        from graphaudit.watch.ranks import RankLossExchange

        params = run_context.original_args()
        train_network = params.train_network
        optimizer = getattr(params, "optimizer", None) or getattr(train_network, "optimizer", None)
        self._network = getattr(params, "network", None) or train_network
        self._loss_fn = getattr(params, "loss_fn", None)
        from graphaudit.watch.start import loss_cell_of

        self._chance_loss = loss_cell_of(train_network, self._loss_fn)
        watched = list(optimizer.parameters) if optimizer is not None else train_network.trainable_params()
        dataset = getattr(params, "train_dataset", None)
        batch = dataset.get_batch_size() if dataset is not None else None
        self._recorder = self.session.start(self._network, optimizer, watched, batch)
        self._recorder.record.steps_per_call = steps_per_call(params)
        inner = getattr(train_network, "network", None)
        self._loss_net = inner if isinstance(inner, nn.Cell) else self._network
        if optimizer is not None and ms.get_context("mode") == ms.PYNATIVE_MODE:
            self._hook = optimizer.register_forward_pre_hook(self._grab)
            if isinstance(inner, nn.Cell):
                self._loss_hook = inner.register_forward_hook(self._saw_loss)
        else:
            from graphaudit.watch.compiled import tap_train_network

            tapped = tap_train_network(train_network, optimizer)
            record = self._recorder.record
            if isinstance(tapped, str):
                record.gradients_reason = f"Model.train ran in GRAPH_MODE and {tapped}"
            else:
                self._tapped = tapped
                record.gradients_reason, record.noise_reason = _NOT_TAPPED, _NOISE_COMPILED
        self._drift = RankDrift.when_distributed(self._network, self._recorder.record, self.session.every)
        self._ranks = RankLossExchange.when_distributed(self._recorder.record, self.session.every)

    def on_train_step_begin(self, run_context: Any) -> None:
        if self._recorder is not None:
            self._recorder.before(run_context.original_args().cur_step_num)
            if self._tapped is not None and self._recorder.sampling:
                self._tapped.tap.mark()
            elif self._tapped is not None:
                self._tapped.tap.want(False)

    def on_train_step_end(self, run_context: Any) -> None:
        if self._recorder is None:
            return
        params = run_context.original_args()
        loss, overflow, scale = loss_of(params.net_outputs)
        step = params.cur_step_num
        known = self._recorder.record.non_finite
        batch = getattr(params, "train_dataset_element", None)
        rerun = self._rerun(tuple(batch)) if batch is not None and not math.isfinite(loss) else None
        if self._tapped is not None and self._recorder.sampling:
            self._grads = self._tapped.tap.read()
        self._recorder.after(step, params.cur_epoch_num, loss, self._grads, overflow, rerun, scale)
        self._grads = None
        if self._recorder.record.steps == 1 and self._recorder.record.steps_per_call == 1:
            self._read_chance(batch)
            if self._recorder.record.chance is not None:
                self._judge(run_context)  # an absurd start stops the run now, not an epoch later
        if self._ranks is not None:
            self._ranks.maybe_exchange(step)
        if self._drift is not None:
            self._drift.maybe_compare(step)
        if known is None and self._recorder.record.non_finite is not None:
            self._judge(run_context)

    def _read_chance(self, batch: Any) -> None:
        """A uniform guess's loss, the yardstick of the first loss (GA965): one isolated forward pass."""
        from graphaudit.watch.start import chance_of

        record = self._recorder.record
        if batch is None or len(batch) < 2:
            record.chance_reason = "Model.train did not show the first step's batch (inputs and a label)"
            return
        chance = chance_of(self._chance_loss, self._network, tuple(batch)[:-1])
        if isinstance(chance, str):
            record.chance_reason = chance
        else:
            record.chance, record.chance_reason = chance, None

    def on_eval_end(self, run_context: Any) -> None:
        params = run_context.original_args()
        results = getattr(params, "eval_results", None) or {}
        if self._recorder is not None and "loss" in results:
            valid = getattr(params, "valid_dataset", None)
            accuracy = accuracy_in(results, valid)
            result = Validation(float(results["loss"]), *(accuracy or (None, 0)))
            if valid is not None and not even_batches(valid) and self._network is not None:
                # MindSpore's Loss metric averages batch means: a short last batch weighs as much as
                # a full one. The loss per sample is what the watchpoints judge (one more pass).
                result = validate(self._network, self._loss_fn, valid)
            self._recorder.record.add_validation(params.cur_epoch_num, result)

    def on_train_epoch_end(self, run_context: Any) -> None:
        if self._recorder is None:
            return
        if self.eval_dataset is not None:
            params = run_context.original_args()
            result = validate(self._network, self._loss_fn, self.eval_dataset)
            self._recorder.record.add_validation(params.cur_epoch_num, result)
        self._judge(run_context)

    def on_train_end(self, run_context: Any) -> None:
        self._unhook()
        if self._recorder is not None:
            self.session.finish()

    def _judge(self, run_context: Any) -> None:
        try:
            self.session.judge()
        except Exception:
            run_context.request_stop()
            self._unhook()
            raise

    def _unhook(self) -> None:
        for handle in (self._hook, self._loss_hook, self._tapped):
            if handle is not None:
                handle.remove()
        self._hook = self._loss_hook = self._tapped = None
