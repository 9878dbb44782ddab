"""GA966 bad: a changed data pipeline gives this run wrong labels for half its samples: its loss stays above the band."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

SUBJECT = "(root)"

STEPS, WARMUP, RATE = 40, 12, 0.05


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Dense(16, 32)
        self.act = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.act(self.hidden(x)))


def data(count: int) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((count, 16)).astype(np.float32)
    labels = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    return x, labels


def wrong_labels(count: int) -> tuple:
    """The same inputs, half their labels replaced by random classes (the regression)."""
    x, labels = data(count)
    rng = np.random.default_rng(5)
    pick = rng.random(len(labels)) < 0.5
    labels = labels.copy()
    labels[pick] = rng.integers(0, 4, int(pick.sum()))
    return x, labels.astype(np.int32)


def run(order: int, rate: float, warmup: bool, frozen: bool, baseline=None, source=data) -> tuple:
    """The recipe: Momentum(0.05, 0.9) warmed up over 12 steps, 40 steps of 16 samples; a watch sees it."""
    ms.set_seed(0)
    net = Net()
    if frozen:
        net.hidden.weight.requires_grad = False
    rates = [rate * min(1.0, (i + 1) / WARMUP) if warmup else rate for i in range(STEPS)]
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=rates, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, optimizer.parameters)
    x, y = source(512)
    order = np.random.default_rng(order).permutation(len(x))  # the data order
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", baseline=baseline) as watch:
        for step in range(STEPS):
            batch = order[(step * 16) % len(x) :][:16]
            loss, grads = grad_fn(Tensor(x[batch]), Tensor(y[batch]))
            optimizer(grads)
            watch.step(loss=loss, grads=grads)
    return net, optimizer, watch.record


def build() -> dict:
    _, _, healthy = run(order=1, rate=RATE, warmup=True, frozen=False)  # the known-good run
    net, optimizer, record = run(  # <- SARIF
        order=2, rate=RATE, warmup=True, frozen=False, baseline=healthy, source=wrong_labels
    )
    return {"net": net, "optimizer": optimizer, "watched": record, "baseline": healthy}
