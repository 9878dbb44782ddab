"""One small real recipe, trained healthy and with planted regressions, for the baseline tests (GA966-GA968).

A 64-64-32-10 ReLU MLP on scikit-learn's ``load_digits`` (standardised), batch 32 (56 steps an
epoch), Momentum(0.02, 0.9) with a one-epoch linear warm-up, 3 epochs, sampled every 4 steps.
:func:`train` runs it under ``Model.train`` (``how="model"``, PyNative or GRAPH_MODE) or a
functional loop (``how="loop"``) under a watch, and returns the watch; the keywords plant one
change each: another data order or initialisation (healthy), a frozen layer, a 10x learning
rate, no warm-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

BATCH, EPOCHS, EVERY, RATE = 64, 3, 4, 0.02


def digits(seed: int) -> ms.dataset.Dataset:
    from sklearn.datasets import load_digits

    found = load_digits()
    x = found.data.astype(np.float32)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    ms.dataset.config.set_seed(seed)  # the data order
    data = {"x": x, "y": found.target.astype(np.int32)}
    return ms.dataset.NumpySlicesDataset(data, shuffle=True).batch(BATCH, drop_remainder=True)


def train(
    *,
    how: str = "model",
    graph: bool = False,
    out: Path | str | None = None,
    baseline: Any = None,
    init_seed: int = 0,
    data_seed: int = 1,
    rate: float = RATE,
    warmup: bool = True,
    freeze: bool = False,
) -> Any:
    """Train the recipe once under a watch (``fail_on="never"``); the watch (``.report``, ``.record``, and
    ``.seen``: every finding as it appeared, at every judgement while it trained)."""
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        ms.set_seed(init_seed)
        net = nn.SequentialCell([nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU(), nn.Dense(32, 10)])
        if freeze:
            net[2].weight.requires_grad = False  # left out of net.trainable_params(), so of the optimizer
        data = digits(data_seed)
        per = data.get_dataset_size()
        rates = [rate * min(1.0, (i + 1) / per) if warmup else rate for i in range(per * EPOCHS)]
        optimizer = nn.Momentum(net.trainable_params(), learning_rate=rates, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()
        seen: list[Any] = []
        options = {
            "every": EVERY,
            "fail_on": "never",
            "out": out,
            "baseline": baseline,
            "on_finding": seen.append,
        }
        if how == "model":
            watch = graphaudit.Watch(**options)
            model = ms.train.Model(net, loss_fn, optimizer)
            model.train(EPOCHS, data, callbacks=[watch], dataset_sink_mode=False)
            watch.seen = seen
            return watch
        grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, optimizer.parameters)
        with graphaudit.watch(net, optimizer, batch_size=BATCH, **options) as watch:
            for epoch in range(1, EPOCHS + 1):
                for x, y in data.create_tuple_iterator(num_epochs=1):
                    loss, grads = grad_fn(Tensor(x), Tensor(y))
                    optimizer(grads)
                    watch.step(loss=loss, grads=grads, epoch=epoch)
        watch.seen = seen
        return watch
    finally:
        ms.set_context(mode=mode)
