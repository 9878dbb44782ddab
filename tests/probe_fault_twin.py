"""One arm of the twin test of tests/test_probe_faults.py (not a test module itself).

    python tests/probe_fault_twin.py NET PLACE KIND AUDITED

builds a small network (``bn``: BatchNorm, ``dropout``: Dropout, ``both``), seeded the same
in every process. With AUDITED=1 it audits it with ``probe=5`` while the user's code raises
*KIND* (``error``: a RuntimeError, ``keyboard``: KeyboardInterrupt, ``exit``: SystemExit) on
the third step, at *PLACE*: the forward pass (the network's construct), the backward pass
(a backward hook) or the optimizer (its construct). Then, audited or not, it trains three
steps as the user would (``TrainOneStepCell``) and prints one JSON line: how the audit
ended, the losses, and every parameter's bytes (hex digest).
"""

from __future__ import annotations

import hashlib
import json
import sys

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

NET, PLACE, KIND, AUDITED = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
STATE = {"optimizer_calls": 0, "armed": False}


def fault() -> None:
    STATE["armed"] = False
    if KIND == "keyboard":
        raise KeyboardInterrupt
    if KIND == "exit":
        raise SystemExit(3)
    raise RuntimeError("the user's code fails on the third step")


def third_step(place: str) -> bool:
    return STATE["armed"] and place == PLACE and STATE["optimizer_calls"] == 2


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(6, 8)
        self.bn = nn.BatchNorm1d(8) if NET in ("bn", "both") else None
        self.drop = nn.Dropout(p=0.5) if NET in ("dropout", "both") else None
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        h = self.fc1(x)
        if self.bn is not None:
            h = self.bn(h)
        h = ops.relu(h)
        if self.drop is not None:
            h = self.drop(h)
        if third_step("forward"):  # after BatchNorm and Dropout ran: mid-way through the pass
            fault()
        return self.fc2(h)


class Momentum(nn.Momentum):
    def construct(self, grads):
        if third_step("optimizer"):
            fault()
        STATE["optimizer_calls"] += 1
        return super().construct(grads)


def main() -> None:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(1)
    rng = np.random.default_rng(1)
    net = Net()
    net.set_train(True)

    def backward_hook(cell, grad_input, grad_output):
        if third_step("backward"):
            fault()

    net.fc2.register_backward_hook(backward_hook)
    optimizer = Momentum(net.trainable_params(), 0.1, 0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = Tensor(rng.standard_normal((4, 6)).astype(np.float32))
    y = Tensor(np.array([0, 1, 2, 1], np.int32))
    out: dict = {"audit": None}
    if AUDITED:
        import graphaudit

        STATE["armed"] = True
        try:
            graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=loss_fn, probe=5)
            out["audit"] = "finished"
        except BaseException as err:
            out["audit"] = type(err).__name__
        out["raised"] = not STATE["armed"]
        STATE["armed"] = False
    STATE["optimizer_calls"] = 0
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    out["losses"] = [float(train(x, y).asnumpy()) for _ in range(3)]
    out["parameters"] = {
        p.name: hashlib.sha256(p.asnumpy().tobytes()).hexdigest()
        for p in [*net.get_parameters(), *optimizer.parameters, *optimizer.moments]
    }
    print("TWIN " + json.dumps(out))


if __name__ == "__main__":
    main()
