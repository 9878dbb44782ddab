"""The dependency probe's cost (issue 26): its inference passes / one forward pass of the same batch.

Run inside a worker subprocess started by ``benchmarks/run.py``. Two kinds of model, the two
ways the probe runs:

- ``cnn``: mindcv resnet18 on ``2x3x224x224`` (the batch probe only; the multi-step probe's
  model, at the side it is made for: at 64x64 its 40-60 ms forward pass varied between runs as
  much as the ratio did);
- ``decoder``: the GPT-style decoder of ``samples/GA341/good.py`` at 4 layers of width 128
  on ``2x64`` tokens with an attention mask, ``causal`` and ``mask_input`` given (the batch,
  sequence and padding probes together).

Timed interleaved, after one warm-up run of each: ``forward``, one PyNative forward pass in
inference mode, its output read with ``.asnumpy()``; ``forward (training)``, the same in
training mode (the two baselines the target is read against); ``dependency probe``,
:func:`graphaudit.capture.dependency.probe.probe_dependencies` on the same batch, hooks on every
cell, everything restored. On a sound model it runs two passes (the baseline and one combined
variant); the target is <= 2 forward passes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from benchmarks.common import interleave

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "GA341" / "good.py"


def _decoder() -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    import numpy as np
    from mindspore import Tensor

    spec = importlib.util.spec_from_file_location("bench_decoder", SAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.Decoder(vocab=256, width=128, heads=4, layers=4, length=64)
    ids = Tensor(np.random.default_rng(0).integers(0, 256, (2, 64)).astype(np.int32))
    return net, (ids, Tensor(np.ones((2, 64), np.int32))), {"sequence": True, "mask": 1}


def _cnn(model: str, size: int) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    import numpy as np
    from mindspore import Tensor

    from benchmarks.model import build

    net, _, x = build(model, size)
    shape = (2, *x.shape[1:]) if model.startswith("synthetic:") else (2, 3, size, size)
    x = Tensor(np.random.default_rng(0).random(shape, dtype=np.float32))  # the probe needs 2 samples
    return net, (x,), {}


def time_dependency(kind: str, size: int, repeats: int, model: str = "resnet18") -> dict[str, Any]:
    """Warm up, then time a forward pass and the dependency probe of *kind* (``cnn``/``decoder``), interleaved."""
    from graphaudit.capture.dependency.probe import probe_dependencies
    from graphaudit.capture.network.recorder import flatten_tensors

    net, inputs, options = _decoder() if kind == "decoder" else _cnn(model, size)
    net.set_train(False)
    cells = dict(net.cells_and_names())
    results: list[Any] = []

    def forward() -> None:
        for tensor in flatten_tensors(net(*inputs)):
            tensor.asnumpy()

    def forward_training() -> None:
        net.set_train(True)
        try:
            forward()
        finally:
            net.set_train(False)

    def probe() -> None:
        results.append(probe_dependencies(net, inputs, cells, **options))

    runs = {"forward": forward, "forward (training)": forward_training, "dependency probe": probe}
    for run in runs.values():
        run()
    seconds = interleave(runs, repeats)
    last = results[-1]
    return {
        "kind": kind,
        "model": "GPT-style decoder, 4 layers, width 128, 2x64 tokens" if kind == "decoder" else model,
        "input_shapes": [list(x.shape) for x in inputs],
        "seconds": seconds,
        "passes": None if isinstance(last, str) else last.passes,
        "found": None if isinstance(last, str) else sorted(k for k, v in last.results.items() if v.found),
        "failure": last if isinstance(last, str) else None,
    }
