"""The multi-step probe's cost on a real model (mindcv, default resnet18): ``probe=N`` vs one training step.

Run inside a worker subprocess started by ``benchmarks/run.py``. Timed interleaved, after one
warm-up run of each:

- ``training step``: one ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)`` step,
  its loss read with ``.asnumpy()`` (PyNative dispatches kernels asynchronously). The step
  really trains; the weights it changes do not change the cost of the next runs.
- ``full audit``: ``audit(net, optimizer, inputs=x, label=y, loss_fn=loss)``, no probe.
- ``probe=1`` and ``probe=N``: the same audit with one and with N real steps on the batch,
  everything restored afterwards.

``probe=N`` costs the full audit plus N steps plus what the probe adds to each (reading every
parameter and gradient before and after, restoring them); the row gives it in training steps.
"""

from __future__ import annotations

from typing import Any

from benchmarks.common import interleave


def time_probe(model: str, size: int, repeats: int, steps: int) -> dict[str, Any]:
    """Warm up, then time a training step / the full audit / probe=1 / probe=*steps*, interleaved."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    import graphaudit
    from benchmarks.model import build

    net, optimizer, x = build(model, size)
    if not model.startswith("synthetic:"):  # a batch of 2: one sample in front of BatchNorm is GA720's bug
        x = ms.Tensor(np.random.default_rng(0).random((2, 3, size, size), dtype=np.float32))
    loss = nn.CrossEntropyLoss()
    classes = int(net(x).shape[-1])
    y = ms.Tensor(np.random.default_rng(1).integers(0, classes, int(x.shape[0])).astype(np.int32))
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)
    train.set_train()
    reports: dict[str, Any] = {}

    def audit(probe: int) -> Any:
        def run() -> None:
            reports[f"probe={probe}"] = graphaudit.audit(
                net, optimizer, inputs=x, label=y, loss_fn=loss, probe=probe
            )

        return run

    runs = {
        "training step": lambda: train(x, y).asnumpy(),
        "full audit": audit(0),
        "probe=1": audit(1),
        f"probe={steps}": audit(steps),
    }
    for run in runs.values():
        run()
    seconds = interleave(runs, repeats)
    return {
        "model": model,
        "input_shape": list(x.shape),
        "steps": steps,
        "seconds": seconds,
        "checks_run": {name: len(report.checks_run) for name, report in reports.items()},
    }
