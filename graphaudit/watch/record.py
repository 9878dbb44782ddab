"""The sampling itself: what the watch copies out of a training run, and when.

A :class:`Recorder` is told about each step twice: :meth:`Recorder.before` (the weights as
the step starts; copied only on a sampled step) and :meth:`Recorder.after` (the loss, the
gradients the optimizer got, whether a loss-scaled step overflowed). Everything it keeps goes
into a :class:`~graphaudit.evidence.training.RunRecord`. It reads the values (``asnumpy``) and
never writes anything: the training goes on exactly as it would have.

Example:
    >>> import numpy as np
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 1)
    >>> recorder = Recorder(net.trainable_params(), every=1)
    >>> recorder.before(1)
    >>> recorder.after(1, 1, 0.5)
    >>> recorder.record.losses, recorder.record.samples[0].update_norms
    ([0.5], [0.0, 0.0])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphaudit.capture.network.values import tensor_values
from graphaudit.evidence.training import NonFinite, RunRecord, Sample

__all__ = ["NOISE_WINDOW", "POSITIONS", "Recorder"]

#: Consecutive gradient samples that make one estimate of the gradient noise scale.
NOISE_WINDOW = 5
#: The weight values kept per parameter and sample, at fixed positions (the distributions).
POSITIONS = 256


def _norm(values: np.ndarray) -> float:
    return float(np.linalg.norm(values))


def _values(tensor: Any) -> np.ndarray:
    return np.asarray(tensor_values(tensor), dtype=np.float32).reshape(-1)


class Recorder:
    """Samples *params* every *every* steps (and the first step); the loss at every step."""

    def __init__(self, params: Sequence[Any], *, every: int, batch_size: int | None = None) -> None:
        self.params = list(params)
        self.record = RunRecord(
            tuple(p.name for p in self.params),
            tuple(int(p.size) for p in self.params),
            tuple(len(p.shape) for p in self.params),
            batch_size=batch_size,
            every=every,
        )
        self.every = every
        rng = np.random.default_rng(0)  # a private generator: the user's random state is not touched
        self._positions = [
            np.sort(rng.choice(p.size, size=min(POSITIONS, p.size), replace=False))
            if p.size
            else np.zeros(0, int)
            for p in self.params
        ]
        self._before: list[np.ndarray] | None = None
        self._kept: list[np.ndarray] | None = None  # the weights before a non-finite step's update
        self._window: list[np.ndarray] = []
        self._window_sq: list[float] = []

    def sampled(self, step: int) -> bool:
        """Whether *step* (from 1) is sampled: the first, and every ``every``-th."""
        return step == 1 or step % self.every == 0

    def before(self, step: int) -> None:
        """The step is about to run: copy the weights when it is sampled."""
        self._before = [_values(p).copy() for p in self.params] if self.sampled(step) else None

    def keep_weights(self) -> None:
        """The step's loss is not finite and its update has not run yet: keep the weights its forward saw."""
        if self._kept is None and self.record.non_finite is None:
            self._kept = [_values(p).copy() for p in self.params]

    def after(
        self,
        step: int,
        epoch: int,
        loss: float,
        grads: Sequence[Any] | None = None,
        overflow: bool | None = None,
        rerun: Callable[[Sequence[tuple[Any, np.ndarray]]], Any] | None = None,
    ) -> None:
        """The step ran: its loss, the gradients the optimizer got (or ``None``), its overflow.

        *rerun*, called only at the first non-finite loss, re-runs the step's batch with the
        weights given (:func:`graphaudit.watch.locate.locate`) and returns where a value first
        became non-finite.
        """
        record = self.record
        record.losses.append(float(loss))
        record.epochs.append(epoch)
        if overflow is not None:
            record.loss_scaled = True
            record.overflows.append(bool(overflow))
        if record.non_finite is None and not math.isfinite(loss):
            record.non_finite = self._locate(step, epoch, float(loss), grads)
            self._forward(record.non_finite, rerun)
        self._kept = None
        if self._before is None:
            return
        before, self._before = self._before, None
        now = [_values(p) for p in self.params]
        weight_norms = [_norm(b) for b in before]
        updates: list[float | None] = []
        for w, b in zip(now, before):
            # the update's norm, computed in the copy of the weights before it (ours, no longer needed)
            updates.append(_norm(np.subtract(w, b, out=b)) if w.shape == b.shape else None)
        sample = Sample(
            step, weight_norms, updates, values=[w[pos].tolist() for w, pos in zip(now, self._positions)]
        )
        if grads is not None:
            flat = [_values(g) for g in grads]
            sample.grad_norms = [_norm(g) for g in flat]
            record.gradients_seen = True
            self._add_noise_sample(flat, sample.grad_norms)
        record.samples.append(sample)

    def _add_noise_sample(self, flat: list[np.ndarray], norms: Sequence[float]) -> None:
        """Sum the gradients of a window of samples: McCandlish et al.'s |G_small|^2 and |G_big|^2.

        Per parameter and in place (no concatenated float64 copy of every gradient: at every
        step that copy was most of the watch's cost); |g|^2 is the sum of the norms squared.
        """
        squared = math.fsum(n * n for n in norms)
        if not math.isfinite(squared):  # a NaN or Inf anywhere (or an overflowing square) spoils the window
            self._window, self._window_sq = [], []
            return
        self._window_sq.append(squared)
        if not self._window:
            self._window = [g.astype(np.float32, copy=True) for g in flat]
        else:
            for total, g in zip(self._window, flat):
                np.add(total, g, out=total)
        if len(self._window_sq) == NOISE_WINDOW:
            big = math.fsum(_norm(total) ** 2 for total in self._window) / NOISE_WINDOW**2
            small = sum(self._window_sq) / NOISE_WINDOW
            self.record.noise_windows.append((NOISE_WINDOW, small, big))
            self._window, self._window_sq = [], []

    def _forward(self, found: NonFinite, rerun: Callable[..., Any] | None) -> None:
        """Re-run the step's forward pass with the weights it saw, when they are known."""
        if rerun is None:
            found.forward_note = "the step's batch was not given (a loop passes w.step(inputs=...))"
            return
        seen = self._kept if self._kept is not None else self._before
        if seen is not None:
            weights = [(p, v.reshape(tuple(p.shape))) for p, v in zip(self.params, seen)]
            found.forward_note = "the step's batch re-run with the weights its forward pass saw"
        elif found.weight is None:
            weights = []
            found.forward_note = (
                "the step's batch re-run with the weights after its update (all still finite; "
                "those before it were not kept: the step was not sampled)"
            )
        else:
            found.forward_note = (
                f"the forward pass was not re-run: the step's update had made {found.weight} "
                "non-finite, and the weights before it were not kept (the step was not sampled; "
                "every=1 keeps them)"
            )
            return
        try:
            located = rerun(weights)
        except Exception as err:  # the watch must not end the training it watches
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            found.forward_note = f"re-running the step's batch failed: {type(err).__name__}: {first}"
            return
        if located is None:
            found.forward_note += "; every cell's output was finite"
        else:
            found.forward, found.tensor = located.cell, located.tensor

    def _locate(self, step: int, epoch: int, loss: float, grads: Sequence[Any] | None) -> NonFinite:
        """The first gradient and weight (in the optimizer's order) that hold a NaN or Inf."""
        found = NonFinite(step, epoch, loss)
        if grads is not None:
            for param, grad in zip(self.params, grads):
                if not np.all(np.isfinite(_values(grad))):
                    found.gradient = param.name
                    break
        for param in self.params:
            if not np.all(np.isfinite(_values(param))):
                found.weight = param.name
                break
        return found
