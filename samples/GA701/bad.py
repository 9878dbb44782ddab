"""GA701 bad: ``torch.nn.Dropout(0.1)`` ported as ``nn.Dropout(0.1)``: MindSpore keeps 10%, drops 90%."""

from mindspore import nn

SUBJECT = "drop"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.1)  # the first argument is keep_prob  # <- SARIF
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.drop(self.relu(self.fc(x))))


def build() -> dict:
    net = Net()
    net.set_train(True)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
