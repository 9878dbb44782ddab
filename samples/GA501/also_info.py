"""GA501 info: a network with BatchNorm and Dropout audited for training, on which set_train() never ran.

Its mode-dependent cells are at MindSpore's default, training=False. Model.train() switches
them on, so with the high-level API nothing is wrong; only a custom training loop
(value_and_grad, TrainOneStepCell called by hand) would train them in inference mode. The
audit cannot know which loop will run: info, with the fix for a custom loop.
"""

from mindspore import nn

SUBJECT = "(root)"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU()])
        self.drop = nn.Dropout(p=0.2)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.drop(self.features(x)))


def build() -> dict:
    net = Net()  # set_train() not called: training=False everywhere
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
