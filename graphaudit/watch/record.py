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
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphaudit.capture.network.values import tensor_values
from graphaudit.evidence.training import NonFinite, RunRecord, Sample

__all__ = ["NOISE_WINDOW", "POSITIONS", "TRACKED", "WHOLE_BYTES", "GradientNorms", "Recorder"]

#: Consecutive gradient samples that make one estimate of the gradient noise scale.
NOISE_WINDOW = 5
#: The weight values kept per parameter and sample, at fixed positions (the distributions).
POSITIONS = 256
#: Up to this many bytes of trainable weights (float32), the weights before a sampled update
#: and the gradient sums are kept whole: every norm is exact.
WHOLE_BYTES = 16 * 2**20
#: Above it, each parameter larger than this is tracked at this many fixed random positions:
#: its update and gradient-sum norms are estimated from them (scaled by size / positions), so
#: the watch's memory stays a few MiB whatever the network's size.
TRACKED = 2**16


@dataclass(frozen=True)
class GradientNorms:
    """The norms of the gradients a compiled step applied, one per parameter, and whether each was finite.

    What leaves a compiled step instead of the gradients (:mod:`graphaudit.watch.compiled`):
    the watchpoints that read norms judge them; the noise scale, which needs the gradients, does not.
    """

    norms: tuple[float, ...]
    finite: tuple[bool, ...]

    @classmethod
    def read(cls, readings: Any) -> GradientNorms:
        """From ``gradient_norms(grads)``'s ``(2, N)`` readings (a tensor or an array)."""
        values = np.asarray(tensor_values(readings) if hasattr(readings, "asnumpy") else readings, np.float64)
        if values.ndim != 2 or values.shape[0] != 2:
            raise ValueError(f"gradient norms are read from a (2, N) array, got shape {values.shape}")
        return cls(tuple(float(v) for v in values[0]), tuple(bool(v) for v in values[1] > 0.5))


def _norm(values: np.ndarray) -> float:
    return float(np.linalg.norm(values))


def _values(tensor: Any) -> np.ndarray:
    return np.asarray(tensor_values(tensor), dtype=np.float32).reshape(-1)


