"""Builders for the model-zoo tests (tests/test_zoos.py): real models of MindSpore's own zoos, each
with its zoo's training wrapper and its recipe's optimizer, from configs written here.

One module per zoo (:mod:`zoo.yolo`, :mod:`zoo.ocr`, :mod:`zoo.speech`, :mod:`zoo.lm`), the
shims that let them run on MindSpore 2.10 in :mod:`zoo.shims`. The zoos are installed by
``scripts/setup-zoos.sh``; every module here imports without them (their imports are
inside the functions), so that collecting the test suite never needs a zoo.
"""

from __future__ import annotations

from typing import Any

__all__ = ["state"]


def state(*objects: Any) -> dict[str, bytes]:
    """Every value a training step can change, as bytes, keyed by parameter identity and name.

    For each cell (a network, a train-step wrapper, an optimizer, a loss scaler...) every
    ``Parameter`` it holds, its sub-cells' included: weights, BatchNorm statistics, the
    optimizer's moments and ``global_step``, the loss scale. Other objects contribute the
    ``Parameter`` attributes they hold (mindyolo's ``StaticLossScaler``).
    """
    from mindspore import Parameter, nn

    from graphaudit.capture.training.optimizer import optimizer_state_parameters

    found: dict[str, bytes] = {}
    for obj in objects:
        if isinstance(obj, nn.Cell):
            params = optimizer_state_parameters(obj)
        else:
            params = [v for v in vars(obj).values() if isinstance(v, Parameter)]
        for p in params:
            found[f"{id(p)}:{p.name}"] = p.asnumpy().tobytes()
    return found
