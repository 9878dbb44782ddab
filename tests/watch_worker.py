"""One seeded training run, with or without the watch, for tests/test_watch.py (not a test module itself).

    python tests/watch_worker.py CASE watched|plain OUT.npz

CASE is ``model`` (``Model.train`` of a network with BatchNorm, with an ``eval_dataset``), ``graph``
(the same in GRAPH_MODE, with a fixed loss scale of 1024, the one a CPU takes: the watch's
gradient tap stands in the compiled step), ``loop`` (a functional ``value_and_grad`` loop with Adam) or ``scaled`` (the
loop in float16 with a dynamic loss scaler). Writes every parameter of the network and the
optimizer (and the loss scale) to OUT.npz, and with ``watched`` the watch's counts to OUT.json.
Each run is a fresh process: MindSpore's random state (Dropout's per-operation seeds, the
initialisers' counters) is then the same at the start of every run. The network has no
Dropout: on CPU, MindSpore 2.10's Dropout draws different masks in two processes seeded alike,
so no run with it is reproducible, watched or not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn
from mindspore.amp import DynamicLossScaler, all_finite

import graphaudit


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.bn = nn.BatchNorm1d(32)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.bn(self.fc(x))))


def arrays(count: int = 256, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 16)).astype(np.float32)
    return x, (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)


def dataset(count: int = 256, seed: int = 0, batch: int = 16) -> ms.dataset.Dataset:
    x, y = arrays(count, seed)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)


def state(net: nn.Cell, optimizer: nn.Optimizer) -> dict[str, np.ndarray]:
    found = {f"net:{p.name}": p.asnumpy().copy() for p in net.get_parameters()}
    found.update({f"opt:{p.name}": p.asnumpy().copy() for p in optimizer.get_parameters()})
    return found


def model_run(watched: bool, graph: bool = False) -> tuple[dict[str, np.ndarray], object]:
    net = Net()
    scale = 1024.0 if graph else 1.0
    optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9, loss_scale=scale)
    manager = ms.amp.FixedLossScaleManager(scale, drop_overflow_update=False)
    scaling = {"loss_scale_manager": manager} if graph else {}
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer, **scaling)
    # GRAPH_MODE samples every other step: the tap's flag turns the norms on and off in the compiled step
    every = 2 if graph else 1
    watch = (
        graphaudit.Watch(every=every, fail_on="never", eval_dataset=dataset(64, seed=3)) if watched else None
    )
    model.train(2, dataset(), callbacks=[watch] if watch else None, dataset_sink_mode=False)
    return state(net, optimizer), watch


def loop_run(watched: bool, scaled: bool) -> tuple[dict[str, np.ndarray], object]:
    net = Net()
    if scaled:
        net.to_float(ms.float16)
    optimizer = nn.Adam(net.trainable_params(), 1e-3)
    loss_fn = nn.CrossEntropyLoss()
    scaler = DynamicLossScaler(2.0**12, scale_factor=2, scale_window=5) if scaled else None

    def forward(x, y):
        loss = loss_fn(net(x).astype(ms.float32), y)
        return scaler.scale(loss) if scaler is not None else loss

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    net.set_train()
    x, y = arrays(128)
    context = graphaudit.watch(net, optimizer, every=2, fail_on="never", batch_size=16) if watched else None
    watcher = context.__enter__() if context is not None else None
    for step in range(16):
        start = (step * 16) % len(x)
        loss, grads = grad_fn(Tensor(x[start : start + 16]), Tensor(y[start : start + 16]))
        overflow = None
        if scaler is not None:
            loss, grads = scaler.unscale(loss), scaler.unscale(grads)
            finite = all_finite(grads)
            if finite:
                optimizer(grads)
            scaler.adjust(finite)
            overflow = not bool(finite)
        else:
            optimizer(grads)
        if watcher is not None:
            watcher.step(loss=loss, grads=grads, overflow=overflow)
    if context is not None:
        context.__exit__(None, None, None)
    found = state(net, optimizer)
    if scaler is not None:
        found["scale"] = np.asarray(scaler.scale_value.asnumpy()).copy()
    return found, watcher


def main() -> None:
    case, mode, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    ms.set_context(mode=ms.GRAPH_MODE if case == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(7)
    watched = mode == "watched"
    if case in ("model", "graph"):
        found, watch = model_run(watched, graph=case == "graph")
    else:
        found, watch = loop_run(watched, scaled=case == "scaled")
    np.savez(out, **found)
    if watch is not None:
        record = watch.record
        summary = {
            "report": type(watch.report).__name__,
            "steps": record.steps,
            "samples": len(record.samples),
            "validation": len(record.validation),
            "gradients_seen": record.gradients_seen,
            "loss_scaled": record.loss_scaled,
        }
        out.with_suffix(".json").write_text(json.dumps(summary))


if __name__ == "__main__":
    main()
