"""GA961 bad: a float16 network with a static loss scale of 2**24 (functional loop): every step overflows and is skipped."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn
from mindspore.amp import DynamicLossScaler, StaticLossScaler, all_finite

import graphaudit

SUBJECT = "(root)"
SCALER = "static"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)
        self.to_float(ms.float16)  # mixed precision: the reason for the loss scale

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
    if SCALER == "static":
        scaler = StaticLossScaler(2.0**24)  # never lowered: float16 gradients times 2**24 overflow
    else:
        scaler = DynamicLossScaler(2.0**10, scale_factor=2, scale_window=2000)

    def forward(x, y):
        return scaler.scale(loss_fn(net(x).astype(ms.float32), y))

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    x, y = data(512)
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as watch:
        for step in range(20):
            start = (step * 16) % len(x)
            loss, grads = grad_fn(Tensor(x[start : start + 16]), Tensor(y[start : start + 16]))
            loss, grads = scaler.unscale(loss), scaler.unscale(grads)
            finite = all_finite(grads)
            if finite:
                optimizer(grads)
            scaler.adjust(finite)
            watch.step(
                loss=loss,
                grads=grads if finite else None,
                overflow=not bool(finite),
                loss_scale=scaler.scale_value,
            )
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
