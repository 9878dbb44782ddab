"""GA956 bad: SGD at 30: each step moves the weights by more than their own size."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

SUBJECT = "fc.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)  # <- SARIF
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x)))


def data(count: int) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((count, 16)).astype(np.float32)
    labels = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    return x, labels


def build() -> dict:
    ms.set_seed(0)
    net = Net()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=30.0)
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss, grads

    x, y = data(512)
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as watch:
        for step in range(10):
            start = (step * 16) % len(x)
            loss, grads = train_step(Tensor(x[start : start + 16]), Tensor(y[start : start + 16]))
            watch.step(loss=loss, grads=grads)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
