"""GA955 bad: batches of 2048 on a problem whose gradient noise scale, measured on the run, is about 50."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

SUBJECT = "(root)"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
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
    net = Net()  # <- SARIF
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss, grads

    x, y = data(8192)
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=2048) as watch:
        for step in range(20):
            start = (step * 2048) % len(x)
            loss, grads = train_step(Tensor(x[start : start + 2048]), Tensor(y[start : start + 2048]))
            watch.step(loss=loss, grads=grads)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
