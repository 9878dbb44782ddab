"""GA953 bad: 10 epochs over 32 samples with labels the inputs do not predict: the net memorises them, and the validation loss climbs after the first epochs (Model.fit with valid_dataset=)."""

import mindspore as ms
import numpy as np
from mindspore import nn

import graphaudit

SUBJECT = "(root)"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 64)
        self.relu = nn.ReLU()
        self.head = nn.Dense(64, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x)))


def dataset(count: int, seed: int, batch: int, *, random_labels: bool) -> ms.dataset.Dataset:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 16)).astype(np.float32)
    if random_labels:
        labels = rng.integers(0, 4, count).astype(np.int32)
    else:
        labels = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": labels}, shuffle=False).batch(batch)


def build() -> dict:
    ms.set_context(mode=ms.PYNATIVE_MODE)  # where Watch sees the gradients
    ms.set_seed(0)
    net = Net()  # <- SARIF
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer, metrics={"loss": nn.Loss()})
    train = dataset(32, 0, 16, random_labels=True)
    valid = dataset(128, 2, 64, random_labels=True)
    watch = graphaudit.Watch(every=1, fail_on="never")
    model.fit(10, train, valid_dataset=valid, callbacks=[watch], dataset_sink_mode=False)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