class Recorder:
    """Samples *params* every *every* steps (and the first step); the loss at every step."""

    def __init__(
        self, params: Sequence[Any], *, every: int, batch_size: int | None = None, gradient_scale: float = 1.0
    ) -> None:
        self.params = list(params)
        self.gradient_scale = gradient_scale  # the gradients given are this many times the true ones
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
        small = sum(int(p.size) for p in self.params) * 4 <= WHOLE_BYTES
        # None: every position of the parameter (exact norms); else the positions it is tracked at
        self._tracked = [
            None if small or p.size <= TRACKED else np.sort(rng.choice(p.size, size=TRACKED, replace=False))
            for p in self.params
        ]
        self._whole = all(pos is None for pos in self._tracked)  # every parameter's before-copy is whole
        self._before: list[np.ndarray] | None = None  # the tracked values before a sampled update
        self._before_norms: list[float] = []
        self._before_crc: list[int | None] = []  # of a tracked parameter's whole bytes: did it change at all?
        self._kept: list[np.ndarray] | None = None  # the weights before a non-finite step's update
        # The weights the step after the last sampled one saw (a whole copy, small networks only):
        # what a non-finite step is re-run with when its own weights were not kept (GRAPH_MODE).
        self._last: tuple[int, list[np.ndarray]] | None = None
        self._window: list[np.ndarray] = []
        self._window_sq: list[float] = []

    @property
    def sampling(self) -> bool:
        """Whether the step under way is sampled (its weights were copied before it)."""
        return self._before is not None

    def sampled(self, step: int) -> bool:
        """Whether *step* (from 1) is sampled: the first, and every ``every``-th."""
        return step == 1 or step % self.every == 0

    def before(self, step: int) -> None:
        """The step is about to run: copy the weights (or their tracked positions) when it is sampled."""
        if not self.sampled(step):
            self._before = None
            return
        values = [_values(p) for p in self.params]
        self._before_norms = [_norm(v) for v in values]
        self._before = [v.copy() if pos is None else v[pos] for v, pos in zip(values, self._tracked)]
        self._before_crc = [None if pos is None else zlib.crc32(v) for v, pos in zip(values, self._tracked)]

    def keep_weights(self) -> None:
        """The step's loss is not finite and its update has not run yet: keep the weights its forward saw."""
        if self._kept is None and self.record.non_finite is None:
            self._kept = [_values(p).copy() for p in self.params]

    def after(
        self,
        step: int,
        epoch: int,
        loss: float,
        grads: Sequence[Any] | GradientNorms | None = None,
        overflow: bool | None = None,
        rerun: Callable[[Sequence[tuple[Any, np.ndarray]]], Any] | None = None,
        loss_scale: float | None = None,
    ) -> None:
        """The step ran: its loss, the gradients the optimizer got (or ``None``), its overflow and loss scale.

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
            record.loss_scales.append(loss_scale)
        if record.non_finite is None and not math.isfinite(loss):
            record.non_finite = self._locate(step, epoch, float(loss), grads)
            self._forward(record.non_finite, rerun)
        self._kept = None
        if self._before is None:
            return
        before, self._before = self._before, None
        now = [_values(p) for p in self.params]
        if self._whole:
            self._keep_last(step + 1, now)
        updates = [self._update_norm(*item) for item in zip(now, before, self._tracked, self._before_crc)]
        sample = Sample(
            step,
            self._before_norms,
            updates,
            # arrays, not lists: 256 Python floats a weight were ~0.5 MB a sampled step on resnet18
            values=[w[pos] for w, pos in zip(now, self._positions)],
        )
        if isinstance(grads, GradientNorms):  # a compiled step's: norms, no gradients to sum
            sample.grad_norms = [n / self.gradient_scale for n in grads.norms]
            record.gradients_seen = True
        elif grads is not None:
            flat = [_values(g) for g in grads]
            if self.gradient_scale != 1.0:
                flat = [g / np.float32(self.gradient_scale) for g in flat]
            sample.grad_norms = [_norm(g) for g in flat]
            record.gradients_seen = True
            self._add_noise_sample(flat, sample.grad_norms)
        record.samples.append(sample)

    def _keep_last(self, seen_at: int, now: list[np.ndarray]) -> None:
        """Copy the weights step *seen_at* starts from, into the last copy's arrays when they fit."""
        last = self._last[1] if self._last is not None else None
        if last is None or any(a.shape != b.shape for a, b in zip(last, now)) or len(last) != len(now):
            last = [v.copy() for v in now]
        else:
            for kept, value in zip(last, now):
                np.copyto(kept, value)
        self._last = (seen_at, last)

    @staticmethod
    def _update_norm(
        now: np.ndarray, before: np.ndarray, tracked: np.ndarray | None, crc: int | None
    ) -> float | None:
        """‖Δw‖ of one parameter: exact when kept whole, else estimated from its tracked positions.

        A tracked parameter whose tracked values did not move is told apart exactly, by the
        checksum of its bytes: unchanged (0.0, what GA960 reads), or changed elsewhere (a sparse
        update, e.g. a few embedding rows: unknown, ``None``, rather than a false 0).
        """
        if tracked is None:  # computed in the copy of the weights before it (ours, no longer needed)
            return _norm(np.subtract(now, before, out=before)) if now.shape == before.shape else None
        if now.size <= int(tracked[-1]):
            return None  # the parameter was replaced by a smaller one
        moved = _norm(np.subtract(now[tracked], before, out=before))
        if moved == 0.0:
            return 0.0 if zlib.crc32(now) == crc else None
        return moved * math.sqrt(now.size / tracked.size)

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
            self._window = [
                g.astype(np.float32, copy=True) if pos is None else g[pos].astype(np.float32)
                for g, pos in zip(flat, self._tracked)
            ]
        else:
            for total, g, pos in zip(self._window, flat, self._tracked):
                np.add(total, g if pos is None else g[pos], out=total)
        if len(self._window_sq) == NOISE_WINDOW:
            scale = [1.0 if pos is None else g.size / pos.size for g, pos in zip(flat, self._tracked)]
            big = math.fsum(s * _norm(total) ** 2 for s, total in zip(scale, self._window)) / NOISE_WINDOW**2
            small = sum(self._window_sq) / NOISE_WINDOW
            self.record.noise_windows.append((NOISE_WINDOW, small, big))
            self._window, self._window_sq = [], []

    def _forward(self, found: NonFinite, rerun: Callable[..., Any] | None) -> None:
        """Re-run the step's forward pass with the weights it saw, when they are known."""
        if rerun is None:
            found.forward_note = "the step's batch was not given (a loop passes w.step(inputs=...))"
            return
        seen = self._kept if self._kept is not None else (self._before if self._whole else None)
        if seen is None and self._last is not None and self._last[0] == found.step:
            seen = self._last[1]  # copied after the previous step, the last sampled one
        why = (
            "the step was not sampled"
            if self._whole
            else f"weights over {WHOLE_BYTES // 2**20} MiB are not copied whole"
        )
        older = ""
        if seen is not None:
            weights = [(p, v.reshape(tuple(p.shape))) for p, v in zip(self.params, seen)]
            found.forward_note = "the step's batch re-run with the weights its forward pass saw"
        elif found.weight is None:
            weights = []
            found.forward_note = (
                "the step's batch re-run with the weights after its update (all still finite; "
                f"those before it were not kept: {why})"
            )
        elif self._last is not None:
            seen_at, values = self._last
            weights = [(p, v.reshape(tuple(p.shape))) for p, v in zip(self.params, values)]
            found.forward_note = (
                f"the step's batch re-run with the weights step {seen_at} saw, the last copied "
                f"({found.step - seen_at} steps earlier: the step's update had made {found.weight} "
                f"non-finite, and the weights before it were not kept: {why})"
            )
            older = (
                ": the failure did not reproduce with those weights (train with every=1 to keep each step's)"
            )
        else:
            found.forward_note = (
                f"the forward pass was not re-run: the step's update had made {found.weight} "
                f"non-finite, and the weights before it were not kept ({why}; "
                "Model.train in PyNative keeps them, and so does every=1 for smaller networks)"
            )
            return
        try:
            located = rerun(weights)
        except Exception as err:  # the watch must not end the training it watches
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            found.forward_note = f"re-running the step's batch failed: {type(err).__name__}: {first}"
            return
        if located is None:
            found.forward_note += "; every cell's output was finite" + older
        else:
            found.forward, found.tensor = located.cell, located.tensor

    def _locate(
        self, step: int, epoch: int, loss: float, grads: Sequence[Any] | GradientNorms | None
    ) -> NonFinite:
        """The first gradient and weight (in the optimizer's order) that hold a NaN or Inf."""
        found = NonFinite(step, epoch, loss)
        if isinstance(grads, GradientNorms):
            found.gradient = next((p.name for p, ok in zip(self.params, grads.finite) if not ok), None)
        elif grads is not None:
            for param, grad in zip(self.params, grads):
                if not np.all(np.isfinite(_values(grad))):
                    found.gradient = param.name
                    break
        for param in self.params:
            if not np.all(np.isfinite(_values(param))):
                found.weight = param.name
                break
        return found
